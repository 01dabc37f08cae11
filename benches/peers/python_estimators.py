"""dp_erm's estimators beside diffprivlib and Opacus (and non-private scikit-learn):
held-out accuracy and fit time on breast_cancer, UCI Adult and a 160,000 x 50 synthetic
set, at epsilon 0.1 to 5, the same splits for every library.

    python benches/peers/python_estimators.py [--quick] [--out docs/python_benchmark.md]

Writes a Markdown table (the one in docs/python.md is this script's output) and prints
it. Every library gets the same public bounds: dp_erm takes them as ``bounds_X``;
diffprivlib gets the data min-max scaled to [0, 1] by the same bounds and
``data_norm = sqrt(p)`` (the bound those imply); Opacus (DP-SGD on a torch logistic
model, if installed) gets the same scaled data. Accuracy is the mean over ``--fits`` fits
(random_state 0, 1, ...); time is the mean wall-clock seconds of one fit.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split

from dp_erm import DPLogisticRegression

ROOT = Path(__file__).resolve().parents[2]
EPSILONS = (0.1, 0.5, 1.0, 2.0, 5.0)


def breast_cancer():
    X, y = load_breast_cancer(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.2, random_state=0, stratify=y)
    # As the target states: bounds are the per-column min and max.
    return Xtr, Xte, ytr, yte, (X.min(axis=0), X.max(axis=0))


# Public ranges of Adult's numeric columns (the census coding, not the data's min/max).
ADULT_NUMERIC_BOUNDS = {
    "age": (17, 90),
    "fnlwgt": (0, 1_500_000),
    "education_num": (1, 16),
    "capital_gain": (0, 99_999),
    "capital_loss": (0, 4_356),
    "hours_per_week": (1, 99),
}
ADULT_COLUMNS = ["age", "workclass", "fnlwgt", "education", "education_num",
                 "marital_status", "occupation", "relationship", "race", "sex",
                 "capital_gain", "capital_loss", "hours_per_week", "native_country",
                 "income"]


def adult():
    import pandas as pd

    df = pd.read_csv(ROOT / "crates/dp-bench/data/adult.data", header=None,
                     names=ADULT_COLUMNS, skipinitialspace=True, na_values="?")
    df = df.dropna(how="all")
    y = (df.pop("income").str.strip() == ">50K").astype(int).to_numpy()
    cats = [c for c in df.columns if c not in ADULT_NUMERIC_BOUNDS]
    X = pd.get_dummies(df, columns=cats, dtype=float)  # categories are public
    lo = np.array([ADULT_NUMERIC_BOUNDS.get(c, (0, 1))[0] for c in X.columns], float)
    hi = np.array([ADULT_NUMERIC_BOUNDS.get(c, (0, 1))[1] for c in X.columns], float)
    X = X.to_numpy(dtype=float)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.2, random_state=0, stratify=y)
    return Xtr, Xte, ytr, yte, (lo, hi)


def synthetic(n=160_000, p=50, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n + 40_000, p))
    w = rng.standard_normal(p) * 3 / np.sqrt(p)
    y = (X @ w + 0.3 * rng.standard_normal(len(X)) > 0).astype(int)
    return X[:n], X[n:], y[:n], y[n:], (-1.0, 1.0)


def minmax(X, bounds):
    lo, hi = (np.broadcast_to(np.asarray(b, float), (X.shape[1],)) for b in bounds)
    span = np.where(hi > lo, hi - lo, 1.0)
    return np.clip((X - lo) / span, 0.0, 1.0)


def timed(fit):
    t = time.perf_counter()
    model = fit()
    return model, time.perf_counter() - t


def run_ours(data, eps, fits):
    Xtr, Xte, ytr, yte, bounds = data
    accs, secs = [], []
    for s in range(fits):
        m, t = timed(lambda: DPLogisticRegression(epsilon=eps, bounds_X=bounds,
                                                  random_state=s).fit(Xtr, ytr))
        accs.append(m.score(Xte, yte))
        secs.append(t)
    return np.mean(accs), np.mean(secs)


def run_diffprivlib(data, eps, fits):
    try:
        from diffprivlib.models import LogisticRegression as DplLR
    except ImportError:
        return None
    Xtr, Xte, ytr, yte, bounds = data
    Str, Ste = minmax(Xtr, bounds), minmax(Xte, bounds)
    norm = np.sqrt(Str.shape[1])
    accs, secs = [], []
    for s in range(fits):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m, t = timed(lambda: DplLR(epsilon=eps, data_norm=norm, random_state=s)
                         .fit(Str, ytr))
        accs.append(m.score(Ste, yte))
        secs.append(t)
    return np.mean(accs), np.mean(secs)


_OPACUS_WARM = False


def _warm_opacus():
    """The first ``make_private`` of a process costs tens of seconds once (measured 41 s
    here: lazy imports and set-up inside torch / Opacus), whatever the data; a user pays
    it once per session, not per fit. One untimed call on 8 rows takes it out of the
    per-fit times."""
    global _OPACUS_WARM
    if _OPACUS_WARM:
        return
    import torch
    from opacus import PrivacyEngine

    ds = torch.utils.data.TensorDataset(torch.zeros(8, 2), torch.zeros(8))
    model = torch.nn.Linear(2, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        PrivacyEngine().make_private(
            module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1),
            data_loader=torch.utils.data.DataLoader(ds, batch_size=4),
            noise_multiplier=1.0, max_grad_norm=1.0)
    _OPACUS_WARM = True


def run_opacus(data, eps, fits, epochs=5, batch=256, delta=None):
    try:
        import torch
        from opacus import PrivacyEngine
    except ImportError:
        return None
    _warm_opacus()
    Xtr, Xte, ytr, yte, bounds = data
    Str = torch.tensor(minmax(Xtr, bounds), dtype=torch.float32)
    Ste = torch.tensor(minmax(Xte, bounds), dtype=torch.float32)
    ytr_t = torch.tensor(ytr, dtype=torch.float32)
    n = len(ytr)
    delta = delta or min(1e-5, 1.0 / n**2)
    accs, secs = [], []
    for s in range(fits):
        torch.manual_seed(s)

        def fit():
            model = torch.nn.Linear(Str.shape[1], 1)
            opt = torch.optim.SGD(model.parameters(), lr=0.5)
            ds = torch.utils.data.TensorDataset(Str, ytr_t)
            dl = torch.utils.data.DataLoader(ds, batch_size=min(batch, n))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model, opt, dl = PrivacyEngine().make_private_with_epsilon(
                    module=model, optimizer=opt, data_loader=dl, target_epsilon=eps,
                    target_delta=delta, epochs=epochs, max_grad_norm=1.0)
                for _ in range(epochs):
                    for xb, yb in dl:
                        if len(xb) == 0:
                            continue
                        opt.zero_grad()
                        loss = torch.nn.functional.binary_cross_entropy_with_logits(
                            model(xb).squeeze(-1), yb)
                        loss.backward()
                        opt.step()
            return model

        m, t = timed(fit)
        with torch.no_grad():
            pred = (m(Ste).squeeze(-1) > 0).numpy().astype(int)
        accs.append(float(np.mean(pred == yte)))
        secs.append(t)
    return np.mean(accs), np.mean(secs)


def run_sklearn(data):
    Xtr, Xte, ytr, yte, bounds = data
    Str, Ste = minmax(Xtr, bounds), minmax(Xte, bounds)
    m, t = timed(lambda: LogisticRegression(max_iter=1000).fit(Str, ytr))
    return m.score(Ste, yte), t


def fmt(r):
    return "n/a" if r is None else f"{r[0]:.3f} ({r[1]:.2f} s)"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="eps 1 only, 2 fits")
    ap.add_argument("--fits", type=int, default=5)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--datasets", default="breast_cancer,adult,synthetic_160k")
    ap.add_argument("--eps", default=",".join(f"{e:g}" for e in EPSILONS),
                    help="comma-separated epsilons")
    ap.add_argument("--opacus-epochs", type=int, default=5,
                    help="epochs of Opacus DP-SGD (its privacy is calibrated to them)")
    ap.add_argument("--torch-threads", type=int, default=None,
                    help="torch.set_num_threads for Opacus (default: torch's own); on a "
                         "loaded machine 1 avoids torch's threads waiting on each other")
    args = ap.parse_args()
    if args.torch_threads is not None:
        try:
            import torch

            torch.set_num_threads(args.torch_threads)
        except ImportError:
            pass
    eps_list = (1.0,) if args.quick else tuple(float(e) for e in args.eps.split(","))
    fits = 2 if args.quick else args.fits
    loaders = {"breast_cancer": breast_cancer, "adult": adult, "synthetic_160k": synthetic}
    lines = [
        "| data | n_train x p | eps | dp_erm DPLogisticRegression | diffprivlib LogisticRegression | Opacus DP-SGD | sklearn (non-private) |",
        "|---|---|---|---|---|---|---|",
    ]
    for name in args.datasets.split(","):
        data = loaders[name]()
        shape = f"{data[0].shape[0]} x {data[0].shape[1]}"
        sk = run_sklearn(data)
        for eps in eps_list:
            row = [name, shape, f"{eps:g}", fmt(run_ours(data, eps, fits)),
                   fmt(run_diffprivlib(data, eps, fits)),
                   fmt(run_opacus(data, eps, fits, epochs=args.opacus_epochs)), fmt(sk)]
            lines.append("| " + " | ".join(row) + " |")
            print(lines[-1], flush=True)
    table = "\n".join(lines)
    import sklearn
    versions = f"scikit-learn {sklearn.__version__}"
    for mod in ("diffprivlib", "opacus", "torch"):
        try:
            versions += f", {mod} {__import__(mod).__version__}"
        except ImportError:
            versions += f", {mod} not installed"
    command = " ".join(["python benches/peers/python_estimators.py", *sys.argv[1:]])
    note = (f"\nMean held-out accuracy over {fits} fits (mean seconds per fit), "
            "same train / test split and the same public bounds for every library; "
            f"generated by `{command}` on {time.strftime('%Y-%m-%d', time.gmtime())} "
            f"({versions}; the times are wall-clock on a shared 2-core machine). "
            "diffprivlib and Opacus get the data min-max scaled to [0, 1] by the bounds; "
            "diffprivlib `data_norm = sqrt(p)`; Opacus: a linear model, DP-SGD via "
            f"`make_private_with_epsilon` (its default PRV accountant), "
            f"{args.opacus_epochs} epochs, batch 256, clip 1, lr 0.5, untuned, its "
            "calibration inside the timed fit, its one-off first-call set-up (about "
            "40 s) before the timings.\n")
    if args.out:
        args.out.write_text(table + "\n" + note)
    print(table + note)


if __name__ == "__main__":
    main()
