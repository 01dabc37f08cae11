use super::*;

/// Cyclic coordinate descent for `(1/(2n))||Xw - y||^2 + lambda ||w||_1`, stopped when
/// the duality gap is below `tol * F(w)` or after `max_sweeps` sweeps. Test-only
/// calibration helper (the project's certified reference solver lives in `dp-models`).
/// Returns `(w, F(w), gap)`; callers check the gap.
pub(crate) fn lasso_cd(
    x: &DenseDesign,
    y: &[f64],
    lambda: f64,
    tol: f64,
    max_sweeps: usize,
) -> (Vec<f64>, f64, f64) {
    let n = x.n_samples();
    let p = x.n_features();
    let nf = n as f64;
    let sq: Vec<f64> = (0..p).map(|j| x.col_sq_norm(j) / nf).collect();
    let mut w = vec![0.0; p];
    let mut r: Vec<f64> = y.to_vec(); // r = y - X w
    let mut xtr = vec![0.0; p];
    let mut result = (Vec::new(), f64::NAN, f64::INFINITY);
    for _sweep in 0..max_sweeps {
        for j in 0..p {
            let col = x.col(j);
            let g: f64 = col.iter().zip(&r).map(|(a, b)| a * b).sum::<f64>() / nf;
            let v = w[j] + g / sq[j];
            let t = lambda / sq[j];
            let new = v.signum() * (v.abs() - t).max(0.0);
            let delta = new - w[j];
            if delta != 0.0 {
                for (ri, a) in r.iter_mut().zip(col) {
                    *ri -= delta * a;
                }
                w[j] = new;
            }
        }
        // Duality gap with the rescaled residual as dual point.
        x.matvec_t(&r, &mut xtr);
        let dual_norm = xtr.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let s = if dual_norm > nf * lambda {
            nf * lambda / dual_norm
        } else {
            1.0
        };
        let rr: f64 = r.iter().map(|v| v * v).sum();
        let primal = rr / (2.0 * nf) + lambda * w.iter().map(|v| v.abs()).sum::<f64>();
        // D(nu) = (1/2n)(||y||^2 - ||y - nu||^2), nu = s r.
        let yy: f64 = y.iter().map(|v| v * v).sum();
        let y_minus_nu: f64 = y.iter().zip(&r).map(|(a, b)| (a - s * b).powi(2)).sum();
        let dual = (yy - y_minus_nu) / (2.0 * nf);
        let gap = primal - dual;
        result = (w.clone(), primal, gap);
        if gap <= tol * primal {
            break;
        }
    }
    result
}

fn plateau_and_support(s: &Synthetic<DenseDesign>, lambda: f64) -> (f64, usize, f64) {
    let ds = s.dataset();
    let (w, f_star, gap) = lasso_cd(ds.x(), ds.y(), lambda, 1e-12, 10_000);
    let n = ds.n_samples() as f64;
    let f0 = ds.y().iter().map(|v| v * v).sum::<f64>() / (2.0 * n);
    let nnz = w.iter().filter(|v| **v != 0.0).count();
    ((f0 - f_star) / f_star, nnz, gap / f_star)
}

fn bits(d: &DenseDesign) -> Vec<u64> {
    (0..d.n_features())
        .flat_map(|j| d.col(j).iter().map(|v| v.to_bits()).collect::<Vec<_>>())
        .collect()
}

fn label_bits(y: &[f64]) -> Vec<u64> {
    y.iter().map(|v| v.to_bits()).collect()
}

#[test]
fn square_plateau_and_support_calibration() {
    // The papers' targets at lambda = 30: (F(0) - F*)/F* = 0.7551 and ||w*||_0 = 7.
    let s = square(SQUARE_SEED).unwrap();
    let (plateau, nnz, rel_gap) = plateau_and_support(&s, SQUARE_LAMBDA);
    assert!(rel_gap <= 1e-12, "solver gap {rel_gap}");
    assert!((plateau - 0.7551).abs() < 1e-3, "plateau {plateau}");
    assert_eq!(nnz, 7, "support size");
}

#[test]
#[ignore = "prints the calibration table for docs/datasets.md; run with --ignored --nocapture"]
fn square_calibration_table() {
    // Per seed: plateau and support at lambda = 30, and the lambda that puts the plateau
    // at 0.7551 exactly (bisection on log lambda; the plateau decreases in lambda).
    for seed in 0..8u64 {
        let s = square(seed).unwrap();
        let (plateau, nnz, gap) = plateau_and_support(&s, SQUARE_LAMBDA);
        let (mut lo, mut hi) = (1.0f64, 300.0f64);
        for _ in 0..40 {
            let mid = (lo * hi).sqrt();
            if plateau_and_support(&s, mid).0 > 0.7551 {
                lo = mid
            } else {
                hi = mid
            }
        }
        let (_, k_pinned, _) = plateau_and_support(&s, lo);
        println!("| {seed} | {plateau:.4} | {nnz} | {lo:.3} | {k_pinned} | {gap:.0e} |");
    }
}

#[test]
fn square_coefficients_are_the_lognormal_deciles() {
    // 43.47 exp(0.75 Phi^{-1}((m - 0.5)/10)), computed independently with Python's
    // statistics.NormalDist().inv_cdf.
    let expected = [
        12.659789947922285,
        19.98028431062864,
        26.211643812175602,
        32.55987477645672,
        39.56025825267215,
        47.766141664971606,
        58.035877378937435,
        72.09165947548244,
        94.57527583803166,
        149.2632111412026,
    ];
    let s = square(3).unwrap();
    let w = s.w_true.as_ref().unwrap();
    let mut nz: Vec<f64> = w.iter().cloned().filter(|v| *v != 0.0).collect();
    nz.sort_by(f64::total_cmp);
    assert_eq!(nz.len(), 10);
    for (a, b) in nz.iter().zip(expected) {
        assert!((a - b).abs() <= 1e-9 * b, "{a} vs {b}");
    }
    assert_eq!(s.relevant_features.len(), 10);
    for &j in &s.relevant_features {
        assert!(w[j] != 0.0);
    }
}

#[test]
fn generators_reproduce_bit_for_bit_and_depend_on_the_seed() {
    let a = log1(7).unwrap();
    let b = log1(7).unwrap();
    let c = log1(8).unwrap();
    assert_eq!(bits(a.dataset().x()), bits(b.dataset().x()));
    assert_eq!(label_bits(a.dataset().y()), label_bits(b.dataset().y()));
    assert_ne!(bits(a.dataset().x()), bits(c.dataset().x()));

    let a = madelon_like(1, true).unwrap();
    let b = madelon_like(1, true).unwrap();
    assert_eq!(bits(a.dataset().x()), bits(b.dataset().x()));
    assert_eq!(label_bits(a.dataset().y()), label_bits(b.dataset().y()));
    assert_ne!(
        bits(a.dataset().x()),
        bits(madelon_like(2, true).unwrap().dataset().x())
    );

    let a = mtp_like(5).unwrap();
    let b = mtp_like(5).unwrap();
    assert_eq!(bits(a.dataset().x()), bits(b.dataset().x()));
    assert_eq!(label_bits(a.dataset().y()), label_bits(b.dataset().y()));

    let a = dorothea_like(9).unwrap();
    let b = dorothea_like(9).unwrap();
    assert_eq!(a.dataset(), b.dataset());
    let small = DorotheaParams {
        n: 50,
        p: 300,
        density: 0.05,
        n_positive: 5,
        n_relevant: 10,
        ..DOROTHEA
    };
    assert_ne!(
        dorothea_like_with(&small, 1).unwrap().dataset(),
        dorothea_like_with(&small, 2).unwrap().dataset()
    );
}

#[test]
fn log_problems_shapes_and_distributions() {
    for (s, sigma) in [(log1(0).unwrap(), 1.0f64), (log2(0).unwrap(), 2.0)] {
        let ds = s.dataset();
        assert_eq!((ds.n_samples(), ds.n_features()), (1000, 100));
        assert!(!s.data.stand_in);
        ds.check_labels_for(&dp_models::Logistic).unwrap();
        let w = s.w_true.as_ref().unwrap();
        assert!(w.iter().all(|v| *v > 0.0));
        // log w ~ N(0, sigma^2): mean within 5 standard errors, variance within 30 %.
        let logs: Vec<f64> = w.iter().map(|v| v.ln()).collect();
        let m = logs.iter().sum::<f64>() / 100.0;
        let var = logs.iter().map(|v| (v - m).powi(2)).sum::<f64>() / 99.0;
        assert!(m.abs() < 5.0 * sigma / 10.0, "mean {m}");
        assert!((var / (sigma * sigma) - 1.0).abs() < 0.3, "var {var}");
        // X entries ~ N(0, 1): 1e5 draws.
        let all: Vec<f64> = (0..100).flat_map(|j| ds.x().col(j).to_vec()).collect();
        let mean = all.iter().sum::<f64>() / all.len() as f64;
        let v = all.iter().map(|a| (a - mean).powi(2)).sum::<f64>() / all.len() as f64;
        assert!(mean.abs() < 5.0 / (all.len() as f64).sqrt(), "mean {mean}");
        assert!((v - 1.0).abs() < 0.02, "variance {v}");
        // Labels are the signs of X w + e: with positive weights the positive class
        // dominates neither heavily nor not at all.
        let pos = ds.y().iter().filter(|v| **v > 0.0).count();
        assert!((300..=700).contains(&pos), "{pos} positives");
    }
}

#[test]
fn mtp_like_is_a_labelled_stand_in() {
    let s = mtp_like(0).unwrap();
    assert_eq!(s.data.name, "mtp-like");
    assert!(s.data.stand_in);
    let ds = s.dataset();
    assert_eq!((ds.n_samples(), ds.n_features()), (4450, 202));
    // y = X w + e exactly, with e ~ N(0, 1): the residual variance is about 1.
    let w = s.w_true.as_ref().unwrap();
    let mut z = vec![0.0; 4450];
    ds.x().matvec(w, &mut z);
    let var = z
        .iter()
        .zip(ds.y())
        .map(|(a, b)| (b - a).powi(2))
        .sum::<f64>()
        / 4450.0;
    assert!((var - 1.0).abs() < 0.1, "noise variance {var}");
}

#[test]
fn make_classification_structure_without_shuffle() {
    let params = ClassificationParams {
        n_samples: 3200,
        n_features: 30,
        n_informative: 5,
        n_redundant: 4,
        n_repeated: 2,
        n_clusters_per_class: 16,
        flip_y: 0.0,
        shuffle: false,
        ..ClassificationParams::default()
    };
    let c = make_classification(&params, 11).unwrap();
    assert_eq!(c.useful_features, (0..11).collect::<Vec<_>>());
    // 32 clusters of 100 rows in order, class k % 2.
    let mut signs = std::collections::BTreeSet::new();
    for k in 0..32 {
        let rows = k * 100..(k + 1) * 100;
        assert!(rows.clone().all(|i| c.classes[i] == k % 2));
        // X_k = Z A + centroid with E[Z] = 0: the cluster mean is near a vertex (+-1).
        let mut pattern = 0u32;
        for j in 0..5 {
            let m = rows.clone().map(|i| c.x.row(i)[j]).sum::<f64>() / 100.0;
            assert!(
                (m.abs() - 1.0).abs() < 0.6,
                "cluster {k} column {j} mean {m}"
            );
            pattern = pattern * 2 + u32::from(m > 0.0);
        }
        signs.insert(pattern);
    }
    assert_eq!(signs.len(), 32, "clusters sit on distinct vertices");
    // Redundant columns are exact linear combinations of the informative ones: the
    // 9 useful non-repeated columns have rank 5 (checked through a least-squares fit of
    // column 5 on columns 0..5 with a tiny residual).
    let x5 = DenseDesign::from_row_major(
        3200,
        5,
        &(0..3200)
            .flat_map(|i| c.x.row(i)[..5].to_vec())
            .collect::<Vec<_>>(),
    )
    .unwrap();
    let target: Vec<f64> = (0..3200).map(|i| c.x.row(i)[5]).collect();
    let (_, f, _) = lasso_cd(&x5, &target, 1e-12, 1e-14, 10_000);
    assert!(f < 1e-8, "redundant column not in the span: {f}");
    // Repeated columns copy a useful one.
    for j in 9..11 {
        assert!((0..9).any(|src| (0..3200).all(|i| c.x.row(i)[j] == c.x.row(i)[src])));
    }
    // Noise columns are standard normal.
    let noise: Vec<f64> = (0..3200).flat_map(|i| c.x.row(i)[11..].to_vec()).collect();
    let mean = noise.iter().sum::<f64>() / noise.len() as f64;
    let var = noise.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / noise.len() as f64;
    assert!(
        mean.abs() < 0.01 && (var - 1.0).abs() < 0.03,
        "{mean} {var}"
    );
}

#[test]
fn madelon_like_shape_balance_and_intercept() {
    let s = madelon_like(0, true).unwrap();
    assert_eq!(s.data.name, "madelon-like");
    assert!(s.data.stand_in);
    let ds = s.dataset();
    assert_eq!((ds.n_samples(), ds.n_features()), (2600, 501));
    assert!(ds.x().col(500).iter().all(|v| *v == 1.0));
    assert_eq!(s.data.feature_names[500], "intercept");
    ds.check_labels_for(&dp_models::Logistic).unwrap();
    let pos = ds.y().iter().filter(|v| **v > 0.0).count();
    // 1300 per class before the 1 % flips; a flip changes the class half the time.
    assert!((1260..=1340).contains(&pos), "{pos} positives");
    assert_eq!(s.relevant_features.len(), 20);
    let no_icpt = madelon_like(0, false).unwrap();
    assert_eq!(no_icpt.dataset().n_features(), 500);
    assert_eq!(no_icpt.dataset().x().col(7), ds.x().col(7));
}

#[test]
fn dorothea_like_shape_density_balance() {
    let s = dorothea_like(0).unwrap();
    assert_eq!(s.data.name, "dorothea-like");
    assert!(s.data.stand_in);
    let ds = s.dataset();
    assert_eq!((ds.n_samples(), ds.n_features()), (800, 88_119));
    let density = ds.x().nnz() as f64 / (800.0 * 88_119.0);
    assert!((0.0085..=0.0095).contains(&density), "density {density}");
    assert!((0..88_119).all(|j| ds.x().col_nnz(j) >= 1));
    let (_, vals) = ds.x().col(0);
    assert!(vals.iter().all(|v| *v == 1.0));
    assert!((0..88_119).all(|j| ds.x().col(j).1.iter().all(|v| *v == 1.0)));
    let pos = ds.y().iter().filter(|v| **v > 0.0).count();
    assert_eq!(pos, 78);
    ds.check_labels_for(&dp_models::Logistic).unwrap();
}

#[test]
fn bad_parameters_are_errors() {
    let bad = [
        LinearParams { n: 0, ..LOG1 },
        LinearParams {
            support: Support::Random { k: 101 },
            ..LOG1
        },
        LinearParams {
            noise_std: f64::NAN,
            ..LOG1
        },
        LinearParams {
            coefficients: Coefficients::Normal { std: -1.0 },
            ..LOG1
        },
    ];
    for p in bad {
        assert!(linear(&p, 0, "x", false).is_err(), "{p:?}");
    }
    let e = make_classification(
        &ClassificationParams {
            n_informative: 3,
            n_clusters_per_class: 8,
            ..ClassificationParams::default()
        },
        0,
    )
    .unwrap_err();
    assert!(e.to_string().contains("2^n_informative"), "{e}");
    assert!(make_classification(
        &ClassificationParams {
            n_redundant: 30,
            ..ClassificationParams::default()
        },
        0
    )
    .is_err());
    assert!(make_classification(
        &ClassificationParams {
            flip_y: 2.0,
            ..ClassificationParams::default()
        },
        0
    )
    .is_err());
    assert!(dorothea_like_with(
        &DorotheaParams {
            n_positive: 10_000,
            ..DOROTHEA
        },
        0
    )
    .is_err());
}

/// Proximal coordinate descent for `(1/n) sum log(1 + exp(-y_i x_i^T w)) + lambda ||w||_1`
/// with steps `1/M_j`, `M_j = ||x_j||^2/(4n)`; stops when the largest KKT violation is
/// below `tol` or after `max_sweeps`. Test-only. Returns `(w, F(w), F(0), kkt)`.
pub(crate) fn logistic_l1_cd<D: Design>(
    x: &D,
    y: &[f64],
    lambda: f64,
    tol: f64,
    max_sweeps: usize,
) -> (Vec<f64>, f64, f64, f64) {
    let n = x.n_samples();
    let p = x.n_features();
    let nf = n as f64;
    let m: Vec<f64> = (0..p).map(|j| x.col_sq_norm(j) / (4.0 * nf)).collect();
    let mut w = vec![0.0f64; p];
    let mut z = vec![0.0f64; n];
    let dloss = |zi: f64, yi: f64| -yi / (1.0 + (yi * zi).exp());
    let mut kkt = f64::INFINITY;
    for _ in 0..max_sweeps {
        kkt = 0.0f64;
        for j in 0..p {
            if m[j] == 0.0 {
                continue;
            }
            let mut g = 0.0;
            x.for_each_in_col(j, |i, v| g += v * dloss(z[i], y[i]));
            g /= nf;
            let viol = if w[j] != 0.0 {
                (g + lambda * w[j].signum()).abs()
            } else {
                (g.abs() - lambda).max(0.0)
            };
            kkt = kkt.max(viol);
            let v = w[j] - g / m[j];
            let new = v.signum() * (v.abs() - lambda / m[j]).max(0.0);
            let delta = new - w[j];
            if delta != 0.0 {
                x.col_axpy(j, delta, &mut z);
                w[j] = new;
            }
        }
        if kkt < tol {
            break;
        }
    }
    let loss = |z: &[f64]| {
        z.iter()
            .zip(y)
            .map(|(zi, yi)| (-(yi * zi)).exp().ln_1p())
            .sum::<f64>()
            / nf
    };
    let f = loss(&z) + lambda * w.iter().map(|v| v.abs()).sum::<f64>();
    let f0 = loss(&vec![0.0; n]);
    (w, f, f0, kkt)
}

fn standardized_with_intercept(x: &DenseDesign, intercept_col: Option<usize>) -> DenseDesign {
    let n = x.n_samples();
    let p = x.n_features();
    let mut cols = Vec::with_capacity(n * p);
    for j in 0..p {
        let c = x.col(j);
        if Some(j) == intercept_col {
            cols.extend_from_slice(c);
            continue;
        }
        let mean = c.iter().sum::<f64>() / n as f64;
        let sd = (c.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n as f64).sqrt();
        cols.extend(c.iter().map(|v| (v - mean) / sd));
    }
    DenseDesign::from_col_major(n, p, &cols).unwrap()
}

#[test]
#[ignore = "prints the logistic-L1 support table for docs/datasets.md; run with --ignored --nocapture"]
fn logistic_l1_support_table() {
    for seed in [0u64, 1] {
        for intercept in [true, false] {
            let s = madelon_like(seed, intercept).unwrap();
            let ds = s.dataset();
            let icpt = intercept.then_some(500);
            for (prep, x) in [
                ("raw", ds.x().clone()),
                ("standardised", standardized_with_intercept(ds.x(), icpt)),
            ] {
                let (w, f, f0, kkt) = logistic_l1_cd(&x, ds.y(), 0.05, 1e-9, 5_000);
                let nnz = w.iter().filter(|v| **v != 0.0).count();
                let on_useful = w
                    .iter()
                    .enumerate()
                    .filter(|(j, v)| **v != 0.0 && s.relevant_features.contains(j))
                    .count();
                println!(
                    "| madelon-like seed {seed} | intercept {intercept} | {prep} | {nnz} ({on_useful} useful) | f* {f:.4} | plateau {:.4} | kkt {kkt:.0e} |",
                    (f0 - f) / f
                );
            }
        }
    }
    for seed in [0u64, 1, 2, 3] {
        let s = dorothea_like(seed).unwrap();
        let ds = s.dataset();
        let (w, f, f0, kkt) = logistic_l1_cd(ds.x(), ds.y(), 0.01, 1e-9, 5_000);
        let nnz = w.iter().filter(|v| **v != 0.0).count();
        println!(
            "| dorothea-like seed {seed} | - | binary | {nnz} | f* {f:.4} | plateau {:.4} | kkt {kkt:.0e} |",
            (f0 - f) / f
        );
    }
}
