//! The engine of retort: streaming parsers for chat-model output, driven
//! by transformers-style response templates.
//!
//! A response template (the JSON that transformers keeps in
//! `tokenizer_config.json`) says which delimiters open and close which
//! fields of the assistant message, and how each region's text is parsed.
//! retort gives exactly the reference's result (transformers 5.23.0) for
//! every way the text is split into chunks, in time linear in the input.
//!
//! Applications use it through the `retort` crate, which re-exports it
//! together with the `response_template!` macro; the code generator
//! (`retort-codegen`) builds on it directly.
//!
//! Errors in the model's output come back as [`ParseError`]s naming the
//! field, the byte offset of the region and its raw text; broken templates
//! as [`TemplateError`]s naming the rule, the JSON path and the line and
//! column.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod content;
pub mod error;
pub mod event;
#[cfg(feature = "codegen")]
#[doc(hidden)]
pub mod lit;
pub mod machine;
pub mod parser;
pub mod py;
pub use retort_pyre as pyre;
pub mod scan;
pub mod template;
pub mod transform;
pub mod typed;
pub use retort_pyre::unicode_tables;
pub mod value;

pub use error::{ParseError, ParseErrorKind};
pub use event::{Event, OwnedEvent};
pub use machine::{LiteralHit, Machine};
pub use parser::{
    Events, EventsIter, FieldValues, Limits, Malformed, OpenRegion, Param, Parser, ParserOptions,
    ReasoningFormat, Replaced, TypedEvents, TypedEventsIter, Unclaimed, UnknownReasoningFormat,
};
pub use scan::stream::WorkBudget;
pub use template::{Template, TemplateError};
pub use typed::{AssistantMessage, FieldId, Int, ToolCall, Typed, UnknownTemplate};
pub use value::{Map, Value};

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;
