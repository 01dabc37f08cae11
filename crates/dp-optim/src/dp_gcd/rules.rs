//! Greedy selection rules (Gauss-Southwell family), as deterministic score functions.
//!
//! Every rule scores coordinate `j` from a gradient value `h` (the clipped gradient of
//! the smooth part, possibly noisy), the current `w_j`, the coordinate smoothness `M_j`
//! and the separable penalty `psi_j`; the selected coordinate is the argmax. With
//! `M`-rescaling, each score is a **`1/sqrt(M_j)`-Lipschitz function of `h`**, so a
//! change of `Delta_j = 2 C_j / n` in `h` moves the score by at most
//! `Delta_j / sqrt(M_j)`, which is the same `2 C / (n sqrt(tr M))` for every `j` under the
//! clipping rule `C_j = C sqrt(M_j / tr M)`. This is the sensitivity the private
//! selections are calibrated to (see `docs/privacy/dp-gcd.md`).
//!
//! * GS-L (Algorithm 1, smooth problems): `|h| / sqrt(M_j)` (the penalty is ignored).
//! * GS-s: `dist(-h, d psi_j(w_j)) / sqrt(M_j)` (Appendix C; distance to the
//!   subdifferential, 1-Lipschitz in `h`).
//! * GS-r: `sqrt(M_j) |prox_{psi_j / M_j}(w_j - h / M_j) - w_j|` (the prox is
//!   non-expansive).
//! * GS-q: `sqrt(2 d_j(h))` with `d_j(h) = -min_a [h a + (M_j/2) a^2 + psi_j(w_j + a) -
//!   psi_j(w_j)] >= 0` the decrease of the coordinate model. The paper prints
//!   `argmax_j min_a [...]` (no noise, wrong sign: the DP-GCD paper, Appendix C); the intended rule is
//!   the largest decrease. We score `sqrt(2 d_j)` rather than `d_j`: the argmax is the
//!   same, and `sqrt(2 d_j)` is `1/sqrt(M_j)`-Lipschitz in `h` (proof in
//!   `docs/privacy/dp-gcd.md`: `d_j'(h) = -a*(h)` and `d_j >= M_j a*^2 / 2`), while `d_j`
//!   itself has no bounded sensitivity. With `psi = 0` all four rules coincide.
//!   The score is computed by [`Penalty::quadratic_decrease_root`], a cancellation-free
//!   closed form per penalty (none, L1, L2, elastic net, box), so that it stays
//!   Lipschitz **in floating point** up to a relative error of a few ulps of the score;
//!   the naive evaluation of `d` is not (privacy audit, `docs/privacy/audit.md`).
//!   Penalties without the closed form fall back to the naive evaluation, which only the
//!   non-private twin accepts.

use dp_models::Penalty;
use serde::{Deserialize, Serialize};

/// The greedy selection rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SelectionRule {
    /// Gauss-Southwell-Lipschitz `|h_j| / sqrt(M_j)` (Algorithm 1; for smooth problems).
    GsL,
    /// GS-s: distance from `-h_j` to the subdifferential, rescaled.
    GsS,
    /// GS-r: length of the proximal step, rescaled.
    GsR,
    /// GS-q: decrease of the coordinate-wise quadratic model (as `sqrt(2 d)`).
    GsQ,
}

impl SelectionRule {
    /// Short name used in reports: "gs-l", "gs-s", "gs-r", "gs-q".
    pub fn name(self) -> &'static str {
        match self {
            SelectionRule::GsL => "gs-l",
            SelectionRule::GsS => "gs-s",
            SelectionRule::GsR => "gs-r",
            SelectionRule::GsQ => "gs-q",
        }
    }
}

/// The score of coordinate `j` under `rule`, for gradient value `h`, current `wj`,
/// smoothness `mj > 0` (and `sqrt_mj = sqrt(mj)`).
#[inline]
pub fn score<P: Penalty + ?Sized>(
    rule: SelectionRule,
    penalty: &P,
    j: usize,
    h: f64,
    wj: f64,
    mj: f64,
    sqrt_mj: f64,
) -> f64 {
    match rule {
        SelectionRule::GsL => h.abs() / sqrt_mj,
        SelectionRule::GsS => penalty.subdiff_distance(j, wj, h) / sqrt_mj,
        SelectionRule::GsR => {
            let v = penalty.prox_1d(j, wj - h / mj, 1.0 / mj);
            sqrt_mj * (v - wj).abs()
        }
        SelectionRule::GsQ => penalty
            .quadratic_decrease_root(j, h, wj, mj, sqrt_mj)
            .unwrap_or_else(|| gs_q_naive(penalty, j, h, wj, mj)),
    }
}

/// GS-q by the naive evaluation `sqrt(2 max(d, 0))`, `d = -(h a + M a^2/2 + psi(w + a) -
/// psi(w))` at the prox step `a`: correct in exact arithmetic, but **not** Lipschitz in
/// floating point (near `d = 0` the rounding of `psi(w + a) - psi(w)`, about
/// `ulp(psi(w))`, becomes `sqrt(2 ulp)` in the score). Only used for penalties without
/// [`Penalty::quadratic_decrease_root`]; the private solver refuses GS-q for them.
fn gs_q_naive<P: Penalty + ?Sized>(penalty: &P, j: usize, h: f64, wj: f64, mj: f64) -> f64 {
    let a = penalty.prox_1d(j, wj - h / mj, 1.0 / mj) - wj;
    let d = -(h * a + 0.5 * mj * a * a + penalty.value_1d(j, wj + a) - penalty.value_1d(j, wj));
    (2.0 * d.max(0.0)).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;
    use dp_models::{NoPenalty, L1};

    fn soft(v: f64, k: f64) -> f64 {
        v.signum() * (v.abs() - k).max(0.0)
    }

    const RULES: [SelectionRule; 4] = [
        SelectionRule::GsL,
        SelectionRule::GsS,
        SelectionRule::GsR,
        SelectionRule::GsQ,
    ];

    #[test]
    fn all_rules_agree_without_penalty() {
        for &(h, w, m) in &[(0.3, 0.0, 2.0), (-1.7, 0.4, 0.5), (0.0, 1.0, 3.0)] {
            let want = f64::abs(h) / f64::sqrt(m);
            for rule in RULES {
                let s = score(rule, &NoPenalty, 0, h, w, m, m.sqrt());
                assert!(
                    (s - want).abs() <= 1e-12 * (1.0 + want),
                    "{rule:?}: {s} vs {want}"
                );
            }
        }
    }

    /// At `w_j = 0` with `|h| <= lambda` every proximal rule scores 0, and GS-r is the
    /// (scaled) length of the proximal step; closed forms for L1 (DP-GCD paper, Appendix C).
    #[test]
    fn l1_closed_forms() {
        let lam = 0.5;
        let pen = L1::new(lam).unwrap();
        let m: f64 = 2.0;
        let sm = m.sqrt();
        // At w = 0 with |h| <= lambda every proximal rule scores 0.
        for h in [-0.5, -0.2, 0.0, 0.49] {
            for rule in [SelectionRule::GsS, SelectionRule::GsR, SelectionRule::GsQ] {
                assert_eq!(score(rule, &pen, 0, h, 0.0, m, sm), 0.0, "{rule:?} h={h}");
            }
        }
        for &(h, w) in &[
            (1.3, 0.0),
            (-2.0, 0.0),
            (0.2, 0.7),
            (-0.9, -0.3),
            (3.0, 0.1),
        ] {
            // GS-s.
            let gs_s = if w != 0.0 {
                (h + lam * f64::signum(w)).abs() / sm
            } else {
                (f64::abs(h) - lam).max(0.0) / sm
            };
            assert!((score(SelectionRule::GsS, &pen, 0, h, w, m, sm) - gs_s).abs() < 1e-12);
            // GS-r equals sqrt(M) |step| of the proximal update with step 1/M.
            let a = soft(w - h / m, lam / m) - w;
            assert!((score(SelectionRule::GsR, &pen, 0, h, w, m, sm) - sm * a.abs()).abs() < 1e-12);
            // GS-q: decrease of the model at the prox point, brute-forced over a grid.
            let model = |t: f64| h * t + 0.5 * m * t * t + lam * (w + t).abs() - lam * w.abs();
            let mut best = 0.0f64;
            for k in -200_000..=200_000 {
                best = best.min(model(k as f64 * 1e-5));
            }
            let q = score(SelectionRule::GsQ, &pen, 0, h, w, m, sm);
            assert!(
                (0.5 * q * q - (-best)).abs() < 1e-6,
                "h={h} w={w}: {q} {best}"
            );
        }
    }

    /// The sensitivity claim: every score is (1/sqrt(M))-Lipschitz in h.
    #[test]
    fn scores_are_lipschitz_in_the_gradient() {
        let pen = L1::new(0.3).unwrap();
        let m: f64 = 0.7;
        let sm = m.sqrt();
        for rule in RULES {
            for &w in &[0.0, 0.2, -1.0] {
                let mut h = -3.0;
                while h < 3.0 {
                    let dh = 1e-3;
                    let s0 = score(rule, &pen, 0, h, w, m, sm);
                    let s1 = score(rule, &pen, 0, h + dh, w, m, sm);
                    assert!(
                        (s1 - s0).abs() <= dh / sm * (1.0 + 1e-9) + 1e-12,
                        "{rule:?} w={w} h={h}: {s0} -> {s1}"
                    );
                    h += 0.0137;
                }
            }
        }
    }
}
