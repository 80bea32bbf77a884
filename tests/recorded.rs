//! Real model outputs against the bundled templates: every recorded output
//! of `../shared/research/model-formats.json` (test inputs of llama.cpp and
//! vLLM, with the message those projects assert) for a family a template in
//! `templates/` covers, parsed with the family's generation prompt as the
//! prefix, must give the message the recording implies: content and
//! reasoning equal with outer whitespace ignored (absent = empty), the same
//! tool calls in order with equal names, arguments equal as JSON, and ids
//! equal where the recording asserts one. An argument given as text also
//! matches the value it reads as JSON: the tag-delimited formats
//! (Qwen3-Coder, GLM, MiniMax, ...) give their values as text, typed only by
//! the tool definitions, and the recordings do not carry the definitions
//! their parsers were given.
//!
//! Which template and prompts cover a family is `tests/models.json`; the
//! examples that cannot pass, each with its reason, are the table
//! "Recorded examples that do not pass" of `templates/README.md` (the one
//! list; `tools/recorded_check.py` reads it too, to run the same check on the
//! reference). An unlisted failure fails the test, and so does a listed
//! example that passes: the list stays true.
//!
//! The data lives outside the repository; without it the test says so and
//! passes. `RETORT_SHARED` names another copy of the shared directory.
//! `RETORT_RECORDED_DUMP=FILE` writes each example's parsed message as a JSON
//! line (`{"template", "example", "message"}`), the format of
//! `tools/recorded_check.py --json`, to compare the two implementations.

use retort::{AssistantMessage, Template};
use retort_tests::root;
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// One bundled template and what it covers (an entry of tests/models.json).
struct Model {
    template: String,
    covers: Vec<String>,
    prompts: BTreeMap<String, String>,
    default: String,
    reasoning: Option<(String, String)>,
}

fn models() -> Vec<Model> {
    let path = root().join("tests/models.json");
    let doc: Json =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("tests/models.json"))
            .expect("tests/models.json is JSON");
    let strings = |v: &Json| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    doc["models"]
        .as_array()
        .expect("a list under \"models\"")
        .iter()
        .map(|m| {
            let reasoning = strings(&m["reasoning"]);
            Model {
                template: m["template"].as_str().expect("template").to_owned(),
                covers: strings(&m["covers"]),
                prompts: m["prompts"]
                    .as_object()
                    .expect("prompts")
                    .iter()
                    .map(|(k, v)| (k.clone(), v.as_str().expect("a prompt").to_owned()))
                    .collect(),
                default: m["default"].as_str().expect("default").to_owned(),
                reasoning: match reasoning.as_slice() {
                    [open, close] => Some((open.clone(), close.clone())),
                    _ => None,
                },
            }
        })
        .collect()
}

/// `(template, example number) -> reason`, from templates/README.md.
fn known_failures() -> BTreeMap<(String, usize), String> {
    let mut known = BTreeMap::new();
    for cells in retort_tests::readme_rows("Recorded examples that do not pass") {
        let Some((name, number)) = cells[0].strip_prefix('`').and_then(|c| c.split_once("` #"))
        else {
            continue;
        };
        let number: usize = number
            .parse()
            .expect("an example number in the README table");
        known.insert(
            (name.to_owned(), number),
            cells.get(1).cloned().unwrap_or_default(),
        );
    }
    known
}

/// The prompt a recording was made with (the same rule as
/// tools/recorded_check.py): where the raw text starts with the reasoning
/// opener the model wrote it, where it holds only the closer the prompt
/// opened it, otherwise the family's default prompt.
fn prompt_for<'a>(model: &'a Model, raw: &str) -> &'a str {
    let default = model.prompts[&model.default].as_str();
    let Some(open) = model.prompts.get("open") else {
        return default;
    };
    match &model.reasoning {
        Some((opener, _)) if raw.trim_start().starts_with(opener.as_str()) => {
            &model.prompts["plain"]
        }
        Some((_, closer)) if raw.contains(closer.as_str()) => open,
        _ => default,
    }
}

/// Python's `str.strip()` whitespace, which the reference and llama.cpp use.
fn strip(s: Option<&str>) -> &str {
    s.unwrap_or("")
        .trim_matches(|c: char| c.is_whitespace() || ('\x1c'..='\x1f').contains(&c))
}

/// Why the parsed message is not the one the recording implies, if it is not.
fn mismatch(got: &retort::Map, expected: &Json) -> Option<String> {
    for (key, ours) in [
        ("content", got.content()),
        ("reasoning_content", got.reasoning()),
    ] {
        let want = expected[key].as_str();
        if strip(ours) != strip(want) {
            return Some(format!("{key}: got {ours:?}, expected {want:?}"));
        }
    }
    let calls = got.tool_calls();
    let want = expected["tool_calls"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if calls.len() != want.len() {
        return Some(format!(
            "{} tool calls, expected {}: {calls:?}",
            calls.len(),
            want.len()
        ));
    }
    for (i, (call, want)) in calls.iter().zip(&want).enumerate() {
        if Some(call.name.as_str()) != want["name"].as_str() {
            return Some(format!(
                "tool_calls[{i}].name: got {:?}, expected {}",
                call.name, want["name"]
            ));
        }
        let args = serde_json::to_value(&call.arguments).expect("a message serialises");
        if !args_match(&args, &want["arguments"]) {
            return Some(format!(
                "tool_calls[{i}].arguments: got {args}, expected {}",
                want["arguments"]
            ));
        }
        if let Some(id) = want.get("id")
            && call.id.as_deref() != id.as_str()
        {
            return Some(format!(
                "tool_calls[{i}].id: got {:?}, expected {id}",
                call.id
            ));
        }
    }
    None
}

#[test]
fn recorded_outputs_parse_to_the_recorded_messages() {
    let shared =
        std::env::var_os("RETORT_SHARED").map_or_else(|| root().join("../shared"), PathBuf::from);
    let data = shared.join("research/model-formats.json");
    let Ok(text) = std::fs::read_to_string(&data) else {
        eprintln!(
            "skipped: {} is not there (the recorded outputs live outside the repository)",
            data.display()
        );
        return;
    };
    let families: Json = serde_json::from_str(&text).expect("model-formats.json is JSON");
    let families: BTreeMap<&str, &Json> = families
        .as_array()
        .expect("a list of families")
        .iter()
        .map(|f| (f["family"].as_str().expect("a family name"), f))
        .collect();
    let known = known_failures();
    let mut seen = 0;
    let mut passed = 0;
    let mut problems = Vec::new();
    let mut listed = Vec::new();
    let mut dump = String::new();
    for model in models() {
        let path = root()
            .join("templates")
            .join(format!("{}.json", model.template));
        let template =
            Template::from_json(&std::fs::read_to_string(&path).expect("the template exists"))
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for family in &model.covers {
            let record = families.get(family.as_str()).unwrap_or_else(|| {
                panic!("tests/models.json names '{family}', which the data does not have")
            });
            let examples = record["examples"].as_array().expect("examples");
            for (i, example) in examples.iter().enumerate() {
                seen += 1;
                let key = (model.template.clone(), i + 1);
                let raw = example["raw"].as_str().expect("raw text");
                let parsed = template.parse(raw, prompt_for(&model, raw));
                let message = match &parsed {
                    Ok(m) => serde_json::to_value(m).expect("a message serialises"),
                    Err(e) => serde_json::json!({"error": e.to_string()}),
                };
                let line = serde_json::json!({"template": &model.template, "example": i + 1, "message": message});
                dump.push_str(&format!("{line}\n"));
                let why = match (parsed, &example["expected"]) {
                    (_, Json::Null) => Some("the recording asserts no message".to_owned()),
                    (Ok(message), expected) => mismatch(&message, expected),
                    (Err(e), _) => Some(format!("error: {e}")),
                };
                match (why, known.get(&key)) {
                    (None, None) => passed += 1,
                    (None, Some(_)) => problems.push(format!(
                        "{} #{} passes but templates/README.md lists it as failing",
                        key.0, key.1
                    )),
                    (Some(_), Some(_)) => listed.push(key),
                    (Some(why), None) => problems.push(format!(
                        "{} #{} ({family}): {why}\n    raw: {raw:?}",
                        key.0, key.1
                    )),
                }
            }
        }
    }
    if let Some(path) = std::env::var_os("RETORT_RECORDED_DUMP") {
        std::fs::write(&path, dump).expect("the dump file is writable");
    }
    let stale: Vec<_> = known
        .keys()
        .filter(|k| {
            !listed.contains(k)
                && !problems
                    .iter()
                    .any(|p| p.starts_with(&format!("{} #{} ", k.0, k.1)))
        })
        .collect();
    eprintln!(
        "{seen} recorded examples: {passed} passed, {} listed in templates/README.md, {} unexpected",
        listed.len(),
        problems.len()
    );
    assert!(
        stale.is_empty(),
        "templates/README.md lists examples that do not exist: {stale:?}"
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Arguments equal as JSON, where a text value of an argument also matches
/// the value it reads as (see the module's docs).
fn args_match(got: &Json, want: &Json) -> bool {
    let value_match = |g: &Json, w: &Json| match g {
        Json::String(text) if !w.is_string() => {
            serde_json::from_str::<Json>(text).is_ok_and(|v| &v == w)
        }
        _ => g == w,
    };
    match (got, want) {
        (Json::Object(g), Json::Object(w)) => {
            g.len() == w.len()
                && g.iter()
                    .all(|(k, v)| w.get(k).is_some_and(|wv| value_match(v, wv)))
        }
        _ => got == want,
    }
}
