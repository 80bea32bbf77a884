//! OpenAI-compatible streaming from any response template.
//!
//! A server built on retort sends OpenAI `chat.completion.chunk`s, not
//! region events. This crate derives them from the template, for every
//! model: [`ChunkStream`] wraps a run-time parser and turns each `feed` into
//! chunks and `finalize` into the last ones plus `finish_reason`; [`Deltas`]
//! is the core underneath, which compiled parsers drive with their events
//! (`.untyped()`) and `parser.engine().open_region()`.
//!
//! # What the chunks guarantee
//!
//! - The first chunk carries `role: "assistant"` and nothing else.
//! - Each tool call opens with exactly one entry
//!   `{index, id, type: "function", function: {name, arguments: ""}}`; later
//!   entries carry `arguments` fragments only. The id, name and type are
//!   never repeated (the official client concatenates every string field).
//!   A chunk holds one entry at most, indices start at 0 and go up by one.
//! - The concatenated `arguments` fragments are exactly the call's
//!   arguments text, for every chunking of the model's output, and
//!   `json.loads` of it equals the message's arguments after `tools=`
//!   coercion. Content and reasoning fragments concatenate to the message's
//!   `content` and reasoning.
//! - The last chunk has an empty delta and `finish_reason`: `tool_calls`
//!   when a call was made, `length` when the caller says the generation was
//!   cut, `stop` otherwise.
//!
//! # The arguments text
//!
//! Arguments are written as Python's `json.dumps(arguments,
//! ensure_ascii=False)` writes them (`", "` and `": "` separators, non-ASCII
//! as is, `NaN`/`Infinity` as Python writes them): the spelling of the
//! reference's own ecosystem (transformers, vLLM's non-streaming path),
//! independent of how the model spaced its JSON, readable, and the same
//! whether a call streamed or arrived whole. Arguments that are a string
//! (a model that wrote text that is not JSON) are sent as that string.
//!
//! For `json` regions the model's JSON is read as it arrives
//! (a streaming reader that knows the path it is in): the call opens as soon
//! as its name (and, when the template reads one, its id) is complete, and
//! the arguments follow piece by piece, each piece once no later byte can
//! change it. A top-level string argument whose schema lets `tools=`
//! coercion change it is held until its closing quote and then sent as the
//! engine coerces it. The one case where the text differs from
//! `json.dumps` of the final value is a key the model wrote twice: both
//! members are sent, in order, and `json.loads` keeps the last, as the
//! parse does. At each region's close the streamed text is checked against
//! the engine's value; text that is not certain is never sent, so the check
//! only completes it. Other regions (`xml-inline`, `kv-lines`, JSON
//! dialects, names known only from the value) send each call whole when its
//! region closes.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod json;
pub mod responses;
mod shape;
mod stream;
pub mod types;

pub use stream::{Delta, Deltas, arguments_text};
pub use types::*;

use retort_engine::typed::AssistantMessage;
use retort_engine::{Map, ParseError, Parser, Template, Value};
use std::hash::{BuildHasher, Hasher};

/// Where the reasoning goes in deltas and messages.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Reasoning {
    /// `reasoning_content` (DeepSeek, llama.cpp, SGLang, `transformers serve`).
    #[default]
    ReasoningContent,
    /// `reasoning` (vLLM, OpenRouter).
    Reasoning,
    /// Left out.
    Omit,
}

/// When content and reasoning go out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TextMode {
    /// As the model writes them (what chat servers do). The reference keeps
    /// only the last region of a field that is not `repeats`: a model that
    /// writes a field twice (two `<think>` blocks, text after a tool call
    /// where content is the implicit field, two regions of a tool-call field
    /// that does not `repeat`) ends in [`Error::Diverged`] if the last region
    /// does not extend what was sent.
    #[default]
    Stream,
    /// Once certain: the whole field when the message is complete. Tool
    /// calls still stream when the tool-call field `repeats` (each region
    /// appends); otherwise they too go out with the message.
    Exact,
}

/// How tool-call ids are made when the model wrote none.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IdStyle {
    /// `call_` and 24 random hex digits.
    Random,
    /// The prefix followed by the call's number in the stream (`call_0`,
    /// `call_1`, ...): deterministic, for tests.
    Sequential(String),
}

impl IdStyle {
    fn make(&self, n: u64) -> String {
        match self {
            IdStyle::Sequential(prefix) => format!("{prefix}{n}"),
            IdStyle::Random => {
                let mut h = std::collections::hash_map::RandomState::new().build_hasher();
                h.write_u64(n);
                let a = h.finish();
                h.write_u64(a);
                format!("call_{:016x}{:08x}", a, h.finish() as u32)
            }
        }
    }
}

/// What a stream is made with.
#[derive(Clone, Debug)]
pub struct Options {
    /// Where reasoning goes.
    pub reasoning: Reasoning,
    /// When content and reasoning go out.
    pub text: TextMode,
    /// How missing tool-call ids are made.
    pub ids: IdStyle,
    /// The `tools` given to the parser (the same value): they decide which
    /// argument values coercion may change.
    pub tools: Option<Value>,
    /// The completion id of every chunk.
    pub completion_id: String,
    /// The model name of every chunk.
    pub model: String,
    /// The `created` time of every chunk (Unix seconds).
    pub created: u64,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            reasoning: Reasoning::default(),
            text: TextMode::default(),
            ids: IdStyle::Random,
            tools: None,
            completion_id: "chatcmpl-retort".into(),
            model: "retort".into(),
            created: 0,
        }
    }
}

impl Options {
    /// Deterministic options for tests: ids `call_0`, `call_1`, ...
    pub fn deterministic() -> Options {
        Options {
            ids: IdStyle::Sequential("call_".into()),
            ..Options::default()
        }
    }
}

/// Why a stream failed.
#[derive(Clone, Debug, PartialEq)]
pub enum Error {
    /// The model's output does not parse (see [`ParseError`]).
    Parse(ParseError),
    /// The `tools` value is not a list of tools.
    Tools(String),
    /// What was already sent does not lead to the parsed message (a bug in
    /// this crate, reported rather than hidden).
    Diverged(String),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Parse(e) => write!(f, "{e}"),
            Error::Tools(m) => write!(f, "tools: {m}"),
            Error::Diverged(m) => write!(f, "stream diverged from the parsed message: {m}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<ParseError> for Error {
    fn from(e: ParseError) -> Error {
        Error::Parse(e)
    }
}

/// Packs [`Delta`]s into chunks: one kind of fragment per chunk, one entry
/// per call.
#[derive(Clone, Debug)]
pub struct Chunker {
    options: Options,
    started: bool,
}

impl Chunker {
    /// A chunker writing `options`' id, model and time.
    pub fn new(options: Options) -> Chunker {
        Chunker {
            options,
            started: false,
        }
    }

    fn chunk(
        &self,
        delta: ChoiceDelta,
        finish_reason: Option<FinishReason>,
    ) -> ChatCompletionChunk {
        ChatCompletionChunk {
            id: self.options.completion_id.clone(),
            object: "chat.completion.chunk".into(),
            created: self.options.created,
            model: self.options.model.clone(),
            choices: vec![ChunkChoice {
                index: 0,
                delta,
                logprobs: None,
                finish_reason,
            }],
        }
    }

    fn role(&mut self, out: &mut Vec<ChatCompletionChunk>) {
        if !self.started {
            self.started = true;
            out.push(self.chunk(
                ChoiceDelta {
                    role: Some("assistant".into()),
                    ..ChoiceDelta::default()
                },
                None,
            ));
        }
    }

    /// Appends the chunks for `deltas` to `out` (the role chunk first, once).
    pub fn chunks(&mut self, deltas: &[Delta], out: &mut Vec<ChatCompletionChunk>) {
        self.role(out);
        let mut pending: Option<ChoiceDelta> = None;
        let flush =
            |p: &mut Option<ChoiceDelta>, out: &mut Vec<ChatCompletionChunk>, me: &Chunker| {
                if let Some(d) = p.take() {
                    out.push(me.chunk(d, None));
                }
            };
        for d in deltas {
            match d {
                Delta::Content(t) => {
                    if let Some(ChoiceDelta {
                        content: Some(c), ..
                    }) = &mut pending
                    {
                        c.push_str(t);
                        continue;
                    }
                    flush(&mut pending, out, self);
                    pending = Some(ChoiceDelta {
                        content: Some(t.clone()),
                        ..ChoiceDelta::default()
                    });
                }
                Delta::Reasoning(t) => {
                    if self.options.reasoning == Reasoning::Omit {
                        continue;
                    }
                    let merged = match (&mut pending, self.options.reasoning) {
                        (
                            Some(ChoiceDelta {
                                reasoning_content: Some(r),
                                ..
                            }),
                            Reasoning::ReasoningContent,
                        )
                        | (
                            Some(ChoiceDelta {
                                reasoning: Some(r), ..
                            }),
                            Reasoning::Reasoning,
                        ) => {
                            r.push_str(t);
                            true
                        }
                        _ => false,
                    };
                    if merged {
                        continue;
                    }
                    flush(&mut pending, out, self);
                    let mut delta = ChoiceDelta::default();
                    if self.options.reasoning == Reasoning::Reasoning {
                        delta.reasoning = Some(t.clone());
                    } else {
                        delta.reasoning_content = Some(t.clone());
                    }
                    pending = Some(delta);
                }
                Delta::CallOpen { index, id, name } => {
                    flush(&mut pending, out, self);
                    out.push(self.chunk(
                        ChoiceDelta {
                            tool_calls: Some(vec![ToolCallDelta {
                                index: *index,
                                id: Some(id.clone()),
                                kind: Some("function".into()),
                                function: Some(FunctionDelta {
                                    name: Some(name.clone()),
                                    arguments: Some(String::new()),
                                }),
                            }]),
                            ..ChoiceDelta::default()
                        },
                        None,
                    ));
                }
                Delta::CallArgs { index, text } => {
                    if let Some(ChoiceDelta {
                        tool_calls: Some(calls),
                        ..
                    }) = &mut pending
                        && let [
                            ToolCallDelta {
                                index: i,
                                function:
                                    Some(FunctionDelta {
                                        arguments: Some(a), ..
                                    }),
                                ..
                            },
                        ] = calls.as_mut_slice()
                        && i == index
                    {
                        a.push_str(text);
                        continue;
                    }
                    flush(&mut pending, out, self);
                    pending = Some(ChoiceDelta {
                        tool_calls: Some(vec![ToolCallDelta {
                            index: *index,
                            function: Some(FunctionDelta {
                                name: None,
                                arguments: Some(text.clone()),
                            }),
                            ..ToolCallDelta::default()
                        }]),
                        ..ChoiceDelta::default()
                    });
                }
                Delta::CallDone { .. } => {}
            }
        }
        flush(&mut pending, out, self);
    }

    /// The last chunk: an empty delta with `finish_reason`.
    pub fn finish(&mut self, reason: FinishReason, out: &mut Vec<ChatCompletionChunk>) {
        self.role(out);
        out.push(self.chunk(ChoiceDelta::default(), Some(reason)));
    }
}

/// A run-time parser that answers in OpenAI chunks.
#[derive(Debug)]
pub struct ChunkStream<'t> {
    parser: Parser<'t>,
    deltas: Deltas,
    chunker: Chunker,
    initial_done: bool,
    buf: Vec<Delta>,
}

impl<'t> ChunkStream<'t> {
    /// A stream over `template` for a generation that follows `prefix` (the
    /// prompt sent); `options.tools` are given to the parser too.
    pub fn new(
        template: &'t Template,
        prefix: &str,
        options: Options,
    ) -> Result<ChunkStream<'t>, Error> {
        let parser = match &options.tools {
            Some(tools) => template.parser_with_tools(prefix, tools)?,
            None => template.parser(prefix)?,
        };
        Ok(ChunkStream {
            parser,
            deltas: Deltas::new(template, options.clone())?,
            chunker: Chunker::new(options),
            initial_done: false,
            buf: Vec::new(),
        })
    }

    fn initial(&mut self) -> Result<(), Error> {
        if !self.initial_done {
            self.initial_done = true;
            for ev in self.parser.initial_events().to_vec() {
                self.deltas.event(ev.as_event(), &mut self.buf)?;
            }
        }
        Ok(())
    }

    /// The deltas for the next piece of the model's output.
    pub fn feed_deltas(&mut self, text: &str) -> Result<Vec<Delta>, Error> {
        self.initial()?;
        let events = self.parser.feed(text)?;
        for ev in events.iter() {
            self.deltas.event(ev, &mut self.buf)?;
        }
        self.deltas
            .open_region(self.parser.open_region(), &mut self.buf);
        Ok(std::mem::take(&mut self.buf))
    }

    /// The chunks for the next piece of the model's output (possibly none).
    pub fn feed(&mut self, text: &str) -> Result<Vec<ChatCompletionChunk>, Error> {
        let deltas = self.feed_deltas(text)?;
        let mut out = Vec::new();
        self.chunker.chunks(&deltas, &mut out);
        Ok(out)
    }

    /// The last deltas, the finish reason and the message.
    pub fn finalize_deltas(&mut self, cut: bool) -> Result<(Vec<Delta>, FinishReason, Map), Error> {
        self.initial()?;
        let (message, events) = self.parser.finalize()?;
        for ev in events.iter() {
            self.deltas.event(ev, &mut self.buf)?;
        }
        self.deltas.finish(&message, &mut self.buf)?;
        let reason = if cut {
            FinishReason::Length
        } else if self.deltas.has_calls() {
            FinishReason::ToolCalls
        } else {
            FinishReason::Stop
        };
        Ok((std::mem::take(&mut self.buf), reason, message))
    }

    /// The last chunks, ending with the one that carries `finish_reason`
    /// (`length` when `cut`: the generation was stopped by a limit), and the
    /// parsed message.
    pub fn finalize(&mut self, cut: bool) -> Result<(Vec<ChatCompletionChunk>, Map), Error> {
        let (deltas, reason, message) = self.finalize_deltas(cut)?;
        let mut out = Vec::new();
        self.chunker.chunks(&deltas, &mut out);
        self.chunker.finish(reason, &mut out);
        Ok((out, message))
    }
}

/// The non-streaming message for a parsed message: what a `stream: false`
/// answer carries. Ids the model did not write (or wrote empty) are made
/// with `options.ids` (numbered from 0, as a stream numbers them).
pub fn message(message: &dyn AssistantMessage, options: &Options) -> ChatCompletionMessage {
    let calls: Vec<ChatCompletionToolCall> = message
        .tool_calls()
        .into_iter()
        .enumerate()
        .map(|(n, c)| ChatCompletionToolCall {
            id: c
                .id
                .filter(|id| !id.is_empty())
                .unwrap_or_else(|| options.ids.make(n as u64)),
            kind: "function".into(),
            function: FunctionCall {
                name: c.name,
                arguments: arguments_text(&c.arguments),
            },
        })
        .collect();
    let reasoning = message.reasoning().map(str::to_owned);
    ChatCompletionMessage {
        role: "assistant".into(),
        content: message.content().map(str::to_owned),
        reasoning_content: reasoning
            .clone()
            .filter(|_| options.reasoning == Reasoning::ReasoningContent),
        reasoning: reasoning.filter(|_| options.reasoning == Reasoning::Reasoning),
        tool_calls: (!calls.is_empty()).then_some(calls),
    }
}
