"""The privacy calculator: the epsilon of a plan, and the noise for a target.

Answered by the Rust library's accountants (``dp_accounting``), the same numbers as
``cargo xtask privacy``. Every epsilon is an upper bound rounded up; every noise meets
the target (calibration never overshoots).

>>> from dp_erm import accounting
>>> r = accounting.epsilon("subsampled-gaussian", steps=10_000, delta=1e-5,
...                        sigma=1.1, sampling_rate=0.01)
>>> round(r["epsilon"], 3)
5.632
>>> s = accounting.sigma("gaussian", steps=100, epsilon=1.0, delta=1e-6, accountant="gdp")
>>> s["achieved_epsilon"] <= 1.0
True
"""

from __future__ import annotations

import json
import numbers

from . import _core

__all__ = ["epsilon", "sigma", "accountants", "MECHANISMS"]

MECHANISMS = ("gaussian", "subsampled-gaussian", "laplace")


def _steps(steps):
    """``steps`` as an int >= 1: an integer, or a float with an integer value (``1e4``).
    A fractional or non-positive count is an error, never rounded."""
    if isinstance(steps, bool) or not isinstance(steps, numbers.Real):
        raise TypeError(f"steps={steps!r}: must be a whole number >= 1")
    if not isinstance(steps, numbers.Integral):
        if not float(steps).is_integer():
            raise ValueError(f"steps={steps!r}: must be a whole number >= 1")
    if steps < 1:
        raise ValueError(f"steps={steps!r}: must be a whole number >= 1")
    return int(steps)


def epsilon(mechanism, steps, delta, sigma=None, scale=None, sensitivity=None,
            sampling_rate=None, accountant=None):
    """The epsilon at ``delta`` of ``steps`` releases of ``mechanism``.

    A Gaussian plan (``"gaussian"``, or ``"subsampled-gaussian"`` with Poisson
    ``sampling_rate``, add/remove-one) takes the noise multiplier ``sigma`` (standard
    deviation over L2 sensitivity) and an accountant among ``rdp`` (default),
    ``rdp-mironov``, ``zcdp``, ``gdp``, ``pld``. A ``"laplace"`` plan takes ``scale``
    (and ``sensitivity``, default 1) and ``basic``, ``advanced`` or ``optimal``
    (default). Returns a dict with ``epsilon`` (rounded up) and how it was obtained
    (``order`` for RDP).
    """
    return json.loads(_core.epsilon(mechanism, _steps(steps), float(delta),
                                    None if sigma is None else float(sigma),
                                    None if scale is None else float(scale),
                                    None if sensitivity is None else float(sensitivity),
                                    None if sampling_rate is None else float(sampling_rate),
                                    accountant))


def sigma(mechanism, steps, epsilon, delta, sampling_rate=None, accountant=None):
    """The smallest Gaussian noise multiplier for which ``steps`` releases are
    ``(epsilon, delta)``-DP; returns a dict with ``sigma`` and ``achieved_epsilon``
    (never above ``epsilon``)."""
    return json.loads(_core.sigma(mechanism, _steps(steps), float(epsilon), float(delta),
                                  None if sampling_rate is None else float(sampling_rate),
                                  accountant))


def accountants():
    """The accountants offered: ``{name: what it accounts}``."""
    return dict(_core.accountants())
