//! Criterion benchmarks of the pool (`benches/`), beside deadpool, bb8 and
//! qp in the same run: `cargo bench -p poolbench-pool-benches --bench
//! checkout` (or `handoff`, `tail`). The library itself is empty.
