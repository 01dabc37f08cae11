"""160,000 x 50 logistic regression: dp_erm DPLogisticRegression (eps 1, defaults) against
scikit-learn's non-private LogisticRegression (defaults), side by side in one run, the
two fits alternating on the same data.

    python benches/peers/python_speed.py [--reps 3] [--order C|F] [--pause S]

Prints one line per repetition and the median ratio (ours / scikit-learn's). The data
are `synthetic()` of python_estimators.py (uniform features in [-1, 1], so the public
bounds are (-1, 1)). `--pause S` sleeps S seconds before each fit (default 0): after a
call, OpenBLAS's worker threads (numpy's and scipy's) keep spinning on the cores for a
while, and the fit that starts right after scikit-learn's shares the cores with them.
"""
import argparse
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import sklearn  # noqa: E402
from python_estimators import synthetic  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402

from dp_erm import DPLogisticRegression  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--reps", type=int, default=3)
ap.add_argument("--order", choices=("C", "F"), default="C",
                help="memory order of the training array (numpy's default is C)")
ap.add_argument("--pause", type=float, default=0.0,
                help="seconds to sleep before each fit (lets BLAS threads go idle)")
args = ap.parse_args()

Xtr, Xte, ytr, yte, b = synthetic()
Xtr = np.asarray(Xtr, order=args.order)
print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; X {Xtr.shape} "
      f"{args.order}-ordered; numpy {np.__version__}, scikit-learn {sklearn.__version__}, "
      f"Python {platform.python_version()}; pause {args.pause} s before each fit")
ratios = []
for rep in range(args.reps):
    time.sleep(args.pause)
    t = time.perf_counter()
    m = DPLogisticRegression(epsilon=1.0, bounds_X=b, random_state=rep).fit(Xtr, ytr)
    t1 = time.perf_counter() - t
    time.sleep(args.pause)
    t = time.perf_counter()
    s = LogisticRegression().fit(Xtr, ytr)
    t2 = time.perf_counter() - t
    ratios.append(t1 / t2)
    h = m.hyperparameters_
    print(f"rep {rep}: dp_erm {t1:.3f} s (acc {m.score(Xte, yte):.3f}, passes {h['passes']}) "
          f"| sklearn {t2:.3f} s (acc {s.score(Xte, yte):.3f}, n_iter {int(s.n_iter_[0])}) "
          f"| ratio {t1 / t2:.2f}", flush=True)
print(f"median ratio dp_erm / sklearn: {statistics.median(ratios):.2f}")
