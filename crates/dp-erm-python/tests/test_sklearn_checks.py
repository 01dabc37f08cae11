"""scikit-learn's own estimator checks. Expected failures are declared by each
estimator (``_dp_expected_failed_checks``), each with its reason."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from dp_erm import (DPElasticNet, DPLasso, DPLinearRegression, DPLinearSVC,
                    DPLogisticRegression)

# The checks' data are of order 1 to 10; public bounds wide enough for them (values
# beyond would be clipped, which the checks would also accept).
_X = (-10.0, 10.0)
_Y = (-100.0, 100.0)

ESTIMATORS = [
    DPLogisticRegression(bounds_X=_X),
    DPLinearSVC(bounds_X=_X),
    DPLinearRegression(bounds_X=_X, bounds_y=_Y),
    DPLasso(bounds_X=_X, bounds_y=_Y),
    DPElasticNet(bounds_X=_X, bounds_y=_Y),
]


@parametrize_with_checks(
    ESTIMATORS, expected_failed_checks=lambda est: est._dp_expected_failed_checks()
)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)
