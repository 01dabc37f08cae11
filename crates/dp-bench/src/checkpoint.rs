//! Checkpoints of long experiment runs: finished blocks saved atomically, so that a stopped
//! run can be resumed without redoing them and without mixing results of another setup.
//!
//! A [`Checkpoint`] is one JSON file in the experiment's output directory. It holds
//!
//! * a **fingerprint**: everything that determines the results (experiment, profile, seed,
//!   the grids, the code that produced them, see [`code_identity`]), as a JSON object;
//! * one **checksum per input** (e.g. a preprocessed problem, see [`DataHash`]), recorded
//!   the first time the input is used and checked every time it is used again;
//! * the **finished blocks**, each a JSON value under a key that names the block's identity
//!   (never its position in the run), in the order they finished.
//!
//! Every change is written to a temporary file that is then renamed over the checkpoint
//! ([`crate::report::write_json_atomic`]), so a run killed at any instant leaves either the
//! old or the new checkpoint, never a truncated one.
//!
//! Resuming ([`Checkpoint::open`] with `resume = true`) refuses a checkpoint whose
//! fingerprint differs from the run's, and [`Checkpoint::check_input`] refuses an input
//! whose checksum differs; the error names each field that differs with both values.
//! Without `resume`, an existing checkpoint is moved aside to `<name>.previous.json` (one
//! generation is kept) and the run starts empty.
//!
//! Floats round-trip bit for bit: the workspace parses JSON with `serde_json`'s
//! `float_roundtrip` feature, so a block read back from the checkpoint equals the block
//! that was written.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::report::write_json_atomic;

/// Version of the checkpoint layout; a file of another version is refused.
pub const FORMAT: u32 = 1;

#[derive(Debug, Clone, Serialize, Deserialize)]
struct State {
    format: u32,
    fingerprint: Map<String, Value>,
    inputs: Vec<(String, String)>,
    blocks: Vec<(String, Value)>,
}

/// A checkpoint file and its contents.
#[derive(Debug)]
pub struct Checkpoint {
    path: PathBuf,
    state: State,
    resumed: usize,
}

impl Checkpoint {
    /// Opens the checkpoint at `path` for a run with `fingerprint`.
    ///
    /// With `resume`, an existing file must carry the same format and fingerprint (else an
    /// error names every field that differs, with the checkpoint's and this run's values);
    /// its blocks are then available through [`Checkpoint::get`]. A missing file starts an
    /// empty checkpoint. Without `resume`, an existing file is renamed to
    /// `<stem>.previous.json` and the checkpoint starts empty. Nothing is written until
    /// the first [`Checkpoint::put`] or [`Checkpoint::check_input`].
    pub fn open(path: &Path, fingerprint: Map<String, Value>, resume: bool) -> Result<Self> {
        let empty = State {
            format: FORMAT,
            fingerprint,
            inputs: Vec::new(),
            blocks: Vec::new(),
        };
        if !path.exists() {
            return Ok(Self {
                path: path.to_owned(),
                state: empty,
                resumed: 0,
            });
        }
        if !resume {
            let aside = path.with_extension("previous.json");
            std::fs::rename(path, &aside).with_context(|| {
                format!(
                    "moving the earlier checkpoint {} aside to {}",
                    path.display(),
                    aside.display()
                )
            })?;
            return Ok(Self {
                path: path.to_owned(),
                state: empty,
                resumed: 0,
            });
        }
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading the checkpoint {}", path.display()))?;
        let old: State = serde_json::from_str(&text).with_context(|| {
            format!(
                "the checkpoint {} is not a checkpoint of this program (delete it or choose another output directory)",
                path.display()
            )
        })?;
        if old.format != FORMAT {
            bail!(
                "the checkpoint {} has format {}, this program writes format {FORMAT}; delete it or choose another output directory",
                path.display(),
                old.format
            );
        }
        let diffs = differences("", &old.fingerprint, &empty.fingerprint);
        if !diffs.is_empty() {
            bail!(
                "refusing to resume from {}: it was written by a run with other settings, so its results cannot be \
                 mixed with this run's. Differences (checkpoint vs this run): {}. Run with the checkpoint's settings, \
                 delete the file, or choose another output directory.",
                path.display(),
                diffs.join("; ")
            );
        }
        let resumed = old.blocks.len();
        Ok(Self {
            path: path.to_owned(),
            state: old,
            resumed,
        })
    }

    /// Number of blocks found in the file when it was opened for resuming.
    pub fn resumed_blocks(&self) -> usize {
        self.resumed
    }

    /// Number of blocks held now.
    pub fn len(&self) -> usize {
        self.state.blocks.len()
    }

    /// Whether no block is held.
    pub fn is_empty(&self) -> bool {
        self.state.blocks.is_empty()
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Records the checksum of input `name`, or, when one is recorded already, checks it:
    /// a different checksum is an error naming the input and both checksums.
    pub fn check_input(&mut self, name: &str, checksum: &str) -> Result<()> {
        match self.state.inputs.iter().find(|(n, _)| n == name) {
            Some((_, old)) if old == checksum => Ok(()),
            Some((_, old)) => bail!(
                "refusing to resume from {}: input {name} differs from the one its blocks were computed on \
                 (checksum {old} in the checkpoint, {checksum} now); delete the file or choose another output directory",
                self.path.display()
            ),
            None => {
                self.state.inputs.push((name.to_owned(), checksum.to_owned()));
                self.save()
            }
        }
    }

    /// The block stored under `key`, if any.
    pub fn get<T: DeserializeOwned>(&self, key: &str) -> Result<Option<T>> {
        self.state
            .blocks
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| {
                T::deserialize(v).with_context(|| {
                    format!(
                        "block {key} of the checkpoint {} cannot be read",
                        self.path.display()
                    )
                })
            })
            .transpose()
    }

    /// Stores a finished block under `key` (replacing one with the same key) and writes the
    /// checkpoint atomically.
    pub fn put<T: Serialize>(&mut self, key: &str, block: &T) -> Result<()> {
        let v = serde_json::to_value(block)?;
        match self.state.blocks.iter_mut().find(|(k, _)| k == key) {
            Some(slot) => slot.1 = v,
            None => self.state.blocks.push((key.to_owned(), v)),
        }
        self.save()
    }

    fn save(&self) -> Result<()> {
        write_json_atomic(&self.path, &self.state)
            .with_context(|| format!("writing the checkpoint {}", self.path.display()))
    }
}

/// The fields of `a` and `b` that differ, as `path: a vs b`; objects are compared field by
/// field so that the message names the grid or setting that changed.
fn differences(prefix: &str, a: &Map<String, Value>, b: &Map<String, Value>) -> Vec<String> {
    let mut out = Vec::new();
    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    for k in keys {
        let name = format!("{prefix}{k}");
        match (a.get(k), b.get(k)) {
            (Some(Value::Object(x)), Some(Value::Object(y))) => {
                out.extend(differences(&format!("{name}."), x, y));
            }
            (x, y) if x == y => {}
            (x, y) => out.push(format!(
                "{name}: {} vs {}",
                x.map_or("(absent)".into(), Value::to_string),
                y.map_or("(absent)".into(), Value::to_string)
            )),
        }
    }
    out
}

/// A streaming 64-bit checksum of numbers (not cryptographic): per word an xor, a multiply
/// by the FNV prime and an xor-shift (each a bijection of the state, so changing one word
/// always changes the result), then the SplitMix64 finaliser. Platform independent.
#[derive(Debug, Clone, Copy)]
pub struct DataHash(u64);

impl Default for DataHash {
    fn default() -> Self {
        Self::new()
    }
}

impl DataHash {
    /// A fresh hash.
    pub fn new() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }

    /// Mixes in one word.
    pub fn word(&mut self, w: u64) {
        let h = (self.0 ^ w).wrapping_mul(0x0000_0100_0000_01b3);
        self.0 = h ^ (h >> 29);
    }

    /// Mixes in the bits of every value (so `-0.0` and `0.0` differ, as they may in a fit).
    pub fn floats(&mut self, xs: &[f64]) {
        self.word(xs.len() as u64);
        for x in xs {
            self.word(x.to_bits());
        }
    }

    /// The checksum as 16 hex digits.
    pub fn finish(self) -> String {
        let mut z = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        format!("{:016x}", z ^ (z >> 31))
    }
}

fn git(root: &Path, args: &[&str]) -> Option<Vec<u8>> {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    out.status.success().then_some(out.stdout)
}

/// What identifies the code that computes the results: the git tree of the workspace's
/// `crates/` directory and the blob of `Cargo.lock` at `HEAD`, plus a checksum of their
/// uncommitted changes and untracked files when there are any. Documentation and `xtask`
/// changes do not change it; any source change of a library or experiment does. Without
/// git (e.g. a source tarball) it is only the crate version, and the caller must keep the
/// code unchanged between a run and its resumption.
pub fn code_identity() -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let version = concat!("dp-bench ", env!("CARGO_PKG_VERSION"));
    let Some(heads) = git(&root, &["rev-parse", "HEAD:crates", "HEAD:Cargo.lock"]) else {
        return format!("{version} (no git: code changes are not detected)");
    };
    let heads = String::from_utf8_lossy(&heads);
    let ids: Vec<&str> = heads.split_whitespace().collect();
    let mut id = format!(
        "{version}, crates/ tree {}, Cargo.lock {}",
        ids.first().unwrap_or(&"?"),
        ids.get(1).unwrap_or(&"?")
    );
    let diff = git(
        &root,
        &[
            "diff",
            "--no-ext-diff",
            "--binary",
            "HEAD",
            "--",
            "crates",
            "Cargo.lock",
        ],
    )
    .unwrap_or_default();
    let untracked = git(
        &root,
        &[
            "ls-files",
            "--others",
            "--exclude-standard",
            "-z",
            "--",
            "crates",
        ],
    )
    .unwrap_or_default();
    if !diff.is_empty() || !untracked.is_empty() {
        let mut h = DataHash::new();
        for b in &diff {
            h.word(u64::from(*b));
        }
        for name in untracked.split(|b| *b == 0).filter(|n| !n.is_empty()) {
            for b in name {
                h.word(u64::from(*b));
            }
            let path = root.join(String::from_utf8_lossy(name).as_ref());
            for b in std::fs::read(path).unwrap_or_default() {
                h.word(u64::from(b));
            }
        }
        id.push_str(&format!(", uncommitted changes {}", h.finish()));
    }
    id
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fp(seed: u64, batches: &[u64]) -> Map<String, Value> {
        let v = serde_json::json!({
            "experiment": "toy",
            "seed": seed,
            "settings": { "batches": batches, "epochs": 2 },
        });
        match v {
            Value::Object(m) => m,
            _ => unreachable!(),
        }
    }

    fn tmp(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("dp-bench-checkpoint-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d.join("checkpoint.json")
    }

    #[test]
    fn blocks_round_trip_bit_for_bit_and_resume_skips_them() {
        let path = tmp("roundtrip");
        // Values whose shortest decimal form needs 17 digits, where a lossy float parser errs.
        let xs: Vec<f64> = (1..200u64)
            .map(|k| (k as f64).sqrt() * 1e-3 + f64::from_bits(0x3ff0_0000_0000_0000 + k))
            .collect();
        let mut c = Checkpoint::open(&path, fp(1, &[10]), true).unwrap();
        assert_eq!(c.resumed_blocks(), 0);
        c.check_input("data", "00ff").unwrap();
        c.put("a", &xs).unwrap();
        c.put("b", &vec![1.0f64]).unwrap();
        let c = Checkpoint::open(&path, fp(1, &[10]), true).unwrap();
        assert_eq!(c.resumed_blocks(), 2);
        let back: Vec<f64> = c.get("a").unwrap().unwrap();
        assert!(back
            .iter()
            .zip(&xs)
            .all(|(a, b)| a.to_bits() == b.to_bits()));
        assert!(c.get::<Vec<f64>>("missing").unwrap().is_none());
        std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
    }

    #[test]
    fn a_mismatching_checkpoint_is_refused_naming_the_difference() {
        let path = tmp("mismatch");
        let mut c = Checkpoint::open(&path, fp(1, &[10, 100]), true).unwrap();
        c.check_input("adult/svm", "0001").unwrap();
        c.put("a", &1.0).unwrap();
        let err = Checkpoint::open(&path, fp(2, &[10]), true)
            .unwrap_err()
            .to_string();
        assert!(err.contains("seed: 1 vs 2"), "{err}");
        assert!(err.contains("settings.batches: [10,100] vs [10]"), "{err}");
        assert!(!err.contains("epochs"), "{err}");
        let mut c = Checkpoint::open(&path, fp(1, &[10, 100]), true).unwrap();
        c.check_input("adult/svm", "0001").unwrap();
        let err = c.check_input("adult/svm", "0002").unwrap_err().to_string();
        assert!(err.contains("adult/svm") && err.contains("0001") && err.contains("0002"));
        // Without resume the old file is kept aside and the run starts empty.
        let c = Checkpoint::open(&path, fp(2, &[10]), false).unwrap();
        assert!(c.is_empty());
        assert!(path.with_extension("previous.json").exists());
        std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
    }

    #[test]
    fn data_hash_sees_every_word() {
        let base = [1.0, 2.0, 3.0];
        let mut h = DataHash::new();
        h.floats(&base);
        let a = h.finish();
        for k in 0..3 {
            let mut x = base;
            x[k] = f64::from_bits(x[k].to_bits() ^ 1);
            let mut h = DataHash::new();
            h.floats(&x);
            assert_ne!(h.finish(), a);
        }
        let mut h = DataHash::new();
        h.floats(&[1.0, 2.0]);
        h.floats(&[3.0]);
        assert_ne!(h.finish(), a, "lengths are part of the checksum");
    }
}
