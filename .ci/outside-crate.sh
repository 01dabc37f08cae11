#!/usr/bin/env bash
# Issue 27's Done-when, checked from a crate OUTSIDE the workspace: a fresh binary crate
# in a temporary directory depends on dp-accounting by path with `features = ["testing"]`
# and, with the public calls only, audits a Laplace mechanism claimed 1-DP at 1e6 trials
# per side: the correct one (scale 1) must pass with a lower bound >= 0.8, the broken one
# (scale 1/2) must be flagged (violated, bound > 1), and the two audits together must take
# at most OUTSIDE_MAX_SECONDS (default 60) of wall time. Exits non-zero otherwise.
#
# Usage: .ci/outside-crate.sh            (from anywhere; builds in release)
# Env:   OUTSIDE_TARGET_DIR  reuse a target directory between runs (default: a temp dir)
#        OUTSIDE_MAX_SECONDS time limit of the two audits (default 60)
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
crate="$tmp/audit-outside"
mkdir -p "$crate/src"
cat >"$crate/Cargo.toml" <<TOML
[package]
name = "audit-outside"
version = "0.1.0"
edition = "2021"
publish = false

[workspace]

[dependencies]
dp-accounting = { path = "$repo/crates/dp-accounting", features = ["testing"] }
rand = "0.9"
TOML
# The workspace's lock file pins the same dependency versions (cargo trims the rest),
# so the check needs no registry access beyond what the workspace already fetched.
cp "$repo/Cargo.lock" "$crate/Cargo.lock"
cat >"$crate/src/main.rs" <<'RS'
use dp_accounting::mechanisms::Laplace;
use dp_accounting::testing::{Auditor, Side};
use std::time::Instant;

fn audit(scale: f64) -> dp_accounting::testing::AuditReport {
    let lap = Laplace::new(scale).unwrap();
    Auditor::new(1.0, 0.0)
        .trials(1_000_000)
        .seed(7)
        .run(|side: Side, rng: &mut dyn rand::RngCore| -> f64 {
            let query = if side == Side::D { 0.0 } else { 1.0 };
            query + lap.sample(rng)
        })
        .expect("audit")
}

fn main() {
    let max: f64 = std::env::var("OUTSIDE_MAX_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(60.0);
    let start = Instant::now();
    let good = audit(1.0);
    let t_good = start.elapsed().as_secs_f64();
    let bad = audit(0.5);
    let total = start.elapsed().as_secs_f64();
    println!("correct Laplace (scale 1): {good}  [{t_good:.2} s]");
    println!("broken Laplace (scale 1/2): {bad}  [{:.2} s]", total - t_good);
    let mut ok = true;
    if good.violated || good.epsilon_lower_bound < 0.8 {
        println!("FAIL: the correct mechanism must pass with a bound >= 0.8");
        ok = false;
    }
    if !bad.violated || bad.epsilon_lower_bound <= 1.0 {
        println!("FAIL: the broken mechanism must be flagged with a bound above 1");
        ok = false;
    }
    if total > max {
        println!("FAIL: the two audits took {total:.1} s, more than {max} s");
        ok = false;
    }
    println!("{} (2 x 1e6 trials per side in {total:.2} s)", if ok { "OK" } else { "FAILED" });
    std::process::exit(if ok { 0 } else { 1 });
}
RS
export CARGO_TARGET_DIR="${OUTSIDE_TARGET_DIR:-$tmp/target}"
cd "$crate"
echo "== building the outside crate (release) in $crate"
b0=$(date +%s)
cargo build --release --quiet
echo "   built in $(( $(date +%s) - b0 )) s"
echo "== running it"
"$CARGO_TARGET_DIR/release/audit-outside"
