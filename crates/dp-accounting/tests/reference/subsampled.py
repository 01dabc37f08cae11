# High-precision references for the subsampled-Gaussian RDP (integer orders):
# log(A)/(a-1), A = sum_k C(a,k) (1-q)^(a-k) q^k exp((k^2-k)/(2 z^2)), exact binomials, mpmath 60 digits.
from mpmath import mp, mpf, binomial, exp, log
mp.dps = 60
def rdp_int(q, z, a):
    q, z = mpf(q), mpf(z)
    A = sum(binomial(a, k) * (1 - q) ** (a - k) * q ** k * exp(mpf(k * k - k) / (2 * z * z)) for k in range(a + 1))
    return log(A) / (a - 1)
for q, z, a in [('0.01', '1.1', 2), ('0.01', '1.1', 5), ('1e-6', '100', 2), ('1e-6', '0.3', 64), ('0.5', '0.3', 1000), ('0.001', '5', 256), ('1e-6', '1', 10000)]:
    print(q, z, a, mp.nstr(rdp_int(q, z, a), 20))

# Fractional orders: A - 1 = E_{x~N(0,z^2)}[(1-q+q e^{(2x-1)/(2z^2)})^a - 1 - a q (e^{(2x-1)/(2z^2)} - 1)]
# by mpmath.quad (tanh-sinh) with break points at the bump centres x = k (k = 0..ceil(a)+1),
# at 50 digits, independent of the Rust quadrature (different rule, different precision).
from mpmath import quad, npdf, ceil, log1p, inf
def rdp_frac(q, z, a):
    q, z, a = mpf(q), mpf(z), mpf(a)
    def f(x):
        y = exp((2 * x - 1) / (2 * z * z)) - 1
        return ((1 + q * y) ** a - 1 - a * q * y) * npdf(x, 0, z)
    pts = [-inf, -40 * z] + [mpf(k) for k in range(0, int(ceil(a)) + 2)] + [a + 40 * z + 2, inf]
    pts = sorted(set(pts))
    am1 = quad(f, pts, maxdegree=10)
    return log1p(am1) / (a - 1)
mp.dps = 50
for q, z, a in [('0.01', '1.1', '2.5'), ('0.01', '1.1', '4.5'), ('1e-6', '100', '1.5'), ('1e-6', '0.3', '10.5'),
                ('0.5', '0.3', '3.3'), ('0.001', '5', '1.01'), ('0.2', '2', '60.7'), ('1e-5', '1', '1.1')]:
    print('frac', q, z, a, mp.nstr(rdp_frac(q, z, a), 20))
