//! `retort parse` against the project's conformance vectors, whose expected
//! results the reference computed: the one-shot message, the streamed
//! events (merged, they must equal the reference's events), and the
//! streamed chunks of every text region, which must add up to its value.

use retort::py::{json_loads, json_loads_with_depth, strip, truthy};
use retort::{Map, Value};
use retort_conformance::{compare, field, normalise, strict_equal};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn cases() -> Vec<Value> {
    let dir = workspace().join("tests/conformance/cases");
    let mut out = Vec::new();
    for name in ["hand.jsonl", "fuzz-1000.jsonl"] {
        let text = std::fs::read_to_string(dir.join(name)).expect("the case file is readable");
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            // Cases hold values as deep as the reference allowed.
            out.push(json_loads_with_depth(line, usize::MAX).expect("a case is JSON"));
        }
    }
    out
}

fn s<'a>(v: &'a Value, key: &str) -> &'a str {
    field(v, key).and_then(Value::as_str).unwrap_or("")
}

/// The files of one case in a scratch directory, and the arguments that
/// name them. Named templates are passed by their bundled name.
struct Files {
    _dir: tempfile::TempDir,
    args: Vec<String>,
    template: Value,
}

fn files(case: &Value) -> Files {
    let dir = tempfile::tempdir().expect("a scratch directory");
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).expect("scratch files are writable");
        p.display().to_string()
    };
    let (template_arg, template) = match field(case, "template") {
        Some(Value::Str(name)) => {
            let path = workspace().join("templates").join(format!("{name}.json"));
            let text = std::fs::read_to_string(path).expect("the bundled template exists");
            (name.clone(), json_loads(&text).expect("template JSON"))
        }
        Some(inline) => (
            write("template.json", &inline.to_json_string()),
            inline.clone(),
        ),
        None => panic!("a case without a template"),
    };
    let mut args = vec![
        "parse".to_owned(),
        template_arg,
        write("output.txt", s(case, "text")),
        "--prefix-file".to_owned(),
        write("prompt.txt", s(case, "prefix")),
    ];
    if let Some(tools) = field(case, "tools") {
        args.push("--tools".to_owned());
        args.push(write("tools.json", &tools.to_json_string()));
    }
    Files {
        _dir: dir,
        args,
        template,
    }
}

fn run(args: &[String], extra: &[&str]) -> Output {
    // From a directory without templates: bundled names must still work.
    Command::new(env!("CARGO_BIN_EXE_retort"))
        .args(args)
        .args(extra)
        .current_dir(std::env::temp_dir())
        .output()
        .expect("the binary runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("UTF-8 output")
}

/// A `--stream` output as a conformance run: every event in `events`
/// (the prompt's too), then the message, or the error.
fn stream_run(o: &Output, id: &str) -> Value {
    let mut events = Vec::new();
    let mut run = Map::default();
    for line in stdout(o).lines() {
        let v = json_loads_with_depth(line, usize::MAX)
            .unwrap_or_else(|e| panic!("{id}: not JSON: {line}: {e}"));
        match s(&v, "type") {
            "message" => {
                run.insert("message".into(), field(&v, "message").cloned().unwrap());
            }
            "error" => {
                run.insert("error".into(), field(&v, "error").cloned().unwrap());
                run.insert("at".into(), Value::Str("feed".into()));
            }
            "region_open" | "region_chunk" | "region_close" => events.push(v),
            other => panic!("{id}: unknown line type {other:?}"),
        }
    }
    assert_eq!(
        o.status.code(),
        Some(if run.contains_key("error") { 1 } else { 0 }),
        "{id}: exit code"
    );
    run.insert("initial_events".into(), Value::List(Vec::new()));
    run.insert("events".into(), Value::List(events));
    Value::Map(run)
}

/// The case with the prompt's events moved into `events` (a stream does
/// not mark them) and one chunking per streamed run.
fn as_streamed(case: &Value, runs: usize) -> Value {
    let mut case = case.clone();
    if let Value::Map(c) = &mut case {
        c.insert(
            "chunkings".into(),
            Value::List(vec![Value::List(Vec::new()); runs]),
        );
        if let Some(Value::Map(exp)) = c.get_mut("expected")
            && let Some(Value::Map(whole)) = exp.get_mut("whole")
            && let Some(Value::List(initial)) = whole.get("initial_events").cloned()
            && whole.contains_key("events")
        {
            let mut all = initial;
            if let Some(Value::List(events)) = whole.get("events") {
                all.extend(events.iter().cloned());
            }
            whole.insert("events".into(), Value::List(all));
            whole.insert("initial_events".into(), Value::List(Vec::new()));
        }
    }
    case
}

/// Text fields whose value is the stripped region text: no transform, no
/// `join`/`repeats`, `text` content with the default `strip`.
fn plain_text_fields(template: &Value) -> Vec<String> {
    let doc = match field(template, "response_template") {
        Some(t) if field(template, "fields").is_none() => t,
        _ => template,
    };
    let Some(Value::Map(fields)) = field(doc, "fields") else {
        return Vec::new();
    };
    fields
        .iter()
        .filter(|(_, f)| {
            let content = field(f, "content")
                .and_then(Value::as_str)
                .unwrap_or("text");
            let strip_on = match field(f, "content_args") {
                None => true,
                Some(Value::Map(a)) => a.get("strip").is_none_or(truthy),
                Some(_) => false,
            };
            content == "text"
                && strip_on
                && field(f, "transform").is_none_or(|t| matches!(t, Value::Null))
                && field(f, "repeats").is_none_or(|r| !truthy(r))
        })
        .map(|(name, _)| name.clone())
        .collect()
}

/// Each region's chunks, joined and stripped, give its value; the message
/// holds the last region's value (or leaves an empty one out).
fn check_chunks_add_up(id: &str, run: &Value, template: &Value, defaults: &Map) {
    let Some(message) = field(run, "message") else {
        return;
    };
    let texts = plain_text_fields(template);
    let mut open: Option<(String, String)> = None;
    let mut last: Map = Map::default();
    for e in field(run, "events").and_then(Value::as_list).unwrap_or(&[]) {
        let f = s(e, "field").to_owned();
        match s(e, "type") {
            "region_open" => open = Some((f, String::new())),
            "region_chunk" => {
                let (of, text) = open.as_mut().expect("a chunk inside a region");
                assert_eq!(*of, f, "{id}: a chunk of another field");
                text.push_str(s(e, "text"));
            }
            "region_close" => {
                let (of, text) = open.take().expect("a close inside a region");
                assert_eq!(of, f, "{id}: a close of another field");
                if texts.contains(&f) {
                    let joined = strip(&text).to_owned();
                    assert_eq!(
                        field(e, "value").and_then(Value::as_str),
                        Some(joined.as_str()),
                        "{id}: the chunks of a `{f}` region, stripped, are its value"
                    );
                    last.insert(f, Value::Str(joined));
                }
            }
            other => panic!("{id}: unexpected event {other}"),
        }
    }
    for (f, v) in &last {
        let in_message = field(message, f);
        if v.as_str() == Some("") && !defaults.contains_key(f) {
            assert!(in_message.is_none(), "{id}: empty `{f}` is left out");
        } else {
            assert_eq!(in_message, Some(v), "{id}: `{f}` is its last region's text");
        }
    }
}

/// Runs one case through the binary three times (one shot, then streamed
/// a character at a time and in pieces of four); returns whether it gave
/// a message (whose chunks were then checked).
fn check_case(case: &Value) -> bool {
    let id = s(case, "id");
    let f = files(case);
    let expected = field(case, "expected")
        .and_then(|e| field(e, "whole"))
        .unwrap();
    let expect_error = field(expected, "error").is_some();

    // One shot: the message alone, or a report on stderr and exit 1.
    let o = run(&f.args, &[]);
    if expect_error {
        assert_eq!(o.status.code(), Some(1), "{id}: bad output exits 1");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("bad model output"), "{id}: {err}");
        assert!(o.stdout.is_empty(), "{id}: no message on bad output");
    } else {
        assert_eq!(
            o.status.code(),
            Some(0),
            "{id}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let got =
            json_loads_with_depth(stdout(&o).trim(), usize::MAX).expect("the message is JSON");
        let want = field(expected, "message").unwrap();
        assert!(
            strict_equal(&normalise(&got), want),
            "{id}: message\n  expected {}\n  actual   {}",
            want.to_json_string(),
            got.to_json_string()
        );
    }

    let streams: Vec<Value> = ["1", "4"]
        .iter()
        .map(|n| stream_run(&run(&f.args, &["--stream", "--chunk", n]), id))
        .collect();
    let mut result = Map::default();
    result.insert("whole".into(), streams[0].clone());
    result.insert("streams".into(), Value::List(streams.clone()));
    let problems = compare(&as_streamed(case, streams.len()), &Value::Map(result));
    assert!(problems.is_empty(), "{id}: {}", problems.join("\n"));

    if expect_error {
        return false;
    }
    let doc = match field(&f.template, "response_template") {
        Some(t) if field(&f.template, "fields").is_none() => t,
        _ => &f.template,
    };
    let defaults = match field(doc, "defaults") {
        Some(Value::Map(m)) => m.clone(),
        _ => Map::default(),
    };
    for stream in &streams {
        check_chunks_add_up(id, stream, &f.template, &defaults);
    }
    true
}

#[test]
fn parse_gives_the_references_results_one_shot_and_streamed() {
    let cases = cases();
    assert!(cases.len() > 500, "the vectors are there");
    // Each case starts three processes; run a few cases at a time.
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get().clamp(2, 8));
    let parsed: usize = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let cases = &cases;
                scope.spawn(move || {
                    cases
                        .iter()
                        .skip(w)
                        .step_by(workers)
                        .filter(|c| check_case(c))
                        .count()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .sum()
    });
    assert!(parsed > 100, "most vectors parse: {parsed}");
}
