//! Text after the end-of-turn marker never replaces the message, in the CLI
//! and through `--openai`: the README's own "Before" example, saved the way
//! an editor saves it (with a final newline), parses to its "After".

use std::path::Path;
mod common;
use common::retort;

/// The first fenced block of `lang` after the line `marker` in the README.
fn readme_block(marker: &str, lang: &str) -> String {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md"))
            .expect("the README");
    let after = &readme[readme.find(marker).expect("the marker")..];
    let fence = format!("```{lang}\n");
    let start = after.find(&fence).expect("a fenced block") + fence.len();
    let len = after[start..].find("```").expect("the block ends");
    after[start..start + len].to_owned()
}

#[test]
fn the_readme_example_saved_by_an_editor_parses_to_its_after() {
    // The block ends with the newline an editor writes after the last line.
    let before = readme_block("Before —", "text");
    assert!(before.ends_with("<|im_end|>\n"), "{before:?}");
    let after: serde_json::Value =
        serde_json::from_str(&readme_block("After —", "json")).expect("the README's JSON");
    let dir = tempfile::tempdir().expect("a scratch directory");
    let file = dir.path().join("out.txt");
    std::fs::write(&file, &before).expect("writable");
    let (out, err, code) = retort(&["parse", "qwen3", &file.display().to_string()], "");
    assert_eq!(code, 0, "{err}");
    let got: serde_json::Value = serde_json::from_str(&out).expect("a JSON message");
    assert_eq!(got, after);
    assert!(err.is_empty(), "no warning: nothing was replaced: {err}");
}

#[test]
fn a_trailing_newline_keeps_the_answer_and_ends_the_openai_stream() {
    let (out, err, code) = retort(&["parse", "qwen3"], "Hello.<|im_end|>\n");
    assert_eq!(
        (code, out.trim()),
        (0, r#"{"role": "assistant", "content": "Hello."}"#),
        "{err}"
    );
    let (out, err, code) = retort(&["parse", "qwen3", "--openai"], "Hello.<|im_end|>\n");
    assert_eq!(code, 0, "{err}");
    let last: serde_json::Value =
        serde_json::from_str(out.lines().last().expect("chunks")).expect("a chunk");
    assert_eq!(last["choices"][0]["finish_reason"], "stop");
    assert!(out.contains(r#""content":"Hello.""#), "{out}");
}

#[test]
fn a_replaced_value_is_a_warning_on_stderr() {
    // Two reasoning blocks: the reference keeps the second.
    let (out, err, code) = retort(
        &["parse", "qwen3"],
        "<think>a</think><think>b</think>Hi.<|im_end|>",
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(r#""reasoning_content": "b""#), "{out}");
    assert!(
        err.contains("`reasoning_content` was written again"),
        "{err}"
    );
}

/// A model that runs on past its end-of-turn marker: the answer stays, and
/// stderr says what followed the end of the turn (a lone newline is not
/// worth a warning).
#[test]
fn text_after_the_end_of_the_turn_is_a_warning_on_stderr() {
    let (out, err, code) = retort(
        &["parse", "qwen3"],
        "Hello.<|im_end|>\n<|im_start|>user\nAnd tomorrow?",
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("\"Hello.\""), "{out}");
    assert!(
        err.contains("31 bytes at byte 16 follow the end of the turn")
            && err.contains("<|im_start|>user"),
        "{err}"
    );
    let (_, err, _) = retort(&["parse", "qwen3"], "Hello.<|im_end|>\n");
    assert!(!err.contains("end of the turn"), "{err}");
}
