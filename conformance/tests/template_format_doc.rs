//! `docs/template-format.md` is the template authors' reference. These tests
//! keep it whole and true:
//!
//! * every top-level key, field key, content parser, content argument,
//!   `value_parser` key and load-time rule the loader knows has a section
//!   (an `<a id="...">` anchor on a heading), and no such section documents
//!   something the loader no longer knows. The lists come from the loader's
//!   own constants, so adding a key or a rule without documenting it fails;
//! * every `json example` block gives, through retort, the result the page
//!   states (results the reference produced), fed whole and one character
//!   at a time; every rule's section shows a template that breaks that rule.

use retort_conformance::{normalise, run_case, strict_equal};
use retort_engine::content::{PARSER_ARGS, PARSER_NAMES, VALUE_PARSER_KEYS};
use retort_engine::py::json_loads;
use retort_engine::template::{FIELD_KEYS, Rule, TEMPLATE_KEYS};
use retort_engine::{Map, Template, Value};
use std::collections::BTreeMap;

const DOC_PATH: &str = "docs/template-format.md";
const DOC: &str = include_str!("../../docs/template-format.md");

/// A heading of the page with the anchors attached to it.
struct Section {
    heading: String,
    /// The text up to the next heading.
    body: String,
    line: usize,
}

/// The page's sections by anchor id, and the problems found reading them
/// (an anchor that is not on a heading, an id used twice).
fn sections(doc: &str) -> (BTreeMap<String, Section>, Vec<String>) {
    let mut out: BTreeMap<String, Section> = BTreeMap::new();
    let mut problems = Vec::new();
    let mut pending: Vec<(String, usize)> = Vec::new();
    let mut current: Vec<String> = Vec::new();
    let mut in_code = false;
    for (i, line) in doc.lines().enumerate() {
        let n = i + 1;
        let trimmed = line.trim();
        if trimmed.starts_with("```") {
            in_code = !in_code;
        }
        let heading = !in_code && trimmed.starts_with('#');
        if !in_code && let Some(id) = anchor_line(trimmed) {
            pending.push((id.to_owned(), n));
            continue;
        }
        if heading {
            current.clear();
            for (id, at) in pending.drain(..) {
                let section = Section {
                    heading: trimmed.trim_start_matches('#').trim().to_owned(),
                    body: String::new(),
                    line: n,
                };
                if out.insert(id.clone(), section).is_some() {
                    problems.push(format!("{DOC_PATH}:{at}: anchor `{id}` is used twice"));
                }
                current.push(id);
            }
            continue;
        }
        if !trimmed.is_empty() {
            for (id, at) in pending.drain(..) {
                problems.push(format!(
                    "{DOC_PATH}:{at}: anchor `{id}` is not followed by a heading"
                ));
            }
        }
        for id in &current {
            if let Some(s) = out.get_mut(id) {
                s.body.push_str(line);
                s.body.push('\n');
            }
        }
    }
    (out, problems)
}

/// `<a id="ID"></a>` on a line of its own.
fn anchor_line(line: &str) -> Option<&str> {
    line.strip_prefix("<a id=\"")?.strip_suffix("\"></a>")
}

/// What the page must document: anchor id -> the name its section must show
/// in backticks.
fn required() -> BTreeMap<String, String> {
    let mut ids = BTreeMap::new();
    for k in TEMPLATE_KEYS {
        ids.insert(format!("key-{k}"), k.to_owned());
    }
    for k in FIELD_KEYS {
        ids.insert(format!("field-{k}"), k.to_owned());
    }
    for p in PARSER_NAMES {
        ids.insert(format!("content-{p}"), p.to_owned());
    }
    for (p, args) in PARSER_ARGS {
        for a in args {
            ids.insert(format!("content-{p}-{a}"), (*a).to_owned());
        }
    }
    for k in VALUE_PARSER_KEYS {
        ids.insert(format!("value-parser-{k}"), k.to_owned());
    }
    for r in Rule::ALL {
        ids.insert(format!("rule-{}", r.name()), r.name().to_owned());
    }
    ids
}

/// Anchor prefixes reserved for the lists above.
const RESERVED: [&str; 5] = ["key-", "field-", "content-", "value-parser-", "rule-"];

#[test]
fn content_argument_lists_follow_the_parser_names() {
    let names: Vec<&str> = PARSER_ARGS.iter().map(|(p, _)| *p).collect();
    assert_eq!(names, PARSER_NAMES);
}

#[test]
fn every_key_parser_argument_and_rule_has_a_section() {
    let (sections, mut problems) = sections(DOC);
    for (id, name) in required() {
        let Some(s) = sections.get(&id) else {
            problems.push(format!(
                "{DOC_PATH}: no section for `{name}` (add `<a id=\"{id}\"></a>` before its heading)"
            ));
            continue;
        };
        let shown = format!("`{name}`");
        if !s.heading.contains(&shown) && !s.body.contains(&shown) {
            problems.push(format!(
                "{DOC_PATH}:{}: section `{id}` ({}) never mentions {shown}",
                s.line, s.heading
            ));
        }
        if s.body.trim().is_empty() {
            problems.push(format!("{DOC_PATH}:{}: section `{id}` is empty", s.line));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn no_section_documents_what_the_loader_does_not_know() {
    let (sections, _) = sections(DOC);
    let required = required();
    let stale: Vec<String> = sections
        .iter()
        .filter(|(id, _)| RESERVED.iter().any(|p| id.starts_with(p)))
        .filter(|(id, _)| !required.contains_key(*id))
        .map(|(id, s)| {
            format!(
                "{DOC_PATH}:{}: `{id}` names nothing the loader knows",
                s.line
            )
        })
        .collect();
    assert!(stale.is_empty(), "{}", stale.join("\n"));
}

/// GitHub's id for a heading: lower case, spaces to `-`, punctuation other
/// than `-` and `_` dropped.
fn slug(heading: &str) -> String {
    heading
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

#[test]
fn links_within_the_page_and_to_its_neighbours_resolve() {
    let mut targets: Vec<String> = Vec::new();
    let mut in_code = false;
    for line in DOC.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with("```") {
            in_code = !in_code;
        } else if !in_code && trimmed.starts_with('#') {
            targets.push(slug(trimmed.trim_start_matches('#').trim()));
        } else if !in_code && let Some(id) = anchor_line(trimmed) {
            targets.push(id.to_owned());
        }
    }
    let docs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs");
    let mut problems = Vec::new();
    for (i, line) in DOC.lines().enumerate() {
        for (at, _) in line.match_indices("](") {
            let rest = &line[at + 2..];
            let Some(end) = rest.find(')') else { continue };
            let link = &rest[..end];
            if let Some(id) = link.strip_prefix('#') {
                if !targets.iter().any(|t| t == id) {
                    problems.push(format!("{DOC_PATH}:{}: no heading or anchor `{id}`", i + 1));
                }
            } else if !link.contains("://") && !docs.join(link).exists() {
                problems.push(format!("{DOC_PATH}:{}: no file `docs/{link}`", i + 1));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The `json example` blocks: (line, the parsed object).
fn examples(doc: &str) -> Vec<(usize, Map)> {
    let mut out = Vec::new();
    let mut block: Option<(usize, String)> = None;
    for (i, line) in doc.lines().enumerate() {
        match &mut block {
            None if line.trim_end() == "```json example" => block = Some((i + 1, String::new())),
            None => {}
            Some((start, text)) => {
                if line.trim_end() == "```" {
                    let value = json_loads(text)
                        .unwrap_or_else(|e| panic!("{DOC_PATH}:{start}: example is not JSON: {e}"));
                    let Value::Map(m) = value else {
                        panic!("{DOC_PATH}:{start}: an example is a JSON object");
                    };
                    out.push((*start, m));
                    block = None;
                } else {
                    text.push_str(line);
                    text.push('\n');
                }
            }
        }
    }
    assert!(block.is_none(), "{DOC_PATH}: unterminated example");
    out
}

fn load(example: &Map) -> Result<Template, retort_engine::TemplateError> {
    match (example.get("template_text"), example.get("template")) {
        (Some(Value::Str(text)), _) => Template::from_json(text),
        (_, Some(t)) => Template::from_value(t),
        _ => panic!("an example needs `template` or `template_text`"),
    }
}

#[test]
fn every_rule_section_shows_its_rule() {
    let (sections, _) = sections(DOC);
    let mut problems = Vec::new();
    for rule in Rule::ALL {
        // Reading a file is not something a template's text can show.
        if rule == Rule::Source {
            continue;
        }
        let id = format!("rule-{}", rule.name());
        let Some(section) = sections.get(&id) else {
            continue; // reported by every_key_parser_argument_and_rule_has_a_section
        };
        let shown = examples(&section.body)
            .iter()
            .filter(|(_, ex)| ex.get("template_error").and_then(Value::as_str) == Some(rule.name()))
            .count();
        if shown == 0 {
            problems.push(format!(
                "{DOC_PATH}:{}: section `{id}` has no example with \"template_error\": \"{}\"",
                section.line,
                rule.name()
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Checks one run (the whole text, or one chunking) against the example.
fn check_run(example: &Map, run: &Value, what: &str, problems: &mut Vec<String>) {
    let run = run.as_map().expect("a run is an object");
    if let Some(Value::Str(error)) = example.get("error") {
        // The page gives the Python exception as `Class: message`; retort's
        // error carries the same message (with the field and offset first).
        let message = error.split_once(": ").map_or(error.as_str(), |(_, m)| m);
        match run
            .get("error")
            .and_then(|e| e.as_map()?.get("message")?.as_str())
        {
            Some(actual) if actual.contains(message) => {}
            Some(actual) => problems.push(format!("{what}: error {actual:?}, expected {error:?}")),
            None => problems.push(format!(
                "{what}: expected the error {error:?}, got {}",
                run.get("message")
                    .map(Value::to_json_string)
                    .unwrap_or_default()
            )),
        }
        return;
    }
    if let Some(e) = run.get("error") {
        problems.push(format!("{what}: unexpected error {}", e.to_json_string()));
        return;
    }
    for key in ["message", "events", "initial_events"] {
        let Some(expected) = example.get(key) else {
            continue;
        };
        let actual = run.get(key).cloned().unwrap_or(Value::Null);
        if !strict_equal(&normalise(expected), &normalise(&actual)) {
            problems.push(format!(
                "{what}: {key} is {}, the page says {}",
                actual.to_json_string(),
                expected.to_json_string()
            ));
        }
    }
}

#[test]
fn examples_give_the_documented_results() {
    let examples = examples(DOC);
    assert!(examples.len() >= 40, "the page lost its examples");
    let mut problems = Vec::new();
    for (line, ex) in &examples {
        let at = format!("{DOC_PATH}:{line}");
        if let Some(rule) = ex.get("template_error") {
            match load(ex) {
                Ok(_) => problems.push(format!("{at}: the template loads")),
                Err(e) if Some(e.rule.name()) != rule.as_str() => problems.push(format!(
                    "{at}: rule {} ({e}), the page says {}",
                    e.rule.name(),
                    rule.to_json_string()
                )),
                Err(_) => {}
            }
            continue;
        }
        let text = ex.get("text").and_then(Value::as_str).unwrap_or("");
        let mut case = Map::default();
        case.insert("id".into(), Value::Str(at.clone()));
        for key in ["template", "prefix", "text", "tools"] {
            if let Some(v) = ex.get(key) {
                case.insert(key.into(), v.clone());
            }
        }
        let one_by_one = text.chars().map(|c| Value::Str(c.into())).collect();
        case.insert(
            "chunkings".into(),
            Value::List(vec![Value::List(one_by_one)]),
        );
        let result = run_case(&Value::Map(case), &|name| {
            Err(format!("examples carry their template, not `{name}`"))
        })
        .unwrap_or_else(|e| panic!("{at}: {e}"));
        let result = result.as_map().expect("a result is an object");
        if let Some(e) = result.get("template_error") {
            problems.push(format!("{at}: template rejected: {}", e.to_json_string()));
            continue;
        }
        check_run(
            ex,
            &result["whole"],
            &format!("{at} (whole)"),
            &mut problems,
        );
        for stream in result
            .get("streams")
            .and_then(Value::as_list)
            .unwrap_or(&[])
        {
            check_run(
                ex,
                stream,
                &format!("{at} (one character at a time)"),
                &mut problems,
            );
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
