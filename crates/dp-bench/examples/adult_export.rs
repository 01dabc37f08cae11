//! Writes the splits of the `adult` experiment as CSV for the peer script
//! (`benches/peers/adult.py`), so that diffprivlib and Opacus see exactly the rows our
//! methods see.
//!
//! ```text
//! cargo run --release -p dp-bench --example adult_export -- DIR
//! ```
//!
//! Writes `DIR/{train,test,tune_fit,tune_val}.csv` (columns `x0..x80,y`, `y` in
//! `{-1, 1}`) and `DIR/meta.json` (sizes, epsilons, the deltas of the final and tuning
//! fits). The preprocessing is `dp_bench::data::adult_train_test`.

use anyhow::{bail, Result};

fn main() -> Result<()> {
    let Some(dir) = std::env::args().nth(1) else {
        bail!("usage: adult_export DIR");
    };
    dp_bench::experiments::adult::export_splits(std::path::Path::new(&dir))?;
    eprintln!("adult_export: wrote the splits to {dir}");
    Ok(())
}
