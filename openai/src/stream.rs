//! The incremental core: region events in, message deltas out.

use crate::json::{JsonReader, Piece};
use crate::shape::{CallShape, Shape, Source, TextShape};
use crate::{Error, Options};
use retort_engine::OpenRegion;
use retort_engine::py::{is_space, json_loads};
use retort_engine::transform::ToolSchemas;
use retort_engine::typed::{AssistantMessage, ToolCall};
use retort_engine::value::NonFinite;
use retort_engine::{Event, Map, Template, Value};
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

/// A text field being streamed (content or reasoning).
#[derive(Clone, Debug)]
struct TextState {
    shape: TextShape,
    regions: usize,
    /// Non-space text seen in the current region (with `strip`).
    started: bool,
    /// Spaces that are sent only if more text follows (with `strip`).
    held: String,
    /// Everything sent so far.
    sent: String,
}

impl TextState {
    fn new(shape: TextShape) -> TextState {
        TextState {
            shape,
            regions: 0,
            started: false,
            held: String::new(),
            sent: String::new(),
        }
    }

    fn open(&mut self, out: &mut String) {
        if self.regions > 0
            && let Some(sep) = &self.shape.join
        {
            out.push_str(sep);
        }
        self.regions += 1;
        self.started = false;
        self.held.clear();
    }

    fn chunk(&mut self, text: &str, out: &mut String) {
        if !self.shape.strip {
            out.push_str(text);
            return;
        }
        for c in text.chars() {
            if is_space(c) {
                if self.started {
                    self.held.push(c);
                }
            } else {
                self.started = true;
                out.push_str(&self.held);
                self.held.clear();
                out.push(c);
            }
        }
    }
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
}

/// The calls of the open tool region.
#[derive(Clone, Debug)]
struct Region {
    reader: Option<JsonReader>,
    /// Positions in `Deltas::calls` of this region's calls, in order.
    calls: Vec<usize>,
}

/// Turns a parser's events into [`Delta`]s: the core behind chunks and
/// Responses events, for run-time and compiled parsers alike.
///
/// Feed it every event ([`Deltas::event`]; a compiled parser's typed events
/// through `.untyped()`), then after each call to the parser what is open
/// ([`Deltas::open_region`], from `parser.open_region()` — for a compiled
/// parser `parser.engine().open_region()`), and at the end the message
/// ([`Deltas::finish`]).
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
    pieces: Vec<Piece>,
    /// Emptied strings of deltas already used (see [`Deltas::recycle`]),
    /// for the next ones: streaming then allocates no string per delta.
    spare: Vec<String>,
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
        Ok(Deltas {
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
            spare: Vec::new(),
        })
    }

    /// The options the core was made with.
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// Takes back the deltas of `out` once they have been used (their
    /// strings are kept, emptied, for the next deltas) and empties `out`.
    pub fn recycle(&mut self, out: &mut Vec<Delta>) {
        for d in out.drain(..) {
            let mut s = match d {
                Delta::Content(s) | Delta::Reasoning(s) | Delta::CallArgs { text: s, .. } => s,
                Delta::CallOpen { .. } | Delta::CallDone { .. } => continue,
            };
            if self.spare.len() < 64 {
                s.clear();
                self.spare.push(s);
            }
        }
    }

    /// Whether any tool call has been opened.
    pub fn has_calls(&self) -> bool {
        self.opened > 0
    }

    fn is_calls(&self, field: &str) -> bool {
        self.shape.calls.as_ref().is_some_and(|c| c.field == field)
    }

    fn text_of(&mut self, field: &str) -> Option<(&mut TextState, bool)> {
        if let Some(c) = self.content.as_mut().filter(|c| c.shape.field == field) {
            return Some((c, false));
        }
        self.reasoning
            .as_mut()
            .filter(|c| c.shape.field == field)
            .map(|r| (r, true))
    }

    fn push_text(&mut self, reasoning: bool, text: String, out: &mut Vec<Delta>) {
        if text.is_empty() {
            self.spare.push(text);
            return;
        }
        let state = if reasoning {
            self.reasoning.as_mut()
        } else {
            self.content.as_mut()
        };
        if let Some(s) = state {
            s.sent.push_str(&text);
        }
        out.push(if reasoning {
            Delta::Reasoning(text)
        } else {
            Delta::Content(text)
        });
    }

    /// Takes one event.
    pub fn event(&mut self, event: Event<'_>, out: &mut Vec<Delta>) -> Result<(), Error> {
        let field = event.field();
        if self.is_calls(field) {
            return self.call_event(event, out);
        }
        let exact = self.options.text == crate::TextMode::Exact;
        let Some((state, _)) = self.text_of(field) else {
            return Ok(());
        };
        if !state.shape.streams || exact {
            return Ok(());
        }
        let mut text = self.spare.pop().unwrap_or_default();
        let Some((state, reasoning)) = self.text_of(field) else {
            return Ok(());
        };
        // `if let` rather than `match`: events this layer does not know
        // (a region that ends without a value) leave the text as sent, and
        // `finish` checks it against the message.
        if let Event::RegionOpen { .. } = event {
            state.open(&mut text);
        } else if let Event::RegionChunk {
            text: t,
            dirty: false,
            ..
        } = event
        {
            state.chunk(t, &mut text);
        }
        self.push_text(reasoning, text, out);
        Ok(())
    }

    fn shape(&self) -> &CallShape {
        self.shape
            .calls
            .as_ref()
            .expect("only called for the calls field")
    }

    fn new_call(&mut self) -> usize {
        self.calls.push(Call::default());
        let i = self.calls.len() - 1;
        if let Some(r) = self.region.as_mut() {
            r.calls.push(i);
        }
        let (name, id) = (self.shape().name.clone(), self.shape().id.clone());
        let streams = matches!(self.shape().args, Source::Json(_)) && self.shape().json;
        let call = &mut self.calls[i];
        if let Source::Literal(n) = name {
            call.name = Some(n);
        }
        if let Source::Literal(id) = id {
            call.id = Some(id);
        }
        if !streams {
            call.fallback = true;
        }
        i
    }

    fn call_event(&mut self, event: Event<'_>, out: &mut Vec<Delta>) -> Result<(), Error> {
        if self.options.text == crate::TextMode::Exact && !self.shape().repeats {
            // A later region would replace this one's calls: they are
            // certain only in the message ([`Deltas::finish`]).
            return Ok(());
        }
        if let Event::RegionOpen { .. } = event {
            let shape = self.shape();
            let reader = shape.json.then(|| JsonReader::new(shape.targets()));
            let each = shape.each;
            self.region = Some(Region {
                reader,
                calls: Vec::new(),
            });
            if !each {
                self.new_call();
            }
        } else if let Event::RegionChunk { text, .. } = event {
            let mut pieces = std::mem::take(&mut self.pieces);
            if let Some(reader) = self.region.as_mut().and_then(|r| r.reader.as_mut()) {
                reader.push(text, &mut pieces);
            }
            // Nothing learned (a region not read as JSON, or text that
            // decided nothing): nothing new can be sent.
            if !pieces.is_empty() {
                self.apply(&mut pieces, out);
            }
            self.pieces = pieces;
        } else {
            // The region closed: with its value, or (any other event, e.g. a
            // region the parser could not read) with no calls.
            let finals = match event {
                Event::RegionClose { value, .. } => ToolCall::all_in(value),
                _ => Vec::new(),
            };
            let mut pieces = std::mem::take(&mut self.pieces);
            if let Some(reader) = self.region.as_mut().and_then(|r| r.reader.as_mut()) {
                reader.end(&mut pieces);
            }
            self.apply(&mut pieces, out);
            self.pieces = pieces;
            let region = self.region.take();
            let mine = region.map(|r| r.calls).unwrap_or_default();
            self.reconcile(&mine, &finals, out)?;
        }
        Ok(())
    }

    /// Applies what the reader learned, then sends what became sendable.
    fn apply(&mut self, pieces: &mut Vec<Piece>, out: &mut Vec<Delta>) {
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
                    if let Some(reader) = self.region.as_mut().and_then(|r| r.reader.as_mut()) {
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
        let name = self.calls[i].name.clone().unwrap_or_default();
        let mut args = Map::new();
        args.insert(key.to_owned(), Value::Str(value));
        let mut func = Map::new();
        func.insert("name".into(), Value::Str(name));
        func.insert("arguments".into(), Value::Map(args));
        let mut call = Map::new();
        call.insert("function".into(), Value::Map(func));
        let coerced = self
            .schemas
            .coerce_tool_calls(Value::Map(call))
            .ok()
            .and_then(|v| {
                ToolCall::from_value(&v).and_then(|c| c.arguments.as_map()?.get(key).cloned())
            });
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
    fn send(&mut self, out: &mut Vec<Delta>) {
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
                c.id = Some(id.clone());
                c.index = Some(self.opened);
                self.opened += 1;
                out.push(Delta::CallOpen {
                    index: c.index.unwrap_or_default(),
                    id,
                    name: c.name.clone().unwrap_or_default(),
                });
            }
            let c = &mut self.calls[i];
            if c.fallback || c.closed {
                continue;
            }
            let limit = c.hold.unwrap_or(c.args.len());
            if limit > c.sent {
                let mut text = self.spare.pop().unwrap_or_default();
                let c = &mut self.calls[i];
                text.push_str(&c.args[c.sent..limit]);
                out.push(Delta::CallArgs {
                    index: c.index.unwrap_or_default(),
                    text,
                });
                c.sent = limit;
            }
        }
    }

    /// A tool region closed with `finals`, its calls as the engine parsed
    /// them: what was streamed is checked against them and completed.
    fn reconcile(
        &mut self,
        mine: &[usize],
        finals: &[ToolCall],
        out: &mut Vec<Delta>,
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

    fn finish_call(&mut self, i: usize, fin: &ToolCall, out: &mut Vec<Delta>) -> Result<(), Error> {
        let want = arguments_text(&fin.arguments);
        let c = &self.calls[i];
        if c.index.is_some() {
            if c.name.as_deref() != Some(fin.name.as_str())
                || fin
                    .id
                    .as_ref()
                    .is_some_and(|id| !id.is_empty() && c.id.as_ref() != Some(id))
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
            let id = match fin.id.clone().filter(|id| !id.is_empty()) {
                Some(id) => id,
                None => self.next_id(),
            };
            let c = &mut self.calls[i];
            c.name = Some(fin.name.clone());
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
        let c = &self.calls[i];
        // The whole text the call's arguments get: the reader's, when it read
        // them all and they mean the parsed value; otherwise the value's.
        // (Equal text is the common case; reading it back is only needed
        // where it differs, e.g. a key the model wrote twice.)
        let full = if !c.fallback
            && c.args_done
            && c.hold.is_none()
            && (c.args == want || json_loads(&c.args).is_ok_and(|v| arguments_text(&v) == want))
        {
            c.args.clone()
        } else {
            want
        };
        let sent = &c.args[..c.sent];
        let Some(rest) = full.strip_prefix(sent) else {
            return Err(Error::Diverged(format!(
                "tool call {}: arguments sent as {sent:?} are not the start of {full:?}",
                c.index.unwrap_or_default()
            )));
        };
        let index = c.index.unwrap_or_default();
        if !rest.is_empty() {
            out.push(Delta::CallArgs {
                index,
                text: rest.to_owned(),
            });
        }
        let c = &mut self.calls[i];
        c.args = full;
        c.sent = c.args.len();
        c.closed = true;
        out.push(Delta::CallDone { index });
        Ok(())
    }

    /// Takes what the parser has open after a call (`parser.open_region()`):
    /// a call whose name or id its open delimiter captured can open now.
    pub fn open_region(&mut self, region: Option<OpenRegion<'_>>, out: &mut Vec<Delta>) {
        let Some(region) = region.filter(|r| self.is_calls(r.field)) else {
            return;
        };
        let (Some(r), Some(shape)) = (&self.region, &self.shape.calls) else {
            return;
        };
        // Called after every feed while a call's region is open: nothing is
        // copied unless a call still lacks a name or an id.
        let calls = &mut self.calls;
        if r.calls
            .iter()
            .any(|&i| calls[i].name.is_none() || calls[i].id.is_none())
        {
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
        }
        self.send(out);
    }

    /// The message is complete: sends what remains of the content and the
    /// reasoning, and opens calls the stream has not seen (e.g. defaults).
    pub fn finish(
        &mut self,
        message: &dyn AssistantMessage,
        out: &mut Vec<Delta>,
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
            let sent = state.map_or("", |s| s.sent.as_str());
            let fin = fin.unwrap_or("");
            let Some(rest) = fin.strip_prefix(sent) else {
                return Err(Error::Diverged(format!(
                    "{} sent as {sent:?} is not the start of {fin:?}",
                    if reasoning { "reasoning" } else { "content" }
                )));
            };
            let rest = rest.to_owned();
            self.push_text(reasoning, rest, out);
        }
        let finals = message.tool_calls();
        let seen: Vec<usize> = (0..self.calls.len())
            .filter(|&i| self.calls[i].closed && self.calls[i].index.is_some())
            .collect();
        if seen.len() > finals.len() {
            return Err(Error::Diverged(format!(
                "{} tool calls were streamed, the message has {}",
                seen.len(),
                finals.len()
            )));
        }
        for fin in &finals[seen.len()..] {
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
