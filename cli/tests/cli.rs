//! The `retort` commands on good and bad input: output, messages, exit
//! codes (0 ok, 1 bad template or bad model output, 2 usage or I/O).

mod common;

use common::run as retort;
use retort::py::json_loads;
use retort::{Map, Value};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn qwen3_path() -> String {
    workspace()
        .join("templates/qwen3.json")
        .display()
        .to_string()
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn scratch(name: &str, text: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().expect("a scratch directory");
    let path = dir.path().join(name);
    std::fs::write(&path, text).expect("writable");
    (dir, path.display().to_string())
}

/// The field names of a template file, in order.
fn field_names(path: &str) -> Vec<String> {
    let doc = json_loads(&std::fs::read_to_string(path).unwrap()).unwrap();
    match doc.as_map().and_then(|m| m.get("fields")) {
        Some(Value::Map(f)) => f.keys().cloned().collect(),
        _ => panic!("a template with fields"),
    }
}

// A mistake on line 4: `join` without `repeats`.
const BAD: &str = "{\n  \"start_anchor\": \"<a>\",\n  \"fields\": {\n    \"x\": {\"open\": \"<x>\", \"close\": \"</x>\", \"join\": \",\"}\n  }\n}\n";

fn assert_reports_the_mistake(o: &Output, file: &str, path: &str) {
    assert_eq!(o.status.code(), Some(1), "{}", err(o));
    let e = err(o);
    assert!(e.contains("join-without-repeats"), "the rule: {e}");
    assert!(e.contains(&format!("{file}:4:")), "line:column: {e}");
    assert!(e.contains(&format!("at: {path}")), "the JSON path: {e}");
    assert!(e.contains("\"join\": \",\""), "a snippet of the line: {e}");
    assert!(e.contains('^'), "a caret under the value: {e}");
}

#[test]
fn check_accepts_files_configs_and_bundled_names() {
    let path = qwen3_path();
    let names = field_names(&path);
    let want = format!("({} fields: {})", names.len(), names.join(", "));
    // A file, a family name (any case and punctuation), a Hugging Face repo id.
    let pattern = retort::registry::family("qwen3").unwrap().repo_patterns()[0];
    let repo = pattern.replace('*', "x");
    for arg in [path.as_str(), "qwen3", "QWEN3", repo.as_str()] {
        let o = retort(&["check", arg], b"");
        assert_eq!(o.status.code(), Some(0), "{}", err(&o));
        assert!(out(&o).contains(&want), "{}", out(&o));
    }
    // A tokenizer config that holds the template.
    let template = std::fs::read_to_string(&path).unwrap();
    let (_d, config) = scratch(
        "tokenizer_config.json",
        &format!("{{\"model_max_length\": 4096, \"response_template\": {template}}}"),
    );
    let o = retort(&["check", &config], b"");
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(out(&o).contains(&want));
}

#[test]
fn check_reports_a_mistake_with_rule_path_and_location() {
    let (_d, file) = scratch("bad.json", BAD);
    assert_reports_the_mistake(&retort(&["check", &file], b""), &file, "fields.x.join");

    // Inside a tokenizer config the path says so.
    let config = format!("{{\"response_template\":\n{}}}", BAD.trim_end());
    let (_d2, file) = scratch("tokenizer_config.json", &config);
    let o = retort(&["check", &file], b"");
    assert_eq!(o.status.code(), Some(1));
    assert!(
        err(&o).contains("at: response_template.fields.x.join"),
        "{}",
        err(&o)
    );

    // Not JSON at all: the place where parsing stopped.
    let (_d3, file) = scratch(
        "broken.json",
        "{\n  \"start_anchor\": \"a\",\n  \"fields\": \n",
    );
    let o = retort(&["check", &file], b"");
    assert_eq!(o.status.code(), Some(1));
    assert!(err(&o).contains("[json]") && err(&o).contains(&format!("{file}:")));

    // A tokenizer config without a template gets a hint, naming the family
    // its chat template belongs to when it is recognised.
    let qwen3 = retort::registry::family("qwen3").unwrap();
    let chat_template = qwen3.chat_template_markers()[0].join("\n");
    let config = format!(
        "{{\"chat_template\": {}}}",
        Value::Str(chat_template).to_json_string()
    );
    let (_d5, file) = scratch("tokenizer_config.json", &config);
    let o = retort(&["check", &file], b"");
    assert_eq!(o.status.code(), Some(1));
    assert!(err(&o).contains("bundled `qwen3`"), "{}", err(&o));
    // `parse` then uses that family's template, and says so.
    let sample = "<think>a</think>b<|im_end|>";
    let o = retort(&["parse", &file], sample.as_bytes());
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(err(&o).contains("whose template is used"), "{}", err(&o));
    assert_eq!(
        out(&o),
        out(&retort(&["parse", "qwen3"], sample.as_bytes()))
    );

    // A tokenizer config without a template gets a hint.
    let (_d4, file) = scratch(
        "tokenizer_config.json",
        "{\"model_max_length\": 8, \"chat_template\": \"{{ messages }}\"}",
    );
    let o = retort(&["check", &file], b"");
    assert_eq!(o.status.code(), Some(1));
    assert!(
        err(&o).contains("without a `response_template`"),
        "{}",
        err(&o)
    );
}

#[test]
fn check_fails_with_2_on_missing_files_and_unknown_names() {
    let o = retort(&["check", "no/such/template.json"], b"");
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("no such file"));
    let o = retort(&["check", "no-such-model"], b"");
    assert_eq!(o.status.code(), Some(2));
    assert!(
        err(&o).contains("qwen3"),
        "lists the bundled names: {}",
        err(&o)
    );
    let o = retort(&["check"], b"");
    assert_eq!(o.status.code(), Some(2), "usage error");
}

#[test]
fn check_verbose_shows_each_delimiters_path_and_sizes() {
    let o = retort(&["check", "--verbose", "qwen3"], b"");
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let text = out(&o);
    let doc = json_loads(&std::fs::read_to_string(qwen3_path()).unwrap()).unwrap();
    let fields = doc.as_map().unwrap()["fields"].as_map().unwrap();
    for (name, f) in fields {
        for key in ["open", "open_pattern", "close", "close_pattern"] {
            if f.as_map().unwrap().contains_key(key) {
                let line = text
                    .lines()
                    .find(|l| l.trim_start().starts_with(&format!("fields.{name}.{key} ")))
                    .unwrap_or_else(|| panic!("a line for fields.{name}.{key}:\n{text}"));
                assert!(
                    line.contains("literal:") || line.contains("DFA:"),
                    "a path: {line}"
                );
                assert!(line.contains("states") && line.contains("bytes"), "{line}");
            }
        }
    }
    assert!(text.contains("start_anchor"));
    assert!(text.contains("linear time"));

    // A negative lookahead inside a pattern has no automaton: the
    // fallback, with why.
    let (_d, file) = scratch(
        "bt.json",
        r#"{"start_anchor": "<a>", "fields": {"c": {"open_pattern": "<c>(?!x)y", "close": "</c>"}}}"#,
    );
    let o = retort(&["check", "-v", &file], b"");
    assert_eq!(o.status.code(), Some(0));
    let line = out(&o)
        .lines()
        .find(|l| l.contains("fields.c.open_pattern"))
        .map(str::to_owned)
        .expect("a line for the pattern");
    assert!(line.contains("backtracking fallback"), "{line}");
    assert!(line.contains("has no automaton"), "says why: {line}");
    assert!(out(&o).contains("NOT linear time"));
    // Without --verbose, a note.
    let o = retort(&["check", &file], b"");
    assert!(out(&o).contains("backtracking"));
    // The compiled parser's states: that one falls back.
    let o = retort(&["check", "-v", &file], b"");
    assert!(
        out(&o).contains("outside explicit regions") && out(&o).contains("falls back"),
        "{}",
        out(&o)
    );
}

#[test]
fn check_verbose_says_what_the_compiled_parser_runs_per_state() {
    // SmolLM3: every state's search is generated code.
    let o = retort(&["check", "-v", "smollm3"], b"");
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let text = out(&o);
    let states: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("compiled parser"))
        .skip(1)
        .filter(|l| !l.trim_start().starts_with("fields."))
        .collect();
    assert_eq!(states.len(), 3, "{text}");
    // Its tool calls are built in their struct, and so are Apriel's, a
    // list per region (`transform_each`); a transform that uses an
    // element's entry twice is left to the engine's transform, with why.
    assert!(
        text.contains(
            "fields.tool_calls.transform          built as `ToolCalls` by generated code"
        ),
        "{text}"
    );
    // Llama 3.1's calls read two entries of the region's object, which
    // the generated code parses without building the object.
    for (template, says) in [
        (
            "llama-3.1",
            "built as `ToolCalls` by generated code, from the entries `name`, `parameters` of the region's JSON object",
        ),
        (
            "apriel",
            "fields.tool_calls.transform          built as `ToolCalls` by generated code",
        ),
    ] {
        let o = retort(&["check", "-v", template], b"");
        assert!(out(&o).contains(says), "{}", out(&o));
    }
    let (_d, file) = scratch(
        "twice.json",
        r#"{"start_anchor": "<a>", "fields": {"t": {"open": "<t>", "close": "</t>", "content": "json", "transform_each": true, "transform": {"a": "{x}", "b": "{x}"}}}}"#,
    );
    let o = retort(&["check", "-v", &file], b"");
    assert!(
        out(&o).contains("fields.t.transform") && out(&o).contains("an element's entry used twice"),
        "{}",
        out(&o)
    );
    // Inside regions the closes are literals; outside them the end of the
    // turn is a pattern (`<|im_end|>[\s\S]*`, which takes what follows), so
    // its search starts at literals and runs each start's automaton.
    for (name, how) in [
        (
            "inside `reasoning_content`",
            "literals compared by generated code",
        ),
        ("inside `tool_calls`", "literals compared by generated code"),
        (
            "outside explicit regions",
            "starting literals found by generated code",
        ),
    ] {
        let line = states
            .iter()
            .find(|l| l.trim_start().starts_with(name))
            .unwrap_or_else(|| panic!("a line for {name}:\n{text}"));
        assert!(line.contains(how), "{line}");
    }
    // Qwen3-Coder's delimiters are patterns: outside regions, matches
    // begin at `<tool_call>`, `<function=` or the end-of-turn tokens
    // (after a run of `\s`), searched by generated code; its opener's
    // group is read by generated code.
    let o = retort(&["check", "-v", "qwen3-coder"], b"");
    assert!(
        out(&o).contains(
            "outside explicit regions             starting literals found by generated code"
        ),
        "{}",
        out(&o)
    );
    assert!(
        out(&o).contains(
            "fields.tool_calls.open_pattern       groups read off automaton pieces by generated code"
        ),
        "{}",
        out(&o)
    );
}

#[test]
fn parse_lenient_keeps_going_past_a_malformed_region() {
    let text = "hi<tool_call>{bad json</tool_call>after<|im_end|>";
    // Strict: the reference's error, exit 1.
    let o = retort(&["parse", "smollm3"], text.as_bytes());
    assert_eq!(o.status.code(), Some(1), "{}", out(&o));
    // Lenient: the message, the malformed region named on stderr.
    let o = retort(&["parse", "--lenient", "smollm3"], text.as_bytes());
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let message = json_loads(out(&o).trim()).unwrap();
    assert_eq!(message.as_map().unwrap()["content"].as_str(), Some("after"));
    assert!(err(&o).contains("`tool_calls` at byte 13"), "{}", err(&o));
    // Lenient streaming: the raw text in a region_malformed event.
    let o = retort(
        &["parse", "--lenient", "--stream", "--chunk", "3", "smollm3"],
        text.as_bytes(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let malformed: Vec<Value> = out(&o)
        .lines()
        .map(|l| json_loads(l).unwrap())
        .filter(|v| v.as_map().unwrap()["type"].as_str() == Some("region_malformed"))
        .collect();
    assert_eq!(malformed.len(), 1, "{}", out(&o));
    assert_eq!(
        malformed[0].as_map().unwrap()["raw"].as_str(),
        Some("{bad json")
    );
    // Valid output: lenient and strict print the same.
    let ok = "hi<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>";
    let strict = retort(&["parse", "smollm3"], ok.as_bytes());
    let lenient = retort(&["parse", "--lenient", "smollm3"], ok.as_bytes());
    assert_eq!(strict.status.code(), Some(0), "{}", err(&strict));
    assert_eq!(out(&strict), out(&lenient));
    assert_eq!(err(&lenient), "");
}

#[test]
fn check_warns_about_arguments_that_fail_only_when_parsed() {
    let (_d, file) = scratch(
        "args.json",
        r#"{"start_anchor": "<a>", "fields": {"c": {"open": "<c>", "content": "xml-inline",
            "content_args": {"tag_pattern": "(unclosed", "stirp": false}}}}"#,
    );
    let o = retort(&["check", &file], b"");
    assert_eq!(o.status.code(), Some(0), "the reference accepts it");
    let text = out(&o);
    assert!(
        text.contains("warning: fields.c.content_args.tag_pattern: invalid regex"),
        "{text}"
    );
    assert!(text.contains("fields.c.content_args.stirp"), "{text}");
}

const SAMPLE: &str = "<think>\nLet me see.\n</think>\n\nSure!\n<tool_call>\n{\"name\": \"wave\", \"arguments\": {\"times\": \"2\"}}\n</tool_call><|im_end|>";

#[test]
fn parse_prints_the_message_for_file_and_stdin_input() {
    let (_d, input) = scratch("out.txt", SAMPLE);
    let from_file = retort(&["parse", "qwen3", &input], b"");
    let from_stdin = retort(&["parse", &qwen3_path()], SAMPLE.as_bytes());
    // `-t TEMPLATE [INPUT]` is the same command.
    let with_option = retort(&["parse", "-t", "qwen3", &input], b"");
    for o in [&from_file, &from_stdin, &with_option] {
        assert_eq!(o.status.code(), Some(0), "{}", err(o));
        assert_eq!(out(o).lines().count(), 1, "one line: {}", out(o));
    }
    assert_eq!(out(&from_file), out(&from_stdin));
    assert_eq!(out(&from_file), out(&with_option));
    // The library's own parse is the ground truth here.
    let t = retort::Template::from_json(&std::fs::read_to_string(qwen3_path()).unwrap()).unwrap();
    let want = t.parse(SAMPLE, "").unwrap();
    let got = json_loads(out(&from_file).trim()).unwrap();
    assert_eq!(got, Value::Map(want));
}

#[test]
fn parse_needs_one_template_and_at_most_one_input() {
    let none = retort(&["parse"], b"");
    assert_eq!(none.status.code(), Some(2));
    assert!(
        err(&none).contains("a TEMPLATE is required"),
        "{}",
        err(&none)
    );
    let two = retort(&["parse", "-t", "qwen3", "a.txt", "b.txt"], b"");
    assert_eq!(two.status.code(), Some(2));
    assert!(err(&two).contains("at most one INPUT"), "{}", err(&two));
}

#[test]
fn parse_takes_the_prompt_and_tools() {
    let prompt = "<|im_start|>user\nWave<|im_end|>\n<|im_start|>assistant\n<think>\n";
    let generation = "Twice.</think>Ok<tool_call>{\"name\": \"wave\", \"arguments\": {\"times\": \"2\"}}</tool_call>";
    let tools = r#"[{"type": "function", "function": {"name": "wave", "parameters": {"type": "object", "properties": {"times": {"type": "integer"}}}}}]"#;
    let (_d, prompt_file) = scratch("prompt.txt", prompt);
    let (_d2, tools_file) = scratch("tools.json", tools);
    let t = retort::Template::from_json(&std::fs::read_to_string(qwen3_path()).unwrap()).unwrap();

    let o = retort(
        &["parse", "qwen3", "--prefix", prompt],
        generation.as_bytes(),
    );
    let by_flag = json_loads(out(&o).trim()).unwrap();
    assert_eq!(by_flag, Value::Map(t.parse(generation, prompt).unwrap()));
    let o = retort(
        &["parse", "qwen3", "--prefix-file", &prompt_file],
        generation.as_bytes(),
    );
    assert_eq!(json_loads(out(&o).trim()).unwrap(), by_flag);

    let o = retort(
        &["parse", "qwen3", "--prefix", prompt, "--tools", &tools_file],
        generation.as_bytes(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let tools_v = json_loads(tools).unwrap();
    let mut p = t.parser_with_tools(prompt, &tools_v).unwrap();
    p.feed(generation).unwrap();
    let want = p.finalize().unwrap().0;
    assert_eq!(json_loads(out(&o).trim()).unwrap(), Value::Map(want));
}

#[test]
fn parse_stream_prints_events_then_the_message() {
    let o = retort(
        &["parse", "qwen3", "--stream", "--chunk", "5"],
        SAMPLE.as_bytes(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let lines: Vec<Value> = out(&o).lines().map(|l| json_loads(l).unwrap()).collect();
    let kind = |v: &Value| v.as_map().unwrap()["type"].as_str().unwrap().to_owned();
    let (last, events) = lines.split_last().unwrap();
    assert_eq!(kind(last), "message");
    assert!(events.iter().all(|e| kind(e).starts_with("region_")));
    // Pieces of five characters stream as more chunks than the whole text.
    let whole = retort(&["parse", "qwen3", "--stream"], SAMPLE.as_bytes());
    let chunks = |text: &str| {
        text.lines()
            .filter(|l| l.contains("\"region_chunk\""))
            .count()
    };
    assert!(chunks(&out(&o)) > chunks(&out(&whole)));
    let one_shot = retort(&["parse", "qwen3"], SAMPLE.as_bytes());
    assert_eq!(
        last.as_map().unwrap()["message"],
        json_loads(out(&one_shot).trim()).unwrap()
    );
}

#[test]
fn parse_stream_emits_events_before_the_input_ends() {
    use std::io::{BufRead, BufReader};
    use std::sync::mpsc;
    use std::time::Duration;

    let mut child = Command::new(env!("CARGO_BIN_EXE_retort"))
        .args(["parse", "qwen3", "--stream"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the binary runs");
    let mut stdin = child.stdin.take().expect("piped");
    let stdout = child.stdout.take().expect("piped");
    let (tx, rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if tx.send(line.expect("UTF-8 lines")).is_err() {
                break;
            }
        }
    });
    stdin.write_all(b"<think>first").unwrap();
    stdin.flush().unwrap();
    // The chunk arrives while the input is still open.
    let seen = loop {
        match rx.recv_timeout(Duration::from_secs(30)) {
            Ok(line) if line.contains("\"first\"") => break true,
            Ok(_) => continue,
            Err(_) => break false,
        }
    };
    stdin.write_all(b" second</think>done").unwrap();
    drop(stdin);
    assert!(seen, "the first chunk was printed before the input ended");
    let rest: Vec<String> = rx.iter().collect();
    reader.join().unwrap();
    assert!(child.wait().unwrap().success());
    let last = json_loads(rest.last().expect("a message line")).unwrap();
    let message = last.as_map().unwrap()["message"].as_map().unwrap().clone();
    assert_eq!(
        message["reasoning_content"],
        Value::Str("first second".into())
    );
}

const BAD_OUTPUT: &str =
    "<think>fine</think>Hello<tool_call>{\"name\": \"wave\", </tool_call>more text";

#[test]
fn parse_reports_bad_output_with_field_offset_and_text() {
    let o = retort(&["parse", "qwen3"], BAD_OUTPUT.as_bytes());
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stdout.is_empty());
    let e = err(&o);
    assert!(e.contains("field 'tool_calls'"), "{e}");
    // The region's body starts right after `<tool_call>`.
    let at = BAD_OUTPUT.find("<tool_call>").unwrap() + "<tool_call>".len();
    assert!(e.contains(&format!("byte {at} of the output")), "{e}");
    assert!(
        e.contains(r#""{\"name\": \"wave\", ""#),
        "the raw text: {e}"
    );
    assert!(
        e.contains("reasoning_content: \"fine\""),
        "what was parsed: {e}"
    );

    // Streamed: the events so far, then an error line.
    let o = retort(
        &["parse", "qwen3", "--stream", "--chunk", "7"],
        BAD_OUTPUT.as_bytes(),
    );
    assert_eq!(o.status.code(), Some(1));
    let lines: Vec<Value> = out(&o).lines().map(|l| json_loads(l).unwrap()).collect();
    let last: &Map = lines.last().unwrap().as_map().unwrap();
    assert_eq!(last["type"], Value::Str("error".into()));
    let error = last["error"].as_map().unwrap();
    assert_eq!(error["field"], Value::Str("tool_calls".into()));
    assert_eq!(error["kind"], Value::Str("field".into()));
    assert_eq!(
        error["offset"],
        Value::Int(at as i64),
        "counted in the output"
    );
    let chunks: String = lines
        .iter()
        .filter_map(|l| {
            let m = l.as_map()?;
            (m["type"].as_str()? == "region_chunk" && m["field"].as_str()? == "content")
                .then(|| m["text"].as_str().unwrap().to_owned())
        })
        .collect();
    assert_eq!(chunks, "Hello", "the text before the error was streamed");

    // A required field never written is reported at the end.
    let (_d, file) = scratch(
        "req.json",
        r#"{"start_anchor": "<a>", "fields": {"a": {"open": "<a>", "close": "</a>", "optional": false}, "c": {}}}"#,
    );
    let o = retort(&["parse", &file], b"just text");
    assert_eq!(o.status.code(), Some(1));
    assert!(err(&o).contains("missing-fields"), "{}", err(&o));
    assert!(
        err(&o).contains("regions parsed before the error:\n      c: \"just text\""),
        "{}",
        err(&o)
    );
}

#[test]
fn parse_rejects_bad_input_and_arguments() {
    let o = retort(&["parse", "qwen3"], b"ok \xff\xfe");
    assert_eq!(o.status.code(), Some(1));
    assert!(err(&o).contains("not UTF-8"), "{}", err(&o));
    let o = retort(&["parse", "qwen3"], b"cut \xe2\x82");
    assert_eq!(o.status.code(), Some(1));

    let (_d, bad) = scratch("bad.json", BAD);
    let o = retort(&["parse", &bad], b"x");
    assert_eq!(o.status.code(), Some(1));
    assert!(err(&o).contains("fields.x.join"));

    let (_d2, not_json) = scratch("tools.json", "[{");
    let o = retort(&["parse", "qwen3", "--tools", &not_json], b"x");
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
    let (_d3, not_tools) = scratch("tools.json", "5");
    let o = retort(&["parse", "qwen3", "--tools", &not_tools], b"x");
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));

    for args in [
        &["parse", "qwen3", "--chunk", "0"][..],
        &["parse", "qwen3", "--prefix", "a", "--prefix-file", "b"],
        &["parse", "qwen3", "/no/such/input.txt"],
        &["parse", "qwen3", "--prefix-file", "/no/such/prompt.txt"],
        &["parse", "no-such-model"],
    ] {
        let o = retort(args, b"");
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", err(&o));
    }
}

#[test]
fn gen_prints_a_module_that_parses_as_rust() {
    let o = retort(&["gen", "qwen3"], b"");
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let code = out(&o);
    let file: syn::File = syn::parse_str(&code).expect("the module parses as Rust");
    let module = file
        .items
        .iter()
        .find_map(|i| match i {
            syn::Item::Mod(m) if m.ident == "qwen3" => Some(m),
            _ => None,
        })
        .expect("a module named after the template");
    let items = &module.content.as_ref().expect("an inline module").1;
    let names = field_names(&qwen3_path());
    let field_enum = items
        .iter()
        .find_map(|i| match i {
            syn::Item::Enum(e) if e.ident == "Field" => Some(e),
            _ => None,
        })
        .expect("a Field enum");
    assert_eq!(field_enum.variants.len(), names.len());
    let message = items
        .iter()
        .find_map(|i| match i {
            syn::Item::Struct(s) if s.ident == "Message" => Some(s),
            _ => None,
        })
        .expect("a Message struct");
    let members: Vec<String> = message
        .fields
        .iter()
        .filter_map(|f| f.ident.as_ref().map(ToString::to_string))
        .collect();
    for n in &names {
        assert!(members.contains(n), "Message has `{n}`: {members:?}");
    }

    // --out writes the same code; --name renames the module.
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("m.rs");
    let o = retort(
        &[
            "gen",
            &qwen3_path(),
            "--out",
            target.to_str().unwrap(),
            "--name",
            "qwen",
        ],
        b"",
    );
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(o.stdout.is_empty());
    let written = std::fs::read_to_string(&target).unwrap();
    let file: syn::File = syn::parse_str(&written).unwrap();
    assert!(
        file.items
            .iter()
            .any(|i| matches!(i, syn::Item::Mod(m) if m.ident == "qwen"))
    );
}

#[test]
fn gen_reports_a_bad_template_and_a_bad_destination() {
    let (_d, file) = scratch("bad.json", BAD);
    let o = retort(&["gen", &file], b"");
    assert_reports_the_mistake(&o, &file, "fields.x.join");
    assert!(o.stdout.is_empty());
    let o = retort(&["gen", "qwen3", "--out", "/no/such/dir/m.rs"], b"");
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn explain_describes_fields_delimiters_and_what_is_held() {
    let o = retort(&["explain", "qwen3"], b"");
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let text = out(&o);
    let doc = json_loads(&std::fs::read_to_string(qwen3_path()).unwrap()).unwrap();
    let doc = doc.as_map().unwrap();
    for (name, f) in doc["fields"].as_map().unwrap() {
        assert!(text.contains(name.as_str()), "names {name}");
        let f = f.as_map().unwrap();
        for key in ["open", "close"] {
            if let Some(Value::Str(lit)) = f.get(key) {
                assert!(
                    text.contains(&Value::Str(lit.clone()).to_json_string()),
                    "{lit}"
                );
            }
        }
        for key in ["open_pattern", "close_pattern"] {
            if let Some(Value::Str(p)) = f.get(key) {
                assert!(text.contains(&format!("/{p}/")), "{p}");
            }
        }
        let content = f.get("content").and_then(Value::as_str).unwrap_or("text");
        assert!(text.contains(&format!("{content}:")), "parser {content}");
    }
    assert!(text.contains("the implicit field"));
    assert!(text.contains("held"));
    assert!(text.contains("a proper prefix of it"));
    let anchor = doc["start_anchor"].as_str().unwrap();
    assert!(text.contains(&Value::Str(anchor.into()).to_json_string()));

    // Captures, transforms, repeats and the missing implicit field.
    let (_d, file) = scratch(
        "t.json",
        r#"{"start_anchor": "<a>", "fields": {"calls": {"open_pattern": "<call name=(?P<name>\\w+)>",
            "close": "</call>", "content": "json", "repeats": true, "optional": false,
            "transform": {"name": "{name}", "arguments": "{content}"}}}}"#,
    );
    let o = retort(&["explain", &file], b"");
    let text = out(&o);
    assert!(text.contains("capturing name"), "{text}");
    assert!(text.contains("{name}"), "{text}");
    assert!(text.contains("appends its value to a list"), "{text}");
    assert!(text.contains("required"), "{text}");
    assert!(text.contains("no implicit field"), "{text}");

    let (_d2, bad) = scratch("bad.json", BAD);
    assert_reports_the_mistake(&retort(&["explain", &bad], b""), &bad, "fields.x.join");
}

#[test]
fn conformance_prints_one_result_per_case() {
    let cases = workspace().join("tests/conformance/cases/hand.jsonl");
    let templates = workspace().join("templates");
    let o = retort(
        &[
            "conformance",
            cases.to_str().unwrap(),
            "--templates",
            templates.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let text = std::fs::read_to_string(&cases).unwrap();
    let n = text.lines().filter(|l| !l.trim().is_empty()).count();
    let stdout = out(&o);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), n);
    for (case, result) in text.lines().zip(&lines) {
        // Cases hold values as deep as the reference allowed.
        let case = retort::py::json_loads_with_depth(case, usize::MAX).unwrap();
        let result = retort::py::json_loads_with_depth(result, usize::MAX).unwrap();
        let problems = retort_conformance::compare(&case, &result);
        assert!(problems.is_empty(), "{problems:?}");
    }
    let o = retort(&["conformance", "/no/such/cases.jsonl"], b"");
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn every_command_has_an_example_and_the_exit_codes_in_its_help() {
    for cmd in ["check", "parse", "gen", "explain", "conformance"] {
        let o = retort(&[cmd, "--help"], b"");
        assert_eq!(o.status.code(), Some(0));
        let text = out(&o);
        assert!(text.contains("Example"), "{cmd}: {text}");
        assert!(text.contains(&format!("retort {cmd}")), "{cmd}: {text}");
        assert!(text.contains("Exit codes:"), "{cmd}: {text}");
    }
    let o = retort(&["--help"], b"");
    assert!(out(&o).contains("Exit codes:"));
}

/// `retort gen gpt-oss | head -1`: the reader goes away after one line, and
/// the command ends quietly (killed by SIGPIPE, as `cat` would be), not with
/// a panic from `println!`.
#[cfg(unix)]
#[test]
fn output_into_a_closed_pipe_ends_quietly() {
    use std::io::Read;
    use std::os::unix::process::ExitStatusExt;
    let mut child = Command::new(env!("CARGO_BIN_EXE_retort"))
        .args(["gen", "gpt-oss"])
        .current_dir(std::env::temp_dir())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let mut first = [0u8; 16];
    child
        .stdout
        .take()
        .expect("piped")
        .read_exact(&mut first)
        .expect("some output");
    // The read end is closed here (dropped): more output cannot be written.
    let o = child.wait_with_output().expect("the binary finishes");
    assert!(!err(&o).contains("panicked"), "{}", err(&o));
    assert_eq!(o.status.signal(), Some(libc_sigpipe()), "{:?}", o.status);
}

/// SIGPIPE's number on the platforms CI runs (Linux, macOS).
#[cfg(unix)]
fn libc_sigpipe() -> i32 {
    13
}

/// A prompt without the template's start anchor (here gpt-oss rendered
/// without the generation prompt) is parsed whole, as the reference does,
/// with a warning on stderr; `--require-anchor` makes it an error.
#[test]
fn a_prompt_without_the_start_anchor_is_reported() {
    let prompt = "<|start|>user<|message|>Hi<|end|>";
    let output = b"<|channel|>final<|message|>Hello!<|return|>";
    for extra in [&[][..], &["--openai"][..]] {
        let mut args = vec!["parse", "gpt-oss", "--prefix", prompt];
        args.extend_from_slice(extra);
        let o = retort(&args, output);
        assert_eq!(o.status.code(), Some(0), "{}", err(&o));
        assert!(
            err(&o).contains("start anchor does not occur in the prompt"),
            "{}",
            err(&o)
        );
        args.push("--require-anchor");
        let o = retort(&args, output);
        assert_eq!(o.status.code(), Some(1), "{}", err(&o));
        assert!(
            err(&o).contains("does not occur in the prompt"),
            "{}",
            err(&o)
        );
    }
    let o = retort(
        &[
            "parse",
            "gpt-oss",
            "--require-anchor",
            "--prefix",
            "<|start|>assistant",
        ],
        output,
    );
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(!err(&o).contains("start anchor"), "{}", err(&o));
    assert!(out(&o).contains("Hello!"), "{}", out(&o));
}

/// Output no region claims (gpt-oss prose without a channel header) is not
/// in the message, as in the reference; stderr says where it went.
#[test]
fn text_no_region_claims_is_reported_on_stderr() {
    let o = retort(
        &["parse", "gpt-oss", "--prefix", "<|start|>assistant"],
        b"The weather is sunny.",
    );
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(!out(&o).contains("sunny"), "{}", out(&o));
    assert!(
        err(&o).contains("21 bytes at byte 0 are in no region") && err(&o).contains("sunny"),
        "{}",
        err(&o)
    );
}

/// `--reasoning-format none` keeps the reasoning inline in the content, in
/// the message and in the OpenAI chunks alike; `auto` (the default) splits
/// it; another name is a usage error.
#[test]
fn reasoning_format_none_keeps_the_reasoning_in_the_content() {
    let output = b"<think>hm</think>Hi!<|im_end|>\n";
    let o = retort(&["parse", "qwen3", "--reasoning-format", "none"], output);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let message: serde_json::Value = serde_json::from_str(&out(&o)).expect("JSON");
    assert_eq!(message["content"], "<think>hm</think>Hi!");
    assert!(message.get("reasoning_content").is_none(), "{message}");
    let o = retort(&["parse", "qwen3"], output);
    let message: serde_json::Value = serde_json::from_str(&out(&o)).expect("JSON");
    assert_eq!(message["reasoning_content"], "hm");
    let o = retort(
        &[
            "parse",
            "qwen3",
            "--openai",
            "--chunk",
            "2",
            "--reasoning-format",
            "none",
        ],
        output,
    );
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let mut content = String::new();
    for line in out(&o).lines() {
        let chunk: serde_json::Value = serde_json::from_str(line).expect("a chunk");
        let delta = &chunk["choices"][0]["delta"];
        assert!(delta.get("reasoning_content").is_none(), "{line}");
        content += delta["content"].as_str().unwrap_or("");
    }
    assert_eq!(content, "<think>hm</think>Hi!");
    let o = retort(
        &["parse", "qwen3", "--reasoning-format", "sideways"],
        output,
    );
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
    assert!(err(&o).contains("sideways"), "{}", err(&o));
}
