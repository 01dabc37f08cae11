"""The issue's accuracy target: breast_cancer at eps 1, bounds = per-column min and
max, mean held-out accuracy over 5 fits >= .80."""

import numpy as np

from dp_erm import DPLogisticRegression


def test_breast_cancer_eps1_mean_accuracy(breast_cancer):
    Xtr, Xte, ytr, yte, bounds = breast_cancer
    scores = [
        DPLogisticRegression(epsilon=1.0, bounds_X=bounds, random_state=s)
        .fit(Xtr, ytr)
        .score(Xte, yte)
        for s in range(5)
    ]
    print("breast_cancer eps=1 accuracies:", scores, "mean", np.mean(scores))
    assert np.mean(scores) >= 0.80, scores
