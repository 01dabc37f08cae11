//! Audit a mechanism you wrote: a private count released with Laplace noise, claimed
//! 1-DP, once correct and once with half the noise its claim needs (a plausible bug:
//! the sensitivity of a count under replace-one taken as 1/2). The auditor passes the
//! first and flags the second with a lower bound above the claim.
//!
//! ```text
//! cargo run --release -p dp-accounting --features testing --example audit_my_mechanism
//! ```

use dp_accounting::mechanisms::Laplace;
use dp_accounting::testing::{Auditor, Side};
use rand::RngCore;

/// The user's mechanism: how many records are at least 40 (sensitivity 1 under
/// add/remove or replace-one), plus Laplace noise of `scale`.
fn noisy_count(ages: &[f64], scale: f64, rng: &mut dyn RngCore) -> f64 {
    let count = ages.iter().filter(|&&a| a >= 40.0).count() as f64;
    count + Laplace::new(scale).expect("scale > 0").sample(rng)
}

fn main() -> Result<(), dp_accounting::AccountingError> {
    // Neighbouring datasets: one record replaced so the count changes by 1.
    let d = [23.0, 35.0, 41.0, 52.0, 67.0];
    let d_prime = [23.0, 35.0, 41.0, 52.0, 17.0];
    let claim = 1.0;
    for (what, scale) in [
        ("correct (scale 1/eps)", 1.0 / claim),
        ("broken (half the scale)", 0.5 / claim),
    ] {
        let start = std::time::Instant::now();
        let report = Auditor::new(claim, 0.0).trials(1_000_000).seed(7).run(
            |side: Side, rng: &mut dyn RngCore| -> f64 {
                match side {
                    Side::D => noisy_count(&d, scale, rng),
                    Side::DPrime => noisy_count(&d_prime, scale, rng),
                }
            },
        )?;
        println!(
            "{what}: violated = {}, epsilon lower bound = {:.3} (claim {claim}), {:.1} s\n  {report}",
            report.violated,
            report.epsilon_lower_bound,
            start.elapsed().as_secs_f64()
        );
    }
    Ok(())
}
