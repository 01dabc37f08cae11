"""Peer comparison for docs/privacy/peers.md (run by hand; not part of the test suite).

Usage: python peers.py /path/to/target/debug/xtask
Needs: pip install dp-accounting prv-accountant mpmath   (versions printed at the top).
Our numbers come from the calculator (`xtask privacy ... --json`); references from mpmath.
"""
import json, math, subprocess, sys, time, warnings
from importlib.metadata import version

import dp_accounting
from dp_accounting import dp_event
from dp_accounting.pld import pld_privacy_accountant, accountant as pld_acc
from dp_accounting.rdp import rdp_privacy_accountant as rdp_mod
from dp_accounting.pld import common as pld_common
import prv_accountant
from prv_accountant import PRVAccountant
from prv_accountant.privacy_random_variables import (
    PoissonSubsampledGaussianMechanism, GaussianMechanism, LaplaceMechanism)
import mpmath
from mpmath import mp, mpf

warnings.simplefilter("ignore")
XTASK = sys.argv[1]
print(f"dp-accounting {version('dp-accounting')}, prv-accountant {version('prv-accountant')}, mpmath {version('mpmath')}")


def ours(args):
    t = time.time()
    out = subprocess.run([XTASK, "privacy"] + args.split() + ["--json"], capture_output=True, text=True)
    dt = time.time() - t
    if out.returncode != 0:
        return None, out.stderr.strip(), dt
    return json.loads(out.stdout), None, dt


def timed(f):
    t = time.time()
    try:
        v = f()
    except Exception as e:  # report the peer's failure as it is
        v = f"{type(e).__name__}: {e}"[:80]
    return v, time.time() - t


def dpa_rdp(event, delta):
    a = rdp_mod.RdpAccountant()
    a.compose(event)
    return a.get_epsilon_and_optimal_order(delta)


def dpa_pld(event, delta, interval=1e-4):
    a = pld_privacy_accountant.PLDAccountant(value_discretization_interval=interval)
    a.compose(event)
    return a.get_epsilon(delta)


print("\n## A. DP-SGD: q = 0.01, sigma = 1.1, 1e4 steps, delta = 1e-5")
ev = dp_event.SelfComposedDpEvent(dp_event.PoissonSampledDpEvent(0.01, dp_event.GaussianDpEvent(1.1)), 10_000)
print("dp_accounting RDP:", *timed(lambda: dpa_rdp(ev, 1e-5)))
print("dp_accounting PLD (1e-4):", *timed(lambda: dpa_pld(ev, 1e-5)))
prv = PRVAccountant(prvs=[PoissonSubsampledGaussianMechanism(noise_multiplier=1.1, sampling_probability=0.01)],
                    max_self_compositions=[10_000], eps_error=0.01, delta_error=1e-10)
print("prv_accountant (lower, est, upper):", *timed(lambda: prv.compute_epsilon(delta=1e-5, num_self_compositions=[10_000])))
base = "epsilon --mechanism subsampled-gaussian --sampling-rate 0.01 --sigma 1.1 --steps 10000 --delta 1e-5"
for acc in ["rdp", "pld"]:
    print(f"ours {acc}:", *ours(f"{base} --accountant {acc}"))

print("\n## B. Gaussian sigma = 4, 100 steps, delta = 1e-5 (exact 13.2067122405)")
mp.dps = 40
ev = dp_event.SelfComposedDpEvent(dp_event.GaussianDpEvent(4.0), 100)
print("dp_accounting RDP:", *timed(lambda: dpa_rdp(ev, 1e-5)))
print("dp_accounting PLD (1e-4):", *timed(lambda: dpa_pld(ev, 1e-5)))
prv = PRVAccountant(prvs=[GaussianMechanism(noise_multiplier=4.0)], max_self_compositions=[100],
                    eps_error=0.01, delta_error=1e-10)
print("prv_accountant:", *timed(lambda: prv.compute_epsilon(delta=1e-5, num_self_compositions=[100])))
base = "epsilon --mechanism gaussian --sigma 4 --steps 100 --delta 1e-5"
for acc in ["rdp", "zcdp", "gdp", "pld"]:
    print(f"ours {acc}:", *ours(f"{base} --accountant {acc}"))

print("\n## C. Laplace b = 10 (eps0 = 0.1), 50 steps, delta = 1e-6")
ev = dp_event.SelfComposedDpEvent(dp_event.LaplaceDpEvent(10.0), 50)
print("dp_accounting RDP:", *timed(lambda: dpa_rdp(ev, 1e-6)))
print("dp_accounting PLD (1e-4):", *timed(lambda: dpa_pld(ev, 1e-6)))
print("dp_accounting advanced_composition (KOV):", *timed(lambda: pld_acc.advanced_composition(
    pld_common.DifferentialPrivacyParameters(0.1, 0.0), 50, 1e-6)))
prv = PRVAccountant(prvs=[LaplaceMechanism(mu=0.1)], max_self_compositions=[50], eps_error=0.01, delta_error=1e-10)
print("prv_accountant:", *timed(lambda: prv.compute_epsilon(delta=1e-6, num_self_compositions=[50])))
base = "epsilon --mechanism laplace --scale 10 --steps 50 --delta 1e-6"
for acc in ["basic", "advanced", "optimal", "rdp", "pld"]:
    print(f"ours {acc}:", *ours(f"{base} --accountant {acc}"))

print("\n## D. k-fold eps0-DP composition, delta = 1e-6")
for eps0, k in [(0.1, 1000), (1.0, 1000), (0.1, 5000), (0.01, 100000)]:
    print(f"eps0 = {eps0}, k = {k}")
    print("  dp_accounting advanced_composition (KOV):", *timed(lambda: pld_acc.advanced_composition(
        pld_common.DifferentialPrivacyParameters(eps0, 0.0), k, 1e-6)))
    base = f"epsilon --mechanism laplace --scale {1 / eps0} --steps {k} --delta 1e-6"
    for acc in ["advanced", "optimal"]:
        print(f"  ours {acc}:", *ours(f"{base} --accountant {acc}"))

print("\n## E. Subsampled-Gaussian RDP at small q (relative error vs mpmath, 60 digits)")
mp.dps = 60


def ref_rdp(q, s, a):
    q, s, a = mpf(q), mpf(s), mpf(a)
    if a == int(a):
        n = int(a)
        A = mpf(0)
        for k in range(n + 1):
            A += mpmath.binomial(n, k) * (1 - q) ** (n - k) * q ** k * mpmath.exp((k * k - k) / (2 * s * s))
    else:
        f = lambda z: mpmath.npdf(z, 0, s) * (1 - q + q * mpmath.exp((2 * z - 1) / (2 * s * s))) ** a
        A = mpmath.quad(f, [-mpmath.inf, -10 * s, 0, 1, 10 * s + 1, mpmath.inf])
    return mpmath.log(A) / (a - 1)


for q, s in [(1e-4, 0.8), (1e-6, 2.0), (1e-3, 5.0)]:
    for a in [2, 3, 2.5, 10.5, 32]:
        ref = ref_rdp(q, s, a)
        try:
            theirs = float(rdp_mod._compute_rdp_poisson_subsampled_gaussian(q, s, [a])[0])
        except Exception as e:
            theirs = f"{type(e).__name__}"
        o, err, _ = ours(f"rdp --mechanism subsampled-gaussian --sampling-rate {q} --sigma {s} --order {a}")
        o = o["rdp"] if o else err[:60]
        rel = lambda v: (f"{float((mpf(v) - ref) / ref):+.1e}" if isinstance(v, float) else v)
        print(f"q={q} sigma={s} alpha={a}: ref {mpmath.nstr(ref, 12)} | dp_accounting {theirs} ({rel(theirs)}) | ours {o} ({rel(o)})")
