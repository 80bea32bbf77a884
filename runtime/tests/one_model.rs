//! One model, one feature: this test is built only with `model-qwen3`
//! (`required-features` in Cargo.toml), and CI builds it with no other
//! feature:
//!
//! ```sh
//! cargo test -p retort --no-default-features --features model-qwen3 --test one_model
//! ```
//!
//! so it proves that `retort::models::qwen3::Parser` stands on that feature
//! alone, as an application that depends on `retort` with only it sees.

use retort::models::qwen3;
use retort::{AssistantMessage, Event};

const PROMPT: &str = "<|im_start|>user\nWeather in Paris?<|im_end|>\n<|im_start|>assistant\n";
const OUTPUT: &str = "<think>Need the weather tool.</think>\n\nLet me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": [1, 2]}}\n</tool_call><|im_end|>";

#[test]
fn the_compiled_parser_streams_a_typed_message() {
    let mut parser = qwen3::Parser::new(PROMPT).expect("the prompt parses");
    let mut shown = String::new();
    // Three-byte pieces (on char boundaries): every delimiter is split.
    let mut pieces = Vec::new();
    let mut start = 0;
    while start < OUTPUT.len() {
        let mut end = (start + 3).min(OUTPUT.len());
        while !OUTPUT.is_char_boundary(end) {
            end += 1;
        }
        pieces.push(&OUTPUT[start..end]);
        start = end;
    }
    for piece in pieces {
        for event in parser.feed(piece).expect("the piece parses") {
            if let Event::RegionChunk {
                field: qwen3::Field::Content,
                text,
                ..
            } = event
            {
                shown.push_str(text);
            }
        }
    }
    let (message, _) = parser.finalize().expect("the message finalises");
    assert_eq!(
        message.reasoning_content.as_deref(),
        Some("Need the weather tool.")
    );
    assert_eq!(message.content(), Some("Let me check."));
    assert_eq!(shown.trim(), "Let me check.");
    let calls = message.tool_calls();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].name, "get_weather");

    // The same template at run time (the registry's JSON, with the
    // `dynamic` feature) gives the same message: the compiled module is that
    // template, not a copy that drifts.
    #[cfg(feature = "dynamic")]
    {
        let template = retort::registry::family("qwen3")
            .unwrap()
            .template()
            .unwrap();
        let mut runtime = template.parser(PROMPT).unwrap();
        runtime.feed(OUTPUT).unwrap();
        let (map, _) = runtime.finalize().unwrap();
        assert_eq!(message.to_map(), map);
    }
}

/// `ReasoningFormat::Inline` on the compiled parser: the typed message has
/// the reasoning inline in its content, as the run-time parser does.
#[test]
fn the_compiled_parser_keeps_reasoning_inline_on_request() {
    let options = retort::ParserOptions::new().reasoning_format(retort::ReasoningFormat::Inline);
    let mut parser = qwen3::Parser::with_options(PROMPT, options, None).expect("the prompt parses");
    for piece in OUTPUT.split_inclusive('>') {
        parser.feed(piece).expect("the piece parses");
    }
    let (message, _) = parser.finalize().expect("the message finalises");
    assert_eq!(message.reasoning_content, None);
    assert_eq!(
        message.content(),
        Some("<think>Need the weather tool.</think>\n\nLet me check.")
    );
    assert_eq!(message.tool_calls().len(), 1);
}
