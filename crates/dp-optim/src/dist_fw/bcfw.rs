//! The non-private `(K, tau)`-distributed block-coordinate Frank-Wolfe, the private
//! protocol's twin (see the module documentation of [`super`]).

use super::*;

/// Builder of the non-private `(K, tau)`-distributed block-coordinate Frank-Wolfe.
#[derive(Debug, Clone)]
pub struct BcfwParams<L> {
    loss: L,
    radius: f64,
    parties: usize,
    tau: Option<usize>,
    iterations: u64,
    radius_mode: RadiusMode,
}

impl<L: Loss> BcfwParams<L> {
    /// BCFW for `loss` with per-party radius from `radius` (see [`RadiusMode`]);
    /// defaults: 1 party, `tau` = the smallest block, 100 iterations.
    pub fn new(loss: L, radius: f64) -> Self {
        Self {
            loss,
            radius,
            parties: 1,
            tau: None,
            iterations: 100,
            radius_mode: RadiusMode::PerParty,
        }
    }
    /// Number of parties `K` (`1 <= K <= p`).
    pub fn parties(mut self, k: usize) -> Self {
        self.parties = k;
        self
    }
    /// Coordinates sampled per party per round (default: all of the smallest block).
    pub fn tau(mut self, tau: usize) -> Self {
        self.tau = Some(tau);
        self
    }
    /// Rounds `T >= 1`.
    pub fn iterations(mut self, t: u64) -> Self {
        self.iterations = t;
        self
    }
    /// Per-party radius mode.
    pub fn radius_mode(mut self, mode: RadiusMode) -> Self {
        self.radius_mode = mode;
        self
    }
    /// Checks the data-independent parameters.
    pub fn build(self) -> Result<Bcfw<L>> {
        if !(self.radius.is_finite() && self.radius > 0.0) {
            return Err(invalid("radius", self.radius, "must be finite and > 0"));
        }
        if self.parties == 0 {
            return Err(invalid(
                "parties",
                0.0,
                "the number of parties K must be >= 1",
            ));
        }
        if self.iterations == 0 {
            return Err(invalid("iterations", 0.0, "BCFW needs T >= 1"));
        }
        if self.loss.curvature_bound().is_none() {
            return Err(OptimError::Unsupported(format!(
                "BCFW needs a smooth loss; {} is not smooth",
                self.loss.name()
            )));
        }
        Ok(Bcfw { params: self })
    }
}

/// The non-private `(K, tau)` BCFW with checked parameters.
#[derive(Debug, Clone)]
pub struct Bcfw<L> {
    params: BcfwParams<L>,
}

impl<D: Design, L: Loss> Solver<D> for Bcfw<L> {
    fn fit_with_rng(&self, data: &Dataset<D>, rng: &mut dyn RngCore) -> Result<Fitted> {
        let start = std::time::Instant::now();
        let prm = &self.params;
        let (x, y) = (data.x(), data.y());
        let (n, p) = (x.n_samples(), x.n_features());
        check_data(data, p)?;
        data.check_labels_for(&prm.loss)?;
        let k = prm.parties;
        let radius = prm.radius_mode.party_radius(prm.radius, k);
        let set = L1BallProduct::contiguous(radius, p, k)?;
        let smallest = set.blocks().iter().map(Vec::len).min().unwrap_or(0);
        let tau = prm.tau.unwrap_or(smallest);
        let largest = check_shape(k, tau, set.blocks())?;
        let p_samp = tau as f64 / largest as f64;
        let mut streams = Streams::from_rng(rng);
        let mut sampling = party_streams(&mut streams.coordinates, k);
        let mut w = vec![0.0; p];
        let mut z = vec![0.0; n];
        let mut deriv = vec![0.0; n];
        let mut s = vec![0.0; p];
        let mut selected = Vec::new();
        let inv_n = 1.0 / n as f64;
        for t in 0..prm.iterations {
            for ((d, &zi), &yi) in deriv.iter_mut().zip(&z).zip(y) {
                *d = inv_n * prm.loss.derivative(zi, yi);
            }
            s.iter_mut().for_each(|v| *v = 0.0);
            for (b, block) in set.blocks().iter().enumerate() {
                let pos = sample_positions(&mut sampling[b], block.len(), tau);
                let mut scores = Vec::with_capacity(2 * tau);
                for &l in &pos {
                    let g = x.col_dot(block[l], &deriv);
                    scores.push(g);
                    scores.push(-g);
                }
                let c = best_signed(&scores);
                let j = block[pos[c / 2]];
                let sign = if c.is_multiple_of(2) { 1.0 } else { -1.0 };
                s[j] = -radius * sign;
                selected.push(j);
            }
            fw_update(&mut w, &s, 2.0 / (p_samp * t as f64 + 2.0));
            x.matvec(&w, &mut z);
        }
        check_finite("BCFW", &w, "check the data")?;
        let mut grad = vec![0.0; p];
        average_loss_gradient(x, &prm.loss, &z, y, &mut deriv, &mut grad);
        Ok(Fitted {
            model: LinearModel {
                algorithm: "bcfw".into(),
                coefficients: w.clone(),
                intercept: None,
                iterations: prm.iterations,
                privacy: None,
            },
            diagnostics: Diagnostics {
                objective: average_loss(&prm.loss, &z, y),
                seconds: start.elapsed().as_secs_f64(),
                selected,
                duality_gap: Some(set.gap(&grad, &w)),
                ..Diagnostics::default()
            },
        })
    }
}
