//! The parsers the benchmarks time give the same results: compiled and
//! run-time, in every chunking the benchmarks use and a few others, on
//! every workload, the same message and the same events from each call.
//! (The comparison times the parsers; this holds them to each other, so
//! that a path only the compiled parser takes, such as the one for a
//! gpt-oss tool-call header streamed a token at a time, cannot gain speed
//! by parsing differently, or by deciding later.)

use retort_benches::{Kind, Mode, Parsers, workloads};

#[test]
fn compiled_and_runtime_agree_on_every_workload_in_every_chunking() {
    let mut checked = 0;
    for w in workloads() {
        let parsers = Parsers::new(w.template).expect("a bundled template");
        let (one_shot, _) = parsers.session(Kind::Runtime, &w.prefix, &[w.text.as_str()]);
        for mode in [
            Mode::Whole,
            Mode::Stream(1),
            Mode::Stream(2),
            Mode::Stream(3),
            Mode::Stream(4),
            Mode::Stream(7),
            Mode::Stream(16),
        ] {
            let pieces = mode.pieces(&w.text);
            let (message, events) = parsers.session(Kind::Runtime, &w.prefix, &pieces);
            assert!(
                message == one_shot,
                "{} {}: the run-time parser's message differs from its one-shot parse",
                w.name,
                mode.name()
            );
            let (compiled, compiled_events) = parsers.session(Kind::Compiled, &w.prefix, &pieces);
            assert!(
                compiled == message,
                "{} {}: the compiled parser's message differs from the run-time parser's",
                w.name,
                mode.name()
            );
            assert_eq!(events.len(), compiled_events.len());
            for (i, (a, b)) in events.iter().zip(&compiled_events).enumerate() {
                assert!(
                    a == b,
                    "{} {}: call {i} gives other events compiled than run-time\ncompiled {b:?}\nrun-time {a:?}",
                    w.name,
                    mode.name()
                );
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 5 * 7);
}
