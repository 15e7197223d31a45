//! The criterion suite: every case of the table, Kiln and its peer in one
//! group, under criterion's statistics (`cargo bench -p kiln-bench`, or
//! `cargo bench -p kiln-bench -- dir-parse` for one group). The table
//! itself comes from `scripts/bench.sh`, which interleaves the two sides
//! and adds instruction counts.

use criterion::{criterion_group, criterion_main, Criterion};
use kiln_bench::cases::{self, Scale};

fn suite(c: &mut Criterion) {
    let scale = if std::env::var_os("KILN_BENCH_QUICK").is_some() {
        Scale::Quick
    } else {
        Scale::Full
    };
    for id in cases::ids(scale) {
        let Some(mut case) = cases::build(&id, scale) else {
            continue;
        };
        let mut group = c.benchmark_group(&id);
        group.bench_function("kiln", |b| b.iter(|| (case.kiln)()));
        if let Some((_, peer)) = case.peer.as_mut() {
            group.bench_function("peer", |b| b.iter(&mut *peer));
        }
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = suite
}
criterion_main!(benches);
