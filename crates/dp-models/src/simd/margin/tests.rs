use super::*;
use crate::loss::{sigmoid, Logistic, Loss};

/// A deterministic stream in `[-1, 1)` (xorshift; no ambient randomness in tests).
fn stream(seed: u64) -> impl FnMut() -> f64 {
    let mut st = seed | 1;
    move || {
        st ^= st << 13;
        st ^= st >> 7;
        st ^= st << 17;
        (st >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }
}

/// `exp_nonpos` on every lane level the CPU offers, applied to a slice.
struct ExpMap<'a>(&'a mut [f32]);
impl WithSimd for ExpMap<'_> {
    type Output = ();
    #[inline(always)]
    fn with_simd<S: Simd>(self, s: S) {
        let (h, _) = S::as_mut_simd_f32s(self.0);
        for v in h {
            *v = exp_nonpos(s, *v);
        }
    }
}

#[test]
fn the_f32_exp_is_within_its_stated_error() {
    let mut v: Vec<f32> = (0..=87_000).map(|k| -(k as f32) * 1e-3).collect();
    v.truncate(v.len() / 64 * 64);
    let want: Vec<f64> = v.iter().map(|&x| f64::from(x).exp()).collect();
    arch().dispatch(ExpMap(&mut v));
    let worst = v
        .iter()
        .zip(&want)
        .map(|(&g, &w)| ((f64::from(g) - w) / w).abs())
        .fold(0.0f64, f64::max);
    assert!(worst < 2f64.powi(-22), "max relative error {worst:e}");
}

/// The logistic kernel's sum and margins against the `f64` derivative of the loss on
/// the unfolded data: within the `f32` accuracy, on lengths with and without a tail.
#[test]
fn the_logistic_step_matches_the_f64_derivative() {
    let mut r = stream(7);
    for n in [1usize, 15, 64, 257, 1000, 4099] {
        let x: Vec<f64> = (0..n).map(|_| 3.0 * r()).collect();
        let xk: Vec<f64> = (0..n).map(|_| r()).collect();
        let z: Vec<f64> = (0..n).map(|_| 4.0 * r()).collect();
        let y: Vec<f64> = (0..n).map(|_| if r() > 0.0 { 1.0 } else { -1.0 }).collect();
        let fold =
            |v: &[f64]| -> Vec<f32> { v.iter().zip(&y).map(|(a, b)| (a * b) as f32).collect() };
        let (xf, kf) = (fold(&x), fold(&xk));
        let mut m = fold(&z);
        let (a, c) = (0.75f64, 0.8f64);
        let got = logistic_step(Some((&kf, a as f32)), &xf, &mut m, c as f32);
        let mut want = 0.0;
        let mut scale = 0.0;
        for i in 0..n {
            let zi = z[i] + a * xk[i];
            let t = (Logistic.derivative(zi, y[i]) * x[i]).clamp(-c, c);
            want += t;
            scale += t.abs() + 1e-3;
            assert!(
                (f64::from(m[i]) - zi * y[i]).abs() < 1e-5,
                "margin {i} of {n}"
            );
        }
        assert!((got - want).abs() <= 1e-5 * scale, "n {n}: {got} vs {want}");
        // Without an update the margins are left alone.
        let before = m.clone();
        let again = logistic_step(None, &xf, &mut m, c as f32);
        assert_eq!(before, m);
        assert!((again - want).abs() <= 1e-5 * scale);
    }
}

/// The update is a separate `f32` multiply and add on every level, bit for bit the
/// scalar loop.
#[test]
fn the_margin_update_is_the_scalar_multiply_add() {
    let mut r = stream(11);
    let n = 1003;
    let xf: Vec<f32> = (0..n).map(|_| r() as f32).collect();
    let kf: Vec<f32> = (0..n).map(|_| r() as f32 * 5.0).collect();
    let m0: Vec<f32> = (0..n).map(|_| r() as f32 * 2.0).collect();
    let a = 0.377f32;
    let mut m = m0.clone();
    logistic_step(Some((&kf, a)), &xf, &mut m, 1.0);
    for i in 0..n {
        assert_eq!(m[i].to_bits(), (m0[i] + a * kf[i]).to_bits(), "row {i}");
    }
}

/// Every term is clamped, whatever the margins (NaN, infinite) and features (huge):
/// a one-record sum is within `[-c, c]` in the vector body and in the tail.
#[test]
fn every_term_is_clamped_whatever_the_record() {
    let c = 0.25f32;
    let margins = [
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        -1e30,
        0.0,
        -0.0,
        1e30,
        -3.0,
    ];
    let features = [f32::MAX, -f32::MAX, 1e20, -1e-30, 1.0, -7.0];
    for n in [1usize, 3, 64, 300] {
        for &mi in &margins {
            for &xi in &features {
                for at in [0, n / 2, n - 1] {
                    let mut m = vec![0.0f32; n];
                    let mut x = vec![0.0f32; n];
                    m[at] = mi;
                    x[at] = xi;
                    let s = logistic_step(None, &x, &mut m, c);
                    assert!(s.abs() <= f64::from(c), "m {mi} x {xi} at {at}/{n}: {s}");
                }
            }
        }
    }
}

/// `release_clip` is below `C / kappa(n)` and the next `f32` up is not.
#[test]
fn the_release_clip_is_the_largest_f32_below_the_bound() {
    for n in [1usize, 100, 160_000, 10_000_000] {
        let k = clip_factor(n);
        assert!(k > 1.0 && k.is_finite());
        for big_c in [1e-6, 0.01, 0.3, 1.0, 7.5, 1e6] {
            let c = release_clip(big_c, n);
            assert!(f64::from(c) * k <= big_c * (1.0 + 1e-15), "C {big_c} n {n}");
            assert!(f64::from(c.next_up()) > big_c / k, "C {big_c} n {n}");
        }
    }
    assert_eq!(release_clip(f64::INFINITY, 1000), f32::INFINITY);
    // The shrink is the f32 block error's: about 256 * 256 * 2^-24 for real sizes.
    let k = clip_factor(160_000);
    assert!(
        k - 1.0 > 0.0039 && k - 1.0 < 0.0040,
        "kappa(160000) - 1 = {}",
        k - 1.0
    );
}

/// The claim of the module's proof, checked empirically: for neighbouring datasets
/// (one record replaced, at the start, inside a block, at a block boundary, in the
/// tail, at the split point) the computed sums (two pieces split at a point fixed by
/// `n`, as DP-CD's two-thread sweep does) differ by at most `2 C`. The records are
/// adversarial: terms at `+-c` (margins far out, features large) so that the sums and
/// their rounding errors are as large as the data allows.
#[test]
fn neighbouring_sums_stay_within_the_sensitivity() {
    let mut r = stream(23);
    let big_c = 0.5;
    for n in [300usize, 4_099, 20_001] {
        let c = release_clip(big_c, n);
        let h = n / 2 / 64 * 64;
        let sum = |x: &[f32], m: &mut [f32]| {
            let (ml, mr) = m.split_at_mut(h);
            logistic_step(None, &x[..h], ml, c) + logistic_step(None, &x[h..], mr, c)
        };
        for trial in 0..40 {
            // Margins near 0 (sigmoid near 1/2), features of magnitude around 2c..4c:
            // almost every term is clamped to +-c or just inside it.
            let same_sign = trial % 2 == 0;
            let x: Vec<f32> = (0..n)
                .map(|_| {
                    let v = (2.0 + 2.0 * r().abs()) as f32 * c;
                    if same_sign || r() > 0.0 {
                        -v
                    } else {
                        v
                    }
                })
                .collect();
            let m: Vec<f32> = (0..n).map(|_| (0.1 * r()) as f32).collect();
            let mut m1 = m.clone();
            let s1 = sum(&x, &mut m1);
            for at in [0, 1, 255, 256, h - 1, h, n - 1, n / 3] {
                for (mi, xi) in [(0.0f32, 1e6f32), (0.0, -1e6), (-80.0, 3.0), (f32::NAN, 1.0)] {
                    let (mut x2, mut m2) = (x.clone(), m.clone());
                    x2[at] = xi;
                    m2[at] = mi;
                    let s2 = sum(&x2, &mut m2);
                    assert!(
                        (s1 - s2).abs() <= 2.0 * big_c,
                        "n {n} at {at}: |{s1} - {s2}| > 2 C = {}",
                        2.0 * big_c
                    );
                }
            }
        }
    }
}

/// The scalar tail term agrees with the lane term's formula.
#[test]
fn the_tail_term_is_the_clamped_logistic_term() {
    for &(m, x) in &[(0.0f32, 1.0f32), (2.0, -3.0), (-5.0, 0.5), (40.0, 2.0)] {
        let want = (-sigmoid(-f64::from(m)) * f64::from(x)).clamp(-0.5, 0.5);
        assert!((f64::from(logistic_term_scalar(m, x, 0.5)) - want).abs() < 1e-7);
    }
}
