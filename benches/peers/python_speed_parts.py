"""Where the time of the 160,000 x 50 fit goes: the fixed cost (a one-pass fit), the
default fit, one thread and two, and scikit-learn, in one process, 3 repetitions.

    python benches/peers/python_speed_parts.py
    PYTHONPATH=/path/to/another/build python benches/peers/python_speed_parts.py

The second form times another build of the package (e.g. an older commit's wheel
installed with `pip install --no-deps --target DIR`) the same way; a build without
`n_jobs` gets the first two rows and scikit-learn's only.
"""
import sys
import time
import warnings
from pathlib import Path

import numpy as np

warnings.simplefilter("ignore")
sys.path.insert(0, str(Path(__file__).parent))
import dp_erm  # noqa: E402
from python_estimators import synthetic  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402

from dp_erm import DPLogisticRegression  # noqa: E402

print(dp_erm.__file__)
Xtr, Xte, ytr, yte, b = synthetic()
new = "n_jobs" in DPLogisticRegression().get_params()
cfgs = [("passes=1", dict(passes=1)), ("default", {})]
if new:
    cfgs += [("n_jobs=1", dict(n_jobs=1)), ("n_jobs=2", dict(n_jobs=2))]
res = {k: [] for k, _ in cfgs}
res["sklearn"] = []
for rep in range(3):
    for k, kw in cfgs:
        t = time.perf_counter()
        DPLogisticRegression(epsilon=1.0, bounds_X=b, random_state=rep, **kw).fit(Xtr, ytr)
        res[k].append(time.perf_counter() - t)
    t = time.perf_counter()
    LogisticRegression().fit(Xtr, ytr)
    res["sklearn"].append(time.perf_counter() - t)
for k, v in res.items():
    print(f"{k:20s} " + " ".join(f"{x:.3f}" for x in v) + f"  median {np.median(v):.3f}")
