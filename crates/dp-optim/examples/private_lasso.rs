//! A private LASSO fit with DP-CD on a small synthetic dataset (the README example).
//!
//! `cargo run -p dp-optim --example private_lasso [model.json]`
//!
//! Every constant comes from a bound declared public (`|x_ij| <= 1`), the randomness
//! comes from the operating system, and the model written to `model.json` (when a path
//! is given) is the releasable part only: coefficients, plan, ledger and guarantee — no
//! seed, nothing that replays the noise.

use dp_models::constants::Tagged;
use dp_models::{Dataset, DenseDesign, Loss, Squared, L1};
use dp_optim::{DpCdParams, Smoothness, Solver};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // A small synthetic regression problem: y = 2 x_0 - x_1 + noise, features in [-1, 1].
    let (n, p) = (2000, 5);
    let x: Vec<f64> = (0..n * p)
        .map(|k| ((k * 7919 % 1000) as f64 / 500.0) - 1.0)
        .collect();
    let y: Vec<f64> = (0..n)
        .map(|i| 2.0 * x[i * p] - x[i * p + 1] + 0.1 * ((i % 7) as f64 - 3.0) / 3.0)
        .collect();
    let data = Dataset::new(DenseDesign::from_row_major(n, p, &x)?, y)?;

    // |x_ij| <= 1 is known without looking at the data, so M_j <= c * 1^2 for a loss of
    // curvature c: a public bound, no privacy spent on it.
    let loss = Squared::full();
    let c = loss.curvature_bound().ok_or("the squared loss is smooth")?;
    let solver = DpCdParams::new(loss, L1::new(0.01)?)
        .epsilon(1.0)
        .delta(1.0 / (n * n) as f64)
        .passes(10)
        .step_scale(0.5)
        .clip(5.0)
        .smoothness(Smoothness::Given(Tagged::public(vec![c; p])))
        .build()?;
    let fit = solver.fit(&data)?; // fresh OS entropy: there is no seed to keep secret

    let guarantee = fit.guarantee().ok_or("a private fit has a guarantee")?;
    println!("coefficients        {:?}", fit.model.coefficients);
    println!(
        "guarantee           ({}, {})-DP, {} ({})",
        guarantee.epsilon,
        guarantee.delta,
        guarantee.adjacency.name(),
        guarantee.how
    );
    println!(
        "objective (non-private diagnostic, do not publish) {}",
        fit.diagnostics.objective
    );
    if let Some(path) = std::env::args().nth(1) {
        // Only the releasable model is written.
        std::fs::write(&path, serde_json::to_string_pretty(&fit.model)?)?;
        println!("model written to {path}");
    }
    Ok(())
}
