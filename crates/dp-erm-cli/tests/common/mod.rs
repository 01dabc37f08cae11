//! Helpers shared by the `dp-erm` program's integration tests (each test file is its own
//! crate and uses a subset, hence `dead_code` allowed): run the built binary, a fresh
//! scratch directory per test, and the `key = value` lines of its text report.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The flags of a private logistic DP-CD fit at epsilon 1, delta 1e-6 (no data, bound
/// or output named), for tests that vary the rest.
pub const PRIVATE_LOGISTIC_FIT: [&str; 8] = [
    "--loss",
    "logistic",
    "--algorithm",
    "dp-cd",
    "--epsilon",
    "1",
    "--delta",
    "1e-6",
];

/// The built `dp-erm` binary, ready for arguments.
pub fn dp_erm() -> Command {
    Command::new(env!("CARGO_BIN_EXE_dp-erm"))
}

/// Runs `cmd` to completion: (exit status success, stdout, stderr).
pub fn output(cmd: &mut Command) -> (bool, String, String) {
    let out = cmd.output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs `dp-erm ARGS`: (exit status success, stdout, stderr).
pub fn run(args: &[&str]) -> (bool, String, String) {
    output(dp_erm().args(args))
}

/// A fresh directory for one test's files, `dp-erm-<suite>-<name>-<pid>` under the
/// system's temporary directory (emptied if a previous run left it).
pub fn scratch(suite: &str, name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dp-erm-{suite}-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// An embedded data set of `crates/dp-bench/data/`, as a path argument.
pub fn data(name: &str) -> String {
    format!("{}/../dp-bench/data/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// A path as a command-line argument.
pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The number on the report line `key = value`, if there is one and it parses.
pub fn field(text: &str, key: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{key} = ")))
        .and_then(|v| v.trim().parse().ok())
}

/// The index of the report line `key = ...`; panics (failing the test) with the report
/// when there is none.
pub fn position(text: &str, key: &str) -> usize {
    text.lines()
        .position(|l| l.starts_with(&format!("{key} = ")))
        .unwrap_or_else(|| panic!("no line {key} = ... in\n{text}"))
}

/// The JSON object printed by `--json`.
pub fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text.trim()).unwrap()
}
