//! The one contract every solver of this crate implements: how it receives randomness
//! and what it returns.
//!
//! A solver is built by a `...Params` builder whose `build()` checks every
//! data-independent parameter once (a validated-parameters newtype, as in linfa); the
//! checked solver implements [`Solver`] for the designs it supports. [`Solver`] has one
//! required method, [`Solver::fit_with_rng`]; the default entry point
//! [`Solver::fit`] draws a fresh `ChaCha20Rng` seed from the operating system's entropy,
//! and [`Solver::fit_seeded`] exists for reproduction and tests.

use crate::error::{OptimError, Result};
use crate::model::Fitted;
use dp_models::{Dataset, Design};
use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;

/// A solver with checked parameters.
///
/// ```
/// use dp_models::{Dataset, DenseDesign, Squared, L1};
/// use dp_models::constants::Tagged;
/// use dp_optim::{DpCdParams, Smoothness, Solver};
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let x = DenseDesign::from_row_major(4, 2, &[1.0, 0.5, -0.5, 1.0, 0.2, -1.0, 1.0, 0.0])?;
/// let data = Dataset::new(x, vec![1.0, 0.5, -1.0, 0.8])?;
/// let solver = DpCdParams::new(Squared::full(), L1::new(0.01)?)
///     .epsilon(1.0)
///     .delta(1e-6)
///     .passes(5)
///     .clip(1.0)
///     // |x_ij| <= 1 is public knowledge here, so M_j <= 1 for the squared loss.
///     .smoothness(Smoothness::Given(Tagged::public(vec![1.0, 1.0])))
///     .build()?;
/// let fit = solver.fit(&data)?; // OS entropy: nothing to keep secret afterwards
/// assert!(fit.guarantee().unwrap().epsilon <= 1.0);
/// let json = serde_json::to_string(&fit.model)?; // the releasable part, no seed in it
/// assert!(!json.contains("seed"));
/// # Ok(())
/// # }
/// ```
pub trait Solver<D: Design> {
    /// Fits on `data`, drawing every random choice from `rng` (split into independent
    /// streams for constants, sampling and noise).
    ///
    /// # Privacy
    /// The guarantee assumes `rng` is unpredictable to whoever sees the output: a
    /// cryptographic generator seeded from a secret. Use [`Solver::fit`] unless you
    /// need to control the generator.
    fn fit_with_rng(&self, data: &Dataset<D>, rng: &mut dyn RngCore) -> Result<Fitted>;

    /// Fits on `data` with randomness from the operating system's entropy (through a
    /// `ChaCha20Rng` seeded by it). The secure default: no seed exists that could be
    /// published.
    fn fit(&self, data: &Dataset<D>) -> Result<Fitted> {
        let mut rng = ChaCha20Rng::try_from_os_rng().map_err(|e| {
            OptimError::Entropy(format!(
                "the operating system's entropy source failed ({e}); a private fit \
                 cannot proceed without it"
            ))
        })?;
        self.fit_with_rng(data, &mut rng)
    }

    /// Fits with a `ChaCha20Rng` seeded by `seed`: bit-for-bit reproducible.
    ///
    /// # Privacy
    /// The seed determines all the noise: anyone who knows it can replay the fit on
    /// neighbouring datasets and tell them apart, which voids the guarantee. It is
    /// recorded in [`Diagnostics::seed`](crate::Diagnostics::seed), never in the
    /// releasable [`LinearModel`](crate::LinearModel). Use seeded fits for
    /// reproduction and tests; keep the seed secret, or use [`Solver::fit`].
    fn fit_seeded(&self, data: &Dataset<D>, seed: u64) -> Result<Fitted> {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let mut fit = self.fit_with_rng(data, &mut rng)?;
        fit.diagnostics.seed = Some(seed);
        Ok(fit)
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
    #[cfg(test)]
    pub(crate) fn from_seed(seed: u64) -> Self {
        Self::from_rng(&mut ChaCha20Rng::seed_from_u64(seed))
    }
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

/// Refuses non-finite coefficients: a fit never returns them as a success.
pub(crate) fn check_finite(solver: &str, w: &[f64], what: &str) -> Result<()> {
    if let Some(j) = w.iter().position(|v| !v.is_finite()) {
        return Err(OptimError::Diverged(format!(
            "{solver} produced a non-finite coefficient w[{j}] = {}; {what}",
            w[j]
        )));
    }
    Ok(())
}
