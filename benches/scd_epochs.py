#!/usr/bin/env python3
"""Per-epoch cost of SDCA and DP-SCD against the CD pass, side by side in one run.

Runs the `dp_scd` criterion bench (`benches/dp_scd.rs`: every solver as a whole seeded
fit with 1 and P passes, on Electricity logistic and a dense 20,000 x 90 ridge
problem) and prints, from criterion's median estimates:

* the per-epoch time `(T(P) - T(1)) / (P - 1)` of each solver (fixed costs of a fit,
  such as SDCA's duality-gap certificate and the final objective, cancel);
* the ratios SDCA epoch / CD pass (target <= 1.5) and DP-SCD epoch / SDCA epoch
  (target <= 1.3), per epoch and for the whole 1-pass fits.

Usage: python3 benches/scd_epochs.py [--rounds N]   (N runs of the bench, median of them)
"""

import argparse
import datetime
import json
import os
import statistics
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROBLEMS = ["electricity-logistic", "synthetic-ridge-20000x90"]
SOLVERS = ["cd", "sdca", "dp-scd L=1", "dp-scd L=100"]
P = 4  # must match PASSES in benches/dp_scd.rs


def estimate(home, problem, bench):
    d = os.path.join(home, f"dual_{problem}", bench.replace("=", "_"), "new", "estimates.json")
    if not os.path.exists(d):  # criterion's directory naming
        d = os.path.join(home, f"dual_{problem}", bench, "new", "estimates.json")
    with open(d) as f:
        return json.load(f)["median"]["point_estimate"] / 1e6  # ms


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=1)
    args = ap.parse_args()
    rows = {}
    for _ in range(args.rounds):
        with tempfile.TemporaryDirectory() as home:
            subprocess.run(["cargo", "bench", "-p", "dp-bench", "--bench", "dp_scd", "--",
                            "--noplot"], cwd=ROOT, check=True,
                           env={**os.environ, "CRITERION_HOME": home},
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for prob in PROBLEMS:
                for s in SOLVERS:
                    for k in (1, P):
                        rows.setdefault((prob, s, k), []).append(
                            estimate(home, prob, f"{s} x{k}"))
    med = {k: statistics.median(v) for k, v in rows.items()}
    print(f"date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC; "
          f"load average {os.getloadavg()[0]:.1f}; rounds {args.rounds}; P = {P}")
    print("command: python3 benches/scd_epochs.py" +
          (f" --rounds {args.rounds}" if args.rounds != 1 else ""))
    print()
    print("| problem | solver | fit x1 ms | fit x%d ms | epoch ms |" % P)
    print("|---|---|---|---|---|")
    epoch = {}
    for prob in PROBLEMS:
        for s in SOLVERS:
            t1, tp = med[(prob, s, 1)], med[(prob, s, P)]
            epoch[(prob, s)] = (tp - t1) / (P - 1)
            print(f"| {prob} | {s} | {t1:.3f} | {tp:.3f} | {epoch[(prob, s)]:.3f} |")
    print()
    print("| problem | ratio | per epoch | whole 1-pass fit | target |")
    print("|---|---|---|---|---|")
    for prob in PROBLEMS:
        for num, den, target in [("sdca", "cd", 1.5), ("dp-scd L=1", "sdca", 1.3),
                                 ("dp-scd L=100", "sdca", 1.3)]:
            r = epoch[(prob, num)] / epoch[(prob, den)]
            w = med[(prob, num, 1)] / med[(prob, den, 1)]
            print(f"| {prob} | {num} / {den} | {r:.2f} | {w:.2f} | <= {target} |")


if __name__ == "__main__":
    main()
