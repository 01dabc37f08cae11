//! Accurate log binomial probabilities (Loader 2000, "Fast and accurate computation of
//! binomial probabilities", the algorithm of R's `dbinom`).
//!
//! `ln P[Bin(n, p) = k]` is computed from Stirling-formula remainders and the
//! deviance `bd0`, so its absolute error is a few ulp of O(1) quantities even when
//! `ln C(n, k)` and `k ln p` are each in the thousands: no cancellation of large logs.

/// `ln(n!) - ln(sqrt(2 pi n) (n/e)^n)` for integer `n >= 1`.
#[allow(clippy::excessive_precision)]
fn stirlerr(n: f64) -> f64 {
    // mpmath, 40 digits: loggamma(n+1) - (n+1/2) log n + n - log(2 pi)/2
    const TABLE: [f64; 16] = [
        0.0,
        0.081_061_466_795_327_258_22,
        0.041_340_695_955_409_294_09,
        0.027_677_925_684_998_339_15,
        0.020_790_672_103_765_093_11,
        0.016_644_691_189_821_192_16,
        0.013_876_128_823_070_747_999,
        0.011_896_709_945_891_770_095,
        0.010_411_265_261_972_096_497,
        0.009_255_462_182_712_732_918,
        0.008_330_563_433_362_871_256,
        0.007_573_675_487_951_840_795,
        0.006_942_840_107_209_529_866,
        0.006_408_994_188_004_207_068,
        0.005_951_370_112_758_847_736,
        0.005_554_733_551_962_801_371,
    ];
    const S0: f64 = 1.0 / 12.0;
    const S1: f64 = 1.0 / 360.0;
    const S2: f64 = 1.0 / 1260.0;
    const S3: f64 = 1.0 / 1680.0;
    const S4: f64 = 1.0 / 1188.0;
    if n <= 15.0 {
        return TABLE[n as usize];
    }
    let nn = n * n;
    if n > 500.0 {
        return (S0 - S1 / nn) / n;
    }
    if n > 80.0 {
        return (S0 - (S1 - S2 / nn) / nn) / n;
    }
    if n > 35.0 {
        return (S0 - (S1 - (S2 - S3 / nn) / nn) / nn) / n;
    }
    (S0 - (S1 - (S2 - (S3 - S4 / nn) / nn) / nn) / nn) / n
}

/// The deviance term `x ln(x / np) + np - x`, accurate when `x` is close to `np`.
fn bd0(x: f64, np: f64) -> f64 {
    if (x - np).abs() < 0.1 * (x + np) {
        let mut v = (x - np) / (x + np);
        let mut s = (x - np) * v;
        let mut ej = 2.0 * x * v;
        v *= v;
        for j in 1..1000 {
            ej *= v;
            let s1 = s + ej / (2 * j + 1) as f64;
            if s1 == s {
                return s1;
            }
            s = s1;
        }
        return s;
    }
    x * (x / np).ln() + np - x
}

/// `ln P[Bin(n, p) = k]` for integers `0 <= k <= n` (as f64), `0 < p < 1`, with
/// `q = 1 - p` passed separately so that either can be tiny without rounding.
pub(crate) fn log_binom_pmf(k: f64, n: f64, p: f64, q: f64) -> f64 {
    if k == 0.0 {
        return n * q.ln();
    }
    if k == n {
        return n * p.ln();
    }
    let lc = stirlerr(n) - stirlerr(k) - stirlerr(n - k) - bd0(k, n * p) - bd0(n - k, n * q);
    // ln(2 pi k (n-k)/n)
    let lf = (2.0 * std::f64::consts::PI).ln() + k.ln() + (-k / n).ln_1p();
    lc - 0.5 * lf
}

#[cfg(test)]
#[allow(clippy::excessive_precision)]
mod tests {
    use super::*;

    #[test]
    fn matches_mpmath() {
        // mpmath 50 digits: log(binomial(n,k) * p**k * (1-p)**(n-k))
        let cases = [
            (3.0, 10.0, 0.3, -1.321_151_277_766_888_6),
            (2500.0, 5000.0, 0.5, -4.484_437_948_352_512_8),
            (17.0, 10000.0, 0.001, -4.362_729_185_573_963_4),
            (0.0, 20.0, 0.1, -2.107_210_313_156_526),
            (20.0, 20.0, 0.1, -46.051_701_859_880_914),
            (900.0, 1000.0, 0.2, -1_148.895_188_888_846_7),
        ];
        for (k, n, p, want) in cases {
            let got = log_binom_pmf(k, n, p, 1.0 - p);
            assert!(
                (got - want).abs() < 1e-13 * want.abs().max(1.0),
                "{k} {n} {p}: {got} {want}"
            );
        }
    }
}
