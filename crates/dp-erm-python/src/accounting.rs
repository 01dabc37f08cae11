//! `dp_erm.accounting`: the privacy calculator's two questions (the epsilon of a plan,
//! the noise for a target) answered by `dp_accounting`'s own functions
//! ([`dp_accounting::calibrate`] for Gaussian plans, [`composed_epsilon`] for Laplace
//! plans), so Python gets the same numbers as the library and `cargo xtask privacy`.
//!
//! Every epsilon is an upper bound rounded up; every noise returned meets the target
//! (calibration never overshoots).
#![forbid(unsafe_code)]

use crate::backend::{BackendError, Result};
use dp_accounting::calibrate::{self, Accountant, Plan, PlanMechanism, RdpConversion};
use dp_accounting::composition::{composed_epsilon, CompositionMethod};
use dp_accounting::{Delta, Epsilon, NoiseMultiplier, SamplingRate};
use serde_json::{json, Value};

fn acc_err(e: dp_accounting::AccountingError) -> BackendError {
    BackendError(e.to_string())
}

/// The accountants, by the names Python passes, with what they apply to.
pub const ACCOUNTANTS: &[(&str, &str)] = &[
    (
        "rdp",
        "Renyi DP, fine order grid and continuous refinement, improved conversion (Gaussian plans)",
    ),
    (
        "rdp-mironov",
        "Renyi DP with Mironov's conversion (Gaussian plans)",
    ),
    ("zcdp", "zero-concentrated DP (plain Gaussian only)"),
    (
        "gdp",
        "Gaussian DP, exact for the plain Gaussian (plain Gaussian only)",
    ),
    (
        "pld",
        "privacy loss distribution, certified upper end (Gaussian plans)",
    ),
    ("basic", "basic composition (Laplace plans)"),
    (
        "advanced",
        "advanced composition, Dwork-Rothblum-Vadhan (Laplace plans)",
    ),
    (
        "optimal",
        "optimal composition, Kairouz-Oh-Viswanath (Laplace plans)",
    ),
];

/// The mechanisms: `gaussian`, `subsampled-gaussian` (Poisson sampling, add/remove-one),
/// `laplace`.
pub const MECHANISMS: &[&str] = &["gaussian", "subsampled-gaussian", "laplace"];

fn gaussian_accountant(name: &str) -> Result<Accountant> {
    Ok(match name {
        "rdp" => Accountant::Rdp(RdpConversion::Improved),
        "rdp-mironov" => Accountant::Rdp(RdpConversion::Mironov),
        "zcdp" => Accountant::Zcdp,
        "gdp" => Accountant::Gdp,
        "pld" => Accountant::Pld,
        other => {
            return Err(BackendError(format!(
                "accountant '{other}' does not account Gaussian plans: use one of rdp, rdp-mironov, zcdp, gdp, pld"
            )))
        }
    })
}

fn laplace_method(name: &str) -> Result<CompositionMethod> {
    Ok(match name {
        "basic" => CompositionMethod::Basic,
        "advanced" => CompositionMethod::Advanced,
        "optimal" => CompositionMethod::Optimal,
        other => {
            return Err(BackendError(format!(
                "accountant '{other}' does not account Laplace plans: use one of basic, advanced, optimal"
            )))
        }
    })
}

fn gaussian_plan(
    mechanism: &str,
    steps: u64,
    sampling_rate: Option<f64>,
    accountant: &str,
) -> Result<Plan> {
    let mech = match (mechanism, sampling_rate) {
        ("gaussian", None) => PlanMechanism::Gaussian,
        ("gaussian", Some(_)) => {
            return Err(BackendError(
                "sampling_rate is for mechanism='subsampled-gaussian' only".into(),
            ))
        }
        ("subsampled-gaussian", Some(q)) => PlanMechanism::SubsampledGaussian {
            sampling_rate: SamplingRate::new(q).map_err(acc_err)?,
        },
        ("subsampled-gaussian", None) => {
            return Err(BackendError(
                "mechanism='subsampled-gaussian' needs sampling_rate (Poisson rate in (0, 1])"
                    .into(),
            ))
        }
        (other, _) => {
            return Err(BackendError(format!(
                "unknown mechanism '{other}': use one of {}",
                MECHANISMS.join(", ")
            )))
        }
    };
    if steps == 0 {
        return Err(BackendError(
            "steps is 0: a plan has at least one step".into(),
        ));
    }
    Ok(Plan {
        mechanism: mech,
        steps,
        accountant: gaussian_accountant(accountant)?,
    })
}

/// The epsilon (rounded up) at `delta` of `steps` releases of `mechanism`: a Gaussian
/// with noise multiplier `sigma` (std / L2 sensitivity), or a Laplace with scale `scale`
/// over L1 sensitivity `sensitivity` (default 1).
#[allow(clippy::too_many_arguments)]
pub fn epsilon(
    mechanism: &str,
    steps: u64,
    delta: f64,
    sigma: Option<f64>,
    scale: Option<f64>,
    sensitivity: Option<f64>,
    sampling_rate: Option<f64>,
    accountant: Option<&str>,
) -> Result<Value> {
    let d = Delta::new(delta).map_err(acc_err)?;
    if mechanism == "laplace" {
        let acc = accountant.unwrap_or("optimal");
        let method = laplace_method(acc)?;
        let b = scale.ok_or_else(|| BackendError("mechanism='laplace' needs scale".into()))?;
        let s = sensitivity.unwrap_or(1.0);
        if !(b.is_finite() && b > 0.0 && s.is_finite() && s > 0.0) {
            return Err(BackendError(format!(
                "scale = {b} and sensitivity = {s} must be finite and > 0"
            )));
        }
        let eps0 = s / b;
        let e = composed_epsilon(eps0, steps, d, method).map_err(acc_err)?;
        return Ok(
            json!({"mechanism": mechanism, "accountant": acc, "steps": steps,
            "per_step_epsilon": eps0, "epsilon": e, "delta": delta}),
        );
    }
    if scale.is_some() || sensitivity.is_some() {
        return Err(BackendError(
            "scale and sensitivity are for mechanism='laplace'; a Gaussian plan takes sigma (the noise multiplier)".into(),
        ));
    }
    let acc = accountant.unwrap_or("rdp");
    let plan = gaussian_plan(mechanism, steps, sampling_rate, acc)?;
    let s = sigma.ok_or_else(|| BackendError(format!("mechanism='{mechanism}' needs sigma")))?;
    let s = NoiseMultiplier::new(s).map_err(acc_err)?;
    let r = calibrate::epsilon_detail(&plan, s, d).map_err(acc_err)?;
    Ok(
        json!({"mechanism": mechanism, "accountant": acc, "steps": steps,
        "sigma": s.get(), "epsilon": r.epsilon, "delta": delta, "order": r.order}),
    )
}

/// The smallest Gaussian noise multiplier for which `steps` releases of `mechanism` are
/// `(epsilon, delta)`-DP under `accountant` (the achieved epsilon is never above the
/// target).
pub fn sigma(
    mechanism: &str,
    steps: u64,
    epsilon: f64,
    delta: f64,
    sampling_rate: Option<f64>,
    accountant: Option<&str>,
) -> Result<Value> {
    if mechanism == "laplace" {
        return Err(BackendError(
            "the noise for a target is offered for Gaussian plans (mechanism='gaussian' or 'subsampled-gaussian')".into(),
        ));
    }
    let acc = accountant.unwrap_or("rdp");
    let plan = gaussian_plan(mechanism, steps, sampling_rate, acc)?;
    let e = Epsilon::new(epsilon).map_err(acc_err)?;
    let d = Delta::new(delta).map_err(acc_err)?;
    let c = calibrate::calibrate_sigma(&plan, e, d).map_err(acc_err)?;
    Ok(
        json!({"mechanism": mechanism, "accountant": acc, "steps": steps,
        "sigma": c.noise_multiplier, "achieved_epsilon": c.epsilon, "delta": c.delta,
        "order": c.order}),
    )
}
