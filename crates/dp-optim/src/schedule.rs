//! Data-independent loop structure of coordinate descent: the averaging mode, the
//! coordinate order and the resulting schedule (`T` epochs of `K` steps).
//!
//! Everything here is a function of the parameters and of `p` only, never of the data,
//! which is what lets DP-CD's privacy analysis ignore it.

use crate::error::{positive_count, OptimError, Result};
use rand::Rng;
use serde::{Deserialize, Serialize};

/// How iterates are averaged (Algorithm 1's `T` outer x `K` inner loop).
///
/// In every mode the number of coordinate updates is at least `passes * p`; the noise is
/// calibrated to the exact number `T * K` of updates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum Averaging {
    /// `K = 1`, `T = passes * p`: plain randomized proximal CD returning the last iterate
    /// (what the paper's experiments report; the default).
    #[default]
    LastIterate,
    /// `K` inner steps per epoch, `T = ceil(passes * p / K)` epochs, each epoch ending in
    /// the average of its `K` iterates (Algorithm 1 as written).
    Every(u64),
    /// `T = 1`, `K = passes * p`: one average over all iterates (the convex theory,
    /// Theorem 3.3 with `T = 1`).
    Once,
}

/// The order in which coordinate descent visits coordinates.
///
/// Every order is chosen **independently of the data** (a fixed sweep, or a function of
/// the coordinate-selection random stream only, which is separate from the noise
/// stream), so DP-CD's privacy analysis — `T*K` adaptively composed Gaussian releases,
/// release `k` of coordinate `j_k` with sensitivity `2 C_{j_k} / n` and noise
/// `s * 2 C_{j_k} / n` — holds unchanged for each of them (see the `# Privacy` section of [`crate::DpCd`]'s `fit_with_rng`).
///
/// The *utility* theory of Mangold et al. (2022, Theorems 3.2–3.3) assumes uniform
/// sampling with replacement ([`CoordinateOrder::Uniform`], the default and Algorithm 1
/// as printed); the other orders carry no utility guarantee from that paper.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum CoordinateOrder {
    /// `j` drawn uniformly from `{0..p-1}` with replacement at every step (Algorithm 1).
    #[default]
    Uniform,
    /// Cyclic sweep `0, 1, ..., p-1, 0, 1, ...` (no randomness drawn).
    Cyclic,
    /// A fresh uniformly random permutation of `{0..p-1}` for each pass of `p` steps
    /// (random reshuffling; Fisher–Yates on the selection stream).
    Permutation,
}

impl CoordinateOrder {
    /// Short name used in reports: "uniform", "cyclic" or "permutation".
    pub fn name(&self) -> &'static str {
        match self {
            CoordinateOrder::Uniform => "uniform",
            CoordinateOrder::Cyclic => "cyclic",
            CoordinateOrder::Permutation => "permutation",
        }
    }
}

/// The coordinate stream of one run: `next` returns the coordinate of the next step.
/// Allocates once (the permutation buffer), never inside the loop.
pub(crate) struct CoordinateSelector {
    order: CoordinateOrder,
    p: usize,
    /// Position inside the current pass (`0..p`).
    pos: usize,
    /// The current pass's permutation ([`CoordinateOrder::Permutation`] only).
    perm: Vec<usize>,
    /// [`CoordinateOrder::Uniform`]: the next [`LOOKAHEAD`] coordinates, drawn in
    /// stream order before they are used (`ring[head]` is the next one), so that the
    /// solver can hint their data to the cache. The coordinates returned are the same
    /// sequence as drawing one per step.
    ring: [usize; LOOKAHEAD],
    head: usize,
    filled: bool,
}

/// How many coordinates the uniform order draws ahead of use.
pub(crate) const LOOKAHEAD: usize = 16;

impl CoordinateSelector {
    pub(crate) fn new(order: CoordinateOrder, p: usize) -> Self {
        let perm = match order {
            CoordinateOrder::Permutation => (0..p).collect(),
            _ => Vec::new(),
        };
        Self {
            order,
            p,
            pos: 0,
            perm,
            ring: [0; LOOKAHEAD],
            head: 0,
            filled: false,
        }
    }

    /// Whether [`CoordinateSelector::ahead`] can name coming coordinates (the uniform
    /// order); loop-invariant, so that other orders skip the hints at no cost.
    #[inline]
    pub(crate) fn hints(&self) -> bool {
        self.order == CoordinateOrder::Uniform
    }

    /// The coordinate `d` steps after the one the last [`CoordinateSelector::next`]
    /// returned (`1 <= d <= LOOKAHEAD`), if it is known already (uniform order after
    /// the first draw); a hint only, it draws nothing.
    #[inline]
    pub(crate) fn ahead(&self, d: usize) -> Option<usize> {
        match self.order {
            CoordinateOrder::Uniform if self.filled && (1..=LOOKAHEAD).contains(&d) => {
                Some(self.ring[(self.head + d - 1) % LOOKAHEAD])
            }
            // Cyclic order reads the columns in storage order, which the hardware
            // prefetcher follows by itself (hints measured slower there).
            _ => None,
        }
    }

    #[inline]
    pub(crate) fn next<R: Rng + ?Sized>(&mut self, rng: &mut R) -> usize {
        match self.order {
            CoordinateOrder::Uniform => {
                if !self.filled {
                    for slot in self.ring.iter_mut() {
                        *slot = rng.random_range(0..self.p);
                    }
                    self.filled = true;
                }
                let j = self.ring[self.head];
                self.ring[self.head] = rng.random_range(0..self.p);
                self.head = (self.head + 1) % LOOKAHEAD;
                j
            }
            CoordinateOrder::Cyclic => {
                let j = self.pos;
                self.pos = if j + 1 == self.p { 0 } else { j + 1 };
                j
            }
            CoordinateOrder::Permutation => {
                if self.pos == 0 {
                    // Fisher–Yates: a uniform permutation from the selection stream.
                    for i in (1..self.p).rev() {
                        let k = rng.random_range(0..=i);
                        self.perm.swap(i, k);
                    }
                }
                let j = self.perm[self.pos];
                self.pos = if self.pos + 1 == self.p {
                    0
                } else {
                    self.pos + 1
                };
                j
            }
        }
    }
}

/// The loop structure: `outer` epochs of `inner` coordinate steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Schedule {
    /// `T`, the number of epochs.
    pub outer: u64,
    /// `K`, the number of coordinate steps per epoch.
    pub inner: u64,
    /// Whether each epoch ends by averaging its iterates (false when `K = 1`).
    pub averaged: bool,
}

impl Schedule {
    /// The schedule of `passes` passes over `p` coordinates under `averaging`.
    pub fn new(averaging: Averaging, passes: u64, p: usize) -> Result<Self> {
        let total = passes
            .checked_mul(p as u64)
            .ok_or_else(|| OptimError::InvalidParameter {
                name: "passes",
                value: passes.to_string(),
                expected: "passes * p overflows u64; use fewer passes",
            })?;
        positive_count("passes * p", total)?;
        Self::from_updates(averaging, total)
    }
    /// The schedule of at least `total >= 1` coordinate updates under `averaging`
    /// (exactly `total` unless `Averaging::Every(K)` rounds up to whole periods).
    pub fn from_updates(averaging: Averaging, total: u64) -> Result<Self> {
        positive_count("steps", total)?;
        Ok(match averaging {
            Averaging::LastIterate => Self {
                outer: total,
                inner: 1,
                averaged: false,
            },
            Averaging::Every(k) => {
                positive_count("averaging period K", k)?;
                Self {
                    outer: total.div_ceil(k),
                    inner: k,
                    averaged: k > 1,
                }
            }
            Averaging::Once => Self {
                outer: 1,
                inner: total,
                averaged: total > 1,
            },
        })
    }
    /// `T * K`, the number of coordinate updates (= Gaussian releases in DP-CD).
    pub fn updates(&self) -> u64 {
        self.outer * self.inner
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    /// Drawing ahead changes nothing: the uniform order returns the sequence of one
    /// `random_range(0..p)` per step from the same stream, and `ahead(d)` names the
    /// coordinate that `next` returns `d` calls later.
    #[test]
    fn uniform_lookahead_returns_the_per_step_sequence() {
        let p = 37;
        let steps = 500;
        let mut plain = ChaCha20Rng::seed_from_u64(11);
        let expected: Vec<usize> = (0..steps).map(|_| plain.random_range(0..p)).collect();
        let mut rng = ChaCha20Rng::seed_from_u64(11);
        let mut sel = CoordinateSelector::new(CoordinateOrder::Uniform, p);
        let mut got = Vec::new();
        let mut hints = Vec::new();
        for _ in 0..steps {
            got.push(sel.next(&mut rng));
            hints.push((got.len() - 1, sel.ahead(1), sel.ahead(LOOKAHEAD)));
        }
        assert_eq!(got, expected);
        for (t, one, far) in hints {
            if t + 1 < steps {
                assert_eq!(one, Some(expected[t + 1]));
            }
            if t + LOOKAHEAD < steps {
                assert_eq!(far, Some(expected[t + LOOKAHEAD]));
            }
        }
        assert_eq!(sel.ahead(0), None);
        assert_eq!(sel.ahead(LOOKAHEAD + 1), None);
    }
}
