"""scikit-learn estimators over the dp-erm library (the Rust backend in ``dp_erm._core``).

Every estimator maps the features (and a regression target) to ``[-1, 1]`` with the
public bounds you pass (``bounds_X``, ``bounds_y``), fits a private linear model on the
scaled data with the library's solver, and maps the coefficients back to your units:
``coef_`` and ``intercept_`` apply to the raw features. The map uses nothing but the
bounds, so it costs no privacy; values outside the bounds are clipped to them for the fit
(prediction applies ``coef_`` to the raw values).
"""

from __future__ import annotations

import json
import numbers
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, check_random_state

from . import _core

try:  # scikit-learn >= 1.6
    from sklearn.utils.validation import validate_data as _sk_validate_data
except ImportError:  # pragma: no cover - older scikit-learn
    _sk_validate_data = None

_ALGORITHMS = ("dp-cd", "dp-gcd", "dp-sgd", "dp-scd")

# _POOR_SCORE: the estimator checks train on tens of rows and demand accuracy > 0.83 or
# R^2 > 0.5; at the default epsilon the noise a guarantee needs on so few records
# dominates, so the estimators declare scikit-learn's `poor_score` tag.

# What scikit-learn's estimator checks cannot expect of a private estimator, declared by
# the estimator (``_dp_expected_failed_checks``) with the reason; the test suite passes
# them to ``parametrize_with_checks(expected_failed_checks=...)``.
_COMMON_XFAIL = {}


# fit(): the backend checks every value of X as it copies it (a non-finite value is a
# ValueError naming its row and column), so scikit-learn's separate pass over X is
# skipped (y is still checked by scikit-learn).
_X_FINITE_CHECKED = (
    {"ensure_all_finite": False} if _sk_validate_data is not None else {"force_all_finite": False}
)


def _validate(est, X, y="no_validation", reset=True, **kw):
    if _sk_validate_data is not None:
        return _sk_validate_data(est, X, y, reset=reset, **kw)
    return est._validate_data(X, y, reset=reset, **kw)  # pragma: no cover


def _seed_of(random_state):
    """``None`` -> ``None`` (the backend draws from the operating system); an int or a
    ``RandomState`` -> a 64-bit seed that replays the fit (and its noise)."""
    if random_state is None:
        return None
    if isinstance(random_state, numbers.Integral):
        if random_state < 0:
            raise ValueError(f"random_state={random_state}: a seed must be >= 0")
        return int(random_state) % (1 << 64)
    rs = check_random_state(random_state)
    hi, lo = rs.randint(0, 1 << 32, size=2, dtype=np.uint64)
    return int((int(hi) << 32) | int(lo))


def _ranges(bounds, p, name):
    """``(lower, upper)`` with scalars or length-``p`` arrays -> ``[[lo, hi], ...]``."""
    if not isinstance(bounds, (tuple, list)) or len(bounds) != 2:
        raise TypeError(
            f"{name} must be a tuple (lower, upper) of scalars or arrays, got {bounds!r}"
        )
    sides = []
    for side, b in zip(("lower", "upper"), bounds):
        try:
            a = np.asarray(b, dtype=np.float64)
        except (TypeError, ValueError) as e:
            raise ValueError(f"{name}: the {side} bounds are not numbers: {e}") from None
        if a.ndim > 1 or (a.ndim == 1 and a.shape[0] != p):
            raise ValueError(
                f"{name}: the {side} bounds have shape {a.shape}; give a scalar or one "
                f"value per feature ({p})"
            )
        sides.append(np.broadcast_to(a, (p,)))
    lo, hi = sides
    if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):
        raise ValueError(f"{name} must be finite")
    if np.any(lo >= hi):
        j = int(np.argmax(lo >= hi))
        raise ValueError(
            f"{name}: lower bound {lo[j]} >= upper bound {hi[j]} for feature {j}"
        )
    return np.column_stack([lo, hi]).tolist()


class PrivateBoundsWarning(UserWarning):
    """Bounds were not given, so the fit estimates them privately on a share of epsilon."""


class DPFitWarning(UserWarning):
    """A warning the library's pipeline attached to the fit (``dp_optim::FitWarning``):
    computed from public inputs and released values only, so showing it costs no privacy."""


class BudgetTooSmallWarning(DPFitWarning):
    """The privacy budget is too small for the data: the no-tuning rule wanted fewer
    passes than its minimum, and the model may be no better than a constant prediction."""


class ConstantPredictionWarning(DPFitWarning):
    """The released classifier predicts one class for every row within its ranges."""


class UnreliableRangesWarning(DPFitWarning):
    """The privately estimated ranges had too little epsilon per release for the rows:
    they (and the model) are likely wrong by orders of magnitude; declare bounds."""


def _warning_class(detail):
    kind = next(iter(detail)) if isinstance(detail, dict) and detail else str(detail)
    return {
        "BudgetTooSmall": BudgetTooSmallWarning,
        "ConstantPrediction": ConstantPredictionWarning,
        "UnreliableRanges": UnreliableRangesWarning,
    }.get(kind, DPFitWarning)


class _DPLinearBase(BaseEstimator):
    """Shared fit logic; subclasses set ``_task``, ``_loss`` and the penalty."""

    _task = "regression"
    _loss = "squared"

    def _penalty(self, n):  # -> (name, alpha)
        raise NotImplementedError

    def _check_params(self):
        if not isinstance(self.epsilon, numbers.Real) or not (
            np.isfinite(self.epsilon) and self.epsilon > 0
        ):
            raise ValueError(f"epsilon={self.epsilon!r}: must be a finite number > 0")
        if self.delta is not None and (
            not isinstance(self.delta, numbers.Real) or not (0 < self.delta < 1)
        ):
            raise ValueError(f"delta={self.delta!r}: must be in (0, 1), or None")
        if self.algorithm not in _ALGORITHMS:
            raise ValueError(
                f"algorithm={self.algorithm!r}: must be one of {', '.join(_ALGORITHMS)}"
            )
        if not isinstance(self.fit_intercept, (bool, np.bool_)):
            raise ValueError(f"fit_intercept={self.fit_intercept!r}: must be True or False")
        for name in ("passes", "batch_size", "n_jobs"):
            v = getattr(self, name)
            if v is not None and (
                isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Integral) or v < 1
            ):
                raise ValueError(f"{name}={v!r}: must be an integer >= 1, or None")
        for name in ("step_scale", "clip"):
            v = getattr(self, name)
            if v is not None and (
                not isinstance(v, numbers.Real) or not (np.isfinite(v) and v > 0)
            ):
                raise ValueError(f"{name}={v!r}: must be a finite number > 0, or None")

    def _fit_backend(self, X, y_backend, target_range=None):
        n, p = X.shape
        if n < 2:
            raise ValueError(f"n_samples={n}: a fit needs at least 2 samples")
        if self.bounds_X is None:
            ranges = None
            warnings.warn(
                "bounds_X=None: the feature ranges are estimated privately from the data "
                "on 20-50 % of epsilon (more where the rows are few; charged: see ledger_ "
                "and hyperparameters_['feature_share']); declare public bounds to spend "
                "all of epsilon on the fit",
                PrivateBoundsWarning,
                stacklevel=3,
            )
        else:
            ranges = _ranges(self.bounds_X, p, "bounds_X")
        penalty, alpha = self._penalty(n)
        delta = self.delta if self.delta is not None else min(1e-5, 1.0 / (n * n))
        spec = {
            "task": self._task,
            "loss": self._loss,
            "penalty": penalty,
            "alpha": float(alpha),
            "algorithm": self.algorithm,
            "epsilon": float(self.epsilon),
            "delta": float(delta),
            "fit_intercept": bool(self.fit_intercept),
            "feature_ranges": ranges,
            "target_range": target_range,
            "passes": None if self.passes is None else int(self.passes),
            "step_scale": None if self.step_scale is None else float(self.step_scale),
            "clip": None if self.clip is None else float(self.clip),
            "batch_size": None if self.batch_size is None else int(self.batch_size),
            "threads": None if self.n_jobs is None else int(self.n_jobs),
        }
        seed = _seed_of(self.random_state)
        spec_json = json.dumps(spec)
        y_backend = np.ascontiguousarray(y_backend, dtype=np.float64)
        if sp.issparse(X):
            # A sparse design, never densified: the CSC buffers are read in place (int32
            # or int64 indices as scipy stores them; CSR is converted by scipy).
            X = X.tocsc()
            coef, intercept, report = _core.fit_sparse(
                np.ascontiguousarray(X.data, dtype=np.float64),
                X.indices if X.indices.dtype in (np.int32, np.int64) else X.indices.astype(np.int64),
                X.indptr if X.indptr.dtype in (np.int32, np.int64) else X.indptr.astype(np.int64),
                n,
                p,
                y_backend,
                spec_json,
                seed,
            )
        else:
            if not (X.flags.c_contiguous or X.flags.f_contiguous):
                X = np.ascontiguousarray(X)
            coef, intercept, report = _core.fit_dense(X, y_backend, spec_json, seed)
        report = json.loads(report)
        for w in report.get("warnings", []):
            warnings.warn(w["message"], _warning_class(w["detail"]), stacklevel=3)
        model = report["model"]
        privacy = model.get("privacy") or {}
        self.epsilon_ = privacy.get("epsilon")
        self.delta_ = privacy.get("delta")
        self.adjacency_ = privacy.get("adjacency")
        self.accounting_ = privacy.get("how")
        ledger = privacy.get("ledger") or {}
        self.ledger_ = ledger.get("entries", []) if isinstance(ledger, dict) else ledger
        self.privacy_report_ = privacy
        self.hyperparameters_ = report["chosen"]
        self.feature_ranges_ = np.asarray(model["feature_ranges"], dtype=np.float64)
        self.n_iter_ = model["scaled"]["iterations"]
        return np.asarray(coef, dtype=np.float64), float(intercept)

    def _decision(self, X):
        """``clip(X, feature_ranges_) @ coef + intercept``: the model clips every
        feature to the range it was fitted on, as the library's model does."""
        check_is_fitted(self, "coef_")
        X = _validate(self, X, reset=False, accept_sparse="csr", dtype=np.float64)
        lo, hi = self.feature_ranges_[:, 0], self.feature_ranges_[:, 1]
        coef = np.ravel(self.coef_)
        if sp.issparse(X):
            # Only the stored values: an absent value is 0, clipped to clip(0, lo, hi),
            # whose part of every row's sum is one constant (0 when the ranges hold 0,
            # as a model fitted on sparse data's do).
            X = X.tocsr(copy=True)
            zero = np.clip(0.0, lo, hi)
            X.data = np.clip(X.data, lo[X.indices], hi[X.indices]) - zero[X.indices]
            z = np.asarray(X @ coef).ravel() + float(zero @ coef)
        else:
            z = np.asarray(np.clip(X, lo, hi) @ coef).ravel()
        return z + float(np.ravel(self.intercept_)[0])

    def _dp_expected_failed_checks(self):
        """scikit-learn estimator checks this estimator is expected to fail, with why."""
        return dict(_COMMON_XFAIL)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def _more_tags(self):  # scikit-learn < 1.6
        return {"binary_only": isinstance(self, ClassifierMixin), "poor_score": True}


class _DPClassifier(ClassifierMixin, _DPLinearBase):
    _task = "classification"

    def fit(self, X, y):
        """Fits the private model; ``y`` has exactly two classes (any two values)."""
        self._check_params()
        X, y = _validate(
            self, X, y, accept_sparse=["csc", "csr"], dtype=np.float64, order=None,
            **_X_FINITE_CHECKED,
        )
        classes = np.unique(y)
        # scikit-learn's check, on the distinct labels instead of all of them (the type of
        # target depends on the distinct values only): one pass over y instead of two.
        check_classification_targets(classes)
        if len(classes) != 2:
            raise ValueError(
                f"Only binary classification is supported: {type(self).__name__} needs "
                f"exactly 2 classes in y, got {len(classes)} class(es) {classes.tolist()[:5]}"
            )
        self.classes_ = classes
        y_pm = np.where(y == classes[1], 1.0, -1.0)
        coef, intercept = self._fit_backend(X, y_pm)
        self.coef_ = coef.reshape(1, -1)
        self.intercept_ = np.array([intercept])
        return self

    def decision_function(self, X):
        """``X @ coef_.T + intercept_``: positive for ``classes_[1]``."""
        return self._decision(X)

    def predict(self, X):
        """The class of each row (``classes_[1]`` where the decision is >= 0)."""
        z = self.decision_function(X)
        return self.classes_[(z >= 0).astype(int)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.classifier_tags.poor_score = True  # see _POOR_SCORE
        return tags


class _DPL2Classifier(_DPClassifier):
    """The L2-penalised classifiers' parameters (``C``, as scikit-learn's): the penalty
    on the scaled problem is ``||w||^2 / (2 C n)``."""

    def __init__(
        self,
        epsilon=1.0,
        delta=None,
        bounds_X=None,
        C=1.0,
        algorithm="dp-cd",
        fit_intercept=True,
        passes=None,
        step_scale=None,
        clip=None,
        batch_size=None,
        n_jobs=None,
        random_state=None,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.bounds_X = bounds_X
        self.C = C
        self.algorithm = algorithm
        self.fit_intercept = fit_intercept
        self.passes = passes
        self.step_scale = step_scale
        self.clip = clip
        self.batch_size = batch_size
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _penalty(self, n):
        if not isinstance(self.C, numbers.Real) or not self.C > 0:
            raise ValueError(f"C={self.C!r}: must be a number > 0")
        return "l2", 1.0 / (self.C * n)


class DPLogisticRegression(_DPL2Classifier):
    """Private binary logistic regression (``log(1 + exp(-y x^T w))`` + L2).

    Parameters
    ----------
    epsilon : float, default=1.0
        Target epsilon of the whole fit (everything charged composes to at most this).
    delta : float or None, default=None
        Target delta; ``None`` means ``min(1e-5, 1 / n**2)`` (``n`` is public under the
        replace-one relation the fit uses).
    bounds_X : tuple (lower, upper) of scalars or arrays, or None
        Public bounds on every feature (not computed from the data). Values outside are
        clipped to them, for the fit and for prediction. ``None``: estimated privately
        from the data on 20-50 % of epsilon by a public rule (more where the rows are
        few; charged, with a ``PrivateBoundsWarning``).
    C : float, default=1.0
        Inverse regularisation strength, as scikit-learn's: the L2 penalty on the scaled
        problem is ``1 / (2 C n) ||w||^2``.
    algorithm : {"dp-cd", "dp-gcd", "dp-sgd", "dp-scd"}, default="dp-cd"
        The private solver. DP-CD chooses its passes, step and clipping from public
        inputs only (no tuning) and estimates its smoothness constants privately
        (charged).
    fit_intercept : bool, default=True
    passes, step_scale, clip, batch_size : optional
        The solver's hyperparameters; ``None`` uses the no-tuning defaults.
    n_jobs : int or None, default=None
        Threads of DP-CD's sweeps (the other algorithms ignore it): each coordinate
        step's sweep is split into ``n_jobs`` fixed pieces. ``None`` means 2 for at
        least 32,768 rows of dense data and 1 otherwise (a rule on the public number
        of rows, never on the machine; see the docs' "Speed"). A seeded fit
        reproduces bit for bit for the same ``n_jobs`` on any machine (with fewer
        cores the pieces run one after the other); different ``n_jobs`` differ in the
        last bits. Use ``n_jobs=1`` when the other cores are busy.
    random_state : None, int or RandomState, default=None
        ``None`` draws the noise from the operating system. An int replays the fit bit
        for bit, **and replays its noise**: whoever knows it can subtract the noise, so
        keep it secret (it is never stored in a fitted attribute).

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features)
    intercept_ : ndarray of shape (1,)
    classes_ : ndarray of shape (2,)
    epsilon_, delta_ : float
        The guarantee achieved (never above the target).
    adjacency_ : str
        The neighbouring relation the guarantee holds under.
    accounting_ : str
        The analysis that gives it.
    ledger_ : list of dict
        Every release of the fit, charged before it was drawn.
    privacy_report_ : dict
        Plan, ledger and guarantee as the library reports them.
    hyperparameters_ : dict
        The hyperparameters used (given, or chosen from public inputs).
    feature_ranges_ : ndarray of shape (n_features, 2)
        The ranges every feature is clipped to (declared, or released privately).
    n_features_in_, feature_names_in_, n_iter_
    """

    _loss = "logistic"

    def predict_proba(self, X):
        """``[P(classes_[0]), P(classes_[1])]`` for every row."""
        z = self.decision_function(X)
        p1 = 1.0 / (1.0 + np.exp(-np.clip(z, -500, 500)))
        return np.column_stack([1.0 - p1, p1])

    def predict_log_proba(self, X):
        """Log of :meth:`predict_proba`."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))


class DPLinearSVC(_DPL2Classifier):
    """Private linear SVM with the squared hinge loss ``max(0, 1 - y x^T w)^2`` + L2.

    Same parameters and attributes as :class:`DPLogisticRegression` (no probabilities).
    """

    _loss = "squared-hinge"


class _DPRegressor(RegressorMixin, _DPLinearBase):
    _loss = "squared"

    def fit(self, X, y):
        """Fits the private model; ``bounds_y`` bounds the target (public)."""
        self._check_params()
        X, y = _validate(
            self, X, y, accept_sparse=["csc", "csr"], dtype=np.float64, y_numeric=True,
            **_X_FINITE_CHECKED,
        )
        if self.bounds_y is None:
            target_range = None
            warnings.warn(
                "bounds_y=None: the target range is estimated privately from the data on "
                "15 % of epsilon (charged: see ledger_); declare public bounds to spend "
                "all of epsilon on the fit",
                PrivateBoundsWarning,
                stacklevel=2,
            )
        else:
            target_range = _ranges(self.bounds_y, 1, "bounds_y")[0]
        coef, intercept = self._fit_backend(X, y, target_range=target_range)
        self.coef_ = coef
        self.intercept_ = intercept
        return self

    def predict(self, X):
        """``X @ coef_ + intercept_``."""
        return self._decision(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.regressor_tags.poor_score = True  # see _POOR_SCORE
        return tags


class DPLinearRegression(_DPRegressor):
    """Private least squares (``(x^T w - y)^2 / 2``, no penalty), diffprivlib's names.

    Parameters as :class:`DPLogisticRegression` without ``C``, plus ``bounds_y``:
    public bounds on the target (it is mapped to ``[-1, 1]`` by them, clipped).
    """

    def __init__(
        self,
        epsilon=1.0,
        delta=None,
        bounds_X=None,
        bounds_y=None,
        algorithm="dp-cd",
        fit_intercept=True,
        passes=None,
        step_scale=None,
        clip=None,
        batch_size=None,
        n_jobs=None,
        random_state=None,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.bounds_X = bounds_X
        self.bounds_y = bounds_y
        self.algorithm = algorithm
        self.fit_intercept = fit_intercept
        self.passes = passes
        self.step_scale = step_scale
        self.clip = clip
        self.batch_size = batch_size
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _penalty(self, n):
        return "none", 0.0


class _DPAlphaRegressor(_DPRegressor):
    """The regressors with a penalty strength ``alpha`` (``_penalty_name``'s)."""

    _penalty_name = "l1"

    def __init__(
        self,
        epsilon=1.0,
        delta=None,
        bounds_X=None,
        bounds_y=None,
        alpha=0.01,
        algorithm="dp-cd",
        fit_intercept=True,
        passes=None,
        step_scale=None,
        clip=None,
        batch_size=None,
        n_jobs=None,
        random_state=None,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.bounds_X = bounds_X
        self.bounds_y = bounds_y
        self.alpha = alpha
        self.algorithm = algorithm
        self.fit_intercept = fit_intercept
        self.passes = passes
        self.step_scale = step_scale
        self.clip = clip
        self.batch_size = batch_size
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _penalty(self, n):
        if not isinstance(self.alpha, numbers.Real) or not (
            np.isfinite(self.alpha) and self.alpha >= 0
        ):
            raise ValueError(f"alpha={self.alpha!r}: must be a finite number >= 0")
        return self._penalty_name, self.alpha


class DPElasticNet(_DPAlphaRegressor):
    """Private elastic net: ``(x^T w - y)^2 / 2 + alpha (|w|_1 + |w|_2^2 / 2)`` on the
    pipeline's scaled problem (the library's elastic-net penalty; no ``l1_ratio``)."""

    _penalty_name = "elastic-net"


class DPLasso(_DPAlphaRegressor):
    """Private LASSO: ``(x^T w - y)^2 / 2 + alpha |w|_1`` on the scaled problem."""

    _penalty_name = "l1"
