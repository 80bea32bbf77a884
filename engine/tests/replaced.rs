//! The report of values the template's semantics replace: the message stays
//! the reference's (the last value), and `Parser::replaced` says what was
//! dropped and where.

use retort_engine::{Replaced, Template};

/// Qwen3's old content close (before the bundled templates took what
/// follows the end-of-turn marker): a newline after it reopens the content.
fn old_qwen3() -> Template {
    Template::from_json(
        r#"{"defaults": {"role": "assistant"}, "start_anchor": "<|im_start|>assistant\n",
            "fields": {
              "reasoning_content": {"open": "<think>", "close": "</think>"},
              "tool_calls": {"open_pattern": "\\s*<tool_call>", "close": "</tool_call>",
                             "repeats": true, "content": "json"},
              "content": {"close_pattern": "\\s*(?:<\\|im_end\\|>|<\\|endoftext\\|>)"}}}"#,
    )
    .expect("valid template")
}

fn run(t: &Template, text: &str, pieces: usize) -> (retort_engine::Map, Vec<Replaced>) {
    let mut p = t.parser("").expect("parser");
    let bounds: Vec<usize> = text
        .char_indices()
        .map(|(i, _)| i)
        .step_by(pieces.max(1))
        .chain([text.len()])
        .collect();
    for w in bounds.windows(2) {
        p.feed(&text[w[0]..w[1]]).expect("feed");
    }
    let (message, _) = p.finalize().expect("finalize");
    (message, p.replaced().to_vec())
}

#[test]
fn a_newline_after_the_end_marker_is_reported_as_a_replacement() {
    for pieces in [1, 3, 100] {
        let (message, replaced) = run(&old_qwen3(), "Hello.<|im_end|>\n", pieces);
        // The reference's result: the empty second region replaced "Hello.".
        assert!(message.get("content").is_none(), "{message:?}");
        assert_eq!(
            replaced,
            [Replaced {
                field: "content".into(),
                offset: 16
            }]
        );
    }
}

#[test]
fn two_reasoning_blocks_and_text_after_a_call_are_reported() {
    let text = "<think>a</think>Let me check.<tool_call>{}</tool_call>Done.\
                <think>b</think><|im_end|>";
    let (message, replaced) = run(&old_qwen3(), text, 7);
    assert_eq!(message["content"].as_str(), Some("Done."));
    assert_eq!(message["reasoning_content"].as_str(), Some("b"));
    let fields: Vec<&str> = replaced.iter().map(|r| r.field.as_str()).collect();
    assert_eq!(fields, ["content", "reasoning_content"]);
    assert_eq!(replaced[0].offset, text.find("Done.").unwrap());
    assert_eq!(replaced[1].offset, text.rfind('b').unwrap());
}

#[test]
fn repeats_and_join_replace_nothing() {
    let t = Template::from_json(
        r#"{"start_anchor": "<s>", "fields": {
              "r": {"open": "<r>", "close": "</r>", "repeats": true},
              "j": {"open": "<j>", "close": "</j>", "repeats": true, "join": " "}}}"#,
    )
    .expect("valid template");
    let (message, replaced) = run(&t, "<r>1</r><r>2</r><j>a</j><j>b</j>", 2);
    assert_eq!(message["j"].as_str(), Some("a b"));
    assert!(replaced.is_empty(), "{replaced:?}");
}
