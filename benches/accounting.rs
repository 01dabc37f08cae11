//! Criterion benchmarks (accounting): not written yet.

fn main() {}
