//! The parsers the benchmarks time give the same results: compiled and
//! run-time, in every chunking the benchmarks use and a few others, on
//! every workload, the same message and the same events from each call.
//! (The comparison times the parsers; this holds them to each other, so
//! that a path only the compiled parser takes, such as the one for a
//! gpt-oss tool-call header streamed a token at a time, cannot gain speed
//! by parsing differently, or by deciding later.)

use retort::{OwnedEvent, Template, Value};
use retort_benches::{Mode, gpt_oss, qwen3, qwen3_coder, smollm3, templates_dir, workloads};

/// A parse's message, in the run-time form, and the events of each call
/// (each `feed`, then `finalize`).
type Session = (Value, Vec<Vec<OwnedEvent>>);

/// `pieces` (after `prefix`) through a compiled parser. (Here, not in the
/// crate: a second caller of `feed` there changes what the compiler
/// inlines into the timed loop, and with it the timings.)
macro_rules! compiled {
    ($module:ident, $prefix:expr, $pieces:expr) => {{
        let mut p = $module::Parser::new($prefix).expect("the prompt parses");
        let mut events = Vec::new();
        for piece in $pieces {
            events.push(
                p.feed(piece)
                    .expect("the workload parses")
                    .untyped()
                    .to_vec(),
            );
        }
        let (message, last) = p.finalize().expect("the workload parses");
        events.push(last.untyped().to_vec());
        (message.to_value(), events)
    }};
}

fn compiled_session(template: &str, prefix: &str, pieces: &[&str]) -> Session {
    match template {
        "smollm3" => compiled!(smollm3, prefix, pieces),
        "qwen3" => compiled!(qwen3, prefix, pieces),
        "gpt-oss" => compiled!(gpt_oss, prefix, pieces),
        "qwen3-coder" => compiled!(qwen3_coder, prefix, pieces),
        other => panic!("{other}: no compiled parser in retort-benches"),
    }
}

fn runtime_session(t: &Template, prefix: &str, pieces: &[&str]) -> Session {
    let mut p = t.parser(prefix).expect("the prompt parses");
    let mut events = Vec::new();
    for piece in pieces {
        events.push(p.feed(piece).expect("the workload parses").to_vec());
    }
    let (message, last) = p.finalize().expect("the workload parses");
    events.push(last.to_vec());
    (Value::Map(message), events)
}

#[test]
fn compiled_and_runtime_agree_on_every_workload_in_every_chunking() {
    let mut checked = 0;
    for w in workloads() {
        let path = templates_dir().join(format!("{}.json", w.template));
        let json = std::fs::read_to_string(&path).expect("a bundled template");
        let t = Template::from_json(&json).expect("a bundled template");
        let (one_shot, _) = runtime_session(&t, &w.prefix, &[w.text.as_str()]);
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
            let (message, events) = runtime_session(&t, &w.prefix, &pieces);
            assert!(
                message == one_shot,
                "{} {}: the run-time parser's message differs from its one-shot parse",
                w.name,
                mode.name()
            );
            let (compiled, compiled_events) = compiled_session(w.template, &w.prefix, &pieces);
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
    assert_eq!(checked, 6 * 7);
}
