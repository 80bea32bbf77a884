//! Replays conformance-style cases through [`retort_openai::ChunkStream`]
//! for the official-client check (`tools/openai_check.py`).
//!
//! Reads one JSON case per line on stdin (`template`: a bundled name looked
//! up in the `--templates DIR` directories, or an inline template; `prefix`,
//! `text`, optional `tools` and `chunkings`) and prints one line per case:
//! `{"id", "message", "runs": [{"pieces": N, "chunks": [...]}, ...]}` with
//! the non-streaming message and, in both text modes (`stream`, `exact`),
//! the chunks of each chunking (the whole text, pieces of 1, 3 and 7
//! characters, then the case's own chunkings) or the stream's error; or
//! `{"id", "error"}` when the case does not parse. A case may name its own
//! `template_dirs`.

use retort_engine::Template;
use retort_engine::py::json_loads;
use retort_openai::{ChunkStream, Options, TextMode};
use std::io::{BufRead, Write};
use std::path::PathBuf;

fn template_of(case: &serde_json::Value, dirs: &[PathBuf]) -> Result<Template, String> {
    match &case["template"] {
        serde_json::Value::String(name) => {
            let file = dirs
                .iter()
                .map(|d| d.join(format!("{name}.json")))
                .find(|p| p.exists())
                .ok_or_else(|| format!("no template '{name}' in {dirs:?}"))?;
            let text =
                std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
            Template::from_json(&text).map_err(|e| e.to_string())
        }
        inline => Template::from_json(&inline.to_string()).map_err(|e| e.to_string()),
    }
}

fn pieces_of(text: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(n).map(|c| c.iter().collect()).collect()
}

fn run<'t>(
    template: &'t Template,
    case: &serde_json::Value,
    pieces: &[String],
    options: &Options,
) -> Result<(Vec<serde_json::Value>, ChunkStream<'t>), String> {
    let prefix = case["prefix"].as_str().unwrap_or("");
    let mut stream =
        ChunkStream::new(template, prefix, options.clone()).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for p in pieces {
        for c in stream.feed(p).map_err(|e| e.to_string())? {
            out.push(serde_json::to_value(c).map_err(|e| e.to_string())?);
        }
    }
    let (last, _) = stream.finalize(false).map_err(|e| e.to_string())?;
    for c in last {
        out.push(serde_json::to_value(c).map_err(|e| e.to_string())?);
    }
    Ok((out, stream))
}

fn one(line: &str, dirs: &[PathBuf]) -> serde_json::Value {
    let case: serde_json::Value = match serde_json::from_str(line) {
        Ok(c) => c,
        Err(e) => return serde_json::json!({"error": format!("bad case: {e}")}),
    };
    let id = case["id"].clone();
    let fail = |e: String| serde_json::json!({"id": id, "error": e});
    let own_dirs: Vec<PathBuf>;
    let dirs = match case["template_dirs"].as_array() {
        Some(ds) => {
            own_dirs = ds
                .iter()
                .filter_map(|d| d.as_str().map(PathBuf::from))
                .collect();
            &own_dirs[..]
        }
        None => dirs,
    };
    let template = match template_of(&case, dirs) {
        Ok(t) => t,
        Err(e) => return fail(e),
    };
    let mut options = Options::deterministic();
    if let Some(tools) = case.get("tools").filter(|t| !t.is_null()) {
        match json_loads(&tools.to_string()) {
            Ok(v) => options.tools = Some(v),
            Err(e) => return fail(e.to_string()),
        }
    }
    let text = case["text"].as_str().unwrap_or("");
    let prefix = case["prefix"].as_str().unwrap_or("");
    let parsed = match &options.tools {
        Some(tools) => template.parser_with_tools(prefix, tools),
        None => template.parser(prefix),
    }
    .and_then(|mut p| {
        p.feed(text)?;
        Ok(p.finalize()?.0)
    });
    let message = match parsed {
        Ok(m) => retort_openai::message(&m, &options),
        Err(e) => return fail(e.to_string()),
    };
    let mut chunkings: Vec<Vec<String>> = vec![vec![text.to_owned()]];
    for n in [1, 3, 7] {
        chunkings.push(pieces_of(text, n));
    }
    if let Some(own) = case["chunkings"].as_array() {
        for c in own {
            let pieces: Vec<String> = c
                .as_array()
                .map(|ps| {
                    ps.iter()
                        .filter_map(|p| p.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default();
            chunkings.push(pieces);
        }
    }
    let mut runs = Vec::new();
    // Per mode, the layer's message for the whole text (what a `stream:
    // false` answer carries), and which values the plain parser replaced.
    let mut layer = serde_json::Map::new();
    let mut replaced = Vec::new();
    for (mode, text_mode) in [("stream", TextMode::Stream), ("exact", TextMode::Exact)] {
        let options = Options {
            text: text_mode,
            ..options.clone()
        };
        match run(&template, &case, &[text.to_owned()], &options) {
            Ok((_, stream)) => {
                layer.insert(mode.into(), serde_json::json!(stream.message()));
                replaced = stream.replaced().iter().map(|r| r.field.clone()).collect();
            }
            Err(e) => {
                layer.insert(mode.into(), serde_json::json!({"error": e}));
            }
        }
        for pieces in &chunkings {
            match run(&template, &case, pieces, &options) {
                Ok((chunks, _)) => runs.push(
                    serde_json::json!({"mode": mode, "pieces": pieces.len(), "chunks": chunks}),
                ),
                Err(e) => {
                    runs.push(serde_json::json!({"mode": mode, "pieces": pieces.len(), "error": e}))
                }
            }
        }
    }
    serde_json::json!({"id": id, "message": message, "layer": layer, "replaced": replaced, "runs": runs})
}

fn main() {
    let mut dirs = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match (a.as_str(), args.next()) {
            ("--templates", Some(d)) => dirs.push(PathBuf::from(d)),
            _ => {
                eprintln!("usage: retort-openai-chunks [--templates DIR]... < cases.jsonl");
                std::process::exit(2);
            }
        }
    }
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        if line.trim().is_empty() {
            continue;
        }
        let out = one(&line, &dirs);
        if writeln!(stdout, "{out}").is_err() {
            break;
        }
    }
}
