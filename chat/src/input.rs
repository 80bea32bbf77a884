//! What a render takes and gives.

use std::ops::Range;

use serde_json::{Map, Value as Json};

use crate::strftime::DateTime;

/// `continue_final_message`: leave the last message open, for the model to
/// continue, instead of closing it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum ContinueFinal {
    /// `False`: render the conversation as it is.
    #[default]
    No,
    /// `True`: continue the last message's `content`.
    Content,
    /// A field name: continue that field (`"reasoning_content"`, …).
    Field(String),
}

impl ContinueFinal {
    /// The field continued, if any.
    pub fn field(&self) -> Option<&str> {
        match self {
            ContinueFinal::No => None,
            ContinueFinal::Content => Some("content"),
            ContinueFinal::Field(f) => Some(f),
        }
    }

    /// From the JSON the case format uses (`false`, `true` or a field name;
    /// anything else is Python-truthiness: `""` and `null` are `False`).
    pub fn from_json(value: &Json) -> ContinueFinal {
        match value {
            Json::Bool(true) => ContinueFinal::Content,
            Json::String(s) if !s.is_empty() => ContinueFinal::Field(s.clone()),
            Json::Number(n) if n.as_f64().is_some_and(|f| f != 0.0) => ContinueFinal::Content,
            Json::Array(a) if !a.is_empty() => ContinueFinal::Content,
            Json::Object(o) if !o.is_empty() => ContinueFinal::Content,
            _ => ContinueFinal::No,
        }
    }
}

/// Which of transformers' entry points a render reproduces.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Entry {
    /// `render_jinja_template` (what the case format uses): the messages as
    /// given.
    #[default]
    RenderJinjaTemplate,
    /// `tokenizer.apply_chat_template(..., tokenize=False)`: additionally
    /// drops message keys whose value is `None`, refuses an empty
    /// conversation and `continue_final_message` together with
    /// `add_generation_prompt` (its `ValueError`s).
    ApplyChatTemplate,
}

/// One render's input: the arguments of transformers'
/// `render_jinja_template` (and `apply_chat_template`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RenderInput {
    /// The conversation: one JSON object per message (`role`, `content`,
    /// `tool_calls`, …). Anything else is the `TypeError` transformers
    /// raises.
    pub messages: Vec<Json>,
    /// `tools`: JSON schemas (`{"type": "function", "function": {...}}` or
    /// whatever the template reads), or `None` (the template sees `None`).
    pub tools: Option<Vec<Json>>,
    /// `documents` for retrieval-augmented templates, or `None`.
    pub documents: Option<Vec<Json>>,
    /// `add_generation_prompt`.
    pub add_generation_prompt: bool,
    /// `continue_final_message`.
    pub continue_final_message: ContinueFinal,
    /// Other template variables (`enable_thinking`, `reasoning_effort`,
    /// `bos_token`, …). They override the defaults a
    /// [`ChatTemplates`](crate::ChatTemplates) set passes (its special
    /// tokens), as transformers' kwargs override `special_tokens_map`.
    pub kwargs: Map<String, Json>,
    /// The time `strftime_now` formats; `None` is now (UTC).
    pub now: Option<DateTime>,
    /// Which entry point to reproduce.
    pub entry: Entry,
}

impl RenderInput {
    /// An input with these messages and everything else default.
    pub fn new(messages: Vec<Json>) -> RenderInput {
        RenderInput {
            messages,
            ..RenderInput::default()
        }
    }
}

/// A `{% generation %}` block's place in the rendered text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GenerationSpan {
    /// Byte range in [`Rendered::text`] (the characters of `chars`, clamped
    /// to the text).
    pub bytes: Range<usize>,
    /// The range transformers reports (`generation_indices`): Python
    /// character offsets, where the block's output lands when the block is
    /// written directly to the output. Inside a macro or a captured block,
    /// transformers (and so this) counts the output written before the
    /// enclosing capture, not the block's final place.
    pub chars: Range<usize>,
}

/// A rendered conversation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rendered {
    /// The text, byte for byte what transformers renders.
    pub text: String,
    /// The `{% generation %}` spans, in the order the blocks finished.
    pub generation: Vec<GenerationSpan>,
    /// The fuel the render used (see [`Limits::fuel`](crate::Limits::fuel));
    /// `None` with fuel off.
    pub fuel_used: Option<u64>,
}
