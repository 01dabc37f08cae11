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
