//! Properties every accountant of Gaussian releases must have, as checks a user runs on
//! their own accountant. The accountant is a function `(sigma, steps, delta) -> epsilon`
//! for `steps` adaptive releases of the Gaussian mechanism with noise multiplier
//! `sigma` (standard deviation over L2 sensitivity), at failure probability `delta`.
//!
//! * more noise never costs more: `eps(sigma', k, delta) <= eps(sigma, k, delta)` for
//!   `sigma' > sigma`;
//! * more steps never cost less, and composition is never below one step;
//! * a larger delta never costs more;
//! * no conversion goes below the truth: the exact epsilon of `k` composed Gaussian
//!   releases is that of one Gaussian with `mu = sqrt(k) / sigma` (Dong, Roth & Su 2022,
//!   Cor. 2), computed by the analytic Gaussian curve (Balle & Wang 2018,
//!   [`crate::gdp::gdp_epsilon`]); every valid accountant reports at least that.
//!
//! Each check takes a relative tolerance `tol` for rounding (`1e-12` is typical).

use crate::error::{AccountingError, Result};
use crate::gdp::gdp_epsilon;
use crate::Delta;

/// A property an accountant failed, with the point where it failed.
#[derive(Debug, Clone, PartialEq)]
pub struct Violation {
    /// Which property.
    pub property: &'static str,
    /// Human-readable values at the failing point.
    pub detail: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.property, self.detail)
    }
}

/// The exact epsilon of `steps` Gaussian releases at multiplier `sigma` (the lower bound
/// every accountant must respect).
pub fn exact_gaussian_epsilon(sigma: f64, steps: u64, delta: f64) -> Result<f64> {
    if !(sigma.is_finite() && sigma > 0.0) {
        return Err(AccountingError::InvalidParameter {
            name: "sigma",
            value: sigma,
            expected: "must be finite and > 0",
        });
    }
    gdp_epsilon((steps as f64).sqrt() / sigma, Delta::new(delta)?)
}

/// Checks all properties at one point `(sigma, steps, delta)`, comparing with
/// `sigma * 1.01`, `steps + 1 + steps / 3`, one step, and `delta * 2` (if below 1).
/// `Ok(Err(v))` reports a violated property; `Err` an invalid point or a failing
/// accountant call. Suited to a proptest body:
///
/// ```
/// use dp_accounting::calibrate::{epsilon, Accountant, Plan, PlanMechanism};
/// use dp_accounting::testing::accountant::check_gaussian_accountant;
/// use dp_accounting::{Delta, NoiseMultiplier};
/// let mine = |sigma: f64, steps: u64, delta: f64| {
///     let plan = Plan { mechanism: PlanMechanism::Gaussian, steps, accountant: Accountant::Zcdp };
///     epsilon(&plan, NoiseMultiplier::new(sigma)?, Delta::new(delta)?)
/// };
/// assert_eq!(check_gaussian_accountant(mine, 3.0, 100, 1e-6, 1e-12)?, Ok(()));
/// # Ok::<(), dp_accounting::AccountingError>(())
/// ```
pub fn check_gaussian_accountant(
    accountant: impl Fn(f64, u64, f64) -> Result<f64>,
    sigma: f64,
    steps: u64,
    delta: f64,
    tol: f64,
) -> Result<std::result::Result<(), Violation>> {
    if steps == 0 {
        return Err(AccountingError::InvalidCount {
            name: "steps",
            value: 0,
            expected: "must be >= 1",
        });
    }
    let e = accountant(sigma, steps, delta)?;
    let fail = |property, detail| Ok(Err(Violation { property, detail }));
    if !(e.is_finite() && e >= 0.0) {
        return fail(
            "epsilon is finite and >= 0",
            format!("eps({sigma}, {steps}, {delta}) = {e}"),
        );
    }
    let exact = exact_gaussian_epsilon(sigma, steps, delta)?;
    if e < exact * (1.0 - tol) {
        return fail(
            "never below the exact Gaussian composition",
            format!("eps({sigma}, {steps}, {delta}) = {e} < exact {exact}"),
        );
    }
    let noisier = accountant(sigma * 1.01, steps, delta)?;
    if noisier > e * (1.0 + tol) {
        return fail(
            "monotone in noise",
            format!(
                "eps at sigma {} = {noisier} > {e} at sigma {sigma}",
                sigma * 1.01
            ),
        );
    }
    let more = steps + 1 + steps / 3;
    let e_more = accountant(sigma, more, delta)?;
    if e_more < e * (1.0 - tol) {
        return fail(
            "monotone in steps",
            format!("eps at {more} steps = {e_more} < {e} at {steps}"),
        );
    }
    let one = accountant(sigma, 1, delta)?;
    if e < one * (1.0 - tol) {
        return fail(
            "composition never below one step",
            format!("eps at {steps} steps = {e} < {one} at 1 step"),
        );
    }
    if delta * 2.0 < 1.0 {
        let looser = accountant(sigma, steps, delta * 2.0)?;
        if looser > e * (1.0 + tol) {
            return fail(
                "monotone in delta",
                format!("eps at delta {} = {looser} > {e} at {delta}", delta * 2.0),
            );
        }
    }
    Ok(Ok(()))
}
