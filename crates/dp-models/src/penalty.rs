//! Separable penalties `psi(w) = sum_j psi_j(w_j)` with their one-dimensional prox.
//!
//! `prox_{g psi_j}(v) = argmin_u { (u - v)^2 / 2 + g psi_j(u) }`.
//! Every penalty also gives `dist(-g_j, d psi_j(w_j))`, the distance from minus a
//! gradient coordinate to the subdifferential: the per-coordinate optimality violation
//! used by certificates and greedy selection rules.

use crate::error::{non_negative, ModelError, Result};

/// A separable penalty.
pub trait Penalty: Send + Sync + std::fmt::Debug {
    /// Short name used in reports ("l1", "l2", ...).
    fn name(&self) -> &'static str;
    /// `psi_j(w_j)`; `f64::INFINITY` outside the domain (box constraints).
    fn value_1d(&self, j: usize, wj: f64) -> f64;
    /// `prox_{step psi_j}(v)`.
    fn prox_1d(&self, j: usize, v: f64, step: f64) -> f64;
    /// `dist(-grad_j, d psi_j(w_j))`: zero exactly at a coordinate-wise optimum.
    fn subdiff_distance(&self, j: usize, wj: f64, grad_j: f64) -> f64;
    /// `psi(w) = sum_j psi_j(w_j)`.
    fn value(&self, w: &[f64]) -> f64 {
        w.iter()
            .enumerate()
            .map(|(j, &x)| self.value_1d(j, x))
            .sum()
    }
    /// The convex conjugate `psi_j*(v) = sup_w { v w - psi_j(w) }` for duality gaps, or
    /// `None` when the penalty does not provide it. Only called with `|v| <=`
    /// [`Penalty::dual_radius`]`(j)`, where it is finite.
    fn conjugate_1d(&self, j: usize, v: f64) -> Option<f64> {
        let _ = (j, v);
        None
    }
    /// `r_j` such that `psi_j*` is finite exactly on `[-r_j, r_j]` (`f64::INFINITY` when
    /// finite everywhere), or `None` when no conjugate is provided. A duality-gap
    /// certificate needs `r_j > 0` for every `j`, so that a dual candidate can be rescaled
    /// into the domain.
    fn dual_radius(&self, j: usize) -> Option<f64> {
        let _ = j;
        None
    }
    /// Checks the penalty fits a problem with `p` features (per-coordinate weights or
    /// bounds have length `p`).
    fn check_dimension(&self, p: usize) -> Result<()> {
        let _ = p;
        Ok(())
    }
    /// `sqrt(2 d)` where `d = -min_a { g a + (m/2) a^2 + psi_j(w_j + a) - psi_j(w_j) }`
    /// is the decrease of the coordinate-wise quadratic model (`m > 0`,
    /// `sqrt_m = sqrt(m)`), computed by a **cancellation-free closed form**, or `None`
    /// when the penalty provides none.
    ///
    /// # Contract (used by the private GS-q selection rule)
    ///
    /// In exact arithmetic the value is `1/sqrt(m)`-Lipschitz in `g`. In floating point
    /// the returned value must equal the exact value for inputs that differ from
    /// `(g, w_j, m)` only by a **`g`-independent** perturbation of the constants, times
    /// `(1 + eta)` with `|eta|` a few units in the last place: no subtraction of nearly
    /// equal `g`-dependent quantities. Then two gradients `g, g'` give values within
    /// `|g - g'| / sqrt(m) + |eta| (s + s')`. The naive evaluation of `d` does not have
    /// this property (its absolute error is `ulp(psi_j(w_j))`, which `sqrt` turns into
    /// `sqrt(ulp)`); see `docs/privacy/dp-gcd.md`.
    fn quadratic_decrease_root(
        &self,
        j: usize,
        g: f64,
        wj: f64,
        m: f64,
        sqrt_m: f64,
    ) -> Option<f64> {
        let _ = (j, g, wj, m, sqrt_m);
        None
    }
}

/// [`Penalty::quadratic_decrease_root`] for `psi(w) = lambda |w|` (`lambda >= 0`,
/// `m > 0`): `sqrt(2 d)` with `d = -min_a { g a + (m/2) a^2 + lambda (|w + a| - |w|) }`,
/// without cancellation.
///
/// By symmetry take `w > 0` (else flip the signs of `g` and `w`); `w = 0` gives
/// `max(|g| - lambda, 0) / sqrt(m)`. With the minimiser `a* = soft(w - g/m, lambda/m) - w`:
///
/// * `g + lambda < m w` (`w + a* > 0`, no kink crossed): `|g + lambda| / sqrt(m)`;
/// * `g - lambda > m w` (`w + a* < 0`, sign change): `sqrt((g - lambda)^2 + 4 lambda w m) / sqrt(m)`
///   (a sum of non-negative terms);
/// * otherwise (`w + a* = 0`, stop at the kink): `sqrt(w (2 (g + lambda) - m w))`, where
///   `g + lambda >= m w`, so the subtraction loses at most a factor 3 of relative accuracy
///   (`x - y` with `0 <= y <= x/2`).
///
/// The three forms agree on the case boundaries. `g +- lambda` are single correctly
/// rounded operations on exact inputs, so every `g`-dependent quantity carries a relative
/// error of a few ulps.
pub fn l1_quadratic_decrease_root(lambda: f64, g: f64, w: f64, m: f64, sqrt_m: f64) -> f64 {
    if g.is_nan() {
        return f64::NAN;
    }
    if w == 0.0 {
        return (g.abs() - lambda).max(0.0) / sqrt_m;
    }
    let (g, w) = if w < 0.0 { (-g, -w) } else { (g, w) };
    let mw = m * w;
    let gp = g + lambda;
    if gp < mw {
        gp.abs() / sqrt_m
    } else {
        let gm = g - lambda;
        if gm > mw {
            (gm * gm + 4.0 * lambda * w * m).sqrt() / sqrt_m
        } else {
            // g + lambda >= m w here, so 2 (g + lambda) - m w >= m w >= 0.
            (w * (2.0 * gp - mw).max(0.0)).sqrt()
        }
    }
}

/// Conjugate of `u -> (l/2) u^2` at `v`: `v^2 / (2 l)` for `l > 0`; for `l = 0` the
/// indicator of `{0}` (0 at `v = 0`, infinite elsewhere).
#[inline]
fn quadratic_conjugate(l: f64, v: f64) -> f64 {
    if l > 0.0 {
        v * v / (2.0 * l)
    } else if v == 0.0 {
        0.0
    } else {
        f64::INFINITY
    }
}

/// Soft-thresholding `sign(v) max(|v| - t, 0)`.
#[inline]
pub fn soft_threshold(v: f64, t: f64) -> f64 {
    if v > t {
        v - t
    } else if v < -t {
        v + t
    } else {
        0.0
    }
}

fn check_weights(name: &'static str, w: &[f64]) -> Result<()> {
    for &x in w {
        non_negative(name, x)?;
    }
    Ok(())
}

fn check_len(what: &str, len: Option<usize>, p: usize) -> Result<()> {
    match len {
        Some(l) if l != p => Err(ModelError::Shape(format!(
            "{what} has {l} entries but the design has {p} features"
        ))),
        _ => Ok(()),
    }
}

/// Per-coordinate multipliers of a penalty strength: `None` means all ones.
#[derive(Debug, Clone, PartialEq, Default)]
struct Weights(Option<Vec<f64>>);

impl Weights {
    #[inline]
    fn get(&self, j: usize) -> f64 {
        self.0.as_ref().map_or(1.0, |w| w[j])
    }
    fn len(&self) -> Option<usize> {
        self.0.as_ref().map(Vec::len)
    }
}

/// No penalty (smooth problems): the prox is the identity.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct NoPenalty;

impl Penalty for NoPenalty {
    fn name(&self) -> &'static str {
        "none"
    }
    fn value_1d(&self, _j: usize, _wj: f64) -> f64 {
        0.0
    }
    #[inline]
    fn prox_1d(&self, _j: usize, v: f64, _step: f64) -> f64 {
        v
    }
    fn subdiff_distance(&self, _j: usize, _wj: f64, grad_j: f64) -> f64 {
        grad_j.abs()
    }
    /// `|g| / sqrt(m)`.
    fn quadratic_decrease_root(
        &self,
        _j: usize,
        g: f64,
        _wj: f64,
        _m: f64,
        sqrt_m: f64,
    ) -> Option<f64> {
        Some(g.abs() / sqrt_m)
    }
}

/// `lambda sum_j omega_j |w_j|` (weights `omega_j` default to 1).
#[derive(Debug, Clone, PartialEq)]
pub struct L1 {
    lambda: f64,
    weights: Weights,
}

impl L1 {
    /// `lambda ||w||_1`, `lambda >= 0` and finite.
    pub fn new(lambda: f64) -> Result<Self> {
        Ok(Self {
            lambda: non_negative("lambda", lambda)?,
            weights: Weights::default(),
        })
    }
    /// Per-coordinate weights `omega_j >= 0`.
    pub fn with_weights(mut self, weights: Vec<f64>) -> Result<Self> {
        check_weights("l1 weight", &weights)?;
        self.weights = Weights(Some(weights));
        Ok(self)
    }
    /// The strength `lambda`.
    pub fn lambda(&self) -> f64 {
        self.lambda
    }
    /// `lambda omega_j`.
    #[inline]
    pub fn strength(&self, j: usize) -> f64 {
        self.lambda * self.weights.get(j)
    }
}

impl Penalty for L1 {
    fn name(&self) -> &'static str {
        "l1"
    }
    fn value_1d(&self, j: usize, wj: f64) -> f64 {
        self.strength(j) * wj.abs()
    }
    #[inline]
    fn prox_1d(&self, j: usize, v: f64, step: f64) -> f64 {
        soft_threshold(v, step * self.strength(j))
    }
    fn subdiff_distance(&self, j: usize, wj: f64, grad_j: f64) -> f64 {
        let l = self.strength(j);
        if wj == 0.0 {
            (grad_j.abs() - l).max(0.0)
        } else {
            (grad_j + l * wj.signum()).abs()
        }
    }
    fn check_dimension(&self, p: usize) -> Result<()> {
        check_len("l1 weights", self.weights.len(), p)
    }
    /// `(l |.|)* = indicator of [-l, l]`: 0 inside.
    fn conjugate_1d(&self, j: usize, v: f64) -> Option<f64> {
        Some(if v.abs() <= self.strength(j) {
            0.0
        } else {
            f64::INFINITY
        })
    }
    fn dual_radius(&self, j: usize) -> Option<f64> {
        Some(self.strength(j))
    }
    /// [`l1_quadratic_decrease_root`] with `lambda_j`.
    fn quadratic_decrease_root(
        &self,
        j: usize,
        g: f64,
        wj: f64,
        m: f64,
        sqrt_m: f64,
    ) -> Option<f64> {
        Some(l1_quadratic_decrease_root(
            self.strength(j),
            g,
            wj,
            m,
            sqrt_m,
        ))
    }
}

/// `(lambda / 2) sum_j omega_j w_j^2` (weights default to 1).
#[derive(Debug, Clone, PartialEq)]
pub struct L2 {
    lambda: f64,
    weights: Weights,
}

impl L2 {
    /// `(lambda/2) ||w||_2^2`, `lambda >= 0` and finite.
    pub fn new(lambda: f64) -> Result<Self> {
        Ok(Self {
            lambda: non_negative("lambda", lambda)?,
            weights: Weights::default(),
        })
    }
    /// Per-coordinate weights `omega_j >= 0`.
    pub fn with_weights(mut self, weights: Vec<f64>) -> Result<Self> {
        check_weights("l2 weight", &weights)?;
        self.weights = Weights(Some(weights));
        Ok(self)
    }
    /// The strength `lambda`.
    pub fn lambda(&self) -> f64 {
        self.lambda
    }
    /// `lambda omega_j`.
    #[inline]
    pub fn strength(&self, j: usize) -> f64 {
        self.lambda * self.weights.get(j)
    }
}

impl Penalty for L2 {
    fn name(&self) -> &'static str {
        "l2"
    }
    fn value_1d(&self, j: usize, wj: f64) -> f64 {
        0.5 * self.strength(j) * wj * wj
    }
    #[inline]
    fn prox_1d(&self, j: usize, v: f64, step: f64) -> f64 {
        v / (1.0 + step * self.strength(j))
    }
    fn subdiff_distance(&self, j: usize, wj: f64, grad_j: f64) -> f64 {
        (grad_j + self.strength(j) * wj).abs()
    }
    fn check_dimension(&self, p: usize) -> Result<()> {
        check_len("l2 weights", self.weights.len(), p)
    }
    /// `((l/2) w^2)* = v^2 / (2 l)` for `l > 0`; for `l = 0` the indicator of `{0}`.
    fn conjugate_1d(&self, j: usize, v: f64) -> Option<f64> {
        Some(quadratic_conjugate(self.strength(j), v))
    }
    fn dual_radius(&self, j: usize) -> Option<f64> {
        Some(if self.strength(j) > 0.0 {
            f64::INFINITY
        } else {
            0.0
        })
    }
    /// The model is `(g + l w) a + ((m + l)/2) a^2`: `|g + l w| / sqrt(m + l)`. The
    /// offset `l w` and `m + l` do not depend on `g` (their rounding is a perturbation of
    /// the constants); `g + fl(l w)` is one correctly rounded addition.
    fn quadratic_decrease_root(
        &self,
        j: usize,
        g: f64,
        wj: f64,
        m: f64,
        _sqrt_m: f64,
    ) -> Option<f64> {
        let l = self.strength(j);
        Some((g + l * wj).abs() / (m + l).sqrt())
    }
}

/// Elastic net `sum_j omega_j (l1 |w_j| + (l2 / 2) w_j^2)`.
#[derive(Debug, Clone, PartialEq)]
pub struct ElasticNet {
    l1: f64,
    l2: f64,
    weights: Weights,
}

impl ElasticNet {
    /// Elastic net with strengths `l1, l2 >= 0`.
    pub fn new(l1: f64, l2: f64) -> Result<Self> {
        Ok(Self {
            l1: non_negative("l1 strength", l1)?,
            l2: non_negative("l2 strength", l2)?,
            weights: Weights::default(),
        })
    }
    /// Per-coordinate weights `omega_j >= 0`.
    pub fn with_weights(mut self, weights: Vec<f64>) -> Result<Self> {
        check_weights("elastic-net weight", &weights)?;
        self.weights = Weights(Some(weights));
        Ok(self)
    }
    /// `(l1, l2)` strengths.
    pub fn strengths(&self) -> (f64, f64) {
        (self.l1, self.l2)
    }
}

impl Penalty for ElasticNet {
    fn name(&self) -> &'static str {
        "elastic-net"
    }
    fn value_1d(&self, j: usize, wj: f64) -> f64 {
        self.weights.get(j) * (self.l1 * wj.abs() + 0.5 * self.l2 * wj * wj)
    }
    #[inline]
    fn prox_1d(&self, j: usize, v: f64, step: f64) -> f64 {
        let o = self.weights.get(j);
        soft_threshold(v, step * o * self.l1) / (1.0 + step * o * self.l2)
    }
    fn subdiff_distance(&self, j: usize, wj: f64, grad_j: f64) -> f64 {
        let o = self.weights.get(j);
        let g = grad_j + o * self.l2 * wj;
        let l = o * self.l1;
        if wj == 0.0 {
            (g.abs() - l).max(0.0)
        } else {
            (g + l * wj.signum()).abs()
        }
    }
    fn check_dimension(&self, p: usize) -> Result<()> {
        check_len("elastic-net weights", self.weights.len(), p)
    }
    /// `(a |w| + (b/2) w^2)* = max(|v| - a, 0)^2 / (2 b)` for `b > 0` (with
    /// `a = omega_j l1`, `b = omega_j l2`); for `b = 0` the indicator of `[-a, a]`.
    fn conjugate_1d(&self, j: usize, v: f64) -> Option<f64> {
        let o = self.weights.get(j);
        let (a, b) = (o * self.l1, o * self.l2);
        Some(quadratic_conjugate(b, (v.abs() - a).max(0.0)))
    }
    fn dual_radius(&self, j: usize) -> Option<f64> {
        let o = self.weights.get(j);
        Some(if o * self.l2 > 0.0 {
            f64::INFINITY
        } else {
            o * self.l1
        })
    }
    /// The smooth part folds into the model: [`l1_quadratic_decrease_root`] with
    /// gradient `g + l2 w`, curvature `m + l2` (the offsets do not depend on `g`).
    fn quadratic_decrease_root(
        &self,
        j: usize,
        g: f64,
        wj: f64,
        m: f64,
        _sqrt_m: f64,
    ) -> Option<f64> {
        let o = self.weights.get(j);
        let (a, b) = (o * self.l1, o * self.l2);
        let mb = m + b;
        Some(l1_quadratic_decrease_root(a, g + b * wj, wj, mb, mb.sqrt()))
    }
}

/// Box constraint: the indicator of `prod_j [lower_j, upper_j]`; prox = projection.
#[derive(Debug, Clone, PartialEq)]
pub struct BoxConstraint {
    lower: Vec<f64>,
    upper: Vec<f64>,
}

impl BoxConstraint {
    /// Per-coordinate bounds with `lower_j <= upper_j` (infinite bounds allowed, NaN not).
    pub fn new(lower: Vec<f64>, upper: Vec<f64>) -> Result<Self> {
        if lower.len() != upper.len() {
            return Err(ModelError::Shape(format!(
                "box has {} lower and {} upper bounds",
                lower.len(),
                upper.len()
            )));
        }
        for (&a, &b) in lower.iter().zip(&upper) {
            if a.is_nan() || b.is_nan() || a > b {
                return Err(ModelError::InvalidParameter {
                    name: "box bounds",
                    value: if a.is_nan() { a } else { b },
                    expected: "need lower <= upper and no NaN",
                });
            }
        }
        Ok(Self { lower, upper })
    }
    /// The same interval `[-radius, radius]` for all `p` coordinates.
    pub fn symmetric(p: usize, radius: f64) -> Result<Self> {
        non_negative("box radius", radius)?;
        Self::new(vec![-radius; p], vec![radius; p])
    }
}

impl Penalty for BoxConstraint {
    fn name(&self) -> &'static str {
        "box"
    }
    fn value_1d(&self, j: usize, wj: f64) -> f64 {
        if wj >= self.lower[j] && wj <= self.upper[j] {
            0.0
        } else {
            f64::INFINITY
        }
    }
    #[inline]
    fn prox_1d(&self, j: usize, v: f64, _step: f64) -> f64 {
        v.clamp(self.lower[j], self.upper[j])
    }
    fn subdiff_distance(&self, j: usize, wj: f64, grad_j: f64) -> f64 {
        // Normal cone of [a, b] at w: {0} inside, (-inf, 0] at a, [0, inf) at b.
        let at_lower = wj <= self.lower[j];
        let at_upper = wj >= self.upper[j];
        let v = -grad_j;
        match (at_lower, at_upper) {
            (true, true) => 0.0,
            (true, false) => v.max(0.0),
            (false, true) => (-v).max(0.0),
            (false, false) => v.abs(),
        }
    }
    fn check_dimension(&self, p: usize) -> Result<()> {
        check_len("box bounds", Some(self.lower.len()), p)
    }
    /// `a* = clamp(w - g/m, lo, hi) - w`. Unclamped: `|g| / sqrt(m)`. Clamped at a
    /// bound (`|a*| = |bound - w|`, a `g`-independent constant, and `|g| >= m |a*|`):
    /// `sqrt(|a*| (2 |g| - m |a*|))`, where `2|g| - m|a*| >= |g|` (no cancellation).
    /// Infinite when `w` is outside the box (as `psi(w) = inf`).
    fn quadratic_decrease_root(
        &self,
        j: usize,
        g: f64,
        wj: f64,
        m: f64,
        sqrt_m: f64,
    ) -> Option<f64> {
        let (lo, hi) = (self.lower[j], self.upper[j]);
        if g.is_nan() {
            return Some(f64::NAN);
        }
        if !(wj >= lo && wj <= hi) {
            return Some(f64::INFINITY);
        }
        let u = wj - g / m;
        let gap = if u > hi {
            hi - wj
        } else if u < lo {
            wj - lo
        } else {
            return Some(g.abs() / sqrt_m);
        };
        Some((gap * (2.0 * g.abs() - m * gap).max(0.0)).sqrt())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `quadratic_decrease_root` against `sqrt(2 d)` computed by python3 in exact rational
    /// arithmetic (`fractions`, then a 40-digit `decimal` square root) from the naive
    /// formula at the prox point, on the exact same f64 inputs. Covers every case of
    /// every closed form, including scores of 3e-12 and 8e-11 where the naive f64
    /// evaluation is wrong in the leading digits.
    // The references are the 19-digit decimals python printed (kept verbatim).
    #[allow(clippy::excessive_precision, clippy::type_complexity)]
    #[test]
    fn gs_q_closed_forms_match_exact_rational_reference() {
        let l1 = |lam: f64| L1::new(lam).unwrap();
        let bx = BoxConstraint::new(vec![-1.0], vec![2.0]).unwrap();
        let en = ElasticNet::new(0.1, 0.5).unwrap();
        let ridge_only = ElasticNet::new(0.0, 0.5).unwrap();
        let cases: Vec<(Box<dyn Penalty>, f64, f64, f64, f64)> = vec![
            (
                Box::new(l1(0.1)),
                -0.1 + 3e-12,
                3.7,
                1.0,
                3.000003023778674560e-12,
            ),
            (Box::new(l1(0.1)), 3.65, 3.7, 1.0, 3.749666651850534753),
            (Box::new(l1(0.1)), 3.9, 3.7, 1.0, 3.989987468652000596),
            (
                Box::new(l1(0.1)),
                -0.0999999,
                1e-9,
                1.0,
                1.410673597986972836e-8,
            ),
            (Box::new(l1(0.5)), 2.0, 0.0, 2.0, 1.060660171779821287),
            (Box::new(l1(0.1)), -9.2, -3.7, 2.5, 5.881751439834906420),
            (Box::new(en.clone()), 3.7, 3.7, 1.0, 4.612483062299524808),
            (
                Box::new(en),
                -1.9000000001,
                3.7,
                1.0,
                0.04082482896473678636,
            ),
            (
                Box::new(ridge_only),
                -1.85 + 1e-10,
                3.7,
                1.0,
                8.164966484849560582e-11,
            ),
            (Box::new(bx.clone()), -0.7, 1.5, 1.0, 0.6708203932499368758),
            (
                Box::new(bx.clone()),
                3.3,
                -1.0 + 1e-9,
                4.0,
                8.124038287292380931e-5,
            ),
            (Box::new(bx), 0.2, 1.5, 1.0, 0.2000000000000000111),
        ];
        for (pen, g, w, m, want) in cases {
            let got = pen.quadratic_decrease_root(0, g, w, m, m.sqrt()).unwrap();
            assert!(
                (got - want).abs() <= 1e-14 * want,
                "{} g={g} w={w} m={m}: {got} vs {want}",
                pen.name()
            );
        }
        // L2 is elastic net without L1 part; none is |g| / sqrt(m).
        let l2 = L2::new(0.5).unwrap();
        let r = ElasticNet::new(0.0, 0.5).unwrap();
        for &(g, w) in &[(0.3, 1.0), (-2.0, 0.2), (0.0, -1.5)] {
            let a = l2
                .quadratic_decrease_root(0, g, w, 1.3, 1.3f64.sqrt())
                .unwrap();
            let b = r
                .quadratic_decrease_root(0, g, w, 1.3, 1.3f64.sqrt())
                .unwrap();
            assert!((a - b).abs() <= 1e-15 * (1.0 + a), "{a} {b}");
        }
        assert_eq!(
            NoPenalty.quadratic_decrease_root(0, -0.6, 3.0, 4.0, 2.0),
            Some(0.3)
        );
        assert!(l1(0.1)
            .quadratic_decrease_root(0, f64::NAN, 1.0, 1.0, 1.0)
            .unwrap()
            .is_nan());
    }

    #[test]
    fn conjugates_by_brute_force() {
        let pens: Vec<Box<dyn Penalty>> = vec![
            Box::new(L1::new(0.7).unwrap()),
            Box::new(L2::new(1.3).unwrap()),
            Box::new(ElasticNet::new(0.5, 0.8).unwrap()),
            Box::new(ElasticNet::new(0.5, 0.0).unwrap()),
        ];
        for pen in &pens {
            let r = pen.dual_radius(0).unwrap();
            for &v in &[-2.0f64, -0.6, -0.2, 0.0, 0.3, 0.65, 1.9] {
                if v.abs() > r {
                    assert_eq!(
                        pen.conjugate_1d(0, v),
                        Some(f64::INFINITY),
                        "{}",
                        pen.name()
                    );
                    continue;
                }
                let c = pen.conjugate_1d(0, v).unwrap();
                let mut best = f64::NEG_INFINITY;
                for k in -100_000..=100_000 {
                    let w = k as f64 * 1e-4;
                    best = best.max(v * w - pen.value_1d(0, w));
                }
                assert!(
                    best <= c + 1e-12 && best >= c - 1e-6,
                    "{} v={v}: {best} vs {c}",
                    pen.name()
                );
            }
        }
        assert!(NoPenalty.dual_radius(0).is_none());
    }

    #[test]
    fn prox_values_by_hand() {
        let l1 = L1::new(0.5).unwrap();
        assert_eq!(l1.prox_1d(0, 2.0, 1.0), 1.5);
        assert_eq!(l1.prox_1d(0, -0.3, 1.0), 0.0);
        let l2 = L2::new(1.0).unwrap();
        assert_eq!(l2.prox_1d(0, 3.0, 2.0), 1.0);
        let en = ElasticNet::new(1.0, 1.0).unwrap();
        assert_eq!(en.prox_1d(0, 3.0, 1.0), 1.0);
        let b = BoxConstraint::symmetric(2, 1.0).unwrap();
        assert_eq!(b.prox_1d(1, 3.0, 1.0), 1.0);
        assert!(L1::new(f64::NAN).is_err());
        assert!(L1::new(1.0)
            .unwrap()
            .with_weights(vec![1.0])
            .unwrap()
            .check_dimension(3)
            .is_err());
    }
}
