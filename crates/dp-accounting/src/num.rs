//! Numerical helpers shared by the accountants: outward rounding, log-space
//! arithmetic, the log of the standard normal CDF, and golden-section search.
//!
//! Everything here is `pub(crate)` except [`round_up`], which is public so callers can
//! round their own derived quantities in the safe direction the same way.

use libm::erfc;

/// Relative safety margin applied to every reported epsilon / delta.
///
/// The formulas of this crate are evaluated in f64 with a handful of operations each;
/// their accumulated relative rounding error is a few units in the last place
/// (~1e-15). Reported values are multiplied by `1 + REPORT_MARGIN` and then moved one
/// ulp up, so they are upper bounds on the exactly evaluated formula.
pub const REPORT_MARGIN: f64 = 1e-13;

/// The next representable f64 above `x` (identity on +inf and NaN).
pub fn next_up(x: f64) -> f64 {
    if x.is_nan() || x == f64::INFINITY {
        return x;
    }
    if x == 0.0 {
        return f64::from_bits(1);
    }
    let bits = x.to_bits();
    if x > 0.0 {
        f64::from_bits(bits + 1)
    } else {
        f64::from_bits(bits - 1)
    }
}

/// The next representable f64 below `x` (identity on -inf and NaN).
pub fn next_down(x: f64) -> f64 {
    -next_up(-x)
}

/// Rounds a computed privacy quantity (epsilon or delta) outward: multiplies by
/// `1 + REPORT_MARGIN` and moves one ulp up. Values `<= 0` become `0`-safe upper
/// bounds (a tiny positive margin is added to the absolute value).
pub fn round_up(x: f64) -> f64 {
    if x > 0.0 {
        next_up(x * (1.0 + REPORT_MARGIN))
    } else {
        // A non-positive computed bound: the margin is relative, so use an absolute
        // one at the scale of the rounding error of quantities of order one.
        next_up(x + f64::EPSILON)
    }
}

/// log(exp(a) + exp(b)) without overflow.
pub(crate) fn log_add_exp(a: f64, b: f64) -> f64 {
    if a == f64::NEG_INFINITY {
        return b;
    }
    if b == f64::NEG_INFINITY {
        return a;
    }
    let (hi, lo) = if a > b { (a, b) } else { (b, a) };
    hi + (lo - hi).exp().ln_1p()
}

/// log(expm1(x)) for x > 0, stable for tiny and huge x.
pub(crate) fn log_expm1(x: f64) -> f64 {
    if x > 30.0 {
        x + (-(-x).exp()).ln_1p()
    } else {
        x.exp_m1().ln()
    }
}

/// log(exp(a) - exp(b)) for a >= b; -inf when a == b.
pub(crate) fn log_sub_exp(a: f64, b: f64) -> f64 {
    if b == f64::NEG_INFINITY {
        return a;
    }
    if b >= a {
        return f64::NEG_INFINITY;
    }
    // log(e^a - e^b) = a + log(1 - e^{b-a}) = a + log(-expm1(b - a))
    a + (-(b - a).exp_m1()).ln()
}

/// log Phi(x), the log of the standard normal CDF, accurate in both tails.
///
/// For x >= -30 this is `ln(erfc(-x/sqrt 2)/2)` (statrs' erfc is accurate to a few ulp
/// relative down to ~1e-300). Below, the Laplace continued fraction
/// Phi(x) = phi(x) / (t + 1/(t + 2/(t + 3/(t + ...)))) with t = -x is evaluated
/// backwards with enough terms for full precision at t >= 30.
pub(crate) fn log_ndtr(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    if x > 6.0 {
        // Phi(x) = 1 - Q(x), Q tiny: log1p(-Q)
        let q = 0.5 * erfc(x / std::f64::consts::SQRT_2);
        return (-q).ln_1p();
    }
    if x >= -30.0 {
        return (0.5 * erfc(-x / std::f64::consts::SQRT_2)).ln();
    }
    if x == f64::NEG_INFINITY {
        return f64::NEG_INFINITY;
    }
    let t = -x;
    // continued fraction t + 1/(t + 2/(t + 3/(t + ...)))
    let mut cf = t;
    for k in (1..=60).rev() {
        cf = t + k as f64 / cf;
    }
    let log_phi = -0.5 * t * t - 0.5 * (2.0 * std::f64::consts::PI).ln();
    log_phi - cf.ln()
}

/// Golden-section minimisation of `f` on `[a, b]`; returns `(x, f(x))` of the best
/// point evaluated. `f` need not be unimodal for the result to be a valid point: the
/// caller only relies on the returned value being `f` at the returned argument.
pub(crate) fn golden_section<F: FnMut(f64) -> f64>(
    mut f: F,
    mut a: f64,
    mut b: f64,
    rel_tol: f64,
    max_iter: usize,
) -> (f64, f64) {
    let inv_phi = (5f64.sqrt() - 1.0) / 2.0;
    let mut c = b - inv_phi * (b - a);
    let mut d = a + inv_phi * (b - a);
    let mut fc = f(c);
    let mut fd = f(d);
    let (mut best_x, mut best_f) = if fc <= fd { (c, fc) } else { (d, fd) };
    for _ in 0..max_iter {
        if (b - a).abs() <= rel_tol * (a.abs() + b.abs()) {
            break;
        }
        if fc <= fd {
            b = d;
            d = c;
            fd = fc;
            c = b - inv_phi * (b - a);
            fc = f(c);
            if fc < best_f {
                best_x = c;
                best_f = fc;
            }
        } else {
            a = c;
            c = d;
            fc = fd;
            d = a + inv_phi * (b - a);
            fd = f(d);
            if fd < best_f {
                best_x = d;
                best_f = fd;
            }
        }
    }
    (best_x, best_f)
}

/// Brent's derivative-free minimisation of `f` on `[a, b]` (parabolic interpolation
/// with golden-section fallback; Brent 1973, ch. 5). Returns the best point evaluated
/// and its value. Non-finite values fall back to golden steps.
pub(crate) fn brent_min<F: FnMut(f64) -> f64>(
    mut f: F,
    a: f64,
    b: f64,
    rel_tol: f64,
    max_iter: usize,
) -> (f64, f64) {
    const CGOLD: f64 = 0.381_966_011_250_105_1;
    let (mut a, mut b) = (a.min(b), a.max(b));
    let mut x = a + CGOLD * (b - a);
    let (mut w, mut v) = (x, x);
    let mut fx = f(x);
    let (mut fw, mut fv) = (fx, fx);
    let (mut d, mut e) = (0.0f64, 0.0f64);
    for _ in 0..max_iter {
        let xm = 0.5 * (a + b);
        let tol1 = rel_tol * x.abs() + 1e-300;
        let tol2 = 2.0 * tol1;
        if (x - xm).abs() <= tol2 - 0.5 * (b - a) {
            break;
        }
        let mut golden = true;
        if e.abs() > tol1 {
            let r = (x - w) * (fx - fv);
            let mut q = (x - v) * (fx - fw);
            let mut p = (x - v) * q - (x - w) * r;
            q = 2.0 * (q - r);
            if q > 0.0 {
                p = -p;
            } else {
                q = -q;
            }
            let etemp = e;
            if p.is_finite()
                && q.is_finite()
                && p.abs() < (0.5 * q * etemp).abs()
                && p > q * (a - x)
                && p < q * (b - x)
            {
                e = d;
                d = p / q;
                let u = x + d;
                if u - a < tol2 || b - u < tol2 {
                    d = tol1.copysign(xm - x);
                }
                golden = false;
            }
        }
        if golden {
            e = if x >= xm { a - x } else { b - x };
            d = CGOLD * e;
        }
        let u = if d.abs() >= tol1 {
            x + d
        } else {
            x + tol1.copysign(d)
        };
        let fu = f(u);
        if fu <= fx {
            if u >= x {
                a = x;
            } else {
                b = x;
            }
            v = w;
            w = x;
            x = u;
            fv = fw;
            fw = fx;
            fx = fu;
        } else {
            if u < x {
                a = u;
            } else {
                b = u;
            }
            if fu <= fw || w == x {
                v = w;
                w = u;
                fv = fw;
                fw = fu;
            } else if fu <= fv || v == x || v == w {
                v = u;
                fv = fu;
            }
        }
    }
    (x, fx)
}

#[cfg(test)]
#[allow(
    clippy::excessive_precision,
    clippy::inconsistent_digit_grouping,
    clippy::approx_constant
)]
mod tests {
    use super::*;

    #[test]
    fn next_up_and_down_step_one_ulp() {
        assert!(next_up(1.0) > 1.0);
        assert_eq!(next_up(1.0) - 1.0, f64::EPSILON);
        assert_eq!(next_down(next_up(1.0)), 1.0);
        assert!(next_up(-1.0) > -1.0);
        assert!(next_up(0.0) > 0.0);
        assert!(round_up(2.0) > 2.0);
        assert!(round_up(0.0) > 0.0);
    }

    #[test]
    fn log_ndtr_matches_references() {
        // References computed with mpmath at 50 digits:
        //   mp.log(mp.ncdf(x)) for x in (0, -1, -10, -29.9, -30.1, -40, -100, 8)
        let cases = [
            (0.0, -0.693_147_180_559_945_3),
            (-1.0, -1.841_021_645_009_263_5),
            (-10.0, -53.231_285_150_512_47),
            (-29.9, -451.322_912_458_528_7),
            (-30.1, -457.329_564_416_382_2),
            (-40.0, -804.608_442_013_753_8),
            (-100.0, -5_005.524_208_694_205),
            (8.0, -6.220_960_574_271_786e-16),
        ];
        for (x, want) in cases {
            let got = log_ndtr(x);
            assert!(
                ((got - want) / want).abs() < 1e-13,
                "x={x} got={got} want={want}"
            );
        }
    }

    #[test]
    fn log_space_add_sub() {
        let a = 3f64.ln();
        let b = 2f64.ln();
        assert!((log_add_exp(a, b) - 5f64.ln()).abs() < 1e-15);
        assert!((log_sub_exp(a, b) - 0.0).abs() < 1e-15);
        assert_eq!(log_sub_exp(a, a), f64::NEG_INFINITY);
        assert_eq!(log_add_exp(f64::NEG_INFINITY, b), b);
    }

    #[test]
    fn brent_finds_minima() {
        let mut n = 0;
        let (x, fx) = brent_min(
            |x| {
                n += 1;
                (x - 2.5) * (x - 2.5) + 1.0
            },
            0.0,
            10.0,
            1e-9,
            200,
        );
        assert!(
            (x - 2.5).abs() < 1e-6 && (fx - 1.0).abs() < 1e-12,
            "{x} {fx}"
        );
        assert!(n < 40, "{n} evaluations");
        let (x, _) = brent_min(|x| x + 1.0 / x, 0.1, 10.0, 1e-9, 200);
        assert!((x - 1.0).abs() < 1e-6);
        let (x, _) = brent_min(
            |x| if x < 3.0 { f64::INFINITY } else { x },
            0.0,
            10.0,
            1e-9,
            200,
        );
        assert!(x < 3.01, "{x}");
    }

    #[test]
    fn golden_finds_parabola_minimum() {
        let (x, fx) = golden_section(|x| (x - 2.5) * (x - 2.5) + 1.0, 0.0, 10.0, 1e-12, 200);
        assert!((x - 2.5).abs() < 1e-6);
        assert!((fx - 1.0).abs() < 1e-12);
    }
}
