//! Golden fit of the distributed protocol: a seeded in-process run (parties on threads,
//! protobuf bytes over channels) compared **bit for bit** with the coefficients, the
//! per-party and joint epsilon and the delta recorded before the privacy plumbing was
//! redesigned (issue 26). The recorded line is in `tests/golden_fit.txt`; re-record it
//! deliberately with
//!
//! ```text
//! GOLDEN_BLESS=1 cargo test -p dp-federated --test golden_fit
//! ```
//!
//! and review the diff.

use dp_federated::loopback::{self, synthetic_lasso};
use dp_federated::party::PartySecrets;
use dp_federated::split_contiguous;
use dp_optim::DistDpFwParams;
use std::path::PathBuf;
use std::time::Duration;

fn hex(v: f64) -> String {
    format!("{:016x}", v.to_bits())
}

fn hexes(v: &[f64]) -> String {
    v.iter().map(|&x| hex(x)).collect::<Vec<_>>().join(",")
}

fn current() -> Vec<String> {
    let mut out = Vec::new();
    for k in [2usize, 3] {
        let (cols, y) = synthetic_lasso(60, 9, 3);
        let job = DistDpFwParams::new(1.0)
            .parties(k)
            .iterations(25)
            .sketch_dim(12)
            .sketch_seed(5)
            .epsilon(2.0)
            .delta(1e-5)
            .feature_bound(1.0)
            .label_bound(1.0)
            .build()
            .unwrap();
        let data = split_contiguous(cols, y, k).unwrap();
        let secrets = (0..k)
            .map(|i| PartySecrets::from_u64(40 + i as u64))
            .collect();
        let run =
            loopback::run_in_process(&job, data, secrets, Duration::from_secs(30), false).unwrap();
        let f = &run.fit;
        out.push(format!(
            "in-process/parties-{k} rounds={} coefficients={} party-epsilon={} epsilon={} delta={}",
            f.rounds,
            hexes(&f.coefficients),
            hexes(&f.party_epsilon),
            hex(f.epsilon),
            hex(f.delta)
        ));
    }
    out
}

#[test]
fn a_seeded_in_process_fit_is_bit_identical_to_the_recorded_one() {
    let now = current();
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden_fit.txt");
    if std::env::var_os("GOLDEN_BLESS").is_some() {
        let mut text = String::from(
            "# Golden distributed fits (tests/golden_fit.rs): f64 bits in hex. Re-record with\n\
             # GOLDEN_BLESS=1 cargo test -p dp-federated --test golden_fit\n",
        );
        for l in &now {
            text.push_str(l);
            text.push('\n');
        }
        std::fs::write(&path, text).unwrap();
        return;
    }
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (record it with GOLDEN_BLESS=1)", path.display()));
    let recorded: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .collect();
    assert_eq!(recorded.len(), now.len(), "the set of golden fits changed");
    for (want, got) in recorded.iter().zip(&now) {
        assert_eq!(*want, got.as_str(), "a seeded distributed fit moved");
    }
}
