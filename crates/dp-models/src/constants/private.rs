//! Private estimates of the smoothness constants by per-coordinate Laplace releases
//! (the DP-CD paper's eq. (126)) and of the global constant.

use super::*;

/// Options of [`private_coordinate_smoothness_with`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PrivateSmoothnessOptions {
    /// Estimates below `floor_fraction * b_j` (with `b_j = c B_j^2` the per-sample bound)
    /// are raised to it, so that steps `1/M_j` stay finite (default `1e-12`; the paper does
    /// not say how to handle non-positive estimates, so this floor is our choice). Must be
    /// finite and > 0.
    pub floor_fraction: f64,
}

impl Default for PrivateSmoothnessOptions {
    fn default() -> Self {
        Self {
            floor_fraction: 1e-12,
        }
    }
}

/// What [`private_coordinate_smoothness_with`] released, with its bookkeeping.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PrivateSmoothness {
    /// The estimates `M_j^priv`, tagged [`Provenance::PrivatelyEstimated`] with the total
    /// epsilon charged.
    pub estimates: Tagged<Vec<f64>>,
    /// Per-sample bounds `b_j = c B_j^2` the constants were clipped to.
    pub per_sample_bounds: Vec<f64>,
    /// Laplace scales `2 b_j p / (n eps')`.
    pub laplace_scales: Vec<f64>,
    /// Pure epsilon charged per coordinate (rounded up; `p` of them were charged).
    pub epsilon_per_coordinate: f64,
    /// How many estimates were raised to the floor (the noise made them too small).
    pub clamped: usize,
}

/// Differentially private coordinate-wise smoothness constants (DP-CD, Sec. 5.2 and
/// App. F, eq. 126), with default options; see [`private_coordinate_smoothness_with`].
pub fn private_coordinate_smoothness<L, D, R>(
    loss: &L,
    x: &D,
    feature_bounds: &[f64],
    epsilon: Epsilon,
    rng: &mut R,
    ledger: &mut Ledger,
) -> Result<Tagged<Vec<f64>>>
where
    L: Loss + ?Sized,
    D: Design,
    R: Rng + ?Sized,
{
    Ok(private_coordinate_smoothness_with(
        loss,
        x,
        feature_bounds,
        epsilon,
        &PrivateSmoothnessOptions::default(),
        rng,
        ledger,
    )?
    .estimates)
}

/// Differentially private coordinate-wise smoothness constants:
///
/// ```text
/// M_j^priv = max( (1/n) sum_i min(c x_ij^2, b_j) + Lap(2 b_j p / (n eps')),  floor_fraction * b_j ),
/// b_j = c B_j^2,
/// ```
///
/// where `c` is the loss's curvature bound, `B_j` the declared public bound
/// `|x_ij| <= B_j` (`feature_bounds`; the DP-CD experiments use twice the maximal absolute
/// value of each feature, which they treat as public knowledge), `p` the number of
/// features and `eps' = epsilon`. The noise is drawn with
/// [`dp_accounting::mechanisms::Laplace`] and `p` pure-DP releases of `eps'/p` each are
/// charged to `ledger` *before* any noise is drawn (if the ledger refuses, nothing is
/// released and the error is returned).
///
/// # Privacy
///
/// *Neighbouring relation*: replace-one (`n` fixed), as in DP-CD.
/// *Precondition*: none on the data. `B_j` is a public constant chosen without looking
/// at the data (or charged separately); clipping enforces it, so samples that violate it
/// only change the estimate's accuracy, not the guarantee.
/// *Claim*: the released vector is `eps'`-DP.
/// *Proof*: the per-sample term `t_ij = min(c x_ij^2, b_j)` lies in `[0, b_j]`, so
/// replacing one sample changes the mean `(1/n) sum_i t_ij` by at most `b_j / n`; the
/// paper's eq. (126) takes the sensitivity as `2 b_j / n`, which is an upper bound, and
/// we follow it (Mangold et al. 2022, Appendix F). Laplace noise of scale `2 b_j p / (n eps')` on a query
/// of sensitivity `2 b_j / n` is `(eps'/p)`-DP (Dwork & Roth 2014, Thm 3.6), and basic
/// composition over the `p` coordinates (Thm 3.16) gives `eps'`. The floor is
/// post-processing with a public constant. The sampler is a floating-point idealisation
/// of Laplace noise (Mironov 2012); see `dp_accounting::mechanisms`.
/// Since the true sensitivity is `b_j / n`, the release is in fact `eps'/2`-DP; the
/// ledger is charged the paper's `eps'` (conservative, never under-charged).
pub fn private_coordinate_smoothness_with<L, D, R>(
    loss: &L,
    x: &D,
    feature_bounds: &[f64],
    epsilon: Epsilon,
    opts: &PrivateSmoothnessOptions,
    rng: &mut R,
    ledger: &mut Ledger,
) -> Result<PrivateSmoothness>
where
    L: Loss + ?Sized,
    D: Design,
    R: Rng + ?Sized,
{
    let c = curvature_of(loss)?;
    let (n, p) = (x.n_samples(), x.n_features());
    if feature_bounds.len() != p {
        return Err(ModelError::Shape(format!(
            "{} feature bounds given for a design with {p} features",
            feature_bounds.len()
        )));
    }
    positive("floor_fraction", opts.floor_fraction)?;
    let eps = epsilon.get();
    let mut per_sample_bounds = Vec::with_capacity(p);
    let mut laplace_scales = Vec::with_capacity(p);
    let mut eps_j_max = 0.0f64;
    for &bj in feature_bounds {
        positive("feature bound", bj)?;
        let b = positive("per-sample smoothness bound c B_j^2", c * bj * bj)?;
        let sens = 2.0 * b / n as f64;
        let scale = positive("Laplace scale", sens * p as f64 / eps)?;
        let sensitivity = Sensitivity::new(sens, Norm::L1)?;
        eps_j_max = eps_j_max.max(laplace_epsilon(sensitivity, scale)?);
        per_sample_bounds.push(b);
        laplace_scales.push(scale);
    }
    // Charge first: if the budget refuses, nothing is computed from the data.
    ledger.charge(Charge::PureDp {
        epsilon: eps_j_max,
        count: p as u64,
        label: "private coordinate smoothness M_j (DP-CD eq. 126)".into(),
    })?;
    let mut estimates = Vec::with_capacity(p);
    let mut clamped = 0;
    for j in 0..p {
        let (b, scale) = (per_sample_bounds[j], laplace_scales[j]);
        let mean = clipped_smoothness_sum(c, x, j, b) / n as f64;
        let noisy = mean + Laplace::new(scale)?.sample(rng);
        let floor = opts.floor_fraction * b;
        // A NaN (impossible with finite inputs) would also be floored.
        if noisy.is_nan() || noisy < floor {
            clamped += 1;
            estimates.push(floor);
        } else {
            estimates.push(noisy);
        }
    }
    let total = eps_j_max * p as f64;
    Ok(PrivateSmoothness {
        estimates: Tagged {
            value: estimates,
            provenance: Provenance::privately_estimated(total)?,
        },
        per_sample_bounds,
        laplace_scales,
        epsilon_per_coordinate: eps_j_max,
        clamped,
    })
}

/// Differentially private global smoothness `beta = (c/n) lambda_max(X^T X)` from a
/// public row-norm bound `||x_i||_2 <= R`, for DP-SGD's step `gamma / beta`:
///
/// ```text
/// s_i  = min(1, R^2 / ||x_i||^2)                       (row clipping to norm R)
/// beta = clamp( (c/n) lambda_max(X^T S X) + Lap(c R^2 / (n eps)) + k c R^2 / (n eps),
///               f,  c R^2 )
/// f    = noise_floor(c R^2, floor_fraction, k, c R^2 / (n eps))
/// ```
///
/// with `k = max(0, ln(1 / (2 beta_fail)))` for `failure_probability = Some(beta_fail)`
/// (else 0). One pure-DP release of `eps`, charged to `ledger` before the data are read.
/// It beats the public bound `c R^2` when the rows' second-moment matrix is far from
/// rank one along a direction of norm `R` (e.g. raw features of very different scales
/// clipped to a crude `R`); on rows normalised to norm `R` with a dominant direction it
/// cannot do much better than `c R^2`.
///
/// # Privacy
/// *Neighbouring relation:* replace-one (`n` public). *Precondition:* `R` public.
/// *Claim:* `eps`-DP. *Proof:* `A = (1/n) sum_i s_i x_i x_i^T`; replacing row `i` by `i'`
/// changes `A` by `(a a^T - b b^T)/n` with `||a||, ||b|| <= R` after clipping, a
/// difference of two PSD matrices of operator norm `<= R^2`, whose eigenvalues lie in
/// `[-R^2, R^2]`; by Weyl's inequality `lambda_max(A)` moves by at most `R^2 / n`, so
/// `c lambda_max(A)` has sensitivity `c R^2 / n` and the Laplace mechanism of that
/// scale over `eps` is `eps`-DP (Dwork & Roth 2014, Thm 3.6). The shift and the clamp
/// are post-processing. A row whose squared norm overflows `f64` gets weight
/// `R^2 / inf = 0` and contributes nothing (a PSD term of norm 0 <= R^2, so the bound
/// above holds; it used to give NaN and the ceiling, an event of probability 1 on one
/// side). `lambda_max` is computed by power iteration to relative
/// tolerance `1e-9` as an upper estimate (see [`global_smoothness`]); the guarantee is
/// for the exact value, the same floating-point idealisation as the sampler's.
/// *Upper bound:* as for [`private_coordinate_smoothness_bounded`], the shifted value is
/// at least `(c/n) lambda_max(X^T S X)` with probability `1 - e^{-k}/2 = 1 - beta_fail`,
/// and the clamp keeps it (the ceiling `c R^2 >= lambda_max` always); that is the true
/// `beta` when the rows satisfy the bound.
pub fn private_global_smoothness<L, D, R>(
    loss: &L,
    x: &D,
    row_norm_bound: f64,
    epsilon: Epsilon,
    opts: &BoundedSmoothnessOptions,
    rng: &mut R,
    ledger: &mut Ledger,
) -> Result<Tagged<f64>>
where
    L: Loss + ?Sized,
    D: Design,
    R: Rng + ?Sized,
{
    let c = curvature_of(loss)?;
    let n = x.n_samples();
    if n == 0 || x.n_features() == 0 {
        return Err(ModelError::Empty(
            "cannot estimate the smoothness of an empty design".into(),
        ));
    }
    if opts.neighbours != Neighbours::ReplaceOne {
        return Err(ModelError::Unsupported(
            "the private global smoothness beta is analysed under replace-one neighbours \
             only; under add/remove give a public beta"
                .into(),
        ));
    }
    let r = positive("row norm bound", row_norm_bound)?;
    let r2 = positive("squared row norm bound", r * r)?;
    if !(opts.floor_fraction.is_finite() && opts.floor_fraction > 0.0 && opts.floor_fraction <= 1.0)
    {
        return Err(ModelError::InvalidParameter {
            name: "floor_fraction",
            value: opts.floor_fraction,
            expected: "the floor is a fraction of the ceiling in (0, 1]",
        });
    }
    let shift = match opts.failure_probability {
        None => 0.0,
        Some(b) if b.is_finite() && b > 0.0 && b < 1.0 => (1.0 / (2.0 * b)).ln().max(0.0),
        Some(b) => {
            return Err(ModelError::InvalidParameter {
                name: "failure_probability",
                value: b,
                expected:
                    "the probability that the estimate is not an upper bound must be in (0, 1)",
            })
        }
    };
    let ceiling = positive("smoothness ceiling c R^2", c * r2)?;
    let sens = ceiling / n as f64;
    let scale = positive("Laplace scale", sens / epsilon.get())?;
    let charged = laplace_epsilon(Sensitivity::new(sens, Norm::L1)?, scale)?;
    ledger.charge(Charge::PureDp {
        epsilon: charged,
        count: 1,
        label: "private global smoothness beta (lambda_max of clipped rows)".into(),
    })?;
    let weights: Vec<f64> = (0..n)
        .map(|i| {
            let s = x.row_sq_norm(i);
            if s > r2 {
                r2 / s
            } else {
                1.0
            }
        })
        .collect();
    let lmax = lambda_max_weighted_gram(x, Some(&weights));
    let noisy = c * lmax / n as f64 + Laplace::new(scale)?.sample(rng) + shift * scale;
    let floor = noise_floor(ceiling, opts.floor_fraction, shift, scale);
    let beta = if noisy.is_nan() || noisy > ceiling {
        ceiling
    } else {
        noisy.max(floor)
    };
    Ok(Tagged {
        value: beta,
        provenance: Provenance::privately_estimated(charged)?,
    })
}
