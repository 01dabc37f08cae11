//! Criterion benchmarks (solvers): not written yet.

fn main() {}
