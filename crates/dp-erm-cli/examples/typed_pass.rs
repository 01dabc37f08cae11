//! The typed library call that `dp-erm fit` must match in speed (issue 25, "the user's
//! path"): the same solver, loss and penalty as the command line's fit, written with the
//! typed losses (`Squared::half()`, `Logistic`) and penalties, on the same CSV file.
//! Prints one JSON object with the solver's seconds, as `dp-erm fit --json` does, so a
//! pass can be timed the same way on both sides: the marginal solver time between 1 and
//! `K` passes (the CSV parsing and the process start-up, paid once, cancel).
//!
//! ```text
//! cargo run --release -p dp-erm-cli --example typed_pass -- dense-cd    FILE PASSES THREADS
//! cargo run --release -p dp-erm-cli --example typed_pass -- dense-dp-cd FILE PASSES THREADS
//! cargo run --release -p dp-erm-cli --example typed_pass -- electricity FILE PASSES THREADS
//! ```
//!
//! * `dense-cd`: the LASSO of `benches/peers/cli_pass.py` (label `y`, lambda 0.01, step
//!   scale 1, no intercept), non-private CD with the `M_j` from the data;
//! * `dense-dp-cd`: the same at epsilon 1, delta 1/n^2, declared bound 5, clip 1;
//! * `electricity`: logistic + L2 (1e-5) DP-CD at epsilon 1, delta 1/n^2, declared bound
//!   1, step 1, clip 1, label `class` with UP = +1 (crates/dp-bench/data/electricity.csv).
//!
//! The seed is fixed (1), and a seed lets anyone replay the noise: this is a timing
//! harness, never a released model (a published model is fitted from OS entropy).

use dp_models::constants::Tagged;
use dp_models::io::{load_csv_data, CsvOptions, Target};
use dp_models::{Logistic, Loss, Squared, L1, L2};
use dp_optim::{CdParams, DpCdParams, Smoothness, Solver};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [what, file, passes, threads] = args.as_slice() else {
        return Err(
            "usage: typed_pass dense-cd|dense-dp-cd|electricity FILE PASSES THREADS".into(),
        );
    };
    let passes: u64 = passes.parse()?;
    let threads: usize = threads.parse()?;
    let fitted = match what.as_str() {
        "dense-cd" | "dense-dp-cd" => {
            let opts = CsvOptions {
                target: Target::Name("y".into()),
                ..CsvOptions::default()
            };
            let data = load_csv_data(file, &opts)?.dataset;
            let (n, p) = (data.n_samples(), data.n_features());
            let loss = Squared::half();
            let penalty = L1::new(0.01)?;
            if what == "dense-cd" {
                CdParams::new(loss, penalty)
                    .passes(passes)
                    .step_scale(1.0)
                    .smoothness(Smoothness::FromData)
                    .threads(threads)
                    .build()?
                    .fit_seeded(&data, 1)?
            } else {
                let c = loss.curvature_bound().ok_or("no curvature bound")?;
                DpCdParams::new(loss, penalty)
                    .epsilon(1.0)
                    .delta(1.0 / (n as f64 * n as f64))
                    .passes(passes)
                    .step_scale(1.0)
                    .clip(1.0)
                    .smoothness(Smoothness::Given(Tagged::public(vec![c * 25.0; p])))
                    .threads(threads)
                    .build()?
                    .fit_seeded(&data, 1)?
            }
        }
        "electricity" => {
            let opts = CsvOptions::classification(Target::Name("class".into()), "UP", "DOWN");
            let data = load_csv_data(file, &opts)?.dataset;
            let (n, p) = (data.n_samples(), data.n_features());
            let c = Logistic.curvature_bound().ok_or("no curvature bound")?;
            DpCdParams::new(Logistic, L2::new(1e-5)?)
                .epsilon(1.0)
                .delta(1.0 / (n as f64 * n as f64))
                .passes(passes)
                .step_scale(1.0)
                .clip(1.0)
                .smoothness(Smoothness::Given(Tagged::public(vec![c; p])))
                .threads(threads)
                .build()?
                .fit_seeded(&data, 1)?
        }
        other => return Err(format!("unknown problem {other:?}").into()),
    };
    println!(
        "{{\"solver_seconds\":{},\"passes\":{passes},\"threads\":{threads}}}",
        fitted.diagnostics.seconds
    );
    Ok(())
}
