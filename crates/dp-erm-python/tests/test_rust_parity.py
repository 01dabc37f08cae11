"""A fit through Python is bit-identical to the same seeded fit in Rust
(``tests/seeded_fit.rs`` records it in ``tests/data/seeded_fit.json`` and checks that it
is the library's own DP-CD fit)."""

import json
import struct
from pathlib import Path

import numpy as np

from dp_erm import DPLogisticRegression

HERE = Path(__file__).parent
CSV = HERE.parent.parent / "dp-bench" / "data" / "breast_cancer.csv"


def _bits(v):
    return format(struct.unpack("<Q", struct.pack("<d", float(v)))[0], "016x")


def test_python_fit_equals_the_rust_fit_bit_for_bit():
    rows = [line.split(",") for line in CSV.read_text().splitlines()[1:] if line.strip()]
    X = np.array([[float(v) for v in r[:-1]] for r in rows])
    y = np.array([r[-1].strip() for r in rows])  # benign / malignant
    clf = DPLogisticRegression(
        epsilon=1.0, bounds_X=(X.min(axis=0), X.max(axis=0)), random_state=7
    ).fit(X, y)
    rec = json.loads((HERE / "data" / "seeded_fit.json").read_text())
    assert [_bits(c) for c in clf.coef_.ravel()] == rec["coef_bits"]
    assert _bits(clf.intercept_[0]) == rec["intercept_bits"]
    assert clf.epsilon_ == rec["epsilon"]
