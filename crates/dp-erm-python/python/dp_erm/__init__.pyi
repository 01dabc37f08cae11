from . import accounting as accounting
from ._estimators import (
    DPElasticNet as DPElasticNet,
    DPLasso as DPLasso,
    DPLinearRegression as DPLinearRegression,
    DPLinearSVC as DPLinearSVC,
    DPLogisticRegression as DPLogisticRegression,
    PrivateBoundsWarning as PrivateBoundsWarning,
)

__all__: list[str]
