use super::*;
use dp_models::Design;
use proptest::prelude::*;

#[test]
fn california_shape_first_and_last_rows() {
    let d = california_named().unwrap();
    assert_eq!(d.name, "california");
    assert_eq!(d.feature_names, CALIFORNIA_FEATURES);
    assert_eq!(d.target_name, CALIFORNIA_TARGET);
    assert!(!d.stand_in);
    let ds = &d.dataset;
    assert_eq!((ds.n_samples(), ds.n_features()), (20_640, 8));
    // First line of the published file: 8.3252,41.0,6.984126984126984,1.0238095238095235,322.0,2.555555555555556,37.88,-122.23,4.526
    assert_eq!(
        ds.x().row(0),
        &[
            8.3252,
            41.0,
            6.984126984126984,
            1.0238095238095235,
            322.0,
            2.555555555555556,
            37.88,
            -122.23
        ]
    );
    assert_eq!(ds.y()[0], 4.526);
    // Column-major access agrees with the row-major copy.
    assert_eq!(ds.x().col(4)[0], 322.0);
    // Population is the largest raw feature (the "imbalanced" problem).
    let max_pop = ds.x().col(4).iter().cloned().fold(0.0, f64::max);
    assert_eq!(max_pop, 35_682.0);
    // MedHouseVal is capped at 5.00001 in the published data.
    let max_y = ds.y().iter().cloned().fold(0.0, f64::max);
    assert_eq!(max_y, 5.00001);
}

#[test]
fn electricity_shape_labels_and_ranges() {
    let d = electricity_named().unwrap();
    assert_eq!(d.feature_names, ELECTRICITY_FEATURES);
    let ds = &d.dataset;
    assert_eq!((ds.n_samples(), ds.n_features()), (45_312, 8));
    let up = ds.y().iter().filter(|&&v| v == 1.0).count();
    let down = ds.y().iter().filter(|&&v| v == -1.0).count();
    assert_eq!((up, down), (19_237, 26_075));
    // First row: 0,2,0,0.056443,0.439155,0.003467,0.422915,0.414912,UP
    assert_eq!(
        ds.x().row(0),
        &[0.0, 2.0, 0.0, 0.056443, 0.439155, 0.003467, 0.422915, 0.414912]
    );
    assert_eq!(ds.y()[0], 1.0);
    // Last row (no trailing newline in the file): 0.9158,7,1,0.050679,0.288753,0.003542,0.355256,0.23114,DOWN
    let last = ds.n_samples() - 1;
    assert_eq!(
        ds.x().row(last),
        &[0.9158, 7.0, 1.0, 0.050679, 0.288753, 0.003542, 0.355256, 0.23114]
    );
    assert_eq!(ds.y()[last], -1.0);
    // `day` is 1..7, every other column in [0, 1].
    for j in 0..8 {
        let (lo, hi) = if j == 1 { (1.0, 7.0) } else { (0.0, 1.0) };
        assert!(
            ds.x().col(j).iter().all(|&v| (lo..=hi).contains(&v)),
            "column {j}"
        );
    }
    ds.check_labels_for(&dp_models::Logistic).unwrap();
}

#[test]
fn heart_scale_shape_and_first_row() {
    let ds = heart_scale().unwrap();
    assert_eq!((ds.n_samples(), ds.n_features()), (270, 13));
    // +1 1:0.708333 2:1 3:1 4:-0.320755 5:-0.105023 6:-1 7:1 8:-0.419847 9:-1 10:-0.225806 12:1 13:-1
    assert_eq!(
        ds.x().row(0),
        &[
            0.708333, 1.0, 1.0, -0.320755, -0.105023, -1.0, 1.0, -0.419847, -1.0, -0.225806, 0.0,
            1.0, -1.0
        ]
    );
    assert_eq!(ds.y()[0], 1.0);
    assert!(ds.y().iter().all(|&v| v == 1.0 || v == -1.0));
    assert!(ds.x().col(0).iter().all(|v| (-1.0..=1.0).contains(v)));
}

#[test]
fn heart_scale_sparse_equals_dense() {
    let sparse = parse_libsvm(HEART_SCALE_TXT.as_bytes(), FeatureCount::Public(13)).unwrap();
    let dense = heart_scale().unwrap();
    assert_eq!(sparse.y(), dense.y());
    for i in 0..270 {
        let mut row = [0.0; 13];
        let (idx, val) = sparse.x().row(i);
        for (&j, &v) in idx.iter().zip(val) {
            row[j] = v;
        }
        assert_eq!(&row[..], dense.x().row(i), "row {i}");
    }
}

/// Standardise columns to mean 0 and (population) variance 1.
fn standardized(x: &DenseDesign) -> DenseDesign {
    let n = x.n_samples();
    let p = x.n_features();
    let mut cols = Vec::with_capacity(n * p);
    for j in 0..p {
        let c = x.col(j);
        let m = c.iter().sum::<f64>() / n as f64;
        let sd = (c.iter().map(|v| (v - m).powi(2)).sum::<f64>() / n as f64).sqrt();
        cols.extend(c.iter().map(|v| (v - m) / sd));
    }
    DenseDesign::from_col_major(n, p, &cols).unwrap()
}

#[test]
#[ignore = "prints the California LASSO support table for docs/datasets.md; run with --ignored --nocapture"]
fn california_lasso_support_table() {
    use crate::synthetic::tests::lasso_cd;
    let ds = california().unwrap();
    let raw = ds.x().clone();
    let std = standardized(&raw);
    let y = ds.y().to_vec();
    let ym = y.iter().sum::<f64>() / y.len() as f64;
    let yc: Vec<f64> = y.iter().map(|v| v - ym).collect();
    // lambda = 0.1 under (1/(2n))||.||^2 ("half"), and under (1/n)||.||^2 ("full"),
    // which is lambda = 0.05 in the half convention.
    for (xname, x) in [("raw", &raw), ("standardised", &std)] {
        for (yname, yy) in [("raw y", &y), ("centred y", &yc)] {
            for (conv, lam) in [("half", 0.1), ("full", 0.05)] {
                let (w, f, gap) = lasso_cd(x, yy, lam, 1e-10, 3_000);
                let f0 = yy.iter().map(|v| v * v).sum::<f64>() / (2.0 * yy.len() as f64);
                let nnz = w.iter().filter(|v| **v != 0.0).count();
                let support: Vec<&str> = w
                    .iter()
                    .zip(CALIFORNIA_FEATURES)
                    .filter(|(v, _)| **v != 0.0)
                    .map(|(_, n)| n)
                    .collect();
                println!(
                    "| {xname} | {yname} | {conv} | {nnz} | {} | {:.4} | {:.0e} |",
                    support.join(", "),
                    (f0 - f) / f,
                    gap / f
                );
            }
        }
    }
}

fn nips_err<T>(r: Result<T>) -> String {
    match r {
        Ok(_) => panic!("expected an error"),
        Err(e) => format!("{e:#}"),
    }
}

#[test]
fn nips2003_dense_and_sparse_parse() {
    let d = parse_nips2003_dense(b"1 2 3 \n4 5 6 \n", b"1\n-1\n").unwrap();
    assert_eq!((d.n_samples(), d.n_features()), (2, 3));
    assert_eq!(d.x().row(1), &[4.0, 5.0, 6.0]);
    assert_eq!(d.y(), &[1.0, -1.0]);
    let s = parse_nips2003_sparse(b"2 5 \r\n\n1\n", b"-1\n1\n1\n", Some(6)).unwrap();
    assert_eq!((s.n_samples(), s.n_features()), (3, 6));
    assert_eq!(s.x().row(0), (&[1usize, 4][..], &[1.0, 1.0][..]));
    assert_eq!(s.x().row(1).0.len(), 0);
    assert_eq!(s.x().col(0), (&[2usize][..], &[1.0][..]));
    let inferred = parse_nips2003_sparse(b"2 5\n1\n", b"1\n1\n", None).unwrap();
    assert_eq!(inferred.n_features(), 5);
    let (reduced, kept) = drop_empty_columns(&s).unwrap();
    assert_eq!(kept, vec![0, 1, 4]);
    assert_eq!(reduced.n_features(), 3);
    assert_eq!(reduced.x().row(0), (&[1usize, 2][..], &[1.0, 1.0][..]));
    assert_eq!(reduced.y(), s.y());
}

#[test]
fn nips2003_errors_name_line_and_reason() {
    let e = nips_err(parse_nips2003_dense(b"1 2\n3\n", b"1\n1\n"));
    assert!(e.contains("line 2") && e.contains("ragged"), "{e}");
    let e = nips_err(parse_nips2003_dense(b"1 x\n", b"1\n"));
    assert!(e.contains("line 1") && e.contains("not a number"), "{e}");
    let e = nips_err(parse_nips2003_dense(b"1 nan\n", b"1\n"));
    assert!(e.contains("not finite"), "{e}");
    let e = nips_err(parse_nips2003_dense(b"1 2\n", b"1\n-1\n"));
    assert!(e.contains("2 labels") && e.contains("1 rows"), "{e}");
    let e = nips_err(parse_nips2003_dense(b"\n\n", b"1\n"));
    assert!(e.contains("empty data"), "{e}");
    let e = nips_err(parse_nips2003_dense(b"1\n", b""));
    assert!(e.contains("empty labels"), "{e}");
    let e = nips_err(parse_nips2003_dense(b"1\n", b"1\nup\n"));
    assert!(
        e.contains("labels line 2") && e.contains("bad label"),
        "{e}"
    );
    let e = nips_err(parse_nips2003_sparse(b"3 2\n", b"1\n", None));
    assert!(e.contains("line 1") && e.contains("not increasing"), "{e}");
    let e = nips_err(parse_nips2003_sparse(b"1\n0\n", b"1\n1\n", None));
    assert!(e.contains("line 2") && e.contains("zero index"), "{e}");
    let e = nips_err(parse_nips2003_sparse(b"1 9\n", b"1\n", Some(5)));
    assert!(e.contains("exceeds n_features = 5"), "{e}");
    let e = nips_err(parse_nips2003_sparse(b"1 -9\n", b"1\n", None));
    assert!(e.contains("not a positive integer"), "{e}");
    let e = nips_err(parse_nips2003_sparse(b"", b"1\n", None));
    assert!(e.contains("empty data"), "{e}");
}

#[test]
fn nips2003_file_loaders() {
    let dir = std::env::temp_dir().join(format!("dp-bench-nips-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("m.data"), "1 2\n3 4\n").unwrap();
    std::fs::write(dir.join("m.labels"), "1\n-1\n").unwrap();
    let d = load_nips2003_dense(dir.join("m.data"), dir.join("m.labels")).unwrap();
    assert_eq!(d.n_samples(), 2);
    let s = load_nips2003_sparse(dir.join("m.data"), dir.join("m.labels"), None).unwrap();
    assert_eq!(s.n_features(), 4);
    let e = nips_err(load_nips2003_dense(
        dir.join("nope.data"),
        dir.join("m.labels"),
    ));
    assert!(e.contains("nope.data"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn nips2003_parsers_never_panic(
        data in proptest::collection::vec(any::<u8>(), 0..120),
        text in "[0-9 .\\-\n]{0,80}",
        labels in "[0-9 \\-+\n]{0,20}",
    ) {
        let _ = parse_nips2003_dense(&data, labels.as_bytes());
        let _ = parse_nips2003_sparse(&data, labels.as_bytes(), None);
        let _ = parse_nips2003_dense(text.as_bytes(), labels.as_bytes());
        let _ = parse_nips2003_sparse(text.as_bytes(), labels.as_bytes(), Some(3));
        let _ = parse_nips2003_labels(&data);
    }
}

#[test]
fn reexported_loaders_and_named_wrappers() {
    // The loaders are dp_models::io's; the wrappers name the dataset.
    let d = parse_csv(b"f,g,y\n1,2,3\n", &CsvOptions::default()).unwrap();
    assert_eq!((d.name.as_str(), d.target_name.as_str()), ("csv", "y"));
    assert_eq!(d.feature_names, ["f", "g"]);
    assert!(!d.stand_in);
    let dir = std::env::temp_dir().join(format!("dp-bench-data-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let csv_path = dir.join("toy.csv");
    std::fs::write(&csv_path, "f,y\n1,2\n3,4\n").unwrap();
    let d = load_csv_named(&csv_path, &CsvOptions::default()).unwrap();
    assert_eq!(d.name, "toy");
    assert_eq!(d.dataset.y(), &[2.0, 4.0]);
    std::fs::write(&csv_path, "f,y\n1,2\nx,4\n").unwrap();
    let e = load_csv_named(&csv_path, &CsvOptions::default()).unwrap_err();
    assert!(matches!(e, LoadError::Parse { .. }), "{e:?}");
    let e = e.to_string();
    assert!(
        e.contains("toy.csv, line 3, column \"f\" (index 0): \"x\""),
        "{e}"
    );
    // Through anyhow, as the rest of dp-bench uses them.
    let r: Result<_> =
        load_csv(dir.join("missing.csv"), &CsvOptions::default()).context("loading the toy file");
    assert!(format!("{:#}", r.unwrap_err()).contains("missing.csv"));
    let svm = dir.join("t.svm");
    std::fs::write(&svm, "1 3:1\n").unwrap();
    assert!(matches!(
        load(&svm, None, &CsvOptions::default(), FeatureCount::Public(4)).unwrap(),
        Loaded::Sparse(_)
    ));
    assert_eq!(Format::from_path(&svm).unwrap(), Format::Libsvm);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn breast_cancer_and_diabetes_shapes_labels_and_raw_scale() {
    let b = breast_cancer().unwrap();
    assert_eq!(b.name, "breast_cancer");
    assert_eq!(b.target_name, BREAST_CANCER_TARGET);
    let ds = &b.dataset;
    assert_eq!((ds.n_samples(), ds.n_features()), (569, 30));
    assert_eq!(b.feature_names[0], "mean_radius");
    // First line of scikit-learn's file: 17.99,10.38,122.8,1001,... label 0 = malignant.
    assert_eq!(&ds.x().row(0)[..4], &[17.99, 10.38, 122.8, 1001.0]);
    assert_eq!(ds.y()[0], -1.0);
    assert_eq!(ds.y().iter().filter(|&&v| v == 1.0).count(), 357);
    // Raw scale: worst_area reaches 4,254.
    let max_area = ds.x().col(23).iter().cloned().fold(0.0, f64::max);
    assert_eq!(max_area, 4254.0);

    let d = diabetes().unwrap();
    assert_eq!(
        d.feature_names,
        ["age", "sex", "bmi", "bp", "s1", "s2", "s3", "s4", "s5", "s6"]
    );
    let ds = &d.dataset;
    assert_eq!((ds.n_samples(), ds.n_features()), (442, 10));
    assert_eq!(ds.y()[0], 151.0);
    let (lo, hi) = ds
        .y()
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), &v| (a.min(v), b.max(v)));
    assert_eq!((lo, hi), (25.0, 346.0));
}
