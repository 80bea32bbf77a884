//! Chat templates rendered byte for byte as transformers 5.23.0 renders them.
//!
//! A model's chat template is a Jinja template that turns a conversation
//! (messages, tools, documents) into the prompt text. transformers renders
//! it with jinja2 in a sandbox (`render_jinja_template`); this crate renders
//! it with [minijinja], reshaped to behave like that: Python's values and
//! printing (`{{ {'a': True} }}` is `{'a': True}`), Python's `str`, `list`
//! and `dict` methods, jinja2's filters, tests and globals, transformers'
//! `tojson`, `raise_exception`, `strftime_now`, `namespace`, the
//! `{% generation %}` tag, and the sandbox's refusals (`messages.append`
//! is a `SecurityError`).
//!
//! ```
//! use retort_chat::{ChatTemplate, RenderInput};
//! use serde_json::json;
//!
//! let template = ChatTemplate::new(
//!     "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}\n{% endfor %}\
//!      {% if add_generation_prompt %}<|assistant|>{% endif %}",
//! )?;
//! let mut input = RenderInput::new(vec![json!({"role": "user", "content": "Hi!"})]);
//! input.add_generation_prompt = true;
//! let rendered = template.render(&input)?;
//! assert_eq!(rendered.text, "<|user|>Hi!\n<|assistant|>");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Templates are untrusted code: every render runs under [`Limits`] (work,
//! recursion, output size, data depth) and ends in a typed error past them.
//! Errors carry the Python exception class the reference raises
//! ([`RenderError::python_type`]), so results compare with the reference's.
//!
//! [`render_cases`] runs the JSON-lines case format of the conformance
//! vectors.

#![warn(missing_docs)]

mod args;
mod attrs;
mod cases;
mod check;
mod compare;
mod env;
mod errmap;
mod error;
mod exprs;
mod filters;
mod globals;
mod input;
mod json;
mod lexer;
mod limits;
mod lookup;
mod methods;
mod ops;
mod prepare;
mod pyformat;
mod pystr;
mod repr;
mod rewrite;
mod seqfilters;
mod source;
mod strftime;
mod template;
mod tests;
mod unicode;
#[rustfmt::skip]
mod unicode_tables;
mod value;

pub use cases::{CASES_NOW, render_case, render_cases};
pub use error::{ChatError, ChatErrorKind, Limit, RenderError, RenderErrorKind};
pub use input::{ContinueFinal, Entry, GenerationSpan, RenderInput, Rendered};
pub use limits::Limits;
pub use source::ChatTemplates;
pub use strftime::DateTime;
pub use template::ChatTemplate;
