//! Privacy vocabulary shared by the private solvers: accounting choice, adjacency,
//! guarantee, plan and the privacy part of a [`crate::FitReport`].

use crate::dp_cd::DpCdPlan;
use crate::dp_sgd::DpSgdPlan;
use crate::kernel::CoordNoise;
use dp_accounting::calibrate::{Accountant, RdpConversion};
use dp_accounting::ledger::Ledger;
use dp_accounting::mechanisms::Gaussian;
use rand::Rng;
use serde::{Deserialize, Serialize};

/// How the noise is calibrated to the target `(epsilon, delta)`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
pub enum Accounting {
    /// What the papers do: RDP of the mechanism with Mironov's conversion
    /// (Prop. 3 of Mironov 2017), the order optimised over a continuum (DP-CD: the
    /// paper's Eq. 18; DP-SGD: the sampled Gaussian RDP of Mironov, Talwar & Zhang 2019).
    #[default]
    Paper,
    /// The tightest accountant available for the mechanism: for DP-CD, Gaussian DP
    /// (the composition of `T*K` Gaussian releases of noise multiplier `s` is exactly
    /// `sqrt(T*K)/s`-GDP; Dong, Roth & Su 2022) with the analytic Gaussian
    /// `delta(epsilon)` curve (Balle & Wang 2018); for DP-SGD, the privacy loss
    /// distribution accountant (an upper bound).
    Exact,
    /// Any accountant of `dp-accounting` (must support the solver's mechanism).
    Custom(Accountant),
}

impl Accounting {
    /// Short name for reports ("paper", "exact", or the accountant's debug name).
    pub fn name(&self) -> String {
        match self {
            Accounting::Paper => "paper".into(),
            Accounting::Exact => "exact".into(),
            Accounting::Custom(a) => format!("{a:?}"),
        }
    }
    /// The accountant DP-CD uses.
    pub fn for_dp_cd(&self) -> Accountant {
        match self {
            Accounting::Paper => Accountant::Rdp(RdpConversion::Mironov),
            Accounting::Exact => Accountant::Gdp,
            Accounting::Custom(a) => *a,
        }
    }
    /// The accountant DP-SGD uses.
    pub fn for_dp_sgd(&self) -> Accountant {
        match self {
            Accounting::Paper => Accountant::Rdp(RdpConversion::Mironov),
            Accounting::Exact => Accountant::Pld,
            Accounting::Custom(a) => *a,
        }
    }
}

/// The neighbouring relation a guarantee refers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Adjacency {
    /// Datasets of the same size `n` differing in one record (DP-CD's analysis).
    ReplaceOne,
    /// Datasets differing by adding or removing one record (the sampled Gaussian
    /// mechanism's analysis, used by DP-SGD).
    AddRemove,
}

/// An achieved `(epsilon, delta)`-DP guarantee (epsilon rounded up).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Guarantee {
    /// Achieved epsilon (an upper bound; never above the target).
    pub epsilon: f64,
    /// delta.
    pub delta: f64,
    /// Under which neighbouring relation.
    pub adjacency: Adjacency,
    /// How it was computed.
    pub how: String,
}

/// The solver-specific plan a fit spent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum SolverPlan {
    /// DP-CD / DP-CD-P.
    DpCd(DpCdPlan),
    /// DP-SGD.
    DpSgd(DpSgdPlan),
}

/// The privacy part of a fit report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PrivacyReport {
    /// Target epsilon stated by the user.
    pub target_epsilon: f64,
    /// Target delta stated by the user.
    pub target_delta: f64,
    /// The plan (noise, sensitivities, number of releases).
    pub plan: SolverPlan,
    /// Every mechanism invocation of the fit.
    pub ledger: Ledger,
    /// The guarantee achieved by everything in the ledger.
    pub guarantee: Guarantee,
}

/// Per-coordinate Gaussian noise for DP-CD: coordinate `j`'s release gets an
/// independent draw of `N(0, sigma_j^2)` from the noise stream.
pub(crate) struct CoordGaussian<'a, R: Rng + ?Sized> {
    pub mechanisms: &'a [Gaussian],
    pub rng: &'a mut R,
}

impl<R: Rng + ?Sized> CoordNoise for CoordGaussian<'_, R> {
    #[inline]
    fn perturb(&mut self, j: usize, g: f64) -> f64 {
        g + self.mechanisms[j].sample(self.rng)
    }
}
