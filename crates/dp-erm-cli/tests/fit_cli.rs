//! `dp-erm fit` / `dp-erm predict` (aliases `cargo xtask fit / predict`) end to end, as a user would run them.

mod common;

use std::path::PathBuf;

use common::{dp_erm, field, output, scratch, PRIVATE_LOGISTIC_FIT};

/// A separable-ish two-class CSV with named classes, features in [-1, 1].
fn write_csv(dir: &std::path::Path, n: usize, with_labels: bool) -> PathBuf {
    let mut s = String::from(if with_labels {
        "a,b,c,label\n"
    } else {
        "a,b,c\n"
    });
    for i in 0..n {
        let a = ((i * 7919 % 1000) as f64 / 500.0) - 1.0;
        let b = ((i * 104_729 % 997) as f64 / 498.5) - 1.0;
        let c = ((i * 31 % 101) as f64 / 50.5) - 1.0;
        let label = if 2.0 * a - b + 0.1 * c > 0.0 {
            "yes"
        } else {
            "no"
        };
        if with_labels {
            s.push_str(&format!("{a},{b},{c},{label}\n"));
        } else {
            s.push_str(&format!("{a},{b},{c}\n"));
        }
    }
    let path = dir.join(if with_labels { "train.csv" } else { "new.csv" });
    std::fs::write(&path, s).unwrap();
    path
}

#[test]
fn csv_to_private_model_to_predictions() {
    let dir = scratch("fit-cli", "e2e");
    let train = write_csv(&dir, 2000, true);
    let model = dir.join("model.json");
    for algorithm in ["dp-cd", "dp-gcd", "dp-sgd"] {
        let (ok, out, err) = output(dp_erm().args([
            "fit",
            "--data",
            train.to_str().unwrap(),
            "--target",
            "label",
            "--positive",
            "yes",
            "--negative",
            "no",
            "--loss",
            "logistic",
            "--penalty",
            "l2",
            "--lambda",
            "1e-3",
            "--algorithm",
            algorithm,
            "--intercept",
            "--epsilon",
            "1",
            "--delta",
            "1e-6",
            "--feature-bound",
            "1",
            "--test-fraction",
            "0.25",
            "--model-out",
            model.to_str().unwrap(),
        ]));
        assert!(ok, "{algorithm}: {out}\n{err}");
        let eps = field(&out, "epsilon").expect("epsilon line");
        assert!(eps > 0.0 && eps <= 1.0, "{out}");
        assert!(field(&out, "delta").unwrap() <= 1e-6, "{out}");
        let acc = field(&out, "accuracy").expect("accuracy line");
        // Majority class is about 1/2 here; a private model must do clearly better.
        assert!(acc > 0.7, "{algorithm}: held-out accuracy {acc}\n{out}");
        assert!(out.contains("clipped = 0 of"), "{out}");
        let text = std::fs::read_to_string(&model).unwrap();
        assert!(!text.contains("seed"), "{text}");
        assert!(text.contains("\"guarantee\""), "{text}");
    }
    // Predict on a labelled file: prints the score.
    let (ok, out, err) = output(dp_erm().args([
        "predict",
        "--model",
        model.to_str().unwrap(),
        "--data",
        train.to_str().unwrap(),
    ]));
    assert!(ok, "{out}\n{err}");
    assert!(field(&out, "accuracy").unwrap() > 0.7, "{out}");
    // Predict on a file without labels: writes one prediction per row.
    let new = write_csv(&dir, 10, false);
    let preds = dir.join("predictions.csv");
    let (ok, out, err) = output(dp_erm().args([
        "predict",
        "--model",
        model.to_str().unwrap(),
        "--data",
        new.to_str().unwrap(),
        "--out",
        preds.to_str().unwrap(),
        "--json",
    ]));
    assert!(ok, "{out}\n{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["rows"], 10);
    let written = std::fs::read_to_string(&preds).unwrap();
    assert_eq!(written.lines().count(), 11, "{written}");
    assert!(written.starts_with("prediction,probability"));
}

#[test]
fn fit_json_reports_solver_seconds_and_seeded_runs_reproduce() {
    let dir = scratch("fit-cli", "json");
    let train = write_csv(&dir, 500, true);
    let fit = |data: &std::path::Path, model: &str| {
        output(dp_erm().args([
            "fit",
            "--data",
            data.to_str().unwrap(),
            "--target",
            "label",
            "--positive",
            "yes",
            "--negative",
            "no",
            "--loss",
            "logistic",
            "--algorithm",
            "dp-cd",
            "--epsilon",
            "2",
            "--delta",
            "1e-5",
            "--feature-bound",
            "1",
            "--seed",
            "7",
            "--json",
            "--model-out",
            dir.join(model).to_str().unwrap(),
        ]))
    };
    let (ok, out, err) = fit(&train, "a.json");
    assert!(ok, "{out}\n{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert!(v["solver_seconds"].as_f64().unwrap() >= 0.0);
    assert!(v["epsilon"].as_f64().unwrap() <= 2.0);
    let (ok, _, _) = fit(&train, "b.json");
    assert!(ok);
    let a = std::fs::read_to_string(dir.join("a.json")).unwrap();
    let b = std::fs::read_to_string(dir.join("b.json")).unwrap();
    assert_eq!(a, b);
    assert!(!a.contains("seed") && !a.contains("\"7\""), "{a}");

    // The same file gzip-compressed (`train.csv.gz`) is read as its text: the same model.
    let packed = dir.join("train.csv.gz");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, &std::fs::read(&train).unwrap()).unwrap();
    std::fs::write(&packed, gz.finish().unwrap()).unwrap();
    let (ok, out, err) = fit(&packed, "c.json");
    assert!(ok, "{out}\n{err}");
    let c = std::fs::read_to_string(dir.join("c.json")).unwrap();
    assert_eq!(a, c);
}

#[test]
fn fit_refuses_what_it_cannot_do_privately() {
    let dir = scratch("fit-cli", "errors");
    let train = write_csv(&dir, 50, true);
    let model = dir.join("m.json");
    let base = |extra: &[&str]| {
        let mut c = dp_erm();
        c.args([
            "fit",
            "--data",
            train.to_str().unwrap(),
            "--target",
            "label",
            "--positive",
            "yes",
            "--negative",
            "no",
            "--loss",
            "logistic",
            "--algorithm",
            "dp-cd",
            "--model-out",
            model.to_str().unwrap(),
        ]);
        c.args(extra);
        output(&mut c)
    };
    // No bound and no explicit opt-in: refused, naming both ways out.
    let (ok, _, err) = base(&["--epsilon", "1", "--delta", "1e-6"]);
    assert!(!ok);
    assert!(
        err.contains("--feature-bound") && err.contains("--non-private-constants-from-data"),
        "{err}"
    );
    // Negative numbers reach the validation.
    let (ok, _, err) = base(&[
        "--epsilon",
        "1",
        "--delta",
        "1e-6",
        "--feature-bound",
        "1",
        "--lambda",
        "-1",
    ]);
    assert!(!ok);
    assert!(err.contains("lambda"), "{err}");
    let (ok, _, err) = base(&["--epsilon", "-1", "--delta", "1e-6", "--feature-bound", "1"]);
    assert!(!ok);
    assert!(err.contains("epsilon"), "{err}");
    // A missing privacy parameter is named, with a value to start from.
    let (ok, _, err) = base(&["--epsilon", "1", "--feature-bound", "1"]);
    assert!(!ok);
    assert!(
        err.contains("needs --delta") && err.contains("1 / n^2"),
        "{err}"
    );
    let (ok, _, err) = base(&["--delta", "1e-6", "--feature-bound", "1"]);
    assert!(!ok);
    assert!(err.contains("needs --epsilon (e.g."), "{err}");
    // Nothing was written by the failed runs.
    assert!(!model.exists());
    // A missing file names it.
    let (ok, _, err) = output(dp_erm().args([
        "predict",
        "--model",
        dir.join("nope.json").to_str().unwrap(),
        "--data",
        train.to_str().unwrap(),
    ]));
    assert!(!ok);
    assert!(err.contains("nope.json"), "{err}");
}

#[test]
fn libsvm_input_fits_and_predicts() {
    let dir = scratch("fit-cli", "libsvm");
    // The same classes as write_csv, as LIBSVM text (zeros omitted).
    let mut s = String::new();
    for i in 0..1500 {
        let a = ((i * 7919 % 1000) as f64 / 500.0) - 1.0;
        let b = ((i * 104_729 % 997) as f64 / 498.5) - 1.0;
        let c = ((i * 31 % 101) as f64 / 50.5) - 1.0;
        let y = if 2.0 * a - b + 0.1 * c > 0.0 {
            "+1"
        } else {
            "-1"
        };
        s.push_str(y);
        for (j, v) in [a, b, c].into_iter().enumerate() {
            if v != 0.0 {
                s.push_str(&format!(" {}:{v}", j + 1));
            }
        }
        s.push('\n');
    }
    let data = dir.join("train.svm");
    std::fs::write(&data, s).unwrap();
    let model = dir.join("model.json");
    for algorithm in ["dp-sgd", "dp-cd"] {
        let (ok, out, err) = output(dp_erm().args([
            "fit",
            "--data",
            data.to_str().unwrap(),
            "--n-features",
            "3",
            "--loss",
            "logistic",
            "--algorithm",
            algorithm,
            "--epsilon",
            "1",
            "--delta",
            "1e-6",
            "--feature-bound",
            "1",
            "--test-fraction",
            "0.2",
            "--model-out",
            model.to_str().unwrap(),
        ]));
        assert!(ok, "{algorithm}: {out}\n{err}");
        assert!(field(&out, "accuracy").unwrap() > 0.7, "{algorithm}: {out}");
        assert!(field(&out, "epsilon").unwrap() <= 1.0, "{out}");
        let text = std::fs::read_to_string(&model).unwrap();
        assert!(text.contains("\"format\": \"libsvm\""), "{text}");
        assert!(!text.contains("seed"), "{text}");
    }
    let (ok, out, err) = output(dp_erm().args([
        "predict",
        "--model",
        model.to_str().unwrap(),
        "--data",
        data.to_str().unwrap(),
        "--json",
    ]));
    assert!(ok, "{out}\n{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["rows"], 1500);
    assert!(v["accuracy"].as_f64().unwrap() > 0.7, "{v}");
    assert!(v["log_loss"].as_f64().unwrap() > 0.0, "{v}");
    // --target is a CSV option.
    let (ok, _, err) = output(dp_erm().args([
        "fit",
        "--data",
        data.to_str().unwrap(),
        "--target",
        "0",
        "--loss",
        "logistic",
        "--algorithm",
        "dp-cd",
        "--epsilon",
        "1",
        "--delta",
        "1e-6",
        "--feature-bound",
        "1",
        "--model-out",
        model.to_str().unwrap(),
    ]));
    assert!(!ok);
    assert!(err.contains("--target applies to CSV files only"), "{err}");
    // So are the class names: refused, not silently ignored.
    let (ok, _, err) = output(dp_erm().args([
        "fit",
        "--data",
        data.to_str().unwrap(),
        "--positive",
        "yes",
        "--negative",
        "no",
        "--loss",
        "logistic",
        "--algorithm",
        "dp-cd",
        "--epsilon",
        "1",
        "--delta",
        "1e-6",
        "--feature-bound",
        "1",
        "--model-out",
        model.to_str().unwrap(),
    ]));
    assert!(!ok);
    assert!(
        err.contains("--positive / --negative apply to CSV files only"),
        "{err}"
    );
}

#[test]
fn feature_bound_clips_and_says_how_many() {
    let dir = scratch("fit-cli", "clip");
    let train = write_csv(&dir, 400, true);
    // Count by hand the values beyond 0.5 in the three feature columns.
    let text = std::fs::read_to_string(&train).unwrap();
    let beyond = text
        .lines()
        .skip(1)
        .flat_map(|l| {
            l.split(',')
                .take(3)
                .map(|v| v.parse::<f64>().unwrap())
                .collect::<Vec<_>>()
        })
        .filter(|v| v.abs() > 0.5)
        .count();
    assert!(beyond > 0);
    let model = dir.join("m.json");
    let (ok, out, err) = output(dp_erm().args([
        "fit",
        "--data",
        train.to_str().unwrap(),
        "--target",
        "label",
        "--positive",
        "yes",
        "--negative",
        "no",
        "--loss",
        "squared-hinge",
        "--algorithm",
        "dp-gcd",
        "--epsilon",
        "1",
        "--delta",
        "1e-6",
        "--feature-bound",
        "0.5",
        "--model-out",
        model.to_str().unwrap(),
    ]));
    assert!(ok, "{out}\n{err}");
    assert!(
        out.contains(&format!(
            "clipped = {beyond} of 1200 values clipped to the declared bound |x| <= 0.5"
        )),
        "{beyond}: {out}"
    );
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&model).unwrap()).unwrap();
    assert_eq!(file["feature_bound"], 0.5);
    // Every CSV fit runs the library pipeline: its guarantee says whether any input
    // (bounds, constants) was computed from the data without privacy.
    assert_eq!(file["model"]["privacy"]["uses_non_private_inputs"], false);
}

#[test]
fn non_private_constants_need_the_flag_and_are_recorded() {
    let dir = scratch("fit-cli", "nonprivate");
    let train = write_csv(&dir, 300, true);
    let model = dir.join("m.json");
    let (ok, out, err) = output(dp_erm().args([
        "fit",
        "--data",
        train.to_str().unwrap(),
        "--target",
        "label",
        "--positive",
        "yes",
        "--negative",
        "no",
        "--loss",
        "logistic",
        "--algorithm",
        "dp-cd",
        "--epsilon",
        "1",
        "--delta",
        "1e-6",
        "--non-private-constants-from-data",
        "--model-out",
        model.to_str().unwrap(),
    ]));
    assert!(ok, "{out}\n{err}");
    assert!(out.contains("uses_non_private_inputs = true"), "{out}");
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&model).unwrap()).unwrap();
    assert_eq!(file["model"]["privacy"]["uses_non_private_inputs"], true);
    assert!(file["feature_bound"].is_null());
}

#[test]
fn regression_reports_mse_and_predict_checks_columns() {
    let dir = scratch("fit-cli", "regression");
    let mut s = String::from("x0,x1,y\n");
    for i in 0..1000 {
        let a = ((i * 7919 % 1000) as f64 / 500.0) - 1.0;
        let b = ((i * 104_729 % 997) as f64 / 498.5) - 1.0;
        s.push_str(&format!("{a},{b},{}\n", 0.5 * a - 0.25 * b));
    }
    let train = dir.join("reg.csv");
    std::fs::write(&train, s).unwrap();
    let model = dir.join("m.json");
    let (ok, out, err) = output(dp_erm().args([
        "fit",
        "--data",
        train.to_str().unwrap(),
        "--loss",
        "squared",
        "--algorithm",
        "dp-cd",
        "--intercept",
        "--epsilon",
        "2",
        "--delta",
        "1e-6",
        "--feature-bound",
        "1",
        // Regression through the pipeline declares the target's scale too (|y| <= 1
        // here: y = 0.5 a - 0.25 b with a, b in [-1, 1]).
        "--target-bound",
        "1",
        "--test-fraction",
        "0.3",
        // Seeded so that the threshold below is checked on one fixed draw (from OS
        // entropy the default fit missed it in about 1 run of 20); a seed replays the
        // noise, which is fine in a test and never in a released model.
        "--seed",
        "7",
        "--model-out",
        model.to_str().unwrap(),
    ]));
    assert!(ok, "{out}\n{err}");
    let mse = field(&out, "mse").expect("mse line");
    // The label variance is about 0.1; a useful model does clearly better.
    assert!(mse < 0.05, "{out}");
    assert!(field(&out, "accuracy").is_none(), "{out}");
    // Columns in another order, without the label: fine.
    let new = dir.join("new.csv");
    std::fs::write(&new, "x1,x0\n0.5,0.5\n-1,1\n").unwrap();
    let (ok, out, err) = output(dp_erm().args([
        "predict",
        "--model",
        model.to_str().unwrap(),
        "--data",
        new.to_str().unwrap(),
    ]));
    assert!(ok, "{out}\n{err}");
    assert_eq!(field(&out, "rows"), Some(2.0), "{out}");
    assert!(field(&out, "mse").is_none(), "{out}");
    // A missing column and an unknown column are named, with the file.
    std::fs::write(&new, "x0,z\n0.5,0.5\n").unwrap();
    let (ok, _, err) = output(dp_erm().args([
        "predict",
        "--model",
        model.to_str().unwrap(),
        "--data",
        new.to_str().unwrap(),
    ]));
    assert!(!ok);
    assert!(
        err.contains("new.csv") && err.contains("missing feature column(s) \"x1\""),
        "{err}"
    );
    std::fs::write(&new, "x0,x1,z\n0.5,0.5,1\n").unwrap();
    let (ok, _, err) = output(dp_erm().args([
        "predict",
        "--model",
        model.to_str().unwrap(),
        "--data",
        new.to_str().unwrap(),
    ]));
    assert!(!ok);
    assert!(err.contains("unexpected column(s) \"z\""), "{err}");
    // A bad value: file, line, column and value in one line.
    std::fs::write(&new, "x0,x1\n0.5,0.5\n0.1,abc\n").unwrap();
    let (ok, _, err) = output(dp_erm().args([
        "predict",
        "--model",
        model.to_str().unwrap(),
        "--data",
        new.to_str().unwrap(),
    ]));
    assert!(!ok);
    assert!(
        err.contains("new.csv, line 3, column \"x1\" (index 1): \"abc\" is not a number"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

#[test]
fn dp_scd_needs_l2_and_normalised_rows() {
    let dir = scratch("fit-cli", "dp-scd");
    let train = write_csv(&dir, 2000, true);
    let model = dir.join("model.json");
    let base = |algorithm: &str| {
        let mut c = dp_erm();
        c.args([
            "fit",
            "--data",
            train.to_str().unwrap(),
            "--target",
            "label",
            "--positive",
            "yes",
            "--negative",
            "no",
            "--loss",
            "logistic",
            "--algorithm",
            algorithm,
            "--test-fraction",
            "0.25",
            "--seed",
            "3",
            "--model-out",
            model.to_str().unwrap(),
        ]);
        c
    };
    let private = ["--epsilon", "1", "--delta", "1e-3"];
    // No L2 penalty: refused, naming the problem.
    let (ok, out, err) = output(base("dp-scd").args(private));
    assert!(!ok, "{out}");
    assert!(err.contains("--penalty l2 --lambda"), "{err}");
    // Rows of norm up to sqrt(3): refused, pointing at --normalize-rows.
    let (ok, out, err) =
        output(
            base("dp-scd")
                .args(private)
                .args(["--penalty", "l2", "--lambda", "0.05"]),
        );
    assert!(!ok, "{out}");
    assert!(err.contains("--normalize-rows"), "{err}");
    // Normalised rows: a private model that separates the classes.
    let (ok, out, err) = output(base("dp-scd").args(private).args([
        "--penalty",
        "l2",
        "--lambda",
        "0.3",
        "--normalize-rows",
        "--batch-size",
        "50",
        "--clip",
        "0.5",
        "--passes",
        "5",
    ]));
    assert!(ok, "{out}\n{err}");
    assert!(out.contains("algorithm = dp-scd"), "{out}");
    let eps = field(&out, "epsilon").expect("epsilon line");
    assert!(eps > 0.0 && eps <= 1.0, "{out}");
    let acc = field(&out, "accuracy").expect("accuracy line");
    // Classes are balanced here; DP-SCD's noise costs accuracy, but it must beat chance.
    assert!(acc > 0.6, "held-out accuracy {acc}\n{out}");
    let text = std::fs::read_to_string(&model).unwrap();
    assert!(text.contains("\"normalize_rows\": true"), "{text}");
    // predict normalises new rows the same way.
    let (ok, out, err) = output(dp_erm().args([
        "predict",
        "--model",
        model.to_str().unwrap(),
        "--data",
        train.to_str().unwrap(),
    ]));
    assert!(ok, "{out}\n{err}");
    assert!(field(&out, "accuracy").unwrap() > 0.6, "{out}");
    // The non-private twin: no epsilon, same penalty requirement.
    let (ok, out, err) = output(base("sdca").args(["--penalty", "l2", "--lambda", "0.05"]));
    assert!(ok, "{out}\n{err}");
    assert!(field(&out, "accuracy").unwrap() > 0.8, "{out}");
}

/// `--max-nonzeros K`: a one-hot CSV (one numeric column, a colour in three indicator
/// columns, at most one set) fits with each pass charged as the K releases a record can
/// move; the guarantee still meets the target, the report says what was charged, and
/// records that break the bound are projected onto it (counted, not named).
#[test]
fn max_nonzeros_charges_what_a_record_can_move_and_projects_broken_records() {
    let dir = scratch("fit-cli", "support");
    let mut s = String::from("x,red,green,blue,label\n");
    for i in 0..600 {
        let x = ((i * 7919 % 1000) as f64 / 500.0) - 1.0;
        let colour = i % 4; // 3: none of the three (a fourth, reference colour)
        let ind: Vec<u8> = (0..3).map(|c| u8::from(c == colour)).collect();
        let label = if x + 0.5 * f64::from(ind[0]) > 0.2 {
            "yes"
        } else {
            "no"
        };
        s.push_str(&format!("{x},{},{},{},{label}\n", ind[0], ind[1], ind[2]));
    }
    let train = dir.join("onehot.csv");
    std::fs::write(&train, s).unwrap();
    let fit = |k: &str, model: &str| {
        output(dp_erm().args([
            "fit",
            "--data",
            train.to_str().unwrap(),
            "--target",
            "label",
            "--positive",
            "yes",
            "--negative",
            "no",
            "--loss",
            "logistic",
            "--algorithm",
            "dp-cd",
            "--epsilon",
            "1",
            "--delta",
            "1e-5",
            "--feature-bound",
            "1",
            "--passes",
            "10",
            "--step",
            "1",
            "--clip",
            "1",
            "--max-nonzeros",
            k,
            "--json",
            "--model-out",
            dir.join(model).to_str().unwrap(),
        ]))
    };
    let (ok, out, err) = fit("2", "ok.json");
    assert!(ok, "{out}\n{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert!(v["epsilon"].as_f64().unwrap() <= 1.0, "{v}");
    let charged = v["charged_releases"].as_str().unwrap();
    assert!(charged.starts_with("20 of 40 "), "{charged}");
    let model = std::fs::read_to_string(dir.join("ok.json")).unwrap();
    assert!(model.contains("\"charged_releases\": 20"), "{model}");
    assert!(v
        .get("projected")
        .is_some_and(|p| p.as_str().unwrap().starts_with("0 of 600 records")));
    // One numeric column and one indicator: two non-zeros; a bound of 1 is broken by
    // the 449 records with a colour and x != 0 (record 500 has x = 0). Issue 24: the
    // fit used to refuse naming the first such record (a non-private output); those
    // records are now projected onto their largest non-zero, counted in the
    // non-private report, and the plan charges one release per pass.
    let (ok, out, err) = fit("1", "broken.json");
    assert!(ok, "{out}\n{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    let projected = v["projected"].as_str().unwrap();
    assert!(
        projected.starts_with("449 of 600 records") && projected.contains("not private"),
        "{projected}"
    );
    assert!(v["epsilon"].as_f64().unwrap() <= 1.0, "{v}");
    assert!(
        v["charged_releases"]
            .as_str()
            .unwrap()
            .starts_with("10 of 40 "),
        "{v}"
    );
    assert!(dir.join("broken.json").exists());
    // Other algorithms refuse the flag.
    let (ok, _, err) = output(dp_erm().args([
        "fit",
        "--data",
        train.to_str().unwrap(),
        "--target",
        "label",
        "--positive",
        "yes",
        "--negative",
        "no",
        "--loss",
        "logistic",
        "--algorithm",
        "dp-sgd",
        "--epsilon",
        "1",
        "--delta",
        "1e-5",
        "--feature-bound",
        "1",
        "--max-nonzeros",
        "2",
        "--model-out",
        dir.join("sgd.json").to_str().unwrap(),
    ]));
    assert!(
        !ok && err.contains("--max-nonzeros applies to --algorithm dp-cd"),
        "{err}"
    );
}

/// Two neighbouring LIBSVM files (replace-one: record 0 differs) of n = 200: in one
/// every index is at most 5, in the other record 0 holds index 40. Before
/// `--n-features`, `p` was the largest index present (5 against 40), so the plan (the
/// number of releases, the noise) and the model's shape told the files apart with
/// certainty. Now `p` is declared, and the plan and shape are identical.
#[test]
fn libsvm_plan_and_shape_do_not_depend_on_the_largest_index_present() {
    let dir = scratch("fit-cli", "libsvm-neighbours");
    let body = |first: &str| {
        let mut s = String::from(first);
        for i in 1..200 {
            let a = ((i * 7919 % 1000) as f64 / 500.0) - 1.0;
            let b = ((i * 31 % 101) as f64 / 50.5) - 1.0;
            let y = if a - b > 0.0 { "+1" } else { "-1" };
            s.push_str(&format!("{y} 1:{a} 5:{b}\n"));
        }
        s
    };
    let small = dir.join("small.svm");
    let large = dir.join("large.svm");
    std::fs::write(&small, body("+1 1:0.5 5:0.25\n")).unwrap();
    std::fs::write(&large, body("+1 1:0.5 40:0.25\n")).unwrap();
    for algorithm in ["dp-cd", "dp-gcd", "dp-sgd"] {
        let plan_and_shape = |data: &PathBuf, model: &str| {
            let out = dir.join(model);
            let (ok, stdout, err) = output(dp_erm().args([
                "fit",
                "--data",
                data.to_str().unwrap(),
                "--n-features",
                "40",
                "--loss",
                "logistic",
                "--algorithm",
                algorithm,
                "--epsilon",
                "1",
                "--delta",
                "1e-6",
                "--feature-bound",
                "1",
                "--passes",
                "2",
                "--seed",
                "7",
                "--json",
                "--model-out",
                out.to_str().unwrap(),
            ]));
            assert!(ok, "{algorithm}: {stdout}\n{err}");
            let v: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
            let m = &v["model"];
            (
                m["privacy"]["plan"].clone(),
                m["coefficients"].as_array().unwrap().len(),
                m["privacy"]["guarantee"].clone(),
            )
        };
        let (plan_s, p_s, g_s) = plan_and_shape(&small, &format!("{algorithm}-small.json"));
        let (plan_l, p_l, g_l) = plan_and_shape(&large, &format!("{algorithm}-large.json"));
        assert_eq!(p_s, 40, "{algorithm}");
        assert_eq!(p_s, p_l, "{algorithm}");
        assert!(!plan_s.is_null(), "{algorithm}");
        assert_eq!(plan_s, plan_l, "{algorithm}: the plans differ");
        assert_eq!(g_s, g_l, "{algorithm}: the guarantees differ");
    }
    // The refused fits below: `fit --data FILE EXTRA... --loss logistic --algorithm dp-cd
    // --epsilon 1 --delta 1e-6 --model-out refused.json` fails, writes no model and
    // returns its error.
    let refused_out = dir.join("refused.json");
    let refused = |data: &std::path::Path, extra: &[&str]| {
        let mut args = vec!["fit", "--data", data.to_str().unwrap()];
        args.extend_from_slice(extra);
        args.extend_from_slice(&PRIVATE_LOGISTIC_FIT);
        args.extend_from_slice(&["--model-out", refused_out.to_str().unwrap()]);
        let (ok, _, err) = output(dp_erm().args(&args));
        assert!(!ok, "{args:?} was not refused");
        assert!(!refused_out.exists());
        err
    };
    // Without --n-features a LIBSVM fit is refused, saying why.
    let err = refused(&large, &["--feature-bound", "1"]);
    assert!(err.contains("LIBSVM input needs --n-features P"), "{err}");
    // Without the bound either, both missing flags are named in one error.
    let err = refused(&large, &[]);
    assert!(err.contains("2 things to fix in the flags"), "{err}");
    assert!(err.contains("--feature-bound B"), "{err}");
    assert!(err.contains("LIBSVM input needs --n-features P"), "{err}");
    // A file whose format its name does not tell: the error says what LIBSVM also needs.
    let bare = dir.join("bare_name");
    std::fs::copy(&large, &bare).unwrap();
    let err = refused(&bare, &[]);
    assert!(err.contains("--format libsvm with --n-features P"), "{err}");
    // An index above the declared count is refused naming the file, line and index.
    let err = refused(&large, &["--n-features", "5", "--feature-bound", "1"]);
    assert!(
        err.contains("large.svm")
            && err.contains("line 1")
            && err.contains("index 40 exceeds the declared n_features = 5"),
        "{err}"
    );
    // CSV columns come from the header (a public schema): the flag is refused there.
    let csv = write_csv(&dir, 50, true);
    let err = refused(
        &csv,
        &[
            "--n-features",
            "3",
            "--target",
            "label",
            "--positive",
            "yes",
            "--negative",
            "no",
            "--feature-bound",
            "1",
        ],
    );
    assert!(err.contains("applies to LIBSVM files only"), "{err}");
}

/// `--max-nonzeros usize::MAX --intercept` used to wrap `k + 1` to a bound of 0 in
/// release builds (and panic in debug builds); it is an error naming the flag.
#[test]
fn max_nonzeros_overflow_with_intercept_is_an_error() {
    let dir = scratch("fit-cli", "support-overflow");
    let train = write_csv(&dir, 100, true);
    let (ok, out, err) = output(dp_erm().args([
        "fit",
        "--data",
        train.to_str().unwrap(),
        "--target",
        "label",
        "--positive",
        "yes",
        "--negative",
        "no",
        "--loss",
        "logistic",
        "--algorithm",
        "dp-cd",
        "--intercept",
        "--epsilon",
        "1",
        "--delta",
        "1e-5",
        "--feature-bound",
        "1",
        "--max-nonzeros",
        "18446744073709551615",
        "--model-out",
        dir.join("m.json").to_str().unwrap(),
    ]));
    assert!(!ok, "{out}");
    assert!(
        err.contains("invalid --max-nonzeros 18446744073709551615") && err.contains("overflows"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    assert!(!dir.join("m.json").exists());
}

/// Regression without `--target-bound`: refused for a private fit with declared bounds
/// (the targets' scale must be declared or released), accepted where the caller already
/// accepted non-private ranges — the non-private `cd`, or `--non-private-constants-from-data`
/// — with the targets' range computed without privacy and said so.
#[test]
fn regression_without_a_target_bound_only_where_non_private_ranges_were_accepted() {
    let dir = scratch("fit-cli", "regression-target");
    let mut s = String::from("x0,x1,y\n");
    for i in 0..500 {
        let a = ((i * 7919 % 1000) as f64 / 500.0) - 1.0;
        let b = ((i * 104_729 % 997) as f64 / 498.5) - 1.0;
        s.push_str(&format!("{a},{b},{}\n", 3.0 * a - 2.0 * b));
    }
    let train = dir.join("reg.csv");
    std::fs::write(&train, s).unwrap();
    let model = dir.join("m.json");
    let fit = |extra: &[&str]| {
        let mut c = dp_erm();
        c.args([
            "fit",
            "--data",
            train.to_str().unwrap(),
            "--loss",
            "squared",
            "--model-out",
            model.to_str().unwrap(),
        ]);
        c.args(extra);
        output(&mut c)
    };
    let (ok, _, err) = fit(&[
        "--algorithm",
        "dp-cd",
        "--epsilon",
        "1",
        "--delta",
        "1e-6",
        "--feature-bound",
        "1",
    ]);
    assert!(!ok && err.contains("needs --target-bound"), "{err}");
    let (ok, out, err) = fit(&["--algorithm", "cd", "--passes", "50"]);
    assert!(ok, "{out}\n{err}");
    assert!(
        out.contains("target_bound = none: the targets' min and max"),
        "{out}"
    );
    assert!(out.contains("privacy = none"), "{out}");
    let (ok, out, err) = fit(&[
        "--algorithm",
        "dp-cd",
        "--epsilon",
        "1",
        "--delta",
        "1e-6",
        "--non-private-constants-from-data",
    ]);
    assert!(ok, "{out}\n{err}");
    assert!(out.contains("uses_non_private_inputs = true"), "{out}");
    assert!(
        out.contains("target_bound = none: the targets' min and max"),
        "{out}"
    );
}
