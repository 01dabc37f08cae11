//! DP-CD on a 160,000 x 51 dense logistic problem (the Python benchmark's size plus an
//! intercept column), one thread against two (`DpCdParams::threads`), alternating in one
//! run: the time of a seeded fit of 1 pass and of `PASSES` passes, and the time per
//! pass between them, plus whether the two fits agree bit for bit.
//!
//! ```text
//! cargo run --release -p dp-optim --example cd_threads -- [PASSES] [REPS]
//! ```
use dp_models::constants::Tagged;
use dp_models::{Dataset, DenseDesign, Logistic, Loss, L2};
use dp_optim::{DpCdParams, Smoothness, Solver};
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let passes: u64 = args.next().map_or(Ok(20), |s| s.parse())?;
    let reps: usize = args.next().map_or(Ok(3), |s| s.parse())?;
    let (n, p) = (160_000, 51);
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
    })?;
    let y: Vec<f64> = (0..n)
        .map(|i| {
            let t: f64 = (0..10).map(|j| x.col(j)[i]).sum::<f64>() + 0.3 * unif();
            if t > 0.0 {
                1.0
            } else {
                -1.0
            }
        })
        .collect();
    let data = Dataset::new(x, y)?;
    let m = Logistic.curvature_bound().ok_or("smooth")?;
    let solver = |passes: u64, threads: usize| {
        DpCdParams::new(Logistic, L2::new(1e-5).expect("lambda"))
            .epsilon(1.0)
            .delta(1.0 / (n as f64 * n as f64))
            .passes(passes)
            .clip(1.0)
            .threads(threads)
            .smoothness(Smoothness::Given(Tagged::public(vec![m; p])))
            .build()
            .expect("params")
    };
    let mut t = vec![vec![Vec::new(); 2]; 2];
    let mut coefs = vec![Vec::new(); 2];
    for rep in 0..reps {
        for (ti, threads) in [1usize, 2].into_iter().enumerate() {
            for (pi, ps) in [1, passes].into_iter().enumerate() {
                let s = solver(ps, threads);
                let start = Instant::now();
                let fit = s.fit_seeded(&data, rep as u64)?;
                t[ti][pi].push(start.elapsed().as_secs_f64());
                if pi == 1 && rep == 0 {
                    coefs[ti] = fit.model.coefficients.clone();
                }
            }
        }
    }
    let med = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    println!("{n} x {p}, {passes} passes, {reps} reps (medians)");
    for (ti, threads) in [1, 2].into_iter().enumerate() {
        let (t1, tp) = (med(&mut t[ti][0]), med(&mut t[ti][1]));
        println!(
            "threads {threads}: 1 pass {:.3} s, {passes} passes {:.3} s, per pass {:.2} ms",
            t1,
            tp,
            (tp - t1) / (passes - 1) as f64 * 1e3
        );
    }
    let same = coefs[0]
        .iter()
        .zip(&coefs[1])
        .all(|(a, b)| a.to_bits() == b.to_bits());
    println!("threads 1 and 2 give bit-identical coefficients: {same}");
    Ok(())
}
