//! LIBSVM input, `--normalize-rows` and `--max-nonzeros` run the library pipeline
//! (a sparse design for LIBSVM): the model file is a pipeline model, `predict` reads it
//! back, and what the pipeline cannot do on sparse data is refused with the reason.

mod common;

use std::path::{Path, PathBuf};

use common::{json, run, scratch};

/// 1500 records of 3 informative features and two rare ones (indices 5 and 8 of 10),
/// zeros omitted; `regression` writes `2a - b + 0.5` as the label instead of its sign.
fn write_libsvm(dir: &Path, regression: bool) -> PathBuf {
    let mut s = String::new();
    for i in 0..1500 {
        let a = ((i * 7919 % 1000) as f64 / 500.0) - 1.0;
        let b = ((i * 104_729 % 997) as f64 / 498.5) - 1.0;
        let c = ((i * 31 % 101) as f64 / 50.5) - 1.0;
        if regression {
            s.push_str(&format!("{}", 2.0 * a - b + 0.5));
        } else {
            s.push_str(if 2.0 * a - b + 0.1 * c > 0.0 {
                "+1"
            } else {
                "-1"
            });
        }
        for (j, v) in [(1, 3.0 * a), (2, 3.0 * b), (3, 3.0 * c)] {
            if v != 0.0 {
                s.push_str(&format!(" {j}:{v}"));
            }
        }
        if i % 7 == 0 {
            s.push_str(" 5:0.5");
        }
        if i % 11 == 0 {
            s.push_str(" 8:-0.75");
        }
        s.push('\n');
    }
    let path = dir.join(if regression { "reg.svm" } else { "train.svm" });
    std::fs::write(&path, s).unwrap();
    path
}

/// `dp-erm predict --model MODEL --data DATA --json`.
fn predict_json(model: &Path, data: &Path) -> (bool, String, String) {
    run(&[
        "predict",
        "--model",
        model.to_str().unwrap(),
        "--data",
        data.to_str().unwrap(),
        "--json",
    ])
}

#[test]
fn libsvm_normalised_rows_fit_through_the_pipeline_and_predict() {
    let dir = scratch("sparse-cli", "norm");
    let data = write_libsvm(&dir, false);
    let model = dir.join("m.json");
    // No bound: normalised rows have every value in [-1, 1], a public bound.
    let (ok, out, err) = run(&[
        "fit",
        "--data",
        data.to_str().unwrap(),
        "--n-features",
        "10",
        "--loss",
        "logistic",
        "--algorithm",
        "dp-cd",
        "--epsilon",
        "1",
        "--delta",
        "1e-6",
        "--normalize-rows",
        "--test-fraction",
        "0.2",
        "--seed",
        "4",
        "--json",
        "--model-out",
        model.to_str().unwrap(),
    ]);
    assert!(ok, "{out}\n{err}");
    let v = json(&out);
    assert!(v["accuracy"].as_f64().unwrap() > 0.8, "{v}");
    assert!(v["epsilon"].as_f64().unwrap() <= 1.0, "{v}");
    assert!(
        v["feature_bound"]
            .as_str()
            .unwrap()
            .contains("--normalize-rows"),
        "{v}"
    );
    let text = std::fs::read_to_string(&model).unwrap();
    let m = json(&text);
    assert_eq!(m["kind"], "dp-erm pipeline model v1");
    assert_eq!(m["format"], "libsvm");
    assert_eq!(m["model"]["normalize_rows"], true);
    assert_eq!(m["model"]["coefficients"].as_array().unwrap().len(), 10);
    // LIBSVM fits an intercept only when asked.
    assert!(m["model"]["intercept"].is_null(), "{text}");
    assert!(!text.contains("seed"));
    let (ok, out, err) = predict_json(&model, &data);
    assert!(ok, "{out}\n{err}");
    let p = json(&out);
    assert_eq!(p["rows"], 1500);
    assert!(p["accuracy"].as_f64().unwrap() > 0.8, "{p}");
    // New rows in a file named like the other format are refused with both formats
    // named; another extension is read in the model's format.
    let as_csv = dir.join("new.csv");
    std::fs::copy(&data, &as_csv).unwrap();
    let (ok, out, err) = predict_json(&model, &as_csv);
    assert!(!ok, "{out}");
    assert!(
        err.contains("fitted on LIBSVM data") && err.contains("extension says CSV"),
        "{err}"
    );
    let as_txt = dir.join("new.txt");
    std::fs::copy(&data, &as_txt).unwrap();
    let (ok, out, err) = predict_json(&model, &as_txt);
    assert!(ok, "{out}\n{err}");
    assert_eq!(json(&out)["rows"], 1500);
}

#[test]
fn libsvm_regression_and_intercept_through_the_pipeline() {
    let dir = scratch("sparse-cli", "reg");
    let data = write_libsvm(&dir, true);
    let model = dir.join("m.json");
    let base = [
        "fit",
        "--data",
        data.to_str().unwrap(),
        "--n-features",
        "10",
        "--loss",
        "squared",
        "--algorithm",
        "dp-cd",
        "--epsilon",
        "5",
        "--delta",
        "1e-6",
        "--feature-bound",
        "3",
        "--intercept",
        "--test-fraction",
        "0.2",
        "--seed",
        "1",
        "--json",
        "--model-out",
        model.to_str().unwrap(),
    ];
    // A private regression needs the target's scale.
    let (ok, _, err) = run(&base);
    assert!(!ok);
    assert!(err.contains("regression needs --target-bound"), "{err}");
    let mut args = base.to_vec();
    args.extend(["--target-bound", "4"]);
    let (ok, out, err) = run(&args);
    assert!(ok, "{out}\n{err}");
    let v = json(&out);
    assert!(
        v["mse"].as_f64().unwrap() < v["mean_mse"].as_f64().unwrap(),
        "{v}"
    );
    let m = json(&std::fs::read_to_string(&model).unwrap());
    assert!(m["model"]["intercept"].is_number());
    // Sparse: the columns are never centred; the ranges are the declared ones.
    assert_eq!(
        m["model"]["feature_ranges"][0],
        serde_json::json!([-3.0, 3.0])
    );
}

/// A LIBSVM fit without `--intercept` says why it has none and how to get one. Failed
/// before the fix with the pipeline's "none: turned off by the caller", which a user who
/// passed no flag could not understand.
#[test]
fn libsvm_without_intercept_says_why_and_how() {
    let dir = scratch("sparse-cli", "nointercept");
    let data = write_libsvm(&dir, false);
    let model = dir.join("m.json");
    let (ok, out, err) = run(&[
        "fit",
        "--data",
        data.to_str().unwrap(),
        "--n-features",
        "10",
        "--loss",
        "logistic",
        "--algorithm",
        "dp-cd",
        "--epsilon",
        "1",
        "--delta",
        "1e-6",
        "--feature-bound",
        "3",
        "--seed",
        "1",
        "--json",
        "--model-out",
        model.to_str().unwrap(),
    ]);
    assert!(ok, "{out}\n{err}");
    let note = json(&out)["intercept_note"].as_str().unwrap().to_owned();
    assert!(
        note.starts_with("none: LIBSVM fits have no intercept unless you pass --intercept"),
        "{note}"
    );
}
