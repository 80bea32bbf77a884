//! Fields the template's semantics replace: the stream never aborts, sends
//! every region, and accumulates to the layer's own message for every
//! chunking (`TextMode::Stream`).

use retort_engine::Template;
use retort_openai::{ChatCompletionMessage, ChunkStream, Options, REGION_BREAK, TextMode};
use std::path::Path;

/// A template whose content reopens after its close: Qwen3's as it was
/// before the bundled templates took what follows the end-of-turn marker.
fn reopening() -> Template {
    Template::from_json(
        r#"{"defaults": {"role": "assistant"}, "start_anchor": "<|im_start|>assistant\n",
            "fields": {
              "reasoning_content": {"open": "<think>", "close": "</think>"},
              "tool_calls": {"open_pattern": "\\s*<tool_call>", "close": "</tool_call>",
                             "repeats": true, "content": "json",
                             "transform": {"type": "function", "function": "{content}"}},
              "content": {"close_pattern": "\\s*(?:<\\|im_end\\|>|<\\|endoftext\\|>)"}}}"#,
    )
    .expect("valid template")
}

fn bundled(name: &str) -> Template {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../templates")
        .join(format!("{name}.json"));
    Template::from_json(&std::fs::read_to_string(path).expect("bundled template")).expect("valid")
}

/// What the official client would accumulate: content, reasoning and calls
/// (id, name, arguments), concatenating every fragment.
#[derive(Debug, Default, PartialEq)]
struct Accumulated {
    content: String,
    reasoning: String,
    calls: Vec<(String, String, String)>,
}

fn stream(
    t: &Template,
    text: &str,
    piece: usize,
    mode: TextMode,
) -> (Accumulated, ChatCompletionMessage, usize) {
    let options = Options {
        text: mode,
        ..Options::deterministic()
    };
    let mut s = ChunkStream::new(t, "", options).expect("stream");
    let mut chunks = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    for p in chars.chunks(piece) {
        chunks.extend(s.feed(&p.iter().collect::<String>()).expect("no abort"));
    }
    let (last, _) = s.finalize(false).expect("no abort at the end");
    chunks.extend(last);
    let mut acc = Accumulated::default();
    for c in &chunks {
        let d = &c.choices[0].delta;
        acc.content += d.content.as_deref().unwrap_or("");
        acc.reasoning += d.reasoning_content.as_deref().unwrap_or("");
        for call in d.tool_calls.iter().flatten() {
            let i = call.index as usize;
            if i == acc.calls.len() {
                acc.calls.push(Default::default());
            }
            let f = call.function.as_ref();
            acc.calls[i].0 += call.id.as_deref().unwrap_or("");
            acc.calls[i].1 += f.and_then(|f| f.name.as_deref()).unwrap_or("");
            acc.calls[i].2 += f.and_then(|f| f.arguments.as_deref()).unwrap_or("");
        }
    }
    (acc, s.message(), s.replaced().len())
}

fn same(acc: &Accumulated, m: &ChatCompletionMessage) -> bool {
    let calls: Vec<(String, String, String)> = m
        .tool_calls
        .iter()
        .flatten()
        .map(|c| {
            (
                c.id.clone(),
                c.function.name.clone(),
                c.function.arguments.clone(),
            )
        })
        .collect();
    acc.content == m.content.clone().unwrap_or_default()
        && acc.reasoning == m.reasoning_content.clone().unwrap_or_default()
        && acc.calls == calls
}

#[test]
fn a_newline_after_the_end_marker_neither_aborts_nor_loses_the_answer() {
    for t in [reopening(), bundled("qwen3")] {
        for piece in [1, 2, 5, 100] {
            for mode in [TextMode::Stream, TextMode::Exact] {
                let (acc, message, _) = stream(&t, "Hello.<|im_end|>\n", piece, mode);
                assert!(same(&acc, &message), "{acc:?} vs {message:?}");
                if mode == TextMode::Stream {
                    assert_eq!(acc.content, "Hello.");
                }
            }
        }
    }
}

#[test]
fn every_region_of_a_replaced_field_streams_in_order() {
    let text = "<think>first</think>Let me check.\n<tool_call>\n{\"name\": \"f\", \"arguments\": {\"x\": 1}}\n\
                </tool_call>\nDone.<think>second</think><|im_end|>";
    for piece in [1, 3, 8, 1000] {
        let (acc, message, replaced) = stream(&reopening(), text, piece, TextMode::Stream);
        assert_eq!(replaced, 2, "content and reasoning were written twice");
        assert!(same(&acc, &message), "{acc:?} vs {message:?}");
        assert_eq!(acc.content, format!("Let me check.{REGION_BREAK}Done."));
        assert_eq!(acc.reasoning, format!("first{REGION_BREAK}second"));
        assert_eq!(acc.calls.len(), 1);
        // Exact mode sends the reference's values once certain.
        let (acc, message, _) = stream(&reopening(), text, piece, TextMode::Exact);
        assert!(same(&acc, &message));
        assert_eq!(acc.content, "Done.");
        assert_eq!(acc.reasoning, "second");
    }
}

#[test]
fn a_tool_call_field_that_does_not_repeat_keeps_every_call_in_the_layer() {
    let t = Template::from_json(
        r#"{"start_anchor": "<s>", "fields": {
              "tool_calls": {"open": "<calls>", "close": "</calls>", "content": "json",
                             "transform_each": true,
                             "transform": {"type": "function",
                                           "function": {"name": "{name}", "arguments": "{arguments}"}}},
              "content": {}}}"#,
    )
    .expect("valid template");
    let text = r#"<calls>[{"name": "a", "arguments": {}}]</calls> and <calls>[{"name": "b", "arguments": {"k": 2}}]</calls>"#;
    for piece in [1, 4, 1000] {
        let (acc, message, replaced) = stream(&t, text, piece, TextMode::Stream);
        assert!(replaced >= 1);
        assert!(same(&acc, &message), "{acc:?} vs {message:?}");
        let names: Vec<&str> = acc.calls.iter().map(|c| c.1.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
    }
}
