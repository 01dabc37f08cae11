//! `dp-erm privacy` (alias `cargo xtask privacy`): the privacy calculator (like TF
//! Privacy's `compute_dp_sgd_privacy`).
//!
//! ```text
//! dp-erm privacy epsilon --mechanism gaussian --sigma 2 --steps 100 --delta 1e-5 --accountant rdp|zcdp|gdp|pld
//! dp-erm privacy epsilon --mechanism subsampled-gaussian --sampling-rate 0.01 --sigma 1.1 --steps 10000 --delta 1e-5 --accountant rdp|pld
//! dp-erm privacy epsilon --mechanism laplace --scale 10 --steps 50 --delta 1e-6 --accountant basic|advanced|optimal|rdp|pld
//! dp-erm privacy sigma   --mechanism subsampled-gaussian --sampling-rate 0.01 --steps 1000 --epsilon 1 --delta 1e-5 --accountant rdp|pld
//! dp-erm privacy rdp     --mechanism subsampled-gaussian --sampling-rate 0.01 --sigma 1.1 --order 2.5
//! ```
//!
//! `--sigma` is the noise multiplier: the noise standard deviation over the L2 sensitivity,
//! with sensitivity 1 unless `--sensitivity` is given (then the multiplier used by the
//! accountants is `sigma / sensitivity`, and `sigma` prints `multiplier * sensitivity`).
//! `--scale` is the Laplace scale `b` (per-step epsilon `sensitivity / b`). The last line
//! printed is `epsilon = <value>`, `sigma = <value>` or `rdp = <value>`; with `--json` one
//! JSON object is printed instead. Every epsilon is an upper bound rounded up; a PLD epsilon
//! also prints its certified interval.
//!
//! The query itself is the library function [`answer`] (no printing), so that other
//! front ends (the Python package) give the same answers from the same code.

use anyhow::{bail, Context, Result};
use clap::{Subcommand, ValueEnum};
use dp_accounting::calibrate::{self, Accountant, Plan, PlanMechanism, RdpConversion};
use dp_accounting::composition::{composed_epsilon, CompositionMethod};
use dp_accounting::mechanisms::{gaussian_rdp, laplace_rdp};
use dp_accounting::pld::{self, PldMechanism};
use dp_accounting::rdp::{epsilon_from_curve, OrderGrid};
use dp_accounting::subsampled::subsampled_gaussian_rdp;
use dp_accounting::{Delta, Epsilon, NoiseMultiplier, SamplingRate};
use serde_json::json;

/// Arguments of `dp-erm privacy`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The query.
    #[command(subcommand)]
    pub command: Query,
}

/// The three queries.
#[derive(Subcommand, Debug, Clone)]
pub enum Query {
    /// Epsilon (upper bound, rounded up) of a plan at a delta.
    Epsilon(Opts),
    /// Smallest noise multiplier meeting a target (epsilon, delta).
    Sigma(Opts),
    /// RDP of one step (times --steps if given) at an order.
    Rdp(Opts),
}

/// Mechanisms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Mechanism {
    /// Gaussian mechanism on the full data.
    Gaussian,
    /// Poisson-subsampled Gaussian (DP-SGD step), add/remove-one neighbours.
    SubsampledGaussian,
    /// Laplace mechanism (pure epsilon per step).
    Laplace,
}

/// Accountants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AccountantArg {
    /// Renyi DP (fine order grid + continuous refinement).
    Rdp,
    /// zCDP (plain Gaussian).
    Zcdp,
    /// Gaussian DP, exact for the plain Gaussian.
    Gdp,
    /// Privacy loss distribution (certified interval).
    Pld,
    /// Basic composition of pure DP (Laplace).
    Basic,
    /// Advanced composition (Dwork-Rothblum-Vadhan; Laplace).
    Advanced,
    /// Optimal composition (Kairouz-Oh-Viswanath; Laplace).
    Optimal,
}

/// RDP conversions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ConversionArg {
    /// Balle et al. 2020 Thm 21 (= Canonne, Kamath & Steinke 2020 Prop. 12).
    Improved,
    /// Mironov 2017 Prop. 3.
    Mironov,
}

/// The flags of a query (each query checks which it needs and which make no sense).
#[derive(clap::Args, Debug, Clone)]
pub struct Opts {
    /// Mechanism repeated at every step.
    #[arg(long, value_enum)]
    pub mechanism: Mechanism,
    /// Noise multiplier (Gaussian noise standard deviation over L2 sensitivity).
    #[arg(long, allow_negative_numbers = true)]
    pub sigma: Option<f64>,
    /// Laplace scale b.
    #[arg(long, allow_negative_numbers = true)]
    pub scale: Option<f64>,
    /// Sensitivity (L2 for Gaussian mechanisms, L1 for Laplace); default 1.
    #[arg(long, allow_negative_numbers = true)]
    pub sensitivity: Option<f64>,
    /// Poisson sampling rate q in (0, 1] (subsampled-gaussian only).
    #[arg(long, allow_negative_numbers = true)]
    pub sampling_rate: Option<f64>,
    /// Number of steps (compositions): a whole number, `1000000` or `1e6`.
    #[arg(long, value_parser = parse_count)]
    pub steps: Option<u64>,
    /// Target delta.
    #[arg(long, allow_negative_numbers = true)]
    pub delta: Option<f64>,
    /// Target epsilon (for `sigma`).
    #[arg(long, allow_negative_numbers = true)]
    pub epsilon: Option<f64>,
    /// Renyi order alpha > 1 (for `rdp`).
    #[arg(long, allow_negative_numbers = true)]
    pub order: Option<f64>,
    /// Accountant (default rdp).
    #[arg(long, value_enum)]
    pub accountant: Option<AccountantArg>,
    /// RDP-to-(eps, delta) conversion (with --accountant rdp; default improved).
    #[arg(long, value_enum)]
    pub conversion: Option<ConversionArg>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

fn mech_name(m: Mechanism) -> &'static str {
    match m {
        Mechanism::Gaussian => "gaussian",
        Mechanism::SubsampledGaussian => "subsampled-gaussian",
        Mechanism::Laplace => "laplace",
    }
}

fn acc_name(a: AccountantArg) -> &'static str {
    match a {
        AccountantArg::Rdp => "rdp",
        AccountantArg::Zcdp => "zcdp",
        AccountantArg::Gdp => "gdp",
        AccountantArg::Pld => "pld",
        AccountantArg::Basic => "basic",
        AccountantArg::Advanced => "advanced",
        AccountantArg::Optimal => "optimal",
    }
}

fn need<T: Copy>(v: Option<T>, flag: &str, what: &str) -> Result<T> {
    v.with_context(|| format!("{what} needs {flag}"))
}

fn forbid<T>(v: &Option<T>, flag: &str, what: &str) -> Result<()> {
    if v.is_some() {
        bail!("{flag} makes no sense for {what}");
    }
    Ok(())
}

/// Checks the flags that depend only on the mechanism.
fn check_mechanism_flags(o: &Opts) -> Result<()> {
    let m = mech_name(o.mechanism);
    match o.mechanism {
        Mechanism::Gaussian => {
            forbid(&o.scale, "--scale", "--mechanism gaussian (use --sigma)")?;
            forbid(
                &o.sampling_rate,
                "--sampling-rate",
                "--mechanism gaussian (use subsampled-gaussian)",
            )?;
        }
        Mechanism::SubsampledGaussian => {
            forbid(
                &o.scale,
                "--scale",
                "--mechanism subsampled-gaussian (use --sigma)",
            )?;
        }
        Mechanism::Laplace => {
            forbid(&o.sigma, "--sigma", "--mechanism laplace (use --scale)")?;
            forbid(&o.sampling_rate, "--sampling-rate", "--mechanism laplace")?;
        }
    }
    if let Some(s) = o.sensitivity {
        if !(s.is_finite() && s > 0.0) {
            bail!("invalid --sensitivity = {s}: must be finite and > 0");
        }
    }
    let _ = m;
    Ok(())
}

fn sensitivity(o: &Opts) -> f64 {
    o.sensitivity.unwrap_or(1.0)
}

/// Noise multiplier used by the accountants: sigma / sensitivity.
fn multiplier(o: &Opts) -> Result<NoiseMultiplier> {
    let s = need(o.sigma, "--sigma", mech_name(o.mechanism))?;
    NoiseMultiplier::new(s / sensitivity(o)).with_context(|| {
        format!(
            "invalid --sigma = {s} (with sensitivity {})",
            sensitivity(o)
        )
    })
}

fn sampling_rate(o: &Opts) -> Result<SamplingRate> {
    let q = need(o.sampling_rate, "--sampling-rate", "subsampled-gaussian")?;
    Ok(SamplingRate::new(q)?)
}

fn delta(o: &Opts) -> Result<Delta> {
    let d = need(o.delta, "--delta", "this query")?;
    Ok(Delta::new(d)?)
}

/// A count given as an integer (`1000000`) or in scientific notation (`1e6`), which must
/// then be a whole number.
fn parse_count(s: &str) -> std::result::Result<u64, String> {
    if let Ok(v) = s.trim().parse::<u64>() {
        return Ok(v);
    }
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 && v.fract() == 0.0 && v < 18_446_744_073_709_551_616.0 => {
            Ok(v as u64)
        }
        Ok(v) => Err(format!(
            "{v} is not a whole number of steps in [0, 2^64): steps must be an integer (e.g. 1000 or 1e9)"
        )),
        Err(_) => Err(format!(
            "'{s}' is not a number: steps must be an integer (e.g. 1000 or 1e9)"
        )),
    }
}

fn steps(o: &Opts) -> Result<u64> {
    let t = need(o.steps, "--steps", "this query")?;
    if t == 0 {
        bail!("invalid --steps = 0: must be at least 1");
    }
    Ok(t)
}

fn laplace_ratio(o: &Opts) -> Result<f64> {
    let b = need(o.scale, "--scale", "--mechanism laplace")?;
    if !(b.is_finite() && b > 0.0) {
        bail!("invalid --scale = {b}: must be finite and > 0");
    }
    Ok(b / sensitivity(o))
}

fn conversion(o: &Opts, accountant: AccountantArg) -> Result<RdpConversion> {
    if accountant != AccountantArg::Rdp && o.conversion.is_some() {
        bail!(
            "--conversion only applies to --accountant rdp (got --accountant {})",
            acc_name(accountant)
        );
    }
    Ok(match o.conversion.unwrap_or(ConversionArg::Improved) {
        ConversionArg::Improved => RdpConversion::Improved,
        ConversionArg::Mironov => RdpConversion::Mironov,
    })
}

/// The calibrate-module plan for the Gaussian mechanisms.
fn gaussian_plan(o: &Opts, accountant: AccountantArg) -> Result<Plan> {
    let conv = conversion(o, accountant)?;
    let mechanism = match o.mechanism {
        Mechanism::Gaussian => PlanMechanism::Gaussian,
        Mechanism::SubsampledGaussian => PlanMechanism::SubsampledGaussian {
            sampling_rate: sampling_rate(o)?,
        },
        Mechanism::Laplace => unreachable_laplace()?,
    };
    let accountant = match (accountant, o.mechanism) {
        (AccountantArg::Rdp, _) => Accountant::Rdp(conv),
        (AccountantArg::Pld, _) => Accountant::Pld,
        (AccountantArg::Zcdp, Mechanism::Gaussian) => Accountant::Zcdp,
        (AccountantArg::Gdp, Mechanism::Gaussian) => Accountant::Gdp,
        (AccountantArg::Zcdp | AccountantArg::Gdp, _) => bail!(
            "--accountant {} does not bound the subsampled Gaussian; use rdp or pld",
            acc_name(accountant)
        ),
        (AccountantArg::Basic | AccountantArg::Advanced | AccountantArg::Optimal, m) => bail!(
            "--accountant {} composes pure-DP mechanisms (laplace); it makes no sense for {}",
            acc_name(accountant),
            mech_name(m)
        ),
    };
    Ok(Plan {
        mechanism,
        steps: steps(o)?,
        accountant,
    })
}

fn unreachable_laplace<T>() -> Result<T> {
    bail!("internal: laplace is not a Gaussian plan")
}

/// One answer: the key (`epsilon`, `sigma` or `rdp`), its value, the other fields
/// (for `--json`) and the explanatory text lines printed before `key = value`.
#[derive(Debug, Clone)]
pub struct Answer {
    /// `epsilon`, `sigma` or `rdp`.
    pub key: &'static str,
    /// The answer (an upper bound rounded up for epsilon and rdp).
    pub value: f64,
    /// Every field of the JSON output (the mechanism and `key` included).
    pub json: serde_json::Map<String, serde_json::Value>,
    /// The text lines printed before the last line `key = value`.
    pub lines: Vec<String>,
}

/// One result before the common fields are added.
struct Output {
    key: &'static str,
    value: f64,
    extra: serde_json::Map<String, serde_json::Value>,
    lines: Vec<String>,
}

fn epsilon_query(o: &Opts) -> Result<Output> {
    forbid(
        &o.epsilon,
        "--epsilon",
        "the epsilon query (it computes epsilon)",
    )?;
    forbid(
        &o.order,
        "--order",
        "the epsilon query (the order is optimised)",
    )?;
    let accountant = o.accountant.unwrap_or(AccountantArg::Rdp);
    let d = delta(o)?;
    let t = steps(o)?;
    let mut extra = serde_json::Map::new();
    let mut lines = Vec::new();
    let value = match o.mechanism {
        Mechanism::Gaussian | Mechanism::SubsampledGaussian => {
            let plan = gaussian_plan(o, accountant)?;
            let z = multiplier(o)?;
            if accountant == AccountantArg::Pld {
                // The reported value is the smaller of the PLD upper bound and the RDP
                // bound (both valid); say which one it is.
                let (e, interval) = calibrate::pld_epsilon_detail(&plan, z, d)?;
                if let Some(b) = interval {
                    lines.push(format!("pld interval = [{}, {}]", b.lower, b.upper));
                    extra.insert("epsilon_lower".into(), json!(b.lower));
                    extra.insert("pld_upper".into(), json!(b.upper));
                }
                let which = match e.order {
                    Some(order) => format!(
                        "rdp (improved conversion, order {order}): smaller than the pld upper bound"
                    ),
                    None => "pld upper bound".to_string(),
                };
                lines.push(format!("reported bound = {which}"));
                extra.insert("bound".into(), json!(which));
                e.epsilon
            } else {
                let e = calibrate::epsilon_detail(&plan, z, d)?;
                if let Some(order) = e.order {
                    lines.push(format!("optimal order = {order}"));
                    extra.insert("order".into(), json!(order));
                }
                e.epsilon
            }
        }
        Mechanism::Laplace => {
            let ratio = laplace_ratio(o)?;
            let eps0 = 1.0 / ratio;
            lines.push(format!("per-step epsilon = {eps0}"));
            extra.insert("per_step_epsilon".into(), json!(eps0));
            match accountant {
                AccountantArg::Basic | AccountantArg::Advanced | AccountantArg::Optimal => {
                    conversion(o, accountant)?;
                    let method = match accountant {
                        AccountantArg::Basic => CompositionMethod::Basic,
                        AccountantArg::Advanced => CompositionMethod::Advanced,
                        _ => CompositionMethod::Optimal,
                    };
                    composed_epsilon(eps0, t, d, method)?
                }
                AccountantArg::Rdp => {
                    let conv = conversion(o, accountant)?;
                    let tf = t as f64;
                    let r = epsilon_from_curve(
                        |a| laplace_rdp(a, ratio).map_or(f64::NAN, |v| tf * v),
                        d,
                        conv,
                        &OrderGrid::fine(),
                    )?;
                    lines.push(format!("optimal order = {}", r.order));
                    extra.insert("order".into(), json!(r.order));
                    // Never report more than basic composition, which also holds.
                    r.epsilon.min(composed_epsilon(eps0, t, d, CompositionMethod::Basic)?)
                }
                AccountantArg::Pld => {
                    conversion(o, accountant)?;
                    let b = pld::epsilon_upper(
                        &PldMechanism::Laplace {
                            scale: ratio,
                            sensitivity: 1.0,
                        },
                        t,
                        d.get(),
                    )?;
                    lines.push(format!("pld interval = [{}, {}]", b.lower, b.upper));
                    extra.insert("epsilon_lower".into(), json!(b.lower));
                    b.upper
                }
                AccountantArg::Zcdp | AccountantArg::Gdp => bail!(
                    "--accountant {} makes no sense for --mechanism laplace; use basic, advanced, optimal, rdp or pld",
                    acc_name(accountant)
                ),
            }
        }
    };
    extra.insert("delta".into(), json!(d.get()));
    extra.insert("steps".into(), json!(t));
    extra.insert("accountant".into(), json!(acc_name(accountant)));
    Ok(Output {
        key: "epsilon",
        value,
        extra,
        lines,
    })
}

fn sigma_query(o: &Opts) -> Result<Output> {
    if o.mechanism == Mechanism::Laplace {
        bail!(
            "the sigma query calibrates Gaussian noise; it makes no sense for --mechanism laplace"
        );
    }
    forbid(&o.sigma, "--sigma", "the sigma query (it computes sigma)")?;
    forbid(
        &o.order,
        "--order",
        "the sigma query (the order is optimised)",
    )?;
    let accountant = o.accountant.unwrap_or(AccountantArg::Rdp);
    let plan = gaussian_plan(o, accountant)?;
    let target = need(o.epsilon, "--epsilon", "the sigma query")?;
    let target = Epsilon::new(target)?;
    let d = delta(o)?;
    let c = calibrate::calibrate_sigma(&plan, target, d)?;
    let sens = sensitivity(o);
    let mut extra = serde_json::Map::new();
    let mut lines = vec![format!("achieved epsilon = {}", c.epsilon)];
    extra.insert("noise_multiplier".into(), json!(c.noise_multiplier));
    extra.insert("epsilon".into(), json!(c.epsilon));
    extra.insert("delta".into(), json!(c.delta));
    extra.insert("steps".into(), json!(plan.steps));
    extra.insert("accountant".into(), json!(acc_name(accountant)));
    if let Some(order) = c.order {
        lines.push(format!("optimal order = {order}"));
        extra.insert("order".into(), json!(order));
    }
    Ok(Output {
        key: "sigma",
        value: c.noise_multiplier * sens,
        extra,
        lines,
    })
}

fn rdp_query(o: &Opts) -> Result<Output> {
    forbid(&o.delta, "--delta", "the rdp query")?;
    forbid(&o.epsilon, "--epsilon", "the rdp query")?;
    forbid(&o.accountant, "--accountant", "the rdp query")?;
    forbid(&o.conversion, "--conversion", "the rdp query")?;
    let order = need(o.order, "--order", "the rdp query")?;
    if !(order.is_finite() && order > 1.0) {
        bail!("invalid --order = {order}: must be finite and > 1");
    }
    let t = match o.steps {
        Some(0) => bail!("invalid --steps = 0: must be at least 1"),
        Some(t) => t,
        None => 1,
    };
    let per_step = match o.mechanism {
        Mechanism::Gaussian => gaussian_rdp(order, multiplier(o)?)?,
        Mechanism::SubsampledGaussian => {
            subsampled_gaussian_rdp(sampling_rate(o)?.get(), multiplier(o)?.get(), order)?
        }
        Mechanism::Laplace => laplace_rdp(order, laplace_ratio(o)?)?,
    };
    let mut extra = serde_json::Map::new();
    extra.insert("order".into(), json!(order));
    extra.insert("steps".into(), json!(t));
    Ok(Output {
        key: "rdp",
        value: dp_accounting::num::round_up(per_step * t as f64),
        extra,
        lines: vec![format!("order = {order}, steps = {t}")],
    })
}

/// Answers one query (no printing): the library entry point of the calculator.
///
/// # Errors
/// A flag the query needs is missing, a flag makes no sense for it, a value is out of
/// range, or the answer is not finite (the plan gives no useful guarantee).
pub fn answer(query: &Query) -> Result<Answer> {
    let (opts, out) = match query {
        Query::Epsilon(o) => (o, {
            check_mechanism_flags(o)?;
            epsilon_query(o)?
        }),
        Query::Sigma(o) => (o, {
            check_mechanism_flags(o)?;
            sigma_query(o)?
        }),
        Query::Rdp(o) => (o, {
            check_mechanism_flags(o)?;
            rdp_query(o)?
        }),
    };
    if !out.value.is_finite() {
        bail!(
            "{} is not finite ({}); the plan gives no useful guarantee",
            out.key,
            out.value
        );
    }
    let mut json = out.extra;
    json.insert("mechanism".into(), json!(mech_name(opts.mechanism)));
    json.insert(out.key.into(), json!(out.value));
    let mut lines = vec![format!("mechanism = {}", mech_name(opts.mechanism))];
    lines.extend(out.lines);
    Ok(Answer {
        key: out.key,
        value: out.value,
        json,
        lines,
    })
}

/// Runs `dp-erm privacy`: prints the answer as text lines (the last `key = value`) or,
/// with `--json`, one JSON object.
///
/// # Errors
/// As [`answer`].
pub fn run(args: Args) -> Result<()> {
    let a = answer(&args.command)?;
    let as_json = match &args.command {
        Query::Epsilon(o) | Query::Sigma(o) | Query::Rdp(o) => o.json,
    };
    if as_json {
        println!("{}", serde_json::Value::Object(a.json));
    } else {
        for l in &a.lines {
            println!("{l}");
        }
        println!("{} = {}", a.key, a.value);
    }
    Ok(())
}
