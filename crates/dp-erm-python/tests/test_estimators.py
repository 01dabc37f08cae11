"""Behaviour of the estimators: fit / predict / attributes, inputs, errors, pickling."""

import json
import pickle

import numpy as np
import pytest
import scipy.sparse as sp

import dp_erm
from dp_erm import (DPElasticNet, DPLasso, DPLinearRegression, DPLinearSVC,
                    DPLogisticRegression)


def _binary(n=400, p=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, p))
    w = np.linspace(2, -2, p)
    y = np.where(X @ w + 0.3 > 0, "yes", "no")
    return X, y


def _regression(n=400, p=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, p))
    y = X @ np.linspace(1, -1, p) + 0.5 + 0.05 * rng.standard_normal(n)
    return X, y


def test_logistic_fit_predict_and_guarantee():
    X, y = _binary(4000)
    clf = DPLogisticRegression(epsilon=2.0, bounds_X=(-1, 1), random_state=1).fit(X, y)
    assert list(clf.classes_) == ["no", "yes"]
    assert clf.coef_.shape == (1, 5) and clf.intercept_.shape == (1,)
    assert set(clf.predict(X)) <= {"no", "yes"}
    assert clf.score(X, y) > 0.85
    proba = clf.predict_proba(X)
    assert proba.shape == (4000, 2) and np.allclose(proba.sum(axis=1), 1)
    assert np.array_equal(clf.predict(X), clf.classes_[(proba[:, 1] >= 0.5).astype(int)])
    assert 0 < clf.epsilon_ <= 2.0 and 0 < clf.delta_ <= 1e-5
    assert clf.adjacency_ and clf.accounting_
    # Declared bounds and the public M_j: the fit's own releases are all that is charged.
    assert isinstance(clf.ledger_, list) and len(clf.ledger_) >= 1
    assert clf.n_features_in_ == 5 and clf.n_iter_ > 0
    assert clf.hyperparameters_["passes"] >= 2


@pytest.mark.parametrize("est", [DPLinearRegression, DPLasso, DPElasticNet])
def test_regressors_fit(est):
    X, y = _regression(5000)
    reg = est(epsilon=3.0, bounds_X=(-1, 1), bounds_y=(-3, 4), random_state=0).fit(X, y)
    assert reg.coef_.shape == (5,) and isinstance(reg.intercept_, float)
    assert reg.score(X, y) > 0.5, reg.score(X, y)
    assert reg.epsilon_ <= 3.0


def test_linear_svc():
    X, y = _binary(4000)
    clf = DPLinearSVC(epsilon=2.0, bounds_X=(-1, 1), random_state=3).fit(X, y)
    assert clf.score(X, y) > 0.85
    assert not hasattr(clf, "predict_proba")


@pytest.mark.parametrize("algorithm", ["dp-gcd", "dp-sgd", "dp-scd"])
def test_other_algorithms(algorithm):
    X, y = _binary(4000)
    clf = DPLogisticRegression(epsilon=2.0, bounds_X=(-1, 1), algorithm=algorithm,
                               fit_intercept=algorithm != "dp-scd",
                               random_state=0).fit(X, y)
    assert clf.epsilon_ <= 2.0
    assert clf.score(X, y) > 0.6, (algorithm, clf.score(X, y))


def test_seed_reproduces_and_none_draws_fresh_noise():
    X, y = _binary()
    a = DPLogisticRegression(bounds_X=(-1, 1), random_state=5).fit(X, y)
    b = DPLogisticRegression(bounds_X=(-1, 1), random_state=5).fit(X, y)
    assert np.array_equal(a.coef_, b.coef_) and a.intercept_[0] == b.intercept_[0]
    c = DPLogisticRegression(bounds_X=(-1, 1)).fit(X, y)
    d = DPLogisticRegression(bounds_X=(-1, 1)).fit(X, y)
    assert not np.array_equal(c.coef_, d.coef_)


def test_no_seed_in_fitted_attributes():
    X, y = _binary()
    seed = 918273645
    clf = DPLogisticRegression(bounds_X=(-1, 1), random_state=seed).fit(X, y)
    fitted = {k: v for k, v in vars(clf).items() if k.endswith("_")}
    text = json.dumps(fitted, default=lambda o: o.tolist() if hasattr(o, "tolist") else str(o))
    assert str(seed) not in text
    assert "seed" not in text


def test_c_and_fortran_order_and_pandas_give_the_same_fit():
    pd = pytest.importorskip("pandas")
    X, y = _binary()
    kw = dict(bounds_X=(-1, 1), random_state=11)
    a = DPLogisticRegression(**kw).fit(np.ascontiguousarray(X), y)
    b = DPLogisticRegression(**kw).fit(np.asfortranarray(X), y)
    df = pd.DataFrame(X, columns=[f"f{j}" for j in range(5)])
    c = DPLogisticRegression(**kw).fit(df, y)
    assert np.array_equal(a.coef_, b.coef_) and np.array_equal(a.coef_, c.coef_)
    assert list(c.feature_names_in_) == [f"f{j}" for j in range(5)]
    assert np.array_equal(c.predict(df), a.predict(X))


def test_a_two_thread_fit_replays_from_either_layout_and_is_the_default_for_large_n():
    # n_jobs=2 splits each step's sweep in two fixed pieces: the seed replays it from a
    # C- or a Fortran-ordered array, bit for bit; one thread adds the sums in another
    # order (other last bits). The default at 70,000 rows (>= 32,768) is two pieces,
    # below that one.
    X, y = _binary(70_000, 3, seed=4)
    kw = dict(bounds_X=(-1, 1), random_state=9, passes=2)
    a = DPLogisticRegression(n_jobs=2, **kw).fit(np.ascontiguousarray(X), y)
    b = DPLogisticRegression(n_jobs=2, **kw).fit(np.asfortranarray(X), y)
    one = DPLogisticRegression(n_jobs=1, **kw).fit(X, y)
    default = DPLogisticRegression(**kw).fit(np.asfortranarray(X), y)
    assert np.array_equal(a.coef_, b.coef_) and a.intercept_ == b.intercept_
    assert np.array_equal(default.coef_, a.coef_) and default.intercept_ == a.intercept_
    assert not np.array_equal(a.coef_, one.coef_)
    assert a.score(X, y) > 0.8
    Xs, ys = X[:30_000], y[:30_000]
    small = DPLogisticRegression(**kw).fit(Xs, ys)
    small_one = DPLogisticRegression(n_jobs=1, **kw).fit(Xs, ys)
    assert np.array_equal(small.coef_, small_one.coef_)


def test_sparse_input():
    """A scipy sparse fit goes to the library's sparse design (never densified). It is
    the dense fit of the same matrix up to rounding, not bit for bit: the dense column
    kernels sum in four SIMD partial sums, the sparse ones sequentially over the stored
    entries. Same seed: same noise, plan and guarantee; a seeded sparse fit reproduces
    itself bit for bit from CSC or CSR, with int32 or int64 indices."""
    X, y = _binary(3000)
    X[np.abs(X) < 0.5] = 0.0
    kw = dict(bounds_X=(-1, 1), random_state=2, epsilon=2.0)
    dense = DPLogisticRegression(**kw).fit(X, y)
    csc = sp.csc_matrix(X)
    assert csc.indices.dtype == np.int32
    ref = DPLogisticRegression(**kw).fit(csc, y)
    np.testing.assert_allclose(ref.coef_, dense.coef_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(ref.intercept_, dense.intercept_, rtol=1e-9, atol=1e-12)
    assert ref.epsilon_ == dense.epsilon_ and ref.ledger_ == dense.ledger_
    wide = sp.csc_matrix(X)
    wide.indices = wide.indices.astype(np.int64)
    wide.indptr = wide.indptr.astype(np.int64)
    for Xs in (sp.csr_matrix(X), wide, sp.csc_array(X)):
        s = DPLogisticRegression(**kw).fit(Xs, y)
        assert np.array_equal(s.coef_, ref.coef_) and np.array_equal(s.intercept_, ref.intercept_)
        assert np.array_equal(s.predict(Xs), s.predict(X))
        np.testing.assert_allclose(
            s.decision_function(Xs), s.decision_function(X), rtol=1e-12, atol=1e-12
        )
    # Regression too.
    Xr, yr = _regression(2000)
    Xr[np.abs(Xr) < 0.3] = 0.0
    rkw = dict(bounds_X=(-1, 1), bounds_y=(-3, 4), random_state=5)
    a = DPLasso(**rkw).fit(Xr, yr)
    b = DPLasso(**rkw).fit(sp.csr_matrix(Xr), yr)
    np.testing.assert_allclose(b.coef_, a.coef_, rtol=1e-9, atol=1e-12)


def test_sparse_input_needs_declared_bounds_holding_zero():
    X, y = _binary(500)
    X[np.abs(X) < 0.5] = 0.0
    with pytest.warns(dp_erm.PrivateBoundsWarning):
        with pytest.raises(ValueError, match="private feature ranges need dense data"):
            DPLogisticRegression(random_state=0).fit(sp.csr_matrix(X), y)
    with pytest.raises(ValueError, match="must contain 0"):
        DPLogisticRegression(bounds_X=(0.1, 1), random_state=0).fit(sp.csr_matrix(X), y)
    # A model fitted on dense data with ranges that exclude 0 predicts on sparse rows
    # as on dense ones (an absent value is 0, clipped to its range).
    clf = DPLogisticRegression(bounds_X=(0.1, 1), random_state=0).fit(X, y)
    np.testing.assert_allclose(
        clf.decision_function(sp.csr_matrix(X)), clf.decision_function(X), rtol=1e-12, atol=1e-12
    )


def test_huge_sparse_fit_never_densifies():
    """60,000 x 60,000 with three non-zeros per row: 28.8 GB if it were dense."""
    n = p = 60_000
    i = np.repeat(np.arange(n), 3)
    a = (np.arange(n) * 7919 % 1000) / 500.0 - 1.0
    sign = np.where(np.arange(n) % 3 == 0, 1.0, -1.0)
    j = np.column_stack([np.arange(n) % p, (np.arange(n) * 31 + 7) % p, np.full(n, p - 1)]).ravel()
    v = np.column_stack([a, np.full(n, 0.5), sign]).ravel()
    X = sp.csr_matrix((v, (i, j)), shape=(n, p))
    y = np.where(a + 0.3 * sign > 0, 1, 0)
    clf = DPLogisticRegression(bounds_X=(-1, 1), passes=1, random_state=0).fit(X, y)
    assert clf.coef_.shape == (1, p)
    assert clf.predict(X).shape == (n,)


def test_pickle_round_trip():
    X, y = _binary()
    clf = DPLogisticRegression(bounds_X=(-1, 1), random_state=0).fit(X, y)
    back = pickle.loads(pickle.dumps(clf))
    assert np.array_equal(back.predict_proba(X), clf.predict_proba(X))
    assert back.epsilon_ == clf.epsilon_ and back.ledger_ == clf.ledger_
    reg = DPLasso(bounds_X=(-1, 1), bounds_y=(-3, 4), random_state=0).fit(*_regression())
    assert np.array_equal(pickle.loads(pickle.dumps(reg)).predict(X), reg.predict(X))


@pytest.mark.parametrize("alpha", [-1.0, float("inf"), float("nan"), "0.1"])
def test_bad_alpha_raises_value_error(alpha):
    with pytest.raises(ValueError, match="alpha=.*must be a finite number >= 0"):
        DPLasso(bounds_X=(-1, 1), bounds_y=(-3, 4), alpha=alpha).fit(*_regression())


def test_get_set_params():
    clf = DPLogisticRegression(epsilon=0.5, bounds_X=(0, 1))
    assert clf.get_params()["epsilon"] == 0.5
    clf.set_params(epsilon=2.0, algorithm="dp-gcd")
    assert clf.epsilon == 2.0 and clf.algorithm == "dp-gcd"


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(epsilon=0.0), "epsilon"),
        (dict(epsilon=-1.0), "epsilon"),
        (dict(epsilon=float("inf")), "epsilon"),
        (dict(delta=0.0), "delta"),
        (dict(delta=1.0), "delta"),
        (dict(algorithm="sgd"), "algorithm"),
        (dict(bounds_X=(1.0, -1.0)), "lower bound"),
        (dict(bounds_X=([0, 0], [1, 1])), r"lower bounds have shape \(2,\); give a scalar"),
        (dict(bounds_X=(0, [[1.0]])), r"upper bounds have shape \(1, 1\)"),
        (dict(bounds_X=("a", 1)), "lower bounds are not numbers"),
        (dict(C=0.0), "C="),
        (dict(passes=0), "passes"),
        (dict(n_jobs=0), "n_jobs"),
        (dict(n_jobs=1.5), "n_jobs"),
        (dict(passes=True), "passes"),
        (dict(clip=float("inf")), "clip=inf: must be a finite number"),
        (dict(step_scale=float("inf")), "step_scale=inf: must be a finite number"),
        (dict(fit_intercept="no"), "fit_intercept='no': must be True or False"),
    ],
)
def test_bad_parameters_raise_value_error(kwargs, match):
    X, y = _binary()
    params = dict(bounds_X=(-1, 1), random_state=0)
    params.update(kwargs)
    with pytest.raises(ValueError, match=match):
        DPLogisticRegression(**params).fit(X, y)


def test_bad_data_raises():
    X, y = _binary()
    clf = DPLogisticRegression(bounds_X=(-1, 1), random_state=0)
    Xn = X.copy()
    Xn[3, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        clf.fit(Xn, y)
    Xi = X.copy()
    Xi[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinity|inf"):
        clf.fit(Xi, y)
    with pytest.raises(ValueError):
        clf.fit(X[:0], y[:0])
    with pytest.raises(ValueError, match="inconsistent|samples"):
        clf.fit(X, y[:-1])
    with pytest.raises(ValueError, match="Only binary classification"):
        clf.fit(X, np.arange(len(y)) % 3)
    clf.fit(X, y)
    with pytest.raises(ValueError, match="features"):
        clf.predict(X[:, :3])


def test_missing_bounds_are_estimated_privately_and_charged():
    X, y = _binary(4000)
    with pytest.warns(dp_erm.PrivateBoundsWarning, match="estimated privately"):
        clf = DPLogisticRegression(epsilon=2.0, random_state=0).fit(X, y)
    declared = DPLogisticRegression(epsilon=2.0, bounds_X=(-1, 1), random_state=0).fit(X, y)
    assert clf.epsilon_ <= 2.0
    assert clf.privacy_report_["preprocessing_epsilon"] > 0
    assert declared.privacy_report_["preprocessing_epsilon"] == 0
    assert len(clf.ledger_) > len(declared.ledger_)
    assert clf.feature_ranges_.shape == (5, 2)
    Xr, yr = _regression(4000)
    with pytest.warns(dp_erm.PrivateBoundsWarning, match="target range"):
        reg = DPLinearRegression(epsilon=2.0, bounds_X=(-1, 1), random_state=0).fit(Xr, yr)
    assert reg.epsilon_ <= 2.0 and reg.privacy_report_["preprocessing_epsilon"] > 0


def test_prediction_clips_to_the_fitted_ranges():
    X, y = _binary()
    clf = DPLogisticRegression(bounds_X=(-1, 1), random_state=0).fit(X, y)
    far = X * 100.0
    assert np.array_equal(clf.decision_function(far),
                          clf.decision_function(np.clip(far, -1, 1)))


def test_accounting():
    acc = dp_erm.accounting
    # The README's calculator example (cargo xtask privacy epsilon ... --accountant rdp).
    r = acc.epsilon("subsampled-gaussian", steps=10_000, delta=1e-5, sigma=1.1,
                    sampling_rate=0.01)
    assert r["epsilon"] == pytest.approx(5.631809667021566, rel=1e-12)
    s = acc.sigma("subsampled-gaussian", steps=1000, epsilon=1.0, delta=1e-5,
                  sampling_rate=0.01)
    assert s["achieved_epsilon"] <= 1.0
    back = acc.epsilon("subsampled-gaussian", steps=1000, delta=1e-5, sigma=s["sigma"],
                       sampling_rate=0.01)
    assert back["epsilon"] <= 1.0
    lap = acc.epsilon("laplace", steps=50, delta=1e-6, scale=10.0)
    assert lap["epsilon"] == pytest.approx(3.1729027340195914, rel=1e-12)
    for name in ("rdp", "zcdp", "gdp", "pld"):
        assert acc.epsilon("gaussian", steps=10, delta=1e-6, sigma=5.0,
                           accountant=name)["epsilon"] > 0
    assert "gdp" in acc.accountants()
    with pytest.raises(ValueError, match="sampling_rate"):
        acc.epsilon("subsampled-gaussian", steps=10, delta=1e-5, sigma=1.0)
    with pytest.raises(ValueError):
        acc.epsilon("gaussian", steps=10, delta=2.0, sigma=1.0)
    with pytest.raises(ValueError, match="accountant"):
        acc.epsilon("gaussian", steps=10, delta=1e-5, sigma=1.0, accountant="optimal")
    # A step count is a whole number: a fraction or a non-positive count is refused,
    # never truncated; an integral float (1e4) or a numpy integer is taken.
    for bad in (1.5, 0, -1, float("nan")):
        with pytest.raises(ValueError, match="steps"):
            acc.epsilon("gaussian", steps=bad, delta=1e-5, sigma=1.0)
        with pytest.raises(ValueError, match="steps"):
            acc.sigma("gaussian", steps=bad, epsilon=1.0, delta=1e-5)
    with pytest.raises(TypeError, match="steps"):
        acc.epsilon("gaussian", steps="10", delta=1e-5, sigma=1.0)
    assert acc.epsilon("gaussian", steps=1e4, delta=1e-5, sigma=50.0) == acc.epsilon(
        "gaussian", steps=np.int64(10_000), delta=1e-5, sigma=50.0)


def test_dp_scd_fits_a_penalised_intercept():
    # Since issue 25 the pipeline gives DP-SCD an intercept: the coefficient of a
    # constant column under the same L2 penalty (its dual needs an unweighted ridge).
    X, y = _binary(500)
    clf = DPLogisticRegression(bounds_X=(-1, 1), algorithm="dp-scd", random_state=0).fit(X, y)
    assert np.isfinite(clf.intercept_[0])
    assert "penalised" in clf.hyperparameters_["intercept_note"]
    off = DPLogisticRegression(bounds_X=(-1, 1), algorithm="dp-scd", fit_intercept=False,
                               random_state=0).fit(X, y)
    assert off.intercept_[0] == 0.0


def test_a_budget_too_small_for_the_data_raises_a_python_warning():
    # 400 rows, 5 features, eps 0.01: the no-tuning rule wants far fewer than 2 passes.
    X, y = _binary(400)
    with pytest.warns(dp_erm.BudgetTooSmallWarning, match="budget is too small"):
        clf = DPLogisticRegression(epsilon=0.01, bounds_X=(-1, 1), random_state=0).fit(X, y)
    assert issubclass(dp_erm.BudgetTooSmallWarning, dp_erm.DPFitWarning)
    assert any("too small" in w for w in clf.hyperparameters_["warnings"])
