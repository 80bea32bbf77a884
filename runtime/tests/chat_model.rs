//! The glue layer's loop — render, generate, parse, append, render — with
//! `retort::chat::ChatModel`: the parsed message, appended to the
//! conversation, renders exactly as the same message written by hand.
#![cfg(feature = "chat")]

use retort::chat::{ChatModel, ChatTemplates, RenderInput};
use serde_json::{Value as Json, json};
use std::path::PathBuf;

fn shared() -> PathBuf {
    std::env::var_os("RETORT_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared"))
}

/// One turn of the loop: the model's generation parsed and appended gives
/// the same next prompt as `by_hand` appended.
fn loop_turn(model: &ChatModel, generation: &str, by_hand: Json) {
    let mut conversation = vec![json!({"role": "user", "content": "What's the weather in Paris?"})];
    let mut input = RenderInput::new(conversation.clone());
    input.tools = Some(vec![
        json!({"type": "function", "function": {"name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}),
    ]);
    let prompt = model.prompt(&input).expect("the prompt renders");
    let message = model
        .parse(&prompt, generation)
        .expect("the generation parses");
    let parsed = ChatModel::to_json(&message);
    let mut hand = conversation.clone();
    hand.push(by_hand);
    conversation.push(parsed.clone());
    input.messages = conversation;
    let from_parse = model.render(&input).expect("renders").text;
    input.messages = hand;
    let from_hand = model.render(&input).expect("renders").text;
    assert_eq!(from_parse, from_hand, "parsed: {parsed}");
}

#[test]
fn a_parsed_message_renders_like_one_written_by_hand() {
    let config = json!({
        "chat_template": "{% for m in messages %}<|im_start|>{{ m.role }}\n\
            {% if m.reasoning_content %}<think>\n{{ m.reasoning_content }}\n</think>\n\n{% endif %}\
            {% if m.content %}{{ m.content }}{% endif %}\
            {% for c in m.tool_calls or [] %}\n<tool_call>\n{{ {'name': c.function.name, 'arguments': c.function.arguments} | tojson }}\n</tool_call>{% endfor %}\
            <|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}\
            {#- Qwen3's own template names these: <args-json-object> enable_thinking #}",
    });
    let model = ChatModel::from_tokenizer_config(&config.to_string()).expect("recognised");
    assert_eq!(model.family().map(|f| f.name()), Some("qwen3"));
    loop_turn(
        &model,
        "<think>\nThe user wants the weather.\n</think>\n\nLet me check.\n<tool_call>\n\
         {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call><|im_end|>\n",
        json!({"role": "assistant", "reasoning_content": "The user wants the weather.",
               "content": "Let me check.",
               "tool_calls": [{"type": "function", "function": {"name": "get_weather",
                               "arguments": {"city": "Paris"}}}]}),
    );
}

/// With the real Qwen3 chat template (read from the shared corpus when it
/// is beside the repository) and the bundled qwen3 template.
#[test]
fn the_real_qwen3_chat_template_closes_the_loop() {
    let path = shared().join("chat-templates/qwen3.jinja");
    let Ok(source) = std::fs::read_to_string(&path) else {
        eprintln!("skipped: {} is absent", path.display());
        return;
    };
    let chat = retort::chat::ChatTemplate::new(&source).expect("compiles");
    let template = retort::registry::family("qwen3")
        .expect("bundled")
        .template()
        .expect("loads");
    let model = ChatModel::new(ChatTemplates::single(chat), template);
    loop_turn(
        &model,
        "<think>\nThe user wants the weather.\n</think>\n\nLet me check.\n<tool_call>\n\
         {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call><|im_end|>",
        json!({"role": "assistant", "reasoning_content": "The user wants the weather.",
               "content": "Let me check.",
               "tool_calls": [{"type": "function", "function": {"name": "get_weather",
                               "arguments": {"city": "Paris"}}}]}),
    );
}
