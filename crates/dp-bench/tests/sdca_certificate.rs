//! SDCA's duality gap certifies its optimum: on the DP-SCD experiment's Adult ridge
//! problem (MaxAbs scaling, unit rows, centred labels, `lambda = 1e-4`), the gap SDCA
//! reports falls below `1e-8` relative, and its objective agrees to that accuracy with
//! the independent certified reference solver that `cargo xtask optimum` runs.

use dp_bench::experiments::dp_scd::{load_problem, App, Data, Settings, LAMBDA};
use dp_bench::experiments::Profile;
use dp_models::reference::{solve, ReferenceOptions};
use dp_models::{Objective, Squared, L2};
use dp_optim::{SdcaParams, Solver};

#[test]
fn sdca_gap_certifies_adult_ridge_against_the_reference_optimum() {
    let settings = Settings::for_profile(Profile::Quick);
    let problem = load_problem(Data::Adult, App::Ridge, &settings, 7).unwrap();
    let data = &problem.fit;
    let fit = SdcaParams::new(Squared::half(), L2::new(LAMBDA).unwrap())
        .passes(500)
        .tolerance(1e-9)
        .build()
        .unwrap()
        .fit_seeded(data, 1)
        .unwrap();
    let gap = fit.diagnostics.duality_gap.unwrap();
    let (loss, penalty) = (Squared::half(), L2::new(LAMBDA).unwrap());
    let obj = Objective::new(data, &loss, &penalty).unwrap();
    let primal = obj.value(&fit.model.coefficients).unwrap();
    assert!(
        gap >= 0.0 && gap <= 1e-8 * primal.abs(),
        "gap {gap} at P = {primal}"
    );
    let reference = solve(
        &obj,
        &ReferenceOptions {
            tol: 1e-11,
            ..ReferenceOptions::default()
        },
    )
    .unwrap();
    let rel = (primal - reference.objective) / reference.objective.abs();
    // The gap bounds P(w) - F*, so SDCA can be above the reference by at most the gap,
    // and below it only by the reference's own certified slack.
    assert!(
        (-1e-10..=1e-8).contains(&rel),
        "SDCA {primal} vs reference {} (relative {rel:e})",
        reference.objective
    );
}
