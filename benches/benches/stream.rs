//! The benchmark workloads (`retort_benches::workloads`) through parsers
//! compiled by `response_template!` and through the same templates loaded at
//! run time: one-shot, streamed in 1-, 4- and 16-character pieces, and
//! parser construction. Throughput is in bytes of model output; each
//! measurement runs from construction to the finalized message.
//!
//! `cargo bench -p retort-benches --bench stream`

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use retort_benches::{Kind, Mode, Parsers, workloads};

fn bench(c: &mut Criterion) {
    for w in workloads() {
        let parsers = Parsers::new(w.template).expect("the template loads");
        let mut group = c.benchmark_group(&w.name);
        group.throughput(Throughput::Bytes(w.text.len() as u64));
        group.sample_size(10);
        group.warm_up_time(std::time::Duration::from_millis(300));
        group.measurement_time(std::time::Duration::from_secs(1));
        for mode in Mode::ALL {
            let pieces = mode.pieces(&w.text);
            // Both parsers must agree before they are timed.
            assert_eq!(
                parsers.run(Kind::Compiled, &w.prefix, &pieces),
                parsers.run(Kind::Runtime, &w.prefix, &pieces),
                "{}: compiled and run-time parsers disagree",
                w.name
            );
            for kind in [Kind::Compiled, Kind::Runtime] {
                group.bench_function(format!("{}/{}", kind.name(), mode.name()), |b| {
                    b.iter(|| parsers.run(kind, &w.prefix, &pieces))
                });
            }
        }
        group.finish();
    }
}

fn construct(c: &mut Criterion) {
    let mut group = c.benchmark_group("construct");
    for w in workloads() {
        let parsers = Parsers::new(w.template).expect("the template loads");
        for kind in [Kind::Compiled, Kind::Runtime] {
            group.bench_function(format!("{}/{}", kind.name(), w.name), |b| {
                b.iter(|| parsers.construct(kind, &w.prefix))
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench, construct);
criterion_main!(benches);
