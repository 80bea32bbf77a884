//! OpenAI-compatible streaming from any response template.
//!
//! A server built on retort sends OpenAI `chat.completion.chunk`s, not
//! region events. This crate derives them from the template, for every
//! model: [`ChunkStream`] wraps a parser — run-time
//! ([`ChunkStream::new`]) or compiled ([`ChunkStream::with_parser`] with
//! `parser.into_engine()`) — and turns each `feed` into chunks and
//! `finalize` into the last ones plus `finish_reason`. [`ChunkStream::feed_chunks`]
//! gives the same chunks borrowed ([`ChunkRef`], the same JSON), without an
//! allocation per chunk: what a server writing SSE lines uses. [`Deltas`] is
//! the core underneath, for layers of one's own.
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

pub use stream::{Delta, DeltaSink, Deltas, REGION_BREAK, arguments_text};
pub use types::*;

use retort_engine::typed::AssistantMessage;
use retort_engine::{Machine, Map, ParseError, Parser, Template, Value};
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
    /// As the model writes them (what chat servers do). Fragments are
    /// never taken back, so where the reference keeps only the last region
    /// of a field that neither repeats nor joins (a model that writes two
    /// `<think>` blocks, text after a tool call where content is the
    /// implicit field, text past the end-of-turn marker, two regions of a
    /// tool-call field that does not repeat), every region is sent, in
    /// order: text regions separated by [`REGION_BREAK`], each region's
    /// calls. The layer's message ([`ChunkStream::message`]) is what was
    /// sent, so a client's accumulated message equals it for every
    /// chunking; it differs from the reference's message exactly where the
    /// parser reports a replaced value (`Parser::replaced`).
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
    /// Whether the reasoning is split out (the default) or kept inline in
    /// the content, delimiters included (llama.cpp's `reasoning_format:
    /// none`): then it streams as content as the model writes it, and no
    /// reasoning goes out (see `retort_engine::ReasoningFormat`). A stream
    /// over a parser made elsewhere ([`ChunkStream::with_parser`]) follows
    /// that parser's option instead.
    pub reasoning_format: retort_engine::ReasoningFormat,
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
            reasoning_format: retort_engine::ReasoningFormat::default(),
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
    /// Scratch for [`Chunker::chunks`].
    scratch: Packed,
}

/// What one chunk says; its text is a range of [`Packed::arena`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part {
    Role,
    Content(usize, usize),
    Reasoning(usize, usize),
    CallOpen {
        index: u32,
        id: (usize, usize),
        name: (usize, usize),
    },
    CallArgs {
        index: u32,
        text: (usize, usize),
    },
    Finish(FinishReason),
}

/// The chunks of one call, packed: their parts and one buffer with all
/// their text. Reused from call to call, so that streaming allocates
/// nothing for the chunks once the buffers have grown.
#[derive(Clone, Debug, Default)]
struct Packed {
    arena: String,
    parts: Vec<Part>,
}

impl Packed {
    fn clear(&mut self) {
        self.arena.clear();
        self.parts.clear();
    }

    #[inline]
    fn push_text(&mut self, text: &str) -> (usize, usize) {
        let start = self.arena.len();
        self.arena.push_str(text);
        (start, self.arena.len())
    }

    /// A fragment of `kind`'s text: it joins the last part when that is a
    /// fragment of the same kind, otherwise it starts a part.
    #[inline]
    fn fragment(&mut self, kind: Part, text: &str) {
        if self.extend_last(kind, text) {
            return;
        }
        let range = self.push_text(text);
        self.parts.push(match kind {
            Part::Content(..) => Part::Content(range.0, range.1),
            Part::Reasoning(..) => Part::Reasoning(range.0, range.1),
            Part::CallArgs { index, .. } => Part::CallArgs { index, text: range },
            other => other,
        });
    }

    /// Appends `text` to the last part when it is a fragment of the same
    /// kind (its text ends the arena); `false` when there is none.
    #[inline]
    fn extend_last(&mut self, kind: Part, text: &str) -> bool {
        let end = self.arena.len();
        let grown = match (self.parts.last_mut(), kind) {
            (Some(Part::Content(_, e)), Part::Content(..))
            | (Some(Part::Reasoning(_, e)), Part::Reasoning(..)) => e,
            (
                Some(Part::CallArgs {
                    index: i,
                    text: (_, e),
                }),
                Part::CallArgs { index, .. },
            ) if *i == index => e,
            _ => return false,
        };
        debug_assert_eq!(*grown, end);
        self.arena.push_str(text);
        *grown = self.arena.len();
        true
    }
}

/// Deltas written straight into packed chunks (what
/// [`ChunkStream::feed_chunks`] uses: no [`Delta`] is made).
struct PackSink<'p> {
    omit_reasoning: bool,
    packed: &'p mut Packed,
}

impl DeltaSink for PackSink<'_> {
    #[inline]
    fn content(&mut self, text: &str) {
        self.packed.fragment(Part::Content(0, 0), text);
    }
    #[inline]
    fn reasoning(&mut self, text: &str) {
        if !self.omit_reasoning {
            self.packed.fragment(Part::Reasoning(0, 0), text);
        }
    }
    fn call_open(&mut self, index: u32, id: &str, name: &str) {
        let id = self.packed.push_text(id);
        let name = self.packed.push_text(name);
        self.packed.parts.push(Part::CallOpen { index, id, name });
    }
    #[inline]
    fn call_args(&mut self, index: u32, text: &str) {
        self.packed.fragment(
            Part::CallArgs {
                index,
                text: (0, 0),
            },
            text,
        );
    }
    fn call_done(&mut self, _index: u32) {}
}

impl Chunker {
    /// A chunker writing `options`' id, model and time.
    pub fn new(options: Options) -> Chunker {
        Chunker {
            options,
            started: false,
            scratch: Packed::default(),
        }
    }

    fn role(&mut self, out: &mut Packed) {
        if !self.started {
            self.started = true;
            out.parts.push(Part::Role);
        }
    }

    /// Packs `deltas` (after the role chunk, once) into `out`.
    fn pack(&mut self, deltas: &[Delta], out: &mut Packed) {
        self.role(out);
        let mut sink = self.sink(out);
        for d in deltas {
            sink.delta(d);
        }
    }

    /// A sink packing deltas into `out`, as [`Chunker::pack`] does.
    fn sink<'p>(&self, out: &'p mut Packed) -> PackSink<'p> {
        PackSink {
            omit_reasoning: self.options.reasoning == Reasoning::Omit,
            packed: out,
        }
    }

    fn finish_part(&mut self, reason: FinishReason, out: &mut Packed) {
        self.role(out);
        out.parts.push(Part::Finish(reason));
    }

    /// Appends the chunks for `deltas` to `out` (the role chunk first, once).
    pub fn chunks(&mut self, deltas: &[Delta], out: &mut Vec<ChatCompletionChunk>) {
        let mut packed = std::mem::take(&mut self.scratch);
        packed.clear();
        self.pack(deltas, &mut packed);
        out.extend(
            Chunks::new(&packed, &self.options)
                .iter()
                .map(|c| c.to_owned()),
        );
        self.scratch = packed;
    }

    /// The last chunk: an empty delta with `finish_reason`.
    pub fn finish(&mut self, reason: FinishReason, out: &mut Vec<ChatCompletionChunk>) {
        let mut packed = std::mem::take(&mut self.scratch);
        packed.clear();
        self.finish_part(reason, &mut packed);
        out.extend(
            Chunks::new(&packed, &self.options)
                .iter()
                .map(|c| c.to_owned()),
        );
        self.scratch = packed;
    }
}

/// The chunks one call to [`ChunkStream::feed_chunks`] or
/// [`ChunkStream::finalize_chunks`] made, borrowing the stream: iterate for
/// [`ChunkRef`]s, which serialise exactly as the owned
/// [`ChatCompletionChunk`]s do, without an allocation per chunk.
#[derive(Clone, Copy, Debug)]
pub struct Chunks<'a> {
    packed: &'a Packed,
    options: &'a Options,
}

impl<'a> Chunks<'a> {
    fn new(packed: &'a Packed, options: &'a Options) -> Chunks<'a> {
        Chunks { packed, options }
    }

    /// Number of chunks.
    pub fn len(&self) -> usize {
        self.packed.parts.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.packed.parts.is_empty()
    }

    /// The chunks, in order.
    pub fn iter(&self) -> impl Iterator<Item = ChunkRef<'a>> + 'a {
        let (packed, options) = (self.packed, self.options);
        packed.parts.iter().map(move |part| {
            let at = |(a, b): (usize, usize)| &packed.arena[a..b];
            let mut delta = ChoiceDeltaRef::default();
            let mut finish_reason = None;
            match *part {
                Part::Role => delta.role = Some("assistant"),
                Part::Content(a, b) => delta.content = Some(at((a, b))),
                Part::Reasoning(a, b) => {
                    if options.reasoning == Reasoning::Reasoning {
                        delta.reasoning = Some(at((a, b)));
                    } else {
                        delta.reasoning_content = Some(at((a, b)));
                    }
                }
                Part::CallOpen { index, id, name } => {
                    delta.tool_calls = Some([ToolCallDeltaRef {
                        index,
                        id: Some(at(id)),
                        kind: Some("function"),
                        function: Some(FunctionDeltaRef {
                            name: Some(at(name)),
                            arguments: Some(""),
                        }),
                    }]);
                }
                Part::CallArgs { index, text } => {
                    delta.tool_calls = Some([ToolCallDeltaRef {
                        index,
                        id: None,
                        kind: None,
                        function: Some(FunctionDeltaRef {
                            name: None,
                            arguments: Some(at(text)),
                        }),
                    }]);
                }
                Part::Finish(reason) => finish_reason = Some(reason),
            }
            ChunkRef {
                id: &options.completion_id,
                object: "chat.completion.chunk",
                created: options.created,
                model: &options.model,
                choices: [ChunkChoiceRef {
                    index: 0,
                    delta,
                    logprobs: None,
                    finish_reason,
                }],
            }
        })
    }
}

/// A parser that answers in OpenAI chunks: a run-time parser by default,
/// or a compiled one's engine (see [`ChunkStream::with_parser`]).
#[derive(Debug)]
pub struct ChunkStream<'t, M: Machine<'t> = &'t Template> {
    parser: Parser<'t, M>,
    deltas: Deltas,
    chunker: Chunker,
    initial_done: bool,
    packed: Packed,
}

impl<'t> ChunkStream<'t> {
    /// A stream over `template` for a generation that follows `prefix` (the
    /// prompt sent); `options.tools` are given to the parser too.
    pub fn new(
        template: &'t Template,
        prefix: &str,
        options: Options,
    ) -> Result<ChunkStream<'t>, Error> {
        let parser_options =
            retort_engine::ParserOptions::new().reasoning_format(options.reasoning_format);
        let parser = template.parser_with(prefix, parser_options, options.tools.as_ref())?;
        ChunkStream::with_parser(parser, options)
    }
}

impl<'t, M: Machine<'t>> ChunkStream<'t, M> {
    /// A stream over a parser made elsewhere: a compiled parser's engine
    /// (`parser.into_engine()`), or one made with [`retort_engine::ParserOptions`].
    /// It must not have been fed yet, and must have been given the same
    /// `tools` as `options` (they decide which values coercion may change).
    pub fn with_parser(
        mut parser: Parser<'t, M>,
        mut options: Options,
    ) -> Result<ChunkStream<'t, M>, Error> {
        options.reasoning_format = parser.options().reasoning_format;
        let deltas = Deltas::new(parser.template(), options.clone())?;
        // `xml-inline` tool calls: the parser reports their parameters as
        // they are decided, and builds the region's value from them.
        parser.stream_params(deltas.wants_params());
        // Every close event's value is read here and the message ends as
        // the dict: a compiled machine's typed values would only be turned
        // back into dicts, their content copied (see
        // `Parser::typed_regions`).
        parser.typed_regions(false);
        Ok(ChunkStream {
            deltas,
            parser,
            chunker: Chunker::new(options),
            initial_done: false,
            packed: Packed::default(),
        })
    }

    /// The prompt's events (once), then `text`'s, into `out`.
    fn step<S: DeltaSink>(&mut self, text: &str, out: &mut S) -> Result<(), Error> {
        self.initial(out)?;
        let events = self.parser.feed(text)?;
        deliver(&mut self.deltas, events, out)?;
        if self.deltas.wants_open_region() {
            self.deltas.open_region(self.parser.open_region(), out);
        }
        Ok(())
    }

    #[inline]
    fn initial<S: DeltaSink>(&mut self, out: &mut S) -> Result<(), Error> {
        if !self.initial_done {
            self.initial_done = true;
            for ev in self.parser.initial_events().to_vec() {
                self.deltas.prompt_event(ev.as_event(), out)?;
            }
        }
        Ok(())
    }

    /// The deltas for the next piece of the model's output.
    pub fn feed_deltas(&mut self, text: &str) -> Result<Vec<Delta>, Error> {
        let mut out = Vec::new();
        self.step(text, &mut out)?;
        Ok(out)
    }

    /// The chunks for the next piece of the model's output (possibly none).
    pub fn feed(&mut self, text: &str) -> Result<Vec<ChatCompletionChunk>, Error> {
        let deltas = self.feed_deltas(text)?;
        let mut out = Vec::new();
        self.chunker.chunks(&deltas, &mut out);
        Ok(out)
    }

    /// [`ChunkStream::feed`] without owned chunks: the chunks borrow the
    /// stream until the next call. The same chunks, serialised to the same
    /// JSON; what a server writing SSE lines wants (no allocation per chunk
    /// once the stream's buffers have grown).
    pub fn feed_chunks(&mut self, text: &str) -> Result<Chunks<'_>, Error> {
        // The deltas go straight into the packed chunks, whose buffers are
        // reused from call to call.
        let mut packed = std::mem::take(&mut self.packed);
        packed.clear();
        self.chunker.role(&mut packed);
        let done = self.step(text, &mut self.chunker.sink(&mut packed));
        self.packed = packed;
        done?;
        Ok(Chunks::new(&self.packed, &self.chunker.options))
    }

    /// The last deltas (into `out`), the finish reason and the message.
    fn finish_into<S: DeltaSink>(
        &mut self,
        cut: bool,
        out: &mut S,
    ) -> Result<(FinishReason, Map), Error> {
        self.initial(out)?;
        let (message, events) = self.parser.finalize()?;
        deliver(&mut self.deltas, events, out)?;
        self.deltas.finish(&message, out)?;
        let reason = if cut {
            FinishReason::Length
        } else if self.deltas.has_calls() {
            FinishReason::ToolCalls
        } else {
            FinishReason::Stop
        };
        Ok((reason, message))
    }

    /// The layer's message: what the stream sent, accumulated (complete
    /// after `finalize`). This is what a `stream: false` answer carries, so
    /// that streamed and non-streaming answers agree; see
    /// [`TextMode::Stream`] for where it differs from the reference's
    /// message, and [`message`] for that one in OpenAI's shape.
    pub fn message(&self) -> ChatCompletionMessage {
        self.deltas.message()
    }

    /// The values the template's semantics replaced (see
    /// [`retort_engine::Parser::replaced`]).
    pub fn replaced(&self) -> &[retort_engine::Replaced] {
        self.parser.replaced()
    }

    /// The last deltas, the finish reason and the message.
    pub fn finalize_deltas(&mut self, cut: bool) -> Result<(Vec<Delta>, FinishReason, Map), Error> {
        let mut out = Vec::new();
        let (reason, message) = self.finish_into(cut, &mut out)?;
        Ok((out, reason, message))
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

    /// [`ChunkStream::finalize`] with borrowed chunks (see
    /// [`ChunkStream::feed_chunks`]).
    pub fn finalize_chunks(&mut self, cut: bool) -> Result<(Chunks<'_>, Map), Error> {
        let mut packed = std::mem::take(&mut self.packed);
        packed.clear();
        self.chunker.role(&mut packed);
        let done = self.finish_into(cut, &mut self.chunker.sink(&mut packed));
        let (reason, message) = match done {
            Ok(d) => d,
            Err(e) => {
                self.packed = packed;
                return Err(e);
            }
        };
        self.chunker.finish_part(reason, &mut packed);
        self.packed = packed;
        Ok((Chunks::new(&self.packed, &self.chunker.options), message))
    }
}

/// One call's events, with the parameters the parser decided among them
/// (each after the events that preceded its decision).
fn deliver<S: DeltaSink>(
    deltas: &mut Deltas,
    events: retort_engine::Events<'_>,
    out: &mut S,
) -> Result<(), Error> {
    let params = events.params();
    let mut next = 0;
    for (k, ev) in events.iter_indexed().enumerate() {
        while let Some(p) = params.get(next).filter(|p| p.after <= k) {
            deltas.param(p, out);
            next += 1;
        }
        deltas.event_indexed(ev, out)?;
    }
    for p in &params[next..] {
        deltas.param(p, out);
    }
    Ok(())
}

/// The reference's message in OpenAI's shape. Where no value was replaced
/// it is the layer's message ([`ChunkStream::message`], what a stream
/// accumulates to and what a `stream: false` answer should carry). Ids the model did not write (or wrote empty) are made
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
