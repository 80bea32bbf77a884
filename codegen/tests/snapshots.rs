//! Snapshots of the generated code, small enough to review: per template,
//! the machine — the parser's states compiled in (see `retort_codegen::machine`).
//! Real templates (SmolLM3, Qwen3-Coder, gpt-oss) and one small fixture per
//! feature: a literal-only template, a regex delimiter with a leading loop,
//! captures, a lookbehind; and the code that builds tool calls in their
//! generated structs. A change to the generator shows up here as a
//! reviewable change.

use proc_macro2::TokenStream;
use quote::quote;
use retort::Template;
use std::path::Path;

fn machine_of(json: &str) -> String {
    let t = Template::from_json(json).expect("the template loads");
    // The statics the machine's automata hoist are the lowering's, not
    // part of the machine's text.
    let mut lowering = retort_codegen::lower::Lowering::new(quote!(__rt));
    let tokens: TokenStream =
        retort_codegen::machine::generate(&t, &quote!(__rt), quote!(template()), &mut lowering);
    retort_codegen::format(&tokens).expect("the generated code parses")
}

fn bundled(file: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../templates")
        .join(file);
    machine_of(&std::fs::read_to_string(&path).expect("the template is in the repository"))
}

#[test]
fn smollm3() {
    insta::assert_snapshot!(bundled("smollm3.json"));
}

#[test]
fn qwen3_coder() {
    insta::assert_snapshot!(bundled("qwen3-coder.json"));
}

#[test]
fn gpt_oss() {
    insta::assert_snapshot!(bundled("gpt-oss.json"));
}

/// One small template per feature, each with what its machine shows:
/// - `literal_only`: literal delimiters only, every state searched by
///   generated code;
/// - `regex_delimiter`: a pattern that is a leading loop and a literal
///   (`\s*<tool_call>`): its state searched by generated code (the match
///   moved back over the loop's run), with a generated quick-path test; the
///   close (`</tool_call>\s*`, a literal and a trailing loop) searched by
///   generated code too (a literal sequence: the text ending in the loop's
///   run holds from the literal);
/// - `captures`: captures in an opening pattern (the tool's name), whose
///   state keeps the automaton scanner with its automata as constants;
/// - `lookbehind`: a lookbehind guarding a delimiter (a tracker runs over
///   the text; the state is not a literal one).
const FIXTURES: &[(&str, &str)] = &[
    (
        "literal_only",
        r#"{"start_anchor": "<|assistant|>", "fields": {"reasoning_content": {"open": "<think>", "close": "</think>"},
                       "content": {},
                       "tool_calls": {"open": ["<tool_call>", "<call>"], "close": "</tool_call>",
                                      "content": "json", "repeats": true}}}"#,
    ),
    (
        "regex_delimiter",
        r#"{"start_anchor": "<|assistant|>", "fields": {"content": {},
                       "tool_calls": {"open_pattern": "\\s*<tool_call>", "close_pattern": "</tool_call>\\s*",
                                      "content": "json", "repeats": true}}}"#,
    ),
    (
        "captures",
        r#"{"start_anchor": "<|assistant|>", "fields": {"content": {},
                       "tool_calls": {"open_pattern": "<call name=\"(?P<name>\\w+)\">", "close": "</call>",
                                      "content": "json", "repeats": true, "transform": "{name: name, arguments: @}"}}}"#,
    ),
    (
        "lookbehind",
        r#"{"start_anchor": "<|assistant|>", "fields": {"content": {}, "answer": {"open_pattern": "(?<=\\n)Answer:", "close": "<end>"}}}"#,
    ),
];

#[test]
fn features() {
    for (name, json) in FIXTURES {
        insta::assert_snapshot!(*name, machine_of(json));
    }
}

#[test]
fn generation_is_deterministic() {
    assert_eq!(bundled("qwen3-coder.json"), bundled("qwen3-coder.json"));
}

/// The code that builds tool calls in their generated structs (see
/// `retort_codegen::regions`): gpt-oss's (a literal, a named group and
/// `{content}` in a nested struct), SmolLM3's (`{content}` as the whole
/// `function`), Llama 3.1's (`{content.name}`, `{content.parameters}`:
/// key paths moved out of the content once all are found) and Mistral
/// NeMo's (`transform_each`: each list element's entries moved into a
/// struct, once every element has them).
#[test]
fn typed_regions() {
    let mut out = String::new();
    for file in [
        "gpt-oss.json",
        "smollm3.json",
        "llama-3.1.json",
        "mistral-nemo.json",
    ] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../templates")
            .join(file);
        let t = Template::from_json(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let model = retort_codegen::types::derive(&t);
        let (tokens, _) = retort_codegen::regions::generate(&t, &model, &quote!(__rt));
        out.push_str(&format!("// {file}\n"));
        out.push_str(&retort_codegen::format(&tokens).expect("the generated code parses"));
    }
    insta::assert_snapshot!(out);
}
