//! Empirical privacy audits of the distributed protocol (issue 24 item 6), through the
//! in-process transport (the same party and server code as gRPC, bit for bit: see
//! `transports.rs`), with `dp_accounting::testing::Auditor`. The claim audited is the
//! joint `(epsilon, delta)` the job targets: every party's releases together, which is
//! what one person whose row sits at every party is protected by.
//!
//! **The pair.** Two parties with one column each, `n = 4` rows, 3 rounds, sketch
//! dimension 4, residual clip `C_res = 1`. `D`: every feature at the bound `B = 1`,
//! labels `+1 = Y`. `D'`: row `r*` (the row whose sketch column `J[:, r*]` has the
//! largest norm, public from the sketch seed) has features `-1` at both parties, label
//! `+1`. Then every release moves by its sensitivity: the sketch of a party's column
//! moves by `(2/n) J[:, r*]`, of norm `2 B max_r ||J[:, r]|| / n` (the sketch
//! sensitivity), and the row's term `a_r* rho_r*` of every score flips sign with
//! `rho_r* = clip(pred - y, C_res)` (`pred` a post-processing of the broadcasts, the
//! same on both sides), `-1` at round 1: the score moves by `2 B C_res / n`, its
//! sensitivity. (The earlier pair, features and label of the row both negated, left
//! `a_r rho_r` unchanged, so the selections did not move at all.)
//!
//! **The views.** The server sees every uplink: each party's signed index and its noisy
//! sketch `z = (1/n) J a + N(0, sigma^2 I)`. Its statistic is fixed before the runs up to
//! the pilot's weights: per uplink, the sketch projected on `u = J[:, r*] / ||J[:, r*]||`
//! in units of `sigma` (for the Gaussian part the likelihood ratio is a function of
//! these projections alone), and the sign; the auditor's score is their projection on
//! the pilot's mean difference (both have unit-order variance, so it is close to
//! Fisher's discriminant). A party sees the broadcasts `q_hat^t` (a post-processing of
//! the uplinks) and the released model, plus its own data, which it holds anyway and
//! which is not an output of the protocol; its statistic is the projection of the
//! broadcasts, in units of `sigma`, on the pilot's mean difference. Both are audited
//! against the joint claim. Default sizes are small (CI); `DP_AUDIT_LONG=1` runs the long
//! variants (their figures are in docs/privacy/audit.md section 4).

use dp_accounting::testing::{AuditReport, Auditor, Side};
use dp_federated::coordinator::{self, Transport};
use dp_federated::inproc::InProcess;
use dp_federated::party::{PartyData, PartyHost, PartySecrets};
use dp_federated::pb;
use dp_federated::split_contiguous;
use dp_models::{Dataset, DenseDesign};
use dp_optim::dist_fw::Sketch;
use dp_optim::fw_plan::FwPlan;
use dp_optim::{DistDpFw, DistDpFwParams, Solver, SolverPlan};
use rand::RngCore;
use std::time::Duration;

fn long() -> bool {
    std::env::var("DP_AUDIT_LONG").is_ok_and(|v| v == "1")
}

/// The in-process transport, recording what the server receives (uplinks) and what
/// every party receives (downlinks).
struct Recording {
    inner: InProcess,
    up: Vec<pb::Uplink>,
    down: Vec<pb::Downlink>,
}

impl Transport for Recording {
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
        self.down.push(down.clone());
        let up = self.inner.round(down)?;
        self.up.extend(up.iter().cloned());
        Ok(up)
    }
    fn stop(&mut self, reason: &str) {
        self.inner.stop(reason)
    }
}

/// The audited setup: the job, both sides' data, the public direction `u` and the
/// sketch noise `sigma` (from the in-process solver's plan, the same calibration).
struct Setup {
    job: DistDpFw,
    k: usize,
    d: Vec<PartyData>,
    d2: Vec<PartyData>,
    u: Vec<f64>,
    sigma: f64,
}

fn setup() -> Setup {
    let (n, k, m, rounds) = (4usize, 2usize, 4usize, 3u64);
    let job = DistDpFwParams::new(1.0)
        .parties(k)
        .iterations(rounds)
        .sketch_dim(m)
        .sketch_seed(11)
        .epsilon(1.0)
        .delta(1e-3)
        .feature_bound(1.0)
        .label_bound(1.0)
        .residual_clip(1.0)
        .build()
        .unwrap();
    let sketch = Sketch::generate(m, n, job.sketch_seed()).unwrap();
    let norm = |c: &[f64]| c.iter().map(|v| v * v).sum::<f64>().sqrt();
    let r_star = (0..n)
        .max_by(|&a, &b| norm(sketch.column(a)).total_cmp(&norm(sketch.column(b))))
        .unwrap();
    let col = sketch.column(r_star);
    assert_eq!(norm(col), sketch.max_column_norm());
    let u: Vec<f64> = col.iter().map(|v| v / norm(col)).collect();
    let cols = vec![vec![1.0; n]; k];
    let mut cols2 = cols.clone();
    for c in &mut cols2 {
        c[r_star] = -1.0;
    }
    let y = vec![1.0; n];
    // The same calibration as the parties', from the in-process solver's plan.
    let rows = vec![1.0; n * k];
    let ds = Dataset::new(DenseDesign::from_row_major(n, k, &rows).unwrap(), y.clone()).unwrap();
    let fitted = job.fit_seeded(&ds, 1).unwrap();
    let Some(SolverPlan::DpFw(FwPlan::Distributed(plan))) = fitted.privacy().map(|p| &p.plan)
    else {
        panic!("not a distributed DP-FW plan")
    };
    assert_eq!(plan.residual_clip, 1.0);
    let sigma = plan.sketch_noise_std;
    Setup {
        k,
        d: split_contiguous(cols, y.clone(), k).unwrap(),
        d2: split_contiguous(cols2, y, k).unwrap(),
        job,
        u,
        sigma,
    }
}

/// One protocol run on `side`, the parties' secrets drawn from `rng`; returns the
/// recording transport (uplinks and downlinks) and the released model.
fn run(s: &Setup, side: Side, rng: &mut dyn RngCore) -> (Recording, Vec<f64>) {
    let data = if side == Side::D { &s.d } else { &s.d2 };
    let hosts = data
        .iter()
        .map(|d| {
            PartyHost::new(
                d.clone(),
                PartySecrets::from_u64(rng.next_u64()),
                s.k,
                f64::INFINITY,
            )
        })
        .collect();
    let mut t = Recording {
        inner: InProcess::start(hosts, Duration::from_secs(10)),
        up: Vec::new(),
        down: Vec::new(),
    };
    let fit = coordinator::run(&mut t, &s.job, false).unwrap();
    assert!(fit.epsilon <= s.job.privacy().epsilon.get());
    (t, fit.coefficients)
}

fn audit(
    what: &str,
    seed: u64,
    view: impl Fn(&Setup, Side, &mut dyn RngCore) -> Vec<f64> + Sync,
) -> AuditReport {
    let s = setup();
    let (trials, pilot) = if long() {
        (100_000, 20_000)
    } else {
        (1_000, 500)
    };
    let privacy = s.job.privacy();
    let report = Auditor::new(privacy.epsilon.get(), privacy.delta.get())
        .trials(trials)
        .pilot_trials(pilot)
        .seed(seed)
        .confidence(1.0 - 1e-6)
        .run_vector(|side, rng| view(&s, side, rng))
        .unwrap();
    eprintln!(
        "distributed FW, {what}: sketch noise std {:.4}, trials {trials}, pilot {pilot}, {report}",
        s.sigma
    );
    assert!(!report.violated, "{report}");
    report
}

/// The server's view: every uplink (signed index and noisy sketch of each party at
/// each round), as (sketch projected on `u` in units of sigma, sign) per uplink.
#[test]
fn distributed_fw_server_view_empirical_epsilon() {
    audit("server's view (every uplink)", 0xFED, |s, side, rng| {
        let (t, _) = run(s, side, rng);
        assert_eq!(t.up.len(), s.k * s.job.iterations() as usize);
        let mut v = Vec::with_capacity(2 * t.up.len());
        for up in &t.up {
            let proj: f64 = up.sketch.iter().zip(&s.u).map(|(a, b)| a * b).sum();
            v.push(proj / s.sigma);
            v.push(f64::from(up.sign));
        }
        v
    });
}

/// One party's view: every broadcast `q_hat^t` it receives, its own uplinks (its own
/// messages: the sign it selected each round) and the released model (its own data is
/// its own input, the same in every run on a side). Features, per round whose update is
/// broadcast (`q_hat^{t+1}`): the broadcast projected on `u` in units of sigma (its mean
/// is a signed sum of the parties' sketch means, which the pair moves), that projection
/// times the party's own sign of the round (which removes the sign's mixing of its own
/// sketch), and the sign; then the model's coordinates (a function of all the signs).
#[test]
fn distributed_fw_party_view_empirical_epsilon() {
    audit(
        "one party's view (broadcasts, own uplinks, model)",
        0xFED2,
        |s, side, rng| {
            let (t, model) = run(s, side, rng);
            let own: Vec<f64> =
                t.up.iter()
                    .filter(|u| u.party == 0)
                    .map(|u| f64::from(u.sign))
                    .collect();
            assert_eq!(own.len(), s.job.iterations() as usize);
            let mut v = Vec::new();
            for (r, down) in t.down.iter().enumerate().skip(1) {
                let a: f64 = down.q_hat.iter().zip(&s.u).map(|(q, u)| q * u).sum::<f64>() / s.sigma;
                let sign = own[r - 1];
                v.extend([a, a * sign, sign]);
            }
            v.push(own[own.len() - 1]);
            v.extend(model);
            v
        },
    );
}
