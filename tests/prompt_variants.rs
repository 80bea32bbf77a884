//! Every prompt variant a chat template writes, against the bundled
//! template that covers it: for each chat template of
//! `../shared/llamacpp/templates` that a bundled template covers (the
//! `llamacpp` lists of `tests/models.json`), the generation prompt is
//! rendered (`retort::chat`, transformers' rendering) for every variant the
//! template reads — `enable_thinking` unset, true and false, with and
//! without tools, each `reasoning_effort` level where the template reads
//! one, and with a tool result as the last message — and then:
//!
//! - the template's start anchor occurs in the prompt
//!   (`Parser::anchor_missing` is false): otherwise the whole prompt would
//!   be parsed as output, as Reka-Edge's thinking-off prompt once was;
//! - the prompt alone gives no content and no tool calls: the turns before
//!   the generation prompt (a tool call and its result, say) never leak into
//!   the message;
//! - where the prompt with `enable_thinking=false` differs from the one
//!   with `true` (the template honours the switch), an answer after the
//!   thinking-off prompt is no reasoning.
//!
//! `bos_token` and `eos_token` are empty strings, as in llama.cpp's renders
//! of these cases.
//!
//! A variant the chat template itself refuses to render (its own
//! `raise_exception`) is reported and skipped. The data lives outside the
//! repository; without it the test says so and passes.

use retort::Template;
use retort::chat::{ChatTemplate, DateTime, RenderInput};
use retort_tests::root;
use serde_json::{Value as Json, json};
use std::path::PathBuf;

fn tool() -> Json {
    json!({"type": "function", "function": {"name": "get_weather", "description": "The weather in a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}})
}

fn conversation(tool_result_last: bool) -> Vec<Json> {
    let mut m = vec![
        json!({"role": "system", "content": "You are a helpful assistant."}),
        json!({"role": "user", "content": "What's the weather in Paris?"}),
    ];
    if tool_result_last {
        m.push(json!({"role": "assistant", "content": "", "tool_calls": [{"id": "call1", "type": "function",
            "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]}));
        m.push(json!({"role": "tool", "tool_call_id": "call1", "name": "get_weather", "content": "Sunny, 21 C"}));
    }
    m
}

/// One variant: its name and the render's input.
fn variants(source: &str) -> Vec<(String, RenderInput)> {
    let mut thinking: Vec<Option<bool>> = vec![None];
    if source.contains("enable_thinking") {
        thinking.extend([Some(true), Some(false)]);
    }
    let mut efforts: Vec<Option<&str>> = vec![None];
    if source.contains("reasoning_effort") {
        efforts.extend([Some("low"), Some("medium"), Some("high")]);
    }
    let mut out = Vec::new();
    for think in &thinking {
        for effort in &efforts {
            for tools in [false, true] {
                for tool_last in [false, true] {
                    if tool_last && !tools {
                        continue;
                    }
                    let mut input = RenderInput::new(conversation(tool_last));
                    input.add_generation_prompt = true;
                    input.now = Some(DateTime::new(2026, 1, 1, 0, 0, 0));
                    input.kwargs.insert("bos_token".into(), Json::from(""));
                    input.kwargs.insert("eos_token".into(), Json::from(""));
                    if tools {
                        input.tools = Some(vec![tool()]);
                    }
                    if let Some(t) = think {
                        input
                            .kwargs
                            .insert("enable_thinking".into(), Json::Bool(*t));
                    }
                    if let Some(e) = effort {
                        input
                            .kwargs
                            .insert("reasoning_effort".into(), Json::from(*e));
                    }
                    let name = format!(
                        "enable_thinking={think:?} reasoning_effort={effort:?} tools={tools} tool_result_last={tool_last}"
                    );
                    out.push((name, input));
                }
            }
        }
    }
    out
}

#[test]
fn every_prompt_variant_has_the_anchor_and_the_state_it_means() {
    let shared =
        std::env::var_os("RETORT_SHARED").map_or_else(|| root().join("../shared"), PathBuf::from);
    let dir = shared.join("llamacpp/templates");
    if !dir.is_dir() {
        eprintln!("skipped: {} is not there", dir.display());
        return;
    }
    let doc: Json = serde_json::from_str(
        &std::fs::read_to_string(root().join("tests/models.json")).expect("models.json"),
    )
    .expect("tests/models.json is JSON");
    let (mut checked, mut refused) = (0, 0);
    let mut problems = Vec::new();
    for m in doc["models"].as_array().expect("models") {
        let family = m["template"].as_str().expect("template");
        let template = Template::from_json(
            &std::fs::read_to_string(root().join(format!("templates/{family}.json")))
                .expect("the template exists"),
        )
        .expect("the bundled template loads");
        for chat in m["llamacpp"].as_array().into_iter().flatten() {
            let chat = chat.as_str().expect("a name");
            let source = std::fs::read_to_string(dir.join(format!("{chat}.jinja")))
                .unwrap_or_else(|e| panic!("{chat}.jinja: {e}"));
            let ct = ChatTemplate::new(&source).unwrap_or_else(|e| panic!("{chat}: {e}"));
            let mut prompt_of = std::collections::BTreeMap::new();
            let mut thinking_off_open = Vec::new();
            for (name, input) in variants(&source) {
                let prompt = match ct.render(&input) {
                    Ok(r) => r.text,
                    Err(e) => {
                        refused += 1;
                        eprintln!("{chat} [{name}]: the chat template refuses: {e}");
                        continue;
                    }
                };
                checked += 1;
                let parser = template.parser(&prompt).expect("the prompt is processed");
                let tail: String = {
                    let chars: Vec<char> = prompt.chars().collect();
                    chars[chars.len().saturating_sub(80)..].iter().collect()
                };
                if parser.anchor_missing() {
                    problems.push(format!(
                        "{chat} [{name}] ({family}): the start anchor is not in the prompt, which ends {tail:?}"
                    ));
                }
                if name.starts_with("enable_thinking=Some(false)") {
                    // An answer after the prompt: no reasoning. (A close the
                    // prompt ends with may still be held, since a pattern
                    // can grow; the model's first byte decides it.)
                    let reasoning = template
                        .parse("The weather is sunny.", &prompt)
                        .map(|m| m.get("reasoning_content").is_some())
                        .unwrap_or(true);
                    if reasoning {
                        thinking_off_open.push((name.clone(), tail.clone()));
                    }
                }
                match template.parse("", &prompt) {
                    Ok(message) => {
                        let leaked: Vec<&str> = ["content", "tool_calls"]
                            .into_iter()
                            .filter(|k| message.get(*k).is_some())
                            .collect();
                        if !leaked.is_empty() {
                            problems.push(format!(
                                "{chat} [{name}] ({family}): the prompt alone gives {leaked:?}: {message:?}; the prompt ends {tail:?}"
                            ));
                        }
                    }
                    Err(e) => problems.push(format!(
                        "{chat} [{name}] ({family}): the prompt alone fails: {e}"
                    )),
                }
                prompt_of.insert(name, prompt);
            }
            // Thinking off, where the template honours the switch: an
            // answer is no reasoning.
            for (name, tail) in thinking_off_open {
                let on_name = name.replace("Some(false)", "Some(true)");
                let off_name = name.clone();
                if prompt_of.get(&on_name) == prompt_of.get(&off_name) {
                    continue;
                }
                problems.push(format!(
                    "{chat} [{name}] ({family}): after the thinking-off prompt an answer is reasoning; the prompt ends {tail:?}"
                ));
            }
        }
    }
    eprintln!("{checked} prompt variants checked; {refused} refused by their chat templates");
    assert!(checked > 100, "{checked} variants");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
