//! `cargo xtask optimum`: the certified non-private optimum `F*` of a problem on a data
//! file, with `dp_models::reference::solve`.
//!
//! The last two lines of the output are `objective = <F*>` and `gap = <certificate>`
//! (the certificate's kind is printed just before them). With `--json` the output is
//! one JSON object instead.

use anyhow::{bail, Context, Result};
use clap::ValueEnum;
use dp_erm_cli::input::{DataArgs, Format};
use dp_models::io::{load_csv, load_libsvm, CsvOptions, FeatureCount, LabelMap, Target};
use dp_models::reference::{solve, ReferenceOptions};
use dp_models::{
    preprocess, Dataset, Design, ElasticNet, Huber, Logistic, Loss, NoPenalty, Objective, Penalty,
    Squared, SquaredHinge, L1, L2,
};
use serde_json::json;

/// Per-sample losses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LossArg {
    /// `1/2 (z - y)^2`.
    Squared,
    /// `(z - y)^2` (the DP-CD paper's convention).
    SquaredFull,
    /// `log(1 + exp(-y z))`, labels +-1.
    Logistic,
    /// `max(0, 1 - y z)^2`, labels +-1.
    SquaredHinge,
    /// Huber with threshold `--huber-delta`.
    Huber,
}

/// Penalties.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PenaltyArg {
    /// `lambda ||w||_1`.
    L1,
    /// `(lambda/2) ||w||_2^2`.
    L2,
    /// `lambda ||w||_1 + (l2/2) ||w||_2^2`.
    ElasticNet,
    /// No penalty.
    None,
}

/// Arguments of `cargo xtask optimum`.
#[derive(clap::Args, Debug)]
#[command(mut_arg("format", |a| a.help(
    "File format (default: from the extension, `.csv` or `.libsvm` / `.svm`; otherwise required)"
)))]
pub struct Args {
    /// The data file and how to read it.
    #[command(flatten)]
    input: DataArgs,
    /// Per-sample loss.
    #[arg(long, value_enum)]
    loss: LossArg,
    /// Huber threshold (only with `--loss huber`).
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    huber_delta: f64,
    /// Penalty.
    #[arg(long, value_enum)]
    penalty: PenaltyArg,
    /// Penalty strength (the L1 strength for the elastic net).
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    lambda: f64,
    /// L2 strength of the elastic net.
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    l2: f64,
    /// Standardise the features (zero mean, unit variance; dense data only; not private).
    #[arg(long)]
    standardize: bool,
    /// Relative tolerance of the certificate.
    #[arg(long, default_value_t = 1e-10, allow_negative_numbers = true)]
    tol: f64,
    /// Maximum passes over the coordinates.
    #[arg(long, default_value_t = 1_000_000, allow_negative_numbers = true)]
    max_passes: u64,
    /// Anderson extrapolation memory (0 disables).
    #[arg(long, default_value_t = ReferenceOptions::default().anderson, allow_negative_numbers = true)]
    anderson: usize,
    /// Print one JSON object (data, problem, solver, support, coefficients, certificate,
    /// objective, gap) instead of text lines.
    #[arg(long)]
    json: bool,
}

/// Runs the subcommand, printing the report.
pub fn run(args: Args) -> Result<()> {
    let out = run_to_string(&args)?;
    if args.json {
        println!("{out}");
    } else {
        print!("{out}");
    }
    Ok(())
}

/// Runs the subcommand and returns the report.
pub fn run_to_string(args: &Args) -> Result<String> {
    let format = match args.input.format {
        Some(f) => f,
        // The extensions `fit` reads (dp_models::io::Format::from_path).
        None => match dp_models::io::Format::from_path(&args.input.data) {
            Ok(dp_models::io::Format::Csv) => Format::Csv,
            Ok(dp_models::io::Format::Libsvm) => Format::Libsvm,
            _ => bail!(
                "cannot tell the format of {} from its name (.csv, .libsvm or .svm): pass \
                 --format csv or --format libsvm",
                args.input.data.display()
            ),
        },
    };
    let opts = ReferenceOptions {
        tol: args.tol,
        max_passes: args.max_passes,
        anderson: args.anderson,
        ..ReferenceOptions::default()
    };
    match format {
        Format::Csv => {
            let target = Target::parse(args.input.target.as_deref());
            let labels = match (&args.input.positive, &args.input.negative) {
                (Some(p), Some(n)) => LabelMap::Binary {
                    positive: p.clone(),
                    negative: n.clone(),
                },
                _ => LabelMap::Numeric,
            };
            let csv = CsvOptions {
                target,
                labels,
                ..CsvOptions::default()
            };
            let mut data = load_csv(&args.input.data, &csv)?;
            if args.standardize {
                let (x, y) = data.into_parts();
                let (xs, _) = preprocess::standardize(&x)?;
                data = Dataset::new(xs, y)?;
            }
            dispatch(args, &data, "dense", &opts)
        }
        Format::Libsvm => {
            if args.input.target.is_some() || args.input.positive.is_some() {
                bail!("--target / --positive / --negative apply to CSV files only");
            }
            if args.standardize {
                bail!("--standardize needs dense data (a CSV file); LIBSVM data are sparse");
            }
            // The optimum is a non-private reference: without --n-features the width is
            // the largest index present, by name.
            let width = args
                .input
                .n_features
                .map_or(FeatureCount::FromDataNotPrivate, FeatureCount::Public);
            let data = load_libsvm(&args.input.data, width)?;
            dispatch(args, &data, "sparse", &opts)
        }
    }
}

/// Monomorphises the solver for the chosen loss and penalty (no dynamic dispatch in the
/// coordinate loop).
fn dispatch<D: Design>(
    args: &Args,
    data: &Dataset<D>,
    layout: &str,
    opts: &ReferenceOptions,
) -> Result<String> {
    if args.loss != LossArg::Huber && args.huber_delta != 1.0 {
        bail!("--huber-delta applies to --loss huber only");
    }
    if args.penalty != PenaltyArg::ElasticNet && args.l2 != 0.0 {
        bail!("--l2 applies to --penalty elastic-net only (use --penalty l2 --lambda X for ridge)");
    }
    if args.penalty == PenaltyArg::None && args.lambda != 0.0 {
        bail!("--lambda given with --penalty none");
    }
    macro_rules! with_penalty {
        ($loss:expr) => {{
            let loss = $loss;
            match args.penalty {
                PenaltyArg::L1 => report(args, data, layout, &loss, &L1::new(args.lambda)?, opts),
                PenaltyArg::L2 => report(args, data, layout, &loss, &L2::new(args.lambda)?, opts),
                PenaltyArg::ElasticNet => report(
                    args,
                    data,
                    layout,
                    &loss,
                    &ElasticNet::new(args.lambda, args.l2)?,
                    opts,
                ),
                PenaltyArg::None => report(args, data, layout, &loss, &NoPenalty, opts),
            }
        }};
    }
    match args.loss {
        LossArg::Squared => with_penalty!(Squared::half()),
        LossArg::SquaredFull => with_penalty!(Squared::full()),
        LossArg::Logistic => with_penalty!(Logistic),
        LossArg::SquaredHinge => with_penalty!(SquaredHinge),
        LossArg::Huber => with_penalty!(Huber::new(args.huber_delta)?),
    }
}

/// The per-sample loss, written out with its exact scaling.
fn loss_formula(args: &Args) -> String {
    match args.loss {
        LossArg::Squared => "(1/2) (x_i^T w - y_i)^2".into(),
        LossArg::SquaredFull => "(x_i^T w - y_i)^2".into(),
        LossArg::Logistic => "log(1 + exp(-y_i x_i^T w))".into(),
        LossArg::SquaredHinge => "max(0, 1 - y_i x_i^T w)^2".into(),
        LossArg::Huber => format!("huber_{}(x_i^T w - y_i)", args.huber_delta),
    }
}

fn report<D: Design, L: Loss, P: Penalty>(
    args: &Args,
    data: &Dataset<D>,
    layout: &str,
    loss: &L,
    penalty: &P,
    opts: &ReferenceOptions,
) -> Result<String> {
    use std::fmt::Write;
    let obj = Objective::new(data, loss, penalty)?;
    let start = std::time::Instant::now();
    let sol = solve(&obj, opts).context("reference solver")?;
    let secs = start.elapsed().as_secs_f64();
    let pen = match args.penalty {
        PenaltyArg::L1 => format!("lambda ||w||_1, lambda = {}", args.lambda),
        PenaltyArg::L2 => format!("(lambda/2) ||w||_2^2, lambda = {}", args.lambda),
        PenaltyArg::ElasticNet => format!(
            "lambda ||w||_1 + (l2/2) ||w||_2^2, lambda = {}, l2 = {}",
            args.lambda, args.l2
        ),
        PenaltyArg::None => "0 (no penalty)".into(),
    };
    let problem = format!("F(w) = (1/n) sum_i {} + {pen}", loss_formula(args));
    if args.json {
        let out = json!({
            "data": args.input.data.display().to_string(),
            "n": data.n_samples(),
            "p": data.n_features(),
            "layout": layout,
            "nnz": data.x().nnz(),
            "standardized": args.standardize,
            "problem": problem,
            "loss": loss.name(),
            "penalty": penalty.name(),
            "lambda": args.lambda,
            "l2": args.l2,
            "solver": "cyclic proximal CD",
            "passes": sol.iterations,
            "seconds": secs,
            "support": sol.support_size(),
            "w": sol.w,
            "certificate": sol.kind.to_string(),
            "relative_certificate": sol.relative_certificate,
            "tol": opts.tol,
            "objective": sol.objective,
            "gap": sol.certificate,
        });
        return Ok(out.to_string());
    }
    let mut out = String::new();
    writeln!(
        out,
        "data: {} ({} x {}, {layout}, nnz {}){}",
        args.input.data.display(),
        data.n_samples(),
        data.n_features(),
        data.x().nnz(),
        if args.standardize {
            ", standardised"
        } else {
            ""
        }
    )?;
    writeln!(out, "problem: {problem}")?;
    writeln!(
        out,
        "solver: cyclic proximal CD, {} passes, {secs:.3} s",
        sol.iterations
    )?;
    writeln!(
        out,
        "support: {} of {} coefficients non-zero",
        sol.support_size(),
        sol.w.len()
    )?;
    if sol.w.len() <= 50 {
        let w: Vec<String> = sol.w.iter().map(|v| format!("{v:.10e}")).collect();
        writeln!(out, "w = [{}]", w.join(", "))?;
    }
    writeln!(
        out,
        "certificate: {} (relative {:e}, tol {:e})",
        sol.kind, sol.relative_certificate, opts.tol
    )?;
    writeln!(out, "objective = {}", sol.objective)?;
    writeln!(out, "gap = {:e}", sol.certificate)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use std::path::PathBuf;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: Args,
    }

    fn run_args(extra: &[&str]) -> Result<String> {
        let mut argv = vec!["optimum"];
        argv.extend_from_slice(extra);
        let cli = Cli::try_parse_from(argv)?;
        run_to_string(&cli.args)
    }

    fn temp_file(name: &str, text: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("xtask-optimum-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn lasso_on_orthogonal_csv_prints_certified_optimum() {
        // Hadamard design (X^T X = 4 I), 1/(2n)||Xw - y||^2 + 0.7 ||w||_1:
        // w = soft(X^T y / 4, 0.7) = [0.675, 0, 0, 0.425] (see dp-models' reference tests).
        let f = temp_file(
            "h.csv",
            "a,b,c,d,y\n1,1,1,1,3\n1,-1,1,-1,1\n1,1,-1,-1,-0.5\n1,-1,-1,1,2\n",
        );
        let out = run_args(&[
            "--data",
            f.to_str().unwrap(),
            "--target",
            "y",
            "--loss",
            "squared",
            "--penalty",
            "l1",
            "--lambda",
            "0.7",
        ])
        .unwrap();
        let lines: Vec<&str> = out.lines().collect();
        let n = lines.len();
        assert!(lines[n - 2].starts_with("objective = "), "{out}");
        assert!(lines[n - 1].starts_with("gap = "), "{out}");
        // F* by hand: residual r = X w - y with w = (0.675, 0, 0, 0.425).
        let w = [0.675, 0.0, 0.0, 0.425];
        let x = [
            [1., 1., 1., 1.],
            [1., -1., 1., -1.],
            [1., 1., -1., -1.],
            [1., -1., -1., 1.],
        ];
        let y = [3.0, 1.0, -0.5, 2.0];
        let mut fit = 0.0;
        for i in 0..4 {
            let z: f64 = (0..4).map(|j| x[i][j] * w[j]).sum();
            fit += 0.5 * (z - y[i]) * (z - y[i]);
        }
        let f_star = fit / 4.0 + 0.7 * (0.675 + 0.425);
        let got: f64 = lines[n - 2]["objective = ".len()..].parse().unwrap();
        assert!((got - f_star).abs() < 1e-12, "{got} vs {f_star}");
        let gap: f64 = lines[n - 1]["gap = ".len()..].parse().unwrap();
        assert!((0.0..=1e-10 * f_star).contains(&gap));
        assert!(out.contains("support: 2 of 4"), "{out}");
    }

    #[test]
    fn a_libsvm_extension_is_read_without_format() {
        // The same rows under a `.svm` name and under `--format libsvm` give the same
        // report; an unknown extension still asks for --format.
        let text = "1 1:0.5 2:-1\n-1 1:-0.25 2:1\n1 1:1\n-1 2:0.75\n";
        let args = |path: &str, format: bool| {
            let mut a = vec!["--data", path];
            if format {
                a.extend(["--format", "libsvm"]);
            }
            a.extend(["--loss", "logistic", "--penalty", "l2", "--lambda", "0.1"]);
            a.into_iter().map(String::from).collect::<Vec<_>>()
        };
        let svm = temp_file("d.svm", text);
        let txt = temp_file("d2.txt", text);
        let run = |a: Vec<String>| run_args(&a.iter().map(String::as_str).collect::<Vec<_>>());
        let by_name = run(args(svm.to_str().unwrap(), false)).unwrap();
        let declared = run(args(txt.to_str().unwrap(), true)).unwrap();
        let body = |out: &str| out.lines().skip(1).collect::<Vec<_>>().join("\n");
        assert_eq!(body(&by_name), body(&declared));
        let e = run(args(txt.to_str().unwrap(), false)).unwrap_err();
        assert!(e.to_string().contains("--format"), "{e}");
    }

    #[test]
    fn errors_are_clear() {
        let f = temp_file("d.txt", "1 1:0.5\n-1 2:1\n");
        let e = run_args(&[
            "--data",
            f.to_str().unwrap(),
            "--loss",
            "logistic",
            "--penalty",
            "none",
        ])
        .unwrap_err();
        assert!(e.to_string().contains("--format"), "{e}");
        let e = run_args(&[
            "--data",
            f.to_str().unwrap(),
            "--format",
            "libsvm",
            "--loss",
            "logistic",
            "--penalty",
            "l2",
            "--lambda",
            "1",
            "--standardize",
        ])
        .unwrap_err();
        assert!(e.to_string().contains("--standardize"), "{e}");
        // LIBSVM + logistic + l2 works on the same file.
        let out = run_args(&[
            "--data",
            f.to_str().unwrap(),
            "--format",
            "libsvm",
            "--loss",
            "logistic",
            "--penalty",
            "l2",
            "--lambda",
            "1",
        ])
        .unwrap();
        assert!(out.contains("duality gap"), "{out}");
        // Labels that are not +-1 for a classification loss.
        let c = temp_file("c.csv", "a,y\n1,0\n2,1\n");
        let e = run_args(&[
            "--data",
            c.to_str().unwrap(),
            "--loss",
            "logistic",
            "--penalty",
            "none",
        ])
        .unwrap_err();
        assert!(format!("{e:#}").contains("label"), "{e:#}");
        // NaN in the data: the loader's error names the line.
        let c = temp_file("n.csv", "a,y\n1,0\nNaN,1\n");
        let e = run_args(&[
            "--data",
            c.to_str().unwrap(),
            "--loss",
            "squared",
            "--penalty",
            "none",
        ])
        .unwrap_err();
        assert!(format!("{e:#}").contains("line 3"), "{e:#}");
        // Negative lambda.
        let c = temp_file("l.csv", "a,y\n1,0.5\n2,1\n");
        let e = run_args(&[
            "--data",
            c.to_str().unwrap(),
            "--loss",
            "squared",
            "--penalty",
            "l1",
            "--lambda=-1",
        ])
        .unwrap_err();
        assert!(format!("{e:#}").contains("lambda"), "{e:#}");
    }
}
