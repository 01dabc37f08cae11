//! Time of one DP-CD pass on a 160,000 x 51 dense logistic problem (the Python
//! benchmark's size plus the intercept column), kernel only: per coordinate the fused
//! step `Loss::dense_step_grad_sum` (update `z += a x_k`, then the clipped gradient sum
//! of column `j`), as `run_cd` calls it with one thread.
//!
//! ```text
//! cargo run --release -p dp-models --example cd_step -- [PASSES] [N] [MODE]
//! ```
//!
//! The modes run one after the other within each pass; `MODE` (`0` fused step, `1`
//! gradient only, `2` update only, `3` f32 margin) runs that one alone, so that its data
//! stay in the caches from pass to pass as in a fit (the `f32` copy is half the size).
//!
//! Prints the median time per pass over the passes, and ns per matrix entry, for the
//! fused step and for its parts (the gradient sum alone, the update alone), and for the
//! mixed-precision fused step (`dp_models::simd::margin`: label-folded `f32` columns and
//! margins, what DP-CD runs on large dense logistic problems).
use dp_models::{DenseDesign, Logistic, Loss};
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let passes: usize = args.next().map_or(20, |s| s.parse().expect("PASSES"));
    let n: usize = args.next().map_or(160_000, |s| s.parse().expect("N"));
    let only: Option<usize> = args.next().map(|s| s.parse().expect("MODE"));
    let p = 51;
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut unif = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    };
    let x = DenseDesign::from_col_major_with(n, p, |v| {
        for (k, e) in v.iter_mut().enumerate() {
            *e = if k / n == p - 1 { 1.0 } else { unif() };
        }
    })
    .expect("design");
    let y: Vec<f64> = (0..n)
        .map(|i| {
            if (x.col(0)[i] + x.col(1)[i]) > 0.0 {
                1.0
            } else {
                -1.0
            }
        })
        .collect();
    let clip = Some(0.5);
    let modes = ["fused step", "grad only", "update only", "f32 margin"];
    let folded: Vec<Vec<f32>> = (0..p)
        .map(|j| {
            x.col(j)
                .iter()
                .zip(&y)
                .map(|(v, yi)| (v * yi) as f32)
                .collect()
        })
        .collect();
    let mut margins = vec![0.0f32; n];
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); modes.len()];
    let mut z = vec![0.0; n];
    let mut sink = 0.0;
    for _ in 0..passes {
        for (m, t) in times.iter_mut().enumerate() {
            if only.is_some_and(|o| o != m) {
                continue;
            }
            let start = Instant::now();
            let mut pending = (0usize, 0.0f64);
            for j in 0..p {
                let g = match m {
                    0 => Logistic.dense_step_grad_sum(
                        (x.col(pending.0), pending.1),
                        x.col(j),
                        &mut z,
                        Some(&y),
                        clip,
                    ),
                    1 => Logistic.dense_col_grad_sum(x.col(j), &z, Some(&y), clip),
                    3 => dp_models::simd::margin::logistic_step(
                        Some((&folded[pending.0], pending.1 as f32)),
                        &folded[j],
                        &mut margins,
                        0.5,
                    ),
                    _ => {
                        dp_models::simd::axpy(pending.1, x.col(pending.0), &mut z);
                        0.01
                    }
                };
                sink += g;
                pending = (j, -1e-3 * g / n as f64);
            }
            t.push(start.elapsed().as_secs_f64());
        }
    }
    println!(
        "{n} x {p}, {passes} passes each, SIMD level {}",
        dp_models::simd::level_name()
    );
    for (name, t) in modes.iter().zip(&mut times) {
        if t.is_empty() {
            continue;
        }
        t.sort_by(f64::total_cmp);
        let med = t[t.len() / 2];
        println!(
            "{name:12} median {:.2} ms/pass, {:.3} ns per entry (fastest {:.2} ms)",
            med * 1e3,
            med * 1e9 / (n * p) as f64,
            t[0] * 1e3
        );
    }
    std::hint::black_box(sink);
}
