//! One Laplace release of every `M_j` under per-feature and row-norm bounds (the
//! knapsack sensitivity), the noise floor and the upper-bound shift, and the clipped
//! per-row means it and the Gaussian release share.

use super::*;

/// Public bounds a caller can state about each row `x_i` for
/// [`private_coordinate_smoothness_bounded`]: per-feature bounds `|x_ij| <= b_j`, a
/// row-norm bound `||x_i||_2 <= R`, or both. At least one must be given.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SmoothnessBounds<'a> {
    /// `b_j >= |x_ij|`, one per feature (each finite and > 0).
    pub feature_bounds: Option<&'a [f64]>,
    /// `R >= ||x_i||_2` (finite and > 0).
    pub row_norm_bound: Option<f64>,
}

/// The neighbouring relation a private estimate of the constants is analysed under,
/// and the record count its mean is normalised by.
///
/// * [`Neighbours::ReplaceOne`] (the default): datasets of the same size `n` differing
///   in one record; `n` is public under this relation and the mean is `(1/n) sum_i`.
/// * [`Neighbours::AddRemove`]: one dataset is the other with one record added or
///   removed. The true size is then private, so the mean is normalised by a **stated
///   public count** `public_n` (the convention of Opacus, which divides by the expected
///   batch size `q N`), never by the data's own size. With a public normaliser one
///   record moves the sum by one row's term, half the replace-one sensitivity; with the
///   true size of each neighbour (`S/n` against `(S + u)/(n + 1)`) the difference can
///   be `2 ||u|| / (n + 1)` and nothing would be gained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Neighbours {
    /// Replace one record; `n` (the design's size) public.
    #[default]
    ReplaceOne,
    /// Add or remove one record; the mean is normalised by `public_n`.
    AddRemove {
        /// The record count stated as public (> 0), used instead of the data's size.
        public_n: usize,
    },
}

impl Neighbours {
    /// The normaliser of the mean: the design's `n` under replace-one, `public_n`
    /// under add/remove (an error if it is 0).
    pub fn normaliser(self, n: usize) -> Result<usize> {
        match self {
            Neighbours::ReplaceOne => Ok(n),
            Neighbours::AddRemove { public_n: 0 } => Err(ModelError::InvalidParameter {
                name: "public_n",
                value: 0.0,
                expected: "the public record count of an add/remove estimate must be > 0",
            }),
            Neighbours::AddRemove { public_n } => Ok(public_n),
        }
    }
}

/// Options of [`private_coordinate_smoothness_bounded`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BoundedSmoothnessOptions {
    /// Public floor, as a fraction of each coordinate's ceiling `c cap_j` (default
    /// `1e-6`; finite, in (0, 1]). The floor applied is the larger of this and the
    /// release's noise level ([`noise_floor`]), so it matters only when the noise is
    /// tiny against the ceiling.
    pub floor_fraction: f64,
    /// `Some(beta)`: shift every estimate up by `k` Laplace scales, with
    /// `k = max(0, ln(p / (2 beta)))`, so that with probability at least `1 - beta`
    /// (over the noise) every released `M_j` is an upper bound on the clipped mean it
    /// estimates (see the function's *Upper bound* section). `None`: the unbiased
    /// estimate (then clamped). Default `Some(0.05)`. `beta` must be in (0, 1).
    pub failure_probability: Option<f64>,
    /// The neighbouring relation of the release (default [`Neighbours::ReplaceOne`]);
    /// under [`Neighbours::AddRemove`] the mean is normalised by the stated `public_n`
    /// and the sensitivity is the add/remove one (see each function's *Privacy*).
    /// [`private_global_smoothness`] supports replace-one only.
    pub neighbours: Neighbours,
}

impl Default for BoundedSmoothnessOptions {
    fn default() -> Self {
        Self {
            floor_fraction: 1e-6,
            failure_probability: Some(0.05),
            neighbours: Neighbours::ReplaceOne,
        }
    }
}

/// What [`private_coordinate_smoothness_bounded`] released, with its bookkeeping.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BoundedSmoothness {
    /// The post-processed estimates, tagged [`Provenance::PrivatelyEstimated`] with the
    /// epsilon charged.
    pub estimates: Tagged<Vec<f64>>,
    /// Public ceilings `c cap_j`, `cap_j = min(b_j^2, R^2)` (missing bounds omitted).
    pub ceilings: Vec<f64>,
    /// Laplace scale of each coordinate's noise, `c cap_j * Delta / eps`.
    pub laplace_scales: Vec<f64>,
    /// `Delta`: the L1 sensitivity of the normalised query `(1/n) sum_i u_i`.
    pub normalised_sensitivity: f64,
    /// Upward shift applied, in Laplace scales (`k`; 0 without `failure_probability`).
    pub shift_in_scales: f64,
    /// Pure epsilon charged (one release).
    pub epsilon: f64,
    /// How many estimates were raised to the floor.
    pub floored: usize,
    /// How many estimates were lowered to the ceiling.
    pub ceiled: usize,
}

/// `max { sum_j u_j : u in [0, 1]^p, sum_j u_j cap_j <= r2 }`: the fractional knapsack,
/// solved exactly by taking the cheapest coordinates first (`r2 = inf`: `p`).
pub(super) fn knapsack_units(caps: &[f64], r2: f64) -> f64 {
    if !r2.is_finite() {
        return caps.len() as f64;
    }
    let mut sorted = caps.to_vec();
    sorted.sort_by(f64::total_cmp);
    let (mut left, mut units) = (r2, 0.0);
    for cap in sorted {
        if cap <= left {
            left -= cap;
            units += 1.0;
        } else {
            units += left / cap;
            break;
        }
    }
    units
}

/// Differentially private coordinate-wise smoothness constants from public row bounds,
/// all `p` at once with one Laplace release whose noise does not grow with `p` when a
/// row-norm bound is known:
///
/// ```text
/// cap_j = min(b_j^2, R^2)                  (a missing bound is omitted; R alone: cap_j = R^2)
/// s_i   = min(1, R^2 / ||x_i||^2)          (row clipping to norm R; 1 without R)
/// u_ij  = min(c x_ij^2 s_i, c cap_j) / (c cap_j)   in [0, 1]
/// y_j   = (1/n) sum_i u_ij + Lap(Delta / eps)
/// Delta = min(2 K, p) / n,   K = max { sum_j u_j : u in [0,1]^p, sum_j u_j cap_j <= R^2 }
///                           (add/remove, public count N: (1/N) sum_i, Delta = min(K, p) / N)
/// M_j   = clamp(c cap_j y_j + k c cap_j Delta / eps,  f_j,  c cap_j)
/// f_j   = noise_floor(c cap_j, floor_fraction, k, c cap_j Delta / eps)
///       = min(c cap_j, max(floor_fraction c cap_j, max(k, 1) c cap_j Delta / eps))
/// ```
///
/// with `k = max(0, ln(p / (2 beta)))` when `failure_probability = Some(beta)`, else 0.
/// With only a row-norm bound (every `cap_j = R^2`) `K = 1` and each coordinate's
/// noise has scale `2 c R^2 / (n eps)` for any `p`; with only per-feature bounds
/// `K = p` and the scale is `c b_j^2 p / (n eps)`, half the per-coordinate scale of the
/// DP-CD paper's eq. (126) ([`private_coordinate_smoothness_with`]). One pure-DP release
/// of `eps` is charged to `ledger` *before* anything is computed from the data.
///
/// # Privacy
///
/// *Neighbouring relation*: replace-one (`n` fixed and public), as in DP-CD, by
/// default; add/remove with `opts.neighbours = Neighbours::AddRemove { public_n }`
/// (see the last paragraph).
/// *Precondition*: none on the data; the bounds are public (chosen without looking at
/// the data, or charged separately). Row clipping (`s_i`) and the per-coordinate cap
/// enforce them, so rows that violate them change the estimate's accuracy, not the
/// guarantee.
/// *Claim*: the released vector `(M_j)` is `eps`-DP.
/// *Proof*: for any row, `u_i = (u_ij)_j` lies in `U = { u in [0,1]^p : sum_j u_j cap_j
/// <= R^2 }`, because `c cap_j u_ij <= c x_ij^2 s_i` and `sum_j x_ij^2 s_i =
/// min(||x_i||^2, R^2)`. Replacing row `i` by `i'` moves `y = (1/n) sum_i u_i` by
/// `(u_i - u_i') / n` with `||u_i - u_i'||_1 <= min(||u_i||_1 + ||u_i'||_1, p) <=
/// min(2 K, p)` (entries in `[0, 1]` are non-negative and differ by at most 1), and
/// `K` is the maximum of `||u||_1` over `U` (a linear program whose optimum the greedy
/// fill by increasing `cap_j` attains). So `y` has L1 sensitivity `Delta`, and adding
/// i.i.d. `Lap(Delta / eps)` noise to every coordinate is `eps`-DP (Dwork & Roth 2014,
/// Thm 3.6). `M_j` is a coordinate-wise function of the noisy `y` and public constants:
/// post-processing (Prop. 2.1). The charged epsilon is the Laplace privacy map of that
/// scale and sensitivity, rounded up. The sampler is a floating-point idealisation of
/// Laplace noise (Mironov 2012); see `dp_accounting::mechanisms`.
///
/// *Add/remove* ([`Neighbours::AddRemove`]): the mean is `y = (1/N) sum_i u_i` with the
/// stated public `N` (never the data's size), and the sensitivity is
/// `Delta = min(K, p) / N`. *Proof*: adding or removing row `i` moves `y` by `u_i / N`,
/// and `||u_i||_1 <= min(K, p)` (`u_i` is in `U`, and has `p` entries in `[0, 1]`).
/// The rest of the argument is unchanged. With a row-norm bound alone (`K = 1`) this is
/// half the replace-one `2 / n`; with per-feature bounds alone (`K >= p`) both are
/// `p / n`. The estimate is then of `(N_true / N) m_j`, which is `m_j` when the stated
/// count is the true one.
///
/// *Upper bound* (what the step sizes `1/M_j` need): let `m_j = (1/n) sum_i min(c x_ij^2
/// s_i, c cap_j)` be the clipped mean (equal to the true `M_j = (c/n) sum_i x_ij^2`
/// when the rows satisfy the bounds). Before clamping the estimate is `m_j + c cap_j
/// (Z_j + k) Delta / eps` with `Z_j` standard Laplace, so `P(estimate < m_j) = P(Z_j <
/// -k) = e^{-k} / 2`, and by the union bound every coordinate is an upper bound with
/// probability at least `1 - p e^{-k} / 2 = 1 - beta`. Clamping keeps it: raising an upper
/// bound to the floor keeps it one, and the ceiling `c cap_j >= m_j` always. Without the
/// shift the estimate is unbiased before clamping, and below `m_j` half the time.
pub fn private_coordinate_smoothness_bounded<L, D, R>(
    loss: &L,
    x: &D,
    bounds: SmoothnessBounds<'_>,
    epsilon: Epsilon,
    opts: &BoundedSmoothnessOptions,
    rng: &mut R,
    ledger: &mut Ledger,
) -> Result<BoundedSmoothness>
where
    L: Loss + ?Sized,
    D: Design,
    R: Rng + ?Sized,
{
    let BoundedSetup {
        c: _,
        n,
        p,
        beta,
        r2,
        caps,
        ceilings,
    } = bounded_setup(loss, x, &bounds, opts)?;
    let shift = beta.map_or(0.0, |beta| (p as f64 / (2.0 * beta)).ln().max(0.0));
    let units = knapsack_units(&caps, r2).min(p as f64);
    let delta = match opts.neighbours {
        Neighbours::ReplaceOne => positive("sensitivity", (2.0 * units).min(p as f64) / n as f64)?,
        Neighbours::AddRemove { .. } => {
            positive("sensitivity", units / opts.neighbours.normaliser(n)? as f64)?
        }
    };
    let eps = epsilon.get();
    let scale = positive("Laplace scale", delta / eps)?;
    let charged = laplace_epsilon(Sensitivity::new(delta, Norm::L1)?, scale)?;
    // Charge first: if the budget refuses, nothing is computed from the data.
    ledger.charge(Charge::PureDp {
        epsilon: charged,
        count: 1,
        label: "private coordinate smoothness M_j (bounded rows, one L1 Laplace release)".into(),
    })?;
    // Row clipping factors (one pass over the rows, outside the per-coordinate loop).
    let units = clipped_unit_means(
        x,
        &caps,
        &row_clip_factors(x, r2),
        opts.neighbours.normaliser(n)?,
    );
    let noise = Laplace::new(scale)?;
    let mut estimates = Vec::with_capacity(p);
    let mut laplace_scales = Vec::with_capacity(p);
    let (mut floored, mut ceiled) = (0, 0);
    for (j, &unit) in units.iter().enumerate() {
        let y = unit + noise.sample(rng) + shift * scale;
        let ceiling = ceilings[j];
        let floor = noise_floor(ceiling, opts.floor_fraction, shift, ceiling * scale);
        let m = clamp_estimate(ceiling * y, floor, ceiling, &mut floored, &mut ceiled);
        estimates.push(m);
        laplace_scales.push(ceiling * scale);
    }
    Ok(BoundedSmoothness {
        estimates: Tagged {
            value: estimates,
            provenance: Provenance::privately_estimated(charged)?,
        },
        ceilings,
        laplace_scales,
        normalised_sensitivity: delta,
        shift_in_scales: shift,
        epsilon: charged,
        floored,
        ceiled,
    })
}

/// What both bounded estimators ([`private_coordinate_smoothness_bounded`],
/// [`private_coordinate_smoothness_gaussian`]) check and derive from public inputs
/// before they touch the data: the curvature `c`, the shape, the validated failure
/// probability, the squared row-norm bound `r2` (infinite without one), the squared
/// per-coordinate caps `cap_j = min(b_j^2, r2)` and the ceilings `c cap_j`.
pub(super) struct BoundedSetup {
    pub c: f64,
    pub n: usize,
    pub p: usize,
    pub beta: Option<f64>,
    pub r2: f64,
    pub caps: Vec<f64>,
    pub ceilings: Vec<f64>,
}

/// The checks and public quantities of [`BoundedSetup`]; errors name the bad input.
pub(super) fn bounded_setup<L, D>(
    loss: &L,
    x: &D,
    bounds: &SmoothnessBounds<'_>,
    opts: &BoundedSmoothnessOptions,
) -> Result<BoundedSetup>
where
    L: Loss + ?Sized,
    D: Design,
{
    let c = curvature_of(loss)?;
    let (n, p) = (x.n_samples(), x.n_features());
    if n == 0 || p == 0 {
        return Err(ModelError::Empty(format!(
            "cannot estimate smoothness constants of a {n} x {p} design"
        )));
    }
    if !(opts.floor_fraction.is_finite() && opts.floor_fraction > 0.0 && opts.floor_fraction <= 1.0)
    {
        return Err(ModelError::InvalidParameter {
            name: "floor_fraction",
            value: opts.floor_fraction,
            expected: "the floor is a fraction of the ceiling in (0, 1]",
        });
    }
    let beta = match opts.failure_probability {
        None => None,
        Some(beta) if beta.is_finite() && beta > 0.0 && beta < 1.0 => Some(beta),
        Some(beta) => {
            return Err(ModelError::InvalidParameter {
                name: "failure_probability",
                value: beta,
                expected:
                    "the probability that an estimate is not an upper bound must be in (0, 1)",
            })
        }
    };
    let r2 = match bounds.row_norm_bound {
        Some(r) => {
            let r = positive("row norm bound", r)?;
            positive("squared row norm bound", r * r)?
        }
        None => f64::INFINITY,
    };
    let caps: Vec<f64> = match bounds.feature_bounds {
        Some(b) => {
            if b.len() != p {
                return Err(ModelError::Shape(format!(
                    "{} feature bounds given for a design with {p} features",
                    b.len()
                )));
            }
            let mut caps = Vec::with_capacity(p);
            for &bj in b {
                positive("feature bound", bj)?;
                caps.push(positive("squared feature bound", bj * bj)?.min(r2));
            }
            caps
        }
        None if r2.is_finite() => vec![r2; p],
        None => {
            return Err(ModelError::InvalidParameter {
                name: "bounds",
                value: f64::NAN,
                expected: "give per-feature bounds, a row-norm bound, or both",
            })
        }
    };
    let ceilings: Vec<f64> = caps.iter().map(|cap| c * cap).collect();
    check_positive("smoothness ceiling c cap_j", &ceilings)?;
    Ok(BoundedSetup {
        c,
        n,
        p,
        beta,
        r2,
        caps,
        ceilings,
    })
}

/// Clamps a released estimate `m` into `[floor, ceiling]` (a NaN, impossible with finite
/// inputs, goes to the ceiling: the safe side) and counts which side clamped it.
/// Post-processing of the release.
pub(super) fn clamp_estimate(
    m: f64,
    floor: f64,
    ceiling: f64,
    floored: &mut usize,
    ceiled: &mut usize,
) -> f64 {
    if m.is_nan() || m > ceiling {
        *ceiled += 1;
        ceiling
    } else if m < floor {
        *floored += 1;
        floor
    } else {
        m
    }
}

/// The floor of a released estimate whose noise has scale `noise` (Laplace scale or
/// Gaussian standard deviation, in the estimate's units) after a shift of `shift` noise
/// scales into an upper bound: `min(ceiling, max(floor_fraction * ceiling, max(shift, 1)
/// * noise))`.
///
/// *Why*: the step of a coordinate method is `1 / M_j`, so an estimate that the noise
/// pushed near 0 makes a step that nothing in the data justifies (an `M_j` at `1e-6` of
/// its ceiling gave steps of `4e6` and coefficients in the hundreds, issue 25). With a
/// shift `k >= 1` the floor `k * noise` is exactly "the unshifted noisy mean clamped at
/// 0, then shifted": the mean is non-negative, so clamping it at 0 only moves the
/// estimate towards the truth, and the upper-bound property (the estimate is at least the
/// mean whenever the shifted noisy value is) is kept. Without a shift the floor is one
/// noise scale: an estimate within one scale of 0 is indistinguishable from 0 and is
/// treated as the noise level. A function of the noisy value and public constants:
/// post-processing, no privacy cost.
pub fn noise_floor(ceiling: f64, floor_fraction: f64, shift: f64, noise: f64) -> f64 {
    (floor_fraction * ceiling)
        .max(shift.max(1.0) * noise)
        .min(ceiling)
}

/// The smallest `k >= 0` (to within `1e-9`) with `P(N(0,1) < -k) <= tail` by the
/// bounds `Phi(-k) <= exp(-k^2/2) / 2` (Chernoff) and `Phi(-k) <= phi(k) / k` (Mills'
/// ratio, `k > 0`): a valid (slightly conservative) Gaussian quantile without a
/// special-function dependency. `tail >= 1/2` gives 0.
pub fn gaussian_tail_shift(tail: f64) -> f64 {
    if tail.is_nan() || tail >= 0.5 {
        return 0.0;
    }
    let bound = |k: f64| {
        let e = (-0.5 * k * k).exp();
        let mills = if k > 0.0 {
            e / (k * (2.0 * std::f64::consts::PI).sqrt())
        } else {
            f64::INFINITY
        };
        (0.5 * e).min(mills)
    };
    // The bound is decreasing in k; bisect on [0, hi] with bound(hi) <= tail.
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    while bound(hi) > tail && hi < 1e3 {
        lo = hi;
        hi *= 2.0;
    }
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if bound(mid) <= tail {
            hi = mid;
        } else {
            lo = mid;
        }
        if hi - lo < 1e-9 {
            break;
        }
    }
    hi
}

/// How one row is clipped to norm `R`: `x_ij^2 s_i` with `s_i = min(1, R^2 / ||x_i||^2)`,
/// or, for a row whose squared norm overflows `f64` (finite entries above about
/// `1e154`), `(x_ij a_i)^2` with `a_i = R / ||x_i||` computed with scaling.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct RowClip {
    /// `s_i` (used when `mult` is 0).
    pub(super) scale: f64,
    /// `a_i` (> 0 only for rows whose squared norm overflows).
    pub(super) mult: f64,
}

impl RowClip {
    /// `x_ij^2` after the row's clipping (never NaN for finite `v`).
    #[inline]
    pub(super) fn square(self, v: f64) -> f64 {
        if self.mult > 0.0 {
            let t = v * self.mult;
            t * t
        } else {
            v * v * self.scale
        }
    }
}

/// The clipping of every row to squared norm `r2` (empty when `r2` is infinite).
///
/// A row whose squared norm overflows would give `s_i = 0` and `inf * 0 = NaN` terms
/// (which `min` would turn into the cap, breaking the sensitivity bound); such rows get
/// the multiplier form, `a_i = R / (m sqrt(sum_j (x_ij / m)^2))`, `m = max_j |x_ij|`,
/// shaved by 4 ulps so that `sum_j (x_ij a_i)^2 <= R^2` survives rounding.
pub(super) fn row_clip_factors<D: Design>(x: &D, r2: f64) -> Vec<RowClip> {
    if !r2.is_finite() {
        return Vec::new();
    }
    (0..x.n_samples())
        .map(|i| {
            let s = x.row_sq_norm(i);
            if s.is_finite() {
                RowClip {
                    scale: if s > r2 { r2 / s } else { 1.0 },
                    mult: 0.0,
                }
            } else {
                let mut m = 0.0f64;
                x.for_each_in_row(i, |_, v| m = m.max(v.abs()));
                let mut t = 0.0;
                x.for_each_in_row(i, |_, v| t += (v / m) * (v / m));
                let norm = m * t.sqrt();
                RowClip {
                    scale: 0.0,
                    mult: r2.sqrt() / norm * (1.0 - 4.0 * f64::EPSILON),
                }
            }
        })
        .collect()
}

/// The query of [`private_coordinate_smoothness_bounded`] without noise:
/// `(1/N) sum_i min(x_ij^2 s_i, cap_j) / cap_j` for every `j` (`rows` empty: no row
/// clipping; `N` = `normaliser`, the design's `n` under replace-one).
pub(super) fn clipped_unit_means<D: Design>(
    x: &D,
    caps: &[f64],
    rows: &[RowClip],
    normaliser: usize,
) -> Vec<f64> {
    let n = normaliser as f64;
    caps.iter()
        .enumerate()
        .map(|(j, &cap)| {
            let mut sum = 0.0;
            if rows.is_empty() {
                x.for_each_in_col(j, |_, v| sum += (v * v).min(cap) / cap);
            } else {
                x.for_each_in_col(j, |i, v| sum += rows[i].square(v).min(cap) / cap);
            }
            sum / n
        })
        .collect()
}

/// The query of [`private_coordinate_smoothness_gaussian`] without noise:
/// `(1/N) sum_i min(c x_ij^2 s_i, c cap_j)` for every `j` (`rows` empty: no row
/// clipping; `N` = `normaliser`, the design's `n` under replace-one).
pub(super) fn clipped_square_means<D: Design>(
    c: f64,
    x: &D,
    caps: &[f64],
    rows: &[RowClip],
    normaliser: usize,
) -> Vec<f64> {
    let n = normaliser as f64;
    caps.iter()
        .enumerate()
        .map(|(j, &cap)| {
            let mut sum = 0.0;
            if rows.is_empty() {
                x.for_each_in_col(j, |_, v| sum += (v * v).min(cap));
            } else {
                x.for_each_in_col(j, |i, v| sum += rows[i].square(v).min(cap));
            }
            c * sum / n
        })
        .collect()
}
