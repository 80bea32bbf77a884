//! retort: streaming, typed parsers for chat-model output, driven by
//! transformers-style response templates.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod conformance;
pub mod content;
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
