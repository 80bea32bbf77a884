//! `retort parse --openai`: the chunks the library gives for the same
//! chunking, one JSON object per line, ending with `finish_reason`.

use retort::Template;
use retort::openai::{ChatCompletionChunk, ChunkStream, Options};
use std::io::Write;
use std::process::{Command, Stdio};

const OUTPUT: &str = "<think>The user wants the weather.</think>Let me check.<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": 3}}\n</tool_call><|im_end|>";

fn cli(args: &[&str], input: &str) -> (String, i32) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_retort"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("input written");
    let out = child.wait_with_output().expect("the binary ends");
    (
        String::from_utf8(out.stdout).expect("UTF-8 output"),
        out.status.code().unwrap_or(-1),
    )
}

fn library(template: &Template, prefix: &str, chunk: usize) -> Vec<ChatCompletionChunk> {
    let mut s = ChunkStream::new(template, prefix, Options::deterministic()).expect("a stream");
    let chars: Vec<char> = OUTPUT.chars().collect();
    let mut out = Vec::new();
    for piece in chars.chunks(chunk) {
        out.extend(s.feed(&piece.iter().collect::<String>()).expect("feeds"));
    }
    out.extend(s.finalize(false).expect("finalizes").0);
    out
}

#[test]
fn the_cli_prints_the_library_chunks_for_each_chunking() {
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../templates/qwen3.json");
    let template = Template::from_json(&std::fs::read_to_string(file).unwrap()).unwrap();
    for chunk in [1, 4, 1000] {
        let (stdout, code) = cli(
            &[
                "parse",
                "-t",
                file,
                "--chunk",
                &chunk.to_string(),
                "--openai",
            ],
            OUTPUT,
        );
        assert_eq!(code, 0);
        let got: Vec<ChatCompletionChunk> = stdout
            .lines()
            .map(|l| serde_json::from_str(l).expect("a chunk per line"))
            .collect();
        assert_eq!(got, library(&template, "", chunk), "--chunk {chunk}");
        let last = got.last().expect("chunks");
        assert_eq!(
            serde_json::to_value(last.choices[0].finish_reason).unwrap(),
            "tool_calls"
        );
        let args: String = got
            .iter()
            .flat_map(|c| c.choices[0].delta.tool_calls.iter().flatten())
            .filter_map(|t| t.function.as_ref()?.arguments.clone())
            .collect();
        assert_eq!(args, r#"{"city": "Paris", "days": 3}"#);
    }
}

#[test]
fn bad_output_is_an_error_with_exit_code_1() {
    let (stdout, code) = cli(
        &["parse", "-t", "qwen3", "--openai"],
        "<tool_call>{not json</tool_call>",
    );
    assert_eq!(code, 1, "{stdout}");
}
