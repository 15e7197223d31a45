//! Kiln's benchmark suite: the fixtures and the cases that the
//! table driver (`kiln-bench`, run by `scripts/bench.sh`) and the criterion
//! suite (`cargo bench -p kiln-bench`) share.

pub mod cases;
pub mod fixtures;
