//! Registered measurement studies, each runnable as `cargo xtask study NAME [ARGS..]`.
//!
//! An experiment ([`crate::experiments`]) reproduces a paper and writes a report; a study
//! answers one question the docs quote (which problem definition, which defaults, how
//! accurate a private constant is, what a pass costs) and prints its table or JSON
//! object to standard output, in the format the doc that quotes it shows. [`STUDIES`]
//! lists them; adding one is a file here and a line there. The helpers below are what
//! several studies share (arguments, grids, accuracies, quantiles, a CPU clock).
//!
//! The seeded studies' fits use fixed seeds so that runs compare; a seed lets anyone
//! replay the noise, so these fits are measurements, never releases. A model meant for
//! publication is fitted with `fit` (noise from the operating system).

mod cd_floor;
mod constants_sweep;
mod defaults_and_selection;
mod definition_sweep;
mod pass_times;
mod private_constants;
mod scaling;
mod scd_epochs;
mod scd_noise;
mod table2_tuning;

use std::str::FromStr;

use anyhow::{bail, Context, Result};
use dp_models::{Dataset, DenseDesign};
use dp_optim::{Fitted, OptimError};

/// A registered study.
#[derive(Debug, Clone, Copy)]
pub struct Study {
    /// Name on the command line.
    pub name: &'static str,
    /// What it measures, and which doc quotes it.
    pub about: &'static str,
    /// Its arguments (after the name).
    pub usage: &'static str,
    /// Runs it on its arguments (the name left out); prints its result.
    pub run: fn(&[String]) -> Result<()>,
}

/// Every study, by name.
pub const STUDIES: &[Study] = &[
    Study {
        name: "table2-tuning",
        about:
            "the dp-cd experiment with the paper's DP-CD grid and run counts on chosen problems \
                and passes (docs/reproduction/dp-cd.md)",
        usage: "OUT [PROBLEMS] [PASSES]",
        run: table2_tuning::run,
    },
    Study {
        name: "definition-sweep",
        about: "the DP-CD problem-definition sweep: which lambda, labels and order reproduce \
                Table 2 (docs/reproduction-log.md)",
        usage: "[--seed N] [--rows FILE] [--skip N] [--smoke] | --render FILE",
        run: definition_sweep::run,
    },
    Study {
        name: "cd-floor",
        about: "non-private CD against the paper's private DP-CD for every candidate definition \
                (docs/reproduction-log.md, docs/reproduction/dp-cd.md)",
        usage: "[--smoke]",
        run: cd_floor::run,
    },
    Study {
        name: "constants-sweep",
        about: "small private fits with the no-tuning defaults: exploded coefficients and floored \
                M_j estimates (docs/defaults.md)",
        usage: "[SEEDS] | search SIZE EPS SEEDS [LAMBDA]",
        run: constants_sweep::run,
    },
    Study {
        name: "defaults-and-selection",
        about: "DP-CD with no tuning, tuned for free and tuned privately; every algorithm's \
                defaults (docs/defaults.md)",
        usage: "compare [SEEDS] | calibrate [SEEDS [F_T,.. [F_C,..]]] | algorithms [SEEDS]",
        run: defaults_and_selection::run,
    },
    Study {
        name: "private-constants",
        about: "errors of private M_j estimates; Adult accuracy with private constants and \
                adaptive clipping (docs/private-constants.md)",
        usage: "errors|adult|adult-variants [SEEDS]",
        run: private_constants::run,
    },
    Study {
        name: "scd-noise",
        about: "where DP-SCD's classification accuracy goes, per noise placement (docs/dp-scd.md)",
        usage: "[EPS,..] [CLIPS,..]",
        run: scd_noise::run,
    },
    Study {
        name: "scd-epochs",
        about: "timing: per-epoch thread CPU time of SDCA and DP-SCD against the CD pass \
                (docs/performance.md, docs/dp-scd.md)",
        usage: "[ROUNDS [PROBLEM]]",
        run: scd_epochs::run,
    },
    Study {
        name: "pass-times",
        about: "timing: our side of the peer benchmark, one JSON object (benches/peers/run.py)",
        usage: "write DIR [--dense-n N] | time DIR dense|sparse|electricity [--hi H] \
                [--batch-size B] [--inner K]",
        run: pass_times::run,
    },
    Study {
        name: "scaling",
        about: "timing: a CD / DP-CD pass and PLD calibration against the problem's size, one \
                JSON object per process (benches/scaling.py)",
        usage:
            "pass --kind dense|sparse --n N --p P [--density D] [--build matrix|slice|deferred] \
                [--max-passes K] [--no-fit] | pld [--steps T] [--rates Q,..] [--reps R]",
        run: scaling::run,
    },
];

/// Looks a study up by name.
pub fn find(name: &str) -> Result<&'static Study> {
    STUDIES.iter().find(|s| s.name == name).ok_or_else(|| {
        let names: Vec<_> = STUDIES.iter().map(|s| s.name).collect();
        anyhow::anyhow!("unknown study '{name}': available are {}", names.join(", "))
    })
}

/// The positional argument `i` parsed, or `default` when absent.
fn arg<T: FromStr>(args: &[String], i: usize, default: T) -> Result<T>
where
    T::Err: std::error::Error + Send + Sync + 'static,
{
    match args.get(i) {
        None => Ok(default),
        Some(s) => s
            .parse()
            .with_context(|| format!("argument {}: cannot parse {s:?}", i + 1)),
    }
}

/// The positional argument `i` as a comma-separated list, or `default` when absent.
fn list<T: FromStr + Clone>(args: &[String], i: usize, default: &[T]) -> Result<Vec<T>>
where
    T::Err: std::error::Error + Send + Sync + 'static,
{
    match args.get(i) {
        None => Ok(default.to_vec()),
        Some(s) => s
            .split(',')
            .map(|t| {
                t.parse()
                    .with_context(|| format!("cannot parse {t:?} in {s:?}"))
            })
            .collect(),
    }
}

/// The value after `--name`, if given.
fn opt<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
    args.iter()
        .position(|a| a == name)
        .and_then(|k| args.get(k + 1))
        .map(String::as_str)
}

/// The number after `--name` (`1e6` accepted for integers), or `default`.
fn opt_num<T: FromStr>(args: &[String], name: &str, default: T) -> Result<T> {
    match opt(args, name) {
        None => Ok(default),
        Some(s) => s
            .parse::<T>()
            .or_else(|_| {
                let v: f64 = s.parse().map_err(|_| ())?;
                format!("{v}").parse::<T>().map_err(|_| ())
            })
            .map_err(|_| anyhow::anyhow!("{name}: cannot parse {s:?}")),
    }
}

/// Refuses any argument other than the flags `values` (each followed by its value) and
/// `switches`.
fn known_flags(args: &[String], values: &[&str], switches: &[&str]) -> Result<()> {
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if values.contains(&a.as_str()) {
            it.next().with_context(|| format!("{a} needs a value"))?;
        } else if !switches.contains(&a.as_str()) {
            let mut known: Vec<String> = values.iter().map(|v| format!("{v} X")).collect();
            known.extend(switches.iter().map(|s| s.to_string()));
            bail!("unknown argument {a:?} (known: {})", known.join(", "));
        }
    }
    Ok(())
}

/// Refuses arguments a study does not know.
fn no_more(args: &[String], usage: &str) -> Result<()> {
    if let Some(a) = args.first() {
        bail!("unexpected argument {a:?}; usage: {usage}");
    }
    Ok(())
}

/// Every `[a, b, c]` of `a x b x c`, the last varying fastest.
fn grid3(a: &[f64], b: &[f64], c: &[f64]) -> Vec<[f64; 3]> {
    a.iter()
        .flat_map(|&x| {
            b.iter()
                .flat_map(move |&y| c.iter().map(move |&z| [x, y, z]))
        })
        .collect()
}

/// Test accuracy of a fit; a diverged fit counts as accuracy 0.
fn accuracy_or_zero(
    fit: std::result::Result<Fitted, OptimError>,
    test: &Dataset<DenseDesign>,
) -> Result<f64> {
    match fit {
        Ok(f) => Ok(f.model.accuracy(test)?),
        Err(OptimError::Diverged(_)) => Ok(0.0),
        Err(e) => Err(e.into()),
    }
}

/// The accuracy of predicting the majority class of `d`.
fn majority(d: &Dataset<DenseDesign>) -> f64 {
    let pos = d.y().iter().filter(|&&y| y > 0.0).count() as f64 / d.n_samples() as f64;
    pos.max(1.0 - pos)
}

/// The `q`-quantile of `v` (nearest rank after sorting; `v` not empty).
fn percentile(v: &mut [f64], q: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * q).round() as usize]
}

/// The median of `v` (mean of the middle two for an even length; `v` not empty).
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}

/// Nanoseconds this thread has run on a CPU (`/proc/thread-self/schedstat`, Linux).
fn thread_cpu_ns() -> Result<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat")
        .context("reading /proc/thread-self/schedstat")?;
    s.split_whitespace()
        .next()
        .context("empty schedstat")?
        .parse()
        .context("parsing schedstat")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_study_is_found_by_its_name_and_names_are_unique() {
        for s in STUDIES {
            assert_eq!(find(s.name).unwrap().name, s.name);
        }
        let mut names: Vec<_> = STUDIES.iter().map(|s| s.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), STUDIES.len());
        assert!(find("no-such-study").is_err());
    }

    /// Each study refuses a malformed command line before it loads or fits anything.
    #[test]
    fn every_study_refuses_malformed_arguments_up_front() {
        let cases: &[(&str, &[&str])] = &[
            ("table2-tuning", &[]),
            ("table2-tuning", &["out", "electricity-raw", "x"]),
            ("definition-sweep", &["--bogus"]),
            ("definition-sweep", &["--seed"]),
            ("cd-floor", &["x"]),
            ("constants-sweep", &["x"]),
            ("constants-sweep", &["search", "49"]),
            ("defaults-and-selection", &["bogus"]),
            ("defaults-and-selection", &["calibrate", "2", "1,x"]),
            ("private-constants", &["bogus"]),
            ("private-constants", &["errors", "1", "2"]),
            ("scd-noise", &["1,x"]),
            ("scd-epochs", &["x"]),
            ("pass-times", &["bogus"]),
            ("pass-times", &["time", "dir", "dense", "--bogus", "1"]),
            ("scaling", &["pass", "--kind", "dense", "--no-such-flag"]),
            ("scaling", &["pld", "--reps"]),
        ];
        for (name, args) in cases {
            let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
            assert!((find(name).unwrap().run)(&args).is_err(), "{name} {args:?}");
        }
    }

    #[test]
    fn arguments_parse_with_defaults_and_refuse_garbage() {
        let a: Vec<String> = ["3", "0.5,1", "x"].map(String::from).to_vec();
        assert_eq!(arg(&a, 0, 7u64).unwrap(), 3);
        assert_eq!(arg(&a, 5, 7u64).unwrap(), 7);
        assert!(arg::<u64>(&a, 2, 7).is_err());
        assert_eq!(list(&a, 1, &[2.0]).unwrap(), vec![0.5, 1.0]);
        assert_eq!(list(&a, 4, &[2.0]).unwrap(), vec![2.0]);
        let f: Vec<String> = ["--n", "1e4"].map(String::from).to_vec();
        assert_eq!(opt_num(&f, "--n", 0usize).unwrap(), 10_000);
        assert_eq!(opt_num(&f, "--p", 5usize).unwrap(), 5);
        assert!(known_flags(&f, &["--n"], &[]).is_ok());
        assert!(known_flags(&f, &[], &["--n"]).is_err());
        assert!(known_flags(&f[..1], &["--n"], &[]).is_err());
        assert_eq!(median(vec![3.0, 1.0, 2.0, 10.0]), 2.5);
        assert_eq!(percentile(&mut [3.0, 1.0, 2.0], 0.5), 2.0);
        let g = grid3(&[1.0, 2.0], &[3.0], &[4.0, 5.0]);
        assert_eq!(
            g,
            vec![
                [1.0, 3.0, 4.0],
                [1.0, 3.0, 5.0],
                [2.0, 3.0, 4.0],
                [2.0, 3.0, 5.0]
            ]
        );
    }
}
