#!/usr/bin/env python3
"""Before/after epoch times of the row-wise solvers (DP-SGD mini-batches, SDCA, DP-SCD),
side by side in one run.

Runs two builds of the criterion benches `solvers` (group `dp-sgd-batch/*`: DP-SGD at
b = 64, 256, 1024 on Electricity and a dense 20,000 x 100 logistic problem) and `dp_scd`
(CD, SDCA, DP-SCD at L = 1 and 100 on Electricity logistic and a dense 20,000 x 90
ridge problem), "before" and "after", alternately (the order swapped every round, so
that load from other processes on this shared machine hits both alike), and prints,
from criterion's median estimates (median over the rounds):

* per-epoch time `(T(P) - T(1)) / (P - 1)` of every solver, before and after, and
  before / after;
* for the after build: SDCA epoch / CD pass (target <= 1.5) and DP-SCD epoch / SDCA
  epoch (target <= 1.3).

The binaries are given as paths (build each with
`cargo bench -p dp-bench --bench solvers --no-run` and `--bench dp_scd --no-run` and copy
the executables that cargo prints), or built here from the working tree (`after`) and
from `git archive BASE` into a temporary target (`before`; a full release build).

Usage:
  python3 benches/compare_rows.py --base-solvers PATH --base-dp-scd PATH [--rounds N]
  python3 benches/compare_rows.py --base COMMIT [--rounds N]
"""

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SGD_PROBLEMS = ["electricity", "dense-20000x100"]
BATCHES = [64, 256, 1024]
SGD_P = 5
DUAL_PROBLEMS = ["electricity-logistic", "synthetic-ridge-20000x90"]
DUAL_SOLVERS = ["cd", "sdca", "dp-scd L=1", "dp-scd L=100"]
DUAL_P = 4  # PASSES in benches/dp_scd.rs


def build(src, target, bench):
    out = subprocess.run(
        ["cargo", "bench", "-p", "dp-bench", "--bench", bench, "--no-run",
         "--message-format=json"],
        cwd=src, env={**os.environ, "CARGO_TARGET_DIR": target},
        check=True, capture_output=True, text=True,
    ).stdout
    for line in out.splitlines():
        msg = json.loads(line)
        if msg.get("reason") == "compiler-artifact" and msg.get("executable") \
                and msg["target"]["name"] == bench:
            return msg["executable"]
    sys.exit(f"no {bench} bench executable found")


def run(binary, bench_filter, home):
    args = [binary, "--bench", "--noplot"]
    if bench_filter:
        args[2:2] = [bench_filter]
    subprocess.run(args, cwd=ROOT, env={**os.environ, "CRITERION_HOME": home},
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    res = {}
    for dirpath, _dirs, files in os.walk(home):
        if "estimates.json" in files and dirpath.endswith("/new"):
            with open(os.path.join(dirpath, "benchmark.json")) as f:
                full_id = json.load(f)["full_id"]
            with open(os.path.join(dirpath, "estimates.json")) as f:
                res[full_id] = json.load(f)["median"]["point_estimate"] * 1e-6  # ms
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base")
    ap.add_argument("--base-solvers")
    ap.add_argument("--base-dp-scd")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="compare-rows-")
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    bins = {"after": (build(ROOT, target, "solvers"), build(ROOT, target, "dp_scd"))}
    if args.base_solvers and args.base_dp_scd:
        bins["before"] = (args.base_solvers, args.base_dp_scd)
        base = "pre-built binaries"
    elif args.base:
        src = os.path.join(tmp, "before")
        os.makedirs(src)
        archive = subprocess.run(["git", "archive", args.base], cwd=ROOT, check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", src], input=archive, check=True)
        t = os.path.join(tmp, "before-target")
        bins["before"] = (build(src, t, "solvers"), build(src, t, "dp_scd"))
        base = args.base
    else:
        sys.exit("give --base COMMIT or --base-solvers and --base-dp-scd")
    runs = {"before": [], "after": []}
    for r in range(args.rounds):
        order = ["before", "after"] if r % 2 == 0 else ["after", "before"]
        for label in order:
            solvers, dual = bins[label]
            res = run(solvers, "^dp-sgd-batch/", os.path.join(tmp, f"{label}-s-{r}"))
            res.update(run(dual, None, os.path.join(tmp, f"{label}-d-{r}")))
            runs[label].append(res)
            print(f"round {r + 1}/{args.rounds}: {label} done", file=sys.stderr)

    def med(label, key):
        vals = [x[key] for x in runs[label] if key in x]
        return statistics.median(vals) if vals else float("nan")

    def epoch(label, k1, k2, p):
        return (med(label, k2) - med(label, k1)) / (p - 1)

    load = open("/proc/loadavg").read().split()[:3]
    flags = open("/proc/cpuinfo").read()
    level = "avx512" if "avx512f" in flags else ("avx2" if "avx2" in flags else "scalar")
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                          capture_output=True, text=True).stdout.strip()
    print(f"date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M UTC}; "
          f"load average at the end {' '.join(load)}; SIMD level {level}; 2 cores, shared")
    print(f"before: {base}; after: working tree at {head}; {args.rounds} rounds, "
          "medians of criterion's median estimates")
    print()
    print("| problem | b | before ms/epoch | after ms/epoch | before / after |")
    print("|---|---|---|---|---|")
    for prob in SGD_PROBLEMS:
        for b in BATCHES:
            k1 = f"dp-sgd-batch/{prob}/b={b}/1 epochs"
            k2 = f"dp-sgd-batch/{prob}/b={b}/{SGD_P} epochs"
            eb, ea = epoch("before", k1, k2, SGD_P), epoch("after", k1, k2, SGD_P)
            print(f"| {prob} | {b} | {eb:.3f} | {ea:.3f} | {eb / ea:.2f} |")
    print()
    print("| problem | solver | before ms/epoch | after ms/epoch | before / after |")
    print("|---|---|---|---|---|")
    ep = {}
    for prob in DUAL_PROBLEMS:
        for s in DUAL_SOLVERS:
            k1, k2 = f"dual/{prob}/{s} x1", f"dual/{prob}/{s} x{DUAL_P}"
            for label in ["before", "after"]:
                ep[(label, prob, s)] = epoch(label, k1, k2, DUAL_P)
            eb, ea = ep[("before", prob, s)], ep[("after", prob, s)]
            print(f"| {prob} | {s} | {eb:.3f} | {ea:.3f} | {eb / ea:.2f} |")
    print()
    print("| problem | ratio | before | after | target |")
    print("|---|---|---|---|---|")
    for prob in DUAL_PROBLEMS:
        for num, den, target in [("sdca", "cd", 1.5), ("dp-scd L=1", "sdca", 1.3),
                                 ("dp-scd L=100", "sdca", 1.3)]:
            rb = ep[("before", prob, num)] / ep[("before", prob, den)]
            ra = ep[("after", prob, num)] / ep[("after", prob, den)]
            print(f"| {prob} | {num} / {den} | {rb:.2f} | {ra:.2f} | <= {target} |")


if __name__ == "__main__":
    main()
