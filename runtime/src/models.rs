//! The bundled models' compiled parsers, one line to use:
//!
//! ```toml
//! [dependencies]
//! retort = { version = "0.1", features = ["model-qwen3"] }
//! ```
//!
//! ```
//! # #[cfg(feature = "model-qwen3")] {
//! use retort::models::qwen3;
//!
//! let mut parser = qwen3::Parser::new("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n")?;
//! parser.feed("<think>Greet back.</think>Hello!<|im_end|>")?;
//! let (message, _events) = parser.finalize()?;
//! assert_eq!(message.reasoning_content.as_deref(), Some("Greet back."));
//! assert_eq!(message.content.as_deref(), Some("Hello!"));
//! # }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Each template in the repository's `templates/` (`<family>.json`) becomes
//! a module `retort::models::<family>` (dashes and dots turn into `_`:
//! `glm-4.5` → `glm_4_5`) exactly as [`response_template!`](crate::response_template)
//! would make it — a typed `Message`, a `Field` enum and a streaming
//! `Parser` over static automata — behind the cargo feature
//! `model-<family>`; `all-models` turns on all of them.
//!
//! No model is on by default: each compiled model costs build time (its
//! automata are generated as Rust tables) and binary size, and an
//! application usually needs one or two. Applications that learn the model
//! only at run time use [`crate::registry`] instead, which has every bundled
//! template whatever the features.
//!
//! The list of modules and features is generated from `templates/` by the
//! crate's `models_in_sync` test, which fails when a template has no
//! feature (`RETORT_BLESS=1 cargo test -p retort --test models_in_sync`
//! rewrites both). The crate reaches the templates through `runtime/templates`,
//! a link to the workspace's `templates/` that `cargo package` follows, so a
//! published crate carries them.

// Written by the test, compared byte for byte: rustfmt keeps out. The
// bundled templates' JSON (`BUNDLED`) serves the run-time registry only.
#[rustfmt::skip]
#[cfg_attr(not(feature = "dynamic"), allow(dead_code))]
mod generated;

#[cfg(feature = "dynamic")]
pub(crate) use generated::BUNDLED;

#[allow(unused_imports)]
pub use generated::*;
