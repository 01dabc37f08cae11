#!/usr/bin/env python3
"""Where does a dense CD pass spend its time beyond one read of the design?

Runs, alternating in one run on the same machine (single-threaded BLAS):

* our column sweeps over a 1e5 x 100 column-major design (`col_read` example of
  dp-models): the library's dot product, a hand FMA dot with and without cache hints, the
  same with a separate multiply and add, and the squared loss's coordinate-gradient
  kernel (what a CD step runs);
* numpy's per-column sweep (`X[:, j] @ r` for every j: one BLAS `ddot` per column, what
  scikit-learn's CD epoch runs) and its one-call read `X.T @ r` (BLAS `gemv`);
* our CD pass on the peers' dense LASSO (`cargo xtask study pass-times`), at the problem's lambda = 0.01
  (a few coordinates move each pass) and at lambda = 1000 (no step ever moves, so the
  pass is 100 gradient sweeps and nothing else).

Prints a markdown table of medians over the rounds and the ratios to numpy's
per-column sweep. Usage, from the repository root, with the peers' virtual environment
(`benches/peers/README.md`):

    benches/peers/.venv/bin/python benches/peers/read_rates.py [--rounds 3]
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"

import numpy as np  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
N, P = 100_000, 100


def build():
    for cmd in (["--example", "col_read", "-p", "dp-models"], ["-p", "xtask"]):
        subprocess.run(["cargo", "build", "--release", "-q"] + cmd, cwd=ROOT, check=True)
    return (os.path.join(ROOT, "target", "release", "examples", "col_read"),
            [os.path.join(ROOT, "target", "release", "xtask"), "study", "pass-times"])


def median_ms(f, reps):
    t = []
    for _ in range(reps):
        a = time.perf_counter()
        f()
        t.append(time.perf_counter() - a)
    return statistics.median(t) * 1e3


def col_read(binary, reps):
    out = subprocess.run([binary, str(N), str(reps)], capture_output=True, text=True,
                         check=True).stdout
    rows = {}
    for line in out.splitlines():
        if " median " in line:
            name, rest = line.split(" median ", 1)
            rows["ours: " + name.strip()] = float(rest.split()[0])
    return rows


def cd_pass(binary, data_dir):
    out = subprocess.run(binary + ["time", data_dir, "dense", "--hi", "11", "--inner", "3"],
                         capture_output=True, text=True, check=True).stdout
    for r in json.loads(out)["results"]:
        if r["solver"] == "cd":
            s = r["seconds"]
            return (s[1] - s[0]) / (r["passes"][1] - r["passes"][0]) * 1e3
    raise SystemExit("study pass-times printed no CD row")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=21, help="sweeps per round and variant")
    args = ap.parse_args()
    col_bin, pass_bin = build()
    tmp = tempfile.mkdtemp(prefix="read-rates-")
    small, big = os.path.join(tmp, "l0.01"), os.path.join(tmp, "l1000")
    subprocess.run(pass_bin + ["write", small], check=True, capture_output=True)
    os.makedirs(big)
    for f in ("dense_x.f64", "dense_y.f64"):
        os.symlink(os.path.join(small, f), os.path.join(big, f))
    with open(os.path.join(small, "dense.json")) as fh:
        meta = json.load(fh)
    meta["lambda"] = 1000.0
    with open(os.path.join(big, "dense.json"), "w") as fh:
        json.dump(meta, fh)

    rng = np.random.default_rng(1)
    x = np.asfortranarray(rng.random((N, P)) - 0.5)
    r = np.sin(np.arange(N, dtype=float))

    def per_column():
        s = 0.0
        for j in range(P):
            s += x[:, j] @ r
        return s

    load0 = os.getloadavg()
    rows = {}
    for k in range(args.rounds):
        print(f"round {k + 1}/{args.rounds}", file=sys.stderr)
        for name, v in col_read(col_bin, args.reps).items():
            rows.setdefault(name, []).append(v)
        rows.setdefault("numpy: per-column ddot sweep", []).append(
            median_ms(per_column, args.reps))
        rows.setdefault("numpy: X.T @ r (gemv)", []).append(
            median_ms(lambda: x.T @ r, args.reps))
        rows.setdefault("ours: CD pass, lambda = 0.01", []).append(cd_pass(pass_bin, small))
        rows.setdefault("ours: CD pass, lambda = 1000 (no step moves)", []).append(
            cd_pass(pass_bin, big))
    load1 = os.getloadavg()
    ref = statistics.median(rows["numpy: per-column ddot sweep"])
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next(l.split(":", 1)[1].strip() for l in fh if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    print(f"command: benches/peers/.venv/bin/python benches/peers/read_rates.py "
          f"--rounds {args.rounds} --reps {args.reps}")
    print(f"date (UTC): {datetime.now(timezone.utc):%Y-%m-%d %H:%M}; machine: {cpu}, "
          f"{os.cpu_count()} CPUs; python {platform.python_version()}, numpy "
          f"{np.__version__}; load average at start {load0[0]:.2f}, at end {load1[0]:.2f}")
    print(f"design {N} x {P} (80 MB, column-major); medians over {args.rounds} rounds of "
          f"each round's median; ratio = time / numpy's per-column sweep")
    print()
    print("| sweep | ms (median) | min-max over rounds | ratio |")
    print("|---|---|---|---|")
    for name, v in rows.items():
        if name == "ours: two threads":
            continue
        m = statistics.median(v)
        print(f"| {name} | {m:.3f} | {min(v):.3f}-{max(v):.3f} | {m / ref:.2f} |")


if __name__ == "__main__":
    main()
