//! Renyi differential privacy: conversion to (epsilon, delta), order grids and the
//! optimisation over the order.
//!
//! An RDP *curve* is a map `alpha -> eps(alpha)` valid for every order `alpha > 1` on
//! which it is evaluated; composition adds curves (Mironov 2017, Prop. 1), so a plan of
//! `T` identical steps is `T * eps_step(alpha)`: this module computes the per-order
//! value once and scales it.
//!
//! # Conversions
//!
//! * [`RdpConversion::Mironov`]: `(alpha, r)`-RDP implies `(r + log(1/delta)/(alpha-1), delta)`-DP
//!   (Mironov 2017, Prop. 3). DP-CD's Eq. (18) is this conversion minimised over
//!   continuous alpha.
//! * [`RdpConversion::Improved`]: `(alpha, r)`-RDP implies
//!   `(r + log((alpha-1)/alpha) - (log delta + log alpha)/(alpha-1), delta)`-DP
//!   (Balle, Barthe, Gaboardi, Hsu & Sato 2020, Thm 21; Canonne, Kamath & Steinke 2020,
//!   Prop. 12). It is smaller than Mironov's at every order; the minimum of both (and 0)
//!   is returned, since each is valid.
//!
//! # Orders
//!
//! Any single order gives a valid bound, so the search over orders only has to report
//! the best order it *evaluated*; it never relies on unimodality for soundness.
//! [`OrderGrid::fine`] evaluates a grid at least as fine as Google dp_accounting's
//! default, then refines by golden-section search between the neighbours of the best
//! grid order and reports the optimal order found.

use crate::error::{AccountingError, Result};
use crate::num::brent_min;
use crate::params::Delta;
use serde::{Deserialize, Serialize};

/// Which RDP -> (epsilon, delta) conversion to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum RdpConversion {
    /// Balle et al. 2020 Thm 21 = Canonne, Kamath & Steinke 2020 Prop. 12 (the smaller
    /// of it and Mironov's is returned).
    Improved,
    /// Mironov 2017 Prop. 3 (what DP-CD's Eq. 18 uses).
    Mironov,
}

/// The epsilon of `(order, rdp)`-RDP at `delta` under `conversion`, rounded up.
///
/// Returns `+inf` if `rdp` is `+inf`. Errors on an order that is not finite and > 1,
/// or a NaN / negative `rdp`.
pub fn rdp_to_epsilon(
    order: f64,
    rdp: f64,
    delta: Delta,
    conversion: RdpConversion,
) -> Result<f64> {
    if !(order.is_finite() && order > 1.0) {
        return Err(AccountingError::InvalidParameter {
            name: "Renyi order (alpha)",
            value: order,
            expected: "must be finite and > 1",
        });
    }
    if rdp.is_nan() || rdp < 0.0 {
        return Err(AccountingError::InvalidParameter {
            name: "RDP value",
            value: rdp,
            expected: "must be >= 0 (and not NaN)",
        });
    }
    Ok(crate::num::round_up(convert_unchecked(
        order,
        rdp,
        delta.get().ln(),
        conversion,
    )))
}

/// Conversion without validation; `log_delta = ln(delta) < 0`.
pub(crate) fn convert_unchecked(
    order: f64,
    rdp: f64,
    log_delta: f64,
    conversion: RdpConversion,
) -> f64 {
    let am1 = order - 1.0;
    let mironov = rdp - log_delta / am1;
    let eps = match conversion {
        RdpConversion::Mironov => mironov,
        RdpConversion::Improved => {
            let improved = rdp + (-1.0 / order).ln_1p() - (log_delta + order.ln()) / am1;
            improved.min(mironov)
        }
    };
    eps.max(0.0)
}

/// A set of Renyi orders to evaluate, optionally refined by continuous search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "OrderGridRepr")]
pub struct OrderGrid {
    orders: Vec<f64>,
    refine: bool,
    #[serde(default)]
    integer_above: Option<f64>,
}

/// Unvalidated serde form of [`OrderGrid`].
#[derive(Deserialize)]
struct OrderGridRepr {
    orders: Vec<f64>,
    refine: bool,
    #[serde(default)]
    integer_above: Option<f64>,
}

impl TryFrom<OrderGridRepr> for OrderGrid {
    type Error = AccountingError;
    fn try_from(r: OrderGridRepr) -> Result<OrderGrid> {
        let mut g = OrderGrid::custom(r.orders, r.refine)?;
        g.integer_above = r.integer_above;
        Ok(g)
    }
}

impl OrderGrid {
    /// The default grid: `1 + x/100` for x in 1..10, `1 + x/10` for x in 1..100,
    /// every integer 11..=64, then 80, 96, 128, 192, 256, 384, 512, 768, 1024, 1536,
    /// 2048, 3072, 4096 — a superset of Google dp_accounting's default
    /// (`1 + x/10`, 12..63, 128, 256, 512, 1024) — with golden-section refinement.
    pub fn fine() -> OrderGrid {
        let mut orders: Vec<f64> = (1..10).map(|x| 1.0 + x as f64 / 100.0).collect();
        orders.extend((1..100).map(|x| 1.0 + x as f64 / 10.0));
        orders.extend((11..=64).map(|x| x as f64));
        orders.extend([
            80.0, 96.0, 128.0, 192.0, 256.0, 384.0, 512.0, 768.0, 1024.0, 1536.0, 2048.0, 3072.0,
            4096.0,
        ]);
        OrderGrid {
            orders,
            refine: true,
            integer_above: None,
        }
    }

    /// The same grid, but the continuous refinement only evaluates integer orders above
    /// `threshold` (for curves that are only available, or cheap, at integer orders there).
    pub fn with_integer_above(mut self, threshold: f64) -> OrderGrid {
        self.integer_above = Some(threshold);
        self
    }

    /// The moments accountant of Abadi et al. 2016 as DP-SCD uses it: moment orders
    /// `lambda = 1..=128`, i.e. Renyi orders `alpha = lambda + 1 = 2..=129`, integers only,
    /// no refinement (use with [`RdpConversion::Mironov`], which is the moments
    /// accountant's tail bound `eps = (T log A - log delta) / lambda`).
    pub fn moments_accountant() -> OrderGrid {
        OrderGrid {
            orders: (2..=129).map(|a| a as f64).collect(),
            refine: false,
            integer_above: None,
        }
    }

    /// A custom grid. Orders must be finite and > 1; they are sorted and deduplicated.
    /// With `refine`, the best grid order is refined by golden-section search between
    /// its neighbours (the curve must then be valid at every real order in that range).
    pub fn custom(mut orders: Vec<f64>, refine: bool) -> Result<OrderGrid> {
        if orders.is_empty() {
            return Err(AccountingError::InvalidCount {
                name: "number of Renyi orders",
                value: 0,
                expected: "must be at least 1",
            });
        }
        if let Some(&bad) = orders.iter().find(|a| !(a.is_finite() && **a > 1.0)) {
            return Err(AccountingError::InvalidParameter {
                name: "Renyi order (alpha)",
                value: bad,
                expected: "must be finite and > 1",
            });
        }
        orders.sort_by(f64::total_cmp);
        orders.dedup();
        Ok(OrderGrid {
            orders,
            refine,
            integer_above: None,
        })
    }

    /// The grid's orders, increasing.
    pub fn orders(&self) -> &[f64] {
        &self.orders
    }

    /// Whether the best grid order is refined by continuous search.
    pub fn refines(&self) -> bool {
        self.refine
    }
}

/// An epsilon obtained from an RDP curve, with the order that attains it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RdpEpsilon {
    /// The epsilon, rounded up.
    pub epsilon: f64,
    /// The Renyi order at which it is attained.
    pub order: f64,
}

/// A lower bound on the converted epsilon at every order `>= order` given the curve value
/// `rdp` at `order`, valid when the curve is non-decreasing in the order (true of Renyi
/// divergences, Mironov 2017 Prop. 9 / van Erven & Harremoes 2014 Thm 3):
/// Mironov's offset `log(1/delta)/(a-1)` is positive, and the improved one is at least
/// `-(1 + ln order)/(order - 1)` on `[order, inf)`.
fn lower_bound_above(order: f64, rdp: f64, conversion: RdpConversion) -> f64 {
    match conversion {
        RdpConversion::Mironov => rdp,
        RdpConversion::Improved => rdp - (1.0 + order.ln()) / (order - 1.0),
    }
}

/// Replaces `best` by `(epsilon, order)` when `epsilon` is strictly smaller; returns
/// whether it did.
fn improve(best: &mut RdpEpsilon, epsilon: f64, order: f64) -> bool {
    let better = epsilon < best.epsilon;
    if better {
        *best = RdpEpsilon { epsilon, order };
    }
    better
}

/// Most integer orders the refinement walks from the best one in each direction (a
/// bound on the work: the walk usually takes a few steps).
const INTEGER_WALK_MAX: usize = 4096;

/// Minimises the converted epsilon of an RDP curve over `grid`.
///
/// `curve(alpha)` must return a valid RDP bound at order `alpha` (`+inf` allowed for
/// orders where none is available; NaN is an error). The result is the smallest
/// converted epsilon over every order evaluated, which is a valid bound whatever the
/// shape of the curve.
///
/// Orders that provably cannot beat the best value found are skipped, assuming the
/// curve is non-decreasing in the order (every true RDP curve is): integer grid orders
/// are scanned upwards until a lower bound on all higher orders exceeds the best, and a
/// fractional grid order is evaluated only if `curve(largest evaluated order below it)`
/// plus its conversion offset is below the best. If a custom curve is not monotone this
/// can only make the result less tight, never invalid. With refinement, a golden-section
/// search between the grid neighbours of the best order follows, and, where the grid
/// evaluates only integer orders ([`OrderGrid::with_integer_above`]), a walk over the
/// neighbouring integers of the best order while they improve.
pub fn epsilon_from_curve<F: FnMut(f64) -> f64>(
    mut curve: F,
    delta: Delta,
    conversion: RdpConversion,
    grid: &OrderGrid,
) -> Result<RdpEpsilon> {
    let log_delta = delta.get().ln();
    let mut nan_at = None;
    let mut raw = |a: f64| -> f64 {
        let r = curve(a);
        if r.is_nan() {
            nan_at = Some(a);
            return f64::INFINITY;
        }
        r
    };
    let orders = &grid.orders;
    if orders.is_empty() {
        // only reachable through a deserialised grid
        return Err(AccountingError::InvalidCount {
            name: "number of Renyi orders",
            value: 0,
            expected: "must be at least 1",
        });
    }
    let mut best = RdpEpsilon {
        epsilon: f64::INFINITY,
        order: orders[0],
    };
    let mut best_i = 0;
    // (order, curve value) of evaluated integer orders, ascending
    let mut known: Vec<(f64, f64)> = Vec::new();
    // pass 1: integer orders, ascending, with pruning
    for (i, &a) in orders.iter().enumerate() {
        if a.fract() != 0.0 {
            continue;
        }
        let r = raw(a);
        known.push((a, r));
        if improve(&mut best, convert_unchecked(a, r, log_delta, conversion), a) {
            best_i = i;
        }
        if lower_bound_above(a, r, conversion).max(0.0) >= best.epsilon {
            break;
        }
    }
    // pass 2: fractional orders whose lower bound beats the best. Lower bounds on the
    // curve at a in (k, k+1): monotonicity gives r(a) >= r(k); convexity of
    // Lambda(a) = (a-1) r(a) (a cumulant generating function, additive under
    // composition) gives Lambda(a) >= the chords through (k-1, k) and (k+1, k+2)
    // extended to a.
    let lambda_at = |o: f64| -> Option<f64> {
        if o == 1.0 {
            return Some(0.0);
        }
        known
            .binary_search_by(|(x, _)| x.total_cmp(&o))
            .ok()
            .map(|i| (o - 1.0) * known[i].1)
    };
    for (i, &a) in orders.iter().enumerate() {
        if a.fract() == 0.0 {
            continue;
        }
        let k = a.floor();
        let mut lb = known
            .iter()
            .rev()
            .find(|(o, _)| *o <= a)
            .map_or(0.0, |&(_, r)| r);
        if let (Some(l0), Some(l1)) = (lambda_at(k - 1.0), lambda_at(k)) {
            lb = lb.max((l1 + (a - k) * (l1 - l0)) / (a - 1.0));
        }
        if let (Some(l2), Some(l3)) = (lambda_at(k + 1.0), lambda_at(k + 2.0)) {
            lb = lb.max((l2 - (k + 1.0 - a) * (l3 - l2)) / (a - 1.0));
        }
        if lb.is_finite() && convert_unchecked(a, lb, log_delta, conversion) >= best.epsilon {
            continue;
        }
        if improve(
            &mut best,
            convert_unchecked(a, raw(a), log_delta, conversion),
            a,
        ) {
            best_i = i;
        }
    }
    if grid.refine && best.epsilon.is_finite() && best.epsilon > 0.0 {
        let lo = if best_i > 0 {
            orders[best_i - 1]
        } else {
            1.0 + (orders[0] - 1.0) / 64.0
        };
        let hi = if best_i + 1 < orders.len() {
            orders[best_i + 1]
        } else {
            orders[best_i] * 4.0
        };
        let snap = |a: f64| match grid.integer_above {
            Some(t) if a > t => a.round(),
            _ => a,
        };
        let (a, v) = brent_min(
            |a| {
                let a = snap(a);
                convert_unchecked(a, raw(a), log_delta, conversion)
            },
            lo,
            hi,
            1e-7,
            200,
        );
        improve(&mut best, v, snap(a));
        // Where only integer orders are evaluated, the converted epsilon is a step
        // function of the continuous order, which the search above can leave one or more
        // integers short of the best one: e.g. at a small sampling rate the subsampled
        // Gaussian's RDP stays tiny up to a knee (near `2 z^2 ln(1/q)`) and then rises by
        // orders of magnitude within ten orders, so the optimum sits on the last integer
        // before the knee. Walk from the best integer order to its neighbours while they
        // improve (each step evaluates one valid bound, so the result only gets tighter);
        // without this walk the reported epsilon could rise with more noise or fall with
        // more steps.
        if let Some(t) = grid.integer_above {
            if best.order > t && best.order.fract() == 0.0 {
                let start = best.order;
                for dir in [1.0, -1.0] {
                    let mut a = start;
                    for _ in 0..INTEGER_WALK_MAX {
                        a += dir;
                        if a <= t {
                            break;
                        }
                        let e = convert_unchecked(a, raw(a), log_delta, conversion);
                        if !improve(&mut best, e, a) {
                            break;
                        }
                    }
                }
            }
        }
    }
    if let Some(a) = nan_at {
        return Err(AccountingError::Numerical(format!(
            "the RDP curve evaluated to NaN at order {a}"
        )));
    }
    if !best.epsilon.is_finite() {
        return Err(AccountingError::Numerical(
            "the RDP curve is infinite at every order evaluated; no finite epsilon".into(),
        ));
    }
    best.epsilon = crate::num::round_up(best.epsilon);
    Ok(best)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(x: f64) -> Delta {
        Delta::new(x).unwrap()
    }

    #[test]
    fn improved_is_below_mironov_and_both_closed_forms() {
        let delta = d(1e-5);
        for a in [1.5, 2.0, 10.0, 100.0] {
            let m = rdp_to_epsilon(a, 1.0, delta, RdpConversion::Mironov).unwrap();
            let i = rdp_to_epsilon(a, 1.0, delta, RdpConversion::Improved).unwrap();
            let want_m = 1.0 + (1e5f64).ln() / (a - 1.0);
            assert!(m >= want_m && (m - want_m) / want_m < 1e-12, "{m} {want_m}");
            let want_i = 1.0 + ((a - 1.0) / a).ln() - ((1e-5f64).ln() + a.ln()) / (a - 1.0);
            assert!(i >= want_i && (i - want_i) / want_i < 1e-12, "{i} {want_i}");
            assert!(i < m);
        }
        assert!(rdp_to_epsilon(1.0, 1.0, delta, RdpConversion::Mironov).is_err());
        assert!(rdp_to_epsilon(2.0, f64::NAN, delta, RdpConversion::Mironov).is_err());
        assert!(rdp_to_epsilon(2.0, -1.0, delta, RdpConversion::Mironov).is_err());
    }

    #[test]
    fn fine_grid_contains_dp_accounting_default() {
        let g = OrderGrid::fine();
        for x in 1..100 {
            let a = 1.0 + x as f64 / 10.0;
            assert!(g.orders().iter().any(|&o| (o - a).abs() < 1e-12), "{a}");
        }
        for a in (12..64).chain([128, 256, 512, 1024]) {
            assert!(g.orders().contains(&(a as f64)), "{a}");
        }
        let m = OrderGrid::moments_accountant();
        assert_eq!(m.orders().len(), 128);
        assert!(m.orders().iter().all(|a| a.fract() == 0.0) && !m.refines());
        assert!(OrderGrid::custom(vec![], true).is_err());
        assert!(OrderGrid::custom(vec![2.0, 0.9], true).is_err());
    }

    #[test]
    fn continuous_optimum_matches_closed_form_for_gaussian_mironov() {
        // For the curve T a / (2 s^2) under Mironov the optimum is
        // alpha* = 1 + sqrt(2 s^2 log(1/delta) / T), eps = T/(2s^2) + sqrt(2 T log(1/delta))/s.
        let (t, s, delta) = (400.0, 127.6461, 1.0 / (20640.0f64 * 20640.0));
        let la = (1.0 / delta).ln();
        let want_a = 1.0 + (2.0 * s * s * la / t).sqrt();
        let want = t / (2.0 * s * s) + (2.0 * t * la).sqrt() / s;
        let r = epsilon_from_curve(
            |a| t * a / (2.0 * s * s),
            d(delta),
            RdpConversion::Mironov,
            &OrderGrid::fine(),
        )
        .unwrap();
        assert!(
            (r.epsilon - want).abs() < 1e-12 * want,
            "{} {}",
            r.epsilon,
            want
        );
        assert!((r.order - want_a).abs() < 1e-3, "{} {}", r.order, want_a);
        // the independently computed Eq. 18 table: s = 127.6461 gives eps = 1 to the 6
        // printed digits
        assert!((r.epsilon - 1.0).abs() < 1e-5);
    }

    #[test]
    fn deserialised_grids_are_validated() {
        let g = OrderGrid::fine();
        let back: OrderGrid = serde_json::from_str(&serde_json::to_string(&g).unwrap()).unwrap();
        assert_eq!(back, g);
        assert!(
            serde_json::from_str::<OrderGrid>(r#"{"orders":[1.0,2.0],"refine":true}"#).is_err()
        );
        assert!(serde_json::from_str::<OrderGrid>(r#"{"orders":[],"refine":false}"#).is_err());
    }

    #[test]
    fn nan_curve_is_an_error() {
        let e = epsilon_from_curve(
            |_| f64::NAN,
            d(1e-5),
            RdpConversion::Improved,
            &OrderGrid::fine(),
        );
        assert!(matches!(e, Err(AccountingError::Numerical(_))));
    }
}
