//! The unclaimed-text report: in a template without an implicit field, text
//! outside every region is not in the message (the reference's semantics),
//! nor, in any template, is the text after the end of the turn;
//! `Parser::unclaimed` keeps both, with their offsets, the same for every
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
fn a_template_with_an_implicit_field_claims_everything_before_the_end() {
    let t = bundled("qwen3");
    let mut p = t.parser("<|im_start|>assistant\n").expect("parser");
    p.feed("Hello.<|im_end|>").expect("feed");
    p.finalize().expect("finalize");
    assert!(p.unclaimed().is_empty(), "{:?}", p.unclaimed());
}

/// What follows the end of the turn (taken by the end-of-turn close, so
/// that it cannot reopen a field) is reported, marked as such, for every
/// chunking; the message keeps the answer.
#[test]
fn text_after_the_end_of_the_turn_is_reported() {
    let cases = [
        ("qwen3", "<|im_start|>assistant\n", "Hello.<|im_end|>"),
        (
            "llama-3.1",
            "<|start_header_id|>assistant<|end_header_id|>\n\n",
            "Hello.<|eot_id|>",
        ),
        ("gemma4", "<|turn>model\n", "Hello.<turn|>"),
        ("qwen3.5", "<|im_start|>assistant\n", "Hello.\n<|im_end|>"),
        ("reka-edge", "human: Hi <sep> assistant: ", "Hello.<sep>"),
    ];
    for (name, prompt, answer) in cases {
        let t = bundled(name);
        for after in ["\n", "\nThe model ran on.<|im_start|>user\nmore"] {
            let text = format!("{answer}{after}");
            let mut reports = Vec::new();
            for n in [1, 3, 1000] {
                let mut p = t.parser(prompt).expect("parser");
                let chars: Vec<char> = text.chars().collect();
                for piece in chars.chunks(n) {
                    p.feed(&piece.iter().collect::<String>()).expect("feed");
                }
                let (message, _) = p.finalize().expect("finalize");
                assert_eq!(
                    message.get("content").and_then(|v| v.as_str()),
                    Some("Hello."),
                    "{name} {after:?} pieces of {n}"
                );
                reports.push(p.unclaimed().to_vec());
            }
            let u = &reports[0];
            assert_eq!(u.len(), 1, "{name} {after:?}: {u:?}");
            assert!(u[0].after_end, "{name}");
            assert_eq!(u[0].text, after, "{name}");
            // (The prompt is all anchor: nothing of it is in the parser's
            // text.)
            assert_eq!(u[0].offset, answer.len(), "{name}");
            assert_eq!(u[0].is_significant(), after.len() > 1, "{name}");
            assert!(reports.iter().all(|r| r == u), "{name}: {reports:?}");
        }
    }
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

/// Every family's sample "an answer, the end of turn, and text after it"
/// (`tests/conformance/cases/models.jsonl`): the text after the marker is
/// reported — as after the end where the end-of-turn close took it, as
/// outside every region where the template has no implicit field and the
/// turn's end is a plain close (gpt-oss's `<|return|>`) — in every chunking
/// the vectors hold.
#[test]
fn every_family_reports_what_follows_its_end_of_turn() {
    use retort_engine::Value;
    use retort_engine::py::json_loads;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let cases = std::fs::read_to_string(root.join("tests/conformance/cases/models.jsonl"))
        .expect("the model samples");
    let mut families = 0;
    for line in cases.lines().filter(|l| !l.trim().is_empty()) {
        let case = json_loads(line).expect("a JSON case");
        let Value::Map(case) = case else {
            panic!("a case is an object")
        };
        let text_of = |k: &str| case.get(k).and_then(Value::as_str).unwrap_or_default();
        if text_of("what") != "an answer, the end of turn, and text after it" {
            continue;
        }
        families += 1;
        let id = text_of("id");
        let t = bundled(text_of("template"));
        let Some(Value::List(chunkings)) = case.get("chunkings") else {
            panic!("{id}: chunkings")
        };
        for chunking in chunkings {
            let Value::List(pieces) = chunking else {
                panic!("{id}: a chunking")
            };
            let mut p = t.parser(text_of("prefix")).expect("parser");
            for piece in pieces {
                p.feed(piece.as_str().expect("a piece")).expect("feed");
            }
            p.finalize().expect("finalize");
            assert!(
                p.unclaimed()
                    .iter()
                    .any(|u| u.is_significant() && u.text.contains("tomorrow")),
                "{id}: {:?}",
                p.unclaimed()
            );
        }
    }
    assert!(families >= 50, "{families} families have the sample");
}
