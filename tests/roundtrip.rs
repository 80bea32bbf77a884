//! Round trip through the models' real chat templates.
//!
//! For each chat template in `../shared/chat-templates/*.jinja` (skipped
//! with a message when the directory is absent), and those of
//! `../shared/llamacpp/templates` that are a family's only chat template,
//! and four last assistant
//! turns — (a) content, (b) reasoning and content, (c) one tool call,
//! (d) two tool calls, always with tools defined — this renders the
//! conversation the way transformers does (`retort::chat`, which renders
//! byte for byte what transformers' `render_jinja_template` does): the
//! generation prompt (`add_generation_prompt=True`, without the last turn)
//! is the parser's prompt; the rendered full conversation minus that prompt,
//! cut after the first end-of-turn marker a generation stops at, is the
//! model's text. Parsing it with the family's bundled template must give the
//! message back: content and reasoning with outer whitespace ignored, tool
//! calls as name and arguments (compared as JSON).
//!
//! [`FAMILIES`] (`roundtrip/families.rs`) maps every chat template to its bundled template and lists,
//! per turn, why it cannot round trip where it cannot. The test fails on a
//! failure that is not listed, on a listed failure that now passes (so the
//! table stays true), on a chat template in the directory that the table
//! does not name, and when the registry does not recognise a chat template
//! as its family.
//!
//! `RETORT_ROUNDTRIP_DUMP=<dir>` writes each render's context and result
//! there, for `tools/roundtrip_jinja2.py`, which renders the same contexts
//! with jinja2 configured as transformers configures it and reports the
//! differences. (The renderer itself is checked against the reference by
//! the chat-template vectors, `tests/conformance/chat`.)

use retort::AssistantMessage;
use retort::chat::{ChatTemplate, DateTime, RenderInput};
use serde_json::{Value as Json, json};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

#[path = "roundtrip/families.rs"]
mod families;

use families::{FAMILIES, Family, Ids, Source, TURNS, Turn};

/// `strftime_now` reads a fixed instant (2024-07-26 12:00:00, a Friday), so
/// renders are reproducible and comparable with jinja2's.
const NOW: DateTime = DateTime {
    year: 2024,
    month: 7,
    day: 26,
    hour: 12,
    minute: 0,
    second: 0,
    microsecond: 0,
};

fn tools(flat: bool) -> Json {
    let tools = json!([
        {"type": "function", "function": {
            "name": "get_weather",
            "description": "Get the current weather in a city.",
            "parameters": {"type": "object", "properties": {
                "city": {"type": "string", "description": "The city's name."},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}
            }, "required": ["city"]}
        }},
        {"type": "function", "function": {
            "name": "get_time",
            "description": "Get the local time in a city.",
            "parameters": {"type": "object", "properties": {
                "city": {"type": "string", "description": "The city's name."}
            }, "required": ["city"]}
        }}
    ]);
    if flat {
        Json::Array(
            tools
                .as_array()
                .into_iter()
                .flatten()
                .map(|t| t["function"].clone())
                .collect(),
        )
    } else {
        tools
    }
}

const REASONING: &str = "The user wants the weather in Paris. I know it: sunny, 24 degrees.";
const CONTENT: &str = "It is sunny in Paris, 24 °C.";

/// The calls of a turn: name and arguments.
fn calls(turn: Turn) -> Vec<(&'static str, Json)> {
    match turn {
        Turn::Content | Turn::Reasoning => Vec::new(),
        Turn::OneCall => vec![("get_weather", json!({"city": "Paris", "unit": "celsius"}))],
        Turn::TwoCalls => vec![
            ("get_weather", json!({"city": "Paris", "unit": "celsius"})),
            ("get_time", json!({"city": "São Paulo \"SP\""})),
        ],
    }
}

fn call_id(ids: Ids, name: &str, index: usize) -> String {
    match ids {
        Ids::Plain => format!("call_{}", index + 1),
        Ids::NineChars => format!("call0000{}", index + 1),
        Ids::Kimi => format!("functions.{name}:{index}"),
    }
}

/// The last assistant message of a turn, in transformers' message format
/// (reasoning under both names templates read: `reasoning_content` and
/// `thinking`).
fn assistant(family: &Family, turn: Turn) -> Json {
    let mut message = json!({"role": "assistant"});
    match turn {
        Turn::Content => message["content"] = json!(CONTENT),
        Turn::Reasoning => {
            message["content"] = json!(CONTENT);
            message["reasoning_content"] = json!(REASONING);
            message["thinking"] = json!(REASONING);
        }
        Turn::OneCall | Turn::TwoCalls => {
            message["content"] = json!("");
            let calls: Vec<Json> = calls(turn)
                .into_iter()
                .enumerate()
                .map(|(i, (name, arguments))| {
                    let arguments = if family.string_arguments {
                        json!(arguments.to_string())
                    } else {
                        arguments
                    };
                    json!({"id": call_id(family.ids, name, i), "type": "function",
                           "function": {"name": name, "arguments": arguments}})
                })
                .collect();
            message["tool_calls"] = json!(calls);
        }
    }
    message
}

/// No system message unless the family needs one: several templates fold
/// it into a user turn differently in the prompt and in the conversation.
fn history(family: &Family) -> Vec<Json> {
    let mut messages = Vec::new();
    if let Some(system) = family.system {
        messages.push(json!({"role": "system", "content": system}));
    }
    messages.push(json!({"role": "user", "content": "What is the weather in Paris?"}));
    messages
}

fn context(family: &Family, messages: &[Json], add_generation_prompt: bool) -> Json {
    json!({
        "messages": messages,
        "tools": tools(family.flat_tools),
        // transformers passes `documents=None`: defined, and none.
        "documents": null,
        "add_generation_prompt": add_generation_prompt,
        "enable_thinking": family.thinking,
        "bos_token": family.bos,
        "eos_token": family.eos,
    })
}

/// Renders a context made by [`context`]: its messages, tools and
/// generation-prompt flag as render_jinja_template's arguments, the rest as
/// template variables.
fn render(template: &ChatTemplate, ctx: &Json) -> Result<String, String> {
    let mut input = RenderInput::new(ctx["messages"].as_array().cloned().unwrap_or_default());
    input.tools = ctx["tools"].as_array().cloned();
    input.documents = ctx["documents"].as_array().cloned();
    input.add_generation_prompt = ctx["add_generation_prompt"].as_bool().unwrap_or(false);
    if let Some(vars) = ctx.as_object() {
        for (k, v) in vars {
            if !matches!(
                k.as_str(),
                "messages" | "tools" | "documents" | "add_generation_prompt"
            ) {
                input.kwargs.insert(k.clone(), v.clone());
            }
        }
    }
    input.now = Some(NOW);
    template
        .render(&input)
        .map(|r| r.text)
        .map_err(|e| e.to_string())
}

/// What the parse must give back.
#[derive(Debug, PartialEq)]
struct Expected {
    content: Option<String>,
    reasoning: Option<String>,
    calls: Vec<(String, Json)>,
}

fn expected(turn: Turn) -> Expected {
    Expected {
        content: matches!(turn, Turn::Content | Turn::Reasoning).then(|| CONTENT.to_owned()),
        reasoning: (turn == Turn::Reasoning).then(|| REASONING.to_owned()),
        calls: calls(turn)
            .into_iter()
            .map(|(n, a)| (n.to_owned(), a))
            .collect(),
    }
}

fn trimmed(text: Option<&str>) -> Option<String> {
    text.map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
}

/// Renders one turn, parses it back and says what differs.
fn round_trip(
    chat: &ChatTemplate,
    family: &Family,
    template: &retort::Template,
    turn: Turn,
    dump: Option<&Path>,
) -> Result<(), String> {
    let mut messages = history(family);
    let prompt_ctx = context(family, &messages, true);
    messages.push(assistant(family, turn));
    let full_ctx = context(family, &messages, false);
    let prompt = render(chat, &prompt_ctx);
    let full = render(chat, &full_ctx);
    if let Some(dir) = dump {
        let record = json!({
            "chat_template": family.chat_template, "turn": format!("{turn:?}"),
            "prompt_context": prompt_ctx, "full_context": full_ctx,
            "prompt": prompt.as_ref().ok(), "full": full.as_ref().ok(),
        });
        let stem = family.chat_template.trim_end_matches(".jinja");
        std::fs::write(
            dir.join(format!("{stem}.{turn:?}.json")),
            record.to_string(),
        )
        .expect("write the dump");
    }
    let prompt = prompt.map_err(|e| format!("the generation prompt does not render: {e}"))?;
    let full = full.map_err(|e| format!("the conversation does not render: {e}"))?;
    let Some(rest) = full.strip_prefix(prompt.as_str()) else {
        let common = prompt
            .char_indices()
            .zip(full.chars())
            .find(|((_, a), b)| a != b)
            .map_or(prompt.len().min(full.len()), |((i, _), _)| i);
        return Err(format!(
            "the generation prompt is not a prefix of the conversation; they part at byte {common}: \
             prompt …{:?} / conversation …{:?}",
            tail(&prompt[common..], 60),
            tail(&full[common..], 60)
        ));
    };
    let cut = family
        .stops
        .iter()
        .filter_map(|stop| rest.find(stop).map(|i| i + stop.len()))
        .min()
        .unwrap_or(rest.len());
    let text = &rest[..cut];
    let mut parser = template
        .parser(&prompt)
        .map_err(|e| format!("the prompt does not parse: {e}"))?;
    parser
        .feed(text)
        .map_err(|e| format!("the text {text:?} does not parse: {e}"))?;
    let (message, _) = parser
        .finalize()
        .map_err(|e| format!("the text {text:?} does not parse: {e}"))?;
    let got = Expected {
        content: trimmed(message.content()),
        reasoning: trimmed(message.reasoning()),
        calls: message
            .tool_calls()
            .into_iter()
            .map(|call| {
                let arguments = serde_json::to_value(&call.arguments).unwrap_or(Json::Null);
                // Arguments written as JSON text compare as the JSON they hold.
                let arguments = match &arguments {
                    Json::String(s) => serde_json::from_str(s).unwrap_or(arguments),
                    _ => arguments,
                };
                (call.name, arguments)
            })
            .collect(),
    };
    let want = expected(turn);
    if got == want {
        Ok(())
    } else {
        Err(format!(
            "text {text:?}\n      parsed   {got:?}\n      expected {want:?}"
        ))
    }
}

fn tail(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

fn chat_templates_dir() -> Option<PathBuf> {
    let dir = retort_tests::root().join("../shared/chat-templates");
    dir.is_dir().then_some(dir)
}

#[test]
fn chat_templates_round_trip() {
    let Some(dir) = chat_templates_dir() else {
        eprintln!("skipped: ../shared/chat-templates is absent");
        return;
    };
    let dump = std::env::var_os("RETORT_ROUNDTRIP_DUMP").map(PathBuf::from);
    if let Some(d) = &dump {
        std::fs::create_dir_all(d).expect("create the dump directory");
    }
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .expect("list the chat templates")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".jinja"))
        .collect();
    files.sort();
    let mut problems = Vec::new();
    for file in &files {
        if !FAMILIES
            .iter()
            .any(|f| f.source == Source::ChatTemplates && f.chat_template == file)
        {
            problems.push(format!(
                "{file}: not in FAMILIES; map it to a template or say why not"
            ));
        }
    }
    let mut report = String::new();
    let (mut passed, mut known) = (0, 0);
    for family in FAMILIES {
        let path = match family.source {
            Source::ChatTemplates => dir.join(family.chat_template),
            Source::LlamaCpp => dir.join("../llamacpp/templates").join(family.chat_template),
        };
        let Ok(source) = std::fs::read_to_string(&path) else {
            problems.push(format!("{}: listed but absent", family.chat_template));
            continue;
        };
        let chat = match ChatTemplate::new(&source) {
            Ok(chat) => chat,
            Err(e) => {
                problems.push(format!("{}: does not compile: {e}", family.chat_template));
                continue;
            }
        };
        let Some(name) = family.template else {
            for (_, why) in family.known {
                let _ = writeln!(report, "{}: not bundled: {why}", family.chat_template);
            }
            continue;
        };
        let bundled = match retort::registry::family(name).map(retort::registry::Family::template) {
            Ok(Ok(t)) => t,
            Ok(Err(e)) => {
                problems.push(format!(
                    "{}: templates/{name}.json: {e}",
                    family.chat_template
                ));
                continue;
            }
            Err(e) => {
                problems.push(format!("{}: {e}", family.chat_template));
                continue;
            }
        };
        match retort::registry::from_chat_template(&source) {
            Ok(found) if found.name() == name => {}
            Ok(found) => problems.push(format!(
                "{}: the registry recognises it as {}, not {name}",
                family.chat_template,
                found.name()
            )),
            Err(e) => problems.push(format!("{}: the registry: {e}", family.chat_template)),
        }
        let known_reasons: BTreeMap<Turn, &str> = family.known.iter().copied().collect();
        for turn in TURNS {
            let outcome = round_trip(&chat, family, &bundled, turn, dump.as_deref());
            match (outcome, known_reasons.get(&turn)) {
                (Ok(()), None) => passed += 1,
                (Ok(()), Some(_)) => problems.push(format!(
                    "{} {turn:?}: listed as failing but round trips; drop the entry",
                    family.chat_template
                )),
                (Err(e), Some(why)) => {
                    known += 1;
                    let _ = writeln!(
                        report,
                        "{} {turn:?} ({name}): known: {why}\n      {e}",
                        family.chat_template
                    );
                }
                (Err(e), None) => {
                    problems.push(format!("{} {turn:?} ({name}): {e}", family.chat_template))
                }
            }
        }
    }
    eprintln!("{report}");
    eprintln!(
        "round trip: {passed} passed, {known} known failures, {} problems",
        problems.len()
    );
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

#[test]
fn tojson_is_python_json_dumps() {
    let render = |src: &str, ctx: Json| {
        let template = ChatTemplate::new(src).unwrap_or_else(|e| panic!("{src}: {e}"));
        let mut input = RenderInput::new(Vec::new());
        input.kwargs = ctx.as_object().cloned().unwrap_or_default();
        template
            .render(&input)
            .map(|r| r.text)
            .unwrap_or_else(|e| panic!("{src}: {e}"))
    };
    let value = json!({"b": [1, 2.5, null, true], "a": "é\"\n", "c": {}});
    // Expected strings are Python's json.dumps of the same value.
    assert_eq!(
        render("{{ v|tojson }}", json!({"v": value})),
        r#"{"b": [1, 2.5, null, true], "a": "é\"\n", "c": {}}"#
    );
    assert_eq!(
        render(
            "{{ v|tojson(ensure_ascii=True, sort_keys=True) }}",
            json!({"v": value})
        ),
        r#"{"a": "\u00e9\"\n", "b": [1, 2.5, null, true], "c": {}}"#
    );
    assert_eq!(
        render(
            "{{ v|tojson(indent=2) }}",
            json!({"v": {"x": [1], "y": []}})
        ),
        "{\n  \"x\": [\n    1\n  ],\n  \"y\": []\n}"
    );
    assert_eq!(
        render(
            "{{ v|tojson(separators=(',', ':')) }}",
            json!({"v": {"x": [1, 2]}})
        ),
        r#"{"x":[1,2]}"#
    );
    assert_eq!(
        render(
            "{{ v|tojson }}",
            json!({"v": [1e16, 1e-5, 0.1, 123456.0, -0.0]})
        ),
        "[1e+16, 1e-05, 0.1, 123456.0, -0.0]"
    );
    assert_eq!(
        render("{{ v|tojson(ensure_ascii=True) }}", json!({"v": "😀"})),
        r#""\ud83d\ude00""#
    );
}
