//! The streaming parser.
//!
//! # Semantics
//!
//! The outcome is the reference's one-shot parse: the prompt (`prefix`) fed
//! first, then the whole generation in one piece, then `finalize`. Streaming
//! never changes it, whatever the chunking.
//!
//! Two phases get there:
//!
//! - **The prefix** is processed once, at construction, exactly as the
//!   reference processes a feed: its matcher's partial-match rules decide what
//!   it commits and holds at the prompt's end (and so which events are
//!   *initial*). That uses the regex directly ([`crate::pyre`]): the prefix
//!   is short and seen once.
//! - **The generation** is scanned by [`StreamScan`], which commits a
//!   delimiter only once no future text can change the choice, and releases
//!   text as soon as no delimiter can start in it. On the whole text this
//!   makes the same choices as the reference's one-shot parse, so every
//!   chunking gives the one-shot result.
//!
//! Errors in the model's output (a region that does not parse, a transform
//! that finds no value, a required field never written) are returned as
//! [`ParseError`]s that carry the field, the byte offset of the region and its
//! raw text. After an error the parser refuses further input with the same
//! error.

use crate::event::{Event, OwnedEvent};
use crate::scan::delimiter::Delimiter;
use crate::scan::stream::{
    ByteSet, Decision, Guards, Hay, Kind, ScanError, StreamScan, Watch, WatchSet, named_groups,
};
use crate::scan::table::MATCH;
use crate::template::Template;
use crate::transform::{ToolSchemas, finish_region_owned};
use crate::typed::FieldId;
use crate::value::{Map, Value};

mod open_region;
pub use open_region::OpenRegion;

/// What went wrong while parsing model output.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ParseErrorKind {
    /// A region's text did not parse with its content parser, its transform
    /// failed, or `join` met a value that is not a string.
    Field,
    /// The tool definitions given to the parser are not a list of tools.
    Tools,
    /// Fields marked `optional: false` were never written.
    MissingFields(Vec<String>),
    /// `feed` or `finalize` after `finalize`.
    Finalized,
    /// The bytes fed are not valid UTF-8.
    InvalidUtf8,
    /// Delimiters that match the empty string keep matching at one place
    /// (the reference would loop forever here).
    NoProgress,
    /// The backtracking matcher gave up on a delimiter: one attempt took
    /// too many steps, or all attempts together exceeded the parser's
    /// [`WorkBudget`](crate::WorkBudget).
    MatcherBudget,
    /// A configured [`Limits`] bound was exceeded; `raw` holds the text
    /// concerned, so nothing is lost.
    Limit {
        /// Which limit (the name of the [`Limits`] field).
        name: &'static str,
        /// Its value.
        limit: usize,
    },
    /// The message does not fit the types generated for the template (a bug
    /// in retort's type derivation); `raw` holds the whole message as JSON.
    Type(Box<crate::typed::Mismatch>),
    /// An internal inconsistency (a bug in retort), reported rather than hidden.
    Internal,
}

/// An error in model output, with everything needed to recover the text.
#[derive(Clone, Debug, PartialEq)]
pub struct ParseError {
    /// What kind of error.
    pub kind: ParseErrorKind,
    /// The field whose region failed, if the error is about one.
    pub field: Option<String>,
    /// Byte offset, in the parser's text (the truncated prompt followed by
    /// the generation), where the failing region's body starts, or where the
    /// problem was found.
    pub offset: usize,
    /// The raw text of the failing region (or the offending bytes), so that
    /// nothing the model wrote is lost.
    pub raw: String,
    /// What went wrong.
    pub message: String,
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.field {
            Some(field) => write!(
                f,
                "field '{field}' at byte {}: {}",
                self.offset, self.message
            ),
            None => write!(f, "at byte {}: {}", self.offset, self.message),
        }
    }
}

impl std::error::Error for ParseError {}

/// Bounds on what one parser holds (see `docs/limits.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// The most undecided text the parser may hold (text that may still
    /// begin a delimiter), in bytes.
    pub max_held: usize,
    /// The most text one region may collect before it closes, in bytes.
    pub max_region: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_held: 16 << 20,
            max_region: 256 << 20,
        }
    }
}

impl Limits {
    /// The same limits with another `max_held`.
    pub fn with_max_held(mut self, bytes: usize) -> Limits {
        self.max_held = bytes;
        self
    }

    /// The same limits with another `max_region`.
    pub fn with_max_region(mut self, bytes: usize) -> Limits {
        self.max_region = bytes;
        self
    }

    /// No limits (the default limits are generous; this is for callers that
    /// bound their input elsewhere).
    pub fn none() -> Limits {
        Limits {
            max_held: usize::MAX,
            max_region: usize::MAX,
        }
    }
}

/// How a parser treats errors in the model's output and how much it may
/// hold and compute.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ParserOptions {
    /// Lenient mode: a region that gives no value is reported by an
    /// [`Event::RegionMalformed`] (and kept in [`Parser::malformed`])
    /// instead of ending the stream, missing required fields are reported
    /// the same way at finalize, and a delimiter pattern that exceeds the
    /// work budget turns the rest of the generation into text of the open
    /// region. Valid output parses exactly as in strict mode.
    pub lenient: bool,
    /// The backtracking path's work budget.
    pub budget: crate::WorkBudget,
    /// Bounds on held text.
    pub limits: Limits,
}

impl ParserOptions {
    /// The default options (strict, default budget and limits).
    pub fn new() -> ParserOptions {
        ParserOptions::default()
    }

    /// The same options, lenient or strict.
    pub fn lenient(mut self, on: bool) -> ParserOptions {
        self.lenient = on;
        self
    }

    /// The same options with another work budget.
    pub fn budget(mut self, budget: crate::WorkBudget) -> ParserOptions {
        self.budget = budget;
        self
    }

    /// The same options with other limits.
    pub fn limits(mut self, limits: Limits) -> ParserOptions {
        self.limits = limits;
        self
    }
}

/// A region that gave no value (lenient mode), with its text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Malformed {
    /// The field.
    pub field: String,
    /// Byte offset of the region's text in the parser's text (the truncated
    /// prompt followed by the generation).
    pub offset: usize,
    /// The region's text as the model wrote it (empty for a missing
    /// required field).
    pub raw: String,
    /// The error strict mode would have raised.
    pub error: String,
}

/// An event as the parser records it: chunk text stays in the parser's text
/// buffer until the next call.
#[derive(Clone, Copy, Debug)]
enum RawEvent {
    Open(u16),
    Chunk {
        field: u16,
        start: usize,
        end: usize,
    },
    Close {
        field: u16,
        value: ValueSlot,
    },
    /// `malformed[i]` (lenient mode).
    Malformed {
        field: u16,
        index: usize,
    },
}

/// Where the value of a close event lives: moved into the message being
/// built (no copy) or, when the message's entry changed later in the same
/// call, kept aside.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ValueSlot {
    /// `values[i]`.
    Aside(usize),
    /// The message's entry at this index; with `Some(j)`, item `j` of the
    /// list there (`repeats`).
    Output(usize, Option<usize>),
}

/// The text the parser holds: a window of the parser's text, addressed by
/// absolute offsets.
#[derive(Clone, Debug, Default)]
struct TextBuf {
    buf: String,
    base: usize,
    /// The byte before `buf` (`None` at offset 0).
    before: Option<u8>,
}

impl TextBuf {
    fn len(&self) -> usize {
        self.base + self.buf.len()
    }
    fn hay(&self) -> Hay<'_> {
        Hay {
            text: &self.buf,
            base: self.base,
            before: self.before,
        }
    }
    /// The last byte of the text.
    fn last_byte(&self) -> Option<u8> {
        self.buf.as_bytes().last().copied().or(self.before)
    }
    /// Whether the buffer holds text after `pos`.
    fn holds_after(&self, pos: usize) -> bool {
        self.len() > pos
    }
    /// Replaces the buffer by `text`, which starts at absolute offset `at`
    /// and follows byte `before`.
    fn restart(&mut self, at: usize, before: Option<u8>, text: &str) {
        self.buf.clear();
        self.buf.push_str(text);
        self.base = at;
        self.before = before;
    }
    /// Forgets text before `keep` (kept on a character boundary), when that
    /// frees at least half the buffer, so that the copying is amortised.
    fn compact(&mut self, keep: usize) {
        let mut cut = keep.saturating_sub(self.base);
        while cut > 0 && !self.buf.is_char_boundary(cut) {
            cut -= 1;
        }
        if cut > 0 && cut * 2 >= self.buf.len() {
            self.before = Some(self.buf.as_bytes()[cut - 1]);
            self.buf.drain(..cut);
            self.base += cut;
        }
    }
}

/// Lookbehind trackers over the whole text, with their results for the
/// positions the scanner may still start threads at.
#[derive(Clone, Debug, Default)]
struct GuardState {
    states: Vec<u32>,
    /// `bits[i - bits_base]`: bit `t` set when tracker `t` holds at offset `i`.
    bits: Vec<u32>,
    bits_base: usize,
    /// The bits at the end of the text, once the end is known.
    end_bits: Option<u32>,
}

impl Guards for GuardState {
    fn holds(&self, t: u16, at: usize) -> bool {
        let word = match at
            .checked_sub(self.bits_base)
            .and_then(|i| self.bits.get(i))
        {
            Some(w) => *w,
            None => self.end_bits.unwrap_or(0),
        };
        word & (1 << t) != 0
    }
}

/// A streaming parser for one generation.
///
/// Created by [`Template::parser`]; feed it text with [`Parser::feed`] and
/// end with [`Parser::finalize`].
#[derive(Clone, Debug)]
pub struct Parser<'t> {
    t: &'t Template,
    tools: Option<ToolSchemas>,
    text: TextBuf,
    pos: usize,
    current: Option<u16>,
    opened: bool,
    body: String,
    body_start: usize,
    captures: Vec<(String, String)>,
    output: Map,
    scan: StreamScan,
    guards: GuardState,
    stuck: bool,
    /// When set, a fed piece without this byte is all text of the open
    /// region, and nothing else needs doing (see [`Parser::quick_stop`]).
    quick: Option<Quick<'t>>,
    finalized: bool,
    failed: Option<Box<ParseError>>,
    /// Zero-width commits in a row at `pos`, to detect the reference's
    /// endless loops.
    idle_commits: usize,
    raw: Vec<RawEvent>,
    values: Vec<Value>,
    initial: Vec<OwnedEvent>,
    /// A partial UTF-8 sequence left over by [`Parser::feed_bytes`].
    pending_utf8: Vec<u8>,
    options: ParserOptions,
    /// Lenient mode: the regions that gave no value, in order.
    malformed: Vec<Malformed>,
    /// Lenient mode: the work budget ran out; the rest is text of the open
    /// region.
    plain: bool,
}

/// The events of one call, borrowing from the parser.
#[derive(Clone, Copy, Debug)]
pub struct Events<'p> {
    raw: &'p [RawEvent],
    malformed: &'p [Malformed],
    values: &'p [Value],
    output: &'p Map,
    /// The text the chunks of this call lie in, starting at absolute
    /// offset `src_base`: the caller's piece or the parser's buffer.
    src: &'p str,
    src_base: usize,
    t: &'p Template,
}

impl<'p> Events<'p> {
    /// Number of events.
    pub fn len(&self) -> usize {
        self.raw.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.raw.is_empty()
    }

    /// The `i`-th event.
    pub fn get(&self, i: usize) -> Option<Event<'p>> {
        self.raw.get(i).map(|r| self.event(*r))
    }

    fn event(&self, r: RawEvent) -> Event<'p> {
        let fields = &self.t.fields;
        self.indexed(r)
            .map_field(|f| fields[f as usize].name.as_str())
    }

    /// The event with its field as an index into [`Template::fields`].
    fn indexed(&self, r: RawEvent) -> Event<'p, u16> {
        match r {
            RawEvent::Open(f) => Event::RegionOpen { field: f },
            RawEvent::Chunk { field, start, end } => Event::RegionChunk {
                field,
                text: &self.src[start - self.src_base..end - self.src_base],
                dirty: self.t.fields[field as usize].dirty,
            },
            RawEvent::Close { field, value } => Event::RegionClose {
                field,
                value: self.value(value),
            },
            RawEvent::Malformed { field, index } => {
                let (raw, error) = self
                    .malformed
                    .get(index)
                    .map_or(("", ""), |m| (m.raw.as_str(), m.error.as_str()));
                Event::RegionMalformed { field, raw, error }
            }
        }
    }

    fn value(&self, slot: ValueSlot) -> &'p Value {
        static MISSING: Value = Value::Null;
        let found = match slot {
            ValueSlot::Aside(i) => self.values.get(i),
            ValueSlot::Output(k, item) => match (self.output.get_index(k), item) {
                (Some((_, v)), None) => Some(v),
                (Some((_, Value::List(items))), Some(j)) => items.get(j),
                _ => None,
            },
        };
        // Slots are made together with the values they point at, so the
        // lookup always succeeds.
        found.unwrap_or(&MISSING)
    }

    /// The events with their fields typed as `F` (a generated `Field` enum).
    pub fn typed<F: FieldId>(self) -> TypedEvents<'p, F> {
        TypedEvents {
            events: self,
            field: std::marker::PhantomData,
        }
    }

    /// The events, in order.
    pub fn iter(&self) -> impl Iterator<Item = Event<'p>> + '_ {
        self.raw.iter().map(|r| self.event(*r))
    }

    /// Copies the events out.
    pub fn to_vec(&self) -> Vec<OwnedEvent> {
        self.iter().map(|e| e.to_owned_event()).collect()
    }
}

impl<'p> IntoIterator for Events<'p> {
    type Item = Event<'p>;
    type IntoIter = EventsIter<'p>;
    fn into_iter(self) -> EventsIter<'p> {
        EventsIter {
            events: self,
            next: 0,
        }
    }
}

/// The events of one call with typed fields (see [`Events::typed`]).
#[derive(Clone, Copy, Debug)]
pub struct TypedEvents<'p, F> {
    events: Events<'p>,
    field: std::marker::PhantomData<F>,
}

impl<'p, F: FieldId> TypedEvents<'p, F> {
    /// Number of events.
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// The `i`-th event.
    pub fn get(&self, i: usize) -> Option<Event<'p, F>> {
        let e = self.events.indexed(*self.events.raw.get(i)?);
        // Indices come from the template the field enum was generated
        // from, so the lookup always succeeds.
        let field = F::from_index(e.field_id() as usize)?;
        Some(e.map_field(|_| field))
    }

    /// The events, in order.
    pub fn iter(&self) -> impl Iterator<Item = Event<'p, F>> + '_ {
        (0..self.len()).filter_map(|i| self.get(i))
    }

    /// The untyped events.
    pub fn untyped(&self) -> Events<'p> {
        self.events
    }
}

impl<'p, F: FieldId> IntoIterator for TypedEvents<'p, F> {
    type Item = Event<'p, F>;
    type IntoIter = TypedEventsIter<'p, F>;
    fn into_iter(self) -> TypedEventsIter<'p, F> {
        TypedEventsIter {
            events: self,
            next: 0,
        }
    }
}

/// Iterator over [`TypedEvents`].
#[derive(Clone, Debug)]
pub struct TypedEventsIter<'p, F> {
    events: TypedEvents<'p, F>,
    next: usize,
}

impl<'p, F: FieldId> Iterator for TypedEventsIter<'p, F> {
    type Item = Event<'p, F>;
    fn next(&mut self) -> Option<Event<'p, F>> {
        while self.next < self.events.len() {
            self.next += 1;
            if let Some(e) = self.events.get(self.next - 1) {
                return Some(e);
            }
        }
        None
    }
}

/// Iterator over [`Events`].
#[derive(Clone, Debug)]
pub struct EventsIter<'p> {
    events: Events<'p>,
    next: usize,
}

impl<'p> Iterator for EventsIter<'p> {
    type Item = Event<'p>;
    fn next(&mut self) -> Option<Event<'p>> {
        let e = self.events.get(self.next)?;
        self.next += 1;
        Some(e)
    }
}

impl Template {
    /// A parser for one generation. `prefix` is the prompt that was sent to
    /// the model (pass `""` if the generation holds the whole message): chat
    /// templates often write the start of the assistant message (an open
    /// `<think>`, say), and the parser must see it.
    pub fn parser(&self, prefix: &str) -> Result<Parser<'_>, ParseError> {
        Parser::new(self, prefix, None, ParserOptions::default())
    }

    /// A parser with `options` (lenient mode, work budget, limits) and,
    /// with `tools`, tool-call arguments cast as in
    /// [`Template::parser_with_tools`].
    pub fn parser_with(
        &self,
        prefix: &str,
        options: ParserOptions,
        tools: Option<&Value>,
    ) -> Result<Parser<'_>, ParseError> {
        let schemas = match tools {
            Some(tools) => Some(Self::schemas(tools)?),
            None => None,
        };
        Parser::new(self, prefix, schemas, options)
    }

    fn schemas(tools: &Value) -> Result<ToolSchemas, ParseError> {
        ToolSchemas::from_tools(tools).map_err(|e| ParseError {
            kind: ParseErrorKind::Tools,
            field: None,
            offset: 0,
            raw: String::new(),
            message: e.to_string(),
        })
    }

    /// A parser that also casts tool-call arguments by the declared types of
    /// `tools` (OpenAI-style tool definitions, as a JSON list).
    pub fn parser_with_tools(&self, prefix: &str, tools: &Value) -> Result<Parser<'_>, ParseError> {
        let schemas = Self::schemas(tools)?;
        Parser::new(self, prefix, Some(schemas), ParserOptions::default())
    }

    /// Parses a complete generation in one go and returns the message.
    pub fn parse(&self, text: &str, prefix: &str) -> Result<Map, ParseError> {
        let mut p = self.parser(prefix)?;
        p.feed(text)?;
        Ok(p.finalize()?.0)
    }
}

impl<'t> Parser<'t> {
    fn new(
        t: &'t Template,
        prefix: &str,
        tools: Option<ToolSchemas>,
        options: ParserOptions,
    ) -> Result<Parser<'t>, ParseError> {
        let mut p = Parser {
            t,
            tools: tools.filter(|s| !s.is_empty()),
            text: TextBuf::default(),
            pos: 0,
            current: t.implicit,
            opened: false,
            body: String::new(),
            body_start: 0,
            captures: Vec::new(),
            output: Map::new(),
            scan: StreamScan::default(),
            guards: GuardState::default(),
            stuck: false,
            quick: None,
            finalized: false,
            failed: None,
            idle_commits: 0,
            raw: Vec::new(),
            values: Vec::new(),
            initial: Vec::new(),
            pending_utf8: Vec::new(),
            options,
            malformed: Vec::new(),
            plain: false,
        };
        p.scan.set_budget(options.budget);
        if !t.trackers.tables.is_empty() {
            p.guards.states = t.trackers.tables.iter().map(|tb| tb.start(None)).collect();
        }
        let truncated = match &t.anchor_finder {
            Some(f) => after_last_literal(f, prefix),
            None => truncate_past_last_anchor(&t.start_anchor, prefix)?,
        };
        if !truncated.is_empty() {
            p.text.buf.push_str(truncated);
            p.track(0);
            p.with_buffer(|p, src| p.consume_prefix(src))?;
            let events = p.events(p.text.hay());
            p.initial = events.to_vec();
            p.raw.clear();
            p.values.clear();
        }
        let ws = p.watch_set();
        p.scan.reset(ws, p.pos);
        p.quick = p.quick_stop();
        Ok(p)
    }

    /// The byte that decides whether the next piece can take the quick
    /// path: everything is decided, the open region receives text, and the
    /// watch set can only begin at one byte (one literal, or delimiters that
    /// all begin with the same byte).
    fn quick_stop(&self) -> Option<Quick<'t>> {
        if self.failed.is_some()
            || self.finalized
            || self.stuck
            || !self.t.scan_in_place
            || !self.text.buf.is_empty()
            || self.text.len() != self.pos
            || self.current.is_none()
            || !self.opened
            || !self.scan.is_clear()
        {
            return None;
        }
        let ws = self.watch_set();
        if let Some(set) = &ws.literals {
            return (set.firsts.members.len() == 1).then_some(Quick {
                stops: &set.firsts,
                loop_bytes: None,
            });
        }
        (ws.stops.members.len() == 1).then_some(Quick {
            stops: &ws.stops,
            loop_bytes: ws
                .loops
                .iter()
                .any(Option::is_some)
                .then_some(&ws.loop_bytes),
        })
    }

    /// The quick path of [`Parser::feed`]: `text` holds no byte that can
    /// begin a delimiter, so it all goes to the open region.
    fn feed_quick<'a>(&'a mut self, text: &'a str, field: u16) -> Events<'a> {
        self.raw.clear();
        self.values.clear();
        let start = self.pos;
        let end = start + text.len();
        self.body.push_str(text);
        self.raw.push(RawEvent::Chunk { field, start, end });
        self.pos = end;
        self.scan.skip_to(end);
        self.text.base = end;
        self.text.before = text.as_bytes().last().copied();
        Events {
            raw: &self.raw,
            malformed: &self.malformed,
            values: &self.values,
            output: &self.output,
            src: text,
            src_base: start,
            t: self.t,
        }
    }

    /// The events produced by the prompt (regions it opened or wrote),
    /// to replay before the model's output.
    pub fn initial_events(&self) -> &[OwnedEvent] {
        &self.initial
    }

    /// Bytes the scanner has read so far, counting text read again after a
    /// delimiter changed what is watched. Linear in the input by design; tests
    /// check it.
    pub fn bytes_scanned(&self) -> u64 {
        self.scan.bytes_read()
    }

    /// Steps the backtracking matcher has taken so far, across all attempts
    /// of delimiters off the DFA plan. Bounded by the parser's
    /// [`WorkBudget`](crate::scan::stream::WorkBudget); tests check it.
    pub fn backtrack_steps(&self) -> u64 {
        self.scan.backtrack_steps()
    }

    /// The options the parser was made with.
    pub fn options(&self) -> &ParserOptions {
        &self.options
    }

    /// (Lenient mode) the regions that gave no value so far, with their
    /// text, in order. The message from [`Parser::finalize`] has no entry
    /// for them; this list (and the [`Event::RegionMalformed`] events) is
    /// where their text is kept.
    pub fn malformed(&self) -> &[Malformed] {
        &self.malformed
    }

    /// (Lenient mode) whether a delimiter pattern exceeded the work budget,
    /// so that the rest of the generation went to the open region as text.
    pub fn gave_up_scanning(&self) -> bool {
        self.plain
    }

    /// The template this parser runs.
    pub fn template(&self) -> &'t Template {
        self.t
    }

    /// Reserves room for `additional` more bytes of region text, so that
    /// streaming that much text into a region allocates nothing (a server
    /// that knows its token limit can call this once).
    pub fn reserve(&mut self, additional: usize) {
        self.body.reserve(additional);
        // Room for text held across pieces (a delimiter's possible start).
        self.text.buf.reserve(64);
    }

    /// Feeds the next piece of the generation and returns the events it
    /// produced. The events borrow the parser and the piece until the next
    /// call.
    ///
    /// When the parser holds no undecided text, the piece is scanned where it
    /// lies and only region text is copied (into the region's body); text
    /// that might start a delimiter is kept until the next call decides it.
    pub fn feed<'a>(&'a mut self, text: &'a str) -> Result<Events<'a>, ParseError> {
        if let (Some(q), Some(field)) = (self.quick, self.current)
            && q.takes(text.as_bytes())
        {
            return Ok(self.feed_quick(text, field));
        }
        self.quick = None;
        self.feed_slow(text)
    }

    fn feed_slow<'a>(&'a mut self, text: &'a str) -> Result<Events<'a>, ParseError> {
        self.begin_call()?;
        if self.stuck || text.is_empty() {
            return Ok(self.events(self.text.hay()));
        }
        if self.t.scan_in_place && !self.text.holds_after(self.pos) {
            let src = Hay {
                text,
                base: self.text.len(),
                before: self.text.last_byte(),
            };
            if self.scan.is_clear() && !self.watch_set().may_start_in(text.as_bytes()) {
                // Nothing in the piece can begin a delimiter: all of it is
                // text of the current region.
                let end = src.end();
                self.route(src, src.base, end);
                self.pos = end;
                self.scan.skip_to(end);
                self.text.restart(end, src.prev_byte(end), "");
                self.quick = self.quick_stop();
                return Ok(self.events(src));
            }
            let done = self.process(src, false);
            // Keep what the scanner holds (and the byte before it).
            let keep = self.pos.clamp(src.base, src.end());
            let before = src.prev_byte(keep);
            self.text.restart(keep, before, src.slice(keep, src.end()));
            if let Err(e) = done {
                return Err(self.fail(e));
            }
            self.quick = self.quick_stop();
            return Ok(self.events(src));
        }
        let from = self.text.len();
        self.text.buf.push_str(text);
        self.track(from);
        if let Err(e) = self.with_buffer(|p, src| p.process(src, false)) {
            return Err(self.fail(e));
        }
        self.quick = self.quick_stop();
        Ok(self.events(self.text.hay()))
    }

    /// Feeds raw bytes. A UTF-8 sequence split across calls is kept until its
    /// end arrives; bytes that are not UTF-8 are an error.
    pub fn feed_bytes(&mut self, bytes: &[u8]) -> Result<Events<'_>, ParseError> {
        self.quick = None;
        self.begin_call()?;
        let joined;
        let data: &[u8] = if self.pending_utf8.is_empty() {
            bytes
        } else {
            let mut d = std::mem::take(&mut self.pending_utf8);
            d.extend_from_slice(bytes);
            joined = d;
            &joined
        };
        let (valid, tail) = match std::str::from_utf8(data) {
            Ok(s) => (s, &[][..]),
            Err(e) if e.error_len().is_none() => {
                let (head, tail) = data.split_at(e.valid_up_to());
                // `head` was just checked.
                (std::str::from_utf8(head).unwrap_or_default(), tail)
            }
            Err(e) => {
                let at = self.text.len() + e.valid_up_to();
                let bad = e.error_len().unwrap_or(1);
                let raw = String::from_utf8_lossy(&data[e.valid_up_to()..e.valid_up_to() + bad])
                    .into_owned();
                return Err(self.fail(ParseError {
                    kind: ParseErrorKind::InvalidUtf8,
                    field: None,
                    offset: at,
                    raw,
                    message: format!("invalid UTF-8 at byte {at}"),
                }));
            }
        };
        self.pending_utf8.extend_from_slice(tail);
        if self.stuck || valid.is_empty() {
            return Ok(self.events(self.text.hay()));
        }
        // The bytes do not outlive the call: scan them in the buffer.
        let from = self.text.len();
        self.text.buf.push_str(valid);
        self.track(from);
        if let Err(e) = self.with_buffer(|p, src| p.process(src, false)) {
            return Err(self.fail(e));
        }
        Ok(self.events(self.text.hay()))
    }

    /// Ends the generation: settles what was held, closes the open region,
    /// checks required fields, and returns the message with the last events.
    pub fn finalize(&mut self) -> Result<(Map, Events<'_>), ParseError> {
        self.quick = None;
        self.begin_call()?;
        if !self.pending_utf8.is_empty() {
            let at = self.text.len();
            let raw = String::from_utf8_lossy(&self.pending_utf8).into_owned();
            return Err(self.fail(ParseError {
                kind: ParseErrorKind::InvalidUtf8,
                field: None,
                offset: at,
                raw,
                message: format!("the input ends inside a UTF-8 sequence at byte {at}"),
            }));
        }
        if !self.stuck {
            self.end_guards();
            if let Err(e) = self.with_buffer(|p, src| p.process(src, true)) {
                return Err(self.fail(e));
            }
        }
        let defaults = &self.t.defaults;
        let missing: Vec<String> = self
            .t
            .fields
            .iter()
            .filter(|f| {
                !f.optional && !self.output.contains_key(&f.name) && !defaults.contains_key(&f.name)
            })
            .map(|f| f.name.clone())
            .collect();
        if !missing.is_empty() {
            let message = format!(
                "Required response_template fields missing from parsed output: [{}]",
                missing
                    .iter()
                    .map(|m| format!("'{m}'"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            if self.options.lenient {
                for name in &missing {
                    let Some(f) = self.t.fields.iter().position(|f| &f.name == name) else {
                        continue;
                    };
                    self.push_malformed(f as u16, self.text.len(), String::new(), message.clone());
                }
            } else {
                let e = ParseError {
                    kind: ParseErrorKind::MissingFields(missing),
                    field: None,
                    offset: self.text.len(),
                    raw: String::new(),
                    message,
                };
                return Err(self.fail(e));
            }
        }
        self.finalized = true;
        // The last events must not point into the message, which moves out.
        self.detach(|_| true);
        // The reference starts from a copy of the defaults and drops empty
        // values of other keys at the end. The defaults are applied here
        // rather than copied into every parser at construction.
        let mut output = std::mem::take(&mut self.output);
        let mut message = Map::with_capacity(defaults.len() + output.len());
        for (k, default) in defaults {
            let v = match output.get_mut(k) {
                Some(v) => std::mem::replace(v, Value::Null),
                None => default.clone(),
            };
            message.insert(k.clone(), v);
        }
        for (k, v) in output {
            if !defaults.contains_key(&k) && !v.is_empty_value() {
                message.insert(k, v);
            }
        }
        Ok((message, self.events(self.text.hay())))
    }

    /// Runs `f` over the buffered text (taken out of `self` meanwhile, so
    /// that `f` may change the rest of the parser).
    fn with_buffer<R>(&mut self, f: impl FnOnce(&mut Self, Hay<'_>) -> R) -> R {
        let buf = std::mem::take(&mut self.text.buf);
        let src = Hay {
            text: &buf,
            base: self.text.base,
            before: self.text.before,
        };
        let r = f(self, src);
        self.text.buf = buf;
        r
    }

    fn begin_call(&mut self) -> Result<(), ParseError> {
        if let Some(e) = &self.failed {
            return Err(ParseError::clone(e));
        }
        if self.finalized {
            return Err(ParseError {
                kind: ParseErrorKind::Finalized,
                field: None,
                offset: self.text.len(),
                raw: String::new(),
                message: "ResponseParser already finalized".into(),
            });
        }
        self.raw.clear();
        self.values.clear();
        let keep = if self.t.needs_history {
            0
        } else {
            self.pos.saturating_sub(4)
        };
        self.text.compact(keep);
        self.trim_guards();
        Ok(())
    }

    fn fail(&mut self, e: ParseError) -> ParseError {
        self.failed = Some(Box::new(e.clone()));
        e
    }

    fn events<'a>(&'a self, src: Hay<'a>) -> Events<'a> {
        Events {
            raw: &self.raw,
            malformed: &self.malformed,
            values: &self.values,
            output: &self.output,
            src: src.text,
            src_base: src.base,
            t: self.t,
        }
    }

    fn watch_set(&self) -> &'t WatchSet {
        let i = match self.current {
            Some(f) if Some(f) != self.t.implicit => f as usize,
            _ => self.t.fields.len(),
        };
        &self.t.watch_sets[i]
    }

    // ----- lookbehind trackers -------------------------------------------

    /// Runs the trackers over the text from `from` to the end.
    fn track(&mut self, from: usize) {
        let tables = &self.t.trackers.tables;
        if tables.is_empty() {
            return;
        }
        if self.guards.bits.is_empty() {
            self.guards.bits_base = from;
        }
        let bytes = self.text.buf.as_bytes();
        for i in from..self.text.len() {
            let b = bytes[i - self.text.base];
            let mut word = 0u32;
            for (t, table) in tables.iter().enumerate() {
                let q = table.next(self.guards.states[t], b);
                self.guards.states[t] = q;
                if table.flags(q) & MATCH != 0 {
                    word |= 1 << t;
                }
            }
            self.guards.bits.push(word);
        }
    }

    fn end_guards(&mut self) {
        let tables = &self.t.trackers.tables;
        if tables.is_empty() {
            return;
        }
        let mut word = 0u32;
        for (t, table) in tables.iter().enumerate() {
            if table.flags(table.next_eoi(self.guards.states[t])) & MATCH != 0 {
                word |= 1 << t;
            }
        }
        self.guards.end_bits = Some(word);
    }

    fn trim_guards(&mut self) {
        if self.guards.bits.is_empty() {
            return;
        }
        let drop = self.pos.saturating_sub(self.guards.bits_base);
        if drop > 0 && drop * 2 >= self.guards.bits.len() {
            self.guards.bits.drain(..drop.min(self.guards.bits.len()));
            self.guards.bits_base += drop;
        }
    }

    // ----- regions ---------------------------------------------------------

    /// Routes text `[a, b)` of `src` to the current region (dropped if there
    /// is none).
    fn route(&mut self, src: Hay<'_>, a: usize, b: usize) {
        let Some(f) = self.current else { return };
        if a >= b {
            return;
        }
        if !self.opened {
            self.raw.push(RawEvent::Open(f));
            self.opened = true;
            self.body_start = a;
        }
        self.body.push_str(src.slice(a, b));
        // Adjacent pieces of one region are one chunk.
        if let Some(RawEvent::Chunk { field, end, .. }) = self.raw.last_mut()
            && *field == f
            && *end == a
        {
            *end = b;
            return;
        }
        self.raw.push(RawEvent::Chunk {
            field: f,
            start: a,
            end: b,
        });
    }

    /// An error about the current region's value, carrying its raw text.
    fn field_error(&self, name: &str, message: String) -> ParseError {
        ParseError {
            kind: ParseErrorKind::Field,
            field: Some(name.to_owned()),
            offset: self.body_start,
            raw: self.body.clone(),
            message,
        }
    }

    fn reset_to_implicit(&mut self) {
        self.current = self.t.implicit;
        self.captures.clear();
        self.body.clear();
        self.opened = false;
    }

    /// Moves the values of this call's close events that live in the
    /// message entries selected by `which` aside, before those entries
    /// change or move.
    fn detach(&mut self, which: impl Fn(usize) -> bool) {
        for r in &mut self.raw {
            if let RawEvent::Close { value, .. } = r
                && let ValueSlot::Output(k, item) = *value
                && which(k)
            {
                let v = match (self.output.get_index(k), item) {
                    (Some((_, v)), None) => v.clone(),
                    (Some((_, Value::List(items))), Some(j)) => {
                        items.get(j).cloned().unwrap_or(Value::Null)
                    }
                    _ => Value::Null,
                };
                self.values.push(v);
                *value = ValueSlot::Aside(self.values.len() - 1);
            }
        }
    }

    /// Closes the open region. In lenient mode a region whose text gives no
    /// value is recorded as malformed instead of failing.
    fn close_current(&mut self) -> Result<(), ParseError> {
        let field = self.current.filter(|_| self.opened);
        match self.close_current_strict() {
            Err(e) if self.options.lenient && e.kind == ParseErrorKind::Field => {
                let Some(f) = field else { return Err(e) };
                self.push_malformed(f, e.offset, e.raw, e.message);
                self.reset_to_implicit();
                Ok(())
            }
            other => other,
        }
    }

    fn push_malformed(&mut self, f: u16, offset: usize, raw: String, error: String) {
        self.malformed.push(Malformed {
            field: self.t.fields[f as usize].name.clone(),
            offset,
            raw,
            error,
        });
        self.raw.push(RawEvent::Malformed {
            field: f,
            index: self.malformed.len() - 1,
        });
    }

    fn close_current_strict(&mut self) -> Result<(), ParseError> {
        let Some(f) = self.current.filter(|_| self.opened) else {
            self.reset_to_implicit();
            return Ok(());
        };
        let field = &self.t.fields[f as usize];
        let value = finish_region_owned(
            &field.content,
            field.transform.as_ref(),
            field.transform_each,
            std::mem::take(&mut self.body),
            &self.captures,
            &field.name,
            self.tools.as_ref(),
        )
        .map_err(|(e, body)| {
            self.body = body;
            self.field_error(&field.name, e.to_string())
        })?;
        let name = &field.name;
        let existing = self.output.get_index_of(name);
        let slot = if let Some(sep) = &field.join {
            let Value::Str(piece) = value else {
                let message = format!(
                    "Field '{name}': 'join' requires each match to parse to a string, got {}.",
                    value.type_name()
                );
                return Err(self.field_error(name, message));
            };
            // Python's `previous is None` test: a default of `null` counts
            // as no previous value; any other previous value must be a
            // string to concatenate.
            let previous = match existing {
                Some(k) => self.output.get_index(k).map(|(_, v)| v),
                None => self.t.defaults.get(name),
            };
            match previous {
                None | Some(Value::Null) => {
                    if let Some(k) = existing {
                        self.detach(|i| i == k);
                    }
                    let (k, _) = self.output.insert_full(name.clone(), Value::Str(piece));
                    ValueSlot::Output(k, None)
                }
                Some(Value::Str(prev)) => {
                    let mut joined = String::with_capacity(prev.len() + sep.len() + piece.len());
                    joined.push_str(prev);
                    joined.push_str(sep);
                    joined.push_str(&piece);
                    if let Some(k) = existing {
                        self.detach(|i| i == k);
                    }
                    self.output.insert(name.clone(), Value::Str(joined));
                    self.values.push(Value::Str(piece));
                    ValueSlot::Aside(self.values.len() - 1)
                }
                Some(other) => {
                    // The reference evaluates `previous + join + value`, so
                    // Python's message names the previous value's type.
                    let message = match other {
                        Value::List(_) => {
                            "TypeError: can only concatenate list (not \"str\") to list".to_owned()
                        }
                        _ => format!(
                            "TypeError: unsupported operand type(s) for +: '{}' and 'str'",
                            other.type_name()
                        ),
                    };
                    return Err(self.field_error(name, message));
                }
            }
        } else if field.repeats {
            let k = match existing {
                Some(k) => k,
                None => match self.t.defaults.get(name) {
                    // `append` to the default's list (a copy of it).
                    Some(default) => self.output.insert_full(name.clone(), default.clone()).0,
                    None => {
                        self.output
                            .insert_full(name.clone(), Value::List(Vec::new()))
                            .0
                    }
                },
            };
            match self.output.get_index_mut(k) {
                Some((_, Value::List(items))) => {
                    items.push(value);
                    ValueSlot::Output(k, Some(items.len() - 1))
                }
                Some((_, other)) => {
                    let message =
                        format!("'{}' object has no attribute 'append'", other.type_name());
                    return Err(self.field_error(name, message));
                }
                None => {
                    self.values.push(value);
                    ValueSlot::Aside(self.values.len() - 1)
                }
            }
        } else {
            if let Some(k) = existing {
                self.detach(|i| i == k);
            }
            let (k, _) = self.output.insert_full(name.clone(), value);
            ValueSlot::Output(k, None)
        };
        self.raw.push(RawEvent::Close {
            field: f,
            value: slot,
        });
        self.reset_to_implicit();
        Ok(())
    }

    fn open_explicit(&mut self, f: u16, captures: Vec<(String, String)>, at: usize) {
        self.current = Some(f);
        self.captures = captures;
        self.body.clear();
        self.opened = true;
        self.body_start = at;
        self.raw.push(RawEvent::Open(f));
    }

    /// Applies a delimiter match. Returns whether the reference's loop goes
    /// on (it stops after a zero-width close of a region that received
    /// nothing).
    fn commit(
        &mut self,
        src: Hay<'_>,
        w: Watch,
        start: usize,
        end: usize,
        captures: Vec<(String, String)>,
    ) -> Result<bool, ParseError> {
        self.route(src, self.pos, start);
        if start == end && end == self.pos {
            self.idle_commits += 1;
            // Every state of the region machine has been visited at this
            // offset without consuming text: the reference loops forever.
            if self.idle_commits > 2 * (self.t.fields.len() + 2) {
                return Err(ParseError {
                    kind: ParseErrorKind::NoProgress,
                    field: Some(self.t.fields[w.field as usize].name.clone()),
                    offset: start,
                    raw: String::new(),
                    message: format!("delimiters keep matching the empty string at byte {start}"),
                });
            }
        } else {
            self.idle_commits = 0;
        }
        self.pos = end;
        match w.kind {
            Kind::Open => {
                self.close_current()?;
                self.open_explicit(w.field, captures, end);
                Ok(true)
            }
            Kind::Close => {
                let had_content = self.opened;
                self.close_current()?;
                Ok(had_content || start != end)
            }
        }
    }

    // ----- the generation: streaming scan -----------------------------------

    fn process(&mut self, src: Hay<'_>, eos: bool) -> Result<(), ParseError> {
        self.process_scan(src, eos)?;
        self.check_limits(src)
    }

    fn check_limits(&self, src: Hay<'_>) -> Result<(), ParseError> {
        let limits = &self.options.limits;
        let held = src.end().saturating_sub(self.pos);
        if held > limits.max_held {
            let from = self.pos.max(src.base);
            return Err(ParseError {
                kind: ParseErrorKind::Limit {
                    name: "max_held",
                    limit: limits.max_held,
                },
                field: self.current.map(|f| self.t.fields[f as usize].name.clone()),
                offset: self.pos,
                raw: src.slice(from, src.end()).to_owned(),
                message: format!(
                    "{held} bytes of text may still begin a delimiter (limit max_held = {})",
                    limits.max_held
                ),
            });
        }
        if self.body.len() > limits.max_region {
            return Err(ParseError {
                kind: ParseErrorKind::Limit {
                    name: "max_region",
                    limit: limits.max_region,
                },
                field: self.current.map(|f| self.t.fields[f as usize].name.clone()),
                offset: self.body_start,
                raw: self.body.clone(),
                message: format!(
                    "a region holds {} bytes (limit max_region = {})",
                    self.body.len(),
                    limits.max_region
                ),
            });
        }
        Ok(())
    }

    fn process_scan(&mut self, src: Hay<'_>, eos: bool) -> Result<(), ParseError> {
        loop {
            if self.plain {
                let len = src.end();
                self.route(src, self.pos, len);
                self.pos = len;
                if eos {
                    self.close_current()?;
                }
                return Ok(());
            }
            let ws = self.watch_set();
            let delims: &[Delimiter] = &self.t.delimiters;
            self.scan.advance(ws, delims, &src, &self.guards, eos);
            let decision = match self.scan.decide(ws, delims, &src, eos) {
                Ok(d) => d,
                Err(ScanError::Budget) if self.options.lenient => {
                    // The rest cannot be scanned within the budget: it is
                    // text, so that nothing is lost.
                    self.plain = true;
                    continue;
                }
                Err(e) => return Err(self.scan_error(src, e)),
            };
            match decision {
                Decision::Commit {
                    entry,
                    start,
                    end,
                    captures,
                } => {
                    if !self.commit(src, ws.entries[entry], start, end, captures)? {
                        // The reference stops its loop here and finds the
                        // same match on every later call: nothing more is
                        // read.
                        self.stuck = true;
                        return Ok(());
                    }
                    let ws = self.watch_set();
                    self.scan.reset(ws, self.pos);
                }
                Decision::Hold(hold) => {
                    if eos {
                        let len = src.end();
                        self.route(src, self.pos, len);
                        self.pos = len;
                        self.close_current()?;
                    } else if hold > self.pos {
                        self.route(src, self.pos, hold);
                        self.pos = hold;
                    }
                    return Ok(());
                }
            }
        }
    }

    fn scan_error(&self, src: Hay<'_>, e: ScanError) -> ParseError {
        let raw = src.slice(self.pos.max(src.base), src.end()).to_owned();
        match e {
            ScanError::Budget => ParseError {
                kind: ParseErrorKind::MatcherBudget,
                field: self.current.map(|f| self.t.fields[f as usize].name.clone()),
                offset: self.pos,
                raw,
                message: "a delimiter pattern needs too many backtracking steps".into(),
            },
            ScanError::Disagree { pattern, at } => ParseError {
                kind: ParseErrorKind::Internal,
                field: None,
                offset: at,
                raw,
                message: format!(
                    "internal: the automaton and the regex disagree on {pattern:?} at byte {at}"
                ),
            },
        }
    }

    // ----- the prefix: the reference's own feed -----------------------------

    /// Processes the truncated prompt exactly as the reference's `feed`
    /// does: per watched delimiter, `search(..., partial=True)`, then its
    /// commit-or-hold rule.
    fn consume_prefix(&mut self, src: Hay<'_>) -> Result<(), ParseError> {
        let mut cache: Vec<Option<(usize, Option<PartialHit>)>> =
            vec![None; self.t.delimiters.len()];
        loop {
            let ws = self.watch_set();
            let len = src.end();
            let mut best: Option<(RefKey, usize, PartialHit)> = None;
            let mut hold = len;
            for (k, w) in ws.entries.iter().enumerate() {
                let d = &self.t.delimiters[w.delim as usize];
                let slot = &mut cache[w.delim as usize];
                let fresh = match slot {
                    Some((_, None)) => false,
                    Some((_, Some(hit))) => hit.start < self.pos,
                    None => true,
                };
                if fresh {
                    let hit = search_partial(d, src.text, self.pos)
                        .map_err(|e| self.scan_error(src, e))?;
                    *slot = Some((self.pos, hit));
                }
                let Some((_, Some(hit))) = slot.clone() else {
                    continue;
                };
                let can_grow = hit.end == len && (hit.start == hit.end || d.ref_can_grow);
                if hit.partial || can_grow {
                    hold = hold.min(hit.start);
                    continue;
                }
                let key = (
                    hit.start,
                    usize::MAX - (hit.end - hit.start),
                    w.kind,
                    w.name_rank,
                );
                if best.as_ref().is_none_or(|(b, _, _)| key < *b) {
                    best = Some((key, k, hit));
                }
            }
            match best {
                Some((_, k, hit)) if hit.start < hold => {
                    let w = ws.entries[k];
                    if !self.commit(src, w, hit.start, hit.end, hit.captures)? {
                        return Ok(());
                    }
                }
                _ => {
                    if hold > self.pos {
                        self.route(src, self.pos, hold);
                        self.pos = hold;
                    }
                    return Ok(());
                }
            }
        }
    }
}

/// The quick path's test (see [`Parser::quick_stop`]).
#[derive(Clone, Copy, Debug)]
struct Quick<'t> {
    /// The bytes at which a watched delimiter can begin (one byte).
    stops: &'t ByteSet,
    /// With leading loops (`\s*<tool_call>`): their ASCII bytes. A piece
    /// that ends in one may begin a delimiter.
    loop_bytes: Option<&'t [bool; 128]>,
}

impl Quick<'_> {
    /// Whether `text` can take the quick path.
    #[inline]
    fn takes(&self, text: &[u8]) -> bool {
        let Some(&last) = text.last() else {
            return false;
        };
        if let Some(loops) = self.loop_bytes
            && (last >= 128 || loops[last as usize])
        {
            return false;
        }
        self.stops.find(text).is_none()
    }
}

/// The reference's order of delimiter matches: start, longest, opens
/// first, then by field name.
type RefKey = (usize, usize, Kind, u16);

#[derive(Clone, Debug)]
struct PartialHit {
    start: usize,
    end: usize,
    partial: bool,
    captures: Vec<(String, String)>,
}

fn search_partial(d: &Delimiter, hay: &str, pos: usize) -> Result<Option<PartialHit>, ScanError> {
    let Some(m) = d.regex.search_partial(hay, pos)? else {
        return Ok(None);
    };
    let caps = &m.captures;
    Ok(Some(PartialHit {
        start: caps.start(),
        end: caps.end(),
        partial: m.partial,
        captures: if m.partial {
            Vec::new()
        } else {
            named_groups(d, hay, caps)
        },
    }))
}

/// The prompt after the last of the non-overlapping occurrences of a
/// literal anchor, found from the left as `finditer` does.
fn after_last_literal<'a>(finder: &memchr::memmem::Finder<'_>, prefix: &'a str) -> &'a str {
    let n = finder.needle().len();
    let mut at = 0;
    let mut last_end = None;
    while let Some(i) = finder.find(&prefix.as_bytes()[at..]) {
        at += i + n;
        last_end = Some(at);
    }
    // A match of a UTF-8 literal in UTF-8 text ends on a character boundary.
    last_end.and_then(|e| prefix.get(e..)).unwrap_or(prefix)
}

/// The prompt after the last match of the start anchor (all of it when the
/// anchor does not occur), as `truncate_past_last_anchor` does with
/// `finditer`.
fn truncate_past_last_anchor<'a>(
    anchor: &Delimiter,
    prefix: &'a str,
) -> Result<&'a str, ParseError> {
    let mut last_end = None;
    for m in anchor.regex.find_iter(prefix) {
        let m = m.map_err(|_| ParseError {
            kind: ParseErrorKind::MatcherBudget,
            field: None,
            offset: 0,
            raw: prefix.to_owned(),
            message: "the start anchor pattern needs too many backtracking steps".into(),
        })?;
        last_end = Some(m.end());
    }
    Ok(match last_end {
        Some(e) => &prefix[e..],
        None => prefix,
    })
}

#[cfg(test)]
mod tests {
    use crate::{ParseErrorKind, Template};

    #[test]
    fn empty_delimiter_cycles_are_an_error_not_a_hang() {
        // Open and close both match the empty string before "y": the
        // reference opens and closes the region there forever.
        let t = Template::from_json(
            r#"{"start_anchor": "<a>", "fields": {"x": {"open_pattern": "(?=y)", "close_pattern": "(?=y)"}}}"#,
        )
        .expect("valid template");
        let mut p = t.parser("").expect("parser");
        let fed = p.feed("ay").map(|_| ());
        let err = match fed {
            Err(e) => e,
            Ok(()) => p.finalize().map(|_| ()).expect_err("a cycle cannot finish"),
        };
        assert_eq!(err.kind, ParseErrorKind::NoProgress);
        assert_eq!(err.offset, 1);
    }

    #[test]
    fn join_onto_a_non_string_default_words_pythons_type_error() {
        // The reference evaluates `previous + join + value`; the messages
        // are what Python says for each type of `previous`.
        for (default, message) in [
            (
                r#"["x"]"#,
                r#"TypeError: can only concatenate list (not "str") to list"#,
            ),
            (
                "3",
                "TypeError: unsupported operand type(s) for +: 'int' and 'str'",
            ),
            (
                r#"{"a": 1}"#,
                "TypeError: unsupported operand type(s) for +: 'dict' and 'str'",
            ),
        ] {
            let t = Template::from_json(&format!(
                r#"{{"defaults": {{"c": {default}}}, "start_anchor": "<s>",
                    "fields": {{"c": {{"open": "<c>", "close": "</c>", "repeats": true, "join": "-"}}}}}}"#
            ))
            .expect("valid template");
            let mut p = t.parser("").expect("parser");
            let fed = p.feed("<c>hi</c>").map(|_| ());
            let err = match fed {
                Err(e) => e,
                Ok(()) => p
                    .finalize()
                    .map(|_| ())
                    .expect_err("join onto a non-string"),
            };
            assert_eq!(err.kind, ParseErrorKind::Field);
            assert_eq!(err.field.as_deref(), Some("c"));
            assert_eq!(err.message, message);
        }
    }
}
