//! The unclaimed-text report: in a template without an implicit field, text
//! outside every region is not in the message (the reference's semantics);
//! `Parser::unclaimed` keeps it, with its offset, the same for every
//! chunking.

mod common;

use common::bundled;
use retort_engine::{Template, Unclaimed};

const PROMPT: &str = "<|start|>user<|message|>Hi<|end|><|start|>assistant";

/// Parses `text` in pieces of `n` characters; the message's content and
/// the unclaimed text.
fn run(t: &Template, text: &str, n: usize) -> (Option<String>, Vec<Unclaimed>) {
    let mut p = t.parser(PROMPT).expect("parser");
    let cuts: Vec<usize> = text
        .char_indices()
        .map(|(i, _)| i)
        .step_by(n)
        .chain([text.len()])
        .collect();
    for w in cuts.windows(2) {
        p.feed(&text[w[0]..w[1]]).expect("feed");
    }
    let (message, _) = p.finalize().expect("finalize");
    let content = message
        .get("content")
        .and_then(|v| v.as_str())
        .map(str::to_owned);
    (content, p.unclaimed().to_vec())
}

#[test]
fn gpt_oss_prose_without_a_channel_header_is_reported_not_lost() {
    let t = bundled("gpt-oss");
    // A model (or a template) that skipped the channel header: the
    // reference's message has nothing, and the text used to vanish.
    let text = "The weather in Paris is sunny.";
    for n in [1, 3, 7, 1000] {
        let (content, unclaimed) = run(&t, text, n);
        assert_eq!(content, None, "pieces of {n}");
        assert_eq!(unclaimed.len(), 1, "pieces of {n}: {unclaimed:?}");
        assert_eq!(unclaimed[0].text, text, "pieces of {n}");
        assert_eq!(unclaimed[0].offset, 0, "pieces of {n}");
        assert!(unclaimed[0].is_significant());
    }
}

#[test]
fn gpt_oss_text_between_messages_is_listed_with_its_offset() {
    let t = bundled("gpt-oss");
    let text = "<|channel|>analysis<|message|>Think.<|end|>stray words<|start|>assistant<|channel|>final<|message|>Sunny.<|return|>";
    let at = text.find("stray").expect("the stray text");
    let mut whole = None;
    for n in [1, 2, 5, 1000] {
        let (content, unclaimed) = run(&t, text, n);
        assert_eq!(content.as_deref(), Some("Sunny."), "pieces of {n}");
        let significant: Vec<_> = unclaimed.iter().filter(|u| u.is_significant()).collect();
        assert!(
            significant
                .iter()
                .any(|u| u.offset == at && u.text.starts_with("stray words")),
            "pieces of {n}: {unclaimed:?}"
        );
        // Every chunking reports the same.
        match &whole {
            None => whole = Some(unclaimed),
            Some(w) => assert_eq!(w, &unclaimed, "pieces of {n}"),
        }
    }
}

#[test]
fn gpt_oss_headers_between_messages_are_the_templates() {
    let t = bundled("gpt-oss");
    let text = "<|channel|>analysis<|message|>Think.<|end|><|start|>assistant<|channel|>final<|message|>Sunny.<|return|>";
    for n in [1, 4, 1000] {
        let (content, unclaimed) = run(&t, text, n);
        assert_eq!(content.as_deref(), Some("Sunny."), "pieces of {n}");
        assert!(unclaimed.is_empty(), "pieces of {n}: {unclaimed:?}");
    }
}

#[test]
fn a_template_with_an_implicit_field_claims_everything() {
    let t = bundled("qwen3");
    let mut p = t.parser("<|im_start|>assistant\n").expect("parser");
    p.feed("Hello.<|im_end|>\n").expect("feed");
    p.finalize().expect("finalize");
    assert!(p.unclaimed().is_empty(), "{:?}", p.unclaimed());
}

#[test]
fn the_prompt_is_never_reported() {
    let t = bundled("gpt-oss");
    // The prompt's tail after the anchor holds text outside regions.
    let mut p = t.parser(&format!("{PROMPT} to=nowhere")).expect("parser");
    p.feed("<|channel|>final<|message|>Hi<|return|>")
        .expect("feed");
    p.finalize().expect("finalize");
    assert!(
        p.unclaimed().iter().all(|u| !u.text.contains("nowhere")),
        "{:?}",
        p.unclaimed()
    );
}
