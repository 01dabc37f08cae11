//! Synthetic problems of the DP-CD and DP-GCD papers, and stand-ins for the datasets the
//! project cannot ship.
//!
//! Every generator takes an explicit `u64` seed, draws from one
//! `rand_chacha::ChaCha20Rng::seed_from_u64(seed)` stream in the documented order, and
//! reproduces bit for bit with the pinned `rand` 0.9 / `rand_distr` 0.5 / `rand_chacha`
//! 0.9 (a change of those versions may change the draws).
//!
//! | function | n x p | labels | paper problem | stand-in |
//! |---|---|---|---|---|
//! | [`sparse_lasso`] | 1,000 x 1,000 | real | DP-CD "Sparse LASSO" (same generator as `square`) | no |
//! | [`square`] | 1,000 x 1,000 | real | DP-GCD "square" / "sparse", LASSO lambda = 30 | no |
//! | [`log1`] / [`log2`] | 1,000 x 100 | +1 / -1 | DP-GCD log1 / log2, logistic + L2 | no |
//! | [`madelon_like`] | 2,600 x 500 (+1 intercept column) | +1 / -1 | DP-GCD madelon | **yes** |
//! | [`dorothea_like`] | 800 x 88,119, sparse binary | +1 / -1 | DP-GCD dorothea | **yes** |
//! | [`mtp_like`] | 4,450 x 202 | real | DP-GCD mtp | **yes** |
//!
//! The papers leave most generator details open; each function's documentation says
//! exactly what is drawn and `docs/datasets.md` says which choices are ours.

use anyhow::{bail, Context, Result};
use dp_models::{Dataset, DenseDesign, Design, SparseDesign};
use rand::seq::index;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use rand_distr::{Binomial, Distribution, StandardNormal};
use statrs::distribution::{ContinuousCDF, Normal};

use crate::data::NamedDataset;

/// A generated problem: the data plus what generated them.
#[derive(Debug, Clone)]
pub struct Synthetic<D: Design> {
    /// The dataset, its name, feature names and the `stand_in` flag.
    pub data: NamedDataset<D>,
    /// The true coefficient vector of a linear generator (`None` for generators that
    /// have none, such as [`madelon_like`]).
    pub w_true: Option<Vec<f64>>,
    /// Columns that carry signal (support of `w_true`, madelon's informative and
    /// redundant columns, dorothea-like's relevant columns), increasing.
    pub relevant_features: Vec<usize>,
    /// The seed used.
    pub seed: u64,
}

impl<D: Design> Synthetic<D> {
    /// The dataset alone.
    pub fn dataset(&self) -> &Dataset<D> {
        &self.data.dataset
    }
    /// Consumes `self`, returning the dataset alone.
    pub fn into_dataset(self) -> Dataset<D> {
        self.data.dataset
    }
}

// ---------------------------------------------------------------------------------------
// Linear-model generators (log1, log2, square / sparse LASSO, mtp-like)
// ---------------------------------------------------------------------------------------

/// Which coordinates of `w_true` are non-zero.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Support {
    /// All `p` coordinates.
    All,
    /// `k` coordinates drawn uniformly without replacement
    /// (`rand::seq::index::sample(rng, p, k)`).
    Random {
        /// Number of non-zero coordinates.
        k: usize,
    },
}

/// Distribution of the non-zero entries of `w_true`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Coefficients {
    /// i.i.d. `scale * exp(mu + sigma * Z)`, `Z ~ N(0, 1)` (log-normal; all positive).
    LogNormal {
        /// Mean of the underlying normal.
        mu: f64,
        /// Standard deviation of the underlying normal.
        sigma: f64,
        /// Multiplier.
        scale: f64,
    },
    /// The `k` log-normal quantiles `scale * exp(mu + sigma * Phi^{-1}((m - 1/2) / k))`,
    /// `m = 1..k`, assigned in order to the support indices in the (random) order
    /// `index::sample` returns them. Deterministic magnitudes, random positions: the
    /// problem's difficulty does not depend on the seed's luck.
    LogNormalQuantiles {
        /// Mean of the underlying normal.
        mu: f64,
        /// Standard deviation of the underlying normal.
        sigma: f64,
        /// Multiplier.
        scale: f64,
    },
    /// i.i.d. `N(0, std^2)`.
    Normal {
        /// Standard deviation.
        std: f64,
    },
}

/// What the label is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Response {
    /// `y = X w_true + e` (regression).
    Real,
    /// `y = sign(X w_true + e)` in {-1, +1} (`+1` when the argument is `>= 0`).
    Sign,
}

/// Parameters of [`linear`]: `X_ij ~ N(0, 1)` i.i.d., `y = X w_true + e` with
/// `e_i ~ N(0, noise_std^2)` i.i.d., optionally passed through `sign`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinearParams {
    /// Number of samples.
    pub n: usize,
    /// Number of features.
    pub p: usize,
    /// Support of `w_true`.
    pub support: Support,
    /// Distribution of the non-zero coefficients.
    pub coefficients: Coefficients,
    /// Standard deviation of the additive Gaussian label noise (0 allowed).
    pub noise_std: f64,
    /// Real labels or their signs.
    pub response: Response,
}

/// Generates a linear-model problem.
///
/// Draw order from `ChaCha20Rng::seed_from_u64(seed)`:
/// 1. `X`: `n * p` standard normals (`rand_distr::StandardNormal`), row by row;
/// 2. the support (for [`Support::Random`]);
/// 3. the coefficients, one per support index in support order
///    ([`Coefficients::LogNormal`]: one standard normal each; [`Coefficients::Normal`]:
///    one standard normal each; quantiles: no draw);
/// 4. the noise: `n` standard normals times `noise_std`.
///
/// Features are named `x1 .. xp`.
pub fn linear(
    params: &LinearParams,
    seed: u64,
    name: &str,
    stand_in: bool,
) -> Result<Synthetic<DenseDesign>> {
    let LinearParams {
        n,
        p,
        support,
        coefficients,
        noise_std,
        response,
    } = *params;
    if n == 0 || p == 0 {
        bail!("linear generator: n = {n} and p = {p} must both be positive");
    }
    if !(noise_std.is_finite() && noise_std >= 0.0) {
        bail!("linear generator: noise_std = {noise_std} must be finite and >= 0");
    }
    match coefficients {
        Coefficients::LogNormal { mu, sigma, scale }
        | Coefficients::LogNormalQuantiles { mu, sigma, scale } => {
            if !(mu.is_finite() && sigma.is_finite() && sigma >= 0.0 && scale.is_finite()) {
                bail!("linear generator: log-normal coefficients need finite mu, scale and sigma >= 0 (got mu = {mu}, sigma = {sigma}, scale = {scale})");
            }
        }
        Coefficients::Normal { std } => {
            if !(std.is_finite() && std >= 0.0) {
                bail!("linear generator: normal coefficients need a finite std >= 0 (got {std})");
            }
        }
    }
    let n_p = n
        .checked_mul(p)
        .filter(|&np| np <= 200_000_000)
        .with_context(|| {
            format!("linear generator: n * p = {n} * {p} is too large for a dense design")
        })?;
    let mut rng = ChaCha20Rng::seed_from_u64(seed);

    let mut x = vec![0.0; n_p];
    for v in x.iter_mut() {
        *v = rng.sample(StandardNormal);
    }

    let support_idx: Vec<usize> = match support {
        Support::All => (0..p).collect(),
        Support::Random { k } => {
            if k == 0 || k > p {
                bail!("linear generator: support size k = {k} must be in 1..={p}");
            }
            index::sample(&mut rng, p, k).into_vec()
        }
    };
    let k = support_idx.len();
    let mut w = vec![0.0; p];
    match coefficients {
        Coefficients::LogNormal { mu, sigma, scale } => {
            for &j in &support_idx {
                let z: f64 = rng.sample(StandardNormal);
                w[j] = scale * (mu + sigma * z).exp();
            }
        }
        Coefficients::LogNormalQuantiles { mu, sigma, scale } => {
            let normal = Normal::new(0.0, 1.0).context("standard normal")?;
            for (m, &j) in support_idx.iter().enumerate() {
                let q = (m as f64 + 0.5) / k as f64;
                w[j] = scale * (mu + sigma * normal.inverse_cdf(q)).exp();
            }
        }
        Coefficients::Normal { std } => {
            for &j in &support_idx {
                let z: f64 = rng.sample(StandardNormal);
                w[j] = std * z;
            }
        }
    }

    let mut y = Vec::with_capacity(n);
    for i in 0..n {
        let row = &x[i * p..(i + 1) * p];
        let signal: f64 = row.iter().zip(&w).map(|(a, b)| a * b).sum();
        let e: f64 = rng.sample(StandardNormal);
        let v = signal + noise_std * e;
        y.push(match response {
            Response::Real => v,
            Response::Sign => {
                if v >= 0.0 {
                    1.0
                } else {
                    -1.0
                }
            }
        });
    }
    let design = DenseDesign::from_row_major(n, p, &x).context("building the design")?;
    let dataset = Dataset::new(design, y).context("pairing design and labels")?;
    let mut relevant = support_idx;
    relevant.sort_unstable();
    Ok(Synthetic {
        data: NamedDataset {
            name: name.into(),
            dataset,
            feature_names: (1..=p).map(|j| format!("x{j}")).collect(),
            target_name: "y".into(),
            stand_in,
        },
        w_true: Some(w),
        relevant_features: relevant,
        seed,
    })
}

/// Regularisation of the DP-GCD paper's log1 / log2 problems (logistic + L2).
pub const LOG_LAMBDA: f64 = 1e-3;

/// Parameters of [`log1`]: 1,000 x 100, `w_true_j = exp(Z_j)` (log-normal(0, 1)) on all
/// coordinates, labels `sign(X w_true + e)`, `e ~ N(0, 1)`.
pub const LOG1: LinearParams = LinearParams {
    n: 1000,
    p: 100,
    support: Support::All,
    coefficients: Coefficients::LogNormal {
        mu: 0.0,
        sigma: 1.0,
        scale: 1.0,
    },
    noise_std: 1.0,
    response: Response::Sign,
};

/// Parameters of [`log2`]: as [`LOG1`] with log-normal sigma = 2 (more imbalanced).
pub const LOG2: LinearParams = LinearParams {
    coefficients: Coefficients::LogNormal {
        mu: 0.0,
        sigma: 2.0,
        scale: 1.0,
    },
    ..LOG1
};

/// DP-GCD's log1 (Table 1, Sec. 5): `X` 1,000 x 100 i.i.d. N(0, 1),
/// `w_true` i.i.d. log-normal(0, 1) (all positive; the paper mentions no signs),
/// `y = sign(X w_true + e)`, `e ~ N(0, 1)` (the paper writes `y = X w_true + e`; a
/// logistic loss needs binary labels). Used with logistic loss + L2, lambda =
/// [`LOG_LAMBDA`]. See [`linear`] for the draw order.
pub fn log1(seed: u64) -> Result<Synthetic<DenseDesign>> {
    linear(&LOG1, seed, "log1", false)
}

/// DP-GCD's log2: as [`log1`] with `w_true` log-normal(0, 2).
pub fn log2(seed: u64) -> Result<Synthetic<DenseDesign>> {
    linear(&LOG2, seed, "log2", false)
}

/// LASSO strength for [`square`] / [`sparse_lasso`] with the objective
/// `F(w) = (1/(2n)) ||X w - y||^2 + lambda ||w||_1` (`Squared::half`). With the DP-CD
/// paper's `(1/n) sum (x_i^T w - y_i)^2` (`Squared::full`) the same problem is
/// `lambda = 2 * 30 = 60`.
pub const SQUARE_LAMBDA: f64 = 30.0;

/// The seed of the canonical `square` / `sparse-lasso` instance, at which
/// [`SQUARE_SCALE`] was calibrated (any seed gives a problem of the same family; see
/// `docs/datasets.md` for how the plateau and support vary with it).
pub const SQUARE_SEED: u64 = 2;

/// Common scale of the coefficients and of the label noise of [`square`]. Calibrated by
/// bisection (at [`SQUARE_SEED`]) so that at [`SQUARE_LAMBDA`] the relative error of
/// `w = 0` is the papers' plateau `(F(0) - F*) / F* = 0.7551`; the LASSO solution then
/// has 7 non-zeros, as the DP-GCD paper reports for its square problem.
pub const SQUARE_SCALE: f64 = 43.47;

/// Parameters of [`square`]: 1,000 x 1,000, 10 random non-zeros whose magnitudes are
/// `43.47 exp(0.75 Phi^{-1}((m - 1/2)/10))`, m = 1..10 (the deciles of
/// `43.47 * log-normal(0, 0.75^2)`: 12.7, 20.0, 26.2, 32.6, 39.6, 47.8, 58.0, 72.1,
/// 94.6, 149.3), real labels with `N(0, 43.47^2)` noise.
pub const SQUARE: LinearParams = LinearParams {
    n: 1000,
    p: 1000,
    support: Support::Random { k: 10 },
    coefficients: Coefficients::LogNormalQuantiles {
        mu: 0.0,
        sigma: 0.75,
        scale: SQUARE_SCALE,
    },
    noise_std: SQUARE_SCALE,
    response: Response::Real,
};

/// DP-GCD's "square" (also called "sparse"): `X` 1,000 x 1,000 i.i.d. N(0, 1), `w_true`
/// with 10 non-zeros at random positions (magnitudes in [`SQUARE`]),
/// `y = X w_true + e`, `e ~ N(0, 43.47^2)`: in units of [`SQUARE_SCALE`], log-normal
/// coefficients and unit noise "generated similarly" to log1 / log2. LASSO with lambda =
/// [`SQUARE_LAMBDA`]. The magnitudes, noise level and scale are our choice, calibrated to
/// the papers' targets (plateau 0.7551 and `||w*||_0 = 7` at [`SQUARE_SEED`]); see
/// `docs/datasets.md`.
pub fn square(seed: u64) -> Result<Synthetic<DenseDesign>> {
    linear(&SQUARE, seed, "square", false)
}

/// The DP-CD paper's Sparse LASSO: the same generator as [`square`] (the DP-GCD paper,
/// by the same authors, describes its "square" problem as the DP-CD paper describes
/// this one, and both report the plateau 0.75), named `sparse-lasso`. Use
/// [`SQUARE_SEED`] and [`SQUARE_LAMBDA`] for the calibrated instance.
pub fn sparse_lasso(seed: u64) -> Result<Synthetic<DenseDesign>> {
    linear(&SQUARE, seed, "sparse-lasso", false)
}

/// Parameters of [`mtp_like`]: 4,450 x 202, dense `w_true ~ N(0, 1)`, noise `N(0, 1)`.
pub const MTP_LIKE: LinearParams = LinearParams {
    n: 4450,
    p: 202,
    support: Support::All,
    coefficients: Coefficients::Normal { std: 1.0 },
    noise_std: 1.0,
    response: Response::Real,
};

/// Stand-in for OpenML `mtp` (4,450 x 202 regression), which no package ships:
/// `X` i.i.d. N(0, 1), dense `w_true ~ N(0, 1)` (the paper's point about mtp is that
/// its solution is *not* imbalanced), `y = X w_true + e`, `e ~ N(0, 1)`. Used with least
/// squares + L2 (lambda = 5e-8 in the paper). Name `mtp-like`, `stand_in = true`.
pub fn mtp_like(seed: u64) -> Result<Synthetic<DenseDesign>> {
    linear(&MTP_LIKE, seed, "mtp-like", true)
}

// ---------------------------------------------------------------------------------------
// scikit-learn's make_classification (Guyon's madelon generator)
// ---------------------------------------------------------------------------------------

/// Parameters of [`make_classification`], named and defaulted as in scikit-learn
/// (`weights` is not supported: classes are balanced).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClassificationParams {
    /// Number of samples.
    pub n_samples: usize,
    /// Total number of features.
    pub n_features: usize,
    /// Informative features (the hypercube's dimension).
    pub n_informative: usize,
    /// Random linear combinations of the informative features.
    pub n_redundant: usize,
    /// Copies of informative / redundant features.
    pub n_repeated: usize,
    /// Number of classes.
    pub n_classes: usize,
    /// Gaussian clusters per class.
    pub n_clusters_per_class: usize,
    /// Fraction of samples whose class is re-drawn uniformly at random.
    pub flip_y: f64,
    /// Half the side of the hypercube.
    pub class_sep: f64,
    /// Clusters on the hypercube's vertices (`false`: a random polytope).
    pub hypercube: bool,
    /// Added to every feature; `None` draws one per feature in `[-class_sep, class_sep]`.
    pub shift: Option<f64>,
    /// Multiplies every feature after the shift; `None` draws one per feature in `[1, 101]`.
    pub scale: Option<f64>,
    /// Permute samples and then features.
    pub shuffle: bool,
}

impl Default for ClassificationParams {
    /// scikit-learn's defaults.
    fn default() -> Self {
        Self {
            n_samples: 100,
            n_features: 20,
            n_informative: 2,
            n_redundant: 2,
            n_repeated: 0,
            n_classes: 2,
            n_clusters_per_class: 2,
            flip_y: 0.01,
            class_sep: 1.0,
            hypercube: true,
            shift: Some(0.0),
            scale: Some(1.0),
            shuffle: true,
        }
    }
}

/// Madelon's parameters (Guyon 2003, NIPS feature-selection challenge): 2,600 samples
/// (the 2,000 training + 600 validation rows), 500 features of which 5 informative and
/// 15 linear combinations of them, 480 noise features; 32 clusters (16 per class) on the
/// vertices of the 5-dimensional hypercube; 1 % of labels re-drawn.
pub const MADELON: ClassificationParams = ClassificationParams {
    n_samples: 2600,
    n_features: 500,
    n_informative: 5,
    n_redundant: 15,
    n_repeated: 0,
    n_classes: 2,
    n_clusters_per_class: 16,
    flip_y: 0.01,
    class_sep: 1.0,
    hypercube: true,
    shift: Some(0.0),
    scale: Some(1.0),
    shuffle: true,
};

/// Output of [`make_classification`].
#[derive(Debug, Clone, PartialEq)]
pub struct Classification {
    /// The `n_samples x n_features` design.
    pub x: DenseDesign,
    /// Class of each sample, in `0..n_classes`.
    pub classes: Vec<usize>,
    /// Final positions of the informative, redundant and repeated columns, increasing.
    pub useful_features: Vec<usize>,
}

/// A port of scikit-learn's `make_classification` (`sklearn/datasets/_samples_generator.py`),
/// the algorithm scikit-learn documents as Guyon's generator of the madelon data.
/// Same steps in the same order, with ChaCha20 instead of NumPy's Mersenne Twister (so
/// the numbers differ from scikit-learn's for any seed; the distribution is the same):
///
/// 1. split `n_samples` over `n_classes * n_clusters_per_class` clusters
///    (`floor(n / n_classes / n_clusters_per_class)` each, the remainder one by one);
/// 2. centroids: distinct random vertices of `{0, 1}^n_informative` (uniform sample
///    without replacement of integers in `0..2^d`, bits most significant first; above
///    30 dimensions the extra leading bits are i.i.d. coin flips), mapped to
///    `{-class_sep, +class_sep}`; if `!hypercube`, multiplied by a uniform per cluster
///    and a uniform per dimension;
/// 3. informative block: `n_samples x n_informative` standard normals (row by row);
/// 4. per cluster `k` (class `k % n_classes`): `X_k <- X_k A_k + centroid_k` with
///    `A_k` uniform on `[-1, 1]^{d x d}` (row by row);
/// 5. redundant block `X_inf B`, `B` uniform on `[-1, 1]^{d x n_redundant}`;
/// 6. repeated columns: `floor((n_inf + n_red - 1) U + 1/2)` for `U` uniform;
/// 7. noise columns: standard normals (row by row);
/// 8. labels flipped: each sample with probability `flip_y` gets a uniform class;
/// 9. shift, then scale (drawn if `None`);
/// 10. if `shuffle`: a uniform permutation of the samples, then of the features.
pub fn make_classification(params: &ClassificationParams, seed: u64) -> Result<Classification> {
    let ClassificationParams {
        n_samples: n,
        n_features: p,
        n_informative: d,
        n_redundant,
        n_repeated,
        n_classes,
        n_clusters_per_class,
        flip_y,
        class_sep,
        hypercube,
        shift,
        scale,
        shuffle,
    } = *params;
    if n == 0 || p == 0 || d == 0 || n_classes == 0 || n_clusters_per_class == 0 {
        bail!("make_classification: n_samples, n_features, n_informative, n_classes and n_clusters_per_class must be positive");
    }
    if d + n_redundant + n_repeated > p {
        bail!("make_classification: n_informative + n_redundant + n_repeated = {} exceeds n_features = {p}", d + n_redundant + n_repeated);
    }
    let n_clusters = n_classes
        .checked_mul(n_clusters_per_class)
        .context("make_classification: too many clusters")?;
    if (d as f64) < (n_clusters as f64).log2() {
        bail!("make_classification: n_classes * n_clusters_per_class = {n_clusters} must be <= 2^n_informative = 2^{d}");
    }
    if !(0.0..=1.0).contains(&flip_y) {
        bail!("make_classification: flip_y = {flip_y} must be in [0, 1]");
    }
    if !(class_sep.is_finite() && class_sep > 0.0) {
        bail!("make_classification: class_sep = {class_sep} must be finite and > 0");
    }
    if shift.is_some_and(|s| !s.is_finite()) || scale.is_some_and(|s| !(s.is_finite() && s > 0.0)) {
        bail!("make_classification: shift must be finite and scale finite and > 0");
    }
    if n.checked_mul(p).is_none_or(|np| np > 200_000_000) {
        bail!("make_classification: n_samples * n_features = {n} * {p} is too large for a dense design");
    }
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let uniform = |rng: &mut ChaCha20Rng| -> f64 { rng.random::<f64>() };

    // 1. samples per cluster
    let mut per_cluster: Vec<usize> = (0..n_clusters)
        .map(|_| n / n_classes / n_clusters_per_class)
        .collect();
    let assigned: usize = per_cluster.iter().sum();
    for i in 0..(n - assigned) {
        per_cluster[i % n_clusters] += 1;
    }

    // 2. centroids (n_clusters x d, row-major)
    let mut centroids = hypercube_vertices(n_clusters, d, &mut rng)?;
    for c in centroids.iter_mut() {
        *c = *c * 2.0 * class_sep - class_sep;
    }
    if !hypercube {
        for k in 0..n_clusters {
            let u = uniform(&mut rng);
            for c in &mut centroids[k * d..(k + 1) * d] {
                *c *= u;
            }
        }
        let u: Vec<f64> = (0..d).map(|_| uniform(&mut rng)).collect();
        for k in 0..n_clusters {
            for (c, &uj) in centroids[k * d..(k + 1) * d].iter_mut().zip(&u) {
                *c *= uj;
            }
        }
    }

    // X row-major, n x p
    let mut x = vec![0.0; n * p];
    let mut classes = vec![0usize; n];
    // 3. informative block
    for i in 0..n {
        for j in 0..d {
            x[i * p + j] = rng.sample(StandardNormal);
        }
    }
    // 4. clusters
    let mut start = 0;
    let mut a = vec![0.0; d * d];
    let mut tmp = vec![0.0; d];
    for (k, &size) in per_cluster.iter().enumerate() {
        let stop = start + size;
        for v in a.iter_mut() {
            *v = 2.0 * uniform(&mut rng) - 1.0;
        }
        let centroid = &centroids[k * d..(k + 1) * d];
        for i in start..stop {
            classes[i] = k % n_classes;
            let row = &x[i * p..i * p + d];
            for (c, t) in tmp.iter_mut().enumerate() {
                *t = (0..d).map(|r| row[r] * a[r * d + c]).sum::<f64>() + centroid[c];
            }
            x[i * p..i * p + d].copy_from_slice(&tmp);
        }
        start = stop;
    }
    // 5. redundant
    if n_redundant > 0 {
        let b: Vec<f64> = (0..d * n_redundant)
            .map(|_| 2.0 * uniform(&mut rng) - 1.0)
            .collect();
        for i in 0..n {
            for c in 0..n_redundant {
                let v: f64 = (0..d).map(|r| x[i * p + r] * b[r * n_redundant + c]).sum();
                x[i * p + d + c] = v;
            }
        }
    }
    // 6. repeated
    if n_repeated > 0 {
        let m = d + n_redundant;
        let idx: Vec<usize> = (0..n_repeated)
            .map(|_| ((m as f64 - 1.0) * uniform(&mut rng) + 0.5) as usize)
            .collect();
        for i in 0..n {
            for (c, &src) in idx.iter().enumerate() {
                x[i * p + m + c] = x[i * p + src];
            }
        }
    }
    // 7. useless
    let n_useful = d + n_redundant + n_repeated;
    for i in 0..n {
        for j in n_useful..p {
            x[i * p + j] = rng.sample(StandardNormal);
        }
    }
    // 8. flips: the mask first, then one class per flipped sample, in sample order
    let mask: Vec<bool> = (0..n).map(|_| uniform(&mut rng) < flip_y).collect();
    for (i, &m) in mask.iter().enumerate() {
        if m {
            classes[i] = rng.random_range(0..n_classes);
        }
    }
    // 9. shift and scale
    let shifts: Vec<f64> = match shift {
        Some(s) => vec![s; p],
        None => (0..p)
            .map(|_| (2.0 * uniform(&mut rng) - 1.0) * class_sep)
            .collect(),
    };
    let scales: Vec<f64> = match scale {
        Some(s) => vec![s; p],
        None => (0..p).map(|_| 1.0 + 100.0 * uniform(&mut rng)).collect(),
    };
    for i in 0..n {
        for j in 0..p {
            x[i * p + j] = (x[i * p + j] + shifts[j]) * scales[j];
        }
    }
    // 10. shuffle samples, then features
    let mut useful: Vec<usize> = (0..n_useful).collect();
    if shuffle {
        let mut rows: Vec<usize> = (0..n).collect();
        rows.shuffle(&mut rng);
        let mut cols: Vec<usize> = (0..p).collect();
        cols.shuffle(&mut rng);
        let mut shuffled = vec![0.0; n * p];
        let mut shuffled_classes = vec![0usize; n];
        for (new_i, &old_i) in rows.iter().enumerate() {
            shuffled_classes[new_i] = classes[old_i];
            for (new_j, &old_j) in cols.iter().enumerate() {
                shuffled[new_i * p + new_j] = x[old_i * p + old_j];
            }
        }
        x = shuffled;
        classes = shuffled_classes;
        useful = cols
            .iter()
            .enumerate()
            .filter(|(_, &old)| old < n_useful)
            .map(|(new, _)| new)
            .collect();
    }
    let x = DenseDesign::from_row_major(n, p, &x).context("building the design")?;
    Ok(Classification {
        x,
        classes,
        useful_features: useful,
    })
}

/// Distinct random vertices of `{0,1}^d`, `samples x d` row-major (scikit-learn's
/// `_generate_hypercube`).
fn hypercube_vertices(samples: usize, d: usize, rng: &mut ChaCha20Rng) -> Result<Vec<f64>> {
    let mut out = vec![0.0; samples * d];
    let (extra, low) = if d > 30 { (d - 30, 30) } else { (0, d) };
    // Leading i.i.d. bits (numpy's randint(2, size=(samples, d - 30))), row by row.
    for s in 0..samples {
        for c in 0..extra {
            out[s * d + c] = f64::from(u8::from(rng.random::<bool>()));
        }
    }
    let space = 1usize << low;
    if samples > space {
        bail!("make_classification: {samples} clusters need more than the 2^{low} vertices of the hypercube");
    }
    let picks = index::sample(rng, space, samples).into_vec();
    for (s, &v) in picks.iter().enumerate() {
        for c in 0..low {
            let bit = (v >> (low - 1 - c)) & 1;
            out[s * d + extra + c] = bit as f64;
        }
    }
    Ok(out)
}

/// Stand-in for madelon (Guyon 2003; OpenML 1485, 2,600 x 500, labels +1 / -1), which no
/// package ships: [`make_classification`] with [`MADELON`], class 1 -> +1, class 0 -> -1.
/// With `intercept`, a column of ones is appended as feature 501 (`"intercept"`): the
/// DP-GCD paper reports p = 501 for madelon, most plausibly 500 features plus a bias
/// column (see `docs/datasets.md`). Real madelon's features are integers (shifted and
/// rescaled); this port keeps scikit-learn's `shift = 0`, `scale = 1`. Name
/// `madelon-like`, `stand_in = true`.
pub fn madelon_like(seed: u64, intercept: bool) -> Result<Synthetic<DenseDesign>> {
    let c = make_classification(&MADELON, seed)?;
    let n = MADELON.n_samples;
    let p0 = MADELON.n_features;
    let y: Vec<f64> = c
        .classes
        .iter()
        .map(|&k| if k == 1 { 1.0 } else { -1.0 })
        .collect();
    let mut names: Vec<String> = (1..=p0).map(|j| format!("x{j}")).collect();
    let design = if intercept {
        names.push("intercept".into());
        let mut cols = Vec::with_capacity(n * (p0 + 1));
        for j in 0..p0 {
            cols.extend_from_slice(c.x.col(j));
        }
        cols.extend(std::iter::repeat_n(1.0, n));
        DenseDesign::from_col_major(n, p0 + 1, &cols).context("adding the intercept column")?
    } else {
        c.x
    };
    let dataset = Dataset::new(design, y).context("pairing design and labels")?;
    Ok(Synthetic {
        data: NamedDataset {
            name: "madelon-like".into(),
            dataset,
            feature_names: names,
            target_name: "y".into(),
            stand_in: true,
        },
        w_true: None,
        relevant_features: c.useful_features,
        seed,
    })
}

// ---------------------------------------------------------------------------------------
// dorothea-like
// ---------------------------------------------------------------------------------------

/// Parameters of [`dorothea_like_with`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DorotheaParams {
    /// Number of samples (dorothea's training split: 800).
    pub n: usize,
    /// Number of features (88,119: dorothea's columns that are non-zero in the training split).
    pub p: usize,
    /// Target fraction of non-zero entries (about 0.9 %).
    pub density: f64,
    /// Spread (log-normal sigma) of the per-column frequencies.
    pub frequency_sigma: f64,
    /// Number of positive samples (dorothea's training split: 78 of 800).
    pub n_positive: usize,
    /// Number of columns that carry signal.
    pub n_relevant: usize,
    /// Standard deviation of the Gaussian noise added to the latent score.
    pub score_noise: f64,
}

/// Dorothea's shape and balance: 800 x 88,119, density 0.9 %, 78 positives.
pub const DOROTHEA: DorotheaParams = DorotheaParams {
    n: 800,
    p: 88_119,
    density: 0.009,
    frequency_sigma: 1.1,
    n_positive: 78,
    n_relevant: 150,
    score_noise: 0.1,
};

/// Stand-in for dorothea (NIPS 2003 challenge; 800 training rows, binary sparse
/// features, 78 positives), which no package ships. See [`dorothea_like_with`]. Name
/// `dorothea-like`, `stand_in = true`.
pub fn dorothea_like(seed: u64) -> Result<Synthetic<SparseDesign>> {
    dorothea_like_with(&DOROTHEA, seed)
}

/// The dorothea-like generator. Draw order:
/// 1. per column `j = 0..p`: a frequency `f_j = min(1/2, c exp(s Z_j))`, `Z_j ~ N(0, 1)`,
///    `s = frequency_sigma`, `c = ((density n - 1) / (n - 1)) exp(-s^2 / 2)`; a count
///    `k_j = 1 + Binomial(n - 1, f_j)` (every column is non-zero somewhere, as in the
///    paper's 88,119 retained columns); `k_j` distinct rows
///    (`index::sample(rng, n, k_j)`) set to 1;
/// 2. `n_relevant` relevant columns uniformly without replacement, with weights
///    `v_j ~ N(0, 1)` (in that order);
/// 3. per sample a latent score `sum_{j relevant} v_j x_ij + score_noise * N(0, 1)`;
///    the `n_positive` samples with the highest scores get +1, the others -1 (ties,
///    which have probability zero, by lower index).
///
/// The column-frequency law and the label mechanism are ours (dorothea's real ones are
/// not public); the shape, binary values, density and class balance match dorothea.
pub fn dorothea_like_with(params: &DorotheaParams, seed: u64) -> Result<Synthetic<SparseDesign>> {
    let DorotheaParams {
        n,
        p,
        density,
        frequency_sigma: s,
        n_positive,
        n_relevant,
        score_noise,
    } = *params;
    if n < 2 || p == 0 {
        bail!("dorothea-like: need n >= 2 and p >= 1 (got n = {n}, p = {p})");
    }
    if !(density.is_finite() && density * n as f64 >= 1.0 && density <= 0.5) {
        bail!("dorothea-like: density = {density} must be in [1/n, 1/2]");
    }
    if !(s.is_finite() && s >= 0.0 && score_noise.is_finite() && score_noise >= 0.0) {
        bail!("dorothea-like: frequency_sigma and score_noise must be finite and >= 0");
    }
    if n_positive > n || n_relevant == 0 || n_relevant > p {
        bail!("dorothea-like: need n_positive <= n and 1 <= n_relevant <= p");
    }
    if p > 10_000_000 || (density * n as f64 * p as f64) > 5e8 {
        bail!("dorothea-like: the requested design is too large");
    }
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let c = (density * n as f64 - 1.0) / (n as f64 - 1.0) * (-s * s / 2.0).exp();
    let mut triplets: Vec<(usize, usize, f64)> =
        Vec::with_capacity((density * n as f64 * p as f64 * 1.1) as usize);
    for j in 0..p {
        let z: f64 = rng.sample(StandardNormal);
        let f = (c * (s * z).exp()).min(0.5);
        let extra = Binomial::new((n - 1) as u64, f)
            .context("dorothea-like: binomial")?
            .sample(&mut rng) as usize;
        for i in index::sample(&mut rng, n, 1 + extra) {
            triplets.push((i, j, 1.0));
        }
    }
    let relevant = index::sample(&mut rng, p, n_relevant).into_vec();
    let weights: Vec<f64> = (0..n_relevant)
        .map(|_| rng.sample(StandardNormal))
        .collect();
    let x = SparseDesign::from_triplets(n, p, &triplets).context("building the sparse design")?;
    let mut w = vec![0.0; p];
    for (&j, &v) in relevant.iter().zip(&weights) {
        w[j] = v;
    }
    let mut score = vec![0.0; n];
    x.matvec(&w, &mut score);
    for sc in score.iter_mut() {
        let e: f64 = rng.sample(StandardNormal);
        *sc += score_noise * e;
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| score[b].total_cmp(&score[a]).then(a.cmp(&b)));
    let mut y = vec![-1.0; n];
    for &i in order.iter().take(n_positive) {
        y[i] = 1.0;
    }
    let dataset = Dataset::new(x, y).context("pairing design and labels")?;
    let mut rel = relevant;
    rel.sort_unstable();
    Ok(Synthetic {
        data: NamedDataset {
            name: "dorothea-like".into(),
            dataset,
            feature_names: (1..=p).map(|j| format!("x{j}")).collect(),
            target_name: "y".into(),
            stand_in: true,
        },
        w_true: Some(w),
        relevant_features: rel,
        seed,
    })
}

#[cfg(test)]
pub(crate) mod tests;
