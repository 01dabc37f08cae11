//! Empirical privacy audit of the distributed protocol (issue 24 item 6), through the
//! in-process transport (the same party and server code as gRPC, bit for bit: see
//! `transports.rs`), with `dp_accounting::testing::Auditor`. The claim audited is the
//! joint `(epsilon, delta)` the job targets: every party's releases together, which is
//! what one person whose row sits at every party is protected by.
//!
//! The server's view is every broadcast iterate `x^1 .. x^T` (it sees all the parties'
//! noisy messages, and the iterates are computed from them); the score is the
//! projection on the difference of the pilot's mean views. A party sees the same
//! iterates (they are broadcast) plus its own data, which is the same on `D` and `D'`
//! except for the replaced row, so its view adds nothing private beyond the server's.
//! Default sizes are small; `DP_AUDIT_LONG=1` runs 20x more.

use dp_accounting::testing::{Auditor, Side};
use dp_federated::job::{Job, PartySecrets};
use dp_federated::loopback;
use dp_federated::split_contiguous;
use rand::RngCore;
use std::time::Duration;

fn long() -> bool {
    std::env::var("DP_AUDIT_LONG").is_ok_and(|v| v == "1")
}

/// Two parties with one column each, `n = 4` rows, 3 rounds. `D`: every feature at the
/// bound `B = 1`, labels `+1 = Y`; `D'`: the last row replaced by features `-1` and
/// label `-1`, the largest change one row can make to every column's residual
/// correlation (each party's selection score and sketch move by their sensitivity).
#[test]
fn distributed_fw_server_view_empirical_epsilon() {
    let (n, k) = (4usize, 2usize);
    let job = Job::new(1.0, 3, 4, 11, 1.0, 1e-3, 1.0, 1.0);
    let cols = vec![vec![1.0; n]; k];
    let mut cols2 = cols.clone();
    for c in &mut cols2 {
        c[n - 1] = -1.0;
    }
    let y = vec![1.0; n];
    let mut y2 = y.clone();
    y2[n - 1] = -1.0;
    let d = split_contiguous(cols, y, k).unwrap();
    let d2 = split_contiguous(cols2, y2, k).unwrap();
    let run = |side: Side, rng: &mut dyn RngCore| -> Vec<f64> {
        let data = if side == Side::D {
            d.clone()
        } else {
            d2.clone()
        };
        let secrets = (0..k)
            .map(|_| PartySecrets::from_u64(rng.next_u64()))
            .collect();
        let fit = loopback::run_in_process(&job, data, secrets, Duration::from_secs(10), true)
            .unwrap()
            .fit;
        assert!(fit.epsilon <= job.epsilon);
        fit.iterates.concat()
    };
    let scale = if long() { 20 } else { 1 };
    let report = Auditor::new(job.epsilon, job.delta)
        .trials(1_000 * scale)
        .pilot_trials(500 * scale)
        .seed(0xFED)
        .confidence(1.0 - 1e-6)
        .run_vector(run)
        .unwrap();
    eprintln!("distributed FW, server's view (all iterates): {report}");
    assert!(!report.violated, "{report}");
}
