//! Criterion benchmarks (dp_gcd): not written yet.

fn main() {}
