//! Helpers shared by dp-bench's end-to-end experiment tests (each test file is its own
//! crate and uses a subset, hence `dead_code` allowed).

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use dp_bench::experiments::{ExperimentConfig, Profile};
use dp_bench::runner::ProgressMode;

/// An output directory for one test, `dp-bench-<tag>-<pid>` under the system's temporary
/// directory, emptied if a previous run left it (the experiment creates it).
pub fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("dp-bench-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// A silent run at the `smoke` profile into `out` with base seed `seed`.
pub fn smoke(out: &Path, seed: u64) -> ExperimentConfig {
    ExperimentConfig {
        profile: Profile::Smoke,
        out_dir: out.to_owned(),
        seed,
        progress: ProgressMode::Silent,
    }
}
