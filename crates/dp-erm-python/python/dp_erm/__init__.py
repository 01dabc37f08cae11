"""dp_erm: differentially private linear models as scikit-learn estimators.

>>> from dp_erm import DPLogisticRegression
>>> clf = DPLogisticRegression(epsilon=1.0, bounds_X=(0.0, 1.0))  # doctest: +SKIP
>>> clf.fit(X, y).score(X_test, y_test)                          # doctest: +SKIP
>>> clf.epsilon_, clf.delta_, clf.ledger_                         # doctest: +SKIP

The solvers, the accounting and the guarantee are the Rust library's (``dp-erm``); see
``dp_erm.accounting`` for the privacy calculator.
"""

from . import accounting
from ._estimators import (
    BudgetTooSmallWarning,
    ConstantPredictionWarning,
    DPElasticNet,
    DPFitWarning,
    DPLasso,
    DPLinearRegression,
    DPLinearSVC,
    DPLogisticRegression,
    PrivateBoundsWarning,
    UnreliableRangesWarning,
)

__all__ = [
    "DPLogisticRegression",
    "DPLinearSVC",
    "DPLinearRegression",
    "DPLasso",
    "DPElasticNet",
    "accounting",
    "PrivateBoundsWarning",
    "DPFitWarning",
    "BudgetTooSmallWarning",
    "ConstantPredictionWarning",
    "UnreliableRangesWarning",
]
