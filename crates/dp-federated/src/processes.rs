//! Launching the party and server binaries as OS processes (the demo and the process
//! tests). Every child is killed and reaped when the [`Processes`] value is dropped, on
//! success and on error alike, so no party outlives its launcher; a party also exits
//! by itself after the server's Stop or after its idle time.

use crate::cli::JobArgs;
use crate::coordinator::FitOutcome;
use crate::error::{ConfigError, FedError, Result};
use crate::party::{InjectedFault, PartyData};
use crate::tls::TestPki;
use dp_optim::DistDpFw;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A program and the arguments that come before a role's own (e.g. `xtask` and
/// `federated-party`, or the `dp-federated-party` binary and nothing).
#[derive(Debug, Clone)]
pub struct Launcher {
    /// The executable.
    pub program: PathBuf,
    /// Leading arguments (a subcommand).
    pub prefix: Vec<String>,
}

impl Launcher {
    /// A binary run as is.
    pub fn binary(program: impl Into<PathBuf>) -> Self {
        Self {
            program: program.into(),
            prefix: Vec::new(),
        }
    }
    fn command(&self) -> Command {
        let mut c = Command::new(&self.program);
        c.args(&self.prefix);
        c
    }
}

/// Running party processes, killed and reaped on drop.
#[derive(Debug)]
pub struct Processes {
    children: Vec<Child>,
    /// Party `k`'s `host:port`.
    pub addrs: Vec<String>,
}

impl Processes {
    /// Writes party `k`'s column file, secret seed file and certificates into `dir`,
    /// and starts `party_bin` for each on 127.0.0.1 (any free port), with `faults[k]`
    /// (default: none). Returns once every party listens.
    pub fn start_parties(
        party: &Launcher,
        dir: &Path,
        data: &[PartyData],
        seeds: &[u64],
        pki: &TestPki,
        faults: &[InjectedFault],
    ) -> Result<Self> {
        std::fs::create_dir_all(dir)
            .map_err(|e| FedError::io(format!("creating {}", dir.display()), e))?;
        pki.write(dir)?;
        let mut me = Self {
            children: Vec::new(),
            addrs: Vec::new(),
        };
        for (k, (d, seed)) in data.iter().zip(seeds).enumerate() {
            let csv = dir.join(format!("party-{k}.csv"));
            d.write_csv(&csv)?;
            let seed_file = dir.join(format!("party-{k}.seed"));
            std::fs::write(&seed_file, seed.to_string())
                .map_err(|e| FedError::io(format!("writing {}", seed_file.display()), e))?;
            let fault = match faults.get(k).copied().unwrap_or_default() {
                InjectedFault::None => "none".to_string(),
                InjectedFault::ExitAt(t) => format!("exit:{t}"),
                InjectedFault::HangAt(t) => format!("hang:{t}"),
                InjectedFault::MalformedAt(t) => format!("malformed:{t}"),
                InjectedFault::WrongRoundAt(t) => format!("wrong-round:{t}"),
            };
            let mut child = party
                .command()
                .arg("--data")
                .arg(&csv)
                .arg("--parties")
                .arg(data.len().to_string())
                .arg("--seed-file")
                .arg(&seed_file)
                .arg("--cert")
                .arg(dir.join(format!("party-{k}.pem")))
                .arg("--key")
                .arg(dir.join(format!("party-{k}.key")))
                .arg("--client-ca")
                .arg(dir.join("coordinator-ca.pem"))
                .args(["--idle-secs", "60", "--inject-fault", &fault])
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit())
                .spawn()
                .map_err(|e| FedError::io(format!("starting {}", party.program.display()), e))?;
            let stdout = child.stdout.take();
            me.children.push(child);
            let mut line = String::new();
            if let Some(out) = stdout {
                BufReader::new(out)
                    .read_line(&mut line)
                    .map_err(|e| FedError::io(format!("reading party {k}'s address"), e))?;
            }
            let addr = line
                .trim()
                .strip_prefix("listening on ")
                .ok_or_else(|| ConfigError::PartyStart {
                    party: k,
                    printed: line.clone(),
                })?
                .to_string();
            me.addrs.push(addr);
        }
        Ok(me)
    }

    /// Kills party `k` now (SIGKILL on Unix).
    pub fn kill(&mut self, k: usize) -> Result<()> {
        let c = self.children.get_mut(k).ok_or(ConfigError::NoParty(k))?;
        c.kill()
            .map_err(|e| FedError::io(format!("killing party {k}"), e))?;
        let _ = c.wait();
        Ok(())
    }

    /// Waits up to `timeout` for every party to exit by itself (after Stop); returns
    /// how many were still running (those are then killed on drop).
    pub fn wait_all(&mut self, timeout: Duration) -> usize {
        let start = std::time::Instant::now();
        loop {
            let running = self
                .children
                .iter_mut()
                .map(|c| matches!(c.try_wait(), Ok(None)))
                .filter(|&r| r)
                .count();
            if running == 0 || start.elapsed() > timeout {
                return running;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Processes {
    fn drop(&mut self) {
        for c in &mut self.children {
            if matches!(c.try_wait(), Ok(None)) {
                let _ = c.kill();
            }
            let _ = c.wait();
        }
    }
}

/// The server binary's output.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct ServerOutput {
    /// The fit.
    pub fit: FitOutcomeJson,
    /// Wall time of the fit (connect + setup + rounds), seconds.
    pub seconds: f64,
    /// The final iterate's raw bits.
    pub coefficient_bits: Vec<u64>,
    /// Every iterate's raw bits (with `--iterates`).
    pub iterate_bits: Vec<Vec<u64>>,
}

impl ServerOutput {
    /// Whether every iterate equals `other`'s bit for bit.
    pub fn same_bits(&self, other: &FitOutcome) -> bool {
        let b = |v: &[f64]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
        self.coefficient_bits == b(&other.coefficients)
            && self.iterate_bits.len() == other.iterates.len()
            && self
                .iterate_bits
                .iter()
                .zip(&other.iterates)
                .all(|(a, c)| *a == b(c))
    }
}

/// [`FitOutcome`] as read back from JSON.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct FitOutcomeJson {
    /// Final iterate (decimal; use [`ServerOutput::coefficient_bits`] for exact bits).
    pub coefficients: Vec<f64>,
    /// Encoded bytes.
    pub traffic: TrafficJson,
    /// Unsketched baseline, bytes per party.
    pub unsketched_uplink_bytes: u64,
    /// Each party's epsilon.
    pub party_epsilon: Vec<f64>,
}

/// [`crate::coordinator::Traffic`] as read back from JSON.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
pub struct TrafficJson {
    /// Setup, server to party.
    pub setup_down: Vec<u64>,
    /// Setup, party to server.
    pub setup_up: Vec<u64>,
    /// Rounds, server to party.
    pub down: Vec<u64>,
    /// Rounds, party to server.
    pub up: Vec<u64>,
}

/// Runs `server_bin` against `addrs` with the certificates in `dir`; returns its
/// output, or its error message (it names the party and the round) as
/// [`FedError::ServerProcess`]. The server process is killed after `timeout`
/// ([`FedError::ServerTimeout`]).
pub fn run_server(
    server: &Launcher,
    dir: &Path,
    addrs: &[String],
    job: &DistDpFw,
    deadline: Duration,
    iterates: bool,
    timeout: Duration,
) -> Result<ServerOutput> {
    let mut cmd = server.command();
    for a in addrs {
        cmd.arg("--party").arg(a);
    }
    cmd.arg("--cert")
        .arg(dir.join("coordinator.pem"))
        .arg("--key")
        .arg(dir.join("coordinator.key"))
        .arg("--party-ca")
        .arg(dir.join("party-ca.pem"))
        .args(JobArgs::to_args(job)?)
        .args(["--deadline-ms", &deadline.as_millis().to_string()]);
    if iterates {
        cmd.arg("--iterates");
    }
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| FedError::io(format!("starting {}", server.program.display()), e))?;
    // Drain both pipes while waiting: a large JSON would otherwise fill the pipe and
    // block the server forever.
    let drain = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut buf);
            }
            buf
        })
    };
    let out_t = drain(child.stdout.take().map(|p| Box::new(p) as _));
    let err_t = drain(child.stderr.take().map(|p| Box::new(p) as _));
    let start = std::time::Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if start.elapsed() > timeout => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(FedError::ServerTimeout(timeout));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => return Err(FedError::io("waiting for the server", e)),
        }
    };
    let stdout = out_t.join().unwrap_or_default();
    let stderr = err_t.join().unwrap_or_default();
    if !status.success() {
        return Err(FedError::ServerProcess {
            status: status.to_string(),
            stderr: String::from_utf8_lossy(&stderr).trim().to_string(),
        });
    }
    serde_json::from_slice(&stdout).map_err(|e| ConfigError::ServerOutput(e).into())
}
