//! Templates compiled by `response_template!`: typed messages and events,
//! and the same results as the run-time mode on the vectors that use them.

use retort::{AssistantMessage, Event, Template, Value};
use retort_conformance::{compare, field, run_case_with};
use retort_tests::{read_cases, root};

retort::response_template!("../templates/smollm3.json");
retort::response_template!("../templates/gpt-oss.json");
retort::response_template!("../templates/qwen3-coder.json", name = coder);

retort_tests::compiled_runner!(Smollm3, Macro, AnyParser);

/// The three macro-compiled templates behind one runner, to replay vectors.
#[derive(Clone, Copy)]
pub enum Macro {
    Smollm3,
    GptOss,
    Coder,
}

/// What `compiled_runner!` needs: parsers with a common interface.
pub enum AnyParser {
    Smollm3(smollm3::Parser),
    GptOss(gpt_oss::Parser),
    Coder(coder::Parser),
}

/// Messages of the three.
pub enum AnyMessage {
    Smollm3(smollm3::Message),
    GptOss(gpt_oss::Message),
    Coder(coder::Message),
}

impl AnyMessage {
    fn to_value(&self) -> Value {
        match self {
            AnyMessage::Smollm3(m) => m.to_value(),
            AnyMessage::GptOss(m) => m.to_value(),
            AnyMessage::Coder(m) => m.to_value(),
        }
    }
}

impl Macro {
    fn parser(self, prefix: &str) -> Result<AnyParser, retort::ParseError> {
        Ok(match self {
            Macro::Smollm3 => AnyParser::Smollm3(smollm3::Parser::new(prefix)?),
            Macro::GptOss => AnyParser::GptOss(gpt_oss::Parser::new(prefix)?),
            Macro::Coder => AnyParser::Coder(coder::Parser::new(prefix)?),
        })
    }
    fn parser_with_tools(
        self,
        prefix: &str,
        tools: &Value,
    ) -> Result<AnyParser, retort::ParseError> {
        Ok(match self {
            Macro::Smollm3 => AnyParser::Smollm3(smollm3::Parser::with_tools(prefix, tools)?),
            Macro::GptOss => AnyParser::GptOss(gpt_oss::Parser::with_tools(prefix, tools)?),
            Macro::Coder => AnyParser::Coder(coder::Parser::with_tools(prefix, tools)?),
        })
    }
}

impl AnyParser {
    fn initial_events(&self) -> &[retort::OwnedEvent] {
        match self {
            AnyParser::Smollm3(p) => p.initial_events(),
            AnyParser::GptOss(p) => p.initial_events(),
            AnyParser::Coder(p) => p.initial_events(),
        }
    }
    fn feed<'a>(&'a mut self, text: &'a str) -> Result<retort::Events<'a>, retort::ParseError> {
        Ok(match self {
            AnyParser::Smollm3(p) => p.feed(text)?.untyped(),
            AnyParser::GptOss(p) => p.feed(text)?.untyped(),
            AnyParser::Coder(p) => p.feed(text)?.untyped(),
        })
    }
    fn finalize(&mut self) -> Result<(AnyMessage, retort::Events<'_>), retort::ParseError> {
        Ok(match self {
            AnyParser::Smollm3(p) => {
                let (m, e) = p.finalize()?;
                (AnyMessage::Smollm3(m), e.untyped())
            }
            AnyParser::GptOss(p) => {
                let (m, e) = p.finalize()?;
                (AnyMessage::GptOss(m), e.untyped())
            }
            AnyParser::Coder(p) => {
                let (m, e) = p.finalize()?;
                (AnyMessage::Coder(m), e.untyped())
            }
        })
    }
}

#[test]
fn the_vectors_of_macro_compiled_templates_pass() {
    let mut ran = 0;
    for file in ["fuzz-1000.jsonl", "hand.jsonl"] {
        for case in read_cases(&root().join("tests/conformance/cases").join(file)) {
            let m = match field(&case, "template").and_then(Value::as_str) {
                Some("smollm3") => Macro::Smollm3,
                Some("gpt-oss") => Macro::GptOss,
                Some("qwen3-coder") => Macro::Coder,
                _ => continue,
            };
            let result = run_case_with(&case, &Smollm3(m));
            let problems = compare(&case, &result);
            assert!(
                problems.is_empty(),
                "{:?}: {problems:?}",
                field(&case, "id")
            );
            ran += 1;
        }
    }
    assert!(ran >= 30, "only {ran} cases use the three templates");
}

#[test]
fn messages_and_events_are_typed() {
    let prompt = "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n";
    let mut p = smollm3::Parser::new(prompt).unwrap();
    let mut opened = Vec::new();
    for piece in [
        "<think>Greet them.</think>Hello",
        "!<tool_call>{\"name\": \"wave\", \"arguments\": {\"times\": 2}}</tool_call>",
    ] {
        for ev in p.feed(piece).unwrap() {
            if let Event::RegionOpen { field } = ev {
                opened.push(field);
            }
        }
    }
    let (msg, _) = p.finalize().unwrap();
    assert_eq!(
        opened,
        [
            smollm3::Field::ReasoningContent,
            smollm3::Field::Content,
            smollm3::Field::ToolCalls
        ]
    );
    assert_eq!(msg.role, "assistant");
    assert_eq!(msg.reasoning_content.as_deref(), Some("Greet them."));
    assert_eq!(msg.content.as_deref(), Some("Hello!"));
    let calls = msg.tool_calls.as_ref().unwrap();
    assert_eq!(calls[0].type_, "function");
    // The model-agnostic view.
    assert_eq!(msg.reasoning(), Some("Greet them."));
    assert_eq!(AssistantMessage::tool_calls(&msg)[0].name, "wave");
    // The typed message is the run-time message.
    let t = Template::from_json(
        &std::fs::read_to_string(root().join("templates/smollm3.json")).unwrap(),
    )
    .unwrap();
    let text = "<think>Greet them.</think>Hello!<tool_call>{\"name\": \"wave\", \"arguments\": {\"times\": 2}}</tool_call>";
    assert_eq!(msg.to_value(), Value::Map(t.parse(text, prompt).unwrap()));
    // serde sees the reference's keys.
    let json = serde_json::to_value(&msg).unwrap();
    assert_eq!(json["tool_calls"][0]["type"], "function");
    assert_eq!(json["reasoning_content"], "Greet them.");
    assert!(json.get("thinking").is_none());
}

/// A dict from JSON text, in the run-time form.
fn map(json: &str) -> retort::Map {
    match retort::py::json_loads(json).unwrap() {
        Value::Map(m) => m,
        other => panic!("not a dict: {other:?}"),
    }
}

#[test]
fn typed_messages_read_dicts_by_key_whatever_their_order() {
    // Keys in any order, and keys the type does not know, read the same.
    let m = map(
        r#"{"content": "Hi", "extra": 1, "tool_calls": [{"function": {"name": "f"}, "type": "function"}], "role": "assistant"}"#,
    );
    assert!(smollm3::Message::fits(&m));
    let msg = smollm3::Message::from_map(&m).unwrap();
    assert_eq!(msg.role, "assistant");
    assert_eq!(msg.content.as_deref(), Some("Hi"));
    assert_eq!(msg.reasoning_content, None);
    let calls = msg.tool_calls.as_ref().unwrap();
    assert_eq!(calls[0].type_, "function");
    assert_eq!(calls[0].function, Value::Map(map(r#"{"name": "f"}"#)));
    // Written back in the type's order, without the unknown key.
    assert_eq!(
        msg.to_map(),
        map(
            r#"{"role": "assistant", "tool_calls": [{"type": "function", "function": {"name": "f"}}], "content": "Hi"}"#
        )
    );
}

#[test]
fn typed_messages_report_the_first_mismatch_in_member_order() {
    // A required key missing.
    let m = map(r#"{"content": "Hi"}"#);
    assert!(!smollm3::Message::fits(&m));
    let e = smollm3::Message::from_map(&m).unwrap_err();
    assert_eq!(
        (e.path.as_str(), e.expected, e.found),
        ("role", "a value", "nothing")
    );
    // Two keys of the wrong type, the later one first in the dict: the
    // member declared first is the one reported.
    let m = map(r#"{"content": 5, "role": "assistant", "reasoning_content": [1]}"#);
    assert!(!smollm3::Message::fits(&m));
    let e = smollm3::Message::from_map(&m).unwrap_err();
    assert_eq!(e.path, "reasoning_content");
    // Inside a list of structs: the item's own required key.
    let m = map(r#"{"role": "assistant", "tool_calls": [{"function": {}}]}"#);
    assert!(!smollm3::Message::fits(&m));
    let e = smollm3::Message::from_map(&m).unwrap_err();
    assert_eq!(e.path, "tool_calls[0].type");
    // A list where a dict belongs.
    let m = map(r#"{"role": "assistant", "tool_calls": [[]]}"#);
    assert!(!smollm3::Message::fits(&m));
    assert!(smollm3::Message::from_map(&m).is_err());
}

retort::response_template!("fixtures/optional-name.json", name = optional_name);

/// Everything a parser gives for `text` fed in `step`-character pieces
/// (the whole text when `step` is 0): each call's events, what the message
/// held after each call, the message (or the error) and the malformed
/// regions, in the run-time form.
type Run = (
    Vec<Vec<retort::OwnedEvent>>,
    Vec<retort::Map>,
    Result<retort::Map, String>,
    Vec<String>,
);

fn pieces(text: &str, step: usize) -> Vec<&str> {
    if step == 0 {
        vec![text]
    } else {
        retort_tests::char_pieces(text, step)
    }
}

fn run_compiled(text: &str, step: usize, lenient: bool) -> Run {
    let options = retort::ParserOptions::new().lenient(lenient);
    let mut p = optional_name::Parser::with_options("<s>", options, None).unwrap();
    let (mut events, mut so_far) = (Vec::new(), Vec::new());
    for piece in pieces(text, step) {
        match p.feed(piece) {
            Ok(ev) => events.push(ev.untyped().to_vec()),
            Err(e) => return (events, so_far, Err(e.message), Vec::new()),
        }
        so_far.push(p.engine().parsed_so_far());
    }
    let malformed =
        |p: &optional_name::Parser| p.malformed().iter().map(|m| m.raw.clone()).collect();
    match p.finalize() {
        Ok((message, last)) => {
            events.push(last.untyped().to_vec());
            let Value::Map(message) = message.to_value() else {
                panic!("not a dict")
            };
            (events, so_far, Ok(message), malformed(&p))
        }
        Err(e) => (events, so_far, Err(e.message), malformed(&p)),
    }
}

/// The compiled parser's message in the run-time form (`finalize_map`:
/// the values built in their types spilled back into dicts).
fn map_compiled(text: &str, step: usize, lenient: bool) -> Result<retort::Map, String> {
    let options = retort::ParserOptions::new().lenient(lenient);
    let mut p = optional_name::Parser::with_options("<s>", options, None).unwrap();
    for piece in pieces(text, step) {
        p.feed(piece).map_err(|e| e.message)?;
    }
    let (map, _) = p.finalize_map().map_err(|e| e.message)?;
    Ok(map)
}

fn run_runtime(t: &Template, text: &str, step: usize, lenient: bool) -> Run {
    let options = retort::ParserOptions::new().lenient(lenient);
    let mut p = t.parser_with("<s>", options, None).unwrap();
    let (mut events, mut so_far) = (Vec::new(), Vec::new());
    for piece in pieces(text, step) {
        match p.feed(piece) {
            Ok(ev) => events.push(ev.to_vec()),
            Err(e) => return (events, so_far, Err(e.message), Vec::new()),
        }
        so_far.push(p.parsed_so_far());
    }
    let malformed = |p: &retort::Parser<'_>| p.malformed().iter().map(|m| m.raw.clone()).collect();
    match p.finalize() {
        Ok((message, last)) => {
            events.push(last.to_vec());
            (events, so_far, Ok(message), malformed(&p))
        }
        Err(e) => (events, so_far, Err(e.message), malformed(&p)),
    }
}

/// Tool calls built straight into the generated structs give what the
/// engine's transform gives: the message, each call's events (the close
/// event's dict is made from the struct when read), the message so far,
/// and, where a region needs the transform (a call without the `name`
/// group raises its `KeyError`), the same error or, leniently, the same
/// malformed region, with the calls built before it moved into the
/// message's list and the calls after it built there. The transform uses
/// the `name` group twice: the first placeholder copies its text, the last
/// moves it out of the region's groups.
#[test]
fn tool_calls_built_in_their_types_equal_the_transforms_dicts() {
    let t = Template::from_json(
        &std::fs::read_to_string(root().join("tests/fixtures/optional-name.json")).unwrap(),
    )
    .unwrap();
    let texts = [
        r#"<call name=a>{"x": 1}</call>hi<call name=b>[2, {"y": null}]</call>!<end>"#,
        r#"<call name=a>{"x": 1}</call><call>{"y": 2}</call><call name=c>3</call><end>"#,
        r#"<call>{"y": 2}</call><call name=c>3</call>tail<end>"#,
        r#"<call name=a>{"x": 1}</call><call name=b>not json</call><end>"#,
        r#"<call name=a>{"x": 1}</call><call name=b>{"open": "#,
        "no calls<end>",
    ];
    let mut compared = 0;
    for text in texts {
        for lenient in [false, true] {
            for step in [0, 1, 3, 7] {
                let compiled = run_compiled(text, step, lenient);
                let runtime = run_runtime(&t, text, step, lenient);
                // Compared as their debug text, which keeps the dicts'
                // order (a `Map` compares equal in any order).
                assert_eq!(
                    format!("{:?}", map_compiled(text, step, lenient)),
                    format!("{:?}", runtime.2),
                    "{text:?}, lenient {lenient}, step {step}: finalize_map"
                );
                assert_eq!(
                    format!("{compiled:?}"),
                    format!("{runtime:?}"),
                    "{text:?}, lenient {lenient}, step {step}"
                );
                compared += 1;
            }
        }
    }
    assert_eq!(compared, texts.len() * 8);
    // With typed regions off (as the OpenAI chunks run a compiled engine),
    // or turned off after calls were built in their types, the engine
    // builds the dicts: the same events and message.
    for text in texts {
        for off_after in [0, 12] {
            let mut p = optional_name::Parser::new("<s>").unwrap().into_engine();
            let mut r = t.parser("<s>").unwrap();
            for (fed, piece) in pieces(text, 3).into_iter().enumerate() {
                if fed == off_after {
                    p.typed_regions(false);
                }
                let ours = p.feed(piece).map(|e| format!("{:?}", e.to_vec()));
                let theirs = r.feed(piece).map(|e| format!("{:?}", e.to_vec()));
                assert_eq!(ours.is_ok(), theirs.is_ok(), "{text:?}");
                if let (Ok(ours), Ok(theirs)) = (ours, theirs) {
                    assert_eq!(ours, theirs, "{text:?}");
                } else {
                    break;
                }
            }
            let ours = p.finalize().map(|(m, e)| format!("{m:?} {:?}", e.to_vec()));
            let theirs = r.finalize().map(|(m, e)| format!("{m:?} {:?}", e.to_vec()));
            assert_eq!(
                ours.map_err(|e| e.message),
                theirs.map_err(|e| e.message),
                "{text:?}"
            );
        }
    }
    // The cases cover what they are about: calls that the types took, a
    // region that needed the transform after them, and its error.
    let (_, _, message, _) = run_runtime(&t, texts[0], 0, false);
    let message = message.unwrap();
    assert_eq!(message["tool_calls"].as_list().map(|l| l.len()), Some(2));
    let mut p = optional_name::Parser::new("<s>").unwrap();
    p.feed(texts[0]).unwrap();
    let (typed, _) = p.finalize().unwrap();
    let call = &typed.tool_calls.as_deref().expect("two calls")[1];
    assert_eq!((call.id.as_str(), call.function.name.as_str()), ("b", "b"));
    let (_, _, strict, _) = run_runtime(&t, texts[1], 0, false);
    assert!(strict.unwrap_err().contains("KeyError"));
    let (_, _, lenient, malformed) = run_runtime(&t, texts[1], 0, true);
    assert_eq!(
        lenient.unwrap()["tool_calls"].as_list().map(|l| l.len()),
        Some(2)
    );
    assert_eq!(malformed, [r#"{"y": 2}"#]);
}
