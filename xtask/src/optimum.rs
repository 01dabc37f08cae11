//! `cargo xtask optimum`: the certified non-private optimum `F*` of a problem on a data
//! file, with `dp_models::reference::solve`.
//!
//! The last two lines of the output are `objective = <F*>` and `gap = <certificate>`
//! (the certificate's kind is printed just before them).

use anyhow::{bail, Context, Result};
use clap::ValueEnum;
use dp_bench::data::{load_csv, load_libsvm, CsvOptions, LabelMap, Target};
use dp_models::reference::{solve, ReferenceOptions};
use dp_models::{
    preprocess, Dataset, Design, ElasticNet, Huber, Logistic, Loss, NoPenalty, Objective, Penalty,
    Squared, SquaredHinge, L1, L2,
};
use std::path::PathBuf;

/// File formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Comma-separated values with a header row.
    Csv,
    /// LIBSVM / SVMlight sparse text.
    Libsvm,
}

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
pub struct Args {
    /// Data file (CSV with a header row, or LIBSVM).
    #[arg(long)]
    data: PathBuf,
    /// File format (default: `csv` for a `.csv` file, otherwise required).
    #[arg(long, value_enum)]
    format: Option<Format>,
    /// CSV label column, by header name or 0-based index (default: the last column).
    #[arg(long)]
    target: Option<String>,
    /// CSV text of the positive class for classification losses (with `--negative`);
    /// without it the label column must hold the numbers -1 and +1.
    #[arg(long, requires = "negative")]
    positive: Option<String>,
    /// CSV text of the negative class (with `--positive`).
    #[arg(long, requires = "positive")]
    negative: Option<String>,
    /// Per-sample loss.
    #[arg(long, value_enum)]
    loss: LossArg,
    /// Huber threshold (only with `--loss huber`).
    #[arg(long, default_value_t = 1.0)]
    huber_delta: f64,
    /// Penalty.
    #[arg(long, value_enum)]
    penalty: PenaltyArg,
    /// Penalty strength (the L1 strength for the elastic net).
    #[arg(long, default_value_t = 0.0)]
    lambda: f64,
    /// L2 strength of the elastic net.
    #[arg(long, default_value_t = 0.0)]
    l2: f64,
    /// Standardise the features (zero mean, unit variance; dense data only; not private).
    #[arg(long)]
    standardize: bool,
    /// Relative tolerance of the certificate.
    #[arg(long, default_value_t = 1e-10)]
    tol: f64,
    /// Maximum passes over the coordinates.
    #[arg(long, default_value_t = 1_000_000)]
    max_passes: u64,
}

/// Runs the subcommand.
pub fn run(args: Args) -> Result<()> {
    let format = match args.format {
        Some(f) => f,
        None => match args.data.extension().and_then(|e| e.to_str()) {
            Some(e) if e.eq_ignore_ascii_case("csv") => Format::Csv,
            _ => bail!(
                "cannot tell the format of {} from its name: pass --format csv or --format libsvm",
                args.data.display()
            ),
        },
    };
    let opts = ReferenceOptions {
        tol: args.tol,
        max_passes: args.max_passes,
        ..ReferenceOptions::default()
    };
    match format {
        Format::Csv => {
            let target = match &args.target {
                None => Target::Last,
                Some(t) => match t.parse::<usize>() {
                    Ok(i) => Target::Index(i),
                    Err(_) => Target::Name(t.clone()),
                },
            };
            let labels = match (&args.positive, &args.negative) {
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
            let mut data = load_csv(&args.data, &csv)?;
            if args.standardize {
                let (x, y) = data.into_parts();
                let (xs, _) = preprocess::standardize(&x)?;
                data = Dataset::new(xs, y)?;
            }
            dispatch(&args, &data, "dense", &opts)
        }
        Format::Libsvm => {
            if args.target.is_some() || args.positive.is_some() {
                bail!("--target / --positive / --negative apply to CSV files only");
            }
            if args.standardize {
                bail!("--standardize needs dense data (a CSV file); LIBSVM data are sparse");
            }
            let data = load_libsvm(&args.data, None)?;
            dispatch(&args, &data, "sparse", &opts)
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
) -> Result<()> {
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

fn report<D: Design, L: Loss, P: Penalty>(
    args: &Args,
    data: &Dataset<D>,
    layout: &str,
    loss: &L,
    penalty: &P,
    opts: &ReferenceOptions,
) -> Result<()> {
    let obj = Objective::new(data, loss, penalty)?;
    let start = std::time::Instant::now();
    let sol = solve(&obj, opts).context("reference solver")?;
    let secs = start.elapsed().as_secs_f64();
    println!(
        "data: {} ({} x {}, {layout}, nnz {}){}",
        args.data.display(),
        data.n_samples(),
        data.n_features(),
        data.x().nnz(),
        if args.standardize {
            ", standardised"
        } else {
            ""
        }
    );
    let pen = match args.penalty {
        PenaltyArg::L1 => format!("l1, lambda = {}", args.lambda),
        PenaltyArg::L2 => format!("l2, lambda = {}", args.lambda),
        PenaltyArg::ElasticNet => format!("elastic net, l1 = {}, l2 = {}", args.lambda, args.l2),
        PenaltyArg::None => "none".into(),
    };
    println!(
        "problem: (1/n) sum_i {}(x_i^T w, y_i) + penalty ({pen})",
        loss.name()
    );
    println!(
        "solver: cyclic proximal CD, {} passes, {secs:.3} s",
        sol.iterations
    );
    println!(
        "support: {} of {} coefficients non-zero",
        sol.support_size(),
        sol.w.len()
    );
    if sol.w.len() <= 50 {
        let w: Vec<String> = sol.w.iter().map(|v| format!("{v:.10e}")).collect();
        println!("w = [{}]", w.join(", "));
    }
    println!(
        "certificate: {} (relative {:e}, tol {:e})",
        sol.kind, sol.relative_certificate, opts.tol
    );
    println!("objective = {}", sol.objective);
    println!("gap = {:e}", sol.certificate);
    Ok(())
}
