"""diffprivlib timing worker for benches/peers/run.py.

diffprivlib 0.6.6 does not import with scikit-learn >= 1.8 (it imports names that
sklearn removed and passes ``multi_class`` to ``LogisticRegression``), so it runs in its
own venv (``benches/peers/.venv-diffprivlib``, ``requirements-diffprivlib.txt``) and
is driven through this script, one process per repetition:

    .venv-diffprivlib/bin/python dpl_worker.py CSV HI WARMUP(0|1) THREADS INNER

It prints one JSON object: wall-clock seconds of ``fit`` at ``max_iter`` 1 and HI, the
L-BFGS iterations and the objective evaluations (each a full pass over the data:
loss and gradient) that scipy reports, so that the caller can take the marginal cost of
an iteration and of a pass.
"""

import json
import os
import sys

THREADS = sys.argv[4] if len(sys.argv) > 4 else "1"
for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = THREADS

import csv  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402


def load_electricity(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    header = rows[0]
    ci = header.index("class")
    x = np.array([[float(v) for k, v in enumerate(r) if k != ci] for r in rows[1:]])
    y = np.array([1.0 if r[ci] == "UP" else -1.0 for r in rows[1:]])
    if not set(r[ci] for r in rows[1:]) <= {"UP", "DOWN"}:
        raise SystemExit("unexpected label in the class column")
    return np.clip(x, -1.0, 1.0), y


def main():
    path, hi, warmup = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
    inner = int(sys.argv[5]) if len(sys.argv) > 5 else 1
    warnings.filterwarnings("ignore")
    import diffprivlib
    import scipy.optimize
    import sklearn
    from diffprivlib.models import LogisticRegression
    from diffprivlib.models import logistic_regression as lr_module

    # Count what L-BFGS does: wrap the scipy function diffprivlib calls.
    calls = []
    original = scipy.optimize.fmin_l_bfgs_b

    def counting(*args, **kwargs):
        out = original(*args, **kwargs)
        calls.append((out[2]["nit"], out[2]["funcalls"]))
        return out

    lr_module.optimize.fmin_l_bfgs_b = counting

    x, y = load_electricity(path)
    n, p = x.shape
    lam = 1e-5
    # sklearn's C * sum(loss) + |w|^2 / 2 = (1/n) sum(loss) + (lambda / 2) |w|^2 up to n C.
    c = 1.0 / (n * lam)

    def fit(max_iter):
        model = LogisticRegression(
            epsilon=1.0,
            data_norm=float(np.sqrt(p)),  # |x_ij| <= 1 after clipping: a public bound
            C=c,
            tol=0.0,
            max_iter=max_iter,
            fit_intercept=False,
            random_state=0,
        )
        calls.clear()
        t = time.perf_counter()
        model.fit(x, y)
        return time.perf_counter() - t, calls[-1]

    if warmup:
        fit(1)
    # The fastest of `inner` fits each (interference only adds time).
    t1, (it1, f1) = min((fit(1) for _ in range(inner)), key=lambda r: r[0])
    th, (ith, fh) = min((fit(hi) for _ in range(inner)), key=lambda r: r[0])
    print(
        json.dumps(
            {
                "seconds": [t1, th],
                "iterations": [it1, ith],
                "evaluations": [f1, fh],
                "versions": {
                    "diffprivlib": diffprivlib.__version__,
                    "scikit-learn": sklearn.__version__,
                    "numpy": np.__version__,
                },
            }
        )
    )


if __name__ == "__main__":
    main()
