# Reference for the DP-SGD landmark (sigma = 1.1, q = 0.01, 10,000 steps, delta = 1e-5):
# the improved (CKS20) conversion of 1e4 * RDP(alpha) at alpha = 4.6, 4.671447424047603 (our
# reported optimum) and 4.75, with RDP(alpha) from the mpmath quadrature of subsampled.py.
exec(open('subsampled.py').read().split("for q, z, a in [('0.01'")[0])
src = open('subsampled.py').read()
exec(src[src.index('from mpmath import quad'):src.index('mp.dps = 50')])
mp.dps = 40
d = mpf('1e-5')
for a in ['4.6', '4.671447424047603', '4.75']:
    r = rdp_frac('0.01', '1.1', a)
    a = mpf(a)
    eps = 10000 * r + log((a - 1) / a) - (log(d) + log(a)) / (a - 1)
    print(a, 'rdp', mp.nstr(r, 20), 'eps', mp.nstr(eps, 20))
