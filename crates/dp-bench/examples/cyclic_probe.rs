//! Temporary probe (not committed).
use dp_bench::experiments::dp_cd::{load_problem, ProblemName};
use dp_models::objective::Objective;
use dp_models::{Design, Logistic, Squared, L1, L2};
fn main() {
    for name in [
        ProblemName::CaliforniaStd,
        ProblemName::CaliforniaRaw,
        ProblemName::ElectricityStd,
        ProblemName::ElectricityRaw,
    ] {
        let p = load_problem(name).unwrap();
        let x = p.data.x();
        let n = x.n_samples() as f64;
        let mut line = format!("{}:", name.as_str());
        for passes in [2, 5, 10, 20, 50] {
            let (mut w, mut z) = (vec![0.0; x.n_features()], vec![0.0; x.n_samples()]);
            match name {
                ProblemName::ElectricityStd | ProblemName::ElectricityRaw => {
                    let (l, pen) = (Logistic, L2::new(1e-5).unwrap());
                    let obj = Objective::new(&p.data, &l, &pen).unwrap();
                    let m: Vec<f64> = (0..x.n_features())
                        .map(|j| 0.25 * x.col_sq_norm(j) / n)
                        .collect();
                    for _ in 0..passes {
                        dp_models::reference::cd_pass(&obj, &m, &mut w, &mut z);
                    }
                }
                _ => {
                    let (l, pen) = (Squared::full(), L1::new(0.1).unwrap());
                    let obj = Objective::new(&p.data, &l, &pen).unwrap();
                    let m: Vec<f64> = (0..x.n_features())
                        .map(|j| 2.0 * x.col_sq_norm(j) / n)
                        .collect();
                    for _ in 0..passes {
                        dp_models::reference::cd_pass(&obj, &m, &mut w, &mut z);
                    }
                }
            }
            line += &format!(
                " {passes}:{:.2e}",
                (p.objective(&w) - p.objective_star) / p.objective_star
            );
        }
        println!("cyclic non-private {line}");
    }
}
