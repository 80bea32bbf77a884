//! `reasoning_format`: the reasoning split out of the answer (the default,
//! the reference's result), or kept inline in `content`, delimiters and all,
//! as llama.cpp's `reasoning_format: none` returns it.
//!
//! Inline is an extension: with [`ReasoningFormat::Split`] nothing here runs
//! and every result is the reference's. With [`ReasoningFormat::Inline`]
//! the parse is the same parse; only the message is put together
//! differently at the end, from what the parse saw:
//!
//! - each region of the reasoning field the model wrote into (not one the
//!   prompt opened and closed, nor one the prompt opened that the model
//!   left without a byte) contributes its *span*: the open
//!   delimiter's text as matched (in the prompt, when the prompt opened the
//!   reasoning), the region's text as the model wrote it (not stripped),
//!   and the close delimiter's text (empty when the region ended at another
//!   field's delimiter, a lookahead, or the end);
//! - `content` becomes the spans, in order, followed by the whitespace the
//!   model wrote between them and its answer (which the content field's
//!   `strip` drops), then the content field's value; a span the model wrote after the last answer text (a thought
//!   after the answer) follows the answer instead;
//! - the reasoning field is left out of the message.
//!
//! The events are the same events, except that a reasoning region's chunks
//! also carry its delimiters' text (so that a stream of chunks
//! concatenates to the span); they still name the reasoning field, which
//! lets a consumer (the OpenAI layer) send them as content as they come.
//!
//! A template without a `content` field, or whose content is not text,
//! keeps its reasoning split: there is nowhere to put it without loss.

use super::*;
use crate::typed::REASONING_KEYS;

/// Where a parser puts the model's reasoning.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ReasoningFormat {
    /// In its own field (`reasoning_content`), out of the answer: the
    /// reference's result (llama.cpp's `auto` / `deepseek`).
    #[default]
    Split,
    /// Inline in `content`, with its delimiters, where the model wrote it
    /// (llama.cpp's `none`); the message has no reasoning field.
    Inline,
}

impl ReasoningFormat {
    /// The name llama.cpp users know: `auto` for [`ReasoningFormat::Split`],
    /// `none` for [`ReasoningFormat::Inline`].
    pub fn as_str(self) -> &'static str {
        match self {
            ReasoningFormat::Split => "auto",
            ReasoningFormat::Inline => "none",
        }
    }
}

/// A name that is not a reasoning format.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownReasoningFormat(pub String);

impl std::fmt::Display for UnknownReasoningFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "unknown reasoning format {:?}: expected \"none\" (inline in the content) or \"auto\" (split out; also \"deepseek\", \"split\")",
            self.0
        )
    }
}

impl std::error::Error for UnknownReasoningFormat {}

impl std::str::FromStr for ReasoningFormat {
    type Err = UnknownReasoningFormat;

    /// `none` / `inline`, or `auto` / `split` / `deepseek` (llama.cpp's
    /// names; `deepseek` splits as `auto` does), in any case.
    fn from_str(s: &str) -> Result<ReasoningFormat, UnknownReasoningFormat> {
        match s.to_ascii_lowercase().as_str() {
            "none" | "inline" => Ok(ReasoningFormat::Inline),
            "auto" | "split" | "deepseek" => Ok(ReasoningFormat::Split),
            _ => Err(UnknownReasoningFormat(s.to_owned())),
        }
    }
}

/// What an inline parser keeps of the reasoning (boxed: it costs a split
/// parser one pointer).
#[derive(Clone, Debug, Default)]
pub(super) struct InlineState {
    /// The reasoning field.
    reasoning: u16,
    /// The content field (`None`: the reasoning stays split).
    content: Option<u16>,
    /// The open delimiter of the reasoning region now open.
    open: String,
    /// The close delimiter that is closing it, and where it ends.
    close: String,
    close_end: usize,
    /// Spans followed by answer text, in order.
    before: String,
    /// Spans after the last answer text so far.
    after: String,
    /// The whitespace the model wrote between the last spans and the
    /// answer after them (which a stripped answer has lost).
    gap: String,
}

impl InlineState {
    /// The state for `t`, when it has a reasoning field.
    pub(super) fn for_template(t: &Template) -> Option<Box<InlineState>> {
        let reasoning = REASONING_KEYS.iter().find_map(|k| t.field_index(k))?;
        let content = t
            .field_index("content")
            .filter(|&c| c != reasoning)
            .and_then(|c| u16::try_from(c).ok());
        Some(Box::new(InlineState {
            reasoning: u16::try_from(reasoning).ok()?,
            content,
            ..InlineState::default()
        }))
    }
}

impl<'t, M: Machine<'t>> Parser<'t, M> {
    /// An open delimiter at `start..end` opened field `f`'s region: an
    /// inline parser keeps the reasoning's and streams it as a chunk.
    #[cold]
    pub(super) fn inline_open(&mut self, src: Hay<'_>, f: u16, start: usize, end: usize) {
        let Some(st) = self.inline.as_deref_mut() else {
            return;
        };
        if f != st.reasoning {
            return;
        }
        st.open.clear();
        st.open.push_str(src.slice(start, end));
        if start < end {
            self.push_chunk(f, start, end);
        }
    }

    /// A close delimiter at `start..end` is about to close the open region:
    /// an inline parser keeps the reasoning's and streams it as a chunk.
    #[cold]
    pub(super) fn inline_close(&mut self, src: Hay<'_>, start: usize, end: usize) {
        let Some(st) = self.inline.as_deref_mut() else {
            return;
        };
        if self.current != Some(st.reasoning) || start == end {
            return;
        }
        if self.output_start > 0 && end <= self.output_start {
            // The prompt's own close, decided only now (it could have
            // grown): the region is the prompt's, and so is its span.
            return;
        }
        st.close.clear();
        st.close.push_str(src.slice(start, end));
        st.close_end = end;
        let f = st.reasoning;
        if !self.opened {
            // A reasoning region (the implicit field) closing before any
            // text: its delimiter is still part of the span.
            self.log.raw.push(RawEvent::Open(f));
            self.opened = true;
            self.body_start = start;
        }
        self.push_chunk(f, start, end);
    }

    /// Field `f`'s region is closing with `self.body` as its text: a
    /// reasoning region's span is kept; answer text moves the spans so far
    /// before the answer.
    #[cold]
    pub(super) fn inline_region(&mut self, f: u16) {
        let Some(st) = self.inline.as_deref_mut() else {
            return;
        };
        if f == st.reasoning {
            // Only what the model wrote: a region the prompt opened that
            // ends without a byte of output (the model went straight to its
            // answer) is the prompt's, not a span. (Regions the prompt
            // closed too are dropped when the prompt is done:
            // [`Parser::inline_prompt_done`].)
            let end = self.body_start + self.body.len();
            if st.close_end > self.output_start || end > self.output_start {
                st.after.push_str(&st.open);
                st.after.push_str(&self.body);
                st.after.push_str(&st.close);
            }
            st.open.clear();
            st.close.clear();
            st.close_end = 0;
        } else if Some(f) == st.content && self.body.chars().any(|c| !c.is_whitespace()) {
            st.gap.clear();
            if !st.after.is_empty() {
                let text = self.body.trim_start_matches(char::is_whitespace);
                st.gap.push_str(&self.body[..self.body.len() - text.len()]);
                let spans = std::mem::take(&mut st.after);
                st.before.push_str(&spans);
            }
        }
    }

    /// The prompt is processed: the reasoning regions it closed (a
    /// thinking-off prompt's empty `<think></think>`) are not the model's
    /// output, and no answer of the prompt's counts.
    pub(super) fn inline_prompt_done(&mut self) {
        if let Some(st) = self.inline.as_deref_mut() {
            st.before.clear();
            st.after.clear();
            st.gap.clear();
        }
    }

    /// The message's fields, with the reasoning moved into the content.
    pub(super) fn inline_message(&mut self, output: &mut FieldValues) {
        let Some(st) = self.inline.as_deref_mut() else {
            return;
        };
        let Some(c) = st.content else { return };
        if st.before.is_empty() && st.after.is_empty() {
            return;
        }
        let answer = match output.get(c as usize) {
            None => "",
            Some(Value::Str(s)) => s.as_str(),
            // Content that is not text: the reasoning stays split.
            Some(_) => return,
        };
        let gap = match answer.starts_with(st.gap.as_str()) {
            true => "",
            false => st.gap.as_str(),
        };
        let mut content =
            String::with_capacity(st.before.len() + gap.len() + answer.len() + st.after.len());
        content.push_str(&st.before);
        content.push_str(gap);
        content.push_str(answer);
        content.push_str(&st.after);
        output.take(st.reasoning as usize);
        output.set(c as usize, self.t.fields.len(), Value::Str(content));
        st.before.clear();
        st.after.clear();
    }
}
