# CKS20 conversion of rho-zCDP: eps = inf_a [a rho + ln(1-1/a) - (ln delta + ln a)/(a-1)].
# The stationarity condition is rho = -(ln delta + ln a)/(a-1)^2; solved with mpmath.findroot
# at 50 digits (bracketed by bisection first).
from mpmath import mp, mpf, log, sqrt, findroot
mp.dps = 50
def cks(rho, delta):
    rho, delta = mpf(rho), mpf(delta)
    g = lambda a: rho + (log(delta) + log(a)) / (a - 1) ** 2
    lo, hi = mpf(1) + mpf('1e-30'), mpf(10) ** 12
    for _ in range(300):
        mid = (lo + hi) / 2
        if g(mid) < 0: lo = mid
        else: hi = mid
    a = findroot(g, (lo + hi) / 2)
    return a * rho + log(1 - 1 / a) - (log(delta) + log(a)) / (a - 1), a
for rho, delta in [('0.01', '1e-5'), ('1', '1e-6'), ('100', '1e-3'), ('1e-6', '1e-10')]:
    e, a = cks(rho, delta)
    print(rho, delta, 'eps', mp.nstr(e, 20), 'alpha', mp.nstr(a, 12))
