//! What a fit returns, and the random streams it draws from.

use crate::privacy::PrivacyReport;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use serde::{Deserialize, Serialize};

/// Quantities computed from the private data **without privacy protection**.
///
/// They are for the analyst running experiments (objective value for error curves, time,
/// how often a coordinate step was zero). Releasing them is not covered by the fit's
/// privacy guarantee.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Diagnostics {
    /// `F(w) = (1/n) sum_i loss(x_i^T w, y_i) + penalty(w)` at the returned coefficients.
    pub objective: f64,
    /// Number of updates that left the iterate unchanged (e.g. soft-thresholded at 0).
    pub zero_steps: u64,
    /// Wall-clock seconds of the fit (validation, planning and loop; objective excluded).
    pub seconds: f64,
}

/// The result of a fit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FitReport {
    /// Solver name ("dp-cd", "dp-cd-p", "cd", "dp-sgd", "sgd", ...).
    pub algorithm: String,
    /// The returned coefficients `w` (length `p`).
    pub coefficients: Vec<f64>,
    /// Number of updates performed (coordinate updates for CD methods, stochastic steps
    /// for SGD methods).
    pub iterations: u64,
    /// The noise multiplier `s` of the optimisation's Gaussian releases (noise std =
    /// `s` x sensitivity); `None` for non-private solvers.
    pub noise_multiplier: Option<f64>,
    /// Plan, ledger and achieved guarantee; `None` for non-private solvers.
    pub privacy: Option<PrivacyReport>,
    /// The seed of `fit_seeded`, `None` when the caller passed an RNG.
    pub seed: Option<u64>,
    /// Non-private diagnostics (see [`Diagnostics`]).
    pub diagnostics: Diagnostics,
}

impl FitReport {
    pub(crate) fn non_private(
        algorithm: &str,
        coefficients: Vec<f64>,
        iterations: u64,
        seed: Option<u64>,
        diagnostics: Diagnostics,
    ) -> Self {
        Self {
            algorithm: algorithm.into(),
            coefficients,
            iterations,
            noise_multiplier: None,
            privacy: None,
            seed,
            diagnostics,
        }
    }
}

/// Independent random streams of one fit: constants estimation, coordinate (or sample)
/// selection, and noise. Each is a `ChaCha20Rng` seeded from the caller's RNG in this
/// fixed order, so a private solver and its twin select the same coordinates.
pub(crate) struct Streams {
    pub constants: ChaCha20Rng,
    pub coordinates: ChaCha20Rng,
    pub noise: ChaCha20Rng,
}

impl Streams {
    pub(crate) fn from_rng<R: Rng + ?Sized>(rng: &mut R) -> Self {
        let mut child = || {
            let mut seed = [0u8; 32];
            rng.fill_bytes(&mut seed);
            ChaCha20Rng::from_seed(seed)
        };
        let constants = child();
        let coordinates = child();
        let noise = child();
        Self {
            constants,
            coordinates,
            noise,
        }
    }
    pub(crate) fn from_seed(seed: u64) -> Self {
        Self::from_rng(&mut ChaCha20Rng::seed_from_u64(seed))
    }
}

/// Crate-private switches of a private solver's noise and clipping. Only the twin tests
/// turn them off; every public entry point uses [`Switches::ON`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Switches {
    pub noise: bool,
    pub clip: bool,
}

impl Switches {
    pub(crate) const ON: Switches = Switches {
        noise: true,
        clip: true,
    };
    #[cfg(test)]
    pub(crate) const OFF: Switches = Switches {
        noise: false,
        clip: false,
    };
}
