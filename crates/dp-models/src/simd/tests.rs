use super::*;
use crate::loss::sigmoid as scalar_sigmoid;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

/// Runs `f` on every instruction-set level this CPU offers (scalar always).
fn on_every_level(mut f: impl FnMut(&str, &dyn Fn(&mut [f64], bool))) {
    struct Apply<'a> {
        v: &'a mut [f64],
        sigmoid: bool,
    }
    impl WithSimd for Apply<'_> {
        type Output = ();
        #[inline(always)]
        fn with_simd<S: Simd>(self, s: S) {
            if self.sigmoid {
                Map {
                    v: self.v,
                    f: SigmoidFn,
                }
                .with_simd(s)
            } else {
                Map {
                    v: self.v,
                    f: ExpFn,
                }
                .with_simd(s)
            }
        }
    }
    f("scalar", &|v, sig| {
        pulp::Scalar.vectorize(Apply { v, sigmoid: sig })
    });
    #[cfg(target_arch = "x86_64")]
    {
        if let Some(l) = pulp::x86::V3::try_new() {
            f("avx2", &move |v, sig| {
                Simd::vectorize(l, Apply { v, sigmoid: sig })
            });
        }
        if let Some(l) = pulp::x86::V4::try_new() {
            f("avx512", &move |v, sig| {
                Simd::vectorize(l, Apply { v, sigmoid: sig })
            });
        }
    }
}

/// Grid of the whole finite domain of `exp` (plus random points), including the
/// saturation and subnormal ranges.
fn exp_inputs() -> Vec<f64> {
    let mut v: Vec<f64> = (0..=400_000)
        .map(|k| -746.5 + k as f64 * (1457.0 / 400_000.0))
        .collect();
    let mut rng = ChaCha20Rng::seed_from_u64(7);
    v.extend((0..200_000).map(|_| rng.random_range(-1.0..1.0)));
    v.extend((0..200_000).map(|_| rng.random_range(-746.0..710.0)));
    // Subnormal range and both thresholds, finely.
    v.extend((0..100_000).map(|k| -745.2 + k as f64 * (37.0 / 100_000.0)));
    v.extend((0..10_000).map(|k| 709.0 + k as f64 * (0.79 / 10_000.0)));
    v
}

#[test]
fn exp_is_within_two_ulp_over_the_whole_range() {
    let xs = exp_inputs();
    on_every_level(|level, run| {
        let mut got = xs.clone();
        run(&mut got, false);
        let mut worst = 0.0f64;
        for (&x, &g) in xs.iter().zip(&got) {
            let e = x.exp();
            if e == 0.0 || e.is_infinite() {
                assert_eq!(g, e, "{level}: exp({x}) = {g}, want {e}");
            } else if e < f64::MIN_POSITIVE {
                // Subnormal result: at most one unit of 2^-1074 from f64::exp.
                let d = (g - e).abs();
                assert!(d <= 4.9e-324, "{level}: exp({x}) = {g:e}, want {e:e}");
            } else {
                let rel = ((g - e) / e).abs();
                worst = worst.max(rel);
                assert!(rel <= 2f64.powi(-51), "{level}: exp({x}) = {g}, want {e}");
            }
        }
        println!("{level}: max relative error of exp vs f64::exp = {worst:e}");
    });
}

#[test]
fn exp_extremes_and_special_values() {
    let cases = [
        (f64::NAN, f64::NAN),
        (f64::INFINITY, f64::INFINITY),
        (f64::NEG_INFINITY, 0.0),
        (1e300, f64::INFINITY),
        (-1e300, 0.0),
        (f64::MAX, f64::INFINITY),
        (f64::MIN, 0.0),
        (0.0, 1.0),
        (-0.0, 1.0),
        (5e-324, 1.0),
        (709.782712893384, 709.782712893384f64.exp()),
        (709.79, f64::INFINITY),
        (-745.133219101941, (-745.133219101941f64).exp()),
        (-745.2, 0.0),
        (-1000.0, 0.0),
        (1.0, std::f64::consts::E),
    ];
    on_every_level(|level, run| {
        let mut v: Vec<f64> = cases.iter().map(|c| c.0).collect();
        run(&mut v, false);
        for (&(x, want), &got) in cases.iter().zip(&v) {
            if want.is_nan() {
                assert!(got.is_nan(), "{level}: exp({x}) = {got}");
            } else if want == 0.0 || want.is_infinite() || want < f64::MIN_POSITIVE {
                assert!(
                    (got - want).abs() <= 4.9e-324 || got == want,
                    "{level}: exp({x}) = {got:e}, want {want:e}"
                );
            } else {
                assert!(
                    ((got - want) / want).abs() <= 2f64.powi(-51),
                    "{level}: exp({x}) = {got}, want {want}"
                );
            }
        }
    });
    // The one-value helpers go through the dispatched code.
    assert_eq!(exp(0.0), 1.0);
    assert!(exp(f64::NAN).is_nan());
    assert_eq!(sigmoid(0.0), 0.5);
}

/// The sigmoid's exp of non-positive arguments (no upper saturation, one scaling
/// multiply when every lane allows it) gives exactly the bits of `exp_lanes`, on every
/// level, in vectors whose lanes all take the one-multiply path and in mixed ones: the
/// seeded fits of the logistic loss are unchanged by it.
#[test]
fn exp_of_non_positive_arguments_is_bit_identical_to_exp_lanes() {
    struct Both<'a> {
        x: &'a [f64],
        fast: &'a mut [f64],
        full: &'a mut [f64],
    }
    impl WithSimd for Both<'_> {
        type Output = ();
        #[inline(always)]
        fn with_simd<S: Simd>(self, s: S) {
            let (xh, xt) = S::as_simd_f64s(self.x);
            let (fh, ft) = S::as_mut_simd_f64s(self.fast);
            let (gh, gt) = S::as_mut_simd_f64s(self.full);
            for ((x, f), g) in xh.iter().zip(fh).zip(gh) {
                *f = exp_nonpos_lanes(s, *x);
                *g = exp_lanes(s, *x);
            }
            let x = s.partial_load_f64s(xt);
            s.partial_store_f64s(ft, exp_nonpos_lanes(s, x));
            s.partial_store_f64s(gt, exp_lanes(s, x));
        }
    }
    let mut xs: Vec<f64> = (0..=400_000)
        .map(|k| -750.0 + k as f64 * (750.0 / 400_000.0))
        .collect();
    // Around the one-multiply threshold and the subnormal range, finely.
    xs.extend((0..=100_000).map(|k| EXP_ONE_SCALE_LO - 1.0 + k as f64 * (2.0 / 100_000.0)));
    xs.extend((0..=100_000).map(|k| -745.2 + k as f64 * (37.0 / 100_000.0)));
    let mut rng = ChaCha20Rng::seed_from_u64(11);
    xs.extend((0..200_000).map(|_| -rng.random_range(0.0..40.0f64)));
    xs.extend((0..200_000).map(|_| -rng.random_range(0.0..760.0f64)));
    xs.extend([
        0.0,
        -0.0,
        -5e-324,
        -f64::MIN_POSITIVE,
        -1e300,
        f64::MIN,
        f64::NEG_INFINITY,
        f64::NAN,
        -1e-300,
    ]);
    type Run<'a> = &'a dyn Fn(&[f64], &mut [f64], &mut [f64]);
    let check = |level: &str, run: Run<'_>| {
        let (mut fast, mut full) = (vec![0.0; xs.len()], vec![0.0; xs.len()]);
        run(&xs, &mut fast, &mut full);
        for ((&x, f), g) in xs.iter().zip(&fast).zip(&full) {
            assert_eq!(
                f.to_bits(),
                g.to_bits(),
                "{level}: exp({x:e}) = {f:e} vs {g:e}"
            );
        }
    };
    check("scalar", &|x, fast, full| {
        pulp::Scalar.vectorize(Both { x, fast, full })
    });
    #[cfg(target_arch = "x86_64")]
    {
        if let Some(l) = pulp::x86::V3::try_new() {
            check("avx2", &|x, fast, full| {
                Simd::vectorize(l, Both { x, fast, full })
            });
        }
        if let Some(l) = pulp::x86::V4::try_new() {
            check("avx512", &|x, fast, full| {
                Simd::vectorize(l, Both { x, fast, full })
            });
        }
    }
}

#[test]
fn sigmoid_matches_the_scalar_one_everywhere() {
    let mut xs: Vec<f64> = (0..=200_000)
        .map(|k| -800.0 + k as f64 * (1600.0 / 200_000.0))
        .collect();
    xs.extend((0..=20_000).map(|k| -40.0 + k as f64 * (80.0 / 20_000.0)));
    xs.extend([
        1e300,
        -1e300,
        f64::MAX,
        f64::MIN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        0.0,
        -0.0,
        5e-324,
        -5e-324,
    ]);
    on_every_level(|level, run| {
        let mut got = xs.clone();
        run(&mut got, true);
        for (&t, &g) in xs.iter().zip(&got) {
            let want = scalar_sigmoid(t);
            assert!((0.0..=1.0).contains(&g), "{level}: sigmoid({t}) = {g}");
            if want < f64::MIN_POSITIVE {
                assert!((g - want).abs() <= 1e-323, "{level}: sigmoid({t}) = {g:e}");
            } else {
                let rel = ((g - want) / want).abs();
                assert!(rel <= 2f64.powi(-49), "{level}: sigmoid({t}) = {g}, {want}");
            }
        }
        let mut nan = [f64::NAN];
        run(&mut nan, true);
        assert!(nan[0].is_nan(), "{level}: NaN must propagate");
    });
}

#[derive(Clone, Copy)]
struct LogisticLanes;
impl LaneDerivative for LogisticLanes {
    fn derivative<S: Simd>(self, s: S, z: S::f64s, y: S::f64s) -> S::f64s {
        let t = s.mul_f64s(s.neg_f64s(y), z);
        s.mul_f64s(s.neg_f64s(y), sigmoid_lanes(s, t))
    }
}

fn reference(
    update: Option<(&[f64], f64)>,
    x: &[f64],
    z: &mut [f64],
    y: &[f64],
    clip: Option<f64>,
) -> f64 {
    if let Some((xk, a)) = update {
        for (zi, &xi) in z.iter_mut().zip(xk) {
            *zi += a * xi;
        }
    }
    let mut s = 0.0;
    for ((&xi, &zi), &yi) in x.iter().zip(z.iter()).zip(y) {
        let v = -yi * scalar_sigmoid(-yi * zi) * xi;
        s += match clip {
            Some(c) => v.signum() * v.abs().min(c),
            None => v,
        };
    }
    s
}

fn run_step(
    update: Option<(&[f64], f64)>,
    x: &[f64],
    z: &mut [f64],
    y: &[f64],
    clip: Option<f64>,
) -> f64 {
    match update {
        Some(u) => step_grad_sum(LogisticLanes, u, x, z, Some(y), clip),
        None => col_grad_sum(LogisticLanes, x, z, Some(y), clip),
    }
}

#[test]
fn step_kernel_matches_the_scalar_loop_for_every_length() {
    let mut rng = ChaCha20Rng::seed_from_u64(3);
    // The last two lengths take the prefetching path (`PREFETCH_MIN_LEN`), with a tail.
    let long = super::PREFETCH_MIN_LEN;
    for n in [
        1usize,
        2,
        3,
        7,
        8,
        9,
        15,
        16,
        17,
        31,
        33,
        64,
        100,
        1001,
        long,
        long + 5,
    ] {
        let x: Vec<f64> = (0..n).map(|_| rng.random_range(-3.0..3.0)).collect();
        let xk: Vec<f64> = (0..n).map(|_| rng.random_range(-3.0..3.0)).collect();
        let z0: Vec<f64> = (0..n).map(|_| rng.random_range(-20.0..20.0)).collect();
        let y: Vec<f64> = (0..n)
            .map(|_| if rng.random::<bool>() { 1.0 } else { -1.0 })
            .collect();
        for clip in [None, Some(0.3), Some(f64::INFINITY)] {
            for update in [None, Some((&xk[..], 0.7)), Some((&xk[..], 0.0))] {
                let (mut z1, mut z2) = (z0.clone(), z0.clone());
                let a = run_step(update, &x, &mut z1, &y, clip);
                let b = reference(update, &x, &mut z2, &y, clip);
                assert_eq!(z1, z2, "n={n}: the update is exact and identical");
                let scale: f64 = x.iter().map(|v| v.abs()).sum::<f64>() + 1.0;
                assert!((a - b).abs() <= 1e-14 * scale, "n={n} {clip:?}: {a} vs {b}");
                // Reproducible: same bits on a second call.
                let mut z3 = z0.clone();
                let a2 = run_step(update, &x, &mut z3, &y, clip);
                assert_eq!(a.to_bits(), a2.to_bits());
            }
        }
        // Clipping at +inf is the identity (the private twin equals the non-private).
        let (mut z1, mut z2) = (z0.clone(), z0.clone());
        let a = run_step(None, &x, &mut z1, &y, None);
        let b = run_step(None, &x, &mut z2, &y, Some(f64::INFINITY));
        assert_eq!(a.to_bits(), b.to_bits());
    }
}

#[test]
fn clipped_kernel_stays_bounded_on_extreme_predictors() {
    // Whatever the predictor (overflowed, infinite, NaN), every clipped term is in
    // [-c, c]: the sum is finite and at most n c in absolute value.
    let z = [
        1e300,
        -1e300,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        0.0,
        5e-324,
        -745.5,
        710.0,
    ];
    let n = z.len();
    let x = [1.0, -2.0, 1e300, -1e300, 3.0, 0.0, 1.0, 4.0, -4.0];
    for y in [1.0, -1.0] {
        let ys = vec![y; n];
        for c in [1e-3, 1.0, 1e10] {
            let mut zz = z.to_vec();
            let g = run_step(None, &x, &mut zz, &ys, Some(c));
            assert!(g.is_finite() && g.abs() <= n as f64 * c, "y={y} c={c}: {g}");
        }
    }
}

#[test]
fn axpy_and_dot_match_the_scalar_loops() {
    let mut rng = ChaCha20Rng::seed_from_u64(5);
    let long = super::PREFETCH_MIN_LEN;
    for n in [0usize, 1, 5, 8, 13, 64, 1003, long + 3] {
        let x: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
        let v: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
        let mut a = v.clone();
        axpy(0.37, &x, &mut a);
        let b: Vec<f64> = v.iter().zip(&x).map(|(&o, &xi)| o + 0.37 * xi).collect();
        assert_eq!(a, b, "axpy is bit-identical to the scalar loop");
        let d = dot(&x, &v);
        let r: f64 = x.iter().zip(&v).map(|(a, b)| a * b).sum();
        assert!((d - r).abs() <= 1e-13 * (1.0 + n as f64), "{d} vs {r}");
    }
    assert!(["avx512", "avx2", "scalar", "simd"].contains(&level_name()));
}
