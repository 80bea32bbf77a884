//! Chunks from compiled parsers, and borrowed chunks: for the samples of four
//! bundled models (`tests/conformance/cases/models.jsonl`), under several
//! chunkings, a `ChunkStream` over a compiled parser's engine gives the same
//! chunks as one over the run-time parser, and `feed_chunks` (borrowed)
//! gives the same chunks, serialised to the same JSON, as `feed` (owned).

use retort::models::{gpt_oss, qwen3, qwen3_coder, smollm3};
use retort_engine::{Machine, Parser, ParserOptions, Template, Value};
use retort_openai::{ChatCompletionChunk, ChunkStream, Options};
use std::path::Path;

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

/// The samples of `name`: (prefix, text, tools).
fn samples(name: &str) -> Vec<(String, String, Option<Value>)> {
    let text = std::fs::read_to_string(root().join("tests/conformance/cases/models.jsonl"))
        .expect("the model samples");
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let case: serde_json::Value = serde_json::from_str(line).expect("a JSON case");
        // Samples whose output does not parse (an error case) end the
        // stream with the error; only the valid ones are compared.
        if case["template"].as_str() != Some(name)
            || case["expected"]["whole"].get("message").is_none()
        {
            continue;
        }
        let tools = case
            .get("tools")
            .filter(|t| !t.is_null())
            .map(|t| retort_engine::py::json_loads(&t.to_string()).expect("tools JSON"));
        out.push((
            case["prefix"].as_str().unwrap_or_default().to_owned(),
            case["text"].as_str().unwrap_or_default().to_owned(),
            tools,
        ));
    }
    assert!(!out.is_empty(), "no samples of {name}");
    out
}

fn pieces(text: &str, n: usize) -> Vec<&str> {
    if n == 0 {
        return vec![text];
    }
    let bounds: Vec<usize> = text
        .char_indices()
        .map(|(i, _)| i)
        .chain([text.len()])
        .collect();
    bounds
        .chunks(n)
        .map(|c| c[0])
        .chain([text.len()])
        .collect::<Vec<_>>()
        .windows(2)
        .map(|w| &text[w[0]..w[1]])
        .filter(|p| !p.is_empty())
        .collect()
}

fn options(tools: &Option<Value>) -> Options {
    Options {
        tools: tools.clone(),
        ..Options::deterministic()
    }
}

/// The owned chunks of a stream, and the JSON lines of its borrowed chunks
/// (a second stream made by `make`).
fn run<'t, M: Machine<'t>>(
    make: &dyn Fn() -> ChunkStream<'t, M>,
    pieces: &[&str],
) -> (
    Vec<ChatCompletionChunk>,
    Vec<String>,
    Vec<ChatCompletionChunk>,
) {
    let mut owned = make();
    let mut chunks = Vec::new();
    for p in pieces {
        chunks.extend(owned.feed(p).expect("the sample streams"));
    }
    chunks.extend(owned.finalize(false).expect("the sample streams").0);
    let mut borrowed = make();
    let (mut lines, mut converted) = (Vec::new(), Vec::new());
    for p in pieces {
        for c in borrowed.feed_chunks(p).expect("the sample streams").iter() {
            lines.push(serde_json::to_string(&c).expect("a chunk serialises"));
            converted.push(c.to_owned());
        }
    }
    let (last, _) = borrowed.finalize_chunks(false).expect("the sample streams");
    for c in last.iter() {
        lines.push(serde_json::to_string(&c).expect("a chunk serialises"));
        converted.push(c.to_owned());
    }
    (chunks, lines, converted)
}

fn check<M: Machine<'static>>(
    name: &str,
    compiled: &dyn Fn(&str, Option<&Value>) -> Parser<'static, M>,
) {
    let json = std::fs::read_to_string(root().join(format!("templates/{name}.json")))
        .expect("a bundled template");
    let template: &'static Template =
        Box::leak(Box::new(Template::from_json(&json).expect("it loads")));
    let mut streams = 0;
    for (prefix, text, tools) in samples(name) {
        for n in [0, 1, 3, 7] {
            let cut = pieces(&text, n);
            let (runtime, runtime_lines, runtime_converted) = run(
                &|| ChunkStream::new(template, &prefix, options(&tools)).expect("a stream"),
                &cut,
            );
            let (from_compiled, compiled_lines, _) = run(
                &|| {
                    ChunkStream::with_parser(compiled(&prefix, tools.as_ref()), options(&tools))
                        .expect("a stream")
                },
                &cut,
            );
            assert_eq!(
                from_compiled, runtime,
                "{name}: compiled and run-time chunks, pieces of {n}"
            );
            assert_eq!(
                compiled_lines, runtime_lines,
                "{name}: borrowed chunks, pieces of {n}"
            );
            assert_eq!(
                runtime_converted, runtime,
                "{name}: borrowed and owned chunks, pieces of {n}"
            );
            let owned_lines: Vec<String> = runtime
                .iter()
                .map(|c| serde_json::to_string(c).expect("a chunk serialises"))
                .collect();
            assert_eq!(
                runtime_lines, owned_lines,
                "{name}: the same JSON, pieces of {n}"
            );
            streams += 1;
        }
    }
    assert!(streams >= 4, "{name}: {streams} streams");
}

#[test]
fn compiled_parsers_give_the_run_time_chunks_and_borrowed_chunks_the_owned_ones() {
    check("qwen3", &|prefix, tools| {
        qwen3::Parser::with_options(prefix, ParserOptions::default(), tools)
            .expect("the prompt parses")
            .into_engine()
    });
    check("gpt-oss", &|prefix, tools| {
        gpt_oss::Parser::with_options(prefix, ParserOptions::default(), tools)
            .expect("the prompt parses")
            .into_engine()
    });
    check("qwen3-coder", &|prefix, tools| {
        qwen3_coder::Parser::with_options(prefix, ParserOptions::default(), tools)
            .expect("the prompt parses")
            .into_engine()
    });
    check("smollm3", &|prefix, tools| {
        smollm3::Parser::with_options(prefix, ParserOptions::default(), tools)
            .expect("the prompt parses")
            .into_engine()
    });
}
