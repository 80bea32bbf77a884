//! retort: streaming, typed parsers for chat-model output, driven by
//! transformers-style response templates.
//!
//! A response template (the JSON that transformers keeps in
//! `tokenizer_config.json`) says which delimiters open and close which
//! fields of the assistant message — reasoning, content, tool calls — and
//! how each region's text is parsed. retort gives exactly the reference's
//! result (transformers 5.23.0) for every way the text is split into
//! chunks, in time linear in the input.
//!
//! # Compiled templates
//!
//! [`response_template!`] compiles a template at build time into a module:
//! its delimiter automata as static tables, a typed `Message`, a `Field`
//! enum for events and a streaming `Parser`. (For a fixed set of models in
//! `build.rs`, `retort_codegen::Builder` does the same and adds an enum over
//! the set.)
//!
//! ```
//! retort::response_template!("../templates/smollm3.json");
//!
//! use retort::{AssistantMessage, Event};
//!
//! let prompt = "<|im_start|>user\nWave twice<|im_end|>\n<|im_start|>assistant\n";
//! let mut parser = smollm3::Parser::new(prompt)?;
//! let mut shown = String::new();
//! for piece in ["<think>They want", " a wave.</think>Sure", "!<tool_call>{\"name\": \"wave\",",
//!               " \"arguments\": {\"times\": 2}}</tool_call>"] {
//!     for event in parser.feed(piece)? {
//!         if let Event::RegionChunk { field: smollm3::Field::Content, text, .. } = event {
//!             shown.push_str(text); // render as it streams
//!         }
//!     }
//! }
//! let (message, _last_events) = parser.finalize()?;
//! assert_eq!(shown, "Sure!");
//! // Typed fields...
//! assert_eq!(message.reasoning_content.as_deref(), Some("They want a wave."));
//! assert_eq!(message.tool_calls.as_ref().map(Vec::len), Some(1));
//! // ...and the same view for every model.
//! assert_eq!(message.content(), Some("Sure!"));
//! assert_eq!(message.tool_calls()[0].name, "wave");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Templates at run time
//!
//! Templates that arrive with a model load with [`Template::from_json`] and
//! run on the same engine; their messages are [`Map`]s (the reference's
//! dict), which offer the same [`AssistantMessage`] view.
//!
//! ```
//! use retort::{AssistantMessage, Event, Template, Value};
//!
//! let template = Template::from_json(r#"{
//!     "defaults": {"role": "assistant"},
//!     "start_anchor": "<|im_start|>assistant\n",
//!     "fields": {
//!         "thinking": {"open": "<think>", "close": "</think>"},
//!         "tool_calls": {
//!             "open": "<tool_call>", "close": "</tool_call>", "repeats": true,
//!             "content": "json", "transform": {"type": "function", "function": "{content}"}
//!         },
//!         "content": {"close": "<|im_end|>"}
//!     }
//! }"#)?;
//!
//! // The prompt matters: here the chat template already opened <think>.
//! let mut parser = template.parser("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>")?;
//! assert_eq!(parser.initial_events().len(), 1); // region_open thinking
//!
//! let mut shown = String::new();
//! for piece in ["Greet.</th", "ink>Hello!<tool_", "call>{\"name\": \"wave\", \"arguments\": {}}</tool_call>"] {
//!     for event in parser.feed(piece)?.iter() {
//!         if let Event::RegionChunk { field: "content", text, .. } = event {
//!             shown.push_str(text);
//!         }
//!     }
//! }
//! let (message, _last_events) = parser.finalize()?;
//! assert_eq!(shown, "Hello!");
//! assert_eq!(message["thinking"], Value::Str("Greet.".into()));
//! assert_eq!(message.content(), Some("Hello!"));
//! assert_eq!(message.tool_calls()[0].name, "wave");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Errors in the model's output come back as [`ParseError`]s naming the
//! field, the byte offset of the region and its raw text; broken templates
//! as [`TemplateError`]s (at run time) or compile errors (in the macro)
//! naming the rule, the JSON path and the line and column.
//!
//! Features: `macros` (default) for `response_template!`; `dynamic`
//! (default) for the run-time loader (`Template::from_json`,
//! [`registry`]) and the automaton builder it needs — a program that only
//! runs compiled parsers can leave it out; `openai`; `model-<family>` and
//! `all-models` for the bundled models.
//!
//! This crate is a facade: the engine lives in `retort-engine` because the
//! code generator needs it to compile templates, and the macro needs the
//! code generator, so the macro cannot be part of the engine's crate.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

// The facade names what applications use; the engine's internals (the
// Python-regex engine, the scanner, the IR writer, the seam generated code
// implements) stay behind it. Generated code reaches the runtime only
// through the hidden, versioned `__private` module.
pub use retort_engine::{
    AssistantMessage, Event, Events, EventsIter, FieldId, FieldValues, Int, Limits, Malformed, Map,
    OpenRegion, OwnedEvent, Param, ParseError, ParseErrorKind, Parser, ParserOptions,
    ReasoningFormat, Replaced, Template, TemplateError, ToolCall, Typed, TypedEvents,
    TypedEventsIter, Unclaimed, UnknownReasoningFormat, UnknownTemplate, Value, WorkBudget,
};
pub use retort_engine::{content, event, py, template, typed, value};

#[doc(hidden)]
pub use retort_engine::__private;

pub mod models;
#[cfg(feature = "dynamic")]
pub mod registry;

/// Compiles a response template into a module at build time; see the
/// [crate documentation](crate) and `retort-macros`.
#[cfg(feature = "macros")]
pub use retort_macros::response_template;

#[cfg(feature = "chat")]
pub mod chat;

/// OpenAI-compatible streaming: chat-completion chunks, messages and
/// Responses events from any template (see the `retort-openai` crate).
#[cfg(feature = "openai")]
pub use retort_openai as openai;

// The README's examples are compiled and run as doc tests.
#[cfg(all(doctest, feature = "macros"))]
#[doc = include_str!("../../README.md")]
struct ReadmeDoctests;
