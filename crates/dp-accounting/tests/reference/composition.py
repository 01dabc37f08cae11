# References for the Laplace RDP (Mironov 2017 Prop. 6) and the optimal composition of
# k eps0-DP mechanisms (exact hockey-stick curve of k-fold eps0-randomised response,
# Kairouz-Oh-Viswanath 2015), mpmath at 60 digits with exact binomials.
from mpmath import mp, mpf, exp, log, binomial
mp.dps = 60

def laplace_rdp(a, r):
    a, r = mpf(a), mpf(r)
    return log(a / (2 * a - 1) * exp((a - 1) / r) + (a - 1) / (2 * a - 1) * exp(-a / r)) / (a - 1)

for a, r in [('2', '1'), ('1.5', '0.1'), ('10', '3'), ('100', '0.5'), ('1.01', '10')]:
    print('laplace', a, r, mp.nstr(laplace_rdp(a, r), 20))

def kov_delta(e0, k, eps):
    e0, eps = mpf(e0), mpf(eps)
    s = mpf(0)
    for l in range(k + 1):
        t = exp((k - l) * e0) - exp(eps + l * e0)
        if t > 0:
            s += binomial(k, l) * t
    return s / (1 + exp(e0)) ** k

def kov_eps(e0, k, delta):
    lo, hi = mpf(0), k * mpf(e0)
    for _ in range(200):
        mid = (lo + hi) / 2
        if kov_delta(e0, k, mid) > delta:
            lo = mid
        else:
            hi = mid
    return hi

for e0, k, d in [('0.1', 10, '1e-5'), ('0.01', 1000, '1e-6'), ('0.5', 20, '1e-3'), ('0.001', 5000, '1e-9')]:
    print('kov', e0, k, d, mp.nstr(kov_eps(e0, k, mpf(d)), 20))
