//! `ReasoningFormat::Inline` (llama.cpp's `reasoning_format: none`): the
//! reasoning stays in `content`, delimiters included, where the model wrote
//! it; the default (`Split`) is the reference's result, unchanged.

mod common;

use common::bundled;
use retort_engine::{Event, Map, ParserOptions, ReasoningFormat, Template, Value};

fn inline() -> ParserOptions {
    ParserOptions::new().reasoning_format(ReasoningFormat::Inline)
}

/// Parses `text` after `prefix` in pieces of `chunk` characters (0: whole);
/// the message and the reasoning field's chunk texts, concatenated.
fn parse(
    t: &Template,
    prefix: &str,
    text: &str,
    options: ParserOptions,
    chunk: usize,
) -> (Map, String) {
    let mut p = t.parser_with(prefix, options, None).expect("parser");
    let mut reasoning_chunks = String::new();
    let mut take = |e: Event<'_>| {
        if let Event::RegionChunk {
            field: "reasoning_content",
            text,
            ..
        } = e
        {
            reasoning_chunks.push_str(text);
        }
    };
    for e in p.initial_events().to_vec() {
        take(e.as_event());
    }
    let chars: Vec<char> = text.chars().collect();
    let pieces: Vec<String> = match chunk {
        0 => vec![text.to_owned()],
        n => chars.chunks(n).map(|c| c.iter().collect()).collect(),
    };
    for piece in &pieces {
        for e in p.feed(piece).expect("feed").iter() {
            take(e);
        }
    }
    let (message, events) = p.finalize().expect("finalize");
    for e in events.iter() {
        take(e);
    }
    (message, reasoning_chunks)
}

fn content(m: &Map) -> Option<&str> {
    m.get("content").and_then(Value::as_str)
}

const QWEN_PROMPT: &str = "<|im_start|>user\nHey<|im_end|>\n<|im_start|>assistant\n<think>\n";
const QWEN_OUTPUT: &str = "I'm\nthinking\n</think>\n\nHello, world!<|im_end|>\n";

#[test]
fn split_is_the_default_and_the_references_result() {
    let t = bundled("qwen3.5");
    let (m, chunks) = parse(&t, QWEN_PROMPT, QWEN_OUTPUT, ParserOptions::new(), 0);
    assert_eq!(content(&m), Some("Hello, world!"));
    assert_eq!(
        m.get("reasoning_content").and_then(Value::as_str),
        Some("I'm\nthinking")
    );
    // Without Inline the chunks carry no delimiter.
    assert_eq!(chunks, "\nI'm\nthinking\n");
    assert_eq!(
        ParserOptions::new().reasoning_format,
        ReasoningFormat::Split
    );
}

#[test]
fn inline_keeps_the_prompts_open_delimiter_the_text_and_the_gap() {
    let t = bundled("qwen3.5");
    for chunk in [0, 1, 2, 3, 7] {
        let (m, chunks) = parse(&t, QWEN_PROMPT, QWEN_OUTPUT, inline(), chunk);
        assert_eq!(
            content(&m),
            Some("<think>\nI'm\nthinking\n</think>\n\nHello, world!"),
            "chunk {chunk}"
        );
        assert!(m.get("reasoning_content").is_none(), "chunk {chunk}");
        // The reasoning region's chunks are its span, delimiters included.
        assert_eq!(chunks, "<think>\nI'm\nthinking\n</think>", "chunk {chunk}");
    }
}

#[test]
fn inline_on_channel_and_token_formats() {
    // gpt-oss: the analysis channel's header and end are the span's; the
    // final channel's header is not content.
    let t = bundled("gpt-oss");
    let (m, _) = parse(
        &t,
        "<|start|>user<|message|>Hey there!<|end|><|start|>assistant",
        "<|channel|>analysis<|message|>I'm\nthinking<|end|><|start|>assistant<|channel|>final<|message|>Hello!<|return|>",
        inline(),
        0,
    );
    assert_eq!(
        content(&m),
        Some("<|channel|>analysis<|message|>I'm\nthinking<|end|>Hello!")
    );
    // Command A: the response's own markers are not content.
    let t = bundled("command-a");
    let (m, _) = parse(
        &t,
        "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|><|START_THINKING|>",
        "I'm\nthinking<|END_THINKING|><|START_TEXT|>Hello!<|END_TEXT|>",
        inline(),
        1,
    );
    assert_eq!(
        content(&m),
        Some("<|START_THINKING|>I'm\nthinking<|END_THINKING|>Hello!")
    );
}

#[test]
fn a_thought_after_the_answer_follows_it() {
    let t = bundled("gemma4");
    let text = "Sunny.<|channel>thought\nDone?<channel|><turn|>";
    for chunk in [0, 1, 4] {
        let (m, _) = parse(&t, "<|turn>model\n", text, inline(), chunk);
        assert_eq!(
            content(&m),
            Some("Sunny.<|channel>thought\nDone?<channel|>"),
            "chunk {chunk}"
        );
    }
}

#[test]
fn tool_calls_and_answers_without_reasoning_are_untouched() {
    let t = bundled("qwen3");
    let text = "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1}}\n</tool_call><|im_end|>";
    let (split, _) = parse(&t, "<|im_start|>assistant\n", text, ParserOptions::new(), 0);
    let (inl, _) = parse(&t, "<|im_start|>assistant\n", text, inline(), 0);
    assert_eq!(split, inl);
    let (m, _) = parse(
        &t,
        "<|im_start|>assistant\n",
        "<think>a</think><tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>",
        inline(),
        0,
    );
    assert_eq!(content(&m), Some("<think>a</think>"));
    assert!(m.get("tool_calls").is_some());
}

#[test]
fn without_a_content_field_the_reasoning_stays_split() {
    let t = Template::from_json(
        r#"{"start_anchor": "<s>", "fields": {
            "reasoning_content": {"open": "<think>", "close": "</think>"},
            "answer": {"open": "<a>", "close": "</a>"}}}"#,
    )
    .expect("template");
    let (m, _) = parse(&t, "<s>", "<think>hm</think><a>x</a>", inline(), 0);
    assert_eq!(
        m.get("reasoning_content").and_then(Value::as_str),
        Some("hm")
    );
}

#[test]
fn names_parse_as_llama_cpp_spells_them() {
    assert_eq!("none".parse(), Ok(ReasoningFormat::Inline));
    assert_eq!("NONE".parse(), Ok(ReasoningFormat::Inline));
    assert_eq!("auto".parse(), Ok(ReasoningFormat::Split));
    assert_eq!("deepseek".parse(), Ok(ReasoningFormat::Split));
    let e = "inline-ish".parse::<ReasoningFormat>().unwrap_err();
    assert!(e.to_string().contains("inline-ish"), "{e}");
    assert_eq!(ReasoningFormat::Inline.as_str(), "none");
}

#[test]
fn reasoning_only_the_prompt_wrote_is_not_content() {
    let t = bundled("qwen3");
    // Thinking off: the prompt opens and closes an empty block.
    let off = "<|im_start|>assistant\n<think>\n\n</think>\n\n";
    let (m, _) = parse(&t, off, "Hi!<|im_end|>", inline(), 0);
    assert_eq!(content(&m), Some("Hi!"));
    // Thinking forced open, and the model closes it at once: the close is
    // the model's, so the span is there.
    let open = "<|im_start|>assistant\n<think>\n";
    let (m, _) = parse(&t, open, "</think>Hi!<|im_end|>", inline(), 1);
    assert_eq!(content(&m), Some("<think>\n</think>Hi!"));
}
