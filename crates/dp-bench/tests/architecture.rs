//! Mechanical checks of the invariants stated in ARCHITECTURE.md.

use std::path::{Path, PathBuf};
use std::process::Command;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| panic!("dp-bench is expected at crates/dp-bench"))
}

/// Dependencies point one way (ARCHITECTURE.md's layering), for every kind of
/// dependency (normal, build and dev), and every workspace member has a place in it.
///
/// Checked by breaking it once (not committed), running the built test binary:
/// `dp-erm = { path = "../dp-erm" }` under dp-federated's `[dependencies]` gave
/// "dp-federated depends on dp-erm, which breaks the one-way layering"; `dp-optim` as a
/// normal or build dependency of dp-models (a cycle: `cargo metadata --no-deps` does not
/// resolve it, so the test, not cargo, reports it) gave "dp-models depends on dp-optim,
/// ..."; `dp-bench` as a dev-dependency of dp-models, "dp-models depends on dp-bench,
/// ..."; a new member `crates/dp-zzz` in the workspace's `members`, "workspace member
/// dp-zzz has no place in the layering: add it to `allowed` (and to ARCHITECTURE.md)".
#[test]
fn workspace_dependencies_point_one_way() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(workspace_root())
        .output()
        .unwrap_or_else(|e| panic!("cargo metadata did not run: {e}"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let allowed: &[(&str, &[&str])] = &[
        ("dp-accounting", &[]),
        ("dp-models", &["dp-accounting"]),
        ("dp-optim", &["dp-accounting", "dp-models"]),
        (
            "dp-bench",
            &["dp-accounting", "dp-models", "dp-optim", "dp-federated"],
        ),
        ("dp-federated", &["dp-accounting", "dp-models", "dp-optim"]),
        // The facade and its pipeline: over the library layers only.
        ("dp-erm", &["dp-accounting", "dp-models", "dp-optim"]),
        // The `dp-erm` program and the Python package: front ends over the pipeline.
        (
            "dp-erm-cli",
            &["dp-accounting", "dp-models", "dp-optim", "dp-erm"],
        ),
        (
            "dp-erm-python",
            &["dp-accounting", "dp-models", "dp-optim", "dp-erm"],
        ),
        // Repository automation: may use every layer.
        (
            "xtask",
            &[
                "dp-accounting",
                "dp-models",
                "dp-optim",
                "dp-bench",
                "dp-federated",
                "dp-erm",
                "dp-erm-cli",
            ],
        ),
    ];
    let packages = meta["packages"].as_array().unwrap();
    // Every member is read from the workspace, so a new crate cannot slip past the check:
    // it must be given its place in `allowed` first.
    let workspace: Vec<&str> = packages
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    for name in &workspace {
        assert!(
            allowed.iter().any(|(n, _)| n == name),
            "workspace member {name} has no place in the layering: add it to `allowed` \
             (and to ARCHITECTURE.md)"
        );
    }
    for pkg in packages {
        let name = pkg["name"].as_str().unwrap();
        let ok = allowed.iter().find(|(n, _)| *n == name).unwrap().1;
        for dep in pkg["dependencies"].as_array().unwrap() {
            let dep_name = dep["name"].as_str().unwrap();
            // A dev-dependency of a crate on itself (to turn on a feature such as
            // dp-accounting's `testing` in its own tests) is not a layer crossing.
            if dep_name == name && dep["kind"] == "dev" {
                continue;
            }
            if workspace.contains(&dep_name) {
                assert!(
                    ok.contains(&dep_name),
                    "{name} depends on {dep_name}, which breaks the one-way layering"
                );
            }
        }
    }
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                rust_files(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
}

/// No ambient randomness in the library crates: every draw goes through an explicit RNG.
///
/// Checked by appending each of these lines once to `dp-models/src/split.rs` (not
/// committed): `rand::random()` gave "... uses `rand::random`: library crates take an
/// explicit RNG"; `use rand::{random, Rng};` (which the path patterns alone missed) gave
/// "... imports `rand::random`: ..."; `rand::rng()` gave "... uses `rand::rng()`: ...";
/// `rand::thread_rng()` gave "... uses `thread_rng`: ...".
#[test]
fn library_crates_use_no_ambient_randomness() {
    let root = workspace_root();
    let mut files = Vec::new();
    for krate in [
        "dp-accounting",
        "dp-models",
        "dp-optim",
        "dp-bench",
        "dp-federated",
        "dp-erm",
    ] {
        rust_files(&root.join("crates").join(krate).join("src"), &mut files);
    }
    assert!(!files.is_empty());
    // Every way `rand` offers to draw from a thread-local, OS-seeded generator: by path,
    // or imported by name (`use rand::{random, Rng}` and then `random()`).
    let forbidden = ["thread_rng", "ThreadRng", "rand::rng()", "rand::random"];
    let forbidden_imports = ["random", "rng", "thread_rng"];
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for word in forbidden {
            assert!(
                !text.contains(word),
                "{} uses `{word}`: library crates take an explicit RNG",
                f.display()
            );
        }
        for import in rand_imports(&text) {
            assert!(
                !forbidden_imports.contains(&import.as_str()),
                "{} imports `rand::{import}`: library crates take an explicit RNG",
                f.display()
            );
        }
    }
}

/// The names a source file imports from the `rand` crate's root in `use rand::{a, b}`
/// lists (a single `use rand::x;` is caught by the path patterns above).
fn rand_imports(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("use rand::{") {
        let after = &rest[i + "use rand::{".len()..];
        let end = after.find('}').unwrap_or(after.len());
        names.extend(
            after[..end]
                .split(',')
                .map(|n| n.trim().to_owned())
                .filter(|n| !n.is_empty()),
        );
        rest = &after[end..];
    }
    names
}

/// The library crates (everything but the front ends, the benchmarks and the
/// repository commands).
const LIBRARIES: [&str; 5] = [
    "dp-accounting",
    "dp-models",
    "dp-optim",
    "dp-federated",
    "dp-erm",
];

/// Library crates never panic on user input and report it in their own error types:
/// every public error enum of a library crate is `#[non_exhaustive]` (so that a new
/// failure is not a breaking change), and no library crate depends on `anyhow` (which
/// would erase the error's type for the caller).
///
/// Checked by breaking each once (not committed): without `#[non_exhaustive]` on
/// dp-erm's error enum it gave "crates/dp-erm/src/error.rs:8: `PipelineError` is not
/// #[non_exhaustive]"; with `anyhow.workspace = true` in dp-erm's `[dependencies]`, "dp-erm
/// depends on anyhow: a library crate returns its own error enum".
#[test]
fn library_errors_are_typed_and_non_exhaustive() {
    let root = workspace_root();
    let mut enums = 0;
    for krate in LIBRARIES {
        let dir = root.join("crates").join(krate);
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        assert!(
            !manifest
                .lines()
                .any(|l| l.trim_start().starts_with("anyhow")),
            "{krate} depends on anyhow: a library crate returns its own error enum"
        );
        let mut files = Vec::new();
        rust_files(&dir.join("src"), &mut files);
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            let lines: Vec<&str> = text.lines().collect();
            for (k, line) in lines.iter().enumerate() {
                let Some(rest) = line.trim_start().strip_prefix("pub enum ") else {
                    continue;
                };
                let name = rest.split([' ', '{', '<']).next().unwrap_or("");
                if !name.ends_with("Error") {
                    continue;
                }
                enums += 1;
                // The attributes and doc lines directly above the enum.
                let attrs = lines[..k]
                    .iter()
                    .rev()
                    .take_while(|l| {
                        let l = l.trim_start();
                        l.starts_with("#[") || l.starts_with("///") || l.starts_with(')')
                    })
                    .any(|l| l.contains("#[non_exhaustive]"));
                assert!(
                    attrs,
                    "{}:{}: `{name}` is not #[non_exhaustive]",
                    f.display(),
                    k + 1
                );
            }
        }
    }
    assert!(enums >= LIBRARIES.len(), "found only {enums} error enums");
}
