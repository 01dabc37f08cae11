//! `dp-erm fit --feature-bound auto / --target-bound auto|Y`: the fit goes through the
//! library pipeline (`dp_erm::Pipeline`), the private bounds are charged with the fit,
//! and `predict` takes the raw CSV. Run on the raw (unscaled) embedded data sets.

mod common;

use std::path::Path;

use common::{data, field, position, run, s, scratch};

#[test]
fn regression_with_private_feature_and_target_ranges_predicts_raw_data() {
    let dir = scratch("pipeline", "reg");
    let model = dir.join("model.json");
    let preds = dir.join("pred.csv");
    let csv = data("diabetes.csv");
    let (ok, out, err) = run(&[
        "fit",
        "--data",
        &csv,
        "--target",
        "target",
        "--loss",
        "squared",
        "--algorithm",
        "dp-cd",
        "--epsilon",
        "1",
        "--delta",
        "1e-5",
        "--feature-bound",
        "auto",
        "--target-bound",
        "auto",
        "--test-fraction",
        "0.2",
        "--seed",
        "1",
        "--model-out",
        s(&model),
    ]);
    assert!(ok, "{err}\n{out}");
    // The guarantee composes the bounds and the fit, within the request.
    let eps = field(&out, "epsilon").unwrap();
    let delta = field(&out, "delta").unwrap();
    let (be, fe) = (
        field(&out, "bounds_epsilon").unwrap(),
        field(&out, "fit_epsilon").unwrap(),
    );
    assert!(eps <= 1.0 && delta <= 1e-5, "{out}");
    assert!(be > 0.0 && fe > 0.0, "{out}");
    assert!((be + fe - eps).abs() < 1e-9, "{out}");
    // Ordered: guarantee, scores, choices, diagnostics.
    assert!(position(&out, "epsilon") < position(&out, "mse"));
    assert!(position(&out, "mse") < position(&out, "hyperparameters"));
    assert!(position(&out, "target_range") < position(&out, "clipped_per_column"));
    assert!(out.contains("target_bound = private range"), "{out}");
    assert!(out.contains("clipped_per_column = {"), "{out}");
    assert!(out.contains("not private"), "{out}");
    let text = std::fs::read_to_string(&model).unwrap();
    assert!(text.contains("dp-erm pipeline model v1"));
    assert!(!text.contains("seed"));

    // predict on the raw CSV: predictions in the user's units (diabetes targets are
    // 25..346; a model answering on the scaled [-1, 1] targets would average near 0).
    let (ok, pout, err) = run(&[
        "predict",
        "--model",
        s(&model),
        "--data",
        &csv,
        "--out",
        s(&preds),
    ]);
    assert!(ok, "{err}\n{pout}");
    assert_eq!(field(&pout, "rows"), Some(442.0), "{pout}");
    assert!(field(&pout, "mse").is_some_and(f64::is_finite), "{pout}");
    let p = std::fs::read_to_string(&preds).unwrap();
    let mut lines = p.lines();
    assert_eq!(lines.next(), Some("prediction"));
    let v: Vec<f64> = lines.map(|l| l.parse().unwrap()).collect();
    assert_eq!(v.len(), 442);
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    assert!((25.0..=346.0).contains(&mean), "mean prediction {mean}");
}

#[test]
fn classification_with_private_feature_ranges_end_to_end() {
    let dir = scratch("pipeline", "clf");
    let model = dir.join("model.json");
    let preds = dir.join("pred.csv");
    let csv = data("breast_cancer.csv");
    let (ok, out, err) = run(&[
        "fit",
        "--data",
        &csv,
        "--target",
        "diagnosis",
        "--positive",
        "malignant",
        "--negative",
        "benign",
        "--loss",
        "logistic",
        "--algorithm",
        "dp-cd",
        "--epsilon",
        "1",
        "--delta",
        "1e-5",
        "--feature-bound",
        "auto",
        "--test-fraction",
        "0.2",
        "--seed",
        "3",
        "--model-out",
        s(&model),
    ]);
    assert!(ok, "{err}\n{out}");
    assert!(field(&out, "epsilon").unwrap() <= 1.0, "{out}");
    assert!(field(&out, "bounds_epsilon").unwrap() > 0.0, "{out}");
    assert!(field(&out, "accuracy").is_some(), "{out}");
    assert!(out.contains("feature_ranges = {"), "{out}");
    assert!(!out.contains("target_range"), "{out}");
    let (ok, pout, err) = run(&[
        "predict",
        "--model",
        s(&model),
        "--data",
        &csv,
        "--out",
        s(&preds),
    ]);
    assert!(ok, "{err}\n{pout}");
    // Better than predicting the majority class (357 of 569 = 0.627) on raw data.
    let acc = field(&pout, "accuracy").unwrap();
    assert!(acc > 0.7, "accuracy {acc}\n{pout}");
    let p = std::fs::read_to_string(&preds).unwrap();
    let mut lines = p.lines();
    assert_eq!(lines.next(), Some("prediction,probability_malignant"));
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), 569);
    assert!(rows
        .iter()
        .all(|r| r.starts_with("malignant,") || r.starts_with("benign,")));
}

#[test]
fn pipeline_flags_refuse_what_they_cannot_do() {
    let dir = scratch("pipeline", "bad");
    let model = dir.join("model.json");
    let libsvm = dir.join("train.libsvm");
    std::fs::write(
        &libsvm,
        "1 1:0.5 2:-0.2\n-1 1:-0.3\n1 2:0.9\n-1 1:-0.8 2:0.1\n",
    )
    .unwrap();
    let (ok, _, err) = run(&[
        "fit",
        "--data",
        s(&libsvm),
        "--n-features",
        "2",
        "--loss",
        "logistic",
        "--algorithm",
        "dp-cd",
        "--epsilon",
        "1",
        "--delta",
        "1e-5",
        "--feature-bound",
        "auto",
        "--model-out",
        s(&model),
    ]);
    assert!(!ok);
    assert!(err.contains("supports CSV input only"), "{err}");

    let bc = data("breast_cancer.csv");
    let base = [
        "fit",
        "--data",
        &bc,
        "--target",
        "diagnosis",
        "--positive",
        "malignant",
        "--negative",
        "benign",
        "--loss",
        "logistic",
        "--algorithm",
        "dp-cd",
        "--epsilon",
        "1",
        "--delta",
        "1e-5",
        "--model-out",
        s(&model),
    ];
    let mut args = base.to_vec();
    args.extend(["--feature-bound", "auto", "--target-bound", "auto"]);
    let (ok, _, err) = run(&args);
    assert!(!ok);
    assert!(
        err.contains("--target-bound applies to regression"),
        "{err}"
    );

    let mut args = base.to_vec();
    args.extend(["--feature-bound", "huge"]);
    let (ok, _, err) = run(&args);
    assert!(!ok);
    assert!(err.contains("neither `auto` nor a number"), "{err}");

    // Regression through the pipeline needs a target bound.
    let diabetes = data("diabetes.csv");
    let (ok, _, err) = run(&[
        "fit",
        "--data",
        &diabetes,
        "--target",
        "target",
        "--loss",
        "squared",
        "--algorithm",
        "dp-cd",
        "--epsilon",
        "1",
        "--delta",
        "1e-5",
        "--feature-bound",
        "auto",
        "--model-out",
        s(&model),
    ]);
    assert!(!ok);
    assert!(err.contains("needs --target-bound auto"), "{err}");
    let (ok, _, err) = run(&[
        "fit",
        "--data",
        &diabetes,
        "--target",
        "target",
        "--loss",
        "squared",
        "--algorithm",
        "dp-cd",
        "--epsilon",
        "1",
        "--delta",
        "1e-5",
        "--feature-bound",
        "auto",
        "--target-bound",
        "-3",
        "--model-out",
        s(&model),
    ]);
    assert!(!ok);
    assert!(err.contains("invalid --target-bound -3"), "{err}");
    assert!(!model.exists(), "a failed fit wrote a model file");
}

#[test]
fn seeded_pipeline_fits_reproduce_and_the_intercept_can_be_dropped() {
    let dir = scratch("pipeline", "seed");
    let csv = data("breast_cancer.csv");
    let fit = |model: &Path, extra: &[&str]| {
        let mut args = vec![
            "fit",
            "--data",
            &csv,
            "--target",
            "diagnosis",
            "--positive",
            "malignant",
            "--negative",
            "benign",
            "--loss",
            "logistic",
            "--algorithm",
            "dp-cd",
            "--epsilon",
            "2",
            "--delta",
            "1e-6",
            "--feature-bound",
            "auto",
            "--seed",
            "11",
            "--model-out",
            s(model),
        ];
        args.extend_from_slice(extra);
        let (ok, out, err) = run(&args);
        assert!(ok, "{err}\n{out}");
        (out, std::fs::read_to_string(model).unwrap())
    };
    let (a, b, c) = (dir.join("a.json"), dir.join("b.json"), dir.join("c.json"));
    let (_, ma) = fit(&a, &[]);
    let (_, mb) = fit(&b, &[]);
    assert_eq!(ma, mb, "a seeded fit through the pipeline must reproduce");
    let (out, mc) = fit(&c, &["--no-intercept"]);
    assert!(out.contains("intercept = none"), "{out}");
    assert!(out.contains("turned off by --no-intercept"), "{out}");
    assert!(mc.contains("\"intercept\": null"), "{mc}");
}
