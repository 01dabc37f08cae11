//! Command-line ergonomics of every subcommand, through the built binary: clap's whole
//! error message, negative numbers as values, scientific notation for extreme floats,
//! `--json` as one object.

use std::path::PathBuf;
use std::process::Command;

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(args)
        .output()
        .expect("run xtask");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dp-erm-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// y = x0 - 2 x1 + small noise, features in [-1, 1].
fn regression_csv(dir: &std::path::Path) -> PathBuf {
    let mut s = String::from("x0,x1,y\n");
    for i in 0..400 {
        let a = ((i * 7919 % 1000) as f64 / 500.0) - 1.0;
        let b = ((i * 104_729 % 997) as f64 / 498.5) - 1.0;
        let noise = 0.01 * ((i % 7) as f64 - 3.0);
        s.push_str(&format!("{a},{b},{}\n", a - 2.0 * b + noise));
    }
    let p = dir.join("reg.csv");
    std::fs::write(&p, s).unwrap();
    p
}

#[test]
fn clap_errors_are_printed_whole_with_exit_code_2() {
    // A bad value: the message, and the possible values.
    let (code, out, err) = run(&[
        "fit",
        "--data",
        "x.csv",
        "--loss",
        "nope",
        "--algorithm",
        "dp-cd",
        "--model-out",
        "m.json",
    ]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.starts_with("error: invalid value 'nope' for '--loss <LOSS>'"),
        "{err}"
    );
    assert!(
        err.contains("[possible values: logistic, squared, squared-hinge, huber]"),
        "{err}"
    );
    assert!(err.lines().count() > 1, "{err}");
    // A missing argument: the message, and the usage line.
    let (code, _, err) = run(&[
        "fit",
        "--data",
        "x.csv",
        "--loss",
        "logistic",
        "--model-out",
        "m.json",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("--algorithm <ALGORITHM>"), "{err}");
    assert!(err.contains("Usage: xtask fit"), "{err}");
    // An unknown subcommand: the usage line.
    let (code, _, err) = run(&["frobnicate"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("'frobnicate'") && err.contains("Usage: xtask <COMMAND>"),
        "{err}"
    );
    // Help still prints in full, with success.
    let (code, out, _) = run(&["fit", "--help"]);
    assert_eq!(code, 0);
    assert!(out.contains("--non-private-constants-from-data"), "{out}");
}

#[test]
fn negative_numbers_reach_the_validation() {
    let dir = scratch("negative");
    let data = regression_csv(&dir);
    let model = dir.join("m.json");
    let fit = |extra: &[&str]| {
        let mut args = vec![
            "fit",
            "--data",
            data.to_str().unwrap(),
            "--loss",
            "squared",
            "--algorithm",
            "dp-cd",
            "--epsilon",
            "1",
            "--delta",
            "1e-6",
            "--feature-bound",
            "1",
            // Regression declares the target's scale (y = x0 - 2 x1: |y| <= 3).
            "--target-bound",
            "3",
            "--model-out",
            model.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        run(&args)
    };
    // `--lambda -1`: the lambda error of the command, not clap's "unexpected argument".
    let (code, _, err) = fit(&["--penalty", "l1", "--lambda", "-1"]);
    assert_eq!(code, 2);
    assert_eq!(
        err.trim(),
        "error: invalid --lambda -1: the penalty strength must be finite and >= 0"
    );
    let (code, _, err) = fit(&["--feature-bound", "-2"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("--feature-bound") && !err.contains("unexpected argument"),
        "{err}"
    );
    let (code, _, err) = fit(&["--test-fraction", "-0.5"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("test_fraction") && err.contains("between 0 and 1"),
        "{err}"
    );
    // An integer argument: clap names it and the reason, not "unexpected argument '-1'".
    let (code, _, err) = fit(&["--passes", "-1"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("invalid value '-1' for '--passes <PASSES>'"),
        "{err}"
    );
    // optimum too.
    let (code, _, err) = run(&[
        "optimum",
        "--data",
        data.to_str().unwrap(),
        "--loss",
        "squared",
        "--penalty",
        "l1",
        "--lambda",
        "-1",
    ]);
    assert_eq!(code, 2);
    assert!(
        err.contains("lambda") && !err.contains("unexpected argument"),
        "{err}"
    );
    assert!(!model.exists());
}

#[test]
fn extreme_floats_print_in_scientific_notation() {
    let dir = scratch("floats");
    let data = regression_csv(&dir);
    let model = dir.join("m.json");
    let (code, out, err) = run(&[
        "fit",
        "--data",
        data.to_str().unwrap(),
        "--loss",
        "squared",
        "--penalty",
        "l1",
        "--lambda",
        "1e-30",
        "--algorithm",
        "dp-cd",
        "--epsilon",
        "5",
        "--delta",
        "1e-12",
        "--feature-bound",
        "1e20",
        "--target-bound",
        "1e20",
        "--test-fraction",
        "0.25",
        "--model-out",
        model.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("penalty = l1 (lambda = 1e-30)"), "{out}");
    assert!(out.lines().any(|l| l == "delta = 1e-12"), "{out}");
    assert!(out.contains("|x| <= 1e20"), "{out}");
    assert!(out.contains("mse = "), "{out}");
    for line in out.lines() {
        assert!(
            !line.contains("000000000"),
            "a float printed in full: {line}"
        );
    }
}

#[test]
fn optimum_json_is_one_object() {
    let dir = scratch("optimum");
    let data = regression_csv(&dir);
    let (code, out, err) = run(&[
        "optimum",
        "--data",
        data.to_str().unwrap(),
        "--target",
        "y",
        "--loss",
        "squared",
        "--penalty",
        "l1",
        "--lambda",
        "0.01",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.trim().lines().count(), 1, "{out}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!((v["n"].as_u64(), v["p"].as_u64()), (Some(400), Some(2)));
    let w = v["w"].as_array().unwrap();
    assert!((w[0].as_f64().unwrap() - 1.0).abs() < 0.05, "{v}");
    assert!((w[1].as_f64().unwrap() + 2.0).abs() < 0.05, "{v}");
    assert!(v["gap"].as_f64().unwrap() >= 0.0);
    assert!(v["objective"].as_f64().unwrap() > 0.0);
    assert_eq!(v["certificate"], "duality gap");
    // Without --json: the text report, last lines objective and gap.
    let (code, out, _) = run(&[
        "optimum",
        "--data",
        data.to_str().unwrap(),
        "--loss",
        "squared",
        "--penalty",
        "l1",
        "--lambda",
        "0.01",
    ]);
    assert_eq!(code, 0);
    assert!(out.lines().last().unwrap().starts_with("gap = "), "{out}");
}

#[test]
fn study_lists_the_registry_and_refuses_unknown_names_and_arguments() {
    let (code, out, err) = run(&["study"]);
    assert_eq!(code, 0, "{err}");
    for s in dp_bench::studies::STUDIES {
        assert!(out.contains(s.name) && out.contains(s.usage), "{out}");
    }
    let (code, _, err) = run(&["study", "no-such-study"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("unknown study 'no-such-study'") && err.contains("cd-floor"),
        "{err}"
    );
    // The study's own arguments reach it, hyphens included, and a bad one names its usage.
    let (code, _, err) = run(&["study", "definition-sweep", "--bogus"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("\"--bogus\"") && err.contains("--render FILE"),
        "{err}"
    );
    let (code, out, err) = run(&[
        "study", "scaling", "pld", "--steps", "10", "--rates", "0.5", "--reps", "1",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["results"][0]["steps"], 10);
}
