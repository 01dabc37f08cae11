//! Report helpers shared by the experiments: interruption-safe file writes, markdown tables,
//! number formatting and a description of the machine.

use std::fs;
use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};

/// Writes `contents` to `path` atomically: the bytes go to a temporary file in the same
/// directory, which is flushed, synced and then renamed over `path`. An interrupted run
/// leaves either the old file or the new one, never a truncated file.
pub fn write_atomic(path: &Path, contents: &[u8]) -> Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or_else(|| Path::new("."));
    fs::create_dir_all(dir).with_context(|| format!("creating directory {}", dir.display()))?;
    let name = path
        .file_name()
        .with_context(|| format!("{} has no file name", path.display()))?
        .to_string_lossy();
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    {
        let mut f =
            fs::File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
        f.write_all(contents)
            .with_context(|| format!("writing {}", tmp.display()))?;
        f.sync_all()
            .with_context(|| format!("syncing {}", tmp.display()))?;
    }
    fs::rename(&tmp, path)
        .with_context(|| format!("renaming {} to {}", tmp.display(), path.display()))?;
    Ok(())
}

/// Serialises `value` as pretty JSON and writes it with [`write_atomic`].
pub fn write_json_atomic<T: serde::Serialize + ?Sized>(path: &Path, value: &T) -> Result<()> {
    let mut bytes = serde_json::to_vec_pretty(value)?;
    bytes.push(b'\n');
    write_atomic(path, &bytes)
}

/// Who, what and where of one experiment run, written at the top of every `summary.json`
/// so a summary can be read on its own (the records follow in `records`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Metadata {
    /// Experiment name (`dp-cd`, ...).
    pub experiment: String,
    /// Profile (`quick`, `paper`, `smoke`).
    pub profile: String,
    /// Base seed of the benchmark's runs (a public reproduction seed of a synthetic
    /// protocol, not a secret of anyone's fit).
    pub seed: u64,
    /// `git rev-parse HEAD` of the working directory, `null` when git or the repository is
    /// unavailable.
    pub git_commit: Option<String>,
    /// Version of the `dp-bench` crate.
    pub crate_version: String,
    /// When the summary was written, UTC, RFC 3339.
    pub date: String,
    /// The machine the runs used.
    pub machine: Machine,
    /// Wall seconds of the whole experiment (`null` when not measured).
    pub wall_seconds: Option<f64>,
}

/// CPU description of the machine.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Machine {
    /// CPU model name from `/proc/cpuinfo` (`null` when unreadable).
    pub cpu_model: Option<String>,
    /// Logical CPUs available to the process.
    pub logical_cpus: usize,
}

/// A `summary.json`: [`Metadata`] flattened at the top level, then the records.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Summary<R> {
    /// Metadata of the run.
    #[serde(flatten)]
    pub meta: Metadata,
    /// One record per block of the experiment.
    pub records: Vec<R>,
}

impl Metadata {
    /// Metadata of a run of `experiment` now, on this machine.
    pub fn collect(experiment: &str, profile: &str, seed: u64, wall_seconds: Option<f64>) -> Self {
        Metadata {
            experiment: experiment.to_owned(),
            profile: profile.to_owned(),
            seed,
            git_commit: git_commit(),
            crate_version: env!("CARGO_PKG_VERSION").to_owned(),
            date: rfc3339_utc(std::time::SystemTime::now()),
            machine: Machine {
                cpu_model: cpu_model_from_proc(),
                logical_cpus: std::thread::available_parallelism()
                    .map(|n| n.get())
                    .unwrap_or(1),
            },
            wall_seconds,
        }
    }
}

/// `git rev-parse HEAD`, `None` when git is missing or the directory is not a repository.
pub fn git_commit() -> Option<String> {
    let out = std::process::Command::new("git")
        .args(["rev-parse", "HEAD"])
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let s = String::from_utf8(out.stdout).ok()?.trim().to_owned();
    (!s.is_empty()).then_some(s)
}

fn cpu_model_from_proc() -> Option<String> {
    fs::read_to_string("/proc/cpuinfo").ok().and_then(|s| {
        s.lines()
            .find(|l| l.starts_with("model name"))
            .map(|l| l.split_once(':').map_or("", |x| x.1).trim().to_owned())
    })
}

/// Formats a time as RFC 3339 in UTC with second precision (`2024-05-01T12:00:00Z`).
/// Times before the Unix epoch print as the epoch.
pub fn rfc3339_utc(t: std::time::SystemTime) -> String {
    let secs = t
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// The CPU model from `lscpu` (or `/proc/cpuinfo`), with the number of logical CPUs.
pub fn machine_description() -> String {
    let cpus = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let model = std::process::Command::new("lscpu")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| {
            s.lines()
                .find(|l| l.trim_start().starts_with("Model name:"))
                .map(|l| l.split_once(':').map_or("", |x| x.1).trim().to_owned())
        })
        .or_else(|| {
            fs::read_to_string("/proc/cpuinfo").ok().and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("model name"))
                    .map(|l| l.split_once(':').map_or("", |x| x.1).trim().to_owned())
            })
        })
        .unwrap_or_else(|| "unknown CPU".to_owned());
    format!("{model} ({cpus} logical CPUs available)")
}

/// CPU seconds (user + system, all threads) used by this process so far, from
/// `/proc/self/stat` (Linux; `None` elsewhere). Clock ticks are converted with
/// `getconf CLK_TCK` (100 when that is unavailable).
pub fn process_cpu_seconds() -> Option<f64> {
    let stat = fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    let rest = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    let hz = std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse::<f64>().ok())
        .filter(|h| *h > 0.0)
        .unwrap_or(100.0);
    Some((utime + stime) / hz)
}

/// The 1-minute load average from `/proc/loadavg` (Linux; `None` elsewhere).
pub fn load_average() -> Option<f64> {
    fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Formats a number in short scientific notation (`1.23e-03`), `-` for non-finite values.
pub fn sci(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.2e}")
    } else {
        "-".to_owned()
    }
}

/// [`sci`] of a value that may be absent (an empty grid's first or last point): `-` when
/// there is none, as for a non-finite value.
pub fn sci_or_dash(x: Option<f64>) -> String {
    x.map_or_else(|| "-".to_owned(), sci)
}

/// Formats a relative error with four decimals when it is in `[1e-3, 1e4)`, else in scientific notation.
pub fn err4(x: f64) -> String {
    if !x.is_finite() {
        "-".to_owned()
    } else if x.abs() >= 1e4 {
        format!("{x:.2e}")
    } else if x.abs() >= 1e-3 {
        format!("{x:.4}")
    } else {
        format!("{x:.2e}")
    }
}

/// A markdown table from a header and rows of cells.
pub fn markdown_table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut s = String::new();
    s.push('|');
    for h in header {
        s.push_str(&format!(" {h} |"));
    }
    s.push_str("\n|");
    for _ in header {
        s.push_str("---|");
    }
    s.push('\n');
    for r in rows {
        s.push('|');
        for c in r {
            s.push_str(&format!(" {c} |"));
        }
        s.push('\n');
    }
    s
}

/// A table cell for a statistic over `runs` runs: the flag `diverged (k of m runs)` when
/// `diverged` of them ended with a non-finite value (or a failed fit), else `cell`.
pub fn or_diverged(cell: String, diverged: usize, runs: usize) -> String {
    if diverged > 0 {
        format!("diverged ({diverged} of {runs} runs)")
    } else {
        cell
    }
}

/// A finite `f64` as `Some`, else `None` (JSON has no infinities).
pub fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

/// One target of an experiment judged on the run's own numbers, for [`reading_section`].
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// What the paper (or the theory) claims, in words.
    pub target: String,
    /// `Some(true)` met, `Some(false)` missed, `None` not measured in this run.
    pub met: Option<bool>,
    /// The measurement behind the verdict and by how much it meets or misses the target
    /// (numbers from the run, never typed).
    pub by: String,
    /// Why, when the run's data tells (empty otherwise).
    pub reason: String,
}

impl Verdict {
    /// A verdict with no known reason.
    pub fn new(target: impl Into<String>, met: Option<bool>, by: impl Into<String>) -> Self {
        Self {
            target: target.into(),
            met,
            by: by.into(),
            reason: String::new(),
        }
    }
    /// Attaches the reason.
    pub fn because(mut self, reason: impl Into<String>) -> Self {
        self.reason = reason.into();
        self
    }
}

/// The "Reading" section closing every report: a count of the targets met, then one line
/// per target (met / missed / not measured, by how much, and why when known). Generated
/// from the verdicts, which the experiments compute from the run's data.
pub fn reading_section(intro: &str, verdicts: &[Verdict]) -> String {
    let met = verdicts.iter().filter(|v| v.met == Some(true)).count();
    let missed = verdicts.iter().filter(|v| v.met == Some(false)).count();
    let unknown = verdicts.len() - met - missed;
    let mut s = String::from("\n## Reading\n\n");
    if !intro.is_empty() {
        s.push_str(intro);
        s.push(' ');
    }
    s.push_str(&format!(
        "{met} of {} targets met, {missed} missed{}.\n\n",
        verdicts.len(),
        if unknown > 0 {
            format!(", {unknown} not measured in this run")
        } else {
            String::new()
        }
    ));
    for v in verdicts {
        let word = match v.met {
            Some(true) => "met",
            Some(false) => "**missed**",
            None => "not measured",
        };
        s.push_str(&format!("- {word}: {} — {}", v.target, v.by));
        if !v.reason.is_empty() {
            s.push_str(&format!(". Why: {}", v.reason));
        }
        s.push_str(".\n");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_and_leaves_no_temp() {
        let dir = std::env::temp_dir().join(format!("dp-bench-report-{}", std::process::id()));
        let path = dir.join("x.json");
        write_atomic(&path, b"first").unwrap();
        write_atomic(&path, b"second").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "second");
        let names: Vec<_> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn table_and_formatting() {
        let t = markdown_table(&["a", "b"], &[vec!["1".into(), "2".into()]]);
        assert_eq!(t, "| a | b |\n|---|---|\n| 1 | 2 |\n");
        assert_eq!(err4(0.12345), "0.1235");
        assert_eq!(err4(0.0007), "7.00e-4");
        assert_eq!(err4(2.5e9), "2.50e9");
        assert_eq!(sci(f64::NAN), "-");
        assert_eq!(sci_or_dash(None), "-");
        assert_eq!(sci_or_dash(Some(0.125)), sci(0.125));
        assert_eq!(finite(f64::INFINITY), None);
        assert_eq!(or_diverged("0.1".into(), 0, 5), "0.1");
        assert_eq!(or_diverged("-".into(), 2, 5), "diverged (2 of 5 runs)");
    }

    #[test]
    fn rfc3339_dates() {
        use std::time::{Duration, UNIX_EPOCH};
        assert_eq!(rfc3339_utc(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        assert_eq!(
            rfc3339_utc(UNIX_EPOCH + Duration::from_secs(951_782_400 + 3661)),
            "2000-02-29T01:01:01Z"
        );
        assert_eq!(
            rfc3339_utc(UNIX_EPOCH + Duration::from_secs(1_735_689_599)),
            "2024-12-31T23:59:59Z"
        );
    }

    #[test]
    fn summary_flattens_metadata() {
        let s = Summary {
            meta: Metadata::collect("x", "smoke", 3, Some(1.5)),
            records: vec![1, 2],
        };
        let v: serde_json::Value = serde_json::to_value(&s).unwrap();
        assert_eq!(v["experiment"], "x");
        assert_eq!(v["seed"], 3);
        assert_eq!(v["records"], serde_json::json!([1, 2]));
        assert!(v["machine"]["logical_cpus"].as_u64().unwrap() >= 1);
        let back: Summary<i32> = serde_json::from_value(v).unwrap();
        assert_eq!(back, s);
    }

    #[test]
    fn cpu_time_grows_with_work() {
        if let Some(a) = process_cpu_seconds() {
            let mut x = 0u64;
            let start = std::time::Instant::now();
            while start.elapsed().as_millis() < 300 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            }
            std::hint::black_box(x);
            let b = process_cpu_seconds().unwrap();
            assert!(b >= a, "{a} -> {b}");
        }
    }

    #[test]
    fn reading_counts_and_lists_every_verdict() {
        let v = [
            Verdict::new("A below B", Some(true), "0.1 vs 0.2 (x0.50)"),
            Verdict::new("C within 2x", Some(false), "x3.10").because("clipping bias"),
            Verdict::new("D", None, "no run"),
        ];
        let s = reading_section("Quick profile.", &v);
        assert!(s.starts_with(
            "\n## Reading\n\nQuick profile. 1 of 3 targets met, 1 missed, 1 not measured"
        ));
        assert!(s.contains("- met: A below B — 0.1 vs 0.2 (x0.50).\n"));
        assert!(s.contains("- **missed**: C within 2x — x3.10. Why: clipping bias.\n"));
        assert!(s.contains("- not measured: D — no run.\n"));
    }
}
