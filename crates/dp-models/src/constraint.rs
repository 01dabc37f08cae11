//! Compact convex constraint sets with a linear minimisation oracle (LMO), for
//! Frank-Wolfe methods (Jaggi 2013, "Revisiting Frank-Wolfe: projection-free sparse
//! convex optimization"), and a non-private certified Frank-Wolfe reference solver.
//!
//! A [`ConstraintSet`] `C` answers `lmo(g) = argmin_{s in C} <g, s>` with a vertex of `C`
//! in a sparse representation ([`Vertex`]), tests membership, and gives the Frank-Wolfe
//! duality gap
//!
//! ```text
//! gap(w) = max_{s in C} <g, w - s> = <g, w> - <g, lmo(g)>,     g = grad f(w),
//! ```
//!
//! which for a convex `f` and `w in C` bounds the suboptimality: `f(w) - min_C f <= gap(w)`
//! (convexity gives `f(s) >= f(w) + <g, s - w>` for every `s in C`, so
//! `min_C f >= f(w) - max_s <g, w - s>`). It is the certificate of [`frank_wolfe_reference`].
//!
//! Sets: [`L1Ball`] (`||w||_1 <= r`; vertices `+-r e_j`), [`L1BallProduct`] (a
//! partition of the features into blocks, `||w_{P_k}||_1 <= r` for every block: the
//! feasible set of feature-wise distributed Frank-Wolfe), [`Simplex`]
//! (`w >= 0, sum w = r`) and [`BoxSet`] (`l <= w <= u`).
//!
//! Ties in an LMO are broken towards the lowest index (deterministic), and a zero
//! gradient entry picks the negative vertex of the l1 sets (any vertex is optimal then).

use crate::design::Design;
use crate::error::{ModelError, Result};
use crate::loss::Loss;
use serde::{Deserialize, Serialize};

/// A point of a constraint set in sparse form: the listed `(index, value)` entries, every
/// other coordinate zero. Indices are distinct and increasing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Vertex {
    entries: Vec<(usize, f64)>,
}

impl Vertex {
    /// A vertex from `(index, value)` entries (sorted by index here).
    pub fn from_entries(mut entries: Vec<(usize, f64)>) -> Self {
        entries.sort_by_key(|e| e.0);
        Self { entries }
    }
    /// The non-zero entries.
    pub fn entries(&self) -> &[(usize, f64)] {
        &self.entries
    }
    /// `<v, self>`.
    pub fn dot(&self, v: &[f64]) -> f64 {
        self.entries.iter().map(|&(j, s)| s * v[j]).sum()
    }
    /// The dense vector of length `dim`.
    pub fn to_dense(&self, dim: usize) -> Vec<f64> {
        let mut out = vec![0.0; dim];
        for &(j, s) in &self.entries {
            out[j] = s;
        }
        out
    }
}

/// A compact convex set with a linear minimisation oracle.
pub trait ConstraintSet: std::fmt::Debug + Send + Sync {
    /// Short name for reports ("l1-ball", ...).
    fn name(&self) -> &'static str;
    /// Dimension `p` of the ambient space.
    fn dim(&self) -> usize;
    /// `argmin_{s in C} <grad, s>`, a vertex of `C` (`grad` has length [`Self::dim`]).
    fn lmo(&self, grad: &[f64]) -> Vertex;
    /// True when `w` is in `C` up to an absolute tolerance `tol` on each defining
    /// inequality.
    fn contains(&self, w: &[f64], tol: f64) -> bool;
    /// A feasible starting point (zero when `C` contains it).
    fn initial_point(&self) -> Vec<f64>;
    /// The Euclidean projection of `w` onto `C`, in place.
    fn project(&self, w: &mut [f64]);
    /// The Frank-Wolfe duality gap `max_{s in C} <grad, w - s>` (>= 0 for `w in C`).
    fn gap(&self, grad: &[f64], w: &[f64]) -> f64 {
        let gw: f64 = grad.iter().zip(w).map(|(g, x)| g * x).sum();
        gw - self.lmo(grad).dot(grad)
    }
}

fn check_radius(radius: f64) -> Result<f64> {
    if radius.is_finite() && radius > 0.0 {
        Ok(radius)
    } else {
        Err(ModelError::InvalidParameter {
            name: "radius",
            value: radius,
            expected: "the radius of the constraint set must be finite and > 0",
        })
    }
}

fn check_dim(dim: usize) -> Result<usize> {
    if dim == 0 {
        Err(ModelError::Empty(
            "a constraint set needs dimension >= 1".into(),
        ))
    } else {
        Ok(dim)
    }
}

/// `argmax_{j in idx} |g_j|` (lowest position on ties) and the vertex entry
/// `(j, -r sign(g_j))` minimising `<g, s>` over `{+-r e_j : j in idx}`.
fn l1_vertex<I: IntoIterator<Item = usize>>(grad: &[f64], idx: I, radius: f64) -> (usize, f64) {
    let mut best = usize::MAX;
    let mut best_abs = f64::NEG_INFINITY;
    for j in idx {
        let a = grad[j].abs();
        if a > best_abs {
            best_abs = a;
            best = j;
        }
    }
    let s = if grad[best] > 0.0 { -radius } else { radius };
    // A zero gradient entry: both signs score 0; pick -r for determinism.
    let s = if grad[best] == 0.0 { -radius } else { s };
    (best, s)
}

/// Euclidean projection of `v` onto `{u : u >= 0, sum u = r}` (`r > 0`), by sorting
/// (Duchi, Shalev-Shwartz, Singer & Chandra 2008, Fig. 1).
fn project_simplex(v: &mut [f64], r: f64) {
    let mut u: Vec<f64> = v.to_vec();
    u.sort_by(|a, b| b.total_cmp(a));
    let mut cum = 0.0;
    let mut theta = 0.0;
    for (j, &uj) in u.iter().enumerate() {
        cum += uj;
        let t = (cum - r) / (j + 1) as f64;
        if uj - t > 0.0 {
            theta = t;
        }
    }
    v.iter_mut().for_each(|x| *x = (*x - theta).max(0.0));
}

/// Euclidean projection onto the l1 ball of radius `r`: the identity inside, otherwise
/// soft-thresholding at the simplex threshold of `|v|` (Duchi et al. 2008, Sec. 4).
fn project_l1(v: &mut [f64], r: f64) {
    if v.iter().map(|x| x.abs()).sum::<f64>() <= r {
        return;
    }
    let mut a: Vec<f64> = v.iter().map(|x| x.abs()).collect();
    project_simplex(&mut a, r);
    v.iter_mut().zip(&a).for_each(|(x, m)| *x = x.signum() * m);
}

/// The l1 ball `{w : ||w||_1 <= r}` in dimension `p`; its `2p` vertices are `+-r e_j`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct L1Ball {
    radius: f64,
    dim: usize,
}

impl L1Ball {
    /// The l1 ball of `radius` (finite, > 0) in dimension `dim` (>= 1).
    pub fn new(radius: f64, dim: usize) -> Result<Self> {
        Ok(Self {
            radius: check_radius(radius)?,
            dim: check_dim(dim)?,
        })
    }
    /// The radius `r`.
    pub fn radius(&self) -> f64 {
        self.radius
    }
}

impl ConstraintSet for L1Ball {
    fn name(&self) -> &'static str {
        "l1-ball"
    }
    fn dim(&self) -> usize {
        self.dim
    }
    fn lmo(&self, grad: &[f64]) -> Vertex {
        let (j, s) = l1_vertex(grad, 0..self.dim, self.radius);
        Vertex {
            entries: vec![(j, s)],
        }
    }
    fn contains(&self, w: &[f64], tol: f64) -> bool {
        w.len() == self.dim
            && w.iter().all(|v| v.is_finite())
            && w.iter().map(|v| v.abs()).sum::<f64>() <= self.radius + tol
    }
    fn initial_point(&self) -> Vec<f64> {
        vec![0.0; self.dim]
    }
    fn project(&self, w: &mut [f64]) {
        project_l1(w, self.radius);
    }
}

/// The product of l1 balls over a partition of the features into `K` blocks:
/// `{w : ||w_{P_k}||_1 <= r for every k}`. Its vertices pick one signed coordinate per
/// block, so `||w||_1 <= K r`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct L1BallProduct {
    radius: f64,
    dim: usize,
    blocks: Vec<Vec<usize>>,
}

impl L1BallProduct {
    /// Blocks `P_1..P_K` (each non-empty; together a partition of `0..dim`), each with
    /// an l1 ball of `radius`.
    pub fn new(radius: f64, dim: usize, blocks: Vec<Vec<usize>>) -> Result<Self> {
        let radius = check_radius(radius)?;
        let dim = check_dim(dim)?;
        if blocks.is_empty() {
            return Err(ModelError::InvalidParameter {
                name: "blocks",
                value: 0.0,
                expected: "at least one block (K >= 1)",
            });
        }
        let mut seen = vec![false; dim];
        for b in &blocks {
            if b.is_empty() {
                return Err(ModelError::InvalidParameter {
                    name: "blocks",
                    value: 0.0,
                    expected: "every block needs at least one feature (K <= p)",
                });
            }
            for &j in b {
                if j >= dim || seen[j] {
                    return Err(ModelError::InvalidParameter {
                        name: "blocks",
                        value: j as f64,
                        expected: "the blocks must be disjoint sets of feature indices < p",
                    });
                }
                seen[j] = true;
            }
        }
        if let Some(j) = seen.iter().position(|s| !s) {
            return Err(ModelError::InvalidParameter {
                name: "blocks",
                value: j as f64,
                expected: "every feature must belong to a block (the blocks cover 0..p)",
            });
        }
        Ok(Self {
            radius,
            dim,
            blocks,
        })
    }
    /// `K` contiguous blocks of near-equal size (the first `p mod K` one larger).
    /// Errors unless `1 <= K <= p`.
    pub fn contiguous(radius: f64, dim: usize, k: usize) -> Result<Self> {
        if k == 0 || k > dim {
            return Err(ModelError::InvalidParameter {
                name: "parties",
                value: k as f64,
                expected: "the number of blocks K must satisfy 1 <= K <= p",
            });
        }
        let (q, r) = (dim / k, dim % k);
        let mut blocks = Vec::with_capacity(k);
        let mut start = 0;
        for b in 0..k {
            let len = q + usize::from(b < r);
            blocks.push((start..start + len).collect());
            start += len;
        }
        Self::new(radius, dim, blocks)
    }
    /// The per-block radius `r`.
    pub fn radius(&self) -> f64 {
        self.radius
    }
    /// The blocks `P_k`.
    pub fn blocks(&self) -> &[Vec<usize>] {
        &self.blocks
    }
}

impl ConstraintSet for L1BallProduct {
    fn name(&self) -> &'static str {
        "l1-ball-product"
    }
    fn dim(&self) -> usize {
        self.dim
    }
    fn lmo(&self, grad: &[f64]) -> Vertex {
        let entries = self
            .blocks
            .iter()
            .map(|b| l1_vertex(grad, b.iter().copied(), self.radius))
            .collect();
        Vertex::from_entries(entries)
    }
    fn contains(&self, w: &[f64], tol: f64) -> bool {
        w.len() == self.dim
            && w.iter().all(|v| v.is_finite())
            && self
                .blocks
                .iter()
                .all(|b| b.iter().map(|&j| w[j].abs()).sum::<f64>() <= self.radius + tol)
    }
    fn initial_point(&self) -> Vec<f64> {
        vec![0.0; self.dim]
    }
    fn project(&self, w: &mut [f64]) {
        for b in &self.blocks {
            let mut v: Vec<f64> = b.iter().map(|&j| w[j]).collect();
            project_l1(&mut v, self.radius);
            for (&j, x) in b.iter().zip(v) {
                w[j] = x;
            }
        }
    }
}

/// The scaled simplex `{w : w >= 0, sum_j w_j = r}`; its vertices are `r e_j`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Simplex {
    radius: f64,
    dim: usize,
}

impl Simplex {
    /// The simplex of total mass `radius` (finite, > 0) in dimension `dim` (>= 1).
    pub fn new(radius: f64, dim: usize) -> Result<Self> {
        Ok(Self {
            radius: check_radius(radius)?,
            dim: check_dim(dim)?,
        })
    }
}

impl ConstraintSet for Simplex {
    fn name(&self) -> &'static str {
        "simplex"
    }
    fn dim(&self) -> usize {
        self.dim
    }
    fn lmo(&self, grad: &[f64]) -> Vertex {
        let mut best = 0;
        for (j, &g) in grad.iter().enumerate() {
            if g < grad[best] {
                best = j;
            }
        }
        Vertex {
            entries: vec![(best, self.radius)],
        }
    }
    fn contains(&self, w: &[f64], tol: f64) -> bool {
        w.len() == self.dim
            && w.iter().all(|v| v.is_finite() && *v >= -tol)
            && (w.iter().sum::<f64>() - self.radius).abs() <= tol
    }
    fn initial_point(&self) -> Vec<f64> {
        vec![self.radius / self.dim as f64; self.dim]
    }
    fn project(&self, w: &mut [f64]) {
        project_simplex(w, self.radius);
    }
}

/// The box `{w : l_j <= w_j <= u_j}`; its vertices take an endpoint in every coordinate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BoxSet {
    lower: Vec<f64>,
    upper: Vec<f64>,
}

impl BoxSet {
    /// Bounds `lower <= upper`, finite, of equal length >= 1.
    pub fn new(lower: Vec<f64>, upper: Vec<f64>) -> Result<Self> {
        if lower.len() != upper.len() {
            return Err(ModelError::Shape(format!(
                "{} lower bounds and {} upper bounds",
                lower.len(),
                upper.len()
            )));
        }
        check_dim(lower.len())?;
        for (l, u) in lower.iter().zip(&upper) {
            if !(l.is_finite() && u.is_finite() && l <= u) {
                return Err(ModelError::InvalidParameter {
                    name: "box bounds",
                    value: if l.is_finite() { *u } else { *l },
                    expected: "finite bounds with lower <= upper in every coordinate",
                });
            }
        }
        Ok(Self { lower, upper })
    }
}

impl ConstraintSet for BoxSet {
    fn name(&self) -> &'static str {
        "box"
    }
    fn dim(&self) -> usize {
        self.lower.len()
    }
    fn lmo(&self, grad: &[f64]) -> Vertex {
        let entries = grad
            .iter()
            .enumerate()
            .map(|(j, &g)| {
                (
                    j,
                    if g > 0.0 {
                        self.lower[j]
                    } else {
                        self.upper[j]
                    },
                )
            })
            .filter(|e| e.1 != 0.0)
            .collect();
        Vertex { entries }
    }
    fn contains(&self, w: &[f64], tol: f64) -> bool {
        w.len() == self.lower.len()
            && w.iter()
                .zip(self.lower.iter().zip(&self.upper))
                .all(|(v, (l, u))| v.is_finite() && *v >= l - tol && *v <= u + tol)
    }
    fn initial_point(&self) -> Vec<f64> {
        self.lower
            .iter()
            .zip(&self.upper)
            .map(|(l, u)| 0.0f64.clamp(*l, *u))
            .collect()
    }
    fn project(&self, w: &mut [f64]) {
        for (x, (l, u)) in w.iter_mut().zip(self.lower.iter().zip(&self.upper)) {
            *x = x.clamp(*l, *u);
        }
    }
}

/// `F(w) = (1/n) sum_i loss(z_i, y_i)` from the predictor `z = X w`.
pub fn average_loss<L: Loss + ?Sized>(loss: &L, z: &[f64], y: &[f64]) -> f64 {
    z.iter()
        .zip(y)
        .map(|(&zi, &yi)| loss.value(zi, yi))
        .sum::<f64>()
        / z.len() as f64
}

/// `grad F(w) = (1/n) X^T phi'(z, y)` into `grad` (length `p`), from `z = X w`; `deriv`
/// (length `n`) is scratch.
pub fn average_loss_gradient<D: Design, L: Loss + ?Sized>(
    x: &D,
    loss: &L,
    z: &[f64],
    y: &[f64],
    deriv: &mut [f64],
    grad: &mut [f64],
) {
    let inv_n = 1.0 / x.n_samples() as f64;
    for ((d, &zi), &yi) in deriv.iter_mut().zip(z).zip(y) {
        *d = inv_n * loss.derivative(zi, yi);
    }
    x.matvec_t(deriv, grad);
}

/// A constrained solution with its Frank-Wolfe duality-gap certificate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FwCertified {
    /// The solution (in the set).
    pub w: Vec<f64>,
    /// `F(w)` from a fresh predictor.
    pub objective: f64,
    /// The Frank-Wolfe gap at `w`: `F(w) - min_C F <= gap`.
    pub gap: f64,
    /// Iterations run.
    pub iterations: u64,
}

/// The non-private reference optimum of `F(w) = (1/n) sum_i loss(x_i^T w, y_i)` over
/// `set`, certified by the Frank-Wolfe duality gap ([`ConstraintSet::gap`]): stops when
/// `gap <= tol` (absolute), so `F(w) - min_C F <= tol`.
///
/// # Algorithm
/// Projected gradient descent with a backtracking estimate of the smoothness `L` (start
/// at `L = c/n * max_j ||X_j||^2`, `c` the loss's curvature bound; double `L` while the
/// quadratic upper bound `F(w) + <g, w+ - w> + (L/2)||w+ - w||^2` fails at
/// `w+ = proj_C(w - g/L)`). Plain Frank-Wolfe converges only as `O(1/t)` when the optimum
/// lies on a face of the polytope; projected gradient is linearly convergent on the
/// strongly convex problems used to measure excess risk, and the certificate is the
/// same Frank-Wolfe gap whichever method produced `w`.
///
/// Errors: a non-smooth loss (`Unsupported`), shapes, `tol <= 0`, and `NotConverged` when
/// `max_iter` iterations leave the gap above `tol`.
pub fn frank_wolfe_reference<D: Design, L: Loss + ?Sized, C: ConstraintSet + ?Sized>(
    x: &D,
    y: &[f64],
    loss: &L,
    set: &C,
    tol: f64,
    max_iter: u64,
) -> Result<FwCertified> {
    let (n, p) = (x.n_samples(), x.n_features());
    if y.len() != n || set.dim() != p {
        return Err(ModelError::Shape(format!(
            "design {n} x {p}, {} labels, constraint set of dimension {}",
            y.len(),
            set.dim()
        )));
    }
    crate::error::positive("tol", tol)?;
    let c = loss.curvature_bound().ok_or_else(|| {
        ModelError::Unsupported(format!(
            "the reference solver needs a smooth loss; {} is not smooth",
            loss.name()
        ))
    })?;
    let mut w = set.initial_point();
    let mut z = vec![0.0; n];
    x.matvec(&w, &mut z);
    let mut f = average_loss(loss, &z, y);
    let mut deriv = vec![0.0; n];
    let mut grad = vec![0.0; p];
    let mut cand = vec![0.0; p];
    let mut zc = vec![0.0; n];
    let max_col = (0..p).map(|j| x.col_sq_norm(j)).fold(0.0, f64::max);
    let mut lip = (c * max_col / n as f64).max(f64::MIN_POSITIVE);
    let mut gap = f64::INFINITY;
    for t in 0..=max_iter {
        average_loss_gradient(x, loss, &z, y, &mut deriv, &mut grad);
        gap = set.gap(&grad, &w);
        if gap <= tol {
            return Ok(FwCertified {
                objective: f,
                w,
                gap: gap.max(0.0),
                iterations: t,
            });
        }
        if t == max_iter {
            break;
        }
        // Backtracking on L (at most ~1100 doublings before L overflows).
        lip *= 0.5;
        loop {
            for ((cj, wj), gj) in cand.iter_mut().zip(&w).zip(&grad) {
                *cj = wj - gj / lip;
            }
            set.project(&mut cand);
            x.matvec(&cand, &mut zc);
            let fc = average_loss(loss, &zc, y);
            let (mut lin, mut sq) = (0.0, 0.0);
            for ((cj, wj), gj) in cand.iter().zip(&w).zip(&grad) {
                lin += gj * (cj - wj);
                sq += (cj - wj) * (cj - wj);
            }
            if fc <= f + lin + 0.5 * lip * sq + 1e-15 * f.abs() || !lip.is_finite() {
                break;
            }
            lip *= 2.0;
        }
        if !lip.is_finite() {
            break;
        }
        std::mem::swap(&mut w, &mut cand);
        std::mem::swap(&mut z, &mut zc);
        f = average_loss(loss, &z, y);
    }
    Err(ModelError::NotConverged(format!(
        "Frank-Wolfe gap {gap} after {max_iter} iterations is above tol = {tol}; raise \
         max_iter or tol"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DenseDesign, Squared};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha20Rng;

    fn dot(a: &[f64], b: &[f64]) -> f64 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    fn random_grad(rng: &mut ChaCha20Rng, p: usize) -> Vec<f64> {
        (0..p).map(|_| rng.random_range(-1.0..1.0)).collect()
    }

    /// Every vertex of the l1 ball / simplex / box / product, enumerated.
    fn l1_vertices(r: f64, p: usize) -> Vec<Vec<f64>> {
        let mut out = Vec::new();
        for j in 0..p {
            for s in [-r, r] {
                let mut v = vec![0.0; p];
                v[j] = s;
                out.push(v);
            }
        }
        out
    }

    fn check_lmo_brute<C: ConstraintSet>(set: &C, vertices: &[Vec<f64>], seed: u64) {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        for _ in 0..50 {
            let g = random_grad(&mut rng, set.dim());
            let s = set.lmo(&g).to_dense(set.dim());
            assert!(set.contains(&s, 1e-12), "{} lmo left the set", set.name());
            let best = vertices
                .iter()
                .map(|v| dot(&g, v))
                .fold(f64::INFINITY, f64::min);
            assert!(
                (dot(&g, &s) - best).abs() <= 1e-12,
                "{}: lmo value {} vs brute force {best}",
                set.name(),
                dot(&g, &s)
            );
            // The gap at a vertex-combination point is >= 0 and equals the brute max.
            let w = set.initial_point();
            let brute_gap = vertices
                .iter()
                .map(|v| dot(&g, &w) - dot(&g, v))
                .fold(f64::NEG_INFINITY, f64::max);
            assert!((set.gap(&g, &w) - brute_gap).abs() <= 1e-12);
        }
    }

    #[test]
    fn l1_ball_lmo_matches_brute_force() {
        let set = L1Ball::new(1.5, 5).unwrap();
        check_lmo_brute(&set, &l1_vertices(1.5, 5), 1);
        // Sign: a positive gradient entry gives a negative vertex.
        let v = set.lmo(&[0.1, -3.0, 2.0, 0.0, 0.0]);
        assert_eq!(v.entries(), &[(1, 1.5)]);
        // Restricted to candidates (a block's LMO over its sampled coordinates).
        assert_eq!(
            l1_vertex(&[0.1, -3.0, 2.0, 0.0, 0.0], [0, 2], 1.5),
            (2, -1.5)
        );
    }

    #[test]
    fn product_lmo_matches_brute_force() {
        let set = L1BallProduct::contiguous(0.7, 5, 2).unwrap();
        assert_eq!(set.blocks(), &[vec![0, 1, 2], vec![3, 4]]);
        let mut vertices = Vec::new();
        for a in l1_vertices(0.7, 3) {
            for b in l1_vertices(0.7, 2) {
                vertices.push([a.clone(), b].concat());
            }
        }
        check_lmo_brute(&set, &vertices, 2);
        assert!(set.contains(&[0.7, 0.0, 0.0, 0.0, -0.7], 0.0));
        assert!(!set.contains(&[0.7, 0.1, 0.0, 0.0, 0.0], 1e-9));
    }

    #[test]
    fn simplex_and_box_lmo_match_brute_force() {
        let simplex = Simplex::new(2.0, 4).unwrap();
        let vs: Vec<Vec<f64>> = (0..4)
            .map(|j| (0..4).map(|i| if i == j { 2.0 } else { 0.0 }).collect())
            .collect();
        check_lmo_brute(&simplex, &vs, 3);
        let bx = BoxSet::new(vec![-1.0, 0.0, -2.0], vec![1.0, 3.0, -1.0]).unwrap();
        let mut vs = Vec::new();
        for a in [-1.0, 1.0] {
            for b in [0.0, 3.0] {
                for c in [-2.0, -1.0] {
                    vs.push(vec![a, b, c]);
                }
            }
        }
        check_lmo_brute(&bx, &vs, 4);
        assert!(bx.contains(&bx.initial_point(), 0.0));
    }

    #[test]
    fn projections_are_nearest_feasible_points() {
        let mut rng = ChaCha20Rng::seed_from_u64(8);
        let sets: Vec<Box<dyn ConstraintSet>> = vec![
            Box::new(L1Ball::new(0.8, 4).unwrap()),
            Box::new(L1BallProduct::contiguous(0.5, 4, 2).unwrap()),
            Box::new(Simplex::new(1.0, 4).unwrap()),
            Box::new(BoxSet::new(vec![-0.3; 4], vec![0.4; 4]).unwrap()),
        ];
        for set in &sets {
            for _ in 0..20 {
                let v: Vec<f64> = (0..4).map(|_| rng.random_range(-2.0..2.0)).collect();
                let mut pv = v.clone();
                set.project(&mut pv);
                assert!(set.contains(&pv, 1e-12), "{}", set.name());
                let d = |a: &[f64]| a.iter().zip(&v).map(|(x, y)| (x - y).powi(2)).sum::<f64>();
                // Feasible points: random convex combinations of LMO vertices.
                for _ in 0..50 {
                    let mut u = vec![0.0; 4];
                    for _ in 0..4 {
                        let s = set.lmo(&random_grad(&mut rng, 4)).to_dense(4);
                        u.iter_mut().zip(&s).for_each(|(a, b)| *a += 0.25 * b);
                    }
                    assert!(d(&pv) <= d(&u) + 1e-12, "{}", set.name());
                }
            }
        }
    }

    #[test]
    fn bad_sets_are_named_errors() {
        for r in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let e = L1Ball::new(r, 3).unwrap_err();
            assert!(e.to_string().contains("radius"), "{e}");
        }
        assert!(matches!(L1Ball::new(1.0, 0), Err(ModelError::Empty(_))));
        for k in [0, 4] {
            let e = L1BallProduct::contiguous(1.0, 3, k).unwrap_err();
            assert!(e.to_string().contains("parties"), "{e}");
        }
        let e = L1BallProduct::new(1.0, 3, vec![vec![0, 1], vec![1, 2]]).unwrap_err();
        assert!(e.to_string().contains("disjoint"), "{e}");
        let e = L1BallProduct::new(1.0, 3, vec![vec![0, 1]]).unwrap_err();
        assert!(e.to_string().contains("cover"), "{e}");
        assert!(BoxSet::new(vec![1.0], vec![0.0]).is_err());
    }

    fn lasso_problem(n: usize, p: usize, seed: u64) -> (DenseDesign, Vec<f64>) {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let data: Vec<f64> = (0..n * p).map(|_| rng.random_range(-1.0..1.0)).collect();
        let x = DenseDesign::from_row_major(n, p, &data).unwrap();
        let y = (0..n)
            .map(|i| 0.8 * x.row(i)[0] - 0.5 * x.row(i)[1] + 0.05 * rng.random_range(-1.0..1.0))
            .collect();
        (x, y)
    }

    #[test]
    fn reference_gap_certifies_suboptimality() {
        let (x, y) = lasso_problem(60, 6, 5);
        let loss = Squared::half();
        let set = L1Ball::new(1.0, 6).unwrap();
        let sol = frank_wolfe_reference(&x, &y, &loss, &set, 1e-8, 1_000_000).unwrap();
        assert!(sol.gap <= 1e-8);
        assert!(set.contains(&sol.w, 1e-12));
        // No vertex and no random feasible point does better than objective - gap.
        let mut rng = ChaCha20Rng::seed_from_u64(9);
        let mut z = vec![0.0; 60];
        for _ in 0..2000 {
            let mut w: Vec<f64> = (0..6).map(|_| rng.random_range(-1.0..1.0)).collect();
            let l1: f64 = w.iter().map(|v| v.abs()).sum();
            let scale = rng.random_range(0.0..1.0) / l1;
            w.iter_mut().for_each(|v| *v *= scale);
            x.matvec(&w, &mut z);
            assert!(average_loss(&loss, &z, &y) >= sol.objective - sol.gap - 1e-12);
        }
        // The constraint is active here (the unconstrained optimum has l1 norm ~1.3).
        assert!(sol.w.iter().map(|v| v.abs()).sum::<f64>() > 1.0 - 1e-6);
        // Too few iterations: a named NotConverged error, not a wrong answer.
        assert!(matches!(
            frank_wolfe_reference(&x, &y, &loss, &set, 1e-12, 3),
            Err(ModelError::NotConverged(_))
        ));
    }

    #[test]
    fn reference_on_product_and_box() {
        let (x, y) = lasso_problem(40, 4, 6);
        let loss = Squared::half();
        let prod = L1BallProduct::contiguous(0.6, 4, 2).unwrap();
        let sol = frank_wolfe_reference(&x, &y, &loss, &prod, 1e-7, 1_000_000).unwrap();
        assert!(prod.contains(&sol.w, 1e-12) && sol.gap <= 1e-7);
        let bx = BoxSet::new(vec![-0.2; 4], vec![0.2; 4]).unwrap();
        let sol = frank_wolfe_reference(&x, &y, &loss, &bx, 1e-7, 1_000_000).unwrap();
        assert!(bx.contains(&sol.w, 1e-12) && sol.gap <= 1e-7);
    }
}
