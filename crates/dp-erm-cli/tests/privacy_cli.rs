//! `dp-erm privacy` (alias `cargo xtask privacy`): every example line of the calculator's specification and bad arguments, run through the
//! built binary. Expected values are independent references (closed forms / mpmath), not the
//! calculator's own output.

use std::process::Command;

fn run(args: &str) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_dp-erm"))
        .arg("privacy")
        .args(args.split_whitespace())
        .output()
        .expect("run dp-erm");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs a successful query and returns the value of its last line `key = value`.
fn value(args: &str, key: &str) -> f64 {
    let (code, out, err) = run(args);
    assert_eq!(code, 0, "{args}: exit {code}, stderr {err}");
    let last = out.lines().last().expect("some output");
    let (k, v) = last.split_once(" = ").expect("key = value");
    assert_eq!(k, key, "{args}: last line {last}");
    v.parse().expect("a number")
}

/// Runs a bad query: exit code 2, an error on stderr naming `needle`, no panic. Errors
/// of the calculator are one line; argument errors are clap's whole message (first line
/// `error: ...`, then the possible values or the usage).
fn fails(args: &str, needle: &str) {
    let (code, out, err) = run(args);
    assert_eq!(
        code, 2,
        "{args}: should fail with exit code 2, printed {out}"
    );
    assert!(err.starts_with("error: "), "{args}: {err}");
    let from_clap = err.contains("For more information, try '--help'.");
    if !from_clap {
        assert_eq!(err.trim().lines().count(), 1, "{args}: not one line: {err}");
    }
    assert!(err.contains(needle), "{args}: {err} lacks {needle}");
    assert!(!err.contains("panicked"), "{args}: {err}");
}

const G: &str = "epsilon --mechanism gaussian --sigma 2 --steps 100 --delta 1e-5";
// mu = sqrt(100)/2 = 5: exact eps at 1e-5 (mpmath, analytic Gaussian curve).
const G_EXACT: f64 = 33.103_732_335_922_465;

#[test]
fn gaussian_epsilon_lines() {
    let rdp = value(&format!("{G} --accountant rdp"), "epsilon");
    let zcdp = value(&format!("{G} --accountant zcdp"), "epsilon");
    let gdp = value(&format!("{G} --accountant gdp"), "epsilon");
    let pld = value(&format!("{G} --accountant pld"), "epsilon");
    // RDP with the improved conversion, minimised over continuous alpha: rho = 12.5,
    // eps(alpha) = rho alpha + ln((alpha-1)/alpha) - (ln delta + ln alpha)/(alpha - 1).
    let rho: f64 = 12.5;
    let best = (1..20_000)
        .map(|i| 1.0 + i as f64 * 1e-4)
        .map(|a: f64| rho * a + ((a - 1.0) / a).ln() - (1e-5f64.ln() + a.ln()) / (a - 1.0))
        .fold(f64::INFINITY, f64::min);
    assert!(rdp >= best - 1e-6 && rdp < best + 1e-3, "{rdp} vs {best}");
    assert!(zcdp <= rdp + 1e-9 && zcdp > G_EXACT);
    assert!(gdp >= G_EXACT && gdp - G_EXACT < 1e-6, "{gdp}");
    assert!(pld >= G_EXACT && pld - G_EXACT < 1e-3, "{pld}");
}

#[test]
fn subsampled_epsilon_lines() {
    let a = "epsilon --mechanism subsampled-gaussian --sampling-rate 0.01 --sigma 1.1 --steps 10000 --delta 1e-5";
    let rdp = value(&format!("{a} --accountant rdp"), "epsilon");
    let pld = value(&format!("{a} --accountant pld"), "epsilon");
    // Public landmarks: RDP about 5.63 (Opacus / dp_accounting), PLD / PRV about 5.19.
    assert!(rdp > 5.5 && rdp < 5.7, "{rdp}");
    assert!(pld > 5.17 && pld < 5.21, "{pld}");
    let (code, out, _) = run(&format!("{a} --accountant pld"));
    assert_eq!(code, 0);
    assert!(out.contains("pld interval = ["), "{out}");
}

#[test]
fn laplace_epsilon_lines() {
    let a = "epsilon --mechanism laplace --scale 10 --steps 50 --delta 1e-6";
    let basic = value(&format!("{a} --accountant basic"), "epsilon");
    assert!((5.0..5.0 + 1e-9).contains(&basic), "{basic}");
    let adv = value(&format!("{a} --accountant advanced"), "epsilon");
    let drv = (2.0 * 50.0 * 1e6f64.ln()).sqrt() * 0.1 + 50.0 * 0.1 * 0.1f64.exp_m1();
    assert!(adv >= drv && adv < drv + 1e-9, "{adv} vs {drv}");
    // Kairouz-Oh-Viswanath optimum for 50-fold 0.1-DP at 1e-6 (mpmath): 3.1729027340192.
    let opt = value(&format!("{a} --accountant optimal"), "epsilon");
    assert!((3.172_902_734_019..3.172_902_735).contains(&opt), "{opt}");
    let rdp = value(&format!("{a} --accountant rdp"), "epsilon");
    assert!(rdp > opt && rdp < basic, "{rdp}");
    let pld = value(&format!("{a} --accountant pld"), "epsilon");
    assert!(pld < opt && pld > 2.5, "{pld}");
}

#[test]
fn sigma_line_rdp() {
    let a = "sigma --mechanism subsampled-gaussian --sampling-rate 0.01 --steps 1000 --epsilon 1 --delta 1e-5 --accountant rdp";
    let s = value(a, "sigma");
    // Feeding the answer back gives epsilon <= 1, and 1 % less noise exceeds it.
    let e = value(
        &format!("epsilon --mechanism subsampled-gaussian --sampling-rate 0.01 --sigma {s} --steps 1000 --delta 1e-5 --accountant rdp"),
        "epsilon",
    );
    assert!(e <= 1.0, "{e}");
    let e2 = value(
        &format!("epsilon --mechanism subsampled-gaussian --sampling-rate 0.01 --sigma {} --steps 1000 --delta 1e-5 --accountant rdp", s * 0.99),
        "epsilon",
    );
    assert!(e2 > 1.0, "{e2}");
}

#[test]
fn sigma_line_pld() {
    let a = "sigma --mechanism subsampled-gaussian --sampling-rate 0.01 --steps 1000 --epsilon 1 --delta 1e-5 --accountant pld";
    let s = value(a, "sigma");
    let r = value(&a.replace("--accountant pld", "--accountant rdp"), "sigma");
    assert!(s <= r, "PLD needs no more noise than RDP: {s} vs {r}");
}

#[test]
fn rdp_line_integer_order() {
    // Gaussian: alpha / (2 sigma^2) exactly.
    let v = value("rdp --mechanism gaussian --sigma 2 --order 3", "rdp");
    assert!((v - 0.375).abs() < 1e-12, "{v}");
    // Subsampled Gaussian at integer order 2: ln(1 + q^2 (e^{1/sigma^2} - 1)).
    let v = value(
        "rdp --mechanism subsampled-gaussian --sampling-rate 0.01 --sigma 1.1 --order 2",
        "rdp",
    );
    let exact = (1e-4 * (1.0f64 / 1.21).exp_m1()).ln_1p();
    assert!(
        (v - exact).abs() < 1e-12 * exact.max(1e-300) + 1e-18,
        "{v} vs {exact}"
    );
}

#[test]
fn rdp_line_fractional_order() {
    let v = value(
        "rdp --mechanism subsampled-gaussian --sampling-rate 0.01 --sigma 1.1 --order 2.5",
        "rdp",
    );
    let lo = value(
        "rdp --mechanism subsampled-gaussian --sampling-rate 0.01 --sigma 1.1 --order 2",
        "rdp",
    );
    let hi = value(
        "rdp --mechanism subsampled-gaussian --sampling-rate 0.01 --sigma 1.1 --order 3",
        "rdp",
    );
    assert!(lo <= v && v <= hi, "{lo} {v} {hi}");
}

#[test]
fn json_is_one_object() {
    let (code, out, _) = run(&format!("{G} --accountant gdp --json"));
    assert_eq!(code, 0);
    assert_eq!(out.trim().lines().count(), 1, "{out}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    let eps = v["epsilon"].as_f64().unwrap();
    assert!(eps >= G_EXACT && eps - G_EXACT < 1e-6);
    assert_eq!(v["accountant"], "gdp");
}

#[test]
fn sensitivity_scales_sigma() {
    // sigma 4 with sensitivity 2 is noise multiplier 2.
    let a = value(&format!("{G} --accountant gdp"), "epsilon");
    let b = value(
        "epsilon --mechanism gaussian --sigma 4 --sensitivity 2 --steps 100 --delta 1e-5 --accountant gdp",
        "epsilon",
    );
    assert_eq!(a, b);
}

#[test]
fn bad_arguments_are_clear_errors() {
    fails(
        "epsilon --mechanism laplace --scale 10 --steps 50 --delta 1e-6 --accountant gdp",
        "gdp",
    );
    fails(
        "epsilon --mechanism laplace --scale 10 --steps 50 --delta 1e-6 --accountant zcdp",
        "zcdp",
    );
    fails(
        "epsilon --mechanism laplace --sigma 1 --steps 50 --delta 1e-6",
        "--sigma",
    );
    fails(
        "epsilon --mechanism gaussian --scale 1 --steps 5 --delta 1e-6",
        "--scale",
    );
    fails(
        "epsilon --mechanism gaussian --sigma 1 --sampling-rate 0.1 --steps 5 --delta 1e-6",
        "--sampling-rate",
    );
    fails("epsilon --mechanism subsampled-gaussian --sampling-rate 0.1 --sigma 1 --steps 5 --delta 1e-6 --accountant gdp", "subsampled");
    fails(
        "epsilon --mechanism gaussian --sigma 1 --steps 5 --delta 1e-6 --accountant basic",
        "basic",
    );
    fails("epsilon --mechanism gaussian --sigma 1 --steps 5 --delta 1e-6 --accountant gdp --conversion mironov", "--conversion");
    fails(
        "epsilon --mechanism gaussian --sigma 1 --steps 5 --delta 1.5",
        "delta",
    );
    fails(
        "epsilon --mechanism gaussian --sigma 1 --steps 5",
        "--delta",
    );
    fails(
        "epsilon --mechanism gaussian --sigma -1 --steps 5 --delta 1e-5",
        "sigma",
    );
    fails(
        "epsilon --mechanism gaussian --sigma abc --steps 5 --delta 1e-5",
        "--sigma",
    );
    fails(
        "epsilon --mechanism gaussian --sigma 1 --steps 0 --delta 1e-5",
        "steps",
    );
    fails("epsilon --mechanism subsampled-gaussian --sampling-rate 2 --sigma 1 --steps 5 --delta 1e-5", "sampling rate");
    fails(
        "epsilon --mechanism subsampled-gaussian --sigma 1 --steps 5 --delta 1e-5",
        "--sampling-rate",
    );
    fails(
        "epsilon --mechanism laplace --scale 0 --steps 5 --delta 1e-5",
        "--scale",
    );
    fails(
        "epsilon --mechanism gaussian --sigma 1 --steps 5 --delta 1e-5 --epsilon 1",
        "--epsilon",
    );
    fails(
        "sigma --mechanism laplace --scale 1 --steps 5 --epsilon 1 --delta 1e-5",
        "laplace",
    );
    fails(
        "sigma --mechanism gaussian --steps 5 --delta 1e-5",
        "--epsilon",
    );
    fails(
        "sigma --mechanism gaussian --steps 5 --epsilon -1 --delta 1e-5",
        "epsilon",
    );
    fails("rdp --mechanism gaussian --sigma 1", "--order");
    fails("rdp --mechanism gaussian --sigma 1 --order 0.5", "--order");
    fails(
        "rdp --mechanism gaussian --sigma 1 --order 2 --delta 1e-5",
        "--delta",
    );
    fails("epsilon --mechanism poisson --sigma 1", "poisson");
    fails(
        "epsilon --mechanism gaussian --sigma 1 --bogus 3",
        "--bogus",
    );
    fails("frobnicate", "frobnicate");
}

/// The PLD accountant never reports above the RDP bound: over a long composition its
/// upper bound alone is looser (208.9 here), and the calculator then reports the RDP
/// value and says so. `--steps` also takes scientific notation.
#[test]
fn pld_epsilon_is_never_above_the_rdp_bound() {
    let q = "epsilon --mechanism gaussian --sigma 50 --steps 5.6e5 --delta 1e-6 --accountant";
    let pld = value(&format!("{q} pld"), "epsilon");
    let rdp = value(&format!("{q} rdp"), "epsilon");
    assert!(pld <= rdp, "pld {pld} > rdp {rdp}");
    let (_, out, _) = run(&format!("{q} pld"));
    assert!(out.contains("reported bound = rdp"), "{out}");
    // Where the PLD bound is the tighter one, it is reported as such.
    let (_, out, _) = run(
        "epsilon --mechanism gaussian --sigma 500 --steps 560000 --delta 1e-6 --accountant pld",
    );
    assert!(out.contains("reported bound = pld upper bound"), "{out}");
    fails(
        "epsilon --mechanism gaussian --sigma 2 --steps 1.5 --delta 1e-6",
        "whole number",
    );
}
