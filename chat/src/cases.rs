//! The case format: JSON lines in, JSON lines out, the way the reference
//! runner (`tools/reference/render.py`) reads and writes them.
//!
//! Input line: `{"id", "chat_template": TEXT, "messages": [...],
//! "tools": [...]|null, "documents": [...]|null, "add_generation_prompt":
//! bool, "continue_final_message": bool|"FIELD", "kwargs": {...}}`.
//! Output line, in input order: `{"id", "rendered": TEXT, "generation":
//! [[start, end], ...]}` (Python character offsets) or `{"id", "error":
//! {"type": PYTHON_CLASS, "message": TEXT}}`. `strftime_now` reads
//! 2026-01-01 00:00:00.

use std::collections::HashMap;
use std::io::{self, BufRead, Write};
use std::sync::Arc;

use serde_json::{Map, Value as Json, json};

use crate::input::{ContinueFinal, RenderInput};
use crate::strftime::DateTime;
use crate::template::ChatTemplate;
use crate::{ChatError, Limits};

/// The instant `strftime_now` formats in cases.
pub const CASES_NOW: DateTime = DateTime {
    year: 2026,
    month: 1,
    day: 1,
    hour: 0,
    minute: 0,
    second: 0,
    microsecond: 0,
};

/// How many distinct templates [`render_cases`] keeps compiled.
const CACHE: usize = 256;

/// Renders every case line of `input`, writing one result line per case to
/// `output`, in order. Blank lines are skipped; a line that is not a case
/// gets an error result (`"id": null` when it has none). Only I/O errors
/// stop it.
pub fn render_cases(input: impl BufRead, mut output: impl Write) -> io::Result<()> {
    let mut cache: HashMap<String, Result<Arc<ChatTemplate>, ChatError>> = HashMap::new();
    for line in input.lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let result = render_case_line(&line, &mut cache);
        serde_json::to_writer(&mut output, &result)?;
        output.write_all(b"\n")?;
    }
    output.flush()
}

/// The result of one case line (see the module docs).
pub fn render_case(line: &str) -> Json {
    render_case_line(line, &mut HashMap::new())
}

fn error(id: &Json, ty: &str, message: &str) -> Json {
    json!({"id": id, "error": {"type": ty, "message": message}})
}

fn render_case_line(
    line: &str,
    cache: &mut HashMap<String, Result<Arc<ChatTemplate>, ChatError>>,
) -> Json {
    let case: Json = match serde_json::from_str(line) {
        Ok(c) => c,
        Err(e) => return error(&Json::Null, "JSONDecodeError", &e.to_string()),
    };
    let id = case.get("id").cloned().unwrap_or(Json::Null);
    let Some(source) = case.get("chat_template").and_then(Json::as_str) else {
        return error(&id, "TypeError", "chat_template must be a string");
    };
    let template = match cache.get(source) {
        Some(t) => t.clone(),
        None => {
            let t = ChatTemplate::with_limits(source, Limits::default()).map(Arc::new);
            if cache.len() >= CACHE {
                cache.clear();
            }
            cache.insert(source.to_owned(), t.clone());
            t
        }
    };
    let template = match template {
        Ok(t) => t,
        Err(e) => return error(&id, e.python_type(), e.message()),
    };
    let input = match case_input(&case) {
        Ok(i) => i,
        Err((ty, message)) => return error(&id, ty, &message),
    };
    match template.render(&input) {
        Ok(r) => {
            let spans: Vec<Json> = r
                .generation
                .iter()
                .map(|g| json!([g.chars.start, g.chars.end]))
                .collect();
            json!({"id": id, "rendered": r.text, "generation": spans})
        }
        Err(e) => error(&id, e.python_type(), e.message()),
    }
}

/// Python's `for item in value` over JSON: a list's items, an object's keys,
/// a string's characters; `TypeError` for the rest.
fn py_items(value: &Json) -> Result<Vec<Json>, (&'static str, String)> {
    match value {
        Json::Array(a) => Ok(a.clone()),
        Json::Object(o) => Ok(o.keys().map(|k| Json::String(k.clone())).collect()),
        Json::String(s) => Ok(s.chars().map(|c| Json::String(c.to_string())).collect()),
        Json::Null => Err(("TypeError", "'NoneType' object is not iterable".to_owned())),
        Json::Bool(_) => Err(("TypeError", "'bool' object is not iterable".to_owned())),
        Json::Number(n) => Err((
            "TypeError",
            format!(
                "'{}' object is not iterable",
                if n.is_f64() { "float" } else { "int" }
            ),
        )),
    }
}

fn case_input(case: &Json) -> Result<RenderInput, (&'static str, String)> {
    let optional = |key: &str| -> Result<Option<Vec<Json>>, (&'static str, String)> {
        match case.get(key) {
            None | Some(Json::Null) => Ok(None),
            Some(v) => py_items(v).map(Some),
        }
    };
    // render.py: `case.get("messages", [])` (an explicit null is iterated)
    let messages = match case.get("messages") {
        None => Vec::new(),
        Some(v) => py_items(v)?,
    };
    let kwargs = match case.get("kwargs") {
        None | Some(Json::Null) => Map::new(),
        Some(Json::Object(o)) => o.clone(),
        Some(_) => return Err(("TypeError", "kwargs must be a mapping".to_owned())),
    };
    Ok(RenderInput {
        messages,
        tools: optional("tools")?,
        documents: optional("documents")?,
        add_generation_prompt: case.get("add_generation_prompt").is_some_and(truthy),
        continue_final_message: case
            .get("continue_final_message")
            .map_or(ContinueFinal::No, ContinueFinal::from_json),
        kwargs,
        now: Some(CASES_NOW),
        entry: crate::Entry::RenderJinjaTemplate,
    })
}

/// Python truthiness of a JSON value.
fn truthy(v: &Json) -> bool {
    match v {
        Json::Null => false,
        Json::Bool(b) => *b,
        Json::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Json::String(s) => !s.is_empty(),
        Json::Array(a) => !a.is_empty(),
        Json::Object(o) => !o.is_empty(),
    }
}
