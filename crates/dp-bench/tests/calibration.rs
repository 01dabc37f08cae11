//! The calibration claims of `docs/datasets.md`, re-checked with the project's certified
//! reference solver (`dp_models::reference::solve`), independently of the test-only
//! coordinate-descent helpers the calibration was first done with.

use dp_bench::data::california;
use dp_bench::synthetic::{square, SQUARE_LAMBDA, SQUARE_SEED};
use dp_models::{preprocess, solve, Dataset, Objective, ReferenceOptions, Squared, L1};

fn lasso_plateau_and_support<D: dp_models::Design>(
    ds: &Dataset<D>,
    loss: &Squared,
    lambda: f64,
) -> (f64, usize) {
    let pen = L1::new(lambda).unwrap();
    let obj = Objective::new(ds, loss, &pen).unwrap();
    let opts = ReferenceOptions {
        tol: 1e-10,
        ..ReferenceOptions::default()
    };
    let sol = solve(&obj, &opts).unwrap();
    let f0 = obj.value(&vec![0.0; ds.n_features()]).unwrap();
    let nnz = sol.w.iter().filter(|v| **v != 0.0).count();
    ((f0 - sol.objective) / sol.objective, nnz)
}

#[test]
fn square_canonical_instance_hits_the_papers_plateau_and_support() {
    let s = square(SQUARE_SEED).unwrap();
    let (plateau, nnz) = lasso_plateau_and_support(s.dataset(), &Squared::half(), SQUARE_LAMBDA);
    assert!((plateau - 0.7551).abs() < 1e-3, "plateau {plateau}");
    assert_eq!(nnz, 7);
    // The DP-CD paper's loss without the 1/2: the same problem at lambda = 60.
    let (plateau_full, nnz_full) =
        lasso_plateau_and_support(s.dataset(), &Squared::full(), 2.0 * SQUARE_LAMBDA);
    assert!(
        (plateau_full - plateau).abs() < 1e-6,
        "{plateau_full} vs {plateau}"
    );
    assert_eq!(nnz_full, 7);
}

#[test]
fn california_standardised_lasso_has_three_nonzeros_at_lambda_0_1() {
    // DP-GCD Table 3: ||w*||_0 = 3 at LASSO lambda = 0.1.
    let ds = california().unwrap();
    let (x, _) = preprocess::standardize(ds.x()).unwrap();
    let std = Dataset::new(x, ds.y().to_vec()).unwrap();
    let (plateau, nnz) = lasso_plateau_and_support(&std, &Squared::half(), 0.1);
    assert_eq!(nnz, 3);
    assert!((plateau - 0.0963).abs() < 1e-3, "plateau {plateau}");
}
