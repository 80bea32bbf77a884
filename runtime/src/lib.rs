//! retort: streaming, typed parsers for chat-model output, driven by
//! transformers-style response templates.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod content;
pub mod py;
pub mod pyre;
pub mod scan;
pub mod transform;
pub mod unicode_tables;
pub mod value;

pub use value::{Map, Value};
