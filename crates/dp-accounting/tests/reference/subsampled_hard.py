# Hard integer-order cases (tiny RDP at a large order; moderate q at a large order), exact
# binomials, mpmath 80 digits.
from mpmath import mp, mpf, binomial, exp, log
mp.dps = 80
def rdp_int(q, z, a):
    q, z = mpf(q), mpf(z)
    A = sum(binomial(a, k) * (1 - q) ** (a - k) * q ** k * exp(mpf(k * k - k) / (2 * z * z)) for k in range(a + 1))
    return log(A) / (a - 1)
for q, z, a in [('1e-6', '100', 10000), ('0.5', '30', 5000), ('1e-4', '10', 2000)]:
    print(q, z, a, mp.nstr(rdp_int(q, z, a), 20))
