//! Criterion benchmarks (models): not written yet.

fn main() {}
