//! Losses and penalties chosen at run time (a command line, a configuration file, the
//! Python binding), as library types.
//!
//! [`LossKind`] / [`PenaltyKind`] name a choice (serde and [`std::str::FromStr`] use the
//! kebab-case names `logistic`, `squared`, `squared-hinge`, `huber`, `hinge`; `none`,
//! `l1`, `l2`, `elastic-net`); [`AnyLoss`], [`AnyDualLoss`] and [`AnyPenalty`] are the
//! chosen objects behind one type (enum dispatch: each solver is instantiated once).
//!
//! **Every trait method is forwarded**, the provided ones included: the vectorised
//! kernels ([`Loss::dense_col_grad_sum`], [`Loss::dense_step_grad_sum`],
//! [`Loss::derivatives`]), [`Loss::is_residual_loss`] (which lets a solver keep the
//! residual instead of the margin), [`Loss::is_smooth`], [`Penalty::value`],
//! [`Penalty::quadratic_decrease_root`], ... A wrapper that forwarded only the required
//! methods would silently run the scalar defaults (3.5-4x slower on a dense LASSO pass)
//! and, for the residual losses, a different summation path: the run-time choice must be
//! the typed object, bit for bit. The test `every_trait_method_is_forwarded` below reads
//! the trait definitions and the forwarding impls of this file and fails when a method is
//! missing; `dp-optim`'s `tests/run_time_choice.rs` checks that fits through these types
//! are bit-identical to the typed fits.
//!
//! ```
//! use dp_models::choice::{AnyLoss, AnyPenalty, LossKind, PenaltyKind};
//! use dp_models::{Loss, Penalty};
//!
//! let loss = AnyLoss::from_kind("squared".parse::<LossKind>()?);
//! assert!(loss.is_residual_loss()); // forwarded: the solver may keep the residual
//! let pen = AnyPenalty::from_kind(PenaltyKind::L1, 0.1, None)?;
//! assert_eq!(pen.prox_1d(0, 0.5, 1.0), 0.4);
//! # Ok::<(), dp_models::ModelError>(())
//! ```

use crate::dual::DualLoss;
use crate::error::{ModelError, Result};
use crate::loss::{Hinge, Huber, Logistic, Loss, Squared, SquaredHinge};
use crate::penalty::{BoxConstraint, ElasticNet, NoPenalty, Penalty, L1, L2};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// A per-sample loss, by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LossKind {
    /// `log(1 + exp(-y z))`, labels +-1 (classification).
    Logistic,
    /// `1/2 (z - y)^2` (regression).
    Squared,
    /// `max(0, 1 - y z)^2`, labels +-1 (classification).
    SquaredHinge,
    /// Huber with threshold 1 (robust regression).
    Huber,
    /// `max(0, 1 - y z)`, labels +-1 (classification; not smooth: dual methods only).
    Hinge,
}

impl LossKind {
    /// Every loss, in the order of the docs.
    pub const ALL: [LossKind; 5] = [
        LossKind::Logistic,
        LossKind::Squared,
        LossKind::SquaredHinge,
        LossKind::Huber,
        LossKind::Hinge,
    ];
    /// The kebab-case name (as parsed and serialised).
    pub fn as_str(self) -> &'static str {
        match self {
            LossKind::Logistic => "logistic",
            LossKind::Squared => "squared",
            LossKind::SquaredHinge => "squared-hinge",
            LossKind::Huber => "huber",
            LossKind::Hinge => "hinge",
        }
    }
    /// True for the losses whose labels are `{-1, +1}`.
    pub fn is_classification(self) -> bool {
        matches!(
            self,
            LossKind::Logistic | LossKind::SquaredHinge | LossKind::Hinge
        )
    }
}

impl fmt::Display for LossKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for LossKind {
    type Err = ModelError;
    fn from_str(s: &str) -> Result<Self> {
        LossKind::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| {
                ModelError::Unsupported(format!(
                    "unknown loss {s:?}: expected one of logistic, squared, squared-hinge, huber, hinge"
                ))
            })
    }
}

/// A penalty, by name (its strength is given separately).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PenaltyKind {
    /// No penalty.
    None,
    /// `lambda ||w||_1`.
    L1,
    /// `(lambda/2) ||w||_2^2`.
    L2,
    /// `lambda (||w||_1 + (1/2) ||w||_2^2)`.
    ElasticNet,
}

impl PenaltyKind {
    /// Every penalty, in the order of the docs.
    pub const ALL: [PenaltyKind; 4] = [
        PenaltyKind::None,
        PenaltyKind::L1,
        PenaltyKind::L2,
        PenaltyKind::ElasticNet,
    ];
    /// The kebab-case name (as parsed and serialised).
    pub fn as_str(self) -> &'static str {
        match self {
            PenaltyKind::None => "none",
            PenaltyKind::L1 => "l1",
            PenaltyKind::L2 => "l2",
            PenaltyKind::ElasticNet => "elastic-net",
        }
    }
}

impl fmt::Display for PenaltyKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for PenaltyKind {
    type Err = ModelError;
    fn from_str(s: &str) -> Result<Self> {
        PenaltyKind::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| {
                ModelError::Unsupported(format!(
                    "unknown penalty {s:?}: expected one of none, l1, l2, elastic-net"
                ))
            })
    }
}

/// A loss chosen at run time. Forwards every [`Loss`] method to the chosen loss.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum AnyLoss {
    /// [`Logistic`].
    Logistic(Logistic),
    /// [`Squared`].
    Squared(Squared),
    /// [`SquaredHinge`].
    SquaredHinge(SquaredHinge),
    /// [`Huber`].
    Huber(Huber),
    /// [`Hinge`].
    Hinge(Hinge),
}

impl AnyLoss {
    /// The loss named by `kind`, with the library's parameters: `Squared::half()`
    /// (`1/2 (z - y)^2`) and `Huber` with threshold 1.
    pub fn from_kind(kind: LossKind) -> Self {
        match kind {
            LossKind::Logistic => AnyLoss::Logistic(Logistic),
            LossKind::Squared => AnyLoss::Squared(Squared::half()),
            LossKind::SquaredHinge => AnyLoss::SquaredHinge(SquaredHinge),
            LossKind::Huber => AnyLoss::Huber(Huber::new(1.0).expect("1 is a valid threshold")),
            LossKind::Hinge => AnyLoss::Hinge(Hinge),
        }
    }
    /// Which loss this is.
    pub fn kind(&self) -> LossKind {
        match self {
            AnyLoss::Logistic(_) => LossKind::Logistic,
            AnyLoss::Squared(_) => LossKind::Squared,
            AnyLoss::SquaredHinge(_) => LossKind::SquaredHinge,
            AnyLoss::Huber(_) => LossKind::Huber,
            AnyLoss::Hinge(_) => LossKind::Hinge,
        }
    }
}

macro_rules! each_loss {
    ($self:ident, $l:ident => $e:expr) => {
        match $self {
            AnyLoss::Logistic($l) => $e,
            AnyLoss::Squared($l) => $e,
            AnyLoss::SquaredHinge($l) => $e,
            AnyLoss::Huber($l) => $e,
            AnyLoss::Hinge($l) => $e,
        }
    };
}

/// The `Loss` impl of `$ty`, forwarding every method through `$each!` (one of the `each_*`
/// matches): the run-time choices share one forwarding list, so a method the one
/// forwards the other cannot forget (a forgotten one would fall back to the trait's
/// generic default, e.g. the scalar kernels instead of the loss's SIMD ones).
macro_rules! forward_loss {
    ($ty:ident, $each:ident) => {
        impl Loss for $ty {
            fn name(&self) -> &'static str {
                $each!(self, l => l.name())
            }
            #[inline]
            fn value(&self, z: f64, y: f64) -> f64 {
                $each!(self, l => l.value(z, y))
            }
            #[inline]
            fn derivative(&self, z: f64, y: f64) -> f64 {
                $each!(self, l => l.derivative(z, y))
            }
            fn curvature_bound(&self) -> Option<f64> {
                $each!(self, l => l.curvature_bound())
            }
            fn derivative_bound(&self, label_bound: f64) -> Option<f64> {
                $each!(self, l => l.derivative_bound(label_bound))
            }
            fn is_smooth(&self) -> bool {
                $each!(self, l => l.is_smooth())
            }
            fn is_classification(&self) -> bool {
                $each!(self, l => l.is_classification())
            }
            fn conjugate(&self, u: f64, y: f64) -> Option<f64> {
                $each!(self, l => l.conjugate(u, y))
            }
            #[inline]
            fn is_residual_loss(&self) -> bool {
                $each!(self, l => l.is_residual_loss())
            }
            #[inline]
            fn dense_col_grad_sum(
                &self,
                x: &[f64],
                z: &[f64],
                y: Option<&[f64]>,
                clip: Option<f64>,
            ) -> f64 {
                $each!(self, l => l.dense_col_grad_sum(x, z, y, clip))
            }
            #[inline]
            fn derivatives(&self, z: &[f64], y: &[f64], out: &mut [f64]) {
                $each!(self, l => l.derivatives(z, y, out))
            }
            #[inline]
            fn dense_step_grad_sum(
                &self,
                update: (&[f64], f64),
                x: &[f64],
                z: &mut [f64],
                y: Option<&[f64]>,
                clip: Option<f64>,
            ) -> f64 {
                $each!(self, l => l.dense_step_grad_sum(update, x, z, y, clip))
            }
            #[inline]
            fn margin_kernel(&self) -> Option<$crate::simd::margin::MarginKernel> {
                $each!(self, l => l.margin_kernel())
            }
        }
    };
}

forward_loss!(AnyLoss, each_loss);

/// A loss with dual coordinate steps (SDCA, DP-SCD) chosen at run time. Forwards every
/// [`Loss`] and [`DualLoss`] method.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum AnyDualLoss {
    /// [`Squared`].
    Squared(Squared),
    /// [`Logistic`].
    Logistic(Logistic),
    /// [`Hinge`].
    Hinge(Hinge),
}

impl AnyDualLoss {
    /// The dual loss named by `kind`, or an error naming the losses that have dual steps.
    pub fn from_kind(kind: LossKind) -> Result<Self> {
        match kind {
            LossKind::Squared => Ok(AnyDualLoss::Squared(Squared::half())),
            LossKind::Logistic => Ok(AnyDualLoss::Logistic(Logistic)),
            LossKind::Hinge => Ok(AnyDualLoss::Hinge(Hinge)),
            other => Err(ModelError::Unsupported(format!(
                "loss {other} has no dual coordinate step: dual methods (SDCA, DP-SCD) take squared, logistic or hinge"
            ))),
        }
    }
    /// Which loss this is.
    pub fn kind(&self) -> LossKind {
        match self {
            AnyDualLoss::Squared(_) => LossKind::Squared,
            AnyDualLoss::Logistic(_) => LossKind::Logistic,
            AnyDualLoss::Hinge(_) => LossKind::Hinge,
        }
    }
}

macro_rules! each_dual {
    ($self:ident, $l:ident => $e:expr) => {
        match $self {
            AnyDualLoss::Squared($l) => $e,
            AnyDualLoss::Logistic($l) => $e,
            AnyDualLoss::Hinge($l) => $e,
        }
    };
}

forward_loss!(AnyDualLoss, each_dual);

impl DualLoss for AnyDualLoss {
    #[inline]
    fn dual_loss(&self, alpha: f64, y: f64) -> f64 {
        each_dual!(self, l => l.dual_loss(alpha, y))
    }
    #[inline]
    fn dual_step(&self, alpha: f64, p: f64, y: f64, k: f64) -> f64 {
        each_dual!(self, l => l.dual_step(alpha, p, y, k))
    }
    fn step_bound(&self) -> Option<f64> {
        each_dual!(self, l => l.step_bound())
    }
}

/// A penalty chosen at run time. Forwards every [`Penalty`] method to the chosen
/// penalty.
#[derive(Debug, Clone, PartialEq)]
pub enum AnyPenalty {
    /// [`NoPenalty`].
    None(NoPenalty),
    /// [`L1`].
    L1(L1),
    /// [`L2`].
    L2(L2),
    /// [`ElasticNet`].
    ElasticNet(ElasticNet),
    /// [`BoxConstraint`].
    Box(BoxConstraint),
}

impl AnyPenalty {
    /// The penalty named by `kind` with strength `lambda` (both parts of the elastic
    /// net get `lambda`), and per-coordinate `weights` if given (e.g. 0 for an
    /// unpenalised intercept). Errors: `lambda` negative or not finite, `lambda != 0`
    /// with [`PenaltyKind::None`], invalid weights.
    pub fn from_kind(kind: PenaltyKind, lambda: f64, weights: Option<Vec<f64>>) -> Result<Self> {
        Ok(match kind {
            PenaltyKind::None => {
                if lambda != 0.0 {
                    return Err(ModelError::InvalidParameter {
                        name: "lambda",
                        value: lambda,
                        expected: "must be 0 with penalty none (choose l1, l2 or elastic-net)",
                    });
                }
                AnyPenalty::None(NoPenalty)
            }
            PenaltyKind::L1 => {
                let q = L1::new(lambda)?;
                AnyPenalty::L1(match weights {
                    Some(w) => q.with_weights(w)?,
                    None => q,
                })
            }
            PenaltyKind::L2 => {
                let q = L2::new(lambda)?;
                AnyPenalty::L2(match weights {
                    Some(w) => q.with_weights(w)?,
                    None => q,
                })
            }
            PenaltyKind::ElasticNet => {
                let q = ElasticNet::new(lambda, lambda)?;
                AnyPenalty::ElasticNet(match weights {
                    Some(w) => q.with_weights(w)?,
                    None => q,
                })
            }
        })
    }
    /// Which penalty this is (`None` for a box constraint, which has no kind).
    pub fn kind(&self) -> Option<PenaltyKind> {
        match self {
            AnyPenalty::None(_) => Some(PenaltyKind::None),
            AnyPenalty::L1(_) => Some(PenaltyKind::L1),
            AnyPenalty::L2(_) => Some(PenaltyKind::L2),
            AnyPenalty::ElasticNet(_) => Some(PenaltyKind::ElasticNet),
            AnyPenalty::Box(_) => None,
        }
    }
}

macro_rules! each_penalty {
    ($self:ident, $q:ident => $e:expr) => {
        match $self {
            AnyPenalty::None($q) => $e,
            AnyPenalty::L1($q) => $e,
            AnyPenalty::L2($q) => $e,
            AnyPenalty::ElasticNet($q) => $e,
            AnyPenalty::Box($q) => $e,
        }
    };
}

impl Penalty for AnyPenalty {
    fn name(&self) -> &'static str {
        each_penalty!(self, q => q.name())
    }
    #[inline]
    fn value_1d(&self, j: usize, wj: f64) -> f64 {
        each_penalty!(self, q => q.value_1d(j, wj))
    }
    #[inline]
    fn prox_1d(&self, j: usize, v: f64, step: f64) -> f64 {
        each_penalty!(self, q => q.prox_1d(j, v, step))
    }
    #[inline]
    fn subdiff_distance(&self, j: usize, wj: f64, grad_j: f64) -> f64 {
        each_penalty!(self, q => q.subdiff_distance(j, wj, grad_j))
    }
    fn value(&self, w: &[f64]) -> f64 {
        each_penalty!(self, q => q.value(w))
    }
    fn conjugate_1d(&self, j: usize, v: f64) -> Option<f64> {
        each_penalty!(self, q => q.conjugate_1d(j, v))
    }
    fn dual_radius(&self, j: usize) -> Option<f64> {
        each_penalty!(self, q => q.dual_radius(j))
    }
    fn check_dimension(&self, p: usize) -> Result<()> {
        each_penalty!(self, q => q.check_dimension(p))
    }
    #[inline]
    fn quadratic_decrease_root(
        &self,
        j: usize,
        g: f64,
        wj: f64,
        m: f64,
        sqrt_m: f64,
    ) -> Option<f64> {
        each_penalty!(self, q => q.quadratic_decrease_root(j, g, wj, m, sqrt_m))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names of the methods declared in `trait NAME ... { ... }` of `src`.
    fn trait_methods(src: &str, header: &str) -> Vec<String> {
        let body = block_after(src, header);
        method_names(&body)
    }

    /// The text of the `{ ... }` block that follows the first occurrence of `header`.
    fn block_after(src: &str, header: &str) -> String {
        let start = src
            .find(header)
            .unwrap_or_else(|| panic!("{header:?} not found"));
        let open = start + src[start..].find('{').expect("a block");
        let mut depth = 0usize;
        for (i, c) in src[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        return src[open..open + i + 1].to_string();
                    }
                }
                _ => {}
            }
        }
        panic!("unbalanced block after {header:?}");
    }

    /// `fn NAME` at the first nesting level of a block (methods, not inner helpers).
    fn method_names(block: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut depth = 0usize;
        let bytes = block.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'{' => depth += 1,
                b'}' => depth = depth.saturating_sub(1),
                b'/' if bytes[i..].starts_with(b"//") => {
                    // Skip comments (doc comments mention method names).
                    i += bytes[i..]
                        .iter()
                        .position(|&b| b == b'\n')
                        .unwrap_or(bytes.len() - i);
                    continue;
                }
                _ => {}
            }
            let word_start =
                i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
            if depth == 1 && word_start && bytes[i..].starts_with(b"fn ") {
                let rest = &block[i + 3..];
                let end = rest
                    .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .unwrap_or(rest.len());
                out.push(rest[..end].to_string());
            }
            i += 1;
        }
        out
    }

    /// Fails when a trait gains a method that a forwarding impl of this file does not
    /// forward (the provided methods included: their defaults are the slow scalar
    /// kernels, and a wrapper that inherits them is not the chosen loss).
    #[test]
    fn every_trait_method_is_forwarded() {
        let this = include_str!("choice.rs");
        let cases = [
            // `forward_loss!`'s body: the impl of AnyLoss and of AnyDualLoss.
            (
                include_str!("loss.rs"),
                "pub trait Loss",
                "impl Loss for $ty",
            ),
            (
                include_str!("dual.rs"),
                "pub trait DualLoss",
                "impl DualLoss for AnyDualLoss",
            ),
            (
                include_str!("penalty.rs"),
                "pub trait Penalty",
                "impl Penalty for AnyPenalty",
            ),
        ];
        for ty in ["AnyLoss", "AnyDualLoss"] {
            assert!(
                this.contains(&format!("forward_loss!({ty}, ")),
                "{ty} does not take its Loss impl from forward_loss!"
            );
        }
        for (src, tr, imp) in cases {
            let wanted = trait_methods(src, tr);
            assert!(wanted.len() >= 3, "{tr}: found only {wanted:?}");
            let have = method_names(&block_after(this, imp));
            for m in &wanted {
                assert!(have.contains(m), "{imp} does not forward `{m}` of {tr}");
            }
            assert_eq!(
                wanted.len(),
                have.len(),
                "{imp}: {have:?} vs the trait's {wanted:?}"
            );
        }
    }

    /// The scanner itself finds the provided methods (so the test above can fail).
    #[test]
    fn scanner_sees_provided_methods() {
        let m = trait_methods(include_str!("loss.rs"), "pub trait Loss");
        for name in [
            "dense_col_grad_sum",
            "derivatives",
            "is_residual_loss",
            "dense_step_grad_sum",
            "is_smooth",
        ] {
            assert!(m.contains(&name.to_string()), "{name} missing from {m:?}");
        }
        let partial = "impl Loss for X { fn name(&self) -> &str { \"x\" } }";
        assert_eq!(
            method_names(&block_after(partial, "impl Loss for X")),
            vec!["name"]
        );
    }

    #[test]
    fn kinds_round_trip_and_reject_unknown_names() {
        for k in LossKind::ALL {
            assert_eq!(k.as_str().parse::<LossKind>().unwrap(), k);
            assert_eq!(AnyLoss::from_kind(k).kind(), k);
            assert_eq!(
                AnyLoss::from_kind(k).is_classification(),
                k.is_classification()
            );
        }
        for k in PenaltyKind::ALL {
            assert_eq!(k.as_str().parse::<PenaltyKind>().unwrap(), k);
            assert_eq!(AnyPenalty::from_kind(k, 0.0, None).unwrap().kind(), Some(k));
        }
        let e = "lasso".parse::<PenaltyKind>().unwrap_err().to_string();
        assert!(e.contains("lasso") && e.contains("elastic-net"), "{e}");
        let e = "sq".parse::<LossKind>().unwrap_err().to_string();
        assert!(e.contains("\"sq\""), "{e}");
        assert!(AnyPenalty::from_kind(PenaltyKind::None, 0.1, None).is_err());
        assert!(AnyPenalty::from_kind(PenaltyKind::L1, -1.0, None).is_err());
        assert!(AnyPenalty::from_kind(PenaltyKind::L2, f64::NAN, None).is_err());
        assert!(AnyDualLoss::from_kind(LossKind::Huber).is_err());
    }

    /// The forwarded kernels are the typed ones, bit for bit (the vectorised ones, not
    /// the scalar default).
    #[test]
    fn kernels_are_the_typed_ones() {
        let n = 37;
        let x: Vec<f64> = (0..n).map(|i| ((i * 7) % 11) as f64 / 5.0 - 1.0).collect();
        let z: Vec<f64> = (0..n).map(|i| ((i * 3) % 13) as f64 / 4.0 - 1.5).collect();
        let y: Vec<f64> = (0..n)
            .map(|i| if i % 3 == 0 { 1.0 } else { -1.0 })
            .collect();
        fn check<L: Loss>(typed: &L, any: &AnyLoss, x: &[f64], z: &[f64], y: &[f64]) {
            for clip in [None, Some(0.3)] {
                let a = typed.dense_col_grad_sum(x, z, Some(y), clip);
                let b = any.dense_col_grad_sum(x, z, Some(y), clip);
                assert_eq!(a.to_bits(), b.to_bits(), "{}", typed.name());
                let (mut z1, mut z2) = (z.to_vec(), z.to_vec());
                let a = typed.dense_step_grad_sum((x, 0.25), x, &mut z1, None, clip);
                let b = any.dense_step_grad_sum((x, 0.25), x, &mut z2, None, clip);
                assert_eq!(a.to_bits(), b.to_bits(), "{}", typed.name());
                assert_eq!(z1, z2);
            }
            let (mut o1, mut o2) = (vec![0.0; x.len()], vec![0.0; x.len()]);
            typed.derivatives(z, y, &mut o1);
            any.derivatives(z, y, &mut o2);
            assert_eq!(o1, o2, "{}", typed.name());
            assert_eq!(typed.is_residual_loss(), any.is_residual_loss());
        }
        check(
            &Logistic,
            &AnyLoss::from_kind(LossKind::Logistic),
            &x,
            &z,
            &y,
        );
        check(
            &Squared::half(),
            &AnyLoss::from_kind(LossKind::Squared),
            &x,
            &z,
            &y,
        );
        check(
            &SquaredHinge,
            &AnyLoss::from_kind(LossKind::SquaredHinge),
            &x,
            &z,
            &y,
        );
        check(
            &Huber::new(1.0).unwrap(),
            &AnyLoss::from_kind(LossKind::Huber),
            &x,
            &z,
            &y,
        );
        check(&Hinge, &AnyLoss::from_kind(LossKind::Hinge), &x, &z, &y);
    }
}
