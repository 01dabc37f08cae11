//! Parties and server as real OS processes on loopback: bit-equality with the
//! in-process run, and every fault (killed mid-fit, exit, hang, malformed, out of
//! round) stops the server with an error naming the party and the round. Small n, so
//! each test takes about a second.

use dp_federated::loopback::{self, synthetic_lasso};
use dp_federated::party::{InjectedFault, PartyData, PartySecrets};
use dp_federated::processes::{run_server, Launcher, Processes};
use dp_federated::split_contiguous;
use dp_federated::tls::TestPki;
use dp_optim::{DistDpFw, DistDpFwParams};
use std::path::{Path, PathBuf};
use std::time::Duration;

const PARTY: &str = env!("CARGO_BIN_EXE_dp-federated-party");
const SERVER: &str = env!("CARGO_BIN_EXE_dp-federated-server");
const SEEDS: [u64; 3] = [11, 12, 13];

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("dp-federated-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn problem(rounds: u64) -> (DistDpFw, Vec<PartyData>) {
    let (cols, y) = synthetic_lasso(50, 9, 8);
    let job = DistDpFwParams::new(1.0)
        .parties(3)
        .iterations(rounds)
        .sketch_dim(10)
        .sketch_seed(3)
        .epsilon(2.0)
        .delta(1e-5)
        .feature_bound(1.0)
        .label_bound(1.0)
        .build()
        .unwrap();
    (job, split_contiguous(cols, y, 3).unwrap())
}

fn start(dir: &Path, data: &[PartyData], faults: &[InjectedFault]) -> Processes {
    let pki = TestPki::generate(data.len()).unwrap();
    Processes::start_parties(&Launcher::binary(PARTY), dir, data, &SEEDS, &pki, faults).unwrap()
}

#[test]
fn processes_match_the_in_process_run_bit_for_bit_and_exit_after_stop() {
    let dir = scratch("ok");
    let (job, data) = problem(20);
    let mut procs = start(&dir, &data, &[]);
    let out = run_server(
        &Launcher::binary(SERVER),
        &dir,
        &procs.addrs,
        &job,
        Duration::from_secs(10),
        true,
        Duration::from_secs(60),
    )
    .unwrap();
    let secrets = SEEDS.iter().map(|&s| PartySecrets::from_u64(s)).collect();
    let local =
        loopback::run_in_process(&job, data, secrets, Duration::from_secs(10), true).unwrap();
    assert_eq!(out.iterate_bits.len(), 20);
    assert!(out.same_bits(&local.fit));
    assert_eq!(out.fit.traffic.up, local.fit.traffic.up);
    assert_eq!(out.fit.traffic.down, local.fit.traffic.down);
    // The parties leave by themselves after the server's Stop.
    assert_eq!(procs.wait_all(Duration::from_secs(5)), 0);
    let _ = std::fs::remove_dir_all(&dir);
}

fn expect_failure(name: &str, faults: &[InjectedFault], deadline: Duration, want: &str) {
    let dir = scratch(name);
    let (job, data) = problem(15);
    let _procs = start(&dir, &data, faults);
    let e = run_server(
        &Launcher::binary(SERVER),
        &dir,
        &_procs.addrs,
        &job,
        deadline,
        false,
        Duration::from_secs(60),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("party 1") && e.contains("round 6"),
        "{name}: {e}"
    );
    assert!(e.contains(want), "{name}: {e}");
    assert!(e.contains("nothing is released"), "{name}: {e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_party_that_exits_mid_fit_stops_the_server() {
    let f = [InjectedFault::None, InjectedFault::ExitAt(6)];
    expect_failure("exit", &f, Duration::from_secs(10), "died");
}

#[test]
fn a_party_that_hangs_past_the_deadline_stops_the_server() {
    let f = [InjectedFault::None, InjectedFault::HangAt(6)];
    expect_failure(
        "hang",
        &f,
        Duration::from_millis(700),
        "missed the deadline",
    );
}

#[test]
fn a_malformed_uplink_stops_the_server() {
    let f = [InjectedFault::None, InjectedFault::MalformedAt(6)];
    expect_failure("malformed", &f, Duration::from_secs(10), "malformed");
}

#[test]
fn an_out_of_round_uplink_stops_the_server() {
    let f = [InjectedFault::None, InjectedFault::WrongRoundAt(6)];
    expect_failure("wrong-round", &f, Duration::from_secs(10), "out-of-round");
}

#[test]
fn killing_a_party_process_mid_fit_stops_the_server() {
    // Party 1 stops answering at round 6 (it is then mid-fit for certain); the test kills
    // it with SIGKILL while the server waits, well before the server's 20 s deadline, so
    // the failure seen is the death, not the deadline.
    let dir = scratch("kill");
    let (job, data) = problem(15);
    let mut procs = start(
        &dir,
        &data,
        &[InjectedFault::None, InjectedFault::HangAt(6)],
    );
    let addrs = procs.addrs.clone();
    let d2 = dir.clone();
    let server = std::thread::spawn(move || {
        run_server(
            &Launcher::binary(SERVER),
            &d2,
            &addrs,
            &job,
            Duration::from_secs(20),
            false,
            Duration::from_secs(60),
        )
    });
    std::thread::sleep(Duration::from_millis(1500));
    let t0 = std::time::Instant::now();
    procs.kill(1).unwrap();
    let e = server.join().unwrap().unwrap_err().to_string();
    assert!(
        t0.elapsed() < Duration::from_secs(10),
        "waited for the deadline: {e}"
    );
    assert!(
        e.contains("party 1") && e.contains("round 6") && e.contains("died"),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
