//! retort: streaming parsers for chat-model output, driven by
//! transformers-style response templates.
//!
//! A response template (the JSON that transformers keeps in
//! `tokenizer_config.json`) says which delimiters open and close which
//! fields of the assistant message, and how each region's text is parsed.
//! retort gives exactly the reference's result (transformers 5.23.0) for
//! every way the text is split into chunks, in time linear in the input.
//!
//! ```
//! use retort::{Event, Template, Value};
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
//!             shown.push_str(text); // render as it streams
//!         }
//!     }
//! }
//! let (message, _last_events) = parser.finalize()?;
//! assert_eq!(shown, "Hello!");
//! assert_eq!(message["thinking"], Value::Str("Greet.".into()));
//! assert_eq!(message["content"], Value::Str("Hello!".into()));
//! assert_eq!(message["tool_calls"].as_list().map(|calls| calls.len()), Some(1));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Errors in the model's output come back as [`ParseError`]s naming the
//! field, the byte offset of the region and its raw text; broken templates
//! as [`TemplateError`]s naming the rule, the JSON path and the line and
//! column.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod conformance;
pub mod content;
#[cfg(feature = "codegen")]
#[doc(hidden)]
pub mod emit;
pub mod engine;
pub mod event;
pub mod py;
pub mod pyre;
pub mod scan;
pub mod template;
pub mod transform;
pub mod unicode_tables;
pub mod value;

pub use engine::{Events, ParseError, ParseErrorKind, Parser};
pub use event::{Event, OwnedEvent};
pub use template::{Template, TemplateError};
pub use value::{Map, Value};
