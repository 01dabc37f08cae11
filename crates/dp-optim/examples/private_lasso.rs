//! A private LASSO fit with DP-CD on a small synthetic dataset (the README example).
//!
//! `cargo run -p dp-optim --example private_lasso`

use dp_models::{Dataset, DenseDesign, Squared, L1};
use dp_optim::DpCdParams;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // A small synthetic regression problem: y = 2 x_0 - x_1 + noise.
    let (n, p) = (2000, 5);
    let x: Vec<f64> = (0..n * p)
        .map(|k| ((k * 7919 % 1000) as f64 / 500.0) - 1.0)
        .collect();
    let y: Vec<f64> = (0..n)
        .map(|i| 2.0 * x[i * p] - x[i * p + 1] + 0.1 * ((i % 7) as f64 - 3.0) / 3.0)
        .collect();
    let data = Dataset::new(DenseDesign::from_row_major(n, p, &x)?, y)?;

    let solver = DpCdParams::new(Squared::full(), L1::new(0.01)?)
        .epsilon(1.0)
        .delta(1.0 / (n * n) as f64)
        .passes(10)
        .step_scale(0.5)
        .clip(5.0)
        .allow_non_private_constants(true) // M_j from the data, as in the paper
        .build()?;
    let report = solver.fit_seeded(&data, 42)?;

    let privacy = report
        .privacy
        .as_ref()
        .ok_or("a private fit has a privacy report")?;
    println!("coefficients        {:?}", report.coefficients);
    println!("noise multiplier    {:?}", report.noise_multiplier);
    println!(
        "guarantee           ({}, {})-DP, {:?} ({})",
        privacy.guarantee.epsilon,
        privacy.guarantee.delta,
        privacy.guarantee.adjacency,
        privacy.guarantee.how
    );
    println!(
        "objective (non-private diagnostic) {}",
        report.diagnostics.objective
    );
    Ok(())
}
