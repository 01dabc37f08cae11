from typing import Any, Literal, Optional, Sequence, Tuple, Union

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin

_Bound = Union[float, Sequence[float], NDArray[np.float64]]
_Bounds = Optional[Tuple[_Bound, _Bound]]
_Algorithm = Literal["dp-cd", "dp-gcd", "dp-sgd", "dp-scd"]
_RandomState = Union[None, int, np.random.RandomState]

class _DPLinearBase(BaseEstimator):
    epsilon: float
    delta: Optional[float]
    bounds_X: _Bounds
    algorithm: _Algorithm
    fit_intercept: bool
    passes: Optional[int]
    step_scale: Optional[float]
    clip: Optional[float]
    batch_size: Optional[int]
    n_jobs: Optional[int]
    random_state: _RandomState
    n_features_in_: int
    feature_names_in_: NDArray[np.object_]
    epsilon_: float
    delta_: float
    adjacency_: Any
    accounting_: str
    ledger_: list[dict[str, Any]]
    privacy_report_: dict[str, Any]
    hyperparameters_: dict[str, Any]
    n_iter_: int
    feature_ranges_: NDArray[np.float64]

class _DPClassifier(ClassifierMixin, _DPLinearBase):
    classes_: NDArray[Any]
    coef_: NDArray[np.float64]
    intercept_: NDArray[np.float64]
    def fit(self, X: ArrayLike, y: ArrayLike) -> "_DPClassifier": ...
    def decision_function(self, X: ArrayLike) -> NDArray[np.float64]: ...
    def predict(self, X: ArrayLike) -> NDArray[Any]: ...

class _DPL2Classifier(_DPClassifier):
    C: float
    def __init__(
        self,
        epsilon: float = 1.0,
        delta: Optional[float] = None,
        bounds_X: _Bounds = None,
        C: float = 1.0,
        algorithm: _Algorithm = "dp-cd",
        fit_intercept: bool = True,
        passes: Optional[int] = None,
        step_scale: Optional[float] = None,
        clip: Optional[float] = None,
        batch_size: Optional[int] = None,
        n_jobs: Optional[int] = None,
        random_state: _RandomState = None,
    ) -> None: ...

class DPLogisticRegression(_DPL2Classifier):
    def fit(self, X: ArrayLike, y: ArrayLike) -> "DPLogisticRegression": ...
    def predict_proba(self, X: ArrayLike) -> NDArray[np.float64]: ...
    def predict_log_proba(self, X: ArrayLike) -> NDArray[np.float64]: ...

class DPLinearSVC(_DPL2Classifier):
    def fit(self, X: ArrayLike, y: ArrayLike) -> "DPLinearSVC": ...

class _DPRegressor(RegressorMixin, _DPLinearBase):
    bounds_y: Optional[Tuple[float, float]]
    coef_: NDArray[np.float64]
    intercept_: float
    def fit(self, X: ArrayLike, y: ArrayLike) -> "_DPRegressor": ...
    def predict(self, X: ArrayLike) -> NDArray[np.float64]: ...

class DPLinearRegression(_DPRegressor):
    def __init__(
        self,
        epsilon: float = 1.0,
        delta: Optional[float] = None,
        bounds_X: _Bounds = None,
        bounds_y: Optional[Tuple[float, float]] = None,
        algorithm: _Algorithm = "dp-cd",
        fit_intercept: bool = True,
        passes: Optional[int] = None,
        step_scale: Optional[float] = None,
        clip: Optional[float] = None,
        batch_size: Optional[int] = None,
        n_jobs: Optional[int] = None,
        random_state: _RandomState = None,
    ) -> None: ...

class _DPAlphaRegressor(_DPRegressor):
    alpha: float
    def __init__(
        self,
        epsilon: float = 1.0,
        delta: Optional[float] = None,
        bounds_X: _Bounds = None,
        bounds_y: Optional[Tuple[float, float]] = None,
        alpha: float = 0.01,
        algorithm: _Algorithm = "dp-cd",
        fit_intercept: bool = True,
        passes: Optional[int] = None,
        step_scale: Optional[float] = None,
        clip: Optional[float] = None,
        batch_size: Optional[int] = None,
        n_jobs: Optional[int] = None,
        random_state: _RandomState = None,
    ) -> None: ...

class DPLasso(_DPAlphaRegressor): ...

class DPElasticNet(_DPAlphaRegressor): ...

class PrivateBoundsWarning(UserWarning): ...
class DPFitWarning(UserWarning): ...
class BudgetTooSmallWarning(DPFitWarning): ...
class ConstantPredictionWarning(DPFitWarning): ...
class UnreliableRangesWarning(DPFitWarning): ...
