//! Snapshots of the generated code, small enough to review: per template,
//! the machine — the parser's states compiled in (see `retort_codegen::machine`).
//! Real templates (SmolLM3, Qwen3-Coder, gpt-oss) and one small fixture per
//! feature: a literal-only template, a regex delimiter with a leading loop,
//! captures, a lookbehind. A change to the generator shows up here as a
//! reviewable change.

use proc_macro2::TokenStream;
use quote::quote;
use retort::Template;
use std::path::Path;

fn machine_of(json: &str) -> String {
    let t = Template::from_json(json).expect("the template loads");
    let tokens: TokenStream =
        retort_codegen::machine::generate(&t, &quote!(__rt), quote!(template()));
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

/// Literal delimiters only: every state is searched by generated code.
#[test]
fn literal_only() {
    insta::assert_snapshot!(machine_of(
        r#"{"start_anchor": "<|assistant|>", "fields": {"reasoning_content": {"open": "<think>", "close": "</think>"},
                       "content": {},
                       "tool_calls": {"open": ["<tool_call>", "<call>"], "close": "</tool_call>",
                                      "content": "json", "repeats": true}}}"#
    ));
}

/// A regex delimiter with a leading loop (`\s*`): its state keeps the
/// automaton scanner, with a generated quick-path test.
#[test]
fn regex_delimiter() {
    insta::assert_snapshot!(machine_of(
        r#"{"start_anchor": "<|assistant|>", "fields": {"content": {},
                       "tool_calls": {"open_pattern": "\\s*<tool_call>", "close_pattern": "</tool_call>\\s*",
                                      "content": "json", "repeats": true}}}"#
    ));
}

/// Captures in an opening pattern (the tool's name).
#[test]
fn captures() {
    insta::assert_snapshot!(machine_of(
        r#"{"start_anchor": "<|assistant|>", "fields": {"content": {},
                       "tool_calls": {"open_pattern": "<call name=\"(?P<name>\\w+)\">", "close": "</call>",
                                      "content": "json", "repeats": true, "transform": "{name: name, arguments: @}"}}}"#
    ));
}

/// A lookbehind guarding a delimiter (a lookbehind tracker runs over the
/// text; the state is not a literal one).
#[test]
fn lookbehind() {
    insta::assert_snapshot!(machine_of(
        r#"{"start_anchor": "<|assistant|>", "fields": {"content": {}, "answer": {"open_pattern": "(?<=\\n)Answer:", "close": "<end>"}}}"#
    ));
}

#[test]
fn generation_is_deterministic() {
    assert_eq!(bundled("qwen3-coder.json"), bundled("qwen3-coder.json"));
}
