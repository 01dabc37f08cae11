#!/usr/bin/env python3
"""Before/after per-pass times of CD and DP-CD, side by side in one run.

Builds the `solvers` criterion bench of a base commit (default: the parent of the
first SIMD commit, see BASE below) from `git archive` into a temporary directory and
the bench of the working tree, then runs the two binaries alternately (ROUNDS rounds,
the order swapped every round, so that load from other processes on this shared
machine hits both alike) and prints, from criterion's own estimates (median of each
benchmark, then median over the rounds):

* per-pass time of DP-CD and CD on Electricity (45,312 x 8, logistic) and on the dense
  1e5 x 100 LASSO: `(T(P passes) - T(1 pass)) / (P - 1)`, which removes the fixed cost
  of a fit (validation, calibration, final objective);
* ns per sample-coordinate (`per-pass / (n p)`) and GB/s of design read (`n p 8 / per-pass`);
* the ratios before / after, DP-CD / CD, and CD pass / one plain read of the design
  (`read/simd-dot` and `read/col-dot` of the after binary).

Usage: python3 benches/compare_passes.py [--base COMMIT] [--rounds N]
"""

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile

BASE = "b94e9c8"  # the branch point: scalar kernels, libm exp
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FILTER = r"^((electricity|dense-1e5x100)/(dp-cd|cd)/|read/)"
PROBLEMS = {
    # name: (n, p, small P, large P)
    "electricity": (45_312, 8, 1, 10),
    "dense-1e5x100": (100_000, 100, 1, 5),
}


def build(src, target):
    out = subprocess.run(
        ["cargo", "bench", "-p", "dp-bench", "--bench", "solvers", "--no-run",
         "--message-format=json"],
        cwd=src, env={**os.environ, "CARGO_TARGET_DIR": target},
        check=True, capture_output=True, text=True,
    ).stdout
    for line in out.splitlines():
        msg = json.loads(line)
        if msg.get("reason") == "compiler-artifact" and msg.get("executable") \
                and msg["target"]["name"] == "solvers":
            return msg["executable"]
    sys.exit("no solvers bench executable found")


def run(binary, home):
    err = subprocess.run([binary, "--bench", FILTER, "--noplot"], cwd=ROOT,
                         env={**os.environ, "CRITERION_HOME": home}, check=True,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True).stderr
    res = {"zero-steps": [l for l in err.splitlines() if l.startswith("zero-steps")]}
    for dirpath, _dirs, files in os.walk(home):
        if "estimates.json" in files and dirpath.endswith("/new"):
            bench = os.path.join(dirpath, "benchmark.json")
            with open(bench) as f:
                full_id = json.load(f)["full_id"]
            with open(os.path.join(dirpath, "estimates.json")) as f:
                res[full_id] = json.load(f)["median"]["point_estimate"] * 1e-9
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", default=BASE)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="compare-passes-")
    before_src = os.path.join(tmp, "before")
    os.makedirs(before_src)
    archive = subprocess.run(["git", "archive", args.base], cwd=ROOT, check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", before_src], input=archive, check=True)
    bins = {
        "before": build(before_src, os.path.join(tmp, "before-target")),
        "after": build(ROOT, os.environ.get("CARGO_TARGET_DIR",
                                            os.path.join(ROOT, "target"))),
    }
    runs = {"before": [], "after": []}
    for r in range(args.rounds):
        order = ["before", "after"] if r % 2 == 0 else ["after", "before"]
        for label in order:
            runs[label].append(run(bins[label], os.path.join(tmp, f"{label}-{r}")))
            print(f"round {r + 1}/{args.rounds}: {label} done", file=sys.stderr)

    def med(label, key):
        vals = [x[key] for x in runs[label] if key in x and key != "zero-steps"]
        return statistics.median(vals) if vals else float("nan")

    def per_pass(label, prob, solver):
        _n, _p, p1, p2 = PROBLEMS[prob]
        t1 = med(label, f"{prob}/{solver}/{p1} passes")
        t2 = med(label, f"{prob}/{solver}/{p2} passes")
        return (t2 - t1) / (p2 - p1)

    model = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    model = next((l.split(":", 1)[1].strip() for l in model.splitlines()
                  if l.startswith("Model name")), "unknown")
    flags = open("/proc/cpuinfo").read()
    level = "avx512" if "avx512f" in flags else ("avx2" if "avx2" in flags else "scalar")
    print(f"machine: {model} ({os.cpu_count()} cores, shared), SIMD level of the after "
          f"binary: {level}")
    print(f"date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M UTC}")
    print(f"command: python3 benches/compare_passes.py --base {args.base} "
          f"--rounds {args.rounds}")
    print(f"base (before): {args.base}; after: working tree at "
          + subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                           capture_output=True, text=True).stdout.strip())
    print()
    print("| problem | solver | before ms/pass | after ms/pass | before / after "
          "| after ns per sample-coord | after GB/s of design |")
    print("|---|---|---|---|---|---|---|")
    after = {}
    for prob, (n, p, _a, _b) in PROBLEMS.items():
        for solver in ["cd", "dp-cd"]:
            b = per_pass("before", prob, solver)
            a = per_pass("after", prob, solver)
            after[(prob, solver)] = a
            print(f"| {prob} | {solver} | {b * 1e3:.3f} | {a * 1e3:.3f} | {b / a:.2f} "
                  f"| {a / (n * p) * 1e9:.3f} | {n * p * 8 / a / 1e9:.1f} |")
    print()
    print("| problem | DP-CD / CD pass (after) | CD pass / read (simd-dot) "
          "| CD pass / read (col-dot) | read simd-dot ms (GB/s) | read col-dot ms (GB/s) |")
    print("|---|---|---|---|---|---|")
    for prob, (n, p, _a, _b) in PROBLEMS.items():
        rs = med("after", f"read/simd-dot/{prob}")
        rc = med("after", f"read/col-dot/{prob}")
        cd = after[(prob, "cd")]
        gb = n * p * 8 / 1e9
        print(f"| {prob} | {after[(prob, 'dp-cd')] / cd:.3f} | {cd / rs:.2f} | {cd / rc:.2f} "
              f"| {rs * 1e3:.3f} ({gb / rs:.1f}) | {rc * 1e3:.3f} ({gb / rc:.1f}) |")


    print()
    print("Steps that left w_j unchanged (no predictor update), after binary, one seeded fit:")
    print()
    for line in runs["after"][0]["zero-steps"]:
        if "california" not in line:
            print(f"* {line}")


if __name__ == "__main__":
    main()
