//! One Gaussian release of every `M_j` under a row-norm bound.

use super::*;

/// What [`private_coordinate_smoothness_gaussian`] released, with its bookkeeping.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GaussianSmoothness {
    /// The post-processed estimates, tagged [`Provenance::PrivatelyEstimatedGaussian`].
    pub estimates: Tagged<Vec<f64>>,
    /// Public ceilings `c cap_j`, `cap_j = min(b_j^2, R^2)` (missing bounds omitted).
    pub ceilings: Vec<f64>,
    /// `V = c min(R^2, ||cap||_2)`: the bound on the L2 norm of one row's vector
    /// `(min(c x_ij^2 s_i, c cap_j))_j`.
    pub row_vector_bound: f64,
    /// The L2 sensitivity of the mean vector: `Delta_2 = sqrt(2) V / n` under
    /// replace-one, `V / N` under add/remove with the public count `N`.
    pub l2_sensitivity: f64,
    /// Noise multiplier `z` charged (one Gaussian release).
    pub noise_multiplier: f64,
    /// Standard deviation of each coordinate's noise, `z Delta_2`.
    pub noise_std: f64,
    /// Upward shift applied, in standard deviations (`k`; 0 without
    /// `failure_probability`).
    pub shift_in_std: f64,
    /// How many estimates were raised to the floor.
    pub floored: usize,
    /// How many estimates were lowered to the ceiling.
    pub ceiled: usize,
}

/// Differentially private coordinate-wise smoothness constants from public row bounds,
/// all `p` at once with **one Gaussian release** whose noise does not depend on `p`:
///
/// ```text
/// cap_j = min(b_j^2, R^2)                  (a missing bound is omitted)
/// s_i   = min(1, R^2 / ||x_i||^2)          (row clipping to norm R; 1 without R)
/// v_ij  = min(c x_ij^2 s_i, c cap_j)       in [0, c cap_j]
/// V     = c min(R^2, ||cap||_2),   Delta_2 = sqrt(2) V / n   (add/remove: V / N)
/// M_j   = clamp((1/n) sum_i v_ij + N(0, (z Delta_2)^2) + k z Delta_2,  f_j,  c cap_j)
/// f_j   = noise_floor(c cap_j, floor_fraction, k, z Delta_2)
///       = min(c cap_j, max(floor_fraction c cap_j, max(k, 1) z Delta_2))
/// ```
///
/// The floor `f_j` ([`noise_floor`]) is the noise level: an estimate the noise made
/// indistinguishable from 0 gets `max(k, 1)` standard deviations, never a tiny value
/// whose step `1 / M_j` nothing justifies; how many were raised is `floored`.
///
/// with `k` the Gaussian tail shift of [`gaussian_tail_shift`] at `beta / p` when
/// `failure_probability = Some(beta)`, else 0. One Gaussian release of noise multiplier
/// `z` is charged to `ledger` (`Charge::Gaussian { z, 1 }`) *before* anything is
/// computed from the data, so that a GDP / zCDP / RDP accountant composes it with the
/// fit's other Gaussian releases (its `mu^2 = 1/z^2` adds to theirs under GDP).
///
/// Compared with the Laplace release of [`private_coordinate_smoothness_bounded`]
/// (L1 sensitivity `2 c R^2 / n` on every coordinate with a row-norm bound), the
/// Gaussian's per-coordinate standard deviation is `sqrt(2) z c R^2 / n`, and its
/// union-bound shift grows like `sqrt(2 ln(p / beta))` instead of `ln(p / (2 beta))`.
///
/// # Privacy
///
/// *Neighbouring relation*: replace-one (`n` fixed and public), as in DP-CD, by
/// default; add/remove with `opts.neighbours = Neighbours::AddRemove { public_n }`
/// (see the next paragraph but one).
/// *Precondition*: none on the data; the bounds and `z` are public (chosen without
/// looking at the data). Row clipping (`s_i`) and the per-coordinate cap enforce the
/// bounds, so rows that violate them change the estimate's accuracy, not the guarantee.
/// *Claim*: the released vector `(M_j)` is the post-processing of one Gaussian
/// mechanism of noise multiplier `z`: `(1/z)`-GDP, `(alpha, alpha / (2 z^2))`-RDP.
/// *Proof*: every entry of a row's vector `v_i = (v_ij)_j` is non-negative, and
/// `||v_i||_2 <= ||v_i||_1 <= c sum_j x_ij^2 s_i = c min(||x_i||^2, R^2) <= c R^2`;
/// also `||v_i||_2 <= c ||cap||_2` since `v_ij <= c cap_j`. So `||v_i||_2 <= V`. For two
/// rows `v, v'` with non-negative entries `<v, v'> >= 0`, hence `||v - v'||_2^2 =
/// ||v||^2 + ||v'||^2 - 2 <v, v'> <= 2 V^2`: replacing one row moves the mean
/// `(1/n) sum_i v_i` by at most `sqrt(2) V / n = Delta_2` in L2, whatever `p`. Adding
/// i.i.d. `N(0, (z Delta_2)^2)` to every coordinate is the Gaussian mechanism of
/// multiplier `z` (Dong, Roth & Su 2022, Thm 2.7: `1/z`-GDP; Mironov 2017, Cor. 3).
/// The shift, floor and ceiling are coordinate-wise functions of the noisy vector and
/// public constants: post-processing. The sampler is a floating-point idealisation of
/// Gaussian noise (see `dp_accounting::mechanisms`).
///
/// *Add/remove* ([`Neighbours::AddRemove`]): the mean is `(1/N) sum_i v_i` with the
/// stated public `N` (never the data's size), and `Delta_2 = V / N`. *Proof*: adding or
/// removing row `i` moves the mean by `v_i / N`, of L2 norm at most `V / N` (the bound
/// on `||v_i||_2` above); no difference of two rows is involved, so the `sqrt(2)` of
/// replace-one goes. The noise `N(0, (z Delta_2)^2)` is again the Gaussian mechanism of
/// multiplier `z` for this relation; the rest is unchanged. The estimate is of
/// `(N_true / N) m_j`, which is `m_j` when the stated count is the true one.
///
/// *Upper bound* (what the step sizes `1/M_j` need): let `m_j = (1/n) sum_i v_ij` (the
/// true `M_j` when the rows satisfy the bounds). Before clamping the estimate is
/// `m_j + (G_j + k) z Delta_2` with `G_j` standard normal, so `P(estimate < m_j) =
/// Phi(-k) <= beta / p`, and by the union bound every coordinate is an upper bound with
/// probability at least `1 - beta`. Clamping keeps it (the ceiling `c cap_j >= m_j`).
pub fn private_coordinate_smoothness_gaussian<L, D, R>(
    loss: &L,
    x: &D,
    bounds: SmoothnessBounds<'_>,
    noise_multiplier: f64,
    opts: &BoundedSmoothnessOptions,
    rng: &mut R,
    ledger: &mut Ledger,
) -> Result<GaussianSmoothness>
where
    L: Loss + ?Sized,
    D: Design,
    R: Rng + ?Sized,
{
    let BoundedSetup {
        c,
        n,
        p,
        beta,
        r2,
        caps,
        ceilings,
    } = bounded_setup(loss, x, &bounds, opts)?;
    let z = positive("noise multiplier", noise_multiplier)?;
    let shift = beta.map_or(0.0, |beta| gaussian_tail_shift(beta / p as f64));
    let cap_l2 = caps.iter().map(|v| v * v).sum::<f64>().sqrt();
    let row_vector_bound = positive("row vector bound V", c * r2.min(cap_l2))?;
    let l2_sensitivity = match opts.neighbours {
        Neighbours::ReplaceOne => positive(
            "L2 sensitivity",
            std::f64::consts::SQRT_2 * row_vector_bound / n as f64,
        )?,
        Neighbours::AddRemove { .. } => positive(
            "L2 sensitivity",
            row_vector_bound / opts.neighbours.normaliser(n)? as f64,
        )?,
    };
    let noise_std = positive("noise standard deviation", z * l2_sensitivity)?;
    // Charge first: if the budget refuses, nothing is computed from the data.
    ledger.charge(Charge::Gaussian {
        noise_multiplier: z,
        count: 1,
    })?;
    let row_scale = row_clip_factors(x, r2);
    let means = clipped_square_means(c, x, &caps, &row_scale, opts.neighbours.normaliser(n)?);
    let noise = Gaussian::new(noise_std)?;
    let mut estimates = Vec::with_capacity(p);
    let (mut floored, mut ceiled) = (0, 0);
    for (j, &mean) in means.iter().enumerate() {
        let m = mean + noise.sample(rng) + shift * noise_std;
        let ceiling = ceilings[j];
        let floor = noise_floor(ceiling, opts.floor_fraction, shift, noise_std);
        let m = clamp_estimate(m, floor, ceiling, &mut floored, &mut ceiled);
        estimates.push(m);
    }
    Ok(GaussianSmoothness {
        estimates: Tagged {
            value: estimates,
            provenance: Provenance::privately_estimated_gaussian(z)?,
        },
        ceilings,
        row_vector_bound,
        l2_sensitivity,
        noise_multiplier: z,
        noise_std,
        shift_in_std: shift,
        floored,
        ceiled,
    })
}
