#!/usr/bin/env python3
"""The user's path against the typed library call: `dp-erm fit` (which runs the library
pipeline `dp_erm::Pipeline` with the run-time loss and penalty) and
`crates/dp-erm-cli/examples/typed_pass.rs` (the same solver written with the typed
losses and penalties) on the same file, alternated A B A B in one run.

A pass is the marginal solver time `(t_K - t_1) / (K - 1)` of `solver_seconds` (both
print it as JSON), `t_1` the fastest of 3 runs at one pass, so that reading the CSV and
starting the process cancel; the ratio is `t_K(cli) / t_K(typed)` pair by pair.

Problems (the ones of benches/peers/cli_pass.py):
* dense-cd: the 1e5 x 100 LASSO CSV (target/peers-data/cli_dense.csv, written by
  cli_pass.py), lambda 0.01, CD, step 1, no intercept, 2 threads;
* dense-dp-cd: the same with DP-CD at epsilon 1, delta 1e-10, bound 5 (targets 20), clip 1;
* electricity: logistic + L2 1e-5, DP-CD at epsilon 1, delta 1/n^2, bound 1, step 1,
  clip 1, 1 thread.

Usage, from the repository root, after
`cargo build --release -p dp-erm-cli --bins --example typed_pass`:

    python3 benches/peers/cli_vs_typed.py PROBLEM K PAIRS
"""
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLI = os.path.join(ROOT, "target", "release", "dp-erm")
TYPED = os.path.join(ROOT, "target", "release", "examples", "typed_pass")
DENSE = os.path.join(ROOT, "target", "peers-data", "cli_dense.csv")
ELEC = os.path.join(ROOT, "crates", "dp-bench", "data", "electricity.csv")
MODEL = os.path.join(ROOT, "target", "peers-data", "cli_vs_typed_model.json")


def commands(problem, k):
    common = ["--seed", "1", "--no-intercept", "--model-out", MODEL, "--passes", str(k), "--json"]
    if problem == "dense-cd":
        cli = [CLI, "fit", "--data", DENSE, "--target", "y", "--loss", "squared", "--penalty",
               "l1", "--lambda", "0.01", "--algorithm", "cd", "--step", "1", *common]
        return cli, [TYPED, "dense-cd", DENSE, str(k), "2"]
    if problem == "dense-dp-cd":
        cli = [CLI, "fit", "--data", DENSE, "--target", "y", "--loss", "squared", "--penalty",
               "l1", "--lambda", "0.01", "--algorithm", "dp-cd", "--epsilon", "1", "--delta",
               "1e-10", "--feature-bound", "5", "--target-bound", "20", "--step", "1",
               "--clip", "1", *common]
        return cli, [TYPED, "dense-dp-cd", DENSE, str(k), "2"]
    if problem == "electricity":
        n = sum(1 for _ in open(ELEC)) - 1
        cli = [CLI, "fit", "--data", ELEC, "--target", "class", "--positive", "UP", "--negative",
               "DOWN", "--loss", "logistic", "--penalty", "l2", "--lambda", "1e-5", "--algorithm",
               "dp-cd", "--epsilon", "1", "--delta", str(1.0 / n ** 2), "--feature-bound", "1",
               "--step", "1", "--clip", "1", *common]
        return cli, [TYPED, "electricity", ELEC, str(k), "1"]
    raise SystemExit(f"unknown problem {problem!r}")


def solver_seconds(cmd):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])["solver_seconds"]


def main():
    problem, k, pairs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    a1, b1 = commands(problem, 1)
    ak, bk = commands(problem, k)
    one_a = min(solver_seconds(a1) for _ in range(3))
    one_b = min(solver_seconds(b1) for _ in range(3))
    ta, tb = [], []
    for _ in range(pairs):
        ta.append(solver_seconds(ak))
        tb.append(solver_seconds(bk))
    pa = [(t - one_a) / (k - 1) * 1e3 for t in ta]
    pb = [(t - one_b) / (k - 1) * 1e3 for t in tb]
    ratios = [a / b for a, b in zip(ta, tb)]
    print(f"{problem} K={k} pairs={pairs} load={os.getloadavg()[0]:.1f}: "
          f"cli pass min {min(pa):.3f} / median {statistics.median(pa):.3f} ms; "
          f"typed pass min {min(pb):.3f} / median {statistics.median(pb):.3f} ms; "
          f"pair ratio median {statistics.median(ratios):.3f} "
          f"({min(ratios):.3f}-{max(ratios):.3f})")


if __name__ == "__main__":
    main()
