//! llama.cpp's own chat-parser cases against the bundled templates: every
//! case of `../shared/llamacpp/cases.jsonl` (model outputs llama.cpp's
//! developers wrote for their parser tests, with the message they expect)
//! whose chat template a bundled template covers (the `llamacpp` lists of
//! `tests/models.json`) is parsed with the case's rendered prompt as the
//! prefix and its tool definitions, whole and streamed one character at a
//! time, by the run-time parser (lenient where the output is cut off, as
//! llama.cpp parses such an output as a partial message), with the reasoning
//! inline in the content where the case asks for llama.cpp's
//! `reasoning_format: none`.
//!
//! The comparison is llama.cpp's: content and reasoning equal with outer
//! whitespace ignored, tool calls in order with equal names and arguments
//! equal as JSON, ids only where both sides have one.
//!
//! Their expectations are llama.cpp's choices, not the reference's
//! semantics; the cases that do not pass are the table "llama.cpp cases that
//! do not pass" of `templates/README.md`, each with its reason. An unlisted
//! failure fails the test, and so does a listed case that passes. Streaming
//! must give the one-shot message for every case, listed or not.
//!
//! The data lives outside the repository; without it the test says so and
//! passes. `RETORT_SHARED` names another copy of the shared directory.

use retort::py::json_loads;
use retort::{ParserOptions, ReasoningFormat, Template, Value};
use retort_tests::root;
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// llama.cpp's chat template name (the file name without `.jinja`) -> the
/// bundled template that covers it, from tests/models.json.
fn covered() -> BTreeMap<String, String> {
    let path = root().join("tests/models.json");
    let doc: Json = serde_json::from_str(&std::fs::read_to_string(&path).expect("models.json"))
        .expect("tests/models.json is JSON");
    let mut out = BTreeMap::new();
    for m in doc["models"].as_array().expect("a list under \"models\"") {
        let template = m["template"].as_str().expect("template");
        for name in m["llamacpp"].as_array().into_iter().flatten() {
            let name = name.as_str().expect("a chat template name").to_owned();
            if let Some(other) = out.insert(name.clone(), template.to_owned()) {
                panic!("tests/models.json: {name} is covered by {other} and {template}");
            }
        }
    }
    out
}

/// Case id -> reason, from the README's table.
fn known_failures() -> BTreeMap<String, String> {
    let mut known = BTreeMap::new();
    for cells in retort_tests::readme_rows("llama.cpp cases that do not pass") {
        let reason = cells.last().cloned().unwrap_or_default();
        // One row may list several cases: `A#1`, `B#2`.
        for id in cells[0].split(',') {
            known.insert(id.trim().trim_matches('`').to_owned(), reason.clone());
        }
    }
    known
}

/// Python's `str.strip()` whitespace (llama.cpp trims the same ASCII set
/// and the cases hold no other).
fn strip(s: Option<&str>) -> &str {
    s.unwrap_or("")
        .trim_matches(|c: char| c.is_whitespace() || ('\x1c'..='\x1f').contains(&c))
}

/// A message's parts as llama.cpp compares them.
#[derive(Debug, PartialEq)]
struct Compared {
    content: String,
    reasoning: String,
    calls: Vec<(String, Json, Option<String>)>,
}

fn compared(message: &Json) -> Compared {
    let text = |k: &str| strip(message[k].as_str()).to_owned();
    let calls = message["tool_calls"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            let f = if c["function"].is_object() {
                &c["function"]
            } else {
                c
            };
            let args = match &f["arguments"] {
                // OpenAI's shape: arguments as JSON text.
                Json::String(s) => {
                    serde_json::from_str(s).unwrap_or_else(|_| Json::String(s.clone()))
                }
                other => other.clone(),
            };
            let name = f["name"].as_str().unwrap_or("").to_owned();
            (name, args, c["id"].as_str().map(str::to_owned))
        })
        .collect();
    Compared {
        content: text("content"),
        reasoning: text("reasoning_content"),
        calls,
    }
}

/// Why `got` is not `want` (llama.cpp's comparison), or `None`.
fn mismatch(got: &Compared, want: &Compared) -> Option<String> {
    if got.content != want.content {
        return Some(format!(
            "content: got {:?}, expected {:?}",
            got.content, want.content
        ));
    }
    if got.reasoning != want.reasoning {
        return Some(format!(
            "reasoning: got {:?}, expected {:?}",
            got.reasoning, want.reasoning
        ));
    }
    if got.calls.len() != want.calls.len() {
        return Some(format!(
            "tool calls: got {:?}, expected {:?}",
            got.calls, want.calls
        ));
    }
    for (i, (g, w)) in got.calls.iter().zip(&want.calls).enumerate() {
        let ids_differ = matches!((&g.2, &w.2), (Some(a), Some(b)) if a != b);
        if g.0 != w.0 || g.1 != w.1 || ids_differ {
            return Some(format!("tool_calls[{i}]: got {g:?}, expected {w:?}"));
        }
    }
    None
}

/// Parses `input` after `prompt`, in pieces of `chunk` characters (0: at
/// once); the message as JSON, or the error's text.
fn parse(
    template: &Template,
    prompt: &str,
    input: &str,
    tools: Option<&Value>,
    options: ParserOptions,
    chunk: usize,
) -> Result<Json, String> {
    let mut p = template
        .parser_with(prompt, options, tools)
        .map_err(|e| e.to_string())?;
    if chunk == 0 {
        p.feed(input).map_err(|e| e.to_string())?;
    } else {
        let mut rest = input;
        while !rest.is_empty() {
            let cut = rest
                .char_indices()
                .nth(chunk)
                .map_or(rest.len(), |(i, _)| i);
            p.feed(&rest[..cut]).map_err(|e| e.to_string())?;
            rest = &rest[cut..];
        }
    }
    let (message, _) = p.finalize().map_err(|e| e.to_string())?;
    Ok(serde_json::to_value(&message).expect("a message serialises"))
}

#[test]
fn llamacpp_cases_parse_to_their_messages_or_are_listed() {
    let shared =
        std::env::var_os("RETORT_SHARED").map_or_else(|| root().join("../shared"), PathBuf::from);
    let data = shared.join("llamacpp/cases.jsonl");
    let Ok(text) = std::fs::read_to_string(&data) else {
        eprintln!(
            "skipped: {} is not there (llama.cpp's cases live outside the repository)",
            data.display()
        );
        return;
    };
    let covered = covered();
    let known = known_failures();
    let mut templates: BTreeMap<String, Template> = BTreeMap::new();
    let (mut passed, mut listed, mut uncovered) = (0, 0, 0);
    let mut per_family: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut problems = Vec::new();
    let mut seen_ids = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let case: Json = serde_json::from_str(line).expect("a case is JSON");
        let id = case["id"].as_str().expect("id").to_owned();
        let chat = case["chat_template"].as_str().expect("chat_template");
        let Some(family) = covered.get(chat.trim_end_matches(".jinja")) else {
            uncovered += 1;
            continue;
        };
        seen_ids.push(id.clone());
        let template = templates.entry(family.clone()).or_insert_with(|| {
            let path = root().join("templates").join(format!("{family}.json"));
            Template::from_json(&std::fs::read_to_string(&path).expect("the template exists"))
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        });
        let tools = match case["tools"].as_array() {
            Some(t) if !t.is_empty() => {
                Some(json_loads(&case["tools"].to_string()).expect("tools are JSON"))
            }
            _ => None,
        };
        let lenient = case["options"]["is_partial"].as_bool().unwrap_or(false);
        // llama.cpp's `reasoning_format`: `none` keeps the reasoning inline
        // in the content (`ReasoningFormat::Inline`); the others split it.
        let format: ReasoningFormat = case["options"]["reasoning_format"]
            .as_str()
            .unwrap_or("auto")
            .parse()
            .unwrap_or_else(|e| panic!("{id}: {e}"));
        let options = ParserOptions::new()
            .lenient(lenient)
            .reasoning_format(format);
        let prompt = case["prompt"].as_str().expect("prompt");
        let input = case["input"].as_str().expect("input");
        let whole = parse(template, prompt, input, tools.as_ref(), options, 0);
        let streamed = parse(template, prompt, input, tools.as_ref(), options, 1);
        if whole != streamed {
            problems.push(format!(
                "{id} [{family}]: streamed one character at a time gives {streamed:?}, at once {whole:?}"
            ));
        }
        let why = match &whole {
            Ok(message) => mismatch(&compared(message), &compared(&case["expected"])),
            Err(e) => Some(format!("error: {e}")),
        };
        let entry = per_family.entry(family.clone()).or_default();
        match (why, known.get(&id)) {
            (None, None) => {
                passed += 1;
                entry.0 += 1;
            }
            (None, Some(_)) => problems.push(format!(
                "{id} [{family}] passes but templates/README.md lists it as failing"
            )),
            (Some(_), Some(_)) => {
                listed += 1;
                entry.1 += 1;
            }
            (Some(why), None) => {
                problems.push(format!("{id} [{family}]: {why}\n    input: {input:?}"))
            }
        }
    }
    let stale: Vec<_> = known.keys().filter(|k| !seen_ids.contains(k)).collect();
    for (family, (p, l)) in &per_family {
        eprintln!("{family}: {p} passed, {l} listed");
    }
    eprintln!(
        "{} cases of covered chat templates: {passed} passed, {listed} listed in templates/README.md; {uncovered} of chat templates no bundled template covers",
        passed + listed
    );
    assert!(
        stale.is_empty(),
        "templates/README.md lists unknown cases: {stale:?}"
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
