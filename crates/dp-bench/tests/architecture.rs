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

/// Dependencies point one way: accounting <- models <- optim <- bench <- xtask.
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
    // Every way `rand` offers to draw from a thread-local, OS-seeded generator.
    let forbidden = ["thread_rng", "rand::rng()", "rand::random"];
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for word in forbidden {
            assert!(
                !text.contains(word),
                "{} uses `{word}`: library crates take an explicit RNG",
                f.display()
            );
        }
    }
}
