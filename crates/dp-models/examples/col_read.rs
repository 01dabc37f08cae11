//! How fast can one core read a dense column-major design one column at a time, and
//! does a second core help? The coordinate methods' passes are such sweeps (one column
//! and the residual per step), so this bounds them.
//!
//! ```text
//! cargo run --release -p dp-models --example col_read -- [N] [REPS]
//! ```
//!
//! Times, alternating in one run, `sum_j x_j^T r` over a synthetic `N x 100` design
//! (default `N = 100,000`, 80 MB) with:
//! * `simd::dot`: the library's kernel (prefetch hint `PREFETCH_AHEAD` f64s ahead when
//!   the vectors are at least `PREFETCH_MIN_LEN` long);
//! * `no hint` and `hint D`: the same summation with fused multiply-adds (as a BLAS
//!   `ddot` does) and no software prefetch, or a prefetch `D` f64s ahead in both streams;
//! * `hint 1024 mul+add`: `hint 1024` with a separate multiply and add, as `simd::dot`
//!   and the solvers' kernels do (the same result on every CPU);
//! * `squared grad`: the coordinate-gradient kernel of a CD step on the squared loss,
//!   `Loss::dense_col_grad_sum` of `Squared::half()` on a residual (no clipping): per
//!   element the loss derivative, a multiply and an add;
//! * `two threads`: each column's dot product split in two halves, one per core
//!   (`rayon::join`), the reduction order fixed.
//!
//! Prints the median and fastest time per sweep and the design bytes per second.
use dp_models::Loss;
use pulp::{Simd, WithSimd};
use std::time::Instant;

/// `a^T b` with four partial sums of full vectors (the tail is ignored: the bench's
/// lengths are multiples of 32), a prefetch hint `ahead` f64s ahead (0: none), and
/// fused multiply-adds unless `fma` is false.
fn dot_hint(a: &[f64], b: &[f64], ahead: usize, fma: bool) -> f64 {
    struct K<'a> {
        a: &'a [f64],
        b: &'a [f64],
        ahead: usize,
        fma: bool,
    }
    impl WithSimd for K<'_> {
        type Output = f64;
        #[inline(always)]
        fn with_simd<S: Simd>(self, s: S) -> f64 {
            let n = self.a.len().min(self.b.len());
            let lanes = S::F64_LANES;
            let (ah, _) = S::as_simd_f64s(&self.a[..n]);
            let (bh, _) = S::as_simd_f64s(&self.b[..n]);
            let mut acc = [s.splat_f64s(0.0); 4];
            let mut i = 0;
            while i + 4 <= ah.len() {
                if self.ahead > 0 {
                    // One hint per cache line of the four vectors read next.
                    for line in (0..4 * lanes).step_by(8) {
                        let k = (i * lanes + self.ahead + line).min(n - 1);
                        safe_arch::prefetch_t0(&self.a[k]);
                        safe_arch::prefetch_t0(&self.b[k]);
                    }
                }
                for u in 0..4 {
                    acc[u] = if self.fma {
                        s.mul_add_e_f64s(ah[i + u], bh[i + u], acc[u])
                    } else {
                        s.add_f64s(acc[u], s.mul_f64s(ah[i + u], bh[i + u]))
                    };
                }
                i += 4;
            }
            let t = s.add_f64s(s.add_f64s(acc[0], acc[1]), s.add_f64s(acc[2], acc[3]));
            s.reduce_sum_f64s(t)
        }
    }
    dp_models::simd::arch().dispatch(K { a, b, ahead, fma })
}

type Sweep<'a> = Box<dyn Fn() -> f64 + 'a>;

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().map_or(100_000, |s| s.parse().expect("N"));
    let reps: usize = args.next().map_or(15, |s| s.parse().expect("REPS"));
    let p = 100;
    // A deterministic design (no privacy here: a fixed LCG fills it).
    let mut x = vec![0.0f64; n * p];
    let mut st = 1u64;
    for v in x.iter_mut() {
        st = st
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        *v = ((st >> 11) as f64) / (1u64 << 53) as f64 - 0.5;
    }
    let r: Vec<f64> = (0..n).map(|i| (i as f64).sin()).collect();
    // The same values on transparent huge pages (`dp_models::pages`, as `DenseDesign`
    // stores its columns), and the residual too.
    let xh = dp_models::pages::F64Buf::from_slice(&x);
    let rh = dp_models::pages::F64Buf::from_slice(&r);
    let col = |j: usize| &x[j * n..(j + 1) * n];
    let colh = |j: usize| &xh[j * n..(j + 1) * n];
    let bytes = (n * p * 8) as f64;
    println!(
        "n = {n}, p = {p}, {:.0} MB, level {}, {reps} repetitions",
        bytes / 1e6,
        dp_models::simd::level_name()
    );
    let mut sweeps: Vec<(String, Sweep)> = vec![
        (
            "simd::dot".into(),
            Box::new(|| (0..p).map(|j| dp_models::simd::dot(col(j), &r)).sum()),
        ),
        (
            "simd::dot huge".into(),
            Box::new(|| (0..p).map(|j| dp_models::simd::dot(colh(j), &rh)).sum()),
        ),
    ];
    for ahead in [0usize, 512, 1024, 2048, 4096] {
        let name = if ahead == 0 {
            "no hint".to_string()
        } else {
            format!("hint {ahead}")
        };
        let r = &r;
        sweeps.push((
            name.clone(),
            Box::new(move || (0..p).map(|j| dot_hint(col(j), r, ahead, true)).sum()),
        ));
        let rh = &rh;
        sweeps.push((
            format!("{name} huge"),
            Box::new(move || (0..p).map(|j| dot_hint(colh(j), rh, ahead, true)).sum()),
        ));
    }
    {
        let r = &r;
        sweeps.push((
            "hint 1024 mul+add".into(),
            Box::new(move || (0..p).map(|j| dot_hint(col(j), r, 1024, false)).sum()),
        ));
        let sq = dp_models::Squared::half();
        sweeps.push((
            "squared grad".into(),
            Box::new(move || {
                (0..p)
                    .map(|j| sq.dense_col_grad_sum(col(j), r, None, None))
                    .sum()
            }),
        ));
        let rh = &rh;
        sweeps.push((
            "squared grad huge".into(),
            Box::new(move || {
                (0..p)
                    .map(|j| sq.dense_col_grad_sum(colh(j), rh, None, None))
                    .sum()
            }),
        ));
    }
    sweeps.push((
        "two threads".into(),
        Box::new(|| {
            (0..p)
                .map(|j| {
                    let h = n / 2 / 64 * 64;
                    let (a, b) = rayon::join(
                        || dp_models::simd::dot(&col(j)[..h], &r[..h]),
                        || dp_models::simd::dot(&col(j)[h..], &r[h..]),
                    );
                    a + b
                })
                .sum()
        }),
    ));
    let mut times = vec![Vec::new(); sweeps.len()];
    let mut sink = 0.0;
    for _ in 0..reps {
        for (k, (_, f)) in sweeps.iter().enumerate() {
            let t = Instant::now();
            sink += f();
            times[k].push(t.elapsed().as_secs_f64());
        }
    }
    for (k, (name, _)) in sweeps.iter().enumerate() {
        let mut t = times[k].clone();
        t.sort_by(f64::total_cmp);
        let med = t[t.len() / 2];
        println!(
            "{name:22} median {:.3} ms  fastest {:.3} ms  {:.1} GB/s (median)",
            med * 1e3,
            t[0] * 1e3,
            bytes / med / 1e9
        );
    }
    // Keeps the sums alive (and shows that every variant computed something).
    println!("checksum {sink:.6e}");
}
