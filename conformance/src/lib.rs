//! The conformance exchange format: running cases and comparing results.
//!
//! This harness is its own crate, beside the engine rather than in it:
//! applications that depend on `retort` do not carry it. The `retort
//! conformance` command, the workspace tests, the compiled runner and the
//! fuzz targets use it.
//!
//! A *case* names a template (or carries one inline), a prompt, a generation
//! and chunkings of it; its `expected` result comes from the reference. A
//! *result* is what an implementation under test produced: the whole-text run
//! and one run per chunking. This module runs cases through retort and
//! compares results with expectations exactly as `tools/compare.py`
//! does, so that the test suite and the `retort conformance` command agree
//! with it.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

use retort_engine::event::{OwnedEvent, coalesce};
use retort_engine::py::json_loads_with_depth;
use retort_engine::template::{Template, TemplateError};
use retort_engine::value::{Map, NonFinite, Value};
use retort_engine::{ParseError, Parser};

/// Something that can parse a generation: the run-time [`Template`], or a
/// compiled parser.
pub trait Runner {
    /// Runs one generation fed in `chunks`, returning the run in the result
    /// format (`{"initial_events", "events", "message"}` or
    /// `{"error", "at"}`).
    fn run(&self, prefix: &str, tools: Option<&Value>, chunks: &[&str]) -> Value;
}

fn s(v: &str) -> Value {
    Value::Str(v.to_owned())
}

/// The result format of an error: `{"kind", "type", "message"}`.
pub fn error_value(kind: &str, message: &str) -> Value {
    let mut m = Map::default();
    m.insert("kind".into(), s(kind));
    m.insert("type".into(), s("ValueError"));
    m.insert("message".into(), s(message));
    Value::Map(m)
}

/// Events in the result format, with adjacent chunks merged.
pub fn events_value(events: &[OwnedEvent]) -> Value {
    Value::List(
        coalesce(events.iter().map(OwnedEvent::as_event))
            .into_iter()
            .map(|e| match e {
                OwnedEvent::RegionOpen { field } => {
                    let mut m = Map::default();
                    m.insert("type".into(), s("region_open"));
                    m.insert("field".into(), Value::Str(field));
                    Value::Map(m)
                }
                OwnedEvent::RegionChunk { field, text, dirty } => {
                    let mut m = Map::default();
                    m.insert("type".into(), s("region_chunk"));
                    m.insert("field".into(), Value::Str(field));
                    m.insert("text".into(), Value::Str(text));
                    m.insert("dirty".into(), Value::Bool(dirty));
                    Value::Map(m)
                }
                OwnedEvent::RegionClose { field, value } => {
                    let mut m = Map::default();
                    m.insert("type".into(), s("region_close"));
                    m.insert("field".into(), Value::Str(field));
                    m.insert("value".into(), value);
                    Value::Map(m)
                }
                OwnedEvent::RegionMalformed { field, raw, error } => {
                    let mut m = Map::default();
                    m.insert("type".into(), s("region_malformed"));
                    m.insert("field".into(), Value::Str(field));
                    m.insert("raw".into(), Value::Str(raw));
                    m.insert("error".into(), Value::Str(error));
                    Value::Map(m)
                }
                // An event kind this harness does not know yet: written so
                // that any comparison with the reference's events fails
                // rather than the event being dropped.
                other => {
                    let mut m = Map::default();
                    m.insert("type".into(), s("unknown_event"));
                    m.insert("debug".into(), Value::Str(format!("{other:?}")));
                    Value::Map(m)
                }
            })
            .collect(),
    )
}

/// A failed run in the result format.
pub fn run_error(e: &ParseError, at: &str, initial: Option<&[OwnedEvent]>) -> Value {
    let mut m = Map::default();
    m.insert("error".into(), error_value("parse", &e.to_string()));
    m.insert("at".into(), s(at));
    if let Some(initial) = initial {
        m.insert("initial_events".into(), events_value(initial));
    }
    Value::Map(m)
}

/// A successful run in the result format.
pub fn run_ok(initial: &[OwnedEvent], events: &[OwnedEvent], message: Map) -> Value {
    let mut m = Map::default();
    m.insert("initial_events".into(), events_value(initial));
    m.insert("events".into(), events_value(events));
    m.insert("message".into(), Value::Map(message));
    Value::Map(m)
}

/// A parser as a conformance run drives it: the run-time [`Parser`] and
/// the parsers generated for compiled templates.
pub trait Session {
    /// The events the prompt produced.
    fn initial(&self) -> Vec<OwnedEvent>;
    /// Feeds a piece and appends its events to `out`.
    fn feed_into(&mut self, piece: &str, out: &mut Vec<OwnedEvent>) -> Result<(), ParseError>;
    /// Ends the run: the message as the reference's dict, and the last
    /// events appended to `out`.
    fn finish_into(&mut self, out: &mut Vec<OwnedEvent>) -> Result<Map, ParseError>;
}

impl Session for Parser<'_> {
    fn initial(&self) -> Vec<OwnedEvent> {
        self.initial_events().to_vec()
    }
    fn feed_into(&mut self, piece: &str, out: &mut Vec<OwnedEvent>) -> Result<(), ParseError> {
        out.extend(self.feed(piece)?.iter().map(|e| e.to_owned_event()));
        Ok(())
    }
    fn finish_into(&mut self, out: &mut Vec<OwnedEvent>) -> Result<Map, ParseError> {
        let (message, events) = self.finalize()?;
        out.extend(events.iter().map(|e| e.to_owned_event()));
        Ok(message)
    }
}

/// Runs one generation, fed in `chunks`, through a freshly made parser and
/// returns it in the result format.
pub fn run_session<S: Session>(parser: Result<S, ParseError>, chunks: &[&str]) -> Value {
    let mut p = match parser {
        Ok(p) => p,
        Err(e) => return run_error(&e, "init", None),
    };
    let initial = p.initial();
    let mut events: Vec<OwnedEvent> = Vec::new();
    for piece in chunks {
        if let Err(e) = p.feed_into(piece, &mut events) {
            return run_error(&e, "feed", Some(&initial));
        }
    }
    match p.finish_into(&mut events) {
        Ok(message) => run_ok(&initial, &events, message),
        Err(e) => run_error(&e, "finalize", Some(&initial)),
    }
}

impl Runner for Template {
    fn run(&self, prefix: &str, tools: Option<&Value>, chunks: &[&str]) -> Value {
        let parser = match tools {
            Some(tools) => self.parser_with_tools(prefix, tools),
            None => self.parser(prefix),
        };
        run_session(parser, chunks)
    }
}

/// A field of a case.
pub fn field<'a>(case: &'a Value, key: &str) -> Option<&'a Value> {
    case.as_map().and_then(|m| m.get(key))
}

/// Runs a case with the run-time template loader; `load` reads a named
/// template's JSON text.
pub fn run_case(
    case: &Value,
    load: &dyn Fn(&str) -> Result<String, String>,
) -> Result<Value, String> {
    let template = match field(case, "template") {
        Some(Value::Str(name)) => Template::from_json(&load(name)?),
        Some(v @ Value::Map(_)) => Template::from_value(v),
        _ => return Err("case without a template".into()),
    };
    Ok(match template {
        Ok(t) => run_case_with(case, &t),
        Err(e) => template_error_result(case, &e),
    })
}

/// The result of a case whose template was rejected.
pub fn template_error_result(case: &Value, e: &TemplateError) -> Value {
    let mut m = Map::default();
    m.insert(
        "id".into(),
        field(case, "id").cloned().unwrap_or(Value::Null),
    );
    m.insert(
        "template_error".into(),
        error_value("template", &e.to_string()),
    );
    Value::Map(m)
}

/// Runs a case with a given runner: the whole text, then each chunking.
pub fn run_case_with(case: &Value, runner: &dyn Runner) -> Value {
    let text = field(case, "text").and_then(Value::as_str).unwrap_or("");
    let prefix = field(case, "prefix").and_then(Value::as_str).unwrap_or("");
    let tools = field(case, "tools").filter(|v| !matches!(v, Value::Null));
    let mut m = Map::default();
    m.insert(
        "id".into(),
        field(case, "id").cloned().unwrap_or(Value::Null),
    );
    m.insert("whole".into(), runner.run(prefix, tools, &[text]));
    if let Some(Value::List(chunkings)) = field(case, "chunkings") {
        let streams = chunkings
            .iter()
            .map(|chunks| {
                let pieces: Vec<&str> = chunks
                    .as_list()
                    .unwrap_or(&[])
                    .iter()
                    .filter_map(Value::as_str)
                    .collect();
                runner.run(prefix, tools, &pieces)
            })
            .collect();
        m.insert("streams".into(), Value::List(streams));
    }
    Value::Map(m)
}

/// Writes a result line (values that JSON cannot hold are tagged).
pub fn to_line(result: &Value) -> String {
    let mut out = String::new();
    result.write_json(&mut out, NonFinite::Tagged);
    out
}

/// Normalises a value the way a result line reads back: tagged floats and big
/// integers, so that a freshly produced result compares with a stored one.
pub fn normalise(v: &Value) -> Value {
    // Vectors hold values as deep as the reference allowed: no depth limit here.
    json_loads_with_depth(&to_line(v), usize::MAX).unwrap_or(Value::Null)
}

/// Deep equality that keeps bool, int and float apart (as `compare.py`).
pub fn strict_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Map(x), Value::Map(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| strict_equal(v, w)))
        }
        (Value::List(x), Value::List(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(v, w)| strict_equal(v, w))
        }
        // Results are compared as Python values written out: NaN is NaN,
        // and 0.0 is not -0.0.
        (Value::Float(x), Value::Float(y)) => {
            x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan())
        }
        _ => std::mem::discriminant(a) == std::mem::discriminant(b) && a == b,
    }
}

fn coalesced(v: Option<&Value>) -> Vec<Value> {
    let is_chunk = |e: &Value| field(e, "type").and_then(Value::as_str) == Some("region_chunk");
    let mut out: Vec<Value> = Vec::new();
    for ev in v.and_then(Value::as_list).unwrap_or(&[]) {
        if let Some(Value::Map(last)) = out.last_mut()
            && is_chunk(ev)
            && last.get("type").and_then(Value::as_str) == Some("region_chunk")
            && last.get("field") == field(ev, "field")
            && last.get("dirty") == field(ev, "dirty")
        {
            let more = field(ev, "text").and_then(Value::as_str).unwrap_or("");
            if let Some(Value::Str(text)) = last.get_mut("text") {
                text.push_str(more);
            }
            continue;
        }
        out.push(ev.clone());
    }
    out
}

fn compare_run(expected: &Value, actual: &Value, at: &str) -> Vec<String> {
    let exp_err = field(expected, "error").is_some();
    let act_err = field(actual, "error");
    if exp_err {
        return if act_err.is_some() {
            Vec::new()
        } else {
            vec![format!("{at}: expected an error, got a message")]
        };
    }
    if let Some(e) = act_err {
        return vec![format!("{at}: unexpected error {}", to_line(e))];
    }
    let mut problems = Vec::new();
    let (em, am) = (field(expected, "message"), field(actual, "message"));
    if !matches!((em, am), (Some(x), Some(y)) if strict_equal(x, y)) {
        problems.push(format!(
            "{at}: message differs\n    expected {}\n    actual   {}",
            em.map(to_line).unwrap_or_default(),
            am.map(to_line).unwrap_or_default()
        ));
    }
    for key in ["initial_events", "events"] {
        let (e, a) = (
            coalesced(field(expected, key)),
            coalesced(field(actual, key)),
        );
        if e.len() != a.len() || !e.iter().zip(&a).all(|(x, y)| strict_equal(x, y)) {
            let i = e
                .iter()
                .zip(&a)
                .position(|(x, y)| !strict_equal(x, y))
                .unwrap_or(e.len().min(a.len()));
            let show =
                |v: &[Value]| to_line(&Value::List(v.iter().skip(i).take(2).cloned().collect()));
            problems.push(format!(
                "{at}: {key} differ at #{i}\n    expected {}\n    actual   {}",
                show(&e),
                show(&a)
            ));
        }
    }
    problems
}

/// Compares a result with a case's expectation, as `compare.py` does:
/// the whole run and every stream must equal the one-shot result. Returns
/// the problems found (none when the result conforms).
pub fn compare(case: &Value, result: &Value) -> Vec<String> {
    let Some(expected) = field(case, "expected") else {
        return vec!["case without expected".into()];
    };
    let result = normalise(result);
    if field(expected, "template_error").is_some() {
        return if field(&result, "template_error").is_some() {
            Vec::new()
        } else {
            vec!["expected the template to be rejected".into()]
        };
    }
    if let Some(e) = field(&result, "template_error") {
        return vec![format!("template rejected: {}", to_line(e))];
    }
    let Some(whole) = field(expected, "whole") else {
        return vec!["expected without whole".into()];
    };
    let mut problems = compare_run(
        whole,
        field(&result, "whole").unwrap_or(&Value::Null),
        "whole",
    );
    let n = field(case, "chunkings")
        .and_then(Value::as_list)
        .map_or(0, <[Value]>::len);
    let streams = field(&result, "streams")
        .and_then(Value::as_list)
        .unwrap_or(&[]);
    for i in 0..n {
        match streams.get(i) {
            Some(run) => problems.extend(compare_run(whole, run, &format!("stream #{i}"))),
            None => problems.push(format!("stream #{i}: missing")),
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Value {
        retort_engine::py::json_loads(s).unwrap()
    }

    #[test]
    fn strict_equality_keeps_numbers_and_bools_apart() {
        assert!(strict_equal(&v("[1, 1.5, true]"), &v("[1, 1.5, true]")));
        assert!(!strict_equal(&v("1"), &v("1.0")));
        assert!(!strict_equal(&v("1"), &v("true")));
        assert!(strict_equal(
            &v(r#"{"a": 1, "b": 2}"#),
            &v(r#"{"b": 2, "a": 1}"#)
        ));
    }

    #[test]
    fn comparison_merges_chunks_and_checks_every_stream() {
        let case = v(
            r#"{"id": "x", "chunkings": [["a"], ["a"]], "expected": {"whole": {"initial_events": [],
            "events": [{"type": "region_chunk", "field": "c", "text": "ab", "dirty": false}], "message": {"c": "ab"}}}}"#,
        );
        let good = r#"{"initial_events": [], "events": [{"type": "region_chunk", "field": "c", "text": "a", "dirty": false},
            {"type": "region_chunk", "field": "c", "text": "b", "dirty": false}], "message": {"c": "ab"}}"#;
        let result = v(&format!(
            r#"{{"id": "x", "whole": {good}, "streams": [{good}, {good}]}}"#
        ));
        assert!(compare(&case, &result).is_empty());
        let short = v(&format!(
            r#"{{"id": "x", "whole": {good}, "streams": [{good}]}}"#
        ));
        assert_eq!(
            compare(&case, &short),
            vec!["stream #1: missing".to_string()]
        );
        let wrong = v(&format!(
            r#"{{"id": "x", "whole": {good}, "streams": [{good}, {{"error": {{}}, "at": "feed"}}]}}"#
        ));
        assert_eq!(compare(&case, &wrong).len(), 1);
    }
}
