#!/usr/bin/env python3
"""The user's path, timed: one pass of `dp-erm fit` (the command-line program) beside one
plain numpy read of the same design and one scikit-learn coordinate-descent epoch, all in
one run, alternating, on the same machine.

Problems:

* dense LASSO, 100000 x 100 (X_ij ~ N(0, 1), 10 active N(0, 1) coefficients, y = Xw +
  N(0, 0.1^2), numpy seed 0), written once as a CSV (about 190 MB) that both sides read;
  lambda = 0.01, loss (1/2n)||y - Xw||^2, no intercept;
* Electricity (crates/dp-bench/data/electricity.csv, label `class`, UP = +1), logistic +
  L2 (lambda = 1e-5), DP-CD at epsilon 1, delta 1/n^2, declared bound |x| <= 1.

What is timed:

* ours: `dp-erm fit ... --passes K --json` as a user runs it (default threads: the CLI's
  own rule, 2 pieces per sweep for columns of >= 65,536 rows); a pass is the marginal
  solver time `(solver_seconds(hi) - solver_seconds(1)) / (hi - 1)` read from its JSON
  output, so the CSV parsing and the process start-up, paid once per fit, cancel;
* numpy: one plain read of the Fortran-order design, `x[:, j] @ r` for every column (one
  BLAS ddot per column, what a CD epoch of scikit-learn runs);
* scikit-learn: `Lasso(alpha=0.01, fit_intercept=False, tol=0, selection="cyclic",
  precompute=False)`, the marginal time of an epoch between max_iter = 1 and hi.

The peers run as a user runs them: default BLAS threads (the script sets no thread
variable). Each figure is the fastest of --inner back-to-back runs (interference only
adds time); the report gives the median over --reps rounds and the ratios of the medians.

Usage, from the repository root, with numpy and scikit-learn installed:

    /work/venv-peers/bin/python benches/peers/cli_pass.py [--reps 5] [--hi 11] [--inner 3]
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from datetime import datetime, timezone

import numpy as np
import sklearn
from sklearn.linear_model import Lasso

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ELECTRICITY = os.path.join(ROOT, "crates", "dp-bench", "data", "electricity.csv")
N, P, ACTIVE, NOISE, LAM = 100_000, 100, 10, 0.1, 0.01


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--hi", type=int, default=11)
    ap.add_argument("--inner", type=int, default=3)
    ap.add_argument("--data-dir", default=os.path.join(ROOT, "target", "peers-data"))
    ap.add_argument("--no-build", action="store_true")
    return ap.parse_args()


def dense_problem(data_dir):
    rng = np.random.default_rng(0)
    x = np.asfortranarray(rng.standard_normal((N, P)))
    w = np.zeros(P)
    w[rng.choice(P, ACTIVE, replace=False)] = rng.standard_normal(ACTIVE)
    y = x @ w + NOISE * rng.standard_normal(N)
    path = os.path.join(data_dir, "cli_dense.csv")
    if not os.path.exists(path):
        os.makedirs(data_dir, exist_ok=True)
        tmp = path + ".tmp"
        header = ",".join([f"x{j}" for j in range(P)] + ["y"])
        np.savetxt(tmp, np.column_stack([x, y]), delimiter=",", header=header,
                   comments="", fmt="%.17g")
        os.replace(tmp, path)
    return path, x, y


def cli_pass(binary, base_args, hi, inner):
    """Marginal solver seconds of one pass of `dp-erm fit`, fastest of `inner` fits at 1
    and at `hi` passes."""
    def solver_seconds(k):
        best = float("inf")
        for _ in range(inner):
            out = subprocess.run([binary, "fit", *base_args, "--passes", str(k), "--json"],
                                 check=True, capture_output=True, text=True).stdout
            best = min(best, json.loads(out)["solver_seconds"])
        return best
    return (solver_seconds(hi) - solver_seconds(1)) / (hi - 1)


def numpy_read(x, inner):
    r = (np.arange(x.shape[0]) % 7) - 3.0
    best = float("inf")
    for _ in range(inner * 3):
        t = time.perf_counter()
        s = 0.0
        for j in range(x.shape[1]):
            s += x[:, j] @ r
        best = min(best, time.perf_counter() - t)
    return best


def sklearn_epoch(x, y, hi, inner):
    def fit(k):
        best = float("inf")
        for _ in range(inner):
            t = time.perf_counter()
            Lasso(alpha=LAM, max_iter=k, tol=0.0, precompute=False, fit_intercept=False,
                  selection="cyclic", copy_X=False).fit(x, y)
            best = min(best, time.perf_counter() - t)
        return best
    return (fit(hi) - fit(1)) / (hi - 1)


def main():
    args = parse_args()
    start = time.time()
    if not args.no_build:
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "dp-erm-cli"], cwd=ROOT,
                       check=True)
    binary = os.path.join(ROOT, "target", "release", "dp-erm")
    path, x, y = dense_problem(args.data_dir)
    model = os.path.join(args.data_dir, "cli_model.json")
    # --no-intercept: the problems have none (scikit-learn's fit_intercept=False); the
    # command line fits one by default on CSV input.
    cd_args = ["--data", path, "--target", "y", "--loss", "squared", "--penalty", "l1",
               "--lambda", str(LAM), "--algorithm", "cd", "--step", "1", "--seed", "1",
               "--no-intercept", "--model-out", model]
    dp_cd_args = ["--data", path, "--target", "y", "--loss", "squared", "--penalty", "l1",
                  "--lambda", str(LAM), "--algorithm", "dp-cd", "--epsilon", "1", "--delta",
                  str(1.0 / N ** 2), "--feature-bound", "5", "--step", "1", "--clip", "1",
                  # A private regression declares its targets' scale too (public here:
                  # y = Xw + noise with 10 N(0, 1) weights has sd about 3.2).
                  "--target-bound", "20",
                  "--seed", "1", "--no-intercept", "--model-out", model]
    n_elec = sum(1 for _ in open(ELECTRICITY)) - 1
    elec_args = ["--data", ELECTRICITY, "--target", "class", "--positive", "UP",
                 "--negative", "DOWN", "--loss", "logistic", "--penalty", "l2", "--lambda",
                 "1e-5", "--algorithm", "dp-cd", "--epsilon", "1", "--delta",
                 str(1.0 / n_elec ** 2), "--feature-bound", "1", "--step", "1", "--clip", "1",
                 "--seed", "1", "--no-intercept", "--model-out", model]
    rows = {k: [] for k in ("numpy read", "sklearn CD epoch", "dp-erm fit cd pass",
                            "dp-erm fit dp-cd pass", "electricity dp-erm fit dp-cd pass")}
    for rep in range(args.reps):
        rows["numpy read"].append(numpy_read(x, args.inner))
        rows["sklearn CD epoch"].append(sklearn_epoch(x, y, args.hi, args.inner))
        rows["dp-erm fit cd pass"].append(cli_pass(binary, cd_args, args.hi, args.inner))
        rows["dp-erm fit dp-cd pass"].append(cli_pass(binary, dp_cd_args, args.hi,
                                                      args.inner))
        rows["electricity dp-erm fit dp-cd pass"].append(cli_pass(binary, elec_args,
                                                                  args.hi, args.inner))
        print(f"round {rep + 1}/{args.reps}: " + ", ".join(
            f"{k} {v[-1] * 1e3:.3f} ms" for k, v in rows.items()), file=sys.stderr)
    med = {k: statistics.median(v) for k, v in rows.items()}
    load = os.getloadavg()
    print(f"# dp-erm fit through the command line vs numpy and scikit-learn "
          f"({datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, {os.cpu_count()} cores, "
          f"load {load[0]:.2f} at start of report, numpy {np.__version__}, scikit-learn "
          f"{sklearn.__version__}, Python {platform.python_version()}, "
          f"{args.reps} rounds x fastest of {args.inner}, hi = {args.hi}, "
          f"{time.time() - start:.0f} s)")
    print()
    print("| what | median ms | min-max ms | / numpy read | / sklearn epoch |")
    print("|---|---|---|---|---|")
    for k, v in rows.items():
        m = med[k]
        ratio = lambda ref: f"{m / med[ref]:.2f}" if not k.startswith("electricity") else "-"
        print(f"| {k} | {m * 1e3:.3f} | {min(v) * 1e3:.3f}-{max(v) * 1e3:.3f} | "
              f"{ratio('numpy read')} | {ratio('sklearn CD epoch')} |")


if __name__ == "__main__":
    main()
