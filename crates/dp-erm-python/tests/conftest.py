import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split


@pytest.fixture(scope="session")
def breast_cancer():
    X, y = load_breast_cancer(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.2, random_state=0, stratify=y)
    # The Done-when setting: bounds are the per-column min and max.
    bounds = (X.min(axis=0), X.max(axis=0))
    return Xtr, Xte, ytr, yte, bounds
