"""Side-by-side pass times: our solvers against scikit-learn, Opacus and diffprivlib.

    python benches/peers/run.py [--quick] [--reps R] [--hi H] [--batch-size B]
                                [--threads T] [--no-doc] [--data-dir DIR]

Builds ``target/release/xtask`` and runs its ``study pass-times`` (the code is
``crates/dp-bench/src/studies/pass_times.rs``; before 2026-12-02 it was the ``pass_times``
example of dp-bench), lets it write the shared
problems (dense 1e5 x 100 LASSO, dorothea-like sparse LASSO) to a data directory, reads
them here, and then, R times, alternates ours and theirs on each problem: our process
(``study pass-times time``) then the peers in this process. Every fit runs at 1 and H passes;
the marginal cost of a pass is ``(t(H) - t(1)) / (H - 1)`` so that fixed costs (input
checks, copies, calibration, objective) cancel. Reported: medians over the R
repetitions, with the min-max spread.

Writes the section between ``<!-- peers:begin -->`` and ``<!-- peers:end -->`` of
docs/performance.md (the rest of the file is left alone) and the raw measurements behind
it to benches/peers/results.json, unless ``--no-doc``; prints the section, and keeps the
raw measurements in ``DATA_DIR/peers_results.json`` too.
Not part of CI. See benches/peers/README.md.
"""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
DOC = os.path.join(ROOT, "docs", "performance.md")
ELECTRICITY = os.path.join(ROOT, "crates", "dp-bench", "data", "electricity.csv")
OURS = [os.path.join(ROOT, "target", "release", "xtask"), "study", "pass-times"]
DPL_PYTHON = os.path.join(HERE, ".venv-diffprivlib", "bin", "python")
DATA_DIR = os.path.join(ROOT, "target", "peers-data")  # about 90 MB, rewritten each run
RESULTS = os.path.join(HERE, "results.json")  # the raw measurements behind the doc
BEGIN, END = "<!-- peers:begin -->", "<!-- peers:end -->"


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="2 repetitions, H = 4")
    ap.add_argument("--reps", type=int, help="repetitions (default 7; --quick: 2)")
    ap.add_argument("--hi", type=int, help="passes of the long fit (default 11; --quick: 4)")
    ap.add_argument("--inner", type=int, default=3,
                    help="fits per timing, the fastest kept (default 3)")
    ap.add_argument("--batch-size", type=int, default=64, help="DP-SGD / Opacus batch size")
    ap.add_argument("--threads", type=int, default=1, help="BLAS / torch threads (ours: 1)")
    ap.add_argument("--no-doc", action="store_true", help="do not write docs/performance.md")
    ap.add_argument("--data-dir", default=None,
                    help="where the shared problems go (default: target/peers-data)")
    ap.add_argument("--skip-opacus", action="store_true")
    ap.add_argument("--skip-diffprivlib", action="store_true")
    ap.add_argument("--from-results", metavar="JSON",
                    help="re-render the section from a saved peers_results.json, no timing")
    a = ap.parse_args()
    a.reps = a.reps or (2 if a.quick else 7)
    a.hi = a.hi or (4 if a.quick else 11)
    if a.reps < 1 or a.hi < 2 or a.batch_size < 1 or a.threads < 1 or a.inner < 1:
        ap.error("need --reps, --inner, --batch-size, --threads >= 1 and --hi >= 2")
    return a


ARGS = parse_args()
# Before numpy / scipy / torch load their BLAS.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = str(ARGS.threads)

import csv  # noqa: E402
import datetime  # noqa: E402
import inspect  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import shlex  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
import scipy  # noqa: E402
import scipy.sparse as sp  # noqa: E402
import sklearn  # noqa: E402
from sklearn.linear_model import ElasticNet, Lasso, LogisticRegression, enet_path  # noqa: E402

warnings.filterwarnings("ignore")  # ConvergenceWarning at a fixed pass count is expected


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout


# ----------------------------------------------------------------------------- data


def load_dense(d):
    m = json.load(open(os.path.join(d, "dense.json")))
    n, p = m["n"], m["p"]
    # Column-major on disk: (p, n) C-order, transposed = (n, p) Fortran-order, no copy.
    x = np.fromfile(os.path.join(d, "dense_x.f64"), dtype="<f8").reshape(p, n).T
    y = np.fromfile(os.path.join(d, "dense_y.f64"), dtype="<f8")
    assert x.flags["F_CONTIGUOUS"] and y.shape == (n,)
    return m, x, y


def load_sparse(d):
    m = json.load(open(os.path.join(d, "sparse.json")))
    n, p = m["n"], m["p"]
    indptr = np.fromfile(os.path.join(d, "sparse_indptr.i64"), dtype="<i8")
    indices = np.fromfile(os.path.join(d, "sparse_indices.i64"), dtype="<i8")
    data = np.fromfile(os.path.join(d, "sparse_data.f64"), dtype="<f8")
    x = sp.csc_matrix((data, indices, indptr), shape=(n, p))
    y = np.fromfile(os.path.join(d, "sparse_y.f64"), dtype="<f8")
    assert x.nnz == m["nnz"] and y.shape == (n,)
    return m, x, y


def load_electricity():
    """As xtask fit and the csv_logistic_* examples: label column ``class``, UP = +1,
    DOWN = -1, every other column a feature, clipped to the public bound |x| <= 1."""
    with open(ELECTRICITY, newline="") as f:
        rows = list(csv.reader(f))
    ci = rows[0].index("class")
    labels = {r[ci] for r in rows[1:]}
    assert labels <= {"UP", "DOWN"}, labels
    x = np.array([[float(v) for k, v in enumerate(r) if k != ci] for r in rows[1:]])
    y = np.array([1.0 if r[ci] == "UP" else -1.0 for r in rows[1:]])
    return np.asfortranarray(np.clip(x, -1.0, 1.0)), y


# ----------------------------------------------------------------------------- timing


def fit_pair(make_and_fit, hi, warm):
    """Wall-clock seconds of a fit at 1 and hi passes (after a discarded warm-up), each
    the fastest of --inner back-to-back fits (interference only ever adds time)."""
    if warm:
        make_and_fit(1)
    out = []
    for k in (1, hi):
        best = (float("inf"), None)
        for _ in range(ARGS.inner):
            t = time.perf_counter()
            info = make_and_fit(k)
            best = min(best, (time.perf_counter() - t, info), key=lambda b: b[0])
        out.append(best)
    return {"seconds": [out[0][0], out[1][0]], "info": [out[0][1], out[1][1]]}


def plain_read_dense(x, reps=5):
    """One plain read of a Fortran-order design: one numpy dot product per column."""
    r = (np.arange(x.shape[0]) % 7) - 3.0
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        s = 0.0
        for j in range(x.shape[1]):
            s += x[:, j] @ r
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def plain_read_sparse(x, reps=5):
    """One plain read of a CSC design: X^T r in one scipy call (a Python loop over
    88k columns would measure the interpreter, not the memory)."""
    r = (np.arange(x.shape[0]) % 7) - 3.0
    xt = x.T  # CSR view of the CSC data: X^T r walks the stored columns once
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        xt @ r
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def solution(data_dir, prefix, x, y, lam):
    """The LASSO solution w* (sklearn, to a tight tolerance), written for our side's
    warm-started rows. Not timed."""
    _, coefs, gaps, iters = enet_path(x, y, l1_ratio=1.0, alphas=[lam], max_iter=100_000,
                                      tol=1e-12, precompute=False, copy_X=False,
                                      return_n_iter=True)
    w = np.ascontiguousarray(coefs[:, 0], dtype="<f8")
    w.tofile(os.path.join(data_dir, f"{prefix}_wstar.f64"))
    return {"w": w, "nonzeros": int(np.count_nonzero(w)), "duality_gap": float(gaps[0]),
            "epochs": int(iters[0])}


def sklearn_cd_rows(x, y, lam, hi, warm, w_star, enet=True):
    """sklearn coordinate descent: the Lasso estimator (screening as shipped), enet_path
    with screening off and on (when it takes do_screening), ElasticNet."""
    rows = {}
    # copy_X=False: without an intercept sklearn does not modify X, and an 80 MB copy
    # per fit only adds noise to the difference (its cost would cancel anyway).
    common = dict(fit_intercept=False, tol=0.0, selection="cyclic", copy_X=False)
    rows["sklearn-lasso"] = fit_pair(
        lambda k: Lasso(alpha=lam, max_iter=k, precompute=False, **common).fit(x, y).n_iter_,
        hi,
        warm,
    )
    if SCREENING["path_switch"]:
        for on in (False, True):
            rows[f"sklearn-path-screening-{'on' if on else 'off'}"] = fit_pair(
                lambda k, on=on: enet_path(
                    x, y, l1_ratio=1.0, alphas=[lam], max_iter=k, tol=0.0, precompute=False,
                    copy_X=False, return_n_iter=True, do_screening=on,
                )[-1][0],
                hi,
                warm,
            )
        # Screening's best case: started at the solution, the duality gap is tiny before
        # the first epoch and the inactive features are discarded.
        for on in (False, True):
            rows[f"sklearn-warm-screening-{'on' if on else 'off'}"] = fit_pair(
                lambda k, on=on: enet_path(
                    x, y, l1_ratio=1.0, alphas=[lam], max_iter=k, tol=0.0, precompute=False,
                    copy_X=False, coef_init=w_star.copy(), return_n_iter=True,
                    do_screening=on,
                )[-1][0],
                hi,
                warm,
            )
    if enet:
        # alpha * l1_ratio |w|_1 + alpha (1 - l1_ratio) / 2 |w|^2 = lam (|w|_1 + |w|^2 / 2)
        rows["sklearn-enet"] = fit_pair(
            lambda k: ElasticNet(alpha=2 * lam, l1_ratio=0.5, max_iter=k, precompute=False,
                                 **common).fit(x, y).n_iter_,
            hi,
            warm,
        )
    return rows


def opacus_rows(x, y, hi, b, warm, threads):
    import opacus
    import torch
    from opacus import PrivacyEngine
    from opacus.accountants.utils import get_noise_multiplier

    torch.set_num_threads(threads)
    n, p = x.shape
    xt = torch.from_numpy(x.astype(np.float32))
    yt = torch.from_numpy((y > 0).astype(np.float32))
    delta = 1.0 / n**2
    # Calibration outside the timed region (it takes seconds and differs between 1 and
    # hi epochs, so it would not cancel): Poisson rate b / n, target (1, 1/n^2).
    sigma = {e: get_noise_multiplier(target_epsilon=1.0, target_delta=delta,
                                     sample_rate=b / n, epochs=e, accountant="prv")
             for e in (1, hi)}

    def fit(epochs):
        torch.manual_seed(0)
        model = torch.nn.Linear(p, 1, bias=False)
        opt = torch.optim.SGD(model.parameters(), lr=0.5, weight_decay=1e-5)
        dl = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(xt, yt), batch_size=b)
        model, opt, dl = PrivacyEngine(accountant="prv").make_private(
            module=model, optimizer=opt, data_loader=dl, noise_multiplier=sigma[epochs],
            max_grad_norm=1.0,
        )
        crit = torch.nn.BCEWithLogitsLoss()
        for _ in range(epochs):
            for xb, yb in dl:
                opt.zero_grad()
                crit(model(xb).squeeze(-1), yb).backward()
                opt.step()
        return epochs

    r = fit_pair(fit, hi, warm)
    VERSIONS["torch"] = torch.__version__
    VERSIONS["opacus"] = opacus.__version__
    return {"opacus": r}


def electricity_rows(x, y, hi, b, warm, threads):
    n = x.shape[0]
    c = 1.0 / (n * 1e-5)  # C sum(loss) + |w|^2/2  ==  n C [(1/n) sum(loss) + (lambda/2)|w|^2]
    rows = {}
    for name, kw in (
        # liblinear refuses tol = 0 ("eps <= 0"): a tolerance it cannot reach instead.
        ("liblinear-primal", dict(solver="liblinear", dual=False, tol=1e-12)),
        ("liblinear-dual", dict(solver="liblinear", dual=True, tol=1e-12)),
        ("saga", dict(solver="saga", tol=0.0)),
    ):
        rows[name] = fit_pair(
            lambda k, kw=kw: int(np.max(LogisticRegression(C=c, fit_intercept=False,
                                                           max_iter=k, random_state=0, **kw)
                                        .fit(x, y).n_iter_)),
            hi,
            warm,
        )
    if not ARGS.skip_opacus:
        rows.update(opacus_rows(x, y, hi, b, warm, threads))
    if not ARGS.skip_diffprivlib and os.path.exists(DPL_PYTHON):
        out = json.loads(sh([DPL_PYTHON, os.path.join(HERE, "dpl_worker.py"), ELECTRICITY,
                             str(hi), "1" if warm else "0", str(threads), str(ARGS.inner)]))
        VERSIONS["diffprivlib venv"] = ", ".join(f"{k} {v}" for k, v in out["versions"].items())
        rows["diffprivlib"] = {"seconds": out["seconds"], "info": out["iterations"],
                               "evaluations": out["evaluations"]}
    return rows


# ----------------------------------------------------------------------------- setup


def screening_facts():
    est = "do_screening" in inspect.signature(Lasso).parameters
    path = False
    try:
        xs, ys = np.asfortranarray(np.eye(3)), np.ones(3)
        enet_path(xs, ys, l1_ratio=1.0, alphas=[0.1], max_iter=1, do_screening=False)
        path = True
    except (TypeError, ValueError):
        pass
    doc = "screening" in (Lasso.__doc__ or "").lower()
    return {"estimator_switch": est, "path_switch": path, "documented": doc}


def machine():
    out = sh(["lscpu"])
    info = {}
    for line in out.splitlines():
        k, _, v = line.partition(":")
        info[k.strip()] = v.strip()
    return {
        "model": info.get("Model name", "?"),
        "cpus": info.get("CPU(s)", "?"),
        "cores_per_socket": info.get("Core(s) per socket", "?"),
        "sockets": info.get("Socket(s)", "?"),
        "threads_per_core": info.get("Thread(s) per core", "?"),
    }


VERSIONS = {}
SCREENING = {}


def main():
    if ARGS.from_results:
        saved = json.load(open(ARGS.from_results))
        section = render(saved["meta"], saved["raw"])
        print(section)
        if not ARGS.no_doc:
            write_doc(section)
        return
    started = datetime.datetime.now(datetime.timezone.utc)
    load_start = os.getloadavg()
    exe = os.path.abspath(sys.executable)
    exe = os.path.relpath(exe, ROOT) if exe.startswith(ROOT + os.sep) else "python"
    command = " ".join([exe, os.path.relpath(os.path.abspath(__file__), ROOT)]
                       + [shlex.quote(a) for a in sys.argv[1:]])
    build = ["cargo", "build", "--release", "-p", "xtask"]
    print("building:", " ".join(build), file=sys.stderr)
    subprocess.run(build, check=True, cwd=ROOT)
    data_dir = ARGS.data_dir or DATA_DIR
    os.makedirs(data_dir, exist_ok=True)
    sh(OURS + ["write", data_dir])
    SCREENING.update(screening_facts())
    VERSIONS.update({
        "rustc": sh(["rustc", "--version"]).strip().removeprefix("rustc "),
        "python": platform.python_version(),
        "numpy": np.__version__, "scipy": scipy.__version__, "scikit-learn": sklearn.__version__,
    })
    dense_meta, xd, yd = load_dense(data_dir)
    sparse_meta, xs, ys = load_sparse(data_dir)
    xe, ye = load_electricity()
    wstar = {"dense": solution(data_dir, "dense", xd, yd, dense_meta["lambda"]),
             "sparse": solution(data_dir, "sparse", xs, ys, sparse_meta["lambda"])}
    hi, b = ARGS.hi, ARGS.batch_size
    ours_cmd = {
        "dense": OURS + ["time", data_dir, "dense", "--hi", str(hi), "--inner", str(ARGS.inner)],
        "sparse": OURS + ["time", data_dir, "sparse", "--hi", str(hi), "--inner", str(ARGS.inner)],
        "electricity": OURS + ["time", data_dir, "electricity", "--hi", str(hi),
                               "--batch-size", str(b), "--inner", str(ARGS.inner)],
    }
    theirs = {
        "dense": lambda warm: sklearn_cd_rows(xd, yd, dense_meta["lambda"], hi, warm,
                                              wstar["dense"]["w"]),
        "sparse": lambda warm: sklearn_cd_rows(xs, ys, sparse_meta["lambda"], hi, warm,
                                               wstar["sparse"]["w"], enet=False),
        "electricity": lambda warm: electricity_rows(xe, ye, hi, b, warm, ARGS.threads),
    }
    reads = {"dense": lambda: plain_read_dense(xd), "sparse": lambda: plain_read_sparse(xs),
             "electricity": lambda: plain_read_dense(xe)}
    raw = {k: {"ours": [], "theirs": [], "numpy_read": []} for k in ours_cmd}
    for rep in range(ARGS.reps):
        for prob in ours_cmd:
            t = time.perf_counter()
            raw[prob]["ours"].append(json.loads(sh(ours_cmd[prob])))
            raw[prob]["theirs"].append(theirs[prob](rep == 0))
            raw[prob]["numpy_read"].append(reads[prob]())
            print(f"rep {rep + 1}/{ARGS.reps} {prob}: {time.perf_counter() - t:.1f} s",
                  file=sys.stderr)
    finished = datetime.datetime.now(datetime.timezone.utc)
    meta = {
        "command": command,
        "ours_commands": {k: " ".join([os.path.relpath(OURS[0], ROOT)] + OURS[1:]
                                      + ["time", "DATA_DIR"] + v[len(OURS) + 2:])
                          for k, v in ours_cmd.items()},
        "build": " ".join(build), "machine": machine(), "versions": VERSIONS,
        "screening": SCREENING, "started": started.isoformat(timespec="seconds"),
        "minutes": (finished - started).total_seconds() / 60, "load": [load_start, os.getloadavg()],
        "reps": ARGS.reps, "inner": ARGS.inner, "hi": hi, "batch_size": b, "threads": ARGS.threads,
        "dense": dense_meta, "sparse": sparse_meta,
        "solutions": {k: {kk: vv for kk, vv in v.items() if kk != "w"} for k, v in wstar.items()},
        "electricity": {"n": xe.shape[0], "p": xe.shape[1]},
    }
    with open(os.path.join(data_dir, "peers_results.json"), "w") as f:
        json.dump({"meta": meta, "raw": raw}, f)
    section = render(meta, raw)
    print(section)
    if not ARGS.no_doc:
        write_doc(section)
        with open(RESULTS, "w") as f:
            json.dump({"meta": meta, "raw": raw}, f, indent=1)
        print(f"wrote the peers section of {os.path.relpath(DOC, ROOT)} and "
              f"{os.path.relpath(RESULTS, ROOT)}", file=sys.stderr)
    print(f"raw measurements: {os.path.join(data_dir, 'peers_results.json')}", file=sys.stderr)


# ----------------------------------------------------------------------------- report


def marginal(seconds, hi, units=None):
    """Per-pass cost of one repetition: (t(hi) - t(1)) / (units(hi) - units(1))."""
    du = (units[1] - units[0]) if units else hi - 1
    return (seconds[1] - seconds[0]) / du if du > 0 else float("nan")


class Row:
    def __init__(self, label, unit, per_rep, work, bytes_read, note=""):
        self.label, self.unit, self.note = label, unit, note
        ok = [v for v in per_rep if v == v]  # NaN: no unit was run (nothing to divide by)
        self.med = statistics.median(ok) if ok else float("nan")
        self.lo, self.hi = (min(ok), max(ok)) if ok else (float("nan"), float("nan"))
        self.work, self.bytes = work, bytes_read

    def cells(self, ref=None):
        if not self.med == self.med:  # NaN: no unit was run in any repetition
            return [self.label, self.unit, "—", "—", "—", "—"]
        ms = f"{self.med * 1e3:.3f}" + ("" if self.med > 0 else " (<= 0: below the noise)")
        spread = f"{self.lo * 1e3:.3f}–{self.hi * 1e3:.3f}"
        ns = f"{self.med * 1e9 / self.work:.2f}"
        gbs = f"{self.bytes / self.med / 1e9:.2f}" if self.med > 0 else "—"
        return [self.label, self.unit, ms, spread, ns, gbs]


def rows_for(prob, meta, raw):
    hi = meta["hi"]
    ours_runs, their_runs = raw[prob]["ours"], raw[prob]["theirs"]
    o0 = ours_runs[0]
    n, p, nnz = o0["n"], o0["p"], o0["nnz"]
    work, nbytes = nnz, nnz * 8  # values read once per pass (dense: nnz = n p)
    ours = {}
    for k, res in enumerate(o0["results"]):
        # Calibration (the solver's public plan, timed apart) subtracted, as Opacus
        # calibrates outside its timed region.
        per = [marginal([t - c for t, c in zip(run["results"][k]["seconds"],
                                               run["results"][k]["calibration_seconds"])], hi)
               for run in ours_runs]
        unit = "epoch" if res["solver"].startswith("dp-sgd") else "pass"
        ours[res["solver"]] = Row(f"ours: {res['what']}", unit, per, work, nbytes)
    reads = {
        "numpy": Row("numpy plain read" if prob != "sparse" else "scipy plain read (X^T r)",
                     "read", raw[prob]["numpy_read"], work, nbytes),
        "rust": Row("ours: plain read (col_dot per column)", "read",
                    [r["plain_read_seconds"] for r in ours_runs], work, nbytes),
    }
    labels = {
        "sklearn-lasso": ("sklearn Lasso (estimator: gap safe screening as shipped)", "epoch"),
        "sklearn-path-screening-off": ("sklearn enet_path, l1_ratio=1, do_screening=False", "epoch"),
        "sklearn-path-screening-on": ("sklearn enet_path, l1_ratio=1, do_screening=True", "epoch"),
        "sklearn-enet": ("sklearn ElasticNet(l1_ratio=0.5)", "epoch"),
        "sklearn-warm-screening-off": ("sklearn enet_path started at w*, do_screening=False",
                                       "epoch"),
        "sklearn-warm-screening-on": ("sklearn enet_path started at w*, do_screening=True",
                                      "epoch"),
        "liblinear-primal": ("sklearn LogisticRegression liblinear, primal (trust-region Newton)",
                             "Newton iteration"),
        "liblinear-dual": ("sklearn LogisticRegression liblinear, dual CD", "outer iteration"),
        "saga": ("sklearn LogisticRegression saga", "epoch"),
        "opacus": (f"Opacus DP-SGD, linear model, Poisson batches b = {meta['batch_size']} "
                   "(float32)", "epoch"),
        "diffprivlib": ("diffprivlib LogisticRegression (objective perturbation, L-BFGS)",
                        "L-BFGS iteration"),
    }
    theirs = {}
    for key in their_runs[0]:
        label, unit = labels.get(key, (key, "pass"))
        # Per unit actually run: a solver that stops early (liblinear's trust-region
        # Newton can, even at a tolerance it cannot reach) is divided by the iterations
        # it reports, and the note says so.
        per = [marginal(run[key]["seconds"], hi, run[key]["info"]) for run in their_runs]
        iters = [run[key]["info"] for run in their_runs]
        note = ""
        if any(i != [1, hi] for i in iters):
            note = (f"ran fewer {unit}s than asked: (1, {hi}) asked, "
                    f"{', '.join(str(tuple(i)) for i in sorted({tuple(i) for i in iters}))} "
                    "reported; the cost is divided by the difference reported")
        if key == "sklearn-warm-screening-on":
            note = ("only the features that survive screening are read, so the throughput "
                    "columns (which count the whole design) are not a read rate here")
        theirs[key] = Row(label, unit, per, work, nbytes, note)
        if key == "diffprivlib":
            per_eval = [marginal(run[key]["seconds"], hi, run[key]["evaluations"])
                        for run in their_runs]
            evals = sorted({tuple(run[key]["evaluations"]) for run in their_runs})
            theirs["diffprivlib-eval"] = Row(
                "diffprivlib LogisticRegression, per loss + gradient evaluation",
                "pass", per_eval, work, nbytes,
                f"evaluations at (1, {hi}) iterations: {evals}")
    return (n, p, nnz), ours, reads, theirs


def table(rows):
    head = ["implementation", "unit", "median per unit (ms)", "min–max (ms)",
            "ns per sample-coordinate (sparse: per non-zero)", "GB/s of design values"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        out.append("| " + " | ".join(r.cells()) + " |")
    return out


def ratio_table(pairs):
    out = ["| ours | theirs | ours / theirs (time per unit) |", "|---|---|---|"]
    for a, b in pairs:
        val = f"{a.med / b.med:.3g}" if a.med > 0 and b.med > 0 else NOISE  # NaN too
        out.append(f"| {a.label} | {b.label} | {val} |")
    return out


# sklearn's Lasso epochs from w = 0, as ours: the references of the CD targets.
COLD_CD = ("sklearn-lasso", "sklearn-path-screening-off", "sklearn-path-screening-on")
NOISE = "not measurable (median per-unit time <= 0 or none: noise exceeded the cost)"


def target(name, num, den, limit, speedup=False):
    """A target row: ours / reference <= limit, or (speedup) reference / ours >= limit."""
    if den is None or not (num.med > 0 and den.med > 0):  # NaN too
        return (name, NOISE, None)
    r = num.med / den.med
    return (name, f"{r:.1f}x faster" if speedup else f"{r:.2f}x",
            r >= limit if speedup else r <= limit)


def render(meta, raw):
    m, v, s = meta["machine"], meta["versions"], meta["screening"]
    hi = meta["hi"]
    L = [BEGIN, "", "## Side by side with the Python peers (generated)", "",
         "Generated by `benches/peers/run.py`; do not edit by hand, rerun it "
         "(see `benches/peers/README.md`).", "",
         f"- Date (UTC): {meta['started']}; run took {meta['minutes']:.1f} min.",
         f"- Command (from the repository root): `{meta['command']}` (ours built with "
         f"`{meta['build']}`; "
         f"our side runs `{meta['ours_commands']['dense']}`, ... per repetition).",
         f"- Machine: {m['model']}, {m['cpus']} CPUs ({m['sockets']} socket x "
         f"{m['cores_per_socket']} cores, {m['threads_per_core']} thread per core), shared "
         f"with other builds; load average (1/5/15 min) at start "
         f"{'/'.join(f'{x:.2f}' for x in meta['load'][0])}, at end "
         f"{'/'.join(f'{x:.2f}' for x in meta['load'][1])}.",
         f"- Threads: {meta['threads']} for everyone (OMP/OPENBLAS/MKL_NUM_THREADS, "
         "`torch.set_num_threads`); our solvers are single-threaded, except the dense rows "
         "marked \"two threads\" (`threads(2)`: each step's sweep split over two cores).",
         "- Versions: " + "; ".join(f"{k} {val}" for k, val in v.items()) + ".",
         f"- Method: each fit runs at 1 and {hi} passes (epochs, iterations); the cost of "
         f"one is `(t({hi}) - t(1)) / {hi - 1}`, so loading, input checks, copies and "
         "most fixed costs cancel. Wall-clock time around the fit call on both sides. "
         "Noise calibration, whose cost differs between 1 and "
         f"{hi} passes, is left out on both sides: Opacus calibrates before the timed "
         "region (`get_noise_multiplier`, then `make_private`), and our private solvers' "
         "calibration (their public `plan` method, timed on a fresh solver) is subtracted. "
         f"{meta['reps']} repetitions alternating ours and theirs on each problem "
         "(ours, theirs, ours, theirs, ...); in each, every fit time is the fastest of "
         f"{meta.get('inner', 1)} back-to-back fits (other processes only add time); "
         "medians over repetitions, with the min–max. "
         "One warm-up fit before the timed ones (ours: in every repetition's process; "
         "theirs: in the first repetition).",
         "- Throughput: ns per sample-coordinate = time / (n p) (sparse: / nnz); "
         "GB/s = 8 nnz bytes (the design's values, indices not counted) / time.",
         "- Raw measurements (every repetition): `benches/peers/results.json`; "
         "`--from-results` re-renders this section from them.",
         ""]
    sw = ("yes" if s["estimator_switch"] else "no")
    L += [f"Screening in scikit-learn {v['scikit-learn']}: `Lasso` / `ElasticNet` "
          f"{'document' if s['documented'] else 'do not document'} gap safe screening; "
          f"a screening switch on the estimators: **{sw}**; "
          f"`enet_path(..., do_screening=...)` accepted: "
          f"**{'yes' if s['path_switch'] else 'no'}** (an undocumented keyword, used for the "
          "on / off rows). With `tol=0` (needed for a fixed number of epochs) sklearn "
          "evaluates the duality gap, and so screens, only before the first epoch and "
          "after the last, so a cold start from w = 0 screens out little: the on / off "
          "rows measure the cost of a full epoch either way.", ""]

    sol = meta.get("solutions", {})
    if sol:
        L += ["Warm-started rows start at the solution w* that sklearn reaches first "
              "(`enet_path`, tol = 1e-12, not timed): " + "; ".join(
                  f"{k}: {v['nonzeros']} non-zeros, duality gap {v['duality_gap']:.2e} after "
                  f"{v['epochs']} epochs" for k, v in sol.items()) + ". There, gap safe "
              "screening can discard the inactive features before the first epoch "
              "(its best case); our CD has no screening and still visits every coordinate.",
              ""]
    results = {}
    targets = []
    for prob, title in (
        ("dense", f"Dense LASSO, {meta['dense']['n']} x {meta['dense']['p']} "
                  f"(standard normal features, {meta['dense']['active']} active, "
                  f"lambda = {meta['dense']['lambda']}, loss (1/2n)||y - Xw||^2, no intercept)"),
        ("sparse", f"Sparse LASSO, dorothea-like {meta['sparse']['n']} x {meta['sparse']['p']}, "
                   f"{meta['sparse']['nnz']} non-zeros (density "
                   f"{100 * meta['sparse']['density']:.2f} %), lambda = {meta['sparse']['lambda']}"),
        ("electricity", f"Electricity, {meta['electricity']['n']} x {meta['electricity']['p']}, "
                        "logistic + L2 (lambda = 1e-5, sklearn C = 1 / (n lambda)), features "
                        "clipped to |x| <= 1, no intercept"),
    ):
        (n, p, nnz), ours, reads, theirs = rows_for(prob, meta, raw)
        results[prob] = (ours, reads, theirs)
        L += [f"### {title}", ""]
        L += table(list(reads.values()) + list(ours.values()) + list(theirs.values()))
        notes = [f"- {r.label}: {r.note}" for r in theirs.values() if r.note]
        L += [""] + notes + ([""] if notes else [])
        pairs = []
        if prob in ("dense", "sparse"):
            cd_keys = [k for k in theirs if k in COLD_CD]
            for ours_key in ("cd", "cd-cyclic", "dp-cd", "cd-2t", "dp-cd-2t"):
                if ours_key in ours:
                    pairs += [(ours[ours_key], theirs[k]) for k in cd_keys]
            if "cd-warm" in ours:
                pairs += [(ours["cd-warm"], theirs[k]) for k in theirs if k.startswith("sklearn-warm")]
            if "cd-enet" in ours and "sklearn-enet" in theirs:
                pairs.append((ours["cd-enet"], theirs["sklearn-enet"]))
        else:
            for k in ("saga", "liblinear-dual", "liblinear-primal"):
                pairs.append((ours["cd"], theirs[k]))
            for ok in ("dp-sgd", "dp-sgd-poisson"):
                if "opacus" in theirs:
                    pairs.append((ours[ok], theirs["opacus"]))
            for ok in ("dp-cd", "dp-sgd"):
                if "diffprivlib-eval" in theirs:
                    pairs.append((ours[ok], theirs["diffprivlib-eval"]))
        L += ratio_table(pairs) + [""]

    # Targets, from the medians above.
    ours_d, reads_d, theirs_d = results["dense"]
    # The fastest sklearn CD variant among those measured (a median <= 0 is noise).
    sk_d = min((r for k, r in theirs_d.items() if k in COLD_CD and r.med > 0),
               key=lambda r: r.med, default=None)
    for key, name in (("cd", "CD"), ("dp-cd", "DP-CD")):
        targets.append(target(f"dense {name} pass within 1.2x of one numpy plain read of the "
                              "design", ours_d[key], reads_d["numpy"], 1.2))
        targets.append(target(f"dense {name} pass no slower than sklearn's fastest CD epoch "
                              f"({sk_d.label if sk_d else 'none measured'})", ours_d[key], sk_d,
                              1.0))
    ours_e, _, theirs_e = results["electricity"]
    if "opacus" in theirs_e:
        for key in ("dp-sgd", "dp-sgd-poisson"):
            targets.append(target(f"{ours_e[key].label}: epoch at least 50x faster than Opacus "
                                  f"at b = {meta['batch_size']}", theirs_e["opacus"],
                                  ours_e[key], 50, speedup=True))
    ours_s, _, theirs_s = results["sparse"]
    sk_s = min((r for k, r in theirs_s.items() if k in COLD_CD and r.med > 0),
               key=lambda r: r.med, default=None)
    targets.append(target("sparse (dorothea-like) CD pass no slower than sklearn's fastest "
                          f"sparse Lasso epoch ({sk_s.label if sk_s else 'none measured'})",
                          ours_s["cd"], sk_s, 1.0))
    for prob, ours_x, sk_x in (("dense", ours_d, sk_d), ("sparse", ours_s, sk_s)):
        if "cd-cyclic" in ours_x:
            targets.append(target(f"{prob} CD pass in cyclic order (sklearn's) no slower than "
                                  f"sklearn's fastest CD epoch "
                                  f"({sk_x.label if sk_x else 'none measured'}); not a target "
                                  "of its own: it separates the order's cost from the kernel's",
                                  ours_x["cd-cyclic"], sk_x, 1.0))
    for key, name in (("cd", "CD"), ("dp-cd", "DP-CD")):
        if f"{key}-2t" in ours_d:
            targets.append(target(f"dense {name} pass with `threads(2)` (two cores) no slower "
                                  f"than with one; not a target of its own: it measures whether "
                                  f"a second core pays", ours_d[f"{key}-2t"], ours_d[key], 1.0))
    L += ["### Targets (computed from the medians above)", "",
          "| target | measured (ours / reference, or speed-up) | |", "|---|---|---|"]
    verdict = {True: "met", False: "**missed**", None: "not measured"}
    L += [f"| {t} | {val} | {verdict[ok]} |" for t, val, ok in targets]
    missing = []
    if "opacus" not in theirs_e:
        missing.append("Opacus not measured (--skip-opacus)")
    if "diffprivlib" not in theirs_e:
        missing.append("diffprivlib not measured (--skip-diffprivlib, or no "
                       "benches/peers/.venv-diffprivlib: see the README)")
    if missing:
        L += [""] + [f"- {x}" for x in missing]
    L += ["", END]
    return "\n".join(L)


def write_doc(section):
    if os.path.exists(DOC):
        text = open(DOC).read()
    else:
        text = "# Performance\n"
    if BEGIN in text and END in text:
        a, b = text.index(BEGIN), text.index(END) + len(END)
        text = text[:a] + section + text[b:]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    with open(DOC, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
