//! Both transports: bit-identical iterates, equal byte counts, equality with the
//! in-process solver `DistDpFw`, faults with the in-process transport, mutual TLS.

use dp_federated::coordinator::{self, Transport};
use dp_federated::inproc::InProcess;
use dp_federated::loopback::{self, synthetic_lasso};
use dp_federated::party::{InjectedFault, PartyData, PartyHost, PartySecrets, Refusal};
use dp_federated::{pb, split_contiguous, wire, ConfigError, DataError, Fault, FedError, Phase};
use dp_models::{Dataset, DenseDesign};
use dp_optim::{DistDpFw, DistDpFwParams, Solver};
use rand::SeedableRng;
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(10);

/// The job of these tests for `k` parties: radius 1, `T` = 25, `m` = 12 (seed 5),
/// `(eps, delta)` = (2, 1e-5), bounds `B = Y = 1`.
fn params(k: usize) -> DistDpFwParams {
    DistDpFwParams::new(1.0)
        .parties(k)
        .iterations(25)
        .sketch_dim(12)
        .sketch_seed(5)
        .epsilon(2.0)
        .delta(1e-5)
        .feature_bound(1.0)
        .label_bound(1.0)
}

fn problem(k: usize) -> (DistDpFw, Vec<PartyData>) {
    let (cols, y) = synthetic_lasso(60, 9, 3);
    (
        params(k).build().unwrap(),
        split_contiguous(cols, y, k).unwrap(),
    )
}

/// The setup message of `job` to party `party`, for `n` rows and `p` features.
fn setup(job: &DistDpFw, party: usize, n: usize, p: usize) -> pb::Setup {
    wire::setup(job, party, n, p).unwrap()
}

fn secrets(k: usize) -> Vec<PartySecrets> {
    (0..k)
        .map(|i| PartySecrets::from_u64(40 + i as u64))
        .collect()
}

fn hosts(data: Vec<PartyData>, faults: &[InjectedFault]) -> Vec<PartyHost> {
    let k = data.len();
    data.into_iter()
        .zip(secrets(k))
        .enumerate()
        .map(|(i, (d, s))| {
            PartyHost::new(d, s, k, f64::INFINITY)
                .with_fault(faults.get(i).copied().unwrap_or_default())
        })
        .collect()
}

#[test]
fn grpc_and_in_process_give_bit_identical_iterates_and_equal_byte_counts() {
    let (job, data) = problem(3);
    let a = loopback::run_in_process(&job, data.clone(), secrets(3), DEADLINE, true).unwrap();
    let b = loopback::run(&job, data, secrets(3), DEADLINE, true).unwrap();
    assert_eq!(a.fit.iterates.len(), 25);
    let bits = |v: &Vec<Vec<f64>>| -> Vec<Vec<u64>> {
        v.iter()
            .map(|x| x.iter().map(|f| f.to_bits()).collect())
            .collect()
    };
    assert_eq!(bits(&a.fit.iterates), bits(&b.fit.iterates));
    assert_eq!(a.fit.traffic, b.fit.traffic);
    // Uplinks carry m = 12 doubles per round: at least 8 * 12 * T bytes per party, and
    // less than the unsketched baseline (n = 60 doubles per round).
    for k in 0..3 {
        assert!(a.fit.traffic.up[k] >= 8 * 12 * 25, "{:?}", a.fit.traffic);
        assert!(a.fit.traffic.up[k] < a.fit.unsketched_uplink_bytes);
        assert!(a.fit.traffic.down[k] >= 8 * 12 * 24);
    }
    assert!(a.fit.coefficients.iter().any(|&v| v != 0.0));
}

#[test]
fn different_party_seeds_give_different_iterates() {
    let (job, data) = problem(2);
    let a = loopback::run_in_process(&job, data.clone(), secrets(2), DEADLINE, false).unwrap();
    let other = vec![PartySecrets::from_u64(1), PartySecrets::from_u64(2)];
    let b = loopback::run_in_process(&job, data, other, DEADLINE, false).unwrap();
    assert_ne!(a.fit.coefficients, b.fit.coefficients);
}

#[test]
fn in_process_transport_reproduces_the_dist_dp_fw_solver_bit_for_bit() {
    let (job, data) = problem(3);
    let (cols, y) = synthetic_lasso(60, 9, 3);
    let (n, p) = (y.len(), cols.len());
    let mut rows = vec![0.0; n * p];
    for (j, c) in cols.iter().enumerate() {
        for (i, v) in c.iter().enumerate() {
            rows[i * p + j] = *v;
        }
    }
    let ds = Dataset::new(DenseDesign::from_row_major(n, p, &rows).unwrap(), y).unwrap();
    let fitted = job
        .fit_with_rng(&ds, &mut rand_chacha::ChaCha20Rng::seed_from_u64(9))
        .unwrap();
    let gens =
        dp_optim::dist_fw::party_generators(&mut rand_chacha::ChaCha20Rng::seed_from_u64(9), 3);
    let hs = data
        .into_iter()
        .zip(gens)
        .map(|(d, (sampling, noise))| {
            PartyHost::new(d, PartySecrets { sampling, noise }, 3, f64::INFINITY)
        })
        .collect();
    let mut t = InProcess::start(hs, DEADLINE);
    let fit = coordinator::run(&mut t, &job, false).unwrap();
    let bits = |v: &[f64]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&fit.coefficients), bits(&fitted.model.coefficients));
}

fn expect_party_error(e: FedError, party: usize, phase: Phase, fault: Fault) {
    match &e {
        FedError::Party {
            party: p,
            phase: ph,
            fault: f,
            ..
        } => {
            assert_eq!((*p, *ph, *f), (party, phase, fault), "{e}");
            let msg = e.to_string();
            assert!(msg.contains(&format!("party {party}")), "{msg}");
        }
        other => panic!("expected a party failure, got {other}"),
    }
}

#[test]
fn in_process_faults_stop_the_fit_naming_party_and_round() {
    let cases = [
        (InjectedFault::ExitAt(4), Fault::Died),
        (InjectedFault::HangAt(4), Fault::Timeout),
        (InjectedFault::MalformedAt(4), Fault::Malformed),
        (InjectedFault::WrongRoundAt(4), Fault::OutOfRound),
    ];
    for (fault, expected) in cases {
        let (job, data) = problem(3);
        let faults = [InjectedFault::None, fault, InjectedFault::None];
        let mut t = InProcess::start(hosts(data, &faults), Duration::from_millis(300));
        let e = coordinator::run(&mut t, &job, false).unwrap_err();
        expect_party_error(e, 1, Phase::Round(4), expected);
        // Nothing is released after the failure: the server stopped every party, so
        // the healthy party 0, asked for the next round, answers nothing: its thread
        // ends on the Stop, which it reads before any later request. (Until it has
        // ended, the request to it may still be queued and the failure named is then
        // the faulty party's; no round succeeds either way.)
        let next = pb::Downlink {
            round: 5,
            q_hat: vec![0.0; 12],
        };
        let start = std::time::Instant::now();
        let e = loop {
            let e = t.round(&next).unwrap_err();
            if matches!(e, FedError::Party { party: 0, .. })
                || start.elapsed() > Duration::from_secs(5)
            {
                break e;
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        expect_party_error(e, 0, Phase::Round(5), Fault::Died);
    }
}

#[test]
fn a_party_refuses_rounds_after_stop_and_out_of_order() {
    let (job, data) = problem(2);
    let mut hs = hosts(data, &[]);
    let setup = setup(&job, 0, 60, 9);
    let h = &mut hs[0];
    h.configure(&setup).unwrap();
    let down = |t| pb::Downlink {
        round: t,
        q_hat: vec![0.0; 12],
    };
    assert!(h.round(&down(1)).is_err(), "round 1 before round 0");
    assert!(h.round(&down(0)).is_ok());
    assert!(h.round(&down(0)).is_err(), "round 0 twice");
    h.stop();
    assert!(h.round(&down(1)).is_err(), "after stop");
}

#[test]
fn a_party_refuses_a_budget_above_its_cap_and_bad_bounds() {
    let (job, data) = problem(2);
    let mut h = PartyHost::new(data[0].clone(), PartySecrets::from_u64(1), 2, 0.5);
    let e = h.configure(&setup(&job, 0, 60, 9)).unwrap_err();
    assert!(matches!(e, Refusal::Cap { cap: 0.5, .. }), "{e}");
    assert!(e.to_string().contains("above this party's cap"), "{e}");
    let tight = params(2).feature_bound(0.5).build().unwrap();
    let mut h = PartyHost::new(data[0].clone(), PartySecrets::from_u64(1), 2, f64::INFINITY);
    let e = h.configure(&setup(&tight, 0, 60, 9)).unwrap_err();
    assert!(matches!(e, Refusal::FeatureBound { bound: 0.5, .. }), "{e}");
    assert!(e.to_string().contains("feature bound"), "{e}");
}

/// A transport that fails the test if any party is asked anything.
struct Untouched(usize);

impl Transport for Untouched {
    fn parties(&self) -> usize {
        self.0
    }
    fn describe(&mut self) -> dp_federated::Result<Vec<pb::Shape>> {
        panic!("a party was asked for its shape")
    }
    fn configure(&mut self, _: &[pb::Setup]) -> dp_federated::Result<Vec<pb::SetupReply>> {
        panic!("a party was sent a setup")
    }
    fn round(&mut self, _: &pb::Downlink) -> dp_federated::Result<Vec<pb::Uplink>> {
        panic!("a party was sent a round")
    }
    fn stop(&mut self, _: &str) {}
}

#[test]
fn bad_parameters_are_refused_before_any_party_is_asked() {
    // A job that does not build never reaches a transport.
    let e = params(2).epsilon(0.0).build().unwrap_err();
    assert!(e.to_string().contains("epsilon"), "{e}");
    // A job for another number of parties than the transport reaches is refused
    // before any party is asked.
    let (job, _) = problem(2);
    let e = coordinator::run(&mut Untouched(3), &job, false).unwrap_err();
    assert!(
        matches!(
            e,
            FedError::PartyCount {
                job: 2,
                transport: 3
            }
        ),
        "{e}"
    );
}

/// A transport whose parties describe the given shapes (and are asked nothing else).
struct Described(Vec<pb::Shape>);

impl Transport for Described {
    fn parties(&self) -> usize {
        self.0.len()
    }
    fn describe(&mut self) -> dp_federated::Result<Vec<pb::Shape>> {
        Ok(self.0.clone())
    }
    fn configure(&mut self, _: &[pb::Setup]) -> dp_federated::Result<Vec<pb::SetupReply>> {
        panic!("a party was sent a setup")
    }
    fn round(&mut self, _: &pb::Downlink) -> dp_federated::Result<Vec<pb::Uplink>> {
        panic!("a party was sent a round")
    }
    fn stop(&mut self, _: &str) {}
}

/// Bad data and inconsistent parties are refused with a typed cause a caller can match
/// on, and the message names what is wrong.
#[test]
fn bad_data_and_inconsistent_parties_have_typed_causes() {
    let e = PartyData::new(vec![], vec![], vec![]).unwrap_err();
    assert!(matches!(e, FedError::Data(DataError::NoRows)), "{e}");
    let e = PartyData::new(vec![3], vec![vec![1.0, f64::NAN]], vec![1.0, 1.0]).unwrap_err();
    assert!(
        matches!(
            e,
            FedError::Data(DataError::NonFinite { feature: 3, row: 1 })
        ),
        "{e}"
    );
    assert_eq!(e.to_string(), "invalid data: column 3, row 1 is not finite");
    let dir = std::env::temp_dir().join(format!("dp-federated-bad-csv-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("party.csv");
    std::fs::write(&path, "y,0,1\n1,0.5,0.25\n-1,0.5,x\n").unwrap();
    let e = PartyData::read_csv(&path).unwrap_err();
    assert!(
        matches!(&e, FedError::Data(DataError::Value { row: 2, column: 2, file }) if *file == path),
        "{e}"
    );
    assert_eq!(
        e.to_string(),
        format!(
            "invalid data: {}: row 2, column 2: not a number",
            path.display()
        )
    );
    let _ = std::fs::remove_dir_all(&dir);
    // Party 1 holds feature 3 where the contiguous partition needs feature 2.
    let (job, _) = problem(2);
    let shape = |features: Vec<u64>| pb::Shape {
        samples: 60,
        features,
    };
    let mut t = Described(vec![shape(vec![0, 1]), shape(vec![3, 4])]);
    let e = coordinator::run(&mut t, &job, false).unwrap_err();
    assert!(
        matches!(
            e,
            FedError::Config(ConfigError::NonContiguousFeatures {
                party: 1,
                found: 3,
                expected: 2
            })
        ),
        "{e}"
    );
}

/// A party's default generators come from the operating system: two draws differ, and
/// they are not the generators of any small u64 seed the demos and tests use.
#[test]
fn os_entropy_secrets_differ() {
    use rand::RngCore;
    let mut a = PartySecrets::from_os_entropy().unwrap();
    let mut b = PartySecrets::from_os_entropy().unwrap();
    let x = a.noise.next_u64();
    assert_ne!(x, b.noise.next_u64());
    assert_ne!(a.sampling.next_u64(), b.sampling.next_u64());
    for s in 0..2048u64 {
        assert_ne!(PartySecrets::from_u64(s).noise.next_u64(), x);
    }
}

/// Issue 24, defect 4: a party's `--max-epsilon` was compared with its own ledger, but
/// one person's row is at every party (and the label at all): what that person is
/// exposed to is the joint guarantee. A cap between the party's own epsilon and the
/// joint one was accepted before; it is refused now, at K = 2, 4 and 8.
#[test]
fn a_party_cap_between_its_own_and_the_joint_guarantee_is_refused() {
    for k in [2usize, 4, 8] {
        let (cols, y) = synthetic_lasso(60, 16, 3);
        let data = split_contiguous(cols, y, k).unwrap();
        let job = params(k).epsilon(4.0).build().unwrap();
        // What the party's own ledger and the joint ledger say, from an unrestricted
        // configure, and the in-process solver's joint guarantee beside them.
        let mut free = PartyHost::new(data[0].clone(), PartySecrets::from_u64(1), k, f64::INFINITY);
        let own = free
            .configure(&setup(&job, 0, 60, 16))
            .unwrap()
            .ledger_epsilon;
        let joint = 4.0; // DistDpFw calibrates the joint ledger to the target
        assert!(own < joint * 0.9, "K = {k}: own {own}, joint {joint}");
        let cap = 0.5 * (own + joint);
        let mut h = PartyHost::new(data[0].clone(), PartySecrets::from_u64(1), k, cap);
        let e = h
            .configure(&setup(&job, 0, 60, 16))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("joint guarantee") && e.contains("above this party's cap"),
            "K = {k}: {e}"
        );
        // A cap at the joint guarantee is accepted.
        let mut ok = PartyHost::new(data[0].clone(), PartySecrets::from_u64(1), k, joint);
        assert!(ok.configure(&setup(&job, 0, 60, 16)).is_ok(), "K = {k}");
    }
}

/// Issue 24, defect 4: parties took the K the server announced. A party configured for
/// K = 4 refuses a job announcing 2 (which would halve the composition it checks) or 8.
#[test]
fn a_party_refuses_an_announced_k_other_than_its_own() {
    let (cols, y) = synthetic_lasso(60, 16, 3);
    let data = split_contiguous(cols, y, 4).unwrap();
    for announced in [2usize, 8] {
        let job = params(announced).epsilon(4.0).build().unwrap();
        let mut h = PartyHost::new(data[0].clone(), PartySecrets::from_u64(1), 4, f64::INFINITY);
        let e = h
            .configure(&setup(&job, 0, 60, 16))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(&format!("announces K = {announced}")) && e.contains("configured for K = 4"),
            "{e}"
        );
    }
    // The right K, but a block layout that does not match the party's columns (the
    // server announces another dimension): refused too.
    let job = params(4).epsilon(4.0).build().unwrap();
    let mut h = PartyHost::new(data[0].clone(), PartySecrets::from_u64(1), 4, f64::INFINITY);
    let e = h
        .configure(&setup(&job, 0, 60, 20))
        .unwrap_err()
        .to_string();
    assert!(e.contains("the plan assigns features"), "{e}");
    let mut h = PartyHost::new(data[0].clone(), PartySecrets::from_u64(1), 4, f64::INFINITY);
    assert!(h.configure(&setup(&job, 0, 60, 16)).is_ok());
}

/// Issue 24, plan inputs: two neighbouring data sets (row 0 replaced, within the
/// bounds) give the same public shape and the same per-party ledgers: nothing the
/// server or a party plans with is read from the records.
#[test]
fn neighbouring_data_give_the_same_plan_and_shape() {
    let (cols, y) = synthetic_lasso(60, 9, 3);
    let (mut cols2, mut y2) = (cols.clone(), y.clone());
    for c in cols2.iter_mut() {
        c[0] = -c[0] * 0.5;
    }
    y2[0] = -y2[0] * 0.5;
    let job = params(3).build().unwrap();
    let run = |cols: Vec<Vec<f64>>, y: Vec<f64>| {
        let data = split_contiguous(cols, y, 3).unwrap();
        let mut t = InProcess::start(hosts(data, &[]), DEADLINE);
        coordinator::run(&mut t, &job, false).unwrap()
    };
    let a = run(cols, y);
    let b = run(cols2, y2);
    assert_eq!((a.samples, a.dim, a.parties), (b.samples, b.dim, b.parties));
    assert_eq!(a.party_epsilon, b.party_epsilon);
    assert_eq!(a.coefficients.len(), b.coefficients.len());
}

/// The in-process transport with party 1's uplink of round 2 rewritten.
struct Tamper {
    inner: InProcess,
    edit: fn(&mut pb::Uplink),
}

impl Transport for Tamper {
    fn parties(&self) -> usize {
        self.inner.parties()
    }
    fn describe(&mut self) -> dp_federated::Result<Vec<pb::Shape>> {
        self.inner.describe()
    }
    fn configure(&mut self, setups: &[pb::Setup]) -> dp_federated::Result<Vec<pb::SetupReply>> {
        self.inner.configure(setups)
    }
    fn round(&mut self, down: &pb::Downlink) -> dp_federated::Result<Vec<pb::Uplink>> {
        let mut ups = self.inner.round(down)?;
        if down.round == 2 {
            (self.edit)(&mut ups[1]);
        }
        Ok(ups)
    }
    fn stop(&mut self, reason: &str) {
        self.inner.stop(reason)
    }
}

/// A rewrite of an uplink, the fault it must cause and the server's message.
type Case = (fn(&mut pb::Uplink), Fault, &'static str);

/// Every kind of bad uplink stops the fit with the fault and the message the server
/// gave before its checks moved into `dist_fw::Server::receive` (issue 26): the
/// messages below are the old `check_uplink`'s, word for word.
#[test]
fn each_bad_uplink_is_refused_once_with_its_fault_and_message() {
    let cases: [Case; 8] = [
        (
            |u| u.party = 2,
            Fault::OutOfRound,
            "uplink says party 2 round 2",
        ),
        (
            |u| u.round = 3,
            Fault::OutOfRound,
            "uplink says party 1 round 3",
        ),
        (|u| u.sign = 0, Fault::Malformed, "sign 0 is not +-1"),
        (|u| u.sign = 300, Fault::Malformed, "sign 300 is not +-1"),
        (
            |u| u.sketch.truncate(5),
            Fault::Malformed,
            "sketch has 5 entries, expected m = 12",
        ),
        (
            |u| u.sketch[3] = f64::INFINITY,
            Fault::Malformed,
            "sketch has non-finite entries",
        ),
        // Party 1 of 3 holds features 3, 4, 5 (p = 9).
        (
            |u| u.index = 0,
            Fault::Malformed,
            "index 0 is not one of the party's features",
        ),
        (
            |u| u.index = 9,
            Fault::Malformed,
            "index 9 is not one of the party's features",
        ),
    ];
    for (edit, fault, detail) in cases {
        let (job, data) = problem(3);
        let mut t = Tamper {
            inner: InProcess::start(hosts(data, &[]), DEADLINE),
            edit,
        };
        let e = coordinator::run(&mut t, &job, false).unwrap_err();
        match &e {
            FedError::Party {
                party: 1,
                phase: Phase::Round(2),
                fault: f,
                detail: d,
            } => assert_eq!((*f, d.as_str()), (fault, detail), "{e}"),
            other => panic!("{detail}: expected party 1's failure in round 2, got {other}"),
        }
    }
}
