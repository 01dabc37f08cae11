//! Golden fits: a seeded fit of every private solver, compared **bit for bit** with the
//! coefficients and the reported guarantee recorded from the code before the privacy
//! plumbing was redesigned (issue 26). A refactor of how releases are declared,
//! calibrated, charged and sampled must not move a single bit of any of them.
//!
//! The recorded values are in `tests/golden_fits.txt`, one line per fit: the f64 bits (hex)
//! of every coefficient, of the intercept, and of the guarantee's epsilon and delta, with
//! the algorithm's name, the iteration count, the neighbouring relation and whether the
//! guarantee is proven. A mismatch prints the recorded and the new line with the decoded
//! values side by side.
//!
//! Re-recording is a deliberate act (a change that is *meant* to move the bits, or a
//! platform whose libm rounds differently):
//!
//! ```text
//! GOLDEN_BLESS=1 cargo test -p dp-optim --test golden_fits
//! ```
//!
//! rewrites the file from the current code; review its diff before committing it.

use dp_models::constants::Tagged;
use dp_models::{Dataset, DenseDesign, Logistic, Squared, L1, L2};
use dp_optim::dp_gcd::{RnmCalibration, SelectionRule, Variant};
use dp_optim::select::{select_with_rng, SelectionParams};
use dp_optim::*;
use rand::SeedableRng;
use std::fmt::Write as _;
use std::path::PathBuf;

const SEED: u64 = 20_261_201;

/// Deterministic regression data (no RNG: the values do not depend on any crate's
/// sampler), features in [-1, 1].
fn regression(n: usize, p: usize) -> Dataset<DenseDesign> {
    let x: Vec<f64> = (0..n * p)
        .map(|k| ((k * 7919 % 1000) as f64 / 500.0) - 1.0)
        .collect();
    let y: Vec<f64> = (0..n)
        .map(|i| 0.8 * x[i * p] - 0.5 * x[i * p + 1] + 0.1 * ((i % 7) as f64 - 3.0) / 3.0)
        .collect();
    Dataset::new(DenseDesign::from_row_major(n, p, &x).unwrap(), y).unwrap()
}

/// The regression data with every row scaled to L2 norm at most 1 (DP-SCD, DP-FW).
fn normalised(n: usize, p: usize) -> Dataset<DenseDesign> {
    let d = regression(n, p);
    let mut rows: Vec<f64> = (0..n).flat_map(|i| d.x().row(i).to_vec()).collect();
    for row in rows.chunks_mut(p) {
        let norm = row.iter().map(|v| v * v).sum::<f64>().sqrt().max(1.0);
        row.iter_mut().for_each(|v| *v /= norm);
    }
    let y = d.y().iter().map(|v| v.clamp(-1.0, 1.0)).collect();
    Dataset::new(DenseDesign::from_row_major(n, p, &rows).unwrap(), y).unwrap()
}

/// Classification data (labels in {-1, +1}), offset `off` to make a validation set.
fn classification(n: usize, p: usize, off: usize) -> Dataset<DenseDesign> {
    let x: Vec<f64> = (0..n * p)
        .map(|k| (((k + off) * 7919 % 997) as f64 / 498.5) - 1.0)
        .collect();
    let y = (0..n)
        .map(|i| {
            if x[i * p] + 0.3 * x[i * p + 1] > 0.0 {
                1.0
            } else {
                -1.0
            }
        })
        .collect();
    Dataset::new(DenseDesign::from_row_major(n, p, &x).unwrap(), y).unwrap()
}

/// Sparse records: two numeric features, then a one-hot group of three (features 2..5):
/// at most three non-zeros per record.
fn one_hot(n: usize) -> Dataset<DenseDesign> {
    let p = 5;
    let mut x = vec![0.0; n * p];
    for i in 0..n {
        x[i * p] = ((i * 7919 % 1000) as f64 / 500.0) - 1.0;
        x[i * p + 1] = ((i * 104_729 % 997) as f64 / 498.5) - 1.0;
        x[i * p + 2 + i % 3] = 1.0;
    }
    let y = (0..n)
        .map(|i| 0.6 * x[i * p] - 0.4 * x[i * p + 1] + 0.3 * x[i * p + 2])
        .collect();
    Dataset::new(DenseDesign::from_row_major(n, p, &x).unwrap(), y).unwrap()
}

fn hex(v: f64) -> String {
    format!("{:016x}", v.to_bits())
}

/// One line: everything of a fit that the redesign must not move.
fn line(name: &str, model: &LinearModel) -> String {
    let g = model.guarantee().expect("a private fit has a guarantee");
    let coefficients: Vec<String> = model.coefficients.iter().map(|&v| hex(v)).collect();
    format!(
        "{name} algorithm={} iterations={} coefficients={} intercept={} epsilon={} delta={} \
         adjacency={:?} proven={}",
        model.algorithm,
        model.iterations,
        coefficients.join(","),
        model.intercept.map_or("none".to_string(), hex),
        hex(g.epsilon),
        hex(g.delta),
        g.adjacency,
        g.proven
    )
}

fn fit<S: Solver<DenseDesign>>(name: &str, solver: S, data: &Dataset<DenseDesign>) -> String {
    let fit = solver
        .fit_seeded(data, SEED)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    line(name, &fit.model)
}

fn lasso() -> DpCdParams<Squared, L1> {
    DpCdParams::new(Squared::full(), L1::new(0.01).unwrap())
        .epsilon(1.0)
        .delta(1e-6)
        .passes(3)
        .clip(1.0)
}

fn dp_cd() -> Vec<String> {
    let data = regression(200, 4);
    let public = || Smoothness::Given(Tagged::public(vec![2.0; 4]));
    let mut out = vec![
        fit(
            "dp-cd/exact",
            lasso()
                .accounting(Accounting::Exact)
                .smoothness(public())
                .build()
                .unwrap(),
            &data,
        ),
        fit(
            "dp-cd/paper",
            lasso()
                .accounting(Accounting::Paper)
                .smoothness(public())
                .build()
                .unwrap(),
            &data,
        ),
        fit(
            "dp-cd/non-private-constants",
            lasso().allow_non_private_constants(true).build().unwrap(),
            &data,
        ),
        fit(
            "dp-cd/private-mj",
            lasso()
                .smoothness(Smoothness::private(Tagged::public(vec![1.0; 4])))
                .build()
                .unwrap(),
            &data,
        ),
        fit(
            "dp-cd/private-bounded",
            lasso()
                .accounting(Accounting::Exact)
                .smoothness(Smoothness::private_bounded(None, Some(Tagged::public(2.0))))
                .build()
                .unwrap(),
            &data,
        ),
        fit(
            "dp-cd/adaptive-clipping",
            lasso()
                .smoothness(public())
                .adaptive_clipping(Some(AdaptiveClipping {
                    quantile: 0.9,
                    rounds: 5,
                    budget_fraction: 0.1,
                    range: (1e-4, 1e2),
                }))
                .build()
                .unwrap(),
            &data,
        ),
        fit(
            "dp-cd/add-remove",
            lasso()
                .smoothness(public())
                .adjacency(Adjacency::AddRemove)
                .public_n(200)
                .build()
                .unwrap(),
            &data,
        ),
    ];
    let sparse = one_hot(150);
    for (label, bound) in [
        ("at-most", RowSupport::AtMost(3)),
        ("one-hot", RowSupport::one_hot(vec![vec![2, 3, 4]])),
    ] {
        out.push(fit(
            &format!("dp-cd/row-support-{label}"),
            lasso()
                .smoothness(Smoothness::Given(Tagged::public(vec![2.0; 5])))
                .coordinate_order(CoordinateOrder::Permutation)
                .row_support(Some(bound))
                .build()
                .unwrap(),
            &sparse,
        ));
    }
    out
}

fn dp_gcd() -> Vec<String> {
    let data = regression(200, 4);
    let base = || {
        dp_gcd::DpGcdParams::new(Squared::half(), L1::new(0.01).unwrap())
            .epsilon(1.0)
            .delta(1e-6)
            .passes(4)
            .smoothness(Tagged::public(vec![1.0; 4]))
    };
    let mut out = Vec::new();
    for (label, variant) in [("laplace", Variant::Laplace), ("zcdp", Variant::Zcdp)] {
        for (rule_label, rule) in [("gs-r", SelectionRule::GsR), ("gs-s", SelectionRule::GsS)] {
            out.push(fit(
                &format!("dp-gcd/{label}/{rule_label}"),
                base().variant(variant).rule(rule).build().unwrap(),
                &data,
            ));
        }
    }
    out.push(fit(
        "dp-gcd/laplace/paper-rnm",
        base()
            .variant(Variant::Laplace)
            .rnm_calibration(RnmCalibration::Paper)
            .build()
            .unwrap(),
        &data,
    ));
    out.push(fit(
        "dp-gcd/zcdp/support-test",
        base()
            .variant(Variant::Zcdp)
            .support_test(0.2)
            .build()
            .unwrap(),
        &data,
    ));
    out.push(fit(
        "dp-gcd/laplace/private-mj",
        base()
            .smoothness(Smoothness::private(Tagged::public(vec![1.0; 4])))
            .build()
            .unwrap(),
        &data,
    ));
    out
}

fn dp_sgd() -> Vec<String> {
    let data = regression(200, 4);
    let base = |accounting| {
        DpSgdParams::new(Squared::full(), L1::new(0.01).unwrap())
            .epsilon(1.0)
            .delta(1e-6)
            .passes(2)
            .batch_size(20)
            .clip(1.0)
            .accounting(accounting)
    };
    vec![
        fit(
            "dp-sgd/exact",
            base(Accounting::Exact)
                .smoothness(GlobalSmoothness::Given(Tagged::public(2.0)))
                .build()
                .unwrap(),
            &data,
        ),
        fit(
            "dp-sgd/paper",
            base(Accounting::Paper)
                .smoothness(GlobalSmoothness::Given(Tagged::public(2.0)))
                .build()
                .unwrap(),
            &data,
        ),
        fit(
            "dp-sgd/private-beta",
            base(Accounting::Exact)
                .smoothness(GlobalSmoothness::private(Tagged::public(2.0)))
                .build()
                .unwrap(),
            &data,
        ),
        fit(
            "dp-sgd/add-remove",
            base(Accounting::Exact)
                .smoothness(GlobalSmoothness::Given(Tagged::public(2.0)))
                .adjacency(Adjacency::AddRemove)
                .public_n(200)
                .build()
                .unwrap(),
            &data,
        ),
    ]
}

fn dp_scd() -> Vec<String> {
    let data = normalised(200, 4);
    let base = |accounting| {
        DpScdParams::new(Squared::half(), L2::new(0.1).unwrap())
            .epsilon(1.0)
            .delta(1e-6)
            .passes(2)
            .batch_size(20)
            .clip(0.5)
            .accounting(accounting)
    };
    let mut out = Vec::new();
    for (label, accounting) in [("exact", Accounting::Exact), ("paper", Accounting::Paper)] {
        out.push(fit(
            &format!("dp-scd/{label}"),
            base(accounting).build().unwrap(),
            &data,
        ));
        out.push(fit(
            &format!("dp-scd/{label}/add-remove"),
            base(accounting)
                .adjacency(Adjacency::AddRemove)
                .public_n(200)
                .build()
                .unwrap(),
            &data,
        ));
    }
    out.push(fit(
        "dp-scd/paper/sampled-records",
        base(Accounting::Paper)
            .dual_noise(DualNoise::SampledRecords)
            .build()
            .unwrap(),
        &data,
    ));
    out
}

fn frank_wolfe() -> Vec<String> {
    let data = normalised(120, 6);
    vec![
        fit(
            "dp-fw",
            DpFwParams::new(Squared::half(), 1.0)
                .epsilon(1.0)
                .delta(1e-6)
                .iterations(20)
                .feature_bound(1.0)
                .label_bound(1.0)
                .build()
                .unwrap(),
            &data,
        ),
        fit(
            "dist-fw",
            DistDpFwParams::new(1.0)
                .epsilon(1.0)
                .delta(1e-6)
                .parties(2)
                .iterations(20)
                .sketch_dim(8)
                .feature_bound(1.0)
                .label_bound(1.0)
                .build()
                .unwrap(),
            &data,
        ),
        fit(
            "dist-fw/paper-nominal",
            DistDpFwParams::new(1.0)
                .epsilon(1.0)
                .delta(1e-6)
                .calibration(DistCalibration::PaperNominal)
                .parties(3)
                .tau(1)
                .iterations(15)
                .sketch_dim(6)
                .feature_bound(1.0)
                .label_bound(1.0)
                .build()
                .unwrap(),
            &data,
        ),
    ]
}

fn selection() -> Vec<String> {
    let (train, validation) = (classification(400, 2, 0), classification(200, 2, 5));
    let grid = vec![(2u64, 0.5), (5, 1.0), (10, 0.5)];
    let build =
        |&(passes, step): &(u64, f64), privacy| -> dp_optim::Result<Box<dyn Solver<DenseDesign>>> {
            Ok(Box::new(
                DpCdParams::new(Logistic, L2::new(1e-4)?)
                    .privacy(privacy)
                    .passes(passes)
                    .step_scale(step)
                    .clip(1.0)
                    .smoothness(Smoothness::Given(Tagged::public(vec![0.25; 2])))
                    .build()?,
            ))
        };
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(SEED);
    let chosen = select_with_rng(
        &SelectionParams::new(1.0, 1e-6),
        &grid,
        build,
        &train,
        &validation,
        &mut rng,
    )
    .unwrap();
    vec![format!(
        "{} choice={} noisy-score={}",
        line("select", &chosen.model),
        chosen.choice_index,
        hex(chosen.noisy_score)
    )]
}

fn current() -> Vec<String> {
    let mut out = Vec::new();
    out.extend(dp_cd());
    out.extend(dp_gcd());
    out.extend(dp_sgd());
    out.extend(dp_scd());
    out.extend(frank_wolfe());
    out.extend(selection());
    out
}

fn golden_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden_fits.txt")
}

/// Decodes the hex bits of a line back to numbers, for a readable mismatch message.
fn decoded(line: &str) -> String {
    let mut out = String::new();
    for field in line.split(' ') {
        match field.split_once('=') {
            Some((key, value))
                if value
                    .split(',')
                    .all(|v| v.len() == 16 && v.bytes().all(|b| b.is_ascii_hexdigit())) =>
            {
                let values: Vec<String> = value
                    .split(',')
                    .map(|v| format!("{:e}", f64::from_bits(u64::from_str_radix(v, 16).unwrap())))
                    .collect();
                let _ = write!(out, "{key}=[{}] ", values.join(", "));
            }
            _ => {
                let _ = write!(out, "{field} ");
            }
        }
    }
    out
}

#[test]
fn seeded_fits_of_every_private_solver_are_bit_identical_to_the_recorded_ones() {
    let now = current();
    let path = golden_path();
    if std::env::var_os("GOLDEN_BLESS").is_some() {
        let mut text = String::from(
            "# Golden fits (tests/golden_fits.rs): f64 bits in hex. Re-record with\n\
             # GOLDEN_BLESS=1 cargo test -p dp-optim --test golden_fits\n",
        );
        for l in &now {
            text.push_str(l);
            text.push('\n');
        }
        std::fs::write(&path, text).unwrap();
        return;
    }
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (record it with GOLDEN_BLESS=1)", path.display()));
    let recorded: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .collect();
    let name = |l: &str| l.split(' ').next().unwrap_or("").to_string();
    assert_eq!(
        recorded.iter().map(|l| name(l)).collect::<Vec<_>>(),
        now.iter().map(|l| name(l)).collect::<Vec<_>>(),
        "the set of golden fits changed (record it with GOLDEN_BLESS=1 if intended)"
    );
    let mut failures = Vec::new();
    for (want, got) in recorded.iter().zip(&now) {
        if *want != got.as_str() {
            failures.push(format!(
                "recorded: {}\n     now: {}",
                decoded(want),
                decoded(got)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} seeded fits moved:\n{}",
        failures.len(),
        now.len(),
        failures.join("\n")
    );
}

/// The comparison can fail: a fit with one more pass differs in its bits.
#[test]
fn the_comparison_sees_a_changed_fit() {
    let data = regression(200, 4);
    let a = fit(
        "x",
        lasso()
            .smoothness(Smoothness::Given(Tagged::public(vec![2.0; 4])))
            .build()
            .unwrap(),
        &data,
    );
    let b = fit(
        "x",
        lasso()
            .passes(4)
            .smoothness(Smoothness::Given(Tagged::public(vec![2.0; 4])))
            .build()
            .unwrap(),
        &data,
    );
    assert_ne!(a, b);
    assert_eq!(
        a,
        fit(
            "x",
            lasso()
                .smoothness(Smoothness::Given(Tagged::public(vec![2.0; 4])))
                .build()
                .unwrap(),
            &data,
        )
    );
}
