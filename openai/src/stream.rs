//! The incremental core: region events in, message deltas out.

use crate::json::{JsonReader, Piece};
use crate::shape::{CallShape, Shape, Source, TextShape};
use crate::{Error, Options};
use retort_engine::OpenRegion;
use retort_engine::py::{is_space, json_loads};
use retort_engine::transform::ToolSchemas;
use retort_engine::typed::{AssistantMessage, ToolCall};
use retort_engine::value::{NonFinite, write_json_str};
use retort_engine::{Event, Map, Param, Template, Value};
use std::collections::HashMap;

/// One step of a message being written: what chunks and Responses events
/// are made of.
#[derive(Clone, Debug, PartialEq)]
pub enum Delta {
    /// A fragment of the visible answer.
    Content(String),
    /// A fragment of the reasoning.
    Reasoning(String),
    /// A tool call begins: sent once per call, before its arguments.
    CallOpen {
        /// The call's index (dense, in order).
        index: u32,
        /// The call's id (the model's own, or generated).
        id: String,
        /// The tool's name.
        name: String,
    },
    /// A fragment of a call's arguments text.
    CallArgs {
        /// The call's index.
        index: u32,
        /// The fragment.
        text: String,
    },
    /// A call's arguments are complete.
    CallDone {
        /// The call's index.
        index: u32,
    },
}

/// Where [`Deltas`] writes what it decides, one step at a time.
///
/// `Vec<Delta>` collects owned [`Delta`]s; the chunk streams write straight
/// into their packed chunks, so that a streamed piece of text is copied once
/// and no string is allocated per step. The texts given are never empty.
pub trait DeltaSink {
    /// A fragment of the visible answer.
    fn content(&mut self, text: &str);
    /// A fragment of the reasoning.
    fn reasoning(&mut self, text: &str);
    /// A tool call begins (once per call, before its arguments).
    fn call_open(&mut self, index: u32, id: &str, name: &str);
    /// A fragment of a call's arguments text.
    fn call_args(&mut self, index: u32, text: &str);
    /// A call's arguments are complete.
    fn call_done(&mut self, index: u32);

    /// Writes one owned [`Delta`].
    fn delta(&mut self, delta: &Delta) {
        match delta {
            Delta::Content(t) => self.content(t),
            Delta::Reasoning(t) => self.reasoning(t),
            Delta::CallOpen { index, id, name } => self.call_open(*index, id, name),
            Delta::CallArgs { index, text } => self.call_args(*index, text),
            Delta::CallDone { index } => self.call_done(*index),
        }
    }
}

impl DeltaSink for Vec<Delta> {
    fn content(&mut self, text: &str) {
        self.push(Delta::Content(text.to_owned()));
    }
    fn reasoning(&mut self, text: &str) {
        self.push(Delta::Reasoning(text.to_owned()));
    }
    fn call_open(&mut self, index: u32, id: &str, name: &str) {
        self.push(Delta::CallOpen {
            index,
            id: id.to_owned(),
            name: name.to_owned(),
        });
    }
    fn call_args(&mut self, index: u32, text: &str) {
        self.push(Delta::CallArgs {
            index,
            text: text.to_owned(),
        });
    }
    fn call_done(&mut self, index: u32) {
        self.push(Delta::CallDone { index });
    }
}

/// The arguments text a message's call has: a string verbatim (a model that
/// wrote arguments that are not JSON), anything else as
/// `json.dumps(value, ensure_ascii=False)` writes it.
pub fn arguments_text(arguments: &Value) -> String {
    match arguments {
        Value::Str(s) => s.clone(),
        v => {
            let mut s = String::new();
            v.write_json(&mut s, NonFinite::Python);
            s
        }
    }
}

/// Writes the arguments text of a call whose arguments are `arguments`
/// (`None`: the call has none, read as `{}`), as [`arguments_text`] does.
fn write_arguments(arguments: Option<&Value>, out: &mut String) {
    match arguments {
        Some(Value::Str(s)) => out.push_str(s),
        Some(v) => v.write_json(out, NonFinite::Python),
        None => out.push_str("{}"),
    }
}

/// Whether `text` is exactly what [`write_arguments`] writes for
/// `arguments`, found without writing it: strings, keys, integers and
/// punctuation are compared in place; other scalars are written to
/// `scratch` first.
fn arguments_are(arguments: Option<&Value>, text: &str, scratch: &mut String) -> bool {
    match arguments {
        Some(Value::Str(s)) => s == text,
        None => text == "{}",
        Some(v) => {
            let mut rest = text.as_bytes();
            same_json(v, &mut rest, scratch) && rest.is_empty()
        }
    }
}

/// Consumes from `rest` the JSON text `Value::write_json` writes for `v`
/// (Python's spelling); `false` at the first difference.
fn same_json(v: &Value, rest: &mut &[u8], scratch: &mut String) -> bool {
    fn lit(rest: &mut &[u8], s: &[u8]) -> bool {
        match rest.strip_prefix(s) {
            Some(r) => {
                *rest = r;
                true
            }
            None => false,
        }
    }
    fn string(rest: &mut &[u8], s: &str) -> bool {
        if !lit(rest, b"\"") {
            return false;
        }
        // The common case: nothing to escape, compared as one slice.
        if !s.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20) {
            return lit(rest, s.as_bytes()) && lit(rest, b"\"");
        }
        let mut escaped = String::new();
        write_json_str(&mut escaped, s);
        lit(rest, &escaped.as_bytes()[1..])
    }
    match v {
        Value::Str(s) => string(rest, s),
        Value::List(items) => {
            if !lit(rest, b"[") {
                return false;
            }
            for (i, item) in items.iter().enumerate() {
                if i > 0 && !lit(rest, b", ") || !same_json(item, rest, scratch) {
                    return false;
                }
            }
            lit(rest, b"]")
        }
        Value::Map(map) => {
            if !lit(rest, b"{") {
                return false;
            }
            for (i, (k, item)) in map.iter().enumerate() {
                if i > 0 && !lit(rest, b", ")
                    || !string(rest, k)
                    || !lit(rest, b": ")
                    || !same_json(item, rest, scratch)
                {
                    return false;
                }
            }
            lit(rest, b"}")
        }
        scalar => {
            scratch.clear();
            scalar.write_json(scratch, NonFinite::Python);
            lit(rest, scratch.as_bytes())
        }
    }
}

/// A tool call of a message's value, borrowed: what
/// [`ToolCall::from_value`] reads, without copying the arguments.
struct CallRef<'a> {
    id: Option<&'a str>,
    name: &'a str,
    arguments: Option<&'a Value>,
}

/// `map[key]`, found by comparing keys for the few-key maps a tool call
/// is (cheaper than hashing the key).
fn get<'a>(map: &'a Map, key: &str) -> Option<&'a Value> {
    if map.len() <= 8 {
        map.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    } else {
        map.get(key)
    }
}

impl<'a> CallRef<'a> {
    /// The calls in a `tool_calls` value, as [`ToolCall::all_in`] finds them.
    fn all_in(value: &'a Value) -> Vec<CallRef<'a>> {
        match value {
            Value::List(items) => items.iter().filter_map(CallRef::from_value).collect(),
            item @ Value::Map(_) => CallRef::from_value(item).into_iter().collect(),
            _ => Vec::new(),
        }
    }

    fn from_value(item: &'a Value) -> Option<CallRef<'a>> {
        let Value::Map(item) = item else {
            return None;
        };
        let call = match get(item, "function") {
            Some(Value::Map(f)) => f,
            _ => item,
        };
        let Some(Value::Str(name)) = get(call, "name") else {
            return None;
        };
        let id = match get(item, "id") {
            Some(Value::Str(id)) => Some(id.as_str()),
            _ => None,
        };
        Some(CallRef {
            id,
            name,
            arguments: get(call, "arguments").or_else(|| get(call, "parameters")),
        })
    }

    fn of(call: &'a ToolCall) -> CallRef<'a> {
        CallRef {
            id: call.id.as_deref(),
            name: &call.name,
            arguments: Some(&call.arguments),
        }
    }
}

/// A text field being streamed (content or reasoning).
#[derive(Clone, Debug)]
struct TextState {
    shape: TextShape,
    regions: usize,
    /// Non-space text seen in the current region (with `strip`).
    started: bool,
    /// Spaces that are sent only if more text follows (with `strip`).
    held: String,
    /// A region of a field that neither repeats nor joins began after text
    /// was sent: [`REGION_BREAK`] goes out before its first text, if any
    /// (see [`crate::TextMode::Stream`]).
    pending_break: bool,
}

/// What separates two regions of a text field that neither repeats nor
/// joins, in the layer's message (the reference keeps only the last): a
/// paragraph break, as the regions were separate passages of the output.
pub const REGION_BREAK: &str = "\n\n";

impl TextState {
    fn new(shape: TextShape) -> TextState {
        TextState {
            shape,
            regions: 0,
            started: false,
            held: String::new(),
            pending_break: false,
        }
    }

    /// A region opens; `said` is whether any of the field's text was sent.
    fn open(&mut self, said: bool, out: &mut String) {
        if self.regions > 0 {
            match &self.shape.join {
                Some(sep) => out.push_str(sep),
                None => self.pending_break = said,
            }
        }
        self.regions += 1;
        self.started = false;
        self.held.clear();
    }

    /// Whether a later region replaced an earlier one in the reference's
    /// message (the field neither repeats nor joins).
    fn replaced(&self) -> bool {
        self.regions > 1 && self.shape.join.is_none()
    }

    /// The break before a replacing region's first text, once.
    #[inline]
    fn region_break(&mut self, out: &mut String) {
        if self.pending_break {
            self.pending_break = false;
            out.push_str(REGION_BREAK);
        }
    }

    fn chunk(&mut self, text: &str, out: &mut String) {
        if !self.shape.strip {
            if !text.is_empty() {
                self.region_break(out);
            }
            out.push_str(text);
            return;
        }
        // Leading spaces of the region are dropped; spaces after text are
        // held until more text follows them (`str.strip()` as it streams).
        let mut rest = text;
        if !self.started {
            rest = rest.trim_start_matches(is_space);
            if rest.is_empty() {
                return;
            }
            self.started = true;
        }
        let body = rest.trim_end_matches(is_space);
        if body.is_empty() {
            self.held.push_str(rest);
            return;
        }
        self.region_break(out);
        out.push_str(&self.held);
        self.held.clear();
        out.push_str(body);
        self.held.push_str(&rest[body.len()..]);
    }
}

/// What a field is to the deltas.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Calls,
    Content,
    Reasoning,
    Other,
}

/// One tool call, from its first sign to its last fragment.
#[derive(Clone, Debug, Default)]
struct Call {
    index: Option<u32>,
    name: Option<String>,
    id: Option<String>,
    /// The arguments' canonical text as far as decided.
    args: String,
    /// Bytes of `args` sent.
    sent: usize,
    /// Where `args` stops being sendable (a value held for coercion).
    hold: Option<usize>,
    /// The reader's text is not used for this call: its arguments go out
    /// whole at the close.
    fallback: bool,
    /// The reader saw the whole arguments value.
    args_done: bool,
    /// The reader's calls are complete; the close has been reconciled.
    closed: bool,
    /// Parameters reported before the call's name was known, which
    /// coercion needs (a region that opened and closed in one feed): they
    /// are written at the close, once the value names the tool, so that
    /// the arguments' text is the one a streamed region gets.
    pending: Vec<(String, Value)>,
}

/// The calls of the open tool region.
#[derive(Clone, Debug)]
struct Region {
    /// The JSON reader follows this region ([`Deltas::reader`]).
    reads: bool,
    /// The parser reports this region's parameters ([`Deltas::param`]).
    xml: bool,
    /// Every call of the region has its name and id (they are never
    /// unlearned, so [`Deltas::open_region`] need not look again until a
    /// call is added).
    known: bool,
    /// Positions in `Deltas::calls` of this region's calls, in order.
    calls: Vec<usize>,
}

/// Turns a parser's events into [`Delta`]s: the core behind chunks and
/// Responses events, for run-time and compiled parsers alike.
///
/// Feed it every event ([`Deltas::event`], or [`Deltas::event_indexed`]
/// with `Events::iter_indexed`; a compiled parser's typed events through
/// `.untyped()`), then after each call to the parser what is open
/// ([`Deltas::open_region`], from `parser.open_region()` — for a compiled
/// parser `parser.engine().open_region()`), and at the end the message
/// ([`Deltas::finish`]). When [`Deltas::wants_params`] says so, turn on the
/// parser's `stream_params` and give each of a call's `Events::params` to
/// [`Deltas::param`] among the events, after the first `Param::after` of
/// them. [`crate::ChunkStream`] does all of this.
#[derive(Clone, Debug)]
pub struct Deltas {
    shape: Shape,
    options: Options,
    schemas: ToolSchemas,
    /// Tool name → parameter → whether coercion may change a string value.
    typed_params: HashMap<String, HashMap<String, bool>>,
    content: Option<TextState>,
    reasoning: Option<TextState>,
    calls: Vec<Call>,
    /// Leading calls that are open and closed: nothing more goes out for
    /// them, so [`Deltas::send`] starts after them.
    settled: usize,
    opened: u32,
    region: Option<Region>,
    /// The reader of JSON tool-call regions, kept from region to region so
    /// that its buffers are reused.
    reader: Option<JsonReader>,
    /// Per field of the template (by index), what it is to the deltas.
    kinds: Vec<Kind>,
    /// The tool-call field, when its `xml-inline` regions are read as they
    /// stream (the parser then reports their parameters: [`Deltas::param`]).
    xml_field: Option<u16>,
    pieces: Vec<Piece>,
    /// The last closed region's list of calls, for the next region.
    spare_calls: Vec<usize>,
    /// Scratch for a call's final arguments text.
    want: String,
    /// Scratch for a fragment of content or reasoning.
    text: String,
    /// Everything sent of the reasoning and of the content: the layer's
    /// message ([`Deltas::message`]).
    said_reasoning: String,
    said_content: String,
    /// The calls sent and complete, in order: id, name, arguments text.
    done: Vec<(String, String, String)>,
    /// Regions of the tool-call field closed so far.
    call_regions: usize,
    /// The reasoning goes out as content (`ReasoningFormat::Inline`).
    inline: bool,
    /// Reasoning text was sent as content.
    said_inline: bool,
    /// The last text sent was inline reasoning: the content region after
    /// it keeps its leading whitespace (as the engine's message does).
    after_span: bool,
    /// Inline reasoning the prompt wrote (an open `<think>`), held until the
    /// model writes into the region: a region the model leaves without a
    /// byte is the prompt's, not content (as in the engine's message).
    inline_held: String,
    /// The event being taken is the prompt's ([`Deltas::prompt_event`]).
    in_prompt: bool,
}

/// Whether `tools=` coercion may turn a string argument with this schema
/// into something else: anything but a plain `{"type": "string"}` may.
fn may_coerce(schema: &Value) -> bool {
    let Value::Map(m) = schema else { return false };
    let plain = matches!(m.get("type"), Some(Value::Str(t)) if t == "string")
        || (m.get("type").is_none() && !m.contains_key("anyOf") && !m.contains_key("oneOf"));
    !plain || m.contains_key("anyOf") || m.contains_key("oneOf") || m.contains_key("nullable")
}

fn typed_params(tools: &Value) -> HashMap<String, HashMap<String, bool>> {
    let mut out = HashMap::new();
    let Value::List(items) = tools else {
        return out;
    };
    for tool in items {
        let Value::Map(m) = tool else { continue };
        let func = m.get("function").unwrap_or(tool);
        let Value::Map(func) = func else { continue };
        let Some(Value::Str(name)) = func.get("name") else {
            continue;
        };
        let mut params = HashMap::new();
        if let Some(Value::Map(p)) = func.get("parameters")
            && let Some(Value::Map(props)) = p.get("properties")
        {
            for (k, schema) in props {
                params.insert(k.clone(), may_coerce(schema));
            }
        }
        out.insert(name.clone(), params);
    }
    out
}

impl Deltas {
    /// A core for `template`'s messages.
    pub fn new(template: &Template, options: Options) -> Result<Deltas, Error> {
        let shape = Shape::of(template);
        let tools = options.tools.clone().unwrap_or(Value::Null);
        let schemas = ToolSchemas::from_tools(&tools).map_err(|e| Error::Tools(e.to_string()))?;
        let typed_params = if schemas.is_empty() {
            HashMap::new()
        } else {
            typed_params(&tools)
        };
        let reader = shape
            .calls
            .as_ref()
            .filter(|c| c.json)
            .map(|c| JsonReader::new(c.targets(!schemas.is_empty())));
        let xml_field = shape
            .calls
            .as_ref()
            .filter(|c| c.xml)
            .and_then(|c| template.field_index(&c.field))
            .filter(|&i| template.fields()[i].content.param_stream().is_some())
            .and_then(|i| u16::try_from(i).ok());
        let kind_of = |name: &str| {
            if shape.calls.as_ref().is_some_and(|c| c.field == name) {
                Kind::Calls
            } else if shape.content.as_ref().is_some_and(|c| c.field == name) {
                Kind::Content
            } else if shape.reasoning.as_ref().is_some_and(|c| c.field == name) {
                Kind::Reasoning
            } else {
                Kind::Other
            }
        };
        let kinds = template.fields().iter().map(|f| kind_of(&f.name)).collect();
        let inline = options.reasoning_format == retort_engine::ReasoningFormat::Inline
            && shape.content.is_some()
            && shape.reasoning.is_some();
        Ok(Deltas {
            kinds,
            reader,
            xml_field,
            content: shape.content.clone().map(TextState::new),
            reasoning: shape.reasoning.clone().map(TextState::new),
            shape,
            options,
            schemas,
            typed_params,
            calls: Vec::new(),
            settled: 0,
            opened: 0,
            region: None,
            pieces: Vec::new(),
            spare_calls: Vec::new(),
            want: String::new(),
            text: String::new(),
            said_reasoning: String::new(),
            said_content: String::new(),
            done: Vec::new(),
            call_regions: 0,
            inline,
            said_inline: false,
            after_span: false,
            inline_held: String::new(),
            in_prompt: false,
        })
    }

    /// The options the core was made with.
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// Whether any tool call has been opened.
    pub fn has_calls(&self) -> bool {
        self.opened > 0
    }

    #[inline]
    fn is_calls(&self, field: &str) -> bool {
        self.shape.calls.as_ref().is_some_and(|c| c.field == field)
    }

    #[inline]
    fn text_of(&mut self, field: &str) -> Option<(&mut TextState, bool)> {
        if let Some(c) = self.content.as_mut().filter(|c| c.shape.field == field) {
            return Some((c, false));
        }
        self.reasoning
            .as_mut()
            .filter(|c| c.shape.field == field)
            .map(|r| (r, true))
    }

    #[inline]
    fn push_text<S: DeltaSink + ?Sized>(&mut self, reasoning: bool, text: &str, out: &mut S) {
        if text.is_empty() {
            return;
        }
        if reasoning {
            self.said_reasoning.push_str(text);
        } else {
            self.said_content.push_str(text);
        }
        if reasoning {
            out.reasoning(text);
        } else {
            out.content(text);
        }
    }

    /// Takes one event.
    pub fn event<S: DeltaSink + ?Sized>(
        &mut self,
        event: Event<'_>,
        out: &mut S,
    ) -> Result<(), Error> {
        let field = event.field();
        let kind = if self.is_calls(field) {
            Kind::Calls
        } else {
            match self.text_of(field) {
                Some((_, true)) => Kind::Reasoning,
                Some((_, false)) => Kind::Content,
                None => Kind::Other,
            }
        };
        self.dispatch(kind, event.map_field(|_| ()), out)
    }

    /// [`Deltas::event`] for one of the prompt's events
    /// (`Parser::initial_events`): the same, except that reasoning the
    /// prompt opened is held when it is inline
    /// (`ReasoningFormat::Inline`), and goes out only once the model writes
    /// into the region, as the message has it.
    pub fn prompt_event<S: DeltaSink + ?Sized>(
        &mut self,
        event: Event<'_>,
        out: &mut S,
    ) -> Result<(), Error> {
        self.in_prompt = true;
        let r = self.event(event, out);
        self.in_prompt = false;
        r
    }

    /// [`Deltas::event`] for an event whose field is an index into the
    /// template's fields (`Events::iter_indexed`): no name is compared.
    pub fn event_indexed<S: DeltaSink + ?Sized>(
        &mut self,
        event: Event<'_, u16>,
        out: &mut S,
    ) -> Result<(), Error> {
        let kind = match event {
            Event::RegionOpen { field }
            | Event::RegionChunk { field, .. }
            | Event::RegionClose { field, .. }
            | Event::RegionMalformed { field, .. } => self
                .kinds
                .get(usize::from(field))
                .copied()
                .unwrap_or(Kind::Other),
            // An event kind this layer does not know changes nothing.
            _ => Kind::Other,
        };
        self.dispatch(kind, event.map_field(|_| ()), out)
    }

    fn dispatch<S: DeltaSink + ?Sized>(
        &mut self,
        kind: Kind,
        event: Event<'_, ()>,
        out: &mut S,
    ) -> Result<(), Error> {
        let reasoning = match kind {
            Kind::Calls => return self.call_event(event, out),
            Kind::Other => return Ok(()),
            Kind::Reasoning if self.inline => return self.inline_event(event, out),
            Kind::Reasoning => true,
            Kind::Content => false,
        };
        let exact = self.options.text == crate::TextMode::Exact;
        let mut text = std::mem::take(&mut self.text);
        text.clear();
        let state = if reasoning {
            self.reasoning.as_mut()
        } else {
            self.content.as_mut()
        };
        let Some(state) = state else {
            self.text = text;
            return Ok(());
        };
        if !state.shape.streams || exact {
            self.text = text;
            return Ok(());
        }
        // `if let` rather than `match`: events this layer does not know
        // (a region that ends without a value) leave the text as sent, and
        // `finish` checks it against the message.
        if let Event::RegionOpen { .. } = event {
            let said = if reasoning {
                !self.said_reasoning.is_empty()
            } else {
                !self.said_content.is_empty()
            };
            state.open(said, &mut text);
            if !reasoning && self.after_span {
                // The whitespace between inline reasoning and the answer is
                // the answer's to keep (`str.strip` would drop it).
                state.started = true;
            }
        } else if let Event::RegionChunk {
            text: t,
            dirty: false,
            ..
        } = event
        {
            state.chunk(t, &mut text);
            if !reasoning && t.chars().any(|c| !c.is_whitespace()) {
                self.after_span = false;
            }
        }
        self.push_text(reasoning, &text, out);
        self.text = text;
        Ok(())
    }

    /// A reasoning event when the reasoning is inline: its text (the
    /// engine's chunks include the delimiters) goes out as content, as
    /// written, when the content streams; otherwise [`Deltas::finish`]
    /// sends it with the content.
    fn inline_event<S: DeltaSink + ?Sized>(
        &mut self,
        event: Event<'_, ()>,
        out: &mut S,
    ) -> Result<(), Error> {
        let streams = self.content.as_ref().is_some_and(|c| c.shape.streams)
            && self.options.text != crate::TextMode::Exact;
        match event {
            Event::RegionChunk {
                text, dirty: false, ..
            } if streams && !text.is_empty() => {
                if self.in_prompt || text.chars().all(char::is_whitespace) {
                    self.inline_held.push_str(text);
                } else {
                    self.said_inline = true;
                    self.after_span = true;
                    let held = std::mem::take(&mut self.inline_held);
                    self.push_text(false, &held, out);
                    self.push_text(false, text, out);
                }
            }
            Event::RegionChunk { .. } => {}
            // A region opens, or ends without a byte of the model's.
            _ => self.inline_held.clear(),
        }
        Ok(())
    }

    fn shape(&self) -> &CallShape {
        self.shape
            .calls
            .as_ref()
            .expect("only called for the calls field")
    }

    fn new_call(&mut self) -> usize {
        self.calls.push(Call { ..Call::default() });
        let i = self.calls.len() - 1;
        if let Some(r) = self.region.as_mut() {
            r.calls.push(i);
            r.known = false;
        }
        let shape = self.shape();
        let name = match &shape.name {
            Source::Literal(n) => Some(n.clone()),
            _ => None,
        };
        let id = match &shape.id {
            Source::Literal(id) => Some(id.clone()),
            _ => None,
        };
        let streams =
            matches!(shape.args, Source::Json(_)) && shape.json || self.xml_field.is_some();
        let call = &mut self.calls[i];
        if name.is_some() {
            call.name = name;
        }
        if id.is_some() {
            call.id = id;
        }
        if !streams {
            call.fallback = true;
        }
        i
    }

    fn call_event<S: DeltaSink + ?Sized>(
        &mut self,
        event: Event<'_, ()>,
        out: &mut S,
    ) -> Result<(), Error> {
        if self.options.text == crate::TextMode::Exact && !self.shape().repeats {
            // A later region would replace this one's calls: they are
            // certain only in the message ([`Deltas::finish`]).
            return Ok(());
        }
        if let Event::RegionOpen { .. } = event {
            let each = self.shape().each;
            let reads = match self.reader.as_mut() {
                Some(r) => {
                    r.reset();
                    true
                }
                None => false,
            };
            // The last region's list of calls is reused.
            let mut calls = std::mem::take(&mut self.spare_calls);
            calls.clear();
            self.region = Some(Region {
                reads,
                xml: self.xml_field.is_some(),
                calls,
                known: false,
            });
            if !each {
                self.new_call();
                // A name and id the template fixes open the call now.
                self.send(out);
            }
        } else if let Event::RegionChunk { text, .. } = event {
            if self.region.as_ref().is_some_and(|r| r.xml) {
                // Its parameters come from the parser.
                return Ok(());
            }
            let n = self.plain_args(text, out);
            let text = &text[n..];
            if text.is_empty() {
                return Ok(());
            }
            let mut pieces = std::mem::take(&mut self.pieces);
            if let Some(reader) = self.reader_mut() {
                reader.push(text, &mut pieces);
            }
            // Nothing learned (a region not read as JSON, or text that
            // decided nothing): nothing new can be sent. Decided text of the
            // current call alone (the usual piece) is appended and sent as
            // `apply` and `send` would.
            match pieces.as_slice() {
                [] => {}
                [Piece::Args { call, text }] => {
                    let i = self
                        .region
                        .as_ref()
                        .and_then(|r| r.calls.get(*call).copied());
                    if let Some(i) = i {
                        self.append_args(i, text, out);
                    }
                    if let Some(Piece::Args { text, .. }) = pieces.pop()
                        && let Some(reader) = self.reader_mut()
                    {
                        reader.give_back(text);
                    }
                }
                _ => self.apply(&mut pieces, out),
            }
            self.pieces = pieces;
        } else {
            // The region closed: with its value, or (any other event, e.g. a
            // region the parser could not read) with no calls.
            let finals = match event {
                Event::RegionClose { value, .. } => CallRef::all_in(value),
                _ => Vec::new(),
            };
            if let Some(&i) = self
                .region
                .as_ref()
                .filter(|r| r.xml)
                .and_then(|r| r.calls.first())
            {
                // Parameters that waited for the tool's name: the value
                // names it now.
                if !self.calls[i].pending.is_empty() {
                    if self.calls[i].name.is_none() {
                        self.calls[i].name = finals.first().map(|f| f.name.to_owned());
                    }
                    self.write_pending(i, out);
                }
                // The parser reported every parameter before the close: the
                // object ends. It is sent as the close reconciles (if the
                // value disagrees, the value's text is sent instead).
                let c = &mut self.calls[i];
                if !c.fallback {
                    c.args.push_str(if c.args.is_empty() { "{}" } else { "}" });
                    c.args_done = true;
                }
            }
            let mut pieces = std::mem::take(&mut self.pieces);
            if let Some(reader) = self.reader_mut() {
                reader.end(&mut pieces);
            }
            self.apply(&mut pieces, out);
            self.pieces = pieces;
            let region = self.region.take();
            self.call_regions += 1;
            let mine = region.map(|r| r.calls).unwrap_or_default();
            let done = self.reconcile(&mine, &finals, out);
            self.spare_calls = mine;
            done?;
        }
        Ok(())
    }

    /// Takes the start of `text` that the reader would only copy into the
    /// arguments (see [`JsonReader::plain_prefix`]), sends it if its call
    /// can send, and says how many bytes it took.
    #[inline]
    fn plain_args<S: DeltaSink + ?Sized>(&mut self, text: &str, out: &mut S) -> usize {
        let (Some(region), Some(reader)) = (&self.region, &self.reader) else {
            return 0;
        };
        if !region.reads {
            return 0;
        }
        let n = reader.plain_prefix(text);
        let Some(&i) = region.calls.get(reader.call()).filter(|_| n > 0) else {
            return 0;
        };
        self.append_args(i, &text[..n], out);
        n
    }

    /// Appends decided text to call `i`'s arguments and sends what became
    /// sendable, as [`Deltas::send`] would (argument text alone never opens
    /// a call, so only this call can have anything new to send).
    #[inline]
    fn append_args<S: DeltaSink + ?Sized>(&mut self, i: usize, text: &str, out: &mut S) {
        let c = &mut self.calls[i];
        c.args.push_str(text);
        if let Some(index) = c.index
            && !c.fallback
            && !c.closed
        {
            let limit = c.hold.unwrap_or(c.args.len());
            if limit > c.sent {
                out.call_args(index, &c.args[c.sent..limit]);
                c.sent = limit;
            }
        }
    }

    /// A parameter the parser decided ([`retort_engine::Parser::stream_params`]):
    /// for the open `xml-inline` tool region, the next member of its call's
    /// arguments object. (The object's end is written at the region's
    /// close, once the parameters are known to be all there.)
    pub fn param<S: DeltaSink + ?Sized>(&mut self, param: &Param, out: &mut S) {
        if Some(param.field) != self.xml_field {
            return;
        }
        let Some(&i) = self
            .region
            .as_ref()
            .filter(|r| r.xml)
            .and_then(|r| r.calls.first())
        else {
            return;
        };
        if self.calls[i].fallback {
            return;
        }
        if !self.schemas.is_empty() && self.calls[i].name.is_none() {
            // Coercion needs the tool's name: the parameter waits for it.
            self.calls[i]
                .pending
                .push((param.key.clone(), param.value.clone()));
            return;
        }
        if !self.calls[i].pending.is_empty() {
            // The name came meanwhile: the waiting parameters go first, in
            // the order the model wrote them.
            self.write_pending(i, out);
        }
        self.write_param(i, &param.key, &param.value, out);
    }

    /// Writes call `i`'s parameters that waited for its name.
    fn write_pending<S: DeltaSink + ?Sized>(&mut self, i: usize, out: &mut S) {
        let pending = std::mem::take(&mut self.calls[i].pending);
        for (key, value) in &pending {
            if !self.calls[i].fallback {
                self.write_param(i, key, value, out);
            }
        }
    }

    /// Writes one parameter of call `i` into its arguments' text (coerced
    /// by `tools=` when there are tools); a value coercion cannot make
    /// sends the call whole at its close instead.
    fn write_param<S: DeltaSink + ?Sized>(
        &mut self,
        i: usize,
        key: &str,
        value: &Value,
        out: &mut S,
    ) {
        let coerced;
        let value = if self.schemas.is_empty() {
            value
        } else {
            match self.coerce_param(i, key, value.clone()) {
                Some(v) => {
                    coerced = v;
                    &coerced
                }
                None => {
                    self.calls[i].fallback = true;
                    return;
                }
            }
        };
        let mut text = std::mem::take(&mut self.text);
        text.clear();
        text.push_str(if self.calls[i].args.is_empty() {
            "{"
        } else {
            ", "
        });
        write_json_str(&mut text, key);
        text.push_str(": ");
        value.write_json(&mut text, NonFinite::Python);
        self.append_args(i, &text, out);
        self.text = text;
    }

    /// What `tools=` coercion makes of call `i`'s argument `key`, asked of
    /// the engine itself (`None`: the tool is not known yet, or coercion
    /// failed).
    fn coerce_param(&self, i: usize, key: &str, value: Value) -> Option<Value> {
        let name = self.calls[i].name.clone()?;
        let mut args = Map::default();
        args.insert(key.to_owned(), value);
        let mut func = Map::default();
        func.insert("name".into(), Value::Str(name));
        func.insert("arguments".into(), Value::Map(args));
        let mut call = Map::default();
        call.insert("function".into(), Value::Map(func));
        let v = self.schemas.coerce_tool_calls(Value::Map(call)).ok()?;
        ToolCall::from_value(&v).and_then(|c| c.arguments.as_map()?.get(key).cloned())
    }

    /// The JSON reader, while it follows the open region.
    #[inline]
    fn reader_mut(&mut self) -> Option<&mut JsonReader> {
        match &self.region {
            Some(r) if r.reads => self.reader.as_mut(),
            _ => None,
        }
    }

    /// Applies what the reader learned, then sends what became sendable.
    fn apply<S: DeltaSink + ?Sized>(&mut self, pieces: &mut Vec<Piece>, out: &mut S) {
        for p in pieces.drain(..) {
            let call_at =
                |this: &Self, k: usize| this.region.as_ref().and_then(|r| r.calls.get(k).copied());
            match p {
                Piece::CallStart { .. } => {
                    self.new_call();
                }
                Piece::Failed => {
                    if let Some(r) = &self.region {
                        for &i in &r.calls {
                            self.calls[i].fallback = true;
                        }
                    }
                    // Calls not started yet are handled at the close.
                }
                Piece::Name { call, name } => {
                    if let Some(i) = call_at(self, call) {
                        self.calls[i].name.get_or_insert(name);
                    }
                }
                Piece::Id { call, id } => {
                    if let Some(i) = call_at(self, call).filter(|_| !id.is_empty()) {
                        self.calls[i].id.get_or_insert(id);
                    }
                }
                Piece::Args { call, text } | Piece::ParamChars { call, text } => {
                    // Text of a held value is dropped when the value is
                    // decided (`param_close` cuts back to the hold).
                    if let Some(i) = call_at(self, call) {
                        self.calls[i].args.push_str(&text);
                    }
                    if let Some(reader) = self.reader_mut() {
                        reader.give_back(text);
                    }
                }
                Piece::ParamOpen { call, key } => {
                    if let Some(i) = call_at(self, call) {
                        self.param_open(i, &key);
                    }
                }
                Piece::ParamClose { call, key, value } => {
                    if let Some(i) = call_at(self, call) {
                        self.param_close(i, &key, value);
                    }
                }
                Piece::ArgsDone { call } => {
                    if let Some(i) = call_at(self, call) {
                        self.calls[i].args_done = true;
                    }
                }
            }
        }
        self.send(out);
    }

    /// A top-level string argument begins: streamed, or held when coercion
    /// may change it (until its end decides it).
    fn param_open(&mut self, i: usize, key: &str) {
        let c = &mut self.calls[i];
        if self.schemas.is_empty() {
            c.args.push('"');
            return;
        }
        let Some(name) = &c.name else {
            // The tool, and so the parameter's type, is not known yet.
            c.fallback = true;
            return;
        };
        let held = self
            .typed_params
            .get(name)
            .and_then(|p| p.get(key))
            .copied()
            .unwrap_or(false);
        if held {
            c.hold = Some(c.args.len());
        } else {
            c.args.push('"');
        }
    }

    fn param_close(&mut self, i: usize, key: &str, value: String) {
        let hold = self.calls[i].hold.take();
        let Some(at) = hold else {
            self.calls[i].args.push('"');
            return;
        };
        // What the reference's coercion makes of the string, asked of the
        // engine itself.
        let coerced = self.coerce_param(i, key, Value::Str(value));
        let c = &mut self.calls[i];
        match coerced {
            Some(v) => {
                c.args.truncate(at);
                v.write_json(&mut c.args, NonFinite::Python);
            }
            None => c.fallback = true,
        }
    }

    /// An id for the call about to get the next index: numbered by that
    /// index, as [`crate::message`] numbers calls.
    fn next_id(&mut self) -> String {
        self.options.ids.make(u64::from(self.opened))
    }

    /// Opens every call that can open, in order, and sends decided
    /// argument text.
    fn send<S: DeltaSink + ?Sized>(&mut self, out: &mut S) {
        let need_id = matches!(
            self.shape.calls.as_ref().map(|c| &c.id),
            Some(Source::Json(_))
        );
        while self
            .calls
            .get(self.settled)
            .is_some_and(|c| c.index.is_some() && c.closed)
        {
            self.settled += 1;
        }
        for i in self.settled..self.calls.len() {
            if self.calls[i].index.is_none() {
                let c = &self.calls[i];
                if c.closed {
                    // Its region closed without it (no name in the value).
                    continue;
                }
                if c.name.is_none() || (c.id.is_none() && need_id) {
                    // Later calls wait: indices go out in order.
                    return;
                }
                let id = match self.calls[i].id.clone() {
                    Some(id) => id,
                    None => self.next_id(),
                };
                let c = &mut self.calls[i];
                out.call_open(self.opened, &id, c.name.as_deref().unwrap_or_default());
                c.id = Some(id);
                c.index = Some(self.opened);
                self.opened += 1;
            }
            let c = &mut self.calls[i];
            if c.fallback || c.closed {
                continue;
            }
            let limit = c.hold.unwrap_or(c.args.len());
            if limit > c.sent {
                out.call_args(c.index.unwrap_or_default(), &c.args[c.sent..limit]);
                c.sent = limit;
            }
        }
    }

    /// A tool region closed with `finals`, its calls as the engine parsed
    /// them: what was streamed is checked against them and completed.
    fn reconcile<S: DeltaSink + ?Sized>(
        &mut self,
        mine: &[usize],
        finals: &[CallRef<'_>],
        out: &mut S,
    ) -> Result<(), Error> {
        if mine.len() > finals.len()
            && mine[finals.len()..]
                .iter()
                .any(|&i| self.calls[i].index.is_some())
        {
            return Err(Error::Diverged(format!(
                "{} tool calls were streamed from a region whose value has {}",
                mine.len(),
                finals.len()
            )));
        }
        for (k, fin) in finals.iter().enumerate() {
            let i = match mine.get(k) {
                Some(&i) => i,
                None => {
                    self.calls.push(Call {
                        fallback: true,
                        ..Call::default()
                    });
                    self.calls.len() - 1
                }
            };
            self.finish_call(i, fin, out)?;
        }
        for &i in mine.iter().skip(finals.len()) {
            self.calls[i].closed = true;
        }
        Ok(())
    }

    fn finish_call<S: DeltaSink + ?Sized>(
        &mut self,
        i: usize,
        fin: &CallRef<'_>,
        out: &mut S,
    ) -> Result<(), Error> {
        let c = &self.calls[i];
        if c.index.is_some() {
            if c.name.as_deref() != Some(fin.name)
                || fin
                    .id
                    .is_some_and(|id| !id.is_empty() && c.id.as_deref() != Some(id))
            {
                return Err(Error::Diverged(format!(
                    "tool call {}: streamed as {:?} ({:?}), parsed as {:?} ({:?})",
                    c.index.unwrap_or_default(),
                    c.name,
                    c.id,
                    fin.name,
                    fin.id
                )));
            }
        } else {
            let id = match fin.id.filter(|id| !id.is_empty()) {
                Some(id) => id.to_owned(),
                None => self.next_id(),
            };
            let c = &mut self.calls[i];
            c.name = Some(fin.name.to_owned());
            c.id.get_or_insert(id);
            // Earlier calls are open or closed (regions close in order), so
            // this one opens.
            self.send(out);
            if self.calls[i].index.is_none() {
                return Err(Error::Diverged(format!(
                    "tool call {:?} could not open in order",
                    fin.name
                )));
            }
        }
        let mut want = std::mem::take(&mut self.want);
        want.clear();
        let c = &self.calls[i];
        let streamed = !c.fallback && c.args_done && c.hold.is_none();
        // The whole text the call's arguments get: the reader's, when it read
        // them all and they mean the parsed value; otherwise the value's.
        // (Equal text is the common case, checked without writing the
        // value's; reading the text back is only needed where it differs,
        // e.g. a key the model wrote twice.)
        let same = streamed && arguments_are(fin.arguments, &c.args, &mut self.text);
        if !same {
            write_arguments(fin.arguments, &mut want);
        }
        let c = &mut self.calls[i];
        let keep =
            same || streamed && json_loads(&c.args).is_ok_and(|v| arguments_text(&v) == want);
        if !keep {
            // `c.args` becomes the value's text; `want` holds what was read.
            std::mem::swap(&mut c.args, &mut want);
        }
        let read = if keep { &c.args } else { &want };
        let index = c.index.unwrap_or_default();
        let sent = read.get(..c.sent).unwrap_or(read);
        let Some(rest) = c.args.strip_prefix(sent).filter(|_| sent.len() == c.sent) else {
            return Err(Error::Diverged(format!(
                "tool call {index}: arguments sent as {sent:?} are not the start of {:?}",
                c.args
            )));
        };
        if !rest.is_empty() {
            out.call_args(index, rest);
        }
        c.sent = c.args.len();
        c.closed = true;
        out.call_done(index);
        self.want = want;
        // Nothing reads a closed call's text again: it moves into the
        // layer's message.
        let c = &mut self.calls[i];
        let args = std::mem::take(&mut c.args);
        self.done.push((
            c.id.clone().unwrap_or_default(),
            c.name.clone().unwrap_or_default(),
            args,
        ));
        Ok(())
    }

    /// The layer's message so far (complete after [`Deltas::finish`]):
    /// what the deltas sent, accumulated. It equals the reference's
    /// message except where the template's semantics replaced a value (a
    /// field that does not repeat, written again): there the reference
    /// keeps the last region, and this message has every region, in order
    /// — text regions separated by [`REGION_BREAK`], every call that was
    /// sent. Ids the model did not write are the ones the stream made.
    pub fn message(&self) -> crate::ChatCompletionMessage {
        let text = |s: &str| (!s.is_empty()).then(|| s.to_owned());
        let reasoning = text(&self.said_reasoning);
        let calls: Vec<crate::ChatCompletionToolCall> = self
            .done
            .iter()
            .map(|(id, name, args)| crate::ChatCompletionToolCall {
                id: id.clone(),
                kind: "function".into(),
                function: crate::FunctionCall {
                    name: name.clone(),
                    arguments: args.clone(),
                },
            })
            .collect();
        crate::ChatCompletionMessage {
            role: "assistant".into(),
            content: text(&self.said_content),
            reasoning_content: reasoning
                .clone()
                .filter(|_| self.options.reasoning == crate::Reasoning::ReasoningContent),
            reasoning: reasoning.filter(|_| self.options.reasoning == crate::Reasoning::Reasoning),
            tool_calls: (!calls.is_empty()).then_some(calls),
        }
    }

    /// Whether the parser should report `xml-inline` parameters as they are
    /// decided ([`retort_engine::Parser::stream_params`]), which this
    /// template's tool calls stream by.
    pub fn wants_params(&self) -> bool {
        self.xml_field.is_some()
    }

    /// Whether [`Deltas::open_region`] has anything to learn: a call of the
    /// open tool region still lacks its name or id. When not, the caller
    /// may skip asking the parser.
    #[inline]
    pub fn wants_open_region(&self) -> bool {
        self.region.as_ref().is_some_and(|r| !r.known)
    }

    /// Takes what the parser has open after a call (`parser.open_region()`):
    /// a call whose name or id its open delimiter captured can open now.
    pub fn open_region<S: DeltaSink + ?Sized>(
        &mut self,
        region: Option<OpenRegion<'_>>,
        out: &mut S,
    ) {
        let (Some(r), Some(shape)) = (&self.region, &self.shape.calls) else {
            return;
        };
        if r.known {
            return;
        }
        let Some(region) = region.filter(|r| r.field == shape.field) else {
            return;
        };
        // Called after every feed while a call's region is open: nothing is
        // copied unless a call still lacks a name or an id.
        let calls = &mut self.calls;
        if !r
            .calls
            .iter()
            .any(|&i| calls[i].name.is_none() || calls[i].id.is_none())
        {
            if let Some(r) = self.region.as_mut() {
                r.known = true;
            }
        } else {
            let capture = |s: &Source| match s {
                Source::Capture(g) => region
                    .captures
                    .iter()
                    .rev()
                    .find(|(k, v)| k == g && !v.is_empty())
                    .map(|(_, v)| v.clone()),
                _ => None,
            };
            let (name, id) = (capture(&shape.name), capture(&shape.id));
            for &i in &r.calls {
                let c = &mut calls[i];
                if c.name.is_none() {
                    c.name.clone_from(&name);
                }
                if c.id.is_none() {
                    c.id.clone_from(&id);
                }
            }
            // Only a name or id just learned can open a call here: argument
            // text is sent as the reader decides it (`apply`).
            self.send(out);
        }
    }

    /// The message is complete: sends what remains of the content and the
    /// reasoning, and opens calls the stream has not seen (e.g. defaults).
    pub fn finish<S: DeltaSink + ?Sized>(
        &mut self,
        message: &dyn AssistantMessage,
        out: &mut S,
    ) -> Result<(), Error> {
        for reasoning in [true, false] {
            let state = if reasoning {
                self.reasoning.as_ref()
            } else {
                self.content.as_ref()
            };
            let fin = if reasoning {
                message.reasoning()
            } else {
                message.content()
            };
            let sent = if reasoning {
                self.said_reasoning.as_str()
            } else {
                self.said_content.as_str()
            };
            let fin = fin.unwrap_or("");
            if !reasoning && self.said_inline && !fin.starts_with(sent) {
                // Inline reasoning: the message puts a thought after the
                // answer only when no answer text follows it; where the
                // model interleaved them otherwise, what was sent is the
                // layer's message (every piece as the model wrote it).
                continue;
            }
            if state.is_some_and(TextState::replaced) {
                // The reference kept the last region; the layer's message
                // is every region, in order. The last one streamed whole.
                if !sent.ends_with(fin) {
                    return Err(Error::Diverged(format!(
                        "{} sent as {sent:?} does not end with the last region's {fin:?}",
                        if reasoning { "reasoning" } else { "content" }
                    )));
                }
                continue;
            }
            let Some(rest) = fin.strip_prefix(sent) else {
                return Err(Error::Diverged(format!(
                    "{} sent as {sent:?} is not the start of {fin:?}",
                    if reasoning { "reasoning" } else { "content" }
                )));
            };
            let rest = rest.to_owned();
            self.push_text(reasoning, &rest, out);
        }
        // The message's calls, borrowed where it holds them as a value (the
        // run-time `Map`): only those the stream has not seen are read.
        let owned;
        let finals: Vec<CallRef<'_>> = match message.tool_calls_value() {
            Some(v) => CallRef::all_in(v),
            None => {
                owned = message.tool_calls();
                owned.iter().map(CallRef::of).collect()
            }
        };
        let seen = self
            .calls
            .iter()
            .filter(|c| c.closed && c.index.is_some())
            .count();
        let repeats = self.shape.calls.as_ref().is_none_or(|c| c.repeats);
        if seen >= finals.len() && self.call_regions > 1 && !repeats {
            // A later region replaced earlier calls in the reference's
            // message; each region's calls were sent and checked as it
            // closed, and the layer's message has them all.
            return Ok(());
        }
        if seen > finals.len() {
            return Err(Error::Diverged(format!(
                "{seen} tool calls were streamed, the message has {}",
                finals.len()
            )));
        }
        for fin in &finals[seen..] {
            self.calls.push(Call {
                fallback: true,
                ..Call::default()
            });
            let i = self.calls.len() - 1;
            self.finish_call(i, fin, out)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `arguments_are` agrees with writing the text, on texts that are and
    /// are not the value's.
    #[test]
    fn arguments_are_compared_as_they_would_be_written() {
        let values = [
            r#"{"a": 1, "b": [true, null, -0.5, 1e300], "c": {"d": "x\ny\"z\\é😀"}}"#,
            r#"{"k": NaN, "big": 123456789012345678901234567890, "f": 3.0}"#,
            r#"[1, "two", {"three": []}]"#,
            r#"{"": {}, "e": ""}"#,
            r#""a string the model wrote""#,
        ];
        let mut scratch = String::new();
        for json in values {
            let v = json_loads(json).unwrap();
            let mut text = String::new();
            write_arguments(Some(&v), &mut text);
            assert!(arguments_are(Some(&v), &text, &mut scratch), "{text}");
            for cut in [1, text.len() / 2, text.len().saturating_sub(1)] {
                if text.is_char_boundary(cut) {
                    assert!(!arguments_are(Some(&v), &text[..cut], &mut scratch));
                }
            }
            let mut longer = text.clone();
            longer.push(' ');
            assert!(!arguments_are(Some(&v), &longer, &mut scratch));
            let spaced = text.replace(", ", ",");
            if spaced != text {
                assert!(!arguments_are(Some(&v), &spaced, &mut scratch));
            }
        }
        assert!(arguments_are(None, "{}", &mut scratch));
        assert!(!arguments_are(None, "{ }", &mut scratch));
    }
}
