//! Diagnostic for `docs/reproduction-log.md`: relative error of **non-private cyclic** proximal CD
//! (`dp_models::reference::cd_pass`, step `1/M_j`, from `w = 0`) after 2..50 passes on the
//! DP-CD experiment's real-data problems. Compare with the paper's *private* DP-CD (Table 2)
//! and with our randomized CD baseline in the generated report.
//!
//! `cargo run --release -p dp-bench --example cyclic_cd`

use dp_bench::experiments::dp_cd::{load_problem, Model, ProblemName};
use dp_models::objective::Objective;
use dp_models::reference::cd_pass;
use dp_models::{Dataset, DenseDesign, Design, Logistic, Loss, Penalty, Squared, L1, L2};

fn cyclic<L: Loss, P: Penalty>(
    d: &Dataset<DenseDesign>,
    l: &L,
    pen: &P,
    passes: usize,
) -> anyhow::Result<Vec<f64>> {
    let x = d.x();
    let n = x.n_samples() as f64;
    let c = l.curvature_bound().unwrap_or(1.0);
    let m: Vec<f64> = (0..x.n_features())
        .map(|j| c * x.col_sq_norm(j) / n)
        .collect();
    let obj = Objective::new(d, l, pen)?;
    let (mut w, mut z) = (vec![0.0; x.n_features()], vec![0.0; x.n_samples()]);
    for _ in 0..passes {
        cd_pass(&obj, &m, &mut w, &mut z);
    }
    Ok(w)
}

fn main() -> anyhow::Result<()> {
    for name in [
        ProblemName::ElectricityRaw,
        ProblemName::ElectricityStd,
        ProblemName::CaliforniaRaw,
        ProblemName::CaliforniaStd,
    ] {
        let p = load_problem(name)?;
        let mut line = format!("{:16}", name.as_str());
        for passes in [2, 5, 10, 20, 50] {
            let w = match p.model {
                Model::Lasso { lambda } => {
                    cyclic(&p.data, &Squared::full(), &L1::new(lambda)?, passes)?
                }
                Model::LogisticL2 { lambda } => {
                    cyclic(&p.data, &Logistic, &L2::new(lambda)?, passes)?
                }
            };
            line += &format!(
                " {passes:>2} passes: {:.2e}",
                (p.objective(&w) - p.objective_star) / p.objective_star
            );
        }
        println!("{line}");
    }
    Ok(())
}
