//! Tool calls built in their generated structs against the transform's
//! dicts, for templates whose calls are a JSON list (`transform_each`,
//! Mistral NeMo) or read key paths of the content (Llama 3.1's
//! `{content.name}`):
//!
//! ```text
//! cargo run --release -p retort-benches --bin typed
//! ```
//!
//! Each row parses one message with a compiled parser, from construction to
//! the typed `Message`: "typed" as the generated `Parser` does, "dict" with
//! the same machine and `typed_regions(false)` (the engine's transform
//! builds the dicts, which the message then takes apart: what these
//! templates ran before their builders were generated). Both are timed in
//! alternating batches; compare the ratio, not the times across runs.
//! `typed ROW typed|dict N` parses row `ROW` (`mistral-nemo`, `llama-3.1`)
//! `N` times one way and exits, for `valgrind --tool=callgrind` (two `N`s,
//! subtracted, give the instructions of one parse).

use retort_benches::time_pair;
use std::hint::black_box;
use std::time::Duration;

retort::response_template!("../templates/mistral-nemo.json");
retort::response_template!("../templates/llama-3.1.json");

/// Mistral NeMo: a `[TOOL_CALLS]` list of two calls.
const NEMO: &str = r#"[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Lisbon", "unit": "celsius"}, "id": "a1b2c3d4e"}, {"name": "search_web", "arguments": {"query": "rainfall Osaka", "limit": 3}, "id": "f5g6h7i8j"}]</s>"#;
const NEMO_PROMPT: &str = "[/INST]";

/// Llama 3.1: one call, `{"name": ..., "parameters": ...}`.
const LLAMA: &str =
    r#"{"name": "get_weather", "parameters": {"city": "Lisbon", "unit": "celsius"}}<|eot_id|>"#;
const LLAMA_PROMPT: &str = "<|start_header_id|>assistant<|end_header_id|>\n\n";

/// One parse, typed or through the dicts; returns the number of calls.
macro_rules! parse {
    ($module:ident, $prompt:expr, $text:expr, $typed:expr) => {{
        let message = if $typed {
            let mut p = $module::Parser::new($prompt).expect("the prompt parses");
            p.feed($text).expect("the message parses");
            p.finalize().expect("the message parses").0
        } else {
            let mut p = retort::__private::Parser::with_machine(
                $module::Machine,
                $prompt,
                retort::ParserOptions::default(),
                None,
            )
            .expect("the prompt parses");
            p.typed_regions(false);
            p.feed($text).expect("the message parses");
            let (fields, regions, _) = p.finalize_typed().expect("the message parses");
            $module::Message::from_fields(fields, regions).expect("the message converts")
        };
        black_box(&message);
        message.tool_calls.map_or(0, |calls| calls.len())
    }};
}

/// A message to time: template, what it holds, and its parse.
type Row = (&'static str, &'static str, fn(bool) -> usize);

fn nemo(typed: bool) -> usize {
    parse!(mistral_nemo, NEMO_PROMPT, black_box(NEMO), typed)
}

fn llama(typed: bool) -> usize {
    parse!(llama_3_1, LLAMA_PROMPT, black_box(LLAMA), typed)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rows: [Row; 2] = [
        ("mistral-nemo", "two calls", nemo),
        ("llama-3.1", "one call", llama),
    ];
    // Both ways give the same calls (the tests check the values).
    for (name, _, f) in rows {
        assert_eq!(f(true), f(false), "{name}: typed and dict differ");
    }
    if let [row, way, n] = args.as_slice() {
        let (Some((_, _, f)), Ok(n)) = (rows.iter().find(|r| r.0 == row), n.parse::<usize>())
        else {
            eprintln!("usage: typed [mistral-nemo|llama-3.1 typed|dict N]");
            std::process::exit(2);
        };
        let typed = way == "typed";
        let calls: usize = (0..n).map(|_| f(typed)).sum();
        println!("{calls} calls");
        return;
    }
    println!(
        "{:<30} {:>10} {:>10} {:>8}",
        "template", "typed µs", "dict µs", "ratio"
    );
    for (name, what, f) in rows {
        let name = format!("{name}, {what}");
        let (typed, dict) = time_pair(
            || {
                black_box(f(true));
            },
            || {
                black_box(f(false));
            },
            10,
            Duration::from_millis(50),
        );
        println!(
            "{name:<30} {:>10.3} {:>10.3} {:>8.2}",
            typed * 1e6,
            dict * 1e6,
            dict / typed
        );
    }
}
