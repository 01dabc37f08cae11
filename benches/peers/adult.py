"""Peers on UCI Adult for the `adult` experiment (`cargo xtask reproduce adult`).

Runs diffprivlib's LogisticRegression and Opacus DP-SGD on exactly the splits our
methods see (written by `cargo xtask adult-export DIR`),
at the same epsilons and delta, with the same protocol: every grid point is fitted on
`tune_fit.csv` and scored on `tune_val.csv` (tuning not charged, as in the papers), the
best point is refitted on `train.csv` with fresh seeds and scored on `test.csv`.

diffprivlib and torch need different scikit-learn versions, so each peer runs in its
own venv: the script re-invokes itself with `--part diffprivlib` / `--part opacus`
under the given interpreters and merges what they print.

    python benches/peers/adult.py --splits DIR \
        --torch-python benches/peers/.venv/bin/python \
        --dpl-python benches/peers/.venv-diffprivlib/bin/python \
        [--final-runs 10] [--tuning-runs 2] [--out benches/peers/results/adult.json]

Output: one JSON object (date, versions, machine, protocol, one record per peer and
epsilon: test accuracy mean / min / max over the fresh seeds, the tuned point).
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import time


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--splits", required=True, help="directory written by adult_export")
    ap.add_argument("--part", choices=["all", "diffprivlib", "opacus"], default="all")
    ap.add_argument("--peers", default="diffprivlib,opacus",
                    help="which peers the 'all' run runs (the others are listed as absent)")
    ap.add_argument("--torch-python", default=sys.executable)
    ap.add_argument("--dpl-python", default=sys.executable)
    ap.add_argument("--final-runs", type=int, default=10)
    ap.add_argument("--tuning-runs", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--epsilons", default="", help="comma-separated; default meta.json's")
    ap.add_argument("--out", default="benches/peers/results/adult.json")
    return ap.parse_args()


ARGS = parse_args()
for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = str(ARGS.threads)

import numpy as np  # noqa: E402


def load(name):
    path = os.path.join(ARGS.splits, name)
    a = np.loadtxt(path, delimiter=",", skiprows=1)
    return a[:, :-1], a[:, -1]


def meta():
    with open(os.path.join(ARGS.splits, "meta.json")) as f:
        return json.load(f)


def epsilons(m):
    if ARGS.epsilons:
        return [float(e) for e in ARGS.epsilons.split(",")]
    return m["epsilons"]


def tune_and_test(grid, fit_score, m, eps_list):
    """The protocol: best mean validation accuracy over the grid, then fresh seeds."""
    xf, yf = load("tune_fit.csv")
    xv, yv = load("tune_val.csv")
    xt, yt = load("train.csv")
    xs, ys = load("test.csv")
    out = []
    for eps in eps_list:
        best, best_score = None, -1.0
        for k, point in enumerate(grid):
            acc = [
                fit_score(point, eps, m["tune_delta"], xf, yf, xv, yv, seed=1000 * k + r)
                for r in range(ARGS.tuning_runs)
            ]
            score = float(np.mean(acc))
            if score > best_score:
                best, best_score = point, score
        accs = [
            fit_score(best, eps, m["delta"], xt, yt, xs, ys, seed=10_000 + r)
            for r in range(ARGS.final_runs)
        ]
        out.append(
            {
                "epsilon": eps,
                "accuracy_mean": float(np.mean(accs)),
                "accuracy_min": float(np.min(accs)),
                "accuracy_max": float(np.max(accs)),
                "accuracy_runs": [float(a) for a in accs],
                "validation_accuracy": best_score,
                "tuned": best,
                "grid_points": len(grid),
            }
        )
        print(f"  eps {eps}: {np.mean(accs):.4f} at {best}", file=sys.stderr)
    return out


def run_diffprivlib(m, eps_list):
    import warnings

    import diffprivlib
    import sklearn
    from diffprivlib.models import LogisticRegression

    warnings.filterwarnings("ignore")
    # Rows have L2 norm <= 1 after the preprocessing: data_norm = 1 is a public bound.
    grid = [{"C": c} for c in [0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 100.0]]

    def fit_score(point, eps, _delta, x, y, xe, ye, seed):
        model = LogisticRegression(
            epsilon=eps,
            data_norm=1.0,
            C=point["C"],
            fit_intercept=False,
            random_state=seed,
        )
        model.fit(x, y)
        return float(np.mean(model.predict(xe) == ye))

    recs = tune_and_test(grid, fit_score, m, eps_list)
    for r in recs:
        r["method"] = "diffprivlib"
        r["label"] = "diffprivlib LogisticRegression (pure eps, no intercept)"
    return recs, {"diffprivlib": diffprivlib.__version__, "scikit-learn (diffprivlib venv)": sklearn.__version__}


def run_opacus(m, eps_list):
    import warnings

    import opacus
    import torch
    from opacus import PrivacyEngine
    from opacus.accountants.utils import get_noise_multiplier

    warnings.filterwarnings("ignore")
    torch.set_num_threads(ARGS.threads)
    grid = []
    for b in [256, 1024]:
        for epochs in [3, 10, 30]:
            for lr in [4.0, 16.0, 64.0]:
                for clip in [0.1, 1.0]:
                    grid.append({"batch": b, "epochs": epochs, "lr": lr, "clip": clip})
    sigmas = {}

    def fit_score(point, eps, delta, x, y, xe, ye, seed):
        torch.manual_seed(seed)
        n, p = x.shape
        q = point["batch"] / n
        key = (eps, delta, q, point["epochs"])
        if key not in sigmas:
            sigmas[key] = get_noise_multiplier(
                target_epsilon=eps, target_delta=delta, sample_rate=q,
                epochs=point["epochs"], accountant="prv",
            )
        xt = torch.tensor(x, dtype=torch.float32)
        yt = torch.tensor((y > 0).astype(np.float32))
        model = torch.nn.Linear(p, 1, bias=False)
        torch.nn.init.zeros_(model.weight)
        opt = torch.optim.SGD(model.parameters(), lr=point["lr"], weight_decay=m["lambda"])
        dl = torch.utils.data.DataLoader(
            torch.utils.data.TensorDataset(xt, yt), batch_size=point["batch"]
        )
        engine = PrivacyEngine(accountant="prv")
        model, opt, dl = engine.make_private(
            module=model, optimizer=opt, data_loader=dl,
            noise_multiplier=sigmas[key], max_grad_norm=point["clip"], poisson_sampling=True,
        )
        lossf = torch.nn.BCEWithLogitsLoss()
        for _ in range(point["epochs"]):
            for xb, yb in dl:
                if len(xb) == 0:
                    continue
                opt.zero_grad()
                lossf(model(xb).squeeze(1), yb).backward()
                opt.step()
        with torch.no_grad():
            w = model._module.weight.detach().numpy().ravel()
        pred = np.where(xe @ w > 0, 1.0, -1.0)
        return float(np.mean(pred == ye))

    recs = tune_and_test(grid, fit_score, m, eps_list)
    for r in recs:
        r["method"] = "opacus"
        r["label"] = "Opacus DP-SGD (Poisson, PRV accountant, no bias)"
    return recs, {"opacus": opacus.__version__, "torch": torch.__version__}


def machine():
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"cpu_model": cpu, "logical_cpus": os.cpu_count(), "threads": ARGS.threads}


def main():
    m = meta()
    eps_list = epsilons(m)
    if ARGS.part != "all":
        fn = run_diffprivlib if ARGS.part == "diffprivlib" else run_opacus
        recs, versions = fn(m, eps_list)
        versions["python"] = platform.python_version()
        versions["numpy"] = np.__version__
        json.dump({"records": recs, "versions": versions}, sys.stdout)
        return
    start = time.time()
    records, versions = [], {}
    wanted = [p for p in ARGS.peers.split(",") if p]
    for part, py in [("diffprivlib", ARGS.dpl_python), ("opacus", ARGS.torch_python)]:
        if part not in wanted:
            continue
        print(f"adult.py: {part} ({py})", file=sys.stderr)
        cmd = [py, os.path.abspath(__file__), "--part", part] + [
            a for a in sys.argv[1:] if not a.startswith("--part")
        ]
        out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True).stdout
        got = json.loads(out)
        records += got["records"]
        versions[part] = got["versions"]
    result = {
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "versions": versions,
        "machine": machine(),
        "wall_seconds": round(time.time() - start, 1),
        "final_runs": ARGS.final_runs,
        "tuning_runs": ARGS.tuning_runs,
        "splits": {k: m[k] for k in ["n_train", "n_test", "n_tune_fit", "n_tune_val", "p", "delta", "tune_delta"]},
        "protocol": "grid tuned on tune_fit / tune_val (not charged), best point refitted "
        "on train with fresh seeds, scored on test",
        "absent": [p for p in ["diffprivlib", "opacus"] if p not in wanted],
        "records": records,
    }
    os.makedirs(os.path.dirname(os.path.abspath(ARGS.out)), exist_ok=True)
    with open(ARGS.out, "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
    print(f"adult.py: wrote {ARGS.out} in {result['wall_seconds']} s", file=sys.stderr)


if __name__ == "__main__":
    main()
