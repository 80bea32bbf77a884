//! `Parser::stream_params` against the default parser: reading `xml-inline`
//! and `kv-lines` regions as they stream must give exactly the same results (messages,
//! events and errors) for every case and chunking, and the parameters it
//! reports must be the region's, in the text's order.

mod common;

use common::{read_cases, root, template_of};

use retort_conformance::{Runner, field, run_case_with, run_session, strict_equal};
use retort_engine::{Event, ParserOptions, Template, Value};

/// Parsers with `stream_params` on.
struct Streamed<'t>(&'t Template);

impl Runner for Streamed<'_> {
    fn run(&self, prefix: &str, tools: Option<&Value>, chunks: &[&str]) -> Value {
        let parser = self
            .0
            .parser_with(prefix, ParserOptions::new(), tools)
            .map(|mut p| {
                p.stream_params(true);
                p
            });
        run_session(parser, chunks)
    }
}

/// Whether any field of the template is read as it streams
/// (`xml-inline`, `kv-lines`).
fn has_params(t: &Template) -> bool {
    t.fields()
        .iter()
        .any(|f| f.content.param_stream().is_some())
}

/// The case with two more chunkings: 1 and 3 characters at a time.
fn with_small_pieces(case: &Value) -> Value {
    let text = field(case, "text").and_then(Value::as_str).unwrap_or("");
    let chars: Vec<char> = text.chars().collect();
    let mut case = case.clone();
    let Value::Map(m) = &mut case else {
        return case;
    };
    let mut chunkings = match m.get("chunkings") {
        Some(Value::List(c)) => c.clone(),
        _ => Vec::new(),
    };
    for n in [1, 3] {
        chunkings.push(Value::List(
            chars
                .chunks(n)
                .map(|c| Value::Str(c.iter().collect()))
                .collect(),
        ));
    }
    m.insert("chunkings".into(), Value::List(chunkings));
    case
}

#[test]
fn streamed_parameters_change_no_result() {
    let mut compared = 0;
    let mut failures = Vec::new();
    let dir = root().join("tests/conformance/cases");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("the case files")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    for file in files {
        for case in read_cases(&file) {
            let Some(t) = template_of(&case, &root().join("templates")) else {
                continue;
            };
            if !has_params(&t) {
                continue;
            }
            let case = with_small_pieces(&case);
            let plain = run_case_with(&case, &t);
            let streamed = run_case_with(&case, &Streamed(&t));
            compared += 1;
            if !strict_equal(&plain, &streamed) {
                failures.push(format!("{}: {:?}", file.display(), field(&case, "id")));
            }
        }
    }
    assert!(compared > 50, "only {compared} cases compared");
    assert!(failures.is_empty(), "{failures:#?}");
    eprintln!(
        "{compared} xml-inline and kv-lines cases identical with and without streamed parameters"
    );
}

#[test]
fn parameters_come_as_soon_as_they_are_decided() {
    let json = std::fs::read_to_string(root().join("templates/qwen3-coder.json")).unwrap();
    let t = Template::from_json(&json).unwrap();
    let text = "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n\
                <parameter=days>\n3\n</parameter>\n</function>\n</tool_call>";
    let mut p = t.parser("").unwrap();
    p.stream_params(true);
    let mut seen: Vec<(usize, String, Value)> = Vec::new();
    let mut fed = 0;
    for c in text.chars() {
        let piece = c.to_string();
        fed += piece.len();
        let events = p.feed(&piece).unwrap();
        for param in events.params() {
            // Each parameter is placed after the chunk that decided it.
            assert!(param.after <= events.len());
            assert!(matches!(
                events.get(param.after.saturating_sub(1)),
                Some(Event::RegionChunk { .. } | Event::RegionOpen { .. })
            ));
            seen.push((fed, param.key.clone(), param.value.clone()));
        }
    }
    let (message, _) = p.finalize().unwrap();
    let keys: Vec<&str> = seen.iter().map(|(_, k, _)| k.as_str()).collect();
    assert_eq!(keys, ["city", "days"]);
    // Qwen3-Coder's values are text (the tool definitions type them; none
    // are given here).
    assert_eq!(seen[1].2, Value::Str("3".into()));
    // Decided when its closing tag arrived, not at the region's close.
    let city_end = text.find("</parameter>").unwrap() + "</parameter>".len();
    assert_eq!(seen[0].0, city_end);
    // And the message is the parser's.
    assert_eq!(message, t.parse(text, "").unwrap());
}
