//! Parsing time is linear in the input for a delimiter with an unbounded
//! middle, even when the text arrives one byte at a time: held text is never
//! scanned again.

use retort::Template;
use std::time::{Duration, Instant};

const TEMPLATE: &str = r#"{
  "start_anchor": "<|start|>assistant",
  "fields": {
    "thinking": {"open": "<|channel|>analysis<|message|>", "close": "<|end|>"},
    "content": {"open": "<|channel|>final<|message|>", "close": "<|end|>"},
    "tool_calls": {
      "open_pattern": "<\\|channel\\|>commentary to=functions\\.(?P<name>\\w+).*?<\\|message\\|>",
      "close": "<|call|>", "repeats": true, "content": "json",
      "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}
    }
  }
}"#;

/// A generation of about `n` bytes whose tool-call opener stays undecided
/// (its lazy middle never meets `<|message|>`) for most of the text, with
/// near misses of every delimiter along the way.
fn text(n: usize) -> String {
    let mut s = String::from(
        "<|channel|>analysis<|message|>thinking<|end|><|channel|>commentary to=functions.get_weather ",
    );
    let filler = "lorem <|chan ipsum <|message <|end dolor sit amet | 🙂 ";
    while s.len() < n {
        s.push_str(filler);
    }
    s
}

fn time_bytewise(t: &Template, text: &str) -> (Duration, u64) {
    let mut best = Duration::MAX;
    let mut work = 0;
    for _ in 0..3 {
        let start = Instant::now();
        let mut p = t.parser("").expect("parser");
        let bytes = text.as_bytes();
        for i in 0..bytes.len() {
            p.feed_bytes(&bytes[i..i + 1]).expect("feed");
        }
        work = p.bytes_scanned();
        let (msg, _) = p.finalize().expect("finalize");
        assert!(msg.contains_key("thinking"));
        best = best.min(start.elapsed());
    }
    (best, work)
}

#[test]
fn one_megabyte_costs_at_most_twelve_times_one_hundred_kilobytes() {
    let t = Template::from_json(TEMPLATE).expect("template");
    let (small, small_work) = time_bytewise(&t, &text(100_000));
    let (large, large_work) = time_bytewise(&t, &text(1_000_000));
    let ratio = large.as_secs_f64() / small.as_secs_f64();
    let work_ratio = large_work as f64 / small_work as f64;
    // Wall time is reported; the assertion is on the scanner's work, which a
    // busy machine cannot disturb: held text read again would show up here.
    eprintln!(
        "100 KB: {small:?}, 1 MB: {large:?}, time ratio {ratio:.2}, work ratio {work_ratio:.2}"
    );
    assert!(
        work_ratio <= 12.0,
        "1 MB needed {work_ratio:.2}x the scanning work of 100 KB"
    );
}
