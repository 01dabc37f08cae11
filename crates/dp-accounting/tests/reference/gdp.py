# High-precision references for the GDP / analytic Gaussian tests (tests/golden.rs).
# Run: python3 gdp.py   (needs mpmath)
from mpmath import mp, ncdf, exp, mpf, log, sqrt
mp.dps = 120

def delta(mu, e):
    return ncdf(-e / mu + mu / 2) - exp(e) * ncdf(-e / mu - mu / 2)

def eps_for(mu, de):
    lo, hi = mpf(0), mu * mu / 2 + mu * sqrt(2 * log(1 / de)) + 1
    for _ in range(400):
        mid = (lo + hi) / 2
        if delta(mu, mid) > de:
            lo = mid
        else:
            hi = mid
    return hi

for mu, e in [(1, 1), (mpf('2.5'), 13), (mpf('0.1'), 5), (50, 1000)]:
    d = delta(mu, e)
    print('delta', mu, e, mp.nstr(d, 20), 'log', mp.nstr(log(d), 20))
for mu, de in [(mpf('2.5'), mpf('1e-5')), (1, mpf('1e-5')), (mpf('0.05'), mpf('1e-10')),
               (20, mpf('1e-10')), (mpf('0.01'), mpf('1e-18')), (mpf(4) / mpf('25.5292'), 1 / mpf(20640) ** 2)]:
    print('eps', mu, de, mp.nstr(eps_for(mu, de), 20))
