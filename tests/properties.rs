//! Properties of the parser that must hold for every input:
//!
//! - streaming never changes the outcome: any chunking of a text gives the
//!   message and (merged) events of the one-shot parse;
//! - arbitrary bytes and arbitrary templates never panic.

use proptest::prelude::*;
use retort::{Template, Value};
use retort_conformance::{Runner, strict_equal};
use retort_tests::root;

fn template(name: &str) -> Template {
    let path = root().join("templates").join(format!("{name}.json"));
    Template::from_json(&std::fs::read_to_string(&path).expect("template file"))
        .expect("valid template")
}

/// Pieces of model output in several formats, with near misses, that the
/// generated texts are made of.
const PIECES: &[&str] = &[
    "<think>",
    "</think>",
    "<tool_call>",
    "</tool_call>",
    "<|im_end|>",
    "{\"name\": \"f\", \"arguments\": {\"a\": 1}}",
    "<|channel|>analysis<|message|>",
    "<|channel|>final<|message|>",
    "<|end|>",
    "<|call|>",
    "<|start|>assistant",
    "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>",
    "commentary to=",
    "<|",
    "<function=f>",
    "<parameter=x>",
    "</parameter>",
    "</function>",
    "\n",
    " ",
    "  ",
    "text",
    "é",
    "🙂",
    "<",
    ">",
    "</",
    "<thi",
    "</tool_",
    "[TOOL_CALLS]",
    "[ARGS]",
    "</s>",
    "<invoke name=\"f\">",
    "</invoke>",
    "</minimax:tool_call>",
    "<minimax:tool_call>",
    "[e~[",
    "42",
    "{",
    "}",
];

fn text_strategy() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(PIECES), 0..24).prop_map(|v| v.concat())
}

/// Cuts `text` at the given fractions (on character boundaries).
fn chunk(text: &str, cuts: &[u16]) -> Vec<String> {
    let bounds: Vec<usize> = text
        .char_indices()
        .map(|(i, _)| i)
        .chain([text.len()])
        .collect();
    let mut at: Vec<usize> = cuts
        .iter()
        .map(|c| bounds[*c as usize % bounds.len()])
        .collect();
    at.push(0);
    at.push(text.len());
    at.sort_unstable();
    at.dedup();
    at.windows(2).map(|w| text[w[0]..w[1]].to_owned()).collect()
}

const TEMPLATES: &[&str] = &[
    "smollm3",
    "qwen3",
    "qwen3-coder",
    "gpt-oss",
    "minimax-m2",
    "mistral-small-3.2",
    "deepseek-r1",
    "kimi-k2",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn any_chunking_gives_the_one_shot_result(
        which in 0..TEMPLATES.len(),
        text in text_strategy(),
        prefix in prop::sample::select(&["", "<|im_start|>assistant\n<think>\n", "<|start|>assistant", "<thi"][..]),
        cuts in prop::collection::vec(any::<u16>(), 0..12),
    ) {
        let t = template(TEMPLATES[which]);
        let whole = t.run(prefix, None, &[&text]);
        let pieces = chunk(&text, &cuts);
        let refs: Vec<&str> = pieces.iter().map(String::as_str).collect();
        let streamed = t.run(prefix, None, &refs);
        // Runs hold merged events, so equal runs mean equal outcomes.
        prop_assert!(strict_equal(&retort_conformance::normalise(&whole), &retort_conformance::normalise(&streamed)),
            "whole {:?}\nstreamed {:?}", retort_conformance::to_line(&whole), retort_conformance::to_line(&streamed));
    }

    #[test]
    fn arbitrary_bytes_never_panic(which in 0..TEMPLATES.len(), chunks in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..40), 0..8)) {
        let t = template(TEMPLATES[which]);
        let mut p = t.parser("").expect("parser");
        for c in &chunks {
            if p.feed_bytes(c).is_err() {
                return Ok(());
            }
        }
        let _ = p.finalize();
    }

    #[test]
    fn arbitrary_templates_never_panic(template in template_strategy(), text in text_strategy()) {
        if let Ok(t) = Template::from_value(&template) {
            let _ = t.run("", None, &[&text]);
            let mut half = text.len() / 2;
            while !text.is_char_boundary(half) {
                half -= 1;
            }
            let _ = t.run("<ai>", None, &[&text[..half], &text[half..]]);
        }
    }
}

fn json_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-3i64..3).prop_map(Value::Int),
        prop::sample::select(PIECES).prop_map(|s| Value::Str(s.to_owned())),
        prop::sample::select(
            &[
                r"\s*<tool_call>",
                r"(?P<name>\w+)",
                r"(?=<)",
                r"\Z",
                "$",
                r"a|ab",
                r"(?<=\n)x",
                "(",
                r"[^<]*<",
                ".*?>",
                r"</call>\s*(?:</calls>)?",
                "{content}",
                "{name}",
                "text",
                "json",
                "xml-inline",
                "kv-lines",
                "int",
            ][..]
        )
        .prop_map(|s| Value::Str(s.to_owned())),
    ]
}

fn template_strategy() -> impl Strategy<Value = Value> {
    let key = prop::sample::select(
        &[
            "open",
            "open_pattern",
            "close",
            "close_pattern",
            "content",
            "content_args",
            "repeats",
            "join",
            "optional",
            "transform",
            "transform_each",
            "tag_pattern",
            "version",
            "fields",
            "start_anchor",
            "start_anchor_pattern",
            "defaults",
            "strip",
            "allow_non_json",
        ][..],
    );
    let leaf = json_leaf();
    let value = leaf.prop_recursive(3, 24, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::List),
            prop::collection::vec((key.clone(), inner), 0..5).prop_map(|kv| Value::Map(
                kv.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
            )),
        ]
    });
    let field = prop::collection::vec(
        (
            prop::sample::select(
                &[
                    "open",
                    "open_pattern",
                    "close",
                    "close_pattern",
                    "content",
                    "content_args",
                    "repeats",
                    "join",
                    "transform",
                    "transform_each",
                ][..],
            ),
            value.clone(),
        ),
        0..5,
    )
    .prop_map(|kv| Value::Map(kv.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()));
    (
        prop::collection::vec(
            (
                prop::sample::select(&["content", "thinking", "tool_calls"][..]),
                field,
            ),
            0..4,
        ),
        value,
    )
        .prop_map(|(fields, extra)| {
            let mut m = retort::Map::default();
            m.insert("start_anchor".into(), Value::Str("<ai>".into()));
            m.insert(
                "fields".into(),
                Value::Map(fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()),
            );
            if let Value::Map(x) = extra {
                for (k, v) in x.into_iter().take(1) {
                    m.insert(k, v);
                }
            }
            Value::Map(m)
        })
}
