//! The missing-anchor report: a prompt (prefix) without the template's start
//! anchor is parsed whole as output, as the reference does, and
//! `Parser::anchor_missing` says so; `ParserOptions::require_anchor` turns
//! it into an error that carries the prompt.

mod common;

use common::bundled;
use retort_engine::{ParseErrorKind, ParserOptions, Template};

/// A gpt-oss conversation rendered without the generation prompt (the
/// commonest way to get the prompt wrong): no `<|start|>assistant`.
const GPT_OSS_NO_GENERATION_PROMPT: &str =
    "<|start|>system<|message|>You are ChatGPT.<|end|><|start|>user<|message|>Hi<|end|>";

#[test]
fn a_gpt_oss_prompt_without_the_generation_prompt_is_reported() {
    let t = bundled("gpt-oss");
    let mut p = t.parser(GPT_OSS_NO_GENERATION_PROMPT).expect("parser");
    assert!(p.anchor_missing());
    p.feed("<|channel|>final<|message|>Hello!<|return|>")
        .expect("feed");
    let (message, _) = p.finalize().expect("finalize");
    // The message is still the reference's: the prompt's text is read too.
    assert_eq!(
        message.get("content").and_then(|v| v.as_str()),
        Some("Hello!")
    );

    let with_header = format!("{GPT_OSS_NO_GENERATION_PROMPT}<|start|>assistant");
    assert!(!t.parser(&with_header).expect("parser").anchor_missing());
}

#[test]
fn require_anchor_refuses_the_prompt_and_keeps_it_in_the_error() {
    let t = bundled("gpt-oss");
    let options = ParserOptions::new().require_anchor(true);
    let Err(e) = t.parser_with(GPT_OSS_NO_GENERATION_PROMPT, options, None) else {
        panic!("a prompt without the anchor is refused");
    };
    assert_eq!(e.kind, ParseErrorKind::MissingAnchor);
    assert_eq!(e.raw, GPT_OSS_NO_GENERATION_PROMPT);
    assert!(e.message.contains("start anchor"), "{}", e.message);
    // A prompt with the anchor, or no prompt at all, is fine.
    let ok = format!("{GPT_OSS_NO_GENERATION_PROMPT}<|start|>assistant");
    assert!(t.parser_with(&ok, options, None).is_ok());
    assert!(t.parser_with("", options, None).is_ok());
}

/// Reka-Edge with thinking off writes `assistant:` without the space its
/// thinking prompt has. The old anchor (`assistant: `) missed it, and the
/// whole prompt, tool instructions included, was parsed as output; the
/// report shows exactly that mistake, and the bundled anchor finds both.
#[test]
fn reka_edge_thinking_off_is_found_and_the_old_anchor_would_have_been_reported() {
    let off = "human: What's the weather?<sep>assistant:";
    let on = "human: What's the weather?<sep>assistant: <think>\n";
    let t = bundled("reka-edge");
    for prompt in [off, on] {
        assert!(
            !t.parser(prompt).expect("parser").anchor_missing(),
            "{prompt:?}"
        );
    }
    let old = Template::from_json(
        r#"{"start_anchor": "assistant: ", "fields": {"content": {"close_pattern": "<sep>[\\s\\S]*"}}}"#,
    )
    .expect("valid template");
    let mut p = old.parser(off).expect("parser");
    assert!(p.anchor_missing());
    p.feed("Sunny.").expect("feed");
    let (message, _) = p.finalize().expect("finalize");
    // The reference's result for that old template: the prompt became part
    // of the message (the content is what followed the prompt's `<sep>`).
    assert_ne!(
        message.get("content").and_then(|v| v.as_str()),
        Some("Sunny.")
    );

    // A prompt rendered without the generation prompt.
    assert!(
        t.parser("human: What's the weather?<sep>")
            .expect("parser")
            .anchor_missing()
    );
}

#[test]
fn an_empty_prefix_opts_out() {
    let t = bundled("gpt-oss");
    assert!(!t.parser("").expect("parser").anchor_missing());
}
