//! The demo: a SmolLM3 generation streamed through a parser compiled from
//! `templates/smollm3.json` at build time, in chunks of a few characters as
//! a model server would deliver them.
//!
//! `cargo run -p retort-example`

use retort::{AssistantMessage, Event};

retort::response_template!("../templates/smollm3.json");

/// The prompt the chat template rendered, ending where the model starts.
const PROMPT: &str = "<|im_start|>system\nYou can call get_weather.<|im_end|>\n\
<|im_start|>user\nIs it warm in Lisbon?<|im_end|>\n<|im_start|>assistant\n";

/// A generation in SmolLM3's format: reasoning, an answer, a tool call.
const GENERATION: &str = "<think>\nThe user wants the weather in Lisbon; I should check.\n</think>\n\
Let me look that up.<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Lisbon\", \"unit\": \"celsius\"}}\n</tool_call><|im_end|>";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut parser = smollm3::Parser::new(PROMPT)?;
    let chars: Vec<char> = GENERATION.chars().collect();
    for chunk in chars.chunks(5) {
        let piece: String = chunk.iter().collect();
        for event in parser.feed(&piece)? {
            show(event);
        }
    }
    let (message, events) = parser.finalize()?;
    for event in events {
        show(event);
    }
    println!("\n\nmessage: {}", serde_json::to_string_pretty(&message)?);
    println!("content:   {:?}", message.content());
    println!("reasoning: {:?}", message.reasoning());
    for call in message.tool_calls() {
        println!(
            "tool call: {}({:?})",
            call.name,
            call.arguments.to_json_string()
        );
    }
    Ok(())
}

fn show(event: Event<'_, smollm3::Field>) {
    match event {
        Event::RegionOpen { field } => print!("\n[{field}] "),
        Event::RegionChunk { text, .. } => print!("{text}"),
        Event::RegionClose { field, value } => {
            print!("\n[/{field}] = {}", value.to_json_string())
        }
    }
}
