"""Scaling of CD / DP-CD passes with n, p and the density, and fixed costs (PLD calibration).

    python3 benches/scaling.py [--quick] [--no-doc] [--from-results JSON]

Builds ``target/release/xtask`` and runs its ``study scaling`` (the code is
``crates/dp-bench/src/studies/scaling.rs``) once per size (one
process per size, so that each peak memory ``VmHWM`` is that size's own): dense and sparse
(density 1 %) designs for n in {1e4, 1e5, 1e6} x p in {10, 100, 1000, 1e4}, skipping the
sizes whose estimated peak does not fit in memory. Dense designs are built with the
eager constructor (``DenseDesign::from_matrix``: column-major + row-major copy); the
largest dense sizes are also run with ``from_matrix_deferred_rows`` (one copy), and the
peak of the three dense construction paths is compared at 1e5 x 1000. Then the PLD
calibration of a 1e4-step Poisson-subsampled Gaussian plan.

Writes the section between ``<!-- scaling:begin -->`` and ``<!-- scaling:end -->`` of
docs/performance.md (appended at the end the first time; the rest of the file is left
alone) and the raw JSON of every process to benches/scaling_results.json, unless
``--no-doc``. ``--from-results`` re-renders the section from a saved JSON, no timing.
``--quick``: n and p up to 1e5 x 100 only (for trying the script).
"""

import argparse
import datetime
import json
import math
import os
import platform
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, ".."))
DOC = os.path.join(ROOT, "docs", "performance.md")
BIN = [os.path.join(ROOT, "target", "release", "xtask"), "study", "scaling"]
RESULTS = os.path.join(HERE, "scaling_results.json")
BEGIN, END = "<!-- scaling:begin -->", "<!-- scaling:end -->"
NS = [10_000, 100_000, 1_000_000]
PS = [10, 100, 1000, 10_000]
DENSITY = 0.01
GIB = 1024 ** 3
# Sizes whose estimated peak exceeds this fraction of MemTotal are skipped (the machine
# is shared; the rest is left to the other jobs).
MEM_FRACTION = 0.8
# Dense sizes of at least this many values also run with the deferred row copy.
DEFERRED_FROM = 10 ** 9


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--no-doc", action="store_true")
    ap.add_argument("--from-results", metavar="JSON")
    ap.add_argument("--pld-only", action="store_true",
                    help="rerun only the PLD calibration rows; the pass tables are re-rendered "
                         "from benches/scaling_results.json")
    return ap.parse_args()


def sh(cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def mem_total():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no MemTotal in /proc/meminfo")


def loadavg():
    with open("/proc/loadavg") as f:
        return "/".join(f.read().split()[:3])


def machine():
    model, cpus = "unknown", os.cpu_count()
    for line in sh(["lscpu"]).splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "Model name":
            model = value.strip()
    return f"{model}, {cpus} CPUs, {mem_total() / GIB:.1f} GiB RAM"


def estimated_peak(kind, n, p, build="matrix"):
    """Bytes at the peak, from the constructors' copies (checked by the 1e5 x 1000 runs)."""
    if kind == "dense":
        copies = {"slice": 3, "matrix": 2, "deferred": 1}[build]
        return 8 * n * p * copies + 64 * n
    nnz = n * p * DENSITY
    # triplets (24 B) + from_triplets' sorted and merged copies (24 B each) + CSC + CSR
    # (16 B each per non-zero).
    return nnz * (24 * 3 + 32) + 64 * n


def run(args):
    t0 = time.time()
    out = json.loads(sh(BIN + [str(a) for a in args]))
    out["command"] = "target/release/xtask study scaling " + " ".join(str(a) for a in args)
    out["wall_seconds"] = time.time() - t0
    return out


def measure(quick):
    subprocess.run(["cargo", "build", "--release", "-p", "xtask"],
                   cwd=ROOT, check=True)
    limit = MEM_FRACTION * mem_total()
    meta = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine(),
        "load_start": loadavg(),
        "rustc": sh(["rustc", "--version"]).strip(),
        "commit": sh(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"]).strip(),
        "dirty": bool(sh(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"])),
        "mem_limit_bytes": limit,
        "mem_total_bytes": mem_total(),
        "command": "python3 benches/scaling.py" + (" --quick" if quick else ""),
    }
    t0 = time.time()
    ns, ps = (NS[:2], PS[:2]) if quick else (NS, PS)
    sizes, skipped = [], []
    for kind in ["dense", "sparse"]:
        for n in ns:
            for p in ps:
                builds = ["matrix"]
                if kind == "dense" and n * p >= DEFERRED_FROM:
                    builds.append("deferred")
                for build in builds:
                    need = estimated_peak(kind, n, p, build)
                    if need > limit:
                        skipped.append({"kind": kind, "n": n, "p": p, "build": build,
                                        "estimated_peak_bytes": need})
                        continue
                    args = ["pass", "--kind", kind, "--n", n, "--p", p]
                    args += ["--build", build] if kind == "dense" else ["--density", DENSITY]
                    print(f"{kind} {n} x {p} ({build}) ...", file=sys.stderr, flush=True)
                    r = run(args)
                    r["estimated_peak_bytes"] = need
                    r["load_after"] = loadavg()
                    sizes.append(r)
    builds = []
    if not quick:
        for build in ["slice", "matrix", "deferred"]:
            r = run(["pass", "--kind", "dense", "--n", 100_000, "--p", 1000, "--build", build,
                     "--no-fit"])
            builds.append(r)
    print("pld ...", file=sys.stderr, flush=True)
    pld = run(["pld", "--reps", 3])
    meta["load_end"] = loadavg()
    meta["minutes"] = (time.time() - t0) / 60
    return {"meta": meta, "sizes": sizes, "skipped": skipped, "builds": builds, "pld": pld}


def measure_pld():
    """Only the PLD rows, with their own provenance (date, commit, load)."""
    subprocess.run(["cargo", "build", "--release", "-p", "xtask"],
                   cwd=ROOT, check=True)
    meta = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "load_start": loadavg(),
        "commit": sh(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"]).strip(),
        "dirty": bool(sh(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"])),
        "command": "python3 benches/scaling.py --pld-only",
    }
    pld = run(["pld", "--reps", 3])
    meta["load_end"] = loadavg()
    pld["meta"] = meta
    return pld


def fmt_n(x):
    e = int(round(math.log10(x)))
    return f"1e{e}" if 10 ** e == x else str(x)


def gib(b):
    return f"{b / GIB:.2f}"


def slope(points):
    """Least-squares slope of log(y) against log(x)."""
    xs = [math.log(x) for x, _ in points]
    ys = [math.log(y) for _, y in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx > 0 else float("nan")


def render(res):
    m = res["meta"]
    L = ["## Scaling", ""]
    L.append("Generated by `benches/scaling.py`; do not edit by hand, rerun it (numbers "
             "below are the output of the run described here).")
    L.append("")
    L.append(f"- Command (from the repository root): `{m['command']}` (builds "
             "`cargo build --release -p xtask`, then runs "
             "`target/release/xtask study scaling pass ...` once per size and "
             "`scaling pld --reps 3`; the command of every process is in "
             "`benches/scaling_results.json`: runs before 2026-12-02 ran the same code "
             "as the `scaling` example of dp-bench).")
    L.append(f"- Date: {m['date']}; run took {m['minutes']:.1f} min; at commit {m['commit']}"
             + (" with uncommitted changes" if m["dirty"] else "") + f"; {m['rustc']}.")
    L.append(f"- Machine (lscpu): {m['machine']}; shared with other jobs: load average "
             f"(1/5/15 min) {m['load_start']} at start, {m['load_end']} at end (and after "
             "each size in the raw JSON).")
    L.append("- Problem: ridge regression, loss (1/2)(z - y)^2, penalty L2(1e-3) (every step "
             "moves its coordinate: no zero steps, so the work of a pass does not depend on "
             "the data); features uniform on [-1, 1], sparse ones present with probability "
             "1 %; public smoothness bounds M_j = 1 (`Smoothness::Given(Tagged::public(..))`); "
             "DP-CD at epsilon = 1, delta = 1/n^2, clip 1. Single thread.")
    L.append("- Time per pass: marginal cost `(t(P) - t(1)) / (P - 1)`, each t the fastest "
             "of `inner` fits (1 and P passes alternated), after a warm-up fit; DP-CD's "
             "calibration (its `plan`, timed apart) is subtracted, as its cost differs "
             "between 1 and P passes. P and `inner` are picked from the warm-up fit (P = 20 "
             "for small sizes down to 4 for the largest).")
    L.append("- GB/s = bytes of the design's non-zero values (8 nnz; a sparse column also "
             "reads an 8-byte row index per non-zero, not counted) / time per pass. "
             "Peak memory: `VmHWM` of the measuring process (one process per size), read "
             "after building the design and at the end; ratio = peak at end / 8 nnz.")
    L.append(f"- Dense designs are built with `DenseDesign::from_matrix` (the generated "
             "column-major buffer moved into a `DMatrix`, plus the row-major copy: 2 copies) "
             "unless the row says `deferred` (`DenseDesign::from_matrix_deferred_rows`: "
             "the row-major copy is built on the first row access, which CD / DP-CD never "
             "make: 1 copy).")
    L.append("")
    L.append("| design | n | p | nnz | build | P | CD ms/pass | DP-CD ms/pass | DP-CD / CD | "
             "CD ns/nnz | DP-CD ns/nnz | CD GB/s | DP-CD GB/s | peak after build (GiB) | "
             "peak at end (GiB) | peak / 8 nnz |")
    L.append("|" + "---|" * 16)
    for r in res["sizes"]:
        cd = next(x for x in r["results"] if x["solver"] == "cd")
        dp = next(x for x in r["results"] if x["solver"] == "dp-cd")
        peak = r["memory_at_end"]["vm_hwm_bytes"]
        L.append(
            f"| {r['kind']} | {fmt_n(r['n'])} | {fmt_n(r['p'])} | {r['nnz']:,} | "
            f"{r.get('build', 'csc+csr')} | {r['passes'][1]} | "
            f"{cd['seconds_per_pass'] * 1e3:.4g} | {dp['seconds_per_pass'] * 1e3:.4g} | "
            f"{dp['seconds_per_pass'] / cd['seconds_per_pass']:.2f} | "
            f"{cd['ns_per_nonzero']:.3f} | {dp['ns_per_nonzero']:.3f} | "
            f"{cd['gb_per_s']:.1f} | {dp['gb_per_s']:.1f} | "
            f"{gib(r['memory_after_build']['vm_hwm_bytes'])} | {gib(peak)} | "
            f"{peak / (8 * r['nnz']):.2f} |")
    L.append("")
    if res["skipped"]:
        L.append("Skipped (estimated peak above "
                 f"{MEM_FRACTION:.0%} of the {mem_total() / GIB:.1f} GiB of RAM; the estimate "
                 "counts the constructors' copies, see the build comparison below):")
        L.append("")
        for s in res["skipped"]:
            L.append(f"- {s['kind']} {fmt_n(s['n'])} x {fmt_n(s['p'])} ({s['build']}): "
                     f"estimated peak {gib(s['estimated_peak_bytes'])} GiB "
                     f"({8 * s['n'] * s['p'] / GIB:.1f} GiB per copy of the values)"
                     if s["kind"] == "dense" else
                     f"- {s['kind']} {fmt_n(s['n'])} x {fmt_n(s['p'])}: estimated peak "
                     f"{gib(s['estimated_peak_bytes'])} GiB")
        L.append("")
    # Growth: log-log slopes of time per pass and peak memory against nnz, over the
    # sizes whose values exceed 32 MiB (out of cache) and over all.
    L.append("Growth (least-squares slope of log(time per pass) and of log(peak at end) "
             "against log(nnz); 1 = linear):")
    L.append("")
    L.append("| design | sizes | CD time | DP-CD time | peak memory |")
    L.append("|---|---|---|---|---|")
    for kind in ["dense", "sparse"]:
        for label, keep in [("all", lambda r: True),
                            ("8 nnz >= 32 MiB", lambda r: 8 * r["nnz"] >= 32 * 2 ** 20)]:
            rows = [r for r in res["sizes"] if r["kind"] == kind and keep(r)
                    and r.get("build", "matrix") == "matrix"]
            if len(rows) < 2:
                continue
            sl = []
            for solver in ["cd", "dp-cd"]:
                sl.append(slope([(r["nnz"], next(x for x in r["results"]
                                                 if x["solver"] == solver)["seconds_per_pass"])
                                 for r in rows]))
            sl.append(slope([(r["nnz"], r["memory_at_end"]["vm_hwm_bytes"]) for r in rows]))
            L.append(f"| {kind} | {label} ({len(rows)}) | {sl[0]:.3f} | {sl[1]:.3f} | "
                     f"{sl[2]:.3f} |")
    L.append("")
    if res["builds"]:
        L.append("Peak memory of the three ways to build a dense 1e5 x 1000 design (800 MB of "
                 "values; `scaling pass --no-fit`, one process each):")
        L.append("")
        L.append("| build | constructor | peak (GiB) | peak / 8 n p | build s |")
        L.append("|---|---|---|---|---|")
        ctor = {"slice": "`from_col_major(n, p, &buffer)` (caller keeps its buffer)",
                "matrix": "`from_matrix(DMatrix::from_vec(n, p, buffer))`",
                "deferred": "`from_matrix_deferred_rows(DMatrix::from_vec(n, p, buffer))`"}
        for r in res["builds"]:
            peak = r["memory_after_build"]["vm_hwm_bytes"]
            L.append(f"| {r['build']} | {ctor[r['build']]} | {gib(peak)} | "
                     f"{peak / (8 * r['nnz']):.2f} | {r['build_seconds']:.2f} |")
        L.append("")
    L.extend(big_dense(res))
    p = res["pld"]
    L.append(f"PLD calibration (`calibrate_sigma`, `Accountant::Pld`) of "
             f"{p['results'][0]['steps']:,} Poisson-subsampled Gaussian steps at epsilon = "
             f"{p['target_epsilon']:g}, delta = {p['delta']:g} (`scaling pld --reps 3`; "
             "times of the 3 calls; target: under 1 s):")
    L.append("")
    if "meta" in p:
        pm = p["meta"]
        L.append(f"These rows were rerun apart from the tables above: `{pm['command']}` on "
                 f"{pm['date']} at commit {pm['commit']}"
                 + (" with uncommitted changes" if pm["dirty"] else "")
                 + f"; load average (1/5/15 min) {pm['load_start']} at start, "
                 f"{pm['load_end']} at end.")
        L.append("")
    L.append("| sampling rate | seconds (fastest) | seconds (each call) | noise multiplier | "
             "epsilon reported | under 1 s | one PLD epsilon at the result (s) | "
             "RDP calibration (start of the search, s) | calibration / one PLD epsilon |")
    L.append("|---|---|---|---|---|---|---|---|---|")
    for r in p["results"]:
        L.append(f"| {r['sampling_rate']:g} | {r['seconds_min']:.3f} | "
                 f"{', '.join(f'{t:.3f}' for t in r['seconds'])} | "
                 f"{r['noise_multiplier']:.6g} | {r['epsilon']:.7f} | "
                 f"{'yes' if r['seconds_min'] < 1 else '**no**'} | "
                 f"{r['one_pld_epsilon_seconds']:.3f} | {r['rdp_calibration_seconds']:.4f} | "
                 f"{r['seconds_min'] / r['one_pld_epsilon_seconds']:.1f} |")
    L.append("")
    return "\n".join(L)


def big_dense(res):
    """The 1e6 x 1000 dense design (8 GB of values): peaks of each build, from the runs."""
    n, p = 1_000_000, 1000
    rows = {r["build"]: r for r in res["sizes"]
            if r["kind"] == "dense" and r["n"] == n and r["p"] == p}
    if not rows:
        return []
    total = res["meta"].get("mem_total_bytes", mem_total())
    L = [f"Dense {fmt_n(n)} x {fmt_n(p)} ({8 * n * p / GIB:.2f} GiB of values per copy), "
         f"on this machine's {total / GIB:.1f} GiB:", ""]
    for build, r in rows.items():
        peak = r["memory_at_end"]["vm_hwm_bytes"]
        cd = next(x for x in r["results"] if x["solver"] == "cd")
        L.append(f"- `{build}`: ran; peak {gib(peak)} GiB ({peak / total:.0%} of RAM), "
                 f"row-major copy built: {'yes' if r['row_copy_built_after_fits'] else 'no'}; build "
                 f"{r['build_seconds']:.1f} s; CD pass {cd['seconds_per_pass'] * 1e3:.4g} ms.")
    slice_ = next((b for b in res["builds"] if b["build"] == "slice"), None)
    if slice_:
        ratio = slice_["memory_after_build"]["vm_hwm_bytes"] / (8 * slice_["nnz"])
        est = ratio * 8 * n * p
        L.append(f"- `slice` (`from_col_major(n, p, &buffer)`): not run at this size; its peak "
                 f"is {ratio:.2f} x the values at 1e5 x 1000 (table above), i.e. about "
                 f"{gib(est)} GiB here ({est / total:.0%} of RAM).")
    L.append("")
    return L


def write_doc(section):
    with open(DOC) as f:
        text = f.read()
    block = f"{BEGIN}\n\n{section}\n{END}\n"
    if BEGIN in text and END in text:
        a, b = text.index(BEGIN), text.index(END) + len(END)
        text = text[:a] + block.rstrip("\n") + text[b:]
    else:
        text = text.rstrip("\n") + "\n\n" + block
    with open(DOC, "w") as f:
        f.write(text)


def main():
    a = parse_args()
    if a.pld_only:
        with open(RESULTS) as f:
            res = json.load(f)
        res["pld"] = measure_pld()
    elif a.from_results:
        with open(a.from_results) as f:
            res = json.load(f)
    else:
        res = measure(a.quick)
    section = render(res)
    print(section)
    if not a.no_doc:
        if not a.from_results:  # (a full or a --pld-only run)
            with open(RESULTS, "w") as f:
                json.dump(res, f, indent=1)
                f.write("\n")
        write_doc(section)


if __name__ == "__main__":
    main()
