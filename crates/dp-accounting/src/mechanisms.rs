//! Noise mechanisms: samplers and, separately, their privacy maps.
//!
//! A sampler (`Gaussian`, `Laplace`, `ReportNoisyMax`) draws noise from an explicit
//! `&mut impl Rng`; a privacy map (`gaussian_rdp`, `laplace_epsilon`, `rnm_epsilon`, ...)
//! is a pure function of the mechanism's parameters and needs no randomness, so the
//! accounting is tested without sampling and the sampling without accounting.
//!
//! # Floating-point sampling is an idealisation
//!
//! The samplers here draw f64 values (Ziggurat normal from `rand_distr`, inverse-CDF
//! Laplace and Gumbel). The privacy claims are about the *ideal* real-valued
//! distributions. Finite-precision samplers are known to leak through the pattern of
//! representable outputs (Mironov, "On significance of the least significant bits for
//! differential privacy", CCS 2012), so these samplers are **not** claimed to be secure
//! against an adversary who observes exact bit patterns. Exact discrete samplers are the
//! honest upgrade where that matters.
//!
//! # Neighbouring relation
//!
//! All maps are stated for a query with the given sensitivity: the supremum over
//! neighbouring datasets (whatever relation the caller's sensitivity was computed for,
//! e.g. replace-one or add/remove-one) of the norm of the change of the query.

use crate::error::{AccountingError, Result};
use crate::params::{finite_positive, NoiseMultiplier, Norm, Sensitivity};
use rand::Rng;
use rand_distr::{Distribution, StandardNormal};
use serde::{Deserialize, Serialize};

fn check_order(order: f64) -> Result<f64> {
    if order.is_finite() && order > 1.0 {
        Ok(order)
    } else {
        Err(AccountingError::InvalidParameter {
            name: "Renyi order (alpha)",
            value: order,
            expected: "must be finite and > 1",
        })
    }
}

/// A uniform draw in the open interval (0, 1) with 53 random bits.
fn open_unit<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    ((rng.random::<u64>() >> 11) as f64 + 0.5) * (1.0 / (1u64 << 53) as f64)
}

/// The Gaussian mechanism: adds N(0, std_dev^2) noise to each coordinate.
///
/// # Privacy
///
/// Precondition: the released query has L2 sensitivity `Delta` (see the module docs for
/// the neighbouring relation) and the noise has standard deviation `sigma = z * Delta`
/// with noise multiplier `z`. Claim: the release is `(alpha, alpha / (2 z^2))`-RDP for
/// every `alpha > 1` (Mironov 2017, Prop. 7 / Cor. 3), `1/(2 z^2)`-zCDP (Bun & Steinke
/// 2016, Prop. 1.6), `1/z`-GDP (Dong, Roth & Su 2022, Thm 2.7), and `(eps, delta)`-DP
/// exactly when `delta >= Phi(-eps z + 1/(2z)) - e^eps Phi(-eps z - 1/(2z))` (Balle &
/// Wang 2018, Thm 8); see [`crate::gdp`]. The sampler is an f64 idealisation (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "GaussianRepr")]
pub struct Gaussian {
    std_dev: f64,
}

impl Gaussian {
    /// A Gaussian sampler with the given standard deviation (finite, > 0).
    pub fn new(std_dev: f64) -> Result<Gaussian> {
        finite_positive("Gaussian standard deviation", std_dev).map(|std_dev| Gaussian { std_dev })
    }

    /// The same mechanism for the query multiplied by a public `factor > 0`: its
    /// sensitivity, and so the standard deviation at the same noise multiplier, scale by
    /// `factor` (the privacy claim is unchanged).
    pub fn scaled(self, factor: f64) -> Result<Gaussian> {
        Gaussian::new(self.std_dev * factor)
    }

    /// The same mechanism for the query divided by a public normaliser `by > 0` (a sum
    /// normalised by a public count): standard deviation `std_dev / by` (the privacy
    /// claim is unchanged).
    pub fn normalised(self, by: f64) -> Result<Gaussian> {
        Gaussian::new(self.std_dev / by)
    }

    /// Standard deviation of the noise.
    pub fn std_dev(&self) -> f64 {
        self.std_dev
    }

    /// One draw of N(0, std_dev^2).
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        let z: f64 = StandardNormal.sample(rng);
        z * self.std_dev
    }

    /// Overwrites `out` with i.i.d. draws of N(0, std_dev^2).
    pub fn fill<R: Rng + ?Sized>(&self, rng: &mut R, out: &mut [f64]) {
        for v in out.iter_mut() {
            *v = self.sample(rng);
        }
    }
}

/// The Laplace mechanism: adds Laplace(0, scale) noise (density `exp(-|x|/b) / (2b)`).
///
/// # Privacy
///
/// Precondition: the released query has L1 sensitivity `Delta`. Claim: the release is
/// `Delta / b`-DP (Dwork, McSherry, Nissim & Smith 2006; Dwork & Roth 2014, Thm 3.6),
/// see [`laplace_epsilon`], and `(alpha, laplace_rdp(alpha, b / Delta))`-RDP (Mironov 2017,
/// Prop. 6), see [`laplace_rdp`]. The sampler is an f64 idealisation (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "LaplaceRepr")]
pub struct Laplace {
    scale: f64,
}

impl Laplace {
    /// A Laplace sampler with scale `b` (finite, > 0).
    pub fn new(scale: f64) -> Result<Laplace> {
        finite_positive("Laplace scale", scale).map(|scale| Laplace { scale })
    }

    /// The scale `b`.
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// One draw of Laplace(0, b) by inversion of the CDF.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        let v = open_unit(rng) - 0.5;
        // |v| < 0.5 strictly, so the logarithm is finite.
        let mag = -(-2.0 * v.abs()).ln_1p() * self.scale;
        if v < 0.0 {
            -mag
        } else {
            mag
        }
    }

    /// Overwrites `out` with i.i.d. draws of Laplace(0, b).
    pub fn fill<R: Rng + ?Sized>(&self, rng: &mut R, out: &mut [f64]) {
        for v in out.iter_mut() {
            *v = self.sample(rng);
        }
    }
}

/// Laplace samplers of one pure `epsilon`-DP release over queries whose L1
/// sensitivities are `unit * c` for public `c >= 0` (one scale per query): scale
/// `(unit / epsilon) * c`. Built only by a release
/// ([`Release::laplace_family`](crate::release::Release::laplace_family)).
///
/// # Privacy
/// Each draw at `c` is the Laplace mechanism of scale `Delta / epsilon` for a query of
/// L1 sensitivity `Delta = unit * c` (Dwork & Roth 2014, Thm 3.6); `c = 0` (a query that
/// cannot change) draws zero noise. The scale is computed as `(unit / epsilon) * c`, the
/// order in which DP-GCD's paper calibration computes `Delta_j / eps'`, so its seeded
/// fits keep their bits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LaplaceFamily {
    per_unit: f64,
}

impl LaplaceFamily {
    pub(crate) fn new(unit: f64, epsilon: f64) -> Result<LaplaceFamily> {
        let per_unit = finite_positive("Laplace scale per unit of sensitivity", unit / epsilon)?;
        Ok(LaplaceFamily { per_unit })
    }

    /// `unit / epsilon`: the scale at `c = 1`.
    pub fn per_unit(&self) -> f64 {
        self.per_unit
    }

    /// One draw of Laplace(0, `(unit / epsilon) * c`) for the query of sensitivity
    /// `unit * c` (`c` finite and `>= 0`, not checked: a caller's public constant).
    pub fn sample<R: Rng + ?Sized>(&self, c: f64, rng: &mut R) -> f64 {
        Laplace {
            scale: self.per_unit * c,
        }
        .sample(rng)
    }
}

/// Noise distribution used by [`ReportNoisyMax`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum RnmNoise {
    /// Laplace(0, b) noise on each score (Dwork & Roth 2014, Claim 3.9).
    Laplace,
    /// Gumbel(0, b) noise on each score: the argmax is distributed exactly as the
    /// exponential mechanism with probabilities proportional to `exp(score / b)`
    /// (McSherry & Talwar 2007; the Gumbel-max trick).
    Gumbel,
}

/// Report-noisy-max: releases only `argmax_j (score_j + noise_j)`.
///
/// # Privacy
///
/// Precondition: each score changes by at most `Delta` (any norm's bound on the score
/// vector implies this per-score bound) between neighbouring datasets. If the scores are
/// *monotone* (on every pair of neighbours, all scores move in the same direction, as
/// counting queries do) fewer noise suffices.
///
/// Claims (pure DP), with `b` the noise scale — see [`rnm_epsilon`]:
/// * Laplace noise: `eps = Delta / b` for monotone scores (Dwork & Roth 2014, Claim 3.9),
///   `eps = 2 Delta / b` in general.
/// * Gumbel noise (= exponential mechanism with weights `exp(score/b)`): the same values
///   (McSherry & Talwar 2007, Thm 6; monotone case Dwork & Roth Thm 3.10 remark), and
///   moreover the mechanism is `eps`-bounded-range, hence `eps^2 / 8`-zCDP (Cesar &
///   Rogers 2021, Lemma 3.2 / Thm 3.3), see [`rnm_gumbel_rho`].
///
/// Only the index is released; releasing the noisy maximum value too costs more.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RnmRepr")]
pub struct ReportNoisyMax {
    noise: RnmNoise,
    scale: f64,
}

impl ReportNoisyMax {
    /// Report-noisy-max with the given noise distribution and scale `b` (finite, > 0).
    pub fn new(noise: RnmNoise, scale: f64) -> Result<Self> {
        finite_positive("report-noisy-max scale", scale)
            .map(|scale| ReportNoisyMax { noise, scale })
    }

    /// The noise distribution.
    pub fn noise(&self) -> RnmNoise {
        self.noise
    }

    /// The noise scale `b`.
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// One draw of the noise added to one score: Laplace(0, b) or Gumbel(0, b). For a
    /// caller that computes the argmax itself (e.g. over blocks of scores in parallel,
    /// each block with its own stream): the release is the index of the largest noisy
    /// score, exactly as [`ReportNoisyMax::select`] computes it, and nothing else.
    pub fn noise_draw<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        match self.noise {
            RnmNoise::Laplace => Laplace { scale: self.scale }.sample(rng),
            RnmNoise::Gumbel => -self.scale * (-open_unit(rng).ln()).ln(),
        }
    }

    /// `argmax_j (scores[j] + noise_j)` with fresh independent noise per score.
    ///
    /// Errors on an empty slice and on NaN or infinite scores (naming the index).
    pub fn select<R: Rng + ?Sized>(&self, rng: &mut R, scores: &[f64]) -> Result<usize> {
        if scores.is_empty() {
            return Err(AccountingError::InvalidCount {
                name: "number of report-noisy-max scores",
                value: 0,
                expected: "must be at least 1",
            });
        }
        if let Some((_, &bad)) = scores.iter().enumerate().find(|(_, s)| !s.is_finite()) {
            return Err(AccountingError::InvalidParameter {
                name: "report-noisy-max score",
                value: bad,
                expected: "every score must be finite",
            });
        }
        let mut best = 0usize;
        let mut best_val = f64::NEG_INFINITY;
        for (j, &s) in scores.iter().enumerate() {
            let v = s + self.noise_draw(rng);
            if v > best_val {
                best_val = v;
                best = j;
            }
        }
        Ok(best)
    }
}

// Deserialisation goes through the validating constructors (a deserialised sampler with
// zero or NaN noise would otherwise release data unprotected).
#[derive(Deserialize)]
struct GaussianRepr {
    std_dev: f64,
}
impl TryFrom<GaussianRepr> for Gaussian {
    type Error = AccountingError;
    fn try_from(r: GaussianRepr) -> Result<Gaussian> {
        Gaussian::new(r.std_dev)
    }
}
#[derive(Deserialize)]
struct LaplaceRepr {
    scale: f64,
}
impl TryFrom<LaplaceRepr> for Laplace {
    type Error = AccountingError;
    fn try_from(r: LaplaceRepr) -> Result<Laplace> {
        Laplace::new(r.scale)
    }
}
#[derive(Deserialize)]
struct RnmRepr {
    noise: RnmNoise,
    scale: f64,
}
impl TryFrom<RnmRepr> for ReportNoisyMax {
    type Error = AccountingError;
    fn try_from(r: RnmRepr) -> Result<ReportNoisyMax> {
        ReportNoisyMax::new(r.noise, r.scale)
    }
}

/// RDP of the Gaussian mechanism at `order` for noise multiplier `z`: `alpha / (2 z^2)`,
/// rounded up.
///
/// # Privacy
/// Mironov 2017, Prop. 7: for L2 sensitivity `Delta` and noise `z Delta`, the Renyi
/// divergence of order alpha between the output distributions is exactly this value.
/// Errors if `order` is not finite and > 1.
pub fn gaussian_rdp(order: f64, multiplier: NoiseMultiplier) -> Result<f64> {
    let order = check_order(order)?;
    let z = multiplier.get();
    Ok(crate::num::round_up(order / (2.0 * z * z)))
}

/// zCDP parameter of the Gaussian mechanism with noise multiplier `z`: `rho = 1/(2 z^2)`
/// (Bun & Steinke 2016, Prop. 1.6).
pub fn gaussian_rho(multiplier: NoiseMultiplier) -> f64 {
    let z = multiplier.get();
    1.0 / (2.0 * z * z)
}

/// Pure epsilon of the Laplace mechanism: `Delta / b`.
///
/// # Privacy
/// Dwork & Roth 2014, Thm 3.6. The sensitivity must be an L1 sensitivity (an L2 or
/// L-infinity bound does not bound the L1 change of a vector query and is refused).
pub fn laplace_epsilon(sensitivity: Sensitivity, scale: f64) -> Result<f64> {
    if sensitivity.norm() != Norm::L1 {
        return Err(AccountingError::InvalidParameter {
            name: "sensitivity",
            value: sensitivity.get(),
            expected: "the Laplace mechanism needs an L1 sensitivity (construct it with Norm::L1)",
        });
    }
    let b = finite_positive("Laplace scale", scale)?;
    Ok(crate::num::round_up(sensitivity.get() / b))
}

/// RDP of the Laplace mechanism at `order` for `b / Delta = ratio` (scale over L1
/// sensitivity), Mironov 2017, Prop. 6:
///
/// `eps(alpha) = 1/(alpha-1) log( alpha/(2alpha-1) e^{(alpha-1)/ratio} + (alpha-1)/(2alpha-1) e^{-alpha/ratio} )`,
///
/// evaluated in log space (no overflow for large orders) and rounded up. Errors if `order` is not
/// finite and > 1, or `ratio` not finite and > 0. The result never exceeds the pure
/// epsilon `1/ratio`.
pub fn laplace_rdp(order: f64, ratio: f64) -> Result<f64> {
    let a = check_order(order)?;
    let r = finite_positive("Laplace scale / sensitivity", ratio)?;
    let u = a - 1.0;
    let v = if u < 0.5 {
        // near alpha = 1 the log is a small difference: write it as
        // log1p(((1+u) expm1(u/r) + u expm1(-(1+u)/r)) / (1+2u)) to keep relative precision
        let num = (1.0 + u) * (u / r).exp_m1() + u * (-(1.0 + u) / r).exp_m1();
        (num / (1.0 + 2.0 * u)).ln_1p() / u
    } else {
        let l1 = (a / (2.0 * a - 1.0)).ln() + u / r;
        let l2 = (u / (2.0 * a - 1.0)).ln() - a / r;
        crate::num::log_add_exp(l1, l2) / u
    };
    Ok(crate::num::round_up(v.min(1.0 / r)))
}

/// RDP at `order` implied by pure `eps`-DP: the Renyi divergence of eps-randomised
/// response, `(1/(alpha-1)) ln((e^{alpha eps} + e^{(1-alpha) eps}) / (1 + e^eps))`, rounded up.
///
/// # Privacy
/// Every eps-DP pair of output distributions is a post-processing of the
/// eps-randomised-response pair (Kairouz, Oh & Viswanath 2015, Thm 2.3 with delta = 0), and
/// Renyi divergences obey data processing (van Erven & Harremoes 2014, Thm 9), so every
/// eps-DP mechanism is `(alpha, pure_dp_rdp(alpha, eps))`-RDP. The value never exceeds
/// `eps` nor `alpha eps^2 / 2` (Bun & Steinke 2016, Prop. 3.3); the minimum of the three is
/// returned.
///
/// Evaluated as `log1p(expm1(b) expm1(eps + b) e^-b / (1 + e^eps)) / (alpha - 1)` with
/// `b = (alpha - 1) eps` (in log space when large): no cancellation at small eps.
pub fn pure_dp_rdp(order: f64, eps: f64) -> Result<f64> {
    let a = check_order(order)?;
    let e = finite_positive("epsilon", eps)?;
    Ok(crate::num::round_up(pure_dp_rdp_unchecked(a, e)))
}

pub(crate) fn pure_dp_rdp_unchecked(a: f64, e: f64) -> f64 {
    let b = (a - 1.0) * e;
    let log_1pe = crate::num::log_add_exp(0.0, e); // ln(1 + e^eps)
    let ln_num = crate::num::log_expm1(b) + crate::num::log_expm1(e + b) - b - log_1pe;
    let rr = crate::num::log_add_exp(0.0, ln_num) / (a - 1.0);
    rr.min(e).min(a * e * e / 2.0)
}

/// Pure epsilon of report-noisy-max (Laplace or Gumbel noise) with scale `b` for scores
/// of per-score sensitivity `Delta`: `Delta / b` if `monotone`, else `2 Delta / b`.
/// See [`ReportNoisyMax`] for the precondition and citations.
pub fn rnm_epsilon(sensitivity: Sensitivity, scale: f64, monotone: bool) -> Result<f64> {
    let b = finite_positive("report-noisy-max scale", scale)?;
    let factor = if monotone { 1.0 } else { 2.0 };
    Ok(crate::num::round_up(factor * sensitivity.get() / b))
}

/// zCDP parameter of report-noisy-max with **Gumbel** noise (the exponential
/// mechanism): it is `eps`-bounded-range with `eps = rnm_epsilon(..)`, hence
/// `eps^2 / 8`-zCDP (Cesar & Rogers 2021, Thm 3.3). Laplace-noise RNM has no such
/// bound; use `pure_dp_rho` for it.
pub fn rnm_gumbel_rho(sensitivity: Sensitivity, scale: f64, monotone: bool) -> Result<f64> {
    let eps = rnm_epsilon(sensitivity, scale, monotone)?;
    Ok(crate::num::round_up(eps * eps / 8.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::release::Release;
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    #[test]
    fn a_releases_laplace_family_draws_what_a_scaled_unit_laplace_draws_bit_for_bit() {
        // DP-GCD's paper mode drew `(unit / eps) * c * Lap(1)`; the release's family
        // must give the same bits (its seeded fits are pinned) and refuse other kinds.
        let eps = 0.37;
        let release = Release::PureDp {
            epsilon: eps,
            count: 5,
            label: "selection".into(),
        };
        let unit = 2.0 * (1.0 / 123.0);
        let family = release.laplace_family(unit).unwrap();
        assert_eq!(family.per_unit().to_bits(), (unit / eps).to_bits());
        let one = Laplace::new(1.0).unwrap();
        let (mut a, mut b) = (ChaCha20Rng::seed_from_u64(7), ChaCha20Rng::seed_from_u64(7));
        for c in [0.0, 1e-300, 0.3, 1.0, 17.5] {
            for _ in 0..50 {
                let old = unit / eps * c * one.sample(&mut a);
                let new = family.sample(c, &mut b);
                assert_eq!(old.to_bits(), new.to_bits(), "c = {c}");
            }
        }
        let gaussian = Release::Gaussian {
            noise_multiplier: 1.0,
            count: 1,
        };
        assert!(gaussian.laplace_family(unit).is_err());
        assert!(release.laplace_family(f64::INFINITY).is_err());
        assert!(release.laplace_family(0.0).is_err());
    }

    #[test]
    fn a_repeated_release_changes_only_its_count() {
        let r = Release::ExponentialMechanism {
            epsilon: 0.2,
            count: 1,
        };
        assert_eq!(
            r.repeated(40).unwrap(),
            Release::ExponentialMechanism {
                epsilon: 0.2,
                count: 40
            }
        );
        assert!(r.repeated(0).is_err());
        // Its sampler is the one-round release's.
        assert_eq!(
            r.repeated(40).unwrap().report_noisy_max(0.5).unwrap(),
            r.report_noisy_max(0.5).unwrap()
        );
    }

    fn l1(v: f64) -> Sensitivity {
        Sensitivity::new(v, Norm::L1).unwrap()
    }

    #[test]
    fn bad_parameters_are_refused_by_name() {
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let e = Gaussian::new(bad).unwrap_err();
            assert!(e.to_string().contains("Gaussian standard deviation"), "{e}");
            let e = Laplace::new(bad).unwrap_err();
            assert!(e.to_string().contains("Laplace scale"), "{e}");
            let e = ReportNoisyMax::new(RnmNoise::Gumbel, bad).unwrap_err();
            assert!(e.to_string().contains("report-noisy-max scale"), "{e}");
        }
        let z = NoiseMultiplier::new(1.0).unwrap();
        for bad in [1.0, 0.5, f64::NAN, f64::INFINITY] {
            let e = gaussian_rdp(bad, z).unwrap_err();
            assert!(
                matches!(e, AccountingError::InvalidParameter { name: "Renyi order (alpha)", value, .. }
                    if value.to_bits() == bad.to_bits()),
                "{e}"
            );
        }
        let l2 = Sensitivity::new(2.0, Norm::L2).unwrap();
        assert!(laplace_epsilon(l2, 1.0).is_err());
    }

    #[test]
    fn deserialisation_validates() {
        let g: Gaussian = serde_json::from_str(r#"{"std_dev":2.0}"#).unwrap();
        assert_eq!(g.std_dev(), 2.0);
        assert!(serde_json::from_str::<Gaussian>(r#"{"std_dev":0.0}"#).is_err());
        assert!(serde_json::from_str::<Laplace>(r#"{"scale":-1.0}"#).is_err());
        let m = ReportNoisyMax::new(RnmNoise::Gumbel, 0.5).unwrap();
        let back: ReportNoisyMax =
            serde_json::from_str(&serde_json::to_string(&m).unwrap()).unwrap();
        assert_eq!(back, m);
        assert!(
            serde_json::from_str::<ReportNoisyMax>(r#"{"noise":"Laplace","scale":0.0}"#).is_err()
        );
    }

    #[test]
    fn rnm_rejects_empty_and_nan_scores() {
        let m = ReportNoisyMax::new(RnmNoise::Laplace, 1.0).unwrap();
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        assert_eq!(
            m.select(&mut rng, &[]).unwrap_err(),
            AccountingError::InvalidCount {
                name: "number of report-noisy-max scores",
                value: 0,
                expected: "must be at least 1"
            }
        );
        let e = m.select(&mut rng, &[1.0, f64::NAN]).unwrap_err();
        assert!(e.to_string().contains("report-noisy-max score"), "{e}");
    }

    #[test]
    fn rnm_picks_a_dominant_score_and_is_seeded() {
        let m = ReportNoisyMax::new(RnmNoise::Gumbel, 0.01).unwrap();
        let mut rng = ChaCha20Rng::seed_from_u64(7);
        for _ in 0..100 {
            assert_eq!(m.select(&mut rng, &[0.0, 5.0, 1.0]).unwrap(), 1);
        }
        let big = ReportNoisyMax::new(RnmNoise::Laplace, 10.0).unwrap();
        let a: Vec<usize> = {
            let mut r = ChaCha20Rng::seed_from_u64(3);
            (0..20)
                .map(|_| big.select(&mut r, &[0.0, 0.1, 0.2]).unwrap())
                .collect()
        };
        let b: Vec<usize> = {
            let mut r = ChaCha20Rng::seed_from_u64(3);
            (0..20)
                .map(|_| big.select(&mut r, &[0.0, 0.1, 0.2]).unwrap())
                .collect()
        };
        assert_eq!(a, b);
        // with large noise, not always the same index
        assert!(a.iter().any(|&i| i != a[0]));
    }

    #[test]
    fn gumbel_rnm_matches_exponential_mechanism_probabilities() {
        // P(select j) = exp(s_j/b) / sum_k exp(s_k/b). With s = (0, ln 2, ln 3) and b = 1
        // this is (1/6, 2/6, 3/6). 60_000 draws: each frequency has sd <= 0.0021, so a
        // 0.012 tolerance is a > 5.5 sigma band (false alarm < 1e-7 per cell).
        let m = ReportNoisyMax::new(RnmNoise::Gumbel, 1.0).unwrap();
        let mut rng = ChaCha20Rng::seed_from_u64(11);
        let scores = [0.0, 2f64.ln(), 3f64.ln()];
        let mut counts = [0usize; 3];
        let n = 60_000;
        for _ in 0..n {
            counts[m.select(&mut rng, &scores).unwrap()] += 1;
        }
        for (j, want) in [1.0 / 6.0, 2.0 / 6.0, 3.0 / 6.0].iter().enumerate() {
            let got = counts[j] as f64 / n as f64;
            assert!((got - want).abs() < 0.012, "j={j} got={got} want={want}");
        }
    }

    #[test]
    fn samplers_have_the_right_moments_and_reproduce() {
        let g = Gaussian::new(2.0).unwrap();
        let l = Laplace::new(3.0).unwrap();
        let mut rng = ChaCha20Rng::seed_from_u64(42);
        let n = 40_000;
        let mut buf = vec![0.0; n];
        g.fill(&mut rng, &mut buf);
        let var = buf.iter().map(|x| x * x).sum::<f64>() / n as f64;
        // var of the sample variance of N(0,4): 2*16/n -> sd 0.028; tolerance 0.2 is 7 sd
        assert!((var - 4.0).abs() < 0.2, "{var}");
        l.fill(&mut rng, &mut buf);
        let mean_abs = buf.iter().map(|x| x.abs()).sum::<f64>() / n as f64;
        // E|X| = b = 3, sd of |X| is 3, sd of mean 0.015; tolerance 0.1 is > 6 sd
        assert!((mean_abs - 3.0).abs() < 0.1, "{mean_abs}");
        let mut r1 = ChaCha20Rng::seed_from_u64(5);
        let mut r2 = ChaCha20Rng::seed_from_u64(5);
        assert_eq!(g.sample(&mut r1).to_bits(), g.sample(&mut r2).to_bits());
        assert_eq!(l.sample(&mut r1).to_bits(), l.sample(&mut r2).to_bits());
    }

    #[test]
    fn privacy_maps_closed_forms() {
        let z = NoiseMultiplier::new(2.0).unwrap();
        let r = gaussian_rdp(3.0, z).unwrap();
        assert!((3.0 / 8.0..3.0 / 8.0 * (1.0 + 1e-12)).contains(&r));
        assert_eq!(gaussian_rho(z), 1.0 / 8.0);
        let e = laplace_epsilon(l1(2.0), 4.0).unwrap();
        assert!((0.5..0.5 * (1.0 + 1e-12)).contains(&e));
        let inf = Sensitivity::new(1.0, Norm::LInf).unwrap();
        let mono = rnm_epsilon(inf, 2.0, true).unwrap();
        let gen = rnm_epsilon(inf, 2.0, false).unwrap();
        assert!((0.5..0.5 * (1.0 + 1e-12)).contains(&mono));
        assert!((1.0..1.0 + 1e-12).contains(&gen));
        let rho = rnm_gumbel_rho(inf, 2.0, false).unwrap();
        assert!((0.125..0.125 * (1.0 + 1e-12)).contains(&rho));
    }

    #[test]
    #[allow(clippy::excessive_precision)]
    fn pure_dp_rdp_matches_randomised_response() {
        // mpmath 50 digits: log((exp(a e) + exp((1-a) e)) / (1 + exp(e))) / (a - 1)
        let cases = [
            (2.0, 1.0, 0.735_325_664_055_519_224_7),
            (1.01, 1e-4, 5.049_999_995_706_658_3e-9),
            (10.0, 0.01, 0.000_499_247_643_416_776_66),
            (1000.0, 3.0, 2.999_951_364_012_438_7),
            (1.5, 20.0, 19.999_999_995_877_692_77),
            (64.0, 1e-6, 3.199_999_997_849_333_3e-11),
        ];
        for (a, e, want) in cases {
            let got = pure_dp_rdp(a, e).unwrap();
            assert!(
                got >= want && (got - want) / want < 1e-12,
                "{a} {e}: {got} {want}"
            );
            assert!(got <= e * (1.0 + 1e-12) && got <= a * e * e / 2.0 * (1.0 + 1e-12));
        }
        assert!(pure_dp_rdp(1.0, 1.0).is_err());
        assert!(pure_dp_rdp(2.0, 0.0).is_err());
    }

    #[test]
    fn laplace_rdp_matches_reference_and_limits() {
        // mpmath, 50 digits: (1/(a-1)) * log(a/(2a-1)*exp((a-1)/r) + (a-1)/(2a-1)*exp(-a/r))
        //   a=2, r=1   -> 0.61395918497726891 ... (see tests/golden.rs for more)
        let got = laplace_rdp(2.0, 1.0).unwrap();
        let want = ((2.0 / 3.0) * 1f64.exp() + (1.0 / 3.0) * (-2f64).exp()).ln();
        assert!(got >= want && (got - want).abs() < 1e-13);
        // large order tends to the pure epsilon 1/r from below, never above
        let big = laplace_rdp(1e6, 0.5).unwrap();
        assert!(big <= 2.0 && big > 1.99, "{big}");
        assert!(laplace_rdp(0.5, 1.0).is_err());
        assert!(laplace_rdp(2.0, 0.0).is_err());
    }
}
