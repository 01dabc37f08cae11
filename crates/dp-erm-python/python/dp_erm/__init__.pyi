from . import accounting as accounting
from ._estimators import (
    BudgetTooSmallWarning as BudgetTooSmallWarning,
    ConstantPredictionWarning as ConstantPredictionWarning,
    DPElasticNet as DPElasticNet,
    DPFitWarning as DPFitWarning,
    DPLasso as DPLasso,
    DPLinearRegression as DPLinearRegression,
    DPLinearSVC as DPLinearSVC,
    DPLogisticRegression as DPLogisticRegression,
    PrivateBoundsWarning as PrivateBoundsWarning,
    UnreliableRangesWarning as UnreliableRangesWarning,
)

__all__: list[str]
