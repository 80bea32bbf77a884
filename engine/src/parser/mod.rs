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

use crate::content::ParamStream;
pub use crate::error::{ParseError, ParseErrorKind};
use crate::event::{Event, OwnedEvent};
use crate::machine::{HasRegions, LiteralHit, Machine, TypedRegions};
use crate::scan::delimiter::Delimiter;
use crate::scan::guards::GuardState;
use crate::scan::stream::{
    Advance, ByteSet, Decision, Hay, IrAutomata, Kind, ScanError, StartMemo, StreamScan, Watch,
    WatchSet, named_groups,
};
use crate::template::Template;
use crate::transform::{ToolSchemas, finish_parsed, finish_region};
use crate::typed::FieldId;
use crate::value::{Map, Value};

mod events;
mod fields;
mod inline;
mod message;
mod open_region;
mod options;
mod prefix;

pub use events::{Events, EventsIter, Param, TypedEvents, TypedEventsIter};
use events::{Kept, Log, RawEvent, ValueSlot};
pub use fields::FieldValues;
use inline::InlineState;
pub use inline::{ReasoningFormat, UnknownReasoningFormat};
pub use open_region::OpenRegion;
pub use options::{Limits, Malformed, ParserOptions, Replaced, Unclaimed};
use prefix::{after_last_literal, truncate_past_last_anchor};

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

/// The most bytes the quick path holds itself (see [`Held`]); a longer
/// hold goes to the scanner.
const HELD_MAX: usize = 32;

/// The longest piece that [`Parser::started_after_hold`] and
/// [`Parser::outside_decides`] judge (a few tokens): a longer one likely
/// holds a whole delimiter, which they leave to the scanner, and its search
/// would then be done twice (and, in one piece, the text copied twice).
const STARTED_PIECE: usize = 32;

/// The room a streamed region's body starts with (see
/// [`Parser::start_quick`]).
const BODY_START: usize = 256;

/// A partial delimiter held by the quick path, which the scanner has not
/// been told of yet: the held text is in the text window's buffer, from
/// `pos`, and the rest of the state is what [`Parser::settle`] owes the
/// scanner after a run of quick pieces (`lag` is set). The next piece is
/// searched with the held text by the machine's search, and the quick
/// state comes back if they begin no delimiter, without the scanner.
///
/// Meanwhile the quick state stays, with no room: a piece cannot take the
/// quick path, and the one test on it sends the piece here.
#[derive(Clone, Copy, Debug)]
struct Held {
    /// The quick state's room, less the bytes fed since it was made.
    room: usize,
    /// The byte before the held text.
    before: Option<u8>,
    /// Bytes the scanner would have counted as read beyond `pos` (held
    /// text, and text read again): see [`Parser::bytes_scanned`].
    read: usize,
}

/// What [`Parser::held_step`] decided for the piece after a partial
/// delimiter held by the quick path.
#[derive(Clone, Copy, Debug)]
enum HeldStep {
    /// The held text and the piece begin no delimiter.
    Takes,
    /// They end inside one that begins at this offset of the held text.
    Holds(usize),
    /// Something the quick path does not decide: the scanner does.
    Scanner,
}

/// What [`Parser::after_hold_takes`] decided for the piece after a held
/// partial delimiter.
#[derive(Clone, Copy, Debug)]
enum AfterHold {
    /// The held text and the piece begin no delimiter: all of it goes to
    /// the open region of this field.
    Takes(u16),
    /// They end inside a delimiter that begins `at` bytes after the hold:
    /// the text before it goes to the open region of `field`, the rest
    /// stays held.
    Holds { field: u16, at: usize },
}

/// What [`Parser::search_started`] makes of its search's answer over
/// `bytes` (from the parser's position): no delimiter begins there
/// (`Some(None)`), or one begins at `p` and is cut by the end
/// (`Some(Some(p))`, when a hold that long is allowed).
fn decide_started(hit: Option<LiteralHit>, bytes: &[u8], max_held: usize) -> Option<Option<usize>> {
    match hit? {
        LiteralHit::Nothing => Some(None),
        // (A delimiter starts on a character.)
        LiteralHit::Partial(p)
            if p < bytes.len() && bytes.len() - p <= max_held && !is_continuation(bytes[p]) =>
        {
            Some(Some(p))
        }
        _ => None,
    }
}

/// A streaming parser for one generation.
///
/// Created by [`Template::parser`]; feed it text with [`Parser::feed`] and
/// end with [`Parser::finalize`].
#[derive(Clone, Debug)]
pub struct Parser<'t, M: HasRegions = &'t Template> {
    /// The machine: the template, and code specialised to it.
    m: M,
    /// `m.template()`, kept at hand.
    t: &'t Template,
    tools: Option<ToolSchemas>,
    text: TextBuf,
    pos: usize,
    current: Option<u16>,
    opened: bool,
    body: String,
    body_start: usize,
    captures: Vec<(String, String)>,
    /// The message so far, and the values this call's close events point
    /// at.
    kept: Kept<M::Regions>,
    scan: StreamScan,
    guards: GuardState,
    stuck: bool,
    /// When set, a fed piece without this byte is all text of the open
    /// region, and nothing else needs doing (see [`Parser::quick_stop`]).
    quick: Option<Quick<'t>>,
    /// When set, the quick path holds a partial delimiter (`quick` stays
    /// set, with no room; see [`Held`]).
    held: Option<Held>,
    finalized: bool,
    failed: Option<Box<ParseError>>,
    /// Zero-width commits in a row at `pos`, to detect the reference's
    /// endless loops.
    idle_commits: usize,
    /// The quick path took text without moving the scanner's frontier or
    /// the text window to `pos` (see [`Parser::settle`]).
    lag: bool,
    /// The last call was a piece [`Parser::started_holds`] held, in this
    /// state (a watch set's index): nothing it tested has changed since
    /// but the buffer, so the next piece needs only the tests that depend
    /// on it ([`Parser::lead_holds`]). Taken by each call of
    /// [`Parser::feed_unquick`] and cleared by [`Parser::begin_call`].
    lead: Option<u16>,
    /// This call's events, and the lists they refer to.
    log: Log,
    initial: Vec<OwnedEvent>,
    /// A partial UTF-8 sequence left over by [`Parser::feed_bytes`].
    pending_utf8: Vec<u8>,
    options: ParserOptions,
    /// Lenient mode: the work budget ran out; the rest is text of the open
    /// region.
    plain: bool,
    /// A non-empty prefix did not contain the start anchor.
    anchor_missing: bool,
    /// Text outside every region is recorded ([`Parser::unclaimed`]): the
    /// template has no implicit field, and the prompt is behind us.
    unclaimed_on: bool,
    /// Where the model's output starts in `text` (after the prompt's tail):
    /// `max_message` counts from here.
    output_start: usize,
    /// Parameters of `xml-inline` regions are read as they stream (see
    /// [`Parser::stream_params`]).
    params_on: bool,
    /// Whether regions the machine can build in its own types are built
    /// there (see [`Parser::typed_regions`]).
    typed_on: bool,
    /// The open region's parameter stream, and its parameters so far.
    xml: Option<Box<ParamStream>>,
    xml_params: Vec<(String, Value)>,
    /// The last region's stream, for the next region of the same field.
    xml_spare: Option<(u16, Box<ParamStream>)>,
    /// [`ReasoningFormat::Inline`]: what the message's content is made of
    /// at the end (`None` otherwise, and for a template without reasoning).
    inline: Option<Box<InlineState>>,
    /// The prompt is behind us: what is committed now is the model's.
    prompt_done: bool,
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
        Parser::with_machine(self, prefix, options, tools)
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

impl<'t, M: Machine<'t>> Parser<'t, M> {
    /// A parser running machine `m` (generated code's constructor; see
    /// [`Template::parser_with`] for the arguments).
    pub fn with_machine(
        m: M,
        prefix: &str,
        options: ParserOptions,
        tools: Option<&Value>,
    ) -> Result<Parser<'t, M>, ParseError> {
        let schemas = match tools {
            Some(tools) => Some(Template::schemas(tools)?),
            None => None,
        };
        Parser::new(m, prefix, schemas, options)
    }

    /// Reads `xml-inline` regions (those without `merge_duplicates`) and
    /// `kv-lines` regions as they stream: each parameter is reported in the call's
    /// [`Events::params`] as soon as no later text can change it, and the
    /// region's value is built from them at its close, which is then the
    /// same as parsing its whole text. For layers that stream tool-call
    /// arguments (the OpenAI chunks); off by default. Call it before the
    /// first [`Parser::feed`]: a region already open is parsed whole.
    pub fn stream_params(&mut self, on: bool) {
        self.params_on = on;
    }

    /// Whether regions the machine can build in its own types are built
    /// there (on by default; see [`TypedRegions`]). A layer that reads
    /// every close event's value and ends with the dict (the OpenAI
    /// chunks) turns it off: for it the typed value would only be turned
    /// back into the dict, its content copied, at each event and again at
    /// the end. Turning it off moves the values built so far into the
    /// message. The run-time machine builds none either way.
    pub fn typed_regions(&mut self, on: bool) {
        self.typed_on = on;
        if !on {
            self.spill_typed();
        }
    }

    fn new(
        m: M,
        prefix: &str,
        tools: Option<ToolSchemas>,
        options: ParserOptions,
    ) -> Result<Parser<'t, M>, ParseError> {
        let t = m.template();
        let mut p = Parser {
            m,
            t,
            tools: tools.filter(|s| !s.is_empty()),
            text: TextBuf::default(),
            pos: 0,
            current: t.implicit,
            opened: false,
            body: String::new(),
            body_start: 0,
            captures: Vec::new(),
            kept: Kept::default(),
            scan: StreamScan::default(),
            guards: GuardState::default(),
            stuck: false,
            quick: None,
            held: None,
            finalized: false,
            failed: None,
            idle_commits: 0,
            lag: false,
            lead: None,
            log: Log::default(),
            initial: Vec::new(),
            pending_utf8: Vec::new(),
            options,
            plain: false,
            anchor_missing: false,
            unclaimed_on: false,
            output_start: 0,
            params_on: false,
            typed_on: true,
            xml: None,
            xml_params: Vec::new(),
            xml_spare: None,
            inline: match options.reasoning_format {
                ReasoningFormat::Inline => InlineState::for_template(t),
                _ => None,
            },
            prompt_done: false,
        };
        p.scan.set_budget(options.budget);
        if !t.trackers.tables.is_empty() {
            p.guards.states = t.trackers.tables.iter().map(|tb| tb.start(None)).collect();
        }
        let found = match &t.anchor_finder {
            Some(f) => after_last_literal(f, prefix),
            None => truncate_past_last_anchor(&t.start_anchor, prefix)?,
        };
        // An empty prefix opts out of the anchor; any other prompt without
        // it means the template does not fit the prompt, and the reference
        // parses the whole prompt as output (the prompt's own examples
        // become calls): reported, or refused on request.
        p.anchor_missing = found.is_none() && !prefix.is_empty();
        if p.anchor_missing && options.require_anchor {
            return Err(ParseError {
                kind: ParseErrorKind::MissingAnchor,
                field: None,
                offset: 0,
                raw: prefix.to_owned(),
                message: "the template's start anchor does not occur in the prompt given as the prefix (the reference would parse the whole prompt as output)".into(),
            });
        }
        let truncated = found.unwrap_or(prefix);
        if !truncated.is_empty() {
            p.text.buf.push_str(truncated);
            p.track(0);
            p.with_buffer(|p, src| p.consume_prefix(src))?;
            let events = p.events(p.text.hay());
            p.initial = events.to_vec();
            p.log.raw.clear();
            p.kept.values.clear();
        }
        p.output_start = p.text.len();
        p.prompt_done = true;
        if p.inline.is_some() {
            p.inline_prompt_done();
        }
        p.unclaimed_on = t.implicit.is_none();
        let ws = p.watch_set();
        p.scan.reset(ws, p.pos);
        p.quick = p.quick_stop();
        Ok(p)
    }

    /// Sets the quick state for the parser's state (see
    /// [`Parser::quick_stop`]). A region that the quick path streams into
    /// starts with room for a few hundred bytes: its body would otherwise
    /// grow from nothing a piece at a time, a reallocation per doubling.
    #[inline]
    fn start_quick(&mut self) {
        self.quick = self.quick_stop();
        if self.quick.is_some() && self.body.capacity() < BODY_START {
            self.body.reserve(BODY_START - self.body.len());
        }
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
        let field = self.current?;
        let wi = self.watch_index();
        let ws = &self.t.watch_sets[wi];
        let specialised = self.m.has_quick(wi);
        let searched = self.m.searches(wi);
        let room = self.room();
        if let Some(set) = &ws.literals {
            return (searched || specialised || set.firsts.members.len() == 1).then_some(Quick {
                ws: wi as u16,
                field,
                room,
                stops: &set.firsts,
                loop_bytes: None,
                searched,
            });
        }
        (searched || specialised || ws.stops.members.len() == 1).then_some(Quick {
            ws: wi as u16,
            field,
            room,
            stops: &ws.stops,
            loop_bytes: ws
                .loops
                .iter()
                .any(Option::is_some)
                .then_some(&ws.loop_bytes),
            searched,
        })
    }

    /// What the region may still take before a limit needs checking (the
    /// slow path checks and reports it).
    fn room(&self) -> usize {
        let limits = &self.options.limits;
        limits
            .max_region
            .saturating_sub(self.body.len())
            .min(limits.max_message.saturating_sub(self.fed()))
    }

    /// The quick path of [`Parser::feed`] in a state the machine searches,
    /// for a piece that ends inside a delimiter at `at`: the text before it
    /// goes to the open region and the rest is held, as the scanner would
    /// have decided (`None`: the scanner decides, as for a hold too long
    /// for `max_held`, see [`Parser::hold_fits`]).
    ///
    /// A short hold stays the quick path's own ([`Held`]): the scanner is
    /// told only if the next piece is not one the quick path decides.
    #[inline(never)]
    fn feed_quick_hold<'a>(&'a mut self, text: &'a str, q: Quick<'t>, at: usize) -> Events<'a> {
        let field = q.field;
        if text.len() - at <= HELD_MAX {
            self.clear_lists();
            self.log.raw.clear();
            let start = self.pos;
            // (While the quick path lags, the byte before `pos` is the
            // body's last; else the text window has it.)
            let before = match at {
                0 if self.lag => self.body.as_bytes().last().copied(),
                0 => self.text.before,
                _ => Some(text.as_bytes()[at - 1]),
            };
            if at > 0 {
                push_short(&mut self.body, &text[..at]);
                self.log.raw.push(RawEvent::Chunk {
                    field,
                    start,
                    end: start + at,
                });
            }
            // The buffer is empty on the quick path (see `quick_stop`).
            push_short(&mut self.text.buf, &text[at..]);
            self.pos = start + at;
            self.lag = true;
            self.held = Some(Held {
                room: q.room - text.len(),
                before,
                read: text.len() - at,
            });
            if let Some(q) = &mut self.quick {
                q.room = 0;
            }
            return self.events(Hay {
                text,
                base: start,
                before: None,
            });
        }
        self.feed_quick_scanner_hold(text, field, at)
    }

    /// A piece of the quick path that ends inside a delimiter at `at`,
    /// held by the scanner: the text before it goes to the open region of
    /// `field`, and the scanner holds the rest as its own search would have
    /// (the hold of [`Parser::feed_quick_hold`] too long to be the quick
    /// path's own, or one in a state whose search of starts keeps the
    /// threads pending there, see [`Parser::quick_started`]).
    #[inline(never)]
    fn feed_quick_scanner_hold<'a>(
        &'a mut self,
        text: &'a str,
        field: u16,
        at: usize,
    ) -> Events<'a> {
        self.settle();
        self.clear_lists();
        self.log.raw.clear();
        let start = self.pos;
        let hold = start + at;
        if at > 0 {
            self.body.push_str(&text[..at]);
            self.log.raw.push(RawEvent::Chunk {
                field,
                start,
                end: hold,
            });
        }
        let before = match at {
            0 => self.text.before,
            _ => Some(text.as_bytes()[at - 1]),
        };
        self.pos = hold;
        self.scan.hold_literal(hold, text.len());
        self.text.restart(hold, before, &text[at..]);
        self.quick = None;
        self.events(Hay {
            text,
            base: start,
            before: None,
        })
    }

    /// [`Parser::feed`] for a piece of the quick path that its tests do
    /// not take: in a state the machine's search of starts decides, that
    /// search may still take it ([`Parser::quick_started`]); else the
    /// scanner decides. (Out of line, as the call of `feed_slow` it
    /// replaces was: the quick path's own code stays as it was.)
    #[inline(never)]
    fn feed_quick_missed<'a>(&'a mut self, text: &'a str) -> Result<Events<'a>, ParseError> {
        let Some(q) = self.quick else {
            return self.feed_slow(text);
        };
        // (A constant per state: `false` for the run-time machine.)
        if q.searched || !self.m.answers(q.ws as usize) {
            self.quick = None;
            return self.feed_slow(text);
        }
        match self.quick_started(text, q.ws as usize) {
            Some(None) => {
                if let Some(q) = &mut self.quick {
                    q.room -= text.len();
                }
                return Ok(self.feed_quick(text, q.field));
            }
            Some(Some(at)) if self.hold_fits(text, at) => {
                return Ok(self.feed_quick_scanner_hold(text, q.field, at));
            }
            _ => {}
        }
        self.quick = None;
        self.feed_slow(text)
    }

    /// The quick path's piece that its byte test does not take, in a state
    /// whose delimiters the machine's search of starts decides
    /// ([`Machine::answers`]; a piece of prose ending in a space that may
    /// begin `\s*<|im_end|>`): the scanner catches up, and that search
    /// decides the piece from the quick path's position, as the scanner's
    /// own call of it would. `Some(None)`: all of it is region text;
    /// `Some(Some(at))`: the text from `at` may begin a delimiter. `None`
    /// (a delimiter found, among others): the scanner decides, and its
    /// search continues the threads from where this one left them.
    #[inline]
    fn quick_started(&mut self, text: &str, ws: usize) -> Option<Option<usize>> {
        if text.is_empty() || self.xml.is_some() || self.plain {
            return None;
        }
        self.settle();
        if self.held.is_some() || !self.text.buf.is_empty() || self.text.base != self.pos {
            return None;
        }
        self.search_started(ws, text, false)
    }

    /// Whether [`Parser::feed_quick_hold`] may hold `text[at..]` (else the
    /// scanner decides: a hold too long for `max_held` is its error).
    fn hold_fits(&self, text: &str, at: usize) -> bool {
        text.len() - at <= self.options.limits.max_held
            && text.is_char_boundary(at)
            && self.xml.is_none()
            && !self.plain
    }

    /// The piece after a held partial delimiter, in a state the machine
    /// searches: when the held text and the piece together begin no
    /// delimiter, both go to the open region at once; when they end inside
    /// one (the next byte of `</think>` streamed a byte at a time), the text
    /// before it goes to the region and the rest stays held. Either way
    /// without the scanner. `None`: the scanner decides (a delimiter found,
    /// or a hold it must judge).
    #[inline(never)]
    fn after_hold_takes(&self, text: &str) -> Option<AfterHold> {
        let field = self.current?;
        let wi = self.watch_index();
        if !self.m.searches(wi)
            || text.is_empty()
            || self.failed.is_some()
            || self.finalized
            || self.stuck
            || self.plain
            || !self.opened
            || !self.t.scan_in_place
            || self.xml.is_some()
            || !self.pending_utf8.is_empty()
            || self.scan.literal_hold() != Some(self.pos)
            || self.pos < self.text.base
        {
            return None;
        }
        let held = &self.text.buf[self.pos - self.text.base..];
        // A hold is a cut literal or a short run before one; long runs of a
        // leading loop go to the scanner.
        const JOINT: usize = 128;
        if held.is_empty() || held.len() > JOINT / 4 {
            return None;
        }
        let limits = &self.options.limits;
        if text.len() > limits.max_message.saturating_sub(self.fed())
            || held.len() + text.len() > limits.max_region.saturating_sub(self.body.len())
        {
            return None;
        }
        // The held text and the start of the piece, searched together: a
        // delimiter that begins in the held text, or one cut by the end of
        // this window, is found or held by the search, and the scanner
        // decides it.
        let mut joint = [0u8; JOINT];
        let n = held.len();
        let mut k = text.len().min(JOINT - n);
        while !text.is_char_boundary(k) {
            k -= 1;
        }
        joint[..n].copy_from_slice(held.as_bytes());
        joint[n..n + k].copy_from_slice(&text.as_bytes()[..k]);
        match self.m.find_literal(wi, &joint[..n + k], false) {
            Some(LiteralHit::Nothing) => {}
            // The piece, all in the window, ends inside a delimiter: hold
            // from there if the hold is one the quick path may keep.
            Some(LiteralHit::Partial(at))
                if k == text.len()
                    && at < n + k
                    && n + k - at <= self.options.limits.max_held
                    // (A delimiter starts on a character.)
                    && !is_continuation(joint[at]) =>
            {
                return Some(AfterHold::Holds { field, at });
            }
            _ => return None,
        }
        if k < text.len()
            && self.m.find_literal(wi, text.as_bytes(), false) != Some(LiteralHit::Nothing)
        {
            return None;
        }
        Some(AfterHold::Takes(field))
    }

    /// Goes on from a held partial delimiter when the held text and `text`
    /// together still end inside one, from `at` (counted from the hold):
    /// the text before `at` goes to the open region of `field` and the rest
    /// is held, the state [`Parser::feed_quick_hold`] leaves (what
    /// [`Parser::after_hold_takes`] allowed).
    #[inline(never)]
    fn feed_hold_more<'a>(&'a mut self, text: &'a str, field: u16, at: usize) -> Events<'a> {
        let held_from = self.pos - self.text.base;
        let start = self.pos;
        let end = self.text.len() + text.len();
        let hold = start + at;
        self.clear_lists();
        self.log.raw.clear();
        // The held text and the piece, as one run of the message.
        self.text.buf.push_str(text);
        let mut src = None;
        let cut = held_from + at;
        if at > 0 {
            self.body.push_str(&self.text.buf[held_from..cut]);
            self.log.raw.push(RawEvent::Chunk {
                field,
                start,
                end: hold,
            });
            src = Some(at);
        }
        self.hold_at(cut, hold, end - start);
        self.quick = None;
        match src {
            // The chunk's text is the end of the region's body.
            Some(len) => {
                let body = &self.body[self.body.len() - len..];
                self.events(Hay {
                    text: body,
                    base: start,
                    before: None,
                })
            }
            None => self.events(Hay {
                text: "",
                base: start,
                before: None,
            }),
        }
    }

    /// Holds the text from `hold` (absolute; `cut` bytes into the buffer,
    /// which has the piece appended) as the scanner would, which read
    /// `read` bytes to decide it: the buffer starts at the hold from now
    /// on, and the byte before it is the one before the hold (lookbehinds
    /// read it).
    #[inline]
    fn hold_at(&mut self, cut: usize, hold: usize, read: usize) {
        if cut > 0 {
            self.text.before = Some(self.text.buf.as_bytes()[cut - 1]);
        }
        self.text.buf.drain(..cut);
        self.text.base = hold;
        self.pos = hold;
        self.scan.hold_literal(hold, read);
    }

    /// Takes the held text and `text` into the open region of `field`
    /// (what [`Parser::after_hold_takes`] allowed).
    #[inline(never)]
    fn feed_after_hold<'a>(&'a mut self, text: &'a str, field: u16) -> Events<'a> {
        let held_from = self.pos - self.text.base;
        let start = self.pos;
        let end = self.text.len() + text.len();
        self.clear_lists();
        self.body.push_str(&self.text.buf[held_from..]);
        self.body.push_str(text);
        self.log.raw.clear();
        self.log.raw.push(RawEvent::Chunk { field, start, end });
        self.scan.release_literal_hold(end, end - start);
        self.pos = end;
        self.text.buf.clear();
        self.text.base = end;
        self.text.before = text.as_bytes().last().copied();
        self.start_quick();
        // The chunk's text, held text and piece together, is the end of
        // the region's body.
        let src = &self.body[self.body.len() - (end - start)..];
        self.events(Hay {
            text: src,
            base: start,
            before: None,
        })
    }

    /// The piece after a held start, in a state whose delimiters all begin
    /// at known literals (a tool call's header streamed a token at a time):
    /// when the state's search, continuing the automaton threads pending at
    /// that start, holds the text there again, the piece is held with it,
    /// as the scanner would have decided, without the scanner's per-call
    /// work. Returns whether it did; `false` leaves the piece untouched for
    /// [`Parser::feed_slow`] (which then searches again: see
    /// [`StreamScan::hold_started`]).
    #[inline(never)]
    fn started_holds(&mut self, wi: usize, text: &str) -> bool {
        if self.scan.literal_hold() != Some(self.pos)
            || text.is_empty()
            || self.pos < self.text.base
            || !self.text.holds_after(self.pos)
            || self.failed.is_some()
            || self.finalized
            || self.stuck
            || self.plain
            || !self.t.scan_in_place
            || !self.pending_utf8.is_empty()
            || self.t.watch_sets[wi].literals.is_some()
        {
            return false;
        }
        // The limits the slow path checks (it reports them).
        let limits = &self.options.limits;
        if text.len() > limits.max_message.saturating_sub(self.fed())
            || self.text.len() - self.pos + text.len() > limits.max_held
        {
            return false;
        }
        self.hold_piece(wi, text, true)
    }

    /// Appends `text` to the held text and asks the scanner whether the
    /// state's search holds the two there again (the first piece after the
    /// hold: [`StreamScan::hold_started`], which tests the scanner's state;
    /// a later one: [`StreamScan::lead_held`]). If it does, the piece is
    /// kept and the state marked ([`Parser::lead`]); else it is taken off
    /// again. The text before the hold is not forgotten here, as each slow
    /// call does first: the position does not move while the text is
    /// held, so the buffer grows only by the held text (within `max_held`).
    #[inline(always)]
    fn hold_piece(&mut self, wi: usize, text: &str, first: bool) -> bool {
        let m = self.m;
        let from = self.text.len();
        self.text.buf.push_str(text);
        let at = self.pos - self.text.base;
        let bytes = &self.text.buf.as_bytes()[at..];
        let search = |bytes: &[u8], memo: &mut StartMemo, origin: usize| {
            m.held_started(wi, bytes, memo, origin)
        };
        let held = match first {
            true => self.scan.hold_started(bytes, self.pos, search),
            false => self.scan.lead_held(bytes, self.pos, search),
        };
        if !held {
            self.text.buf.truncate(from - self.text.base);
            return false;
        }
        // The searches of these states read no lookbehind, so the trackers
        // read the piece only once it is kept.
        self.track(from);
        self.log.raw.clear();
        self.clear_lists();
        self.lead = Some(wi as u16);
        true
    }

    /// [`Parser::started_holds`] for the piece after one it held (in state
    /// `wi`, see [`Parser::lead`]): the tests of the parser's and the
    /// scanner's state held then and nothing has changed them, so only
    /// those that read the piece or the work spent remain. `false` leaves
    /// the piece to [`Parser::feed_scanned`] (whose search goes on from
    /// where this one left the threads).
    #[inline]
    fn lead_holds(&mut self, wi: usize, text: &str) -> bool {
        debug_assert!(
            wi == self.watch_index()
                && self.scan.literal_hold() == Some(self.pos)
                && self.text.holds_after(self.pos)
                && self.failed.is_none()
                && !self.finalized
                && !self.stuck
                && !self.plain
                && self.quick.is_none()
                && self.held.is_none()
                && self.pending_utf8.is_empty()
        );
        let limits = &self.options.limits;
        if text.is_empty()
            || text.len() > limits.max_message.saturating_sub(self.fed())
            || self.text.len() - self.pos + text.len() > limits.max_held
        {
            return false;
        }
        self.hold_piece(wi, text, false)
    }

    /// [`Parser::after_hold_takes`] for a state whose delimiters the
    /// machine's search of starts decides ([`Machine::answers`]): the
    /// piece after a held start that no thread at that start is still
    /// reading (prose streamed a token at a time, each piece ending in a
    /// space that may begin `\s*<|im_end|>`) is decided by that search,
    /// continuing the threads kept at the hold, as the scanner's own call
    /// of it would decide: no delimiter begins in the held text and the
    /// piece (all of it goes to the open region), or one begins and is
    /// still cut by the piece's end (the text before it goes to the region
    /// and the rest stays held). `None`: the scanner decides (a delimiter
    /// found, the search declined, or a hold it must judge).
    #[inline(never)]
    fn started_after_hold(&mut self, wi: usize, text: &str) -> Option<AfterHold> {
        let field = self.current?;
        if !self.opened
            || self.xml.is_some()
            || self.scan.literal_hold() != Some(self.pos)
            || !self.text.holds_after(self.pos)
            || !self.started_may_decide(text)
        {
            return None;
        }
        let joint = self.text.len() - self.pos + text.len();
        if joint
            > self
                .options
                .limits
                .max_region
                .saturating_sub(self.body.len())
        {
            return None;
        }
        Some(match self.search_started(wi, text, true)? {
            None => AfterHold::Takes(field),
            Some(at) => AfterHold::Holds { field, at },
        })
    }

    /// A piece outside every region (a tool call's header and the text
    /// between calls in a template whose fields all open at delimiters),
    /// in a state whose delimiters the machine's search of starts decides
    /// ([`Machine::answers`]): that search decides it from the scanner's
    /// position, the text it holds there and the piece together,
    /// continuing the threads kept at a hold (and starting, at the same
    /// start, those of the delimiters not run yet, which
    /// [`Parser::started_holds`] does not), as the scanner's own call of it
    /// would. `Some(None)`: no delimiter begins in it; `Some(Some(at))`:
    /// one begins `at` bytes from the position and the piece ends inside
    /// it. `None`: the scanner decides (a delimiter found, the search
    /// declined, or a state this does not judge).
    #[inline(never)]
    fn outside_decides(&mut self, wi: usize, text: &str) -> Option<Option<usize>> {
        // (The caller tested that no region is open.)
        debug_assert!(self.current.is_none());
        if !self.started_may_decide(text) {
            return None;
        }
        let held = self.scan.literal_hold() == Some(self.pos);
        if !held && self.text.holds_after(self.pos) {
            return None;
        }
        self.search_started(wi, text, held)
    }

    /// What [`Parser::started_after_hold`] and [`Parser::outside_decides`]
    /// both need before they search: a piece short enough to judge
    /// ([`STARTED_PIECE`]), nothing that the slow path must report or
    /// handle (a failure, the end, a budget spent, a cut character, a limit
    /// on the message), and text scanned in place.
    fn started_may_decide(&self, text: &str) -> bool {
        !text.is_empty()
            && text.len() <= STARTED_PIECE
            && self.failed.is_none()
            && !self.finalized
            && !self.stuck
            && !self.plain
            && self.t.scan_in_place
            && self.pending_utf8.is_empty()
            && self.pos >= self.text.base
            && text.len() <= self.options.limits.max_message.saturating_sub(self.fed())
    }

    /// Runs the state's search of starts (`wi`) from the parser's position
    /// over the held text and `text` (`held`), or over `text` alone where
    /// it lies (nothing held), as the scanner's own call of it would
    /// ([`StreamScan::search_started`]). `Some(None)`: no delimiter begins
    /// there; `Some(Some(at))`: one begins `at` bytes from the position and
    /// is cut by the piece's end (a hold the limits allow). `None`: the
    /// scanner decides. The buffer is as it was afterwards.
    fn search_started(&mut self, wi: usize, text: &str, held: bool) -> Option<Option<usize>> {
        let m = self.m;
        let at = self.pos - self.text.base;
        let before = match at {
            0 => self.text.before,
            _ => Some(self.text.buf.as_bytes()[at - 1]),
        };
        let search = |bytes: &[u8], memo: &mut StartMemo, origin: usize| {
            m.find_started(wi, bytes, before, false, memo, origin)
        };
        let max_held = self.options.limits.max_held;
        if !held {
            let hit = self.scan.search_started(text.as_bytes(), self.pos, search);
            return decide_started(hit, text.as_bytes(), max_held);
        }
        // The held text and the piece, searched together where they lie;
        // the piece leaves the buffer again whatever the answer (the paths
        // that take it push it themselves).
        let from = self.text.buf.len();
        self.text.buf.push_str(text);
        let bytes = &self.text.buf.as_bytes()[at..];
        let hit = self.scan.search_started(bytes, self.pos, search);
        let decided = decide_started(hit, bytes, max_held);
        self.text.buf.truncate(from);
        decided
    }

    /// Takes a piece outside every region as [`Parser::outside_decides`]
    /// decided: the text before `hold` (counted from the position; all of
    /// it without one) is dropped, as the scanner drops text outside
    /// regions, and the rest is held.
    #[inline(never)]
    fn feed_outside<'a>(&'a mut self, text: &'a str, hold: Option<usize>) -> Events<'a> {
        let start = self.pos;
        let end = self.text.len() + text.len();
        if self.unclaimed_on {
            self.note_outside(text, hold.unwrap_or(end - start));
        }
        self.clear_lists();
        self.log.raw.clear();
        match hold {
            None => {
                self.scan.release_literal_hold(end, end - start);
                self.pos = end;
                self.text.buf.clear();
                self.text.base = end;
                self.text.before = text.as_bytes().last().copied();
            }
            Some(at) => {
                let cut = self.pos - self.text.base + at;
                self.text.buf.push_str(text);
                self.hold_at(cut, start + at, end - start);
            }
        }
        self.events(Hay {
            text: "",
            base: start,
            before: None,
        })
    }

    /// Records the first `len` bytes from the position (the held text, then
    /// `text`) as unclaimed: what [`Parser::feed_outside`] drops.
    #[cold]
    fn note_outside(&mut self, text: &str, len: usize) {
        // A hold begins a delimiter, so every cut here is a character
        // boundary; `get` keeps a wrong offset from panicking all the same.
        let from = self.pos.saturating_sub(self.text.base);
        let held = self.text.buf.get(from..).unwrap_or("");
        let mut dropped = String::with_capacity(len);
        dropped.push_str(held.get(..len.min(held.len())).unwrap_or(held));
        if len > held.len() {
            dropped.push_str(text.get(..len - held.len()).unwrap_or(text));
        }
        let offset = self.pos;
        self.note_unclaimed(offset, &dropped);
    }

    /// Empties this call's values and parameters before a quick path
    /// records its events. The lists are usually empty already: writing
    /// their lengths only when they are not keeps the stores away from the
    /// loads that make the `Events` (a 16-byte load over a fresh 8-byte
    /// store stalls the pipeline).
    #[inline(always)]
    fn clear_lists(&mut self) {
        if !self.kept.values.is_empty() {
            self.kept.values.clear();
        }
        if self.m.streams_params() && !self.log.params.is_empty() {
            self.log.params.clear();
        }
    }

    /// The quick path of [`Parser::feed`]: `text` holds no byte that can
    /// begin a delimiter, so it all goes to the open region.
    #[inline(always)]
    fn feed_quick<'a>(&'a mut self, text: &'a str, field: u16) -> Events<'a> {
        // The one event overwrites the last call's first (see
        // `clear_lists` for why lengths are written only when needed).
        self.clear_lists();
        let start = self.pos;
        let end = start + text.len();
        // One ASCII character, or four bytes (common streamed tokens), are
        // pushed without a call to `memcpy`. (Arms for two and three bytes
        // measured slower: the one-byte test no longer comes first.)
        match *text.as_bytes() {
            [b] if b.is_ascii() => self.body.push(b as char),
            [_, _, _, _] => self.body.push_str(&text[..4]),
            _ => self.body.push_str(text),
        }
        let chunk = RawEvent::Chunk { field, start, end };
        if let [only] = self.log.raw.as_mut_slice() {
            *only = chunk;
        } else {
            self.log.raw.clear();
            self.log.raw.push(chunk);
        }
        if self.m.streams_params() && self.xml.is_some() {
            self.follow_params();
        }
        self.pos = end;
        // The scanner and the text window catch up when the run of quick
        // pieces ends (`settle`): three fewer stores and a compare per piece.
        self.lag = true;
        self.events(Hay {
            text,
            base: start,
            before: None,
        })
    }

    /// Brings the scanner's frontier and the text window up to `pos` after
    /// a run of quick pieces, which only appended to the open region's body
    /// (so its last byte is the last byte fed). Every path other than the
    /// quick one calls this first.
    #[inline]
    fn settle(&mut self) {
        if self.lag {
            self.lag = false;
            self.scan.skip_to(self.pos);
            self.text.base = self.pos;
            self.text.before = self.body.as_bytes().last().copied();
            if let Some(h) = self.held.take() {
                // The held text is in the buffer already: the scanner
                // holds it as its own search would have.
                self.quick = None;
                self.text.before = h.before;
                self.scan.hold_literal(self.pos, h.read);
            }
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
        // (What `settle` will count.)
        let lagging = match self.lag {
            true => self.scan.unread(self.pos) + self.held.map_or(0, |h| h.read as u64),
            false => 0,
        };
        self.scan.bytes_read() + lagging
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
        &self.log.malformed
    }

    /// The values replaced so far, in order: each time a field that does
    /// not repeat received another region, whose value took the earlier
    /// one's place (the reference's semantics, which the message keeps). A
    /// model that writes two reasoning blocks, text after a tool call where
    /// content is the implicit field, or text past its end-of-turn marker
    /// with a template that does not take it, shows up here.
    pub fn replaced(&self) -> &[Replaced] {
        &self.log.replaced
    }

    /// The generation's text that no region claimed so far, in order
    /// (templates without an implicit field drop text outside regions; see
    /// [`Unclaimed`]). Whitespace between regions is listed too:
    /// [`Unclaimed::is_significant`] tells it apart.
    pub fn unclaimed(&self) -> &[Unclaimed] {
        &self.log.unclaimed
    }

    /// Records text `[offset, offset + text.len())` as claimed by no
    /// region, joined to the previous record when adjacent.
    pub(super) fn note_unclaimed(&mut self, offset: usize, text: &str) {
        if text.is_empty() {
            return;
        }
        if let Some(last) = self.log.unclaimed.last_mut()
            && last.offset + last.text.len() == offset
            && !last.after_end
        {
            last.text.push_str(text);
            return;
        }
        self.log.unclaimed.push(Unclaimed {
            offset,
            text: text.to_owned(),
            after_end: false,
        });
    }

    /// A close that may take the rest of the output (`…[\s\S]*`) matched
    /// `start..end`, to the end of the text: what follows its marker (the
    /// shortest part of the match the marker's own pattern takes) is
    /// recorded as text after the end of the turn.
    #[cold]
    pub(super) fn note_after_end(&mut self, src: Hay<'_>, delim: usize, start: usize, end: usize) {
        let Some(at) = start.checked_sub(src.base) else {
            return;
        };
        let marker_end = match self.t.end_marker(delim) {
            None => return,
            Some(crate::template::EndMarker::Literal(l)) => {
                if !src
                    .text
                    .get(at..)
                    .is_some_and(|t| t.starts_with(l.as_str()))
                {
                    return;
                }
                start + l.len()
            }
            Some(crate::template::EndMarker::Pattern(marker)) => {
                let Ok(attempt) = marker.match_at(src.text, at, true) else {
                    return;
                };
                let Some(caps) = attempt.captures else { return };
                src.base + caps.end()
            }
        };
        if marker_end < end && marker_end >= self.output_start {
            self.log.unclaimed.push(Unclaimed {
                offset: marker_end,
                text: src.slice(marker_end, end).to_owned(),
                after_end: true,
            });
        }
    }

    /// Whether the prompt given as the prefix (not empty) lacks the
    /// template's start anchor. The reference then parses the whole prompt
    /// as if the model had written it, so a template that does not fit the
    /// prompt (a prompt variant it does not know, another model's template)
    /// gives a message built from the prompt: this says so.
    /// [`ParserOptions::require_anchor`] makes it an error instead.
    pub fn anchor_missing(&self) -> bool {
        self.anchor_missing
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
        // And for the events of a call (as each slow call makes sure of).
        self.log.raw.reserve(16);
    }

    /// Feeds the next piece of the generation and returns the events it
    /// produced. The events borrow the parser and the piece until the next
    /// call.
    ///
    /// When the parser holds no undecided text, the piece is scanned where it
    /// lies and only region text is copied (into the region's body); text
    /// that might start a delimiter is kept until the next call decides it.
    #[inline]
    pub fn feed<'a>(&'a mut self, text: &'a str) -> Result<Events<'a>, ParseError> {
        let m = self.m;
        if let Some(q) = &mut self.quick
            && text.len() <= q.room
        {
            // (A constant `None` for the run-time machine: this goes.)
            if let &[b] = text.as_bytes()
                && let Some(true) = m.quick_takes_byte(q.ws as usize, b)
            {
                q.room -= 1;
                let field = q.field;
                return Ok(self.feed_quick(text, field));
            }
            if m.quick_takes(q.ws as usize, text.as_bytes())
                .unwrap_or_else(|| q.takes(text.as_bytes()))
            {
                q.room -= text.len();
                let field = q.field;
                return Ok(self.feed_quick(text, field));
            }
            let (field, q) = (q.field, *q);
            if q.searched {
                // A byte of the piece may begin a delimiter: the state's
                // own search decides it (no delimiter in it after all, or
                // only the start of one at its end).
                match self.m.find_literal(q.ws as usize, text.as_bytes(), false) {
                    Some(LiteralHit::Nothing) if !text.is_empty() => {
                        if let Some(q) = &mut self.quick {
                            q.room -= text.len();
                        }
                        return Ok(self.feed_quick(text, field));
                    }
                    Some(LiteralHit::Partial(at)) if self.hold_fits(text, at) => {
                        return Ok(self.feed_quick_hold(text, q, at));
                    }
                    _ => {}
                }
            }
        } else {
            return self.feed_unquick(text);
        }
        self.feed_quick_missed(text)
    }

    /// [`Parser::feed`] for a piece the quick state has no room for (or
    /// without one): a hold the quick path or the scanner knows of may
    /// still be decided by the machine's search, else the scanner runs.
    #[inline(never)]
    fn feed_unquick<'a>(&'a mut self, text: &'a str) -> Result<Events<'a>, ParseError> {
        if self.m.holds_started()
            && let Some(wi) = self.lead.take()
            && self.lead_holds(wi as usize, text)
        {
            return Ok(self.events(self.text.hay()));
        }
        if self.held.is_some() {
            return self.feed_held(text);
        }
        if self.quick.is_some() {
            // Room to a limit is used up: the slow path checks it.
            self.quick = None;
            return self.feed_slow(text);
        }
        self.feed_scanned(text)
    }

    /// [`Parser::feed_unquick`] when the quick path holds nothing itself.
    #[inline]
    fn feed_scanned<'a>(&'a mut self, text: &'a str) -> Result<Events<'a>, ParseError> {
        // (Both tests are constants for the run-time machine.)
        let wi = self.watch_index();
        if self.m.searches(wi) {
            match self.after_hold_takes(text) {
                Some(AfterHold::Takes(field)) => return Ok(self.feed_after_hold(text, field)),
                Some(AfterHold::Holds { field, at }) => {
                    return Ok(self.feed_hold_more(text, field, at));
                }
                None => {}
            }
        } else if self.m.answers(wi) {
            if self.started_holds(wi, text) {
                return Ok(self.events(self.text.hay()));
            }
            if self.current.is_none() {
                if let Some(hold) = self.outside_decides(wi, text) {
                    return Ok(self.feed_outside(text, hold));
                }
            } else if self.opened {
                match self.started_after_hold(wi, text) {
                    Some(AfterHold::Takes(field)) => return Ok(self.feed_after_hold(text, field)),
                    Some(AfterHold::Holds { field, at }) => {
                        return Ok(self.feed_hold_more(text, field, at));
                    }
                    None => {}
                }
            }
        }
        self.feed_slow(text)
    }

    /// [`Parser::feed`] while the quick path holds a partial delimiter
    /// ([`Held`]).
    #[inline(never)]
    fn feed_held<'a>(&'a mut self, text: &'a str) -> Result<Events<'a>, ParseError> {
        let (Some(h), Some(q)) = (self.held, self.quick) else {
            self.settle();
            return self.feed_scanned(text);
        };
        match self.held_step(h, q.ws, text) {
            HeldStep::Takes => Ok(self.feed_held_takes(h, q.field, text.len())),
            HeldStep::Holds(at) => Ok(self.feed_held_more(h, q.field, text.len(), at)),
            HeldStep::Scanner => {
                // The scanner is told of the hold, and decides as if the
                // quick path had not kept it.
                self.settle();
                self.feed_scanned(text)
            }
        }
    }

    /// Searches the held text and `text` together with the state's search,
    /// the way [`Parser::after_hold_takes`] does for a hold the scanner
    /// knows of. On [`HeldStep::Takes`] and [`HeldStep::Holds`] the piece
    /// is appended to the held text in the buffer; else the buffer is as
    /// it was.
    #[inline]
    fn held_step(&mut self, h: Held, ws: u16, text: &str) -> HeldStep {
        let n = self.text.buf.len();
        if text.is_empty() || text.len() > h.room || n + text.len() > HELD_MAX {
            return HeldStep::Scanner;
        }
        push_short(&mut self.text.buf, text);
        let joint = self.text.buf.as_bytes();
        match self.m.find_literal(ws as usize, joint, false) {
            Some(LiteralHit::Nothing) => HeldStep::Takes,
            Some(LiteralHit::Partial(at))
                if at < joint.len()
                    && joint.len() - at <= self.options.limits.max_held
                    // (A delimiter starts on a character.)
                    && !is_continuation(joint[at]) =>
            {
                HeldStep::Holds(at)
            }
            _ => {
                self.text.buf.truncate(n);
                HeldStep::Scanner
            }
        }
    }

    /// The held text and the last piece (`len` bytes), now in the buffer,
    /// go to the open region, and the quick state comes back.
    #[inline]
    fn feed_held_takes(&mut self, h: Held, field: u16, len: usize) -> Events<'_> {
        self.held = None;
        self.clear_lists();
        let start = self.pos;
        let taken = self.text.buf.len();
        let end = start + taken;
        push_short(&mut self.body, &self.text.buf);
        self.text.buf.clear();
        self.log.raw.clear();
        self.log.raw.push(RawEvent::Chunk { field, start, end });
        // What the scanner would have counted of the held text.
        self.scan.count_read(h.read);
        self.pos = end;
        if let Some(q) = &mut self.quick {
            q.room = h.room - len;
        }
        // The chunk's text is the end of the region's body (the body's
        // last byte is the last one fed, as `settle` expects).
        self.events(Hay {
            text: &self.body[self.body.len() - taken..],
            base: start,
            before: None,
        })
    }

    /// The held text and the last piece (`len` bytes), now in the buffer,
    /// end inside a delimiter at `at`: the text before it goes to the open
    /// region, and the rest stays held.
    #[inline]
    fn feed_held_more(&mut self, mut h: Held, field: u16, len: usize, at: usize) -> Events<'_> {
        self.clear_lists();
        self.log.raw.clear();
        let start = self.pos;
        h.room -= len;
        // (The scanner would have read the held text again, and the piece.)
        h.read += self.text.buf.len() - at;
        if at > 0 {
            push_short(&mut self.body, &self.text.buf[..at]);
            h.before = Some(self.text.buf.as_bytes()[at - 1]);
            self.text.buf.drain(..at);
            self.pos = start + at;
            self.log.raw.push(RawEvent::Chunk {
                field,
                start,
                end: start + at,
            });
        }
        self.held = Some(h);
        self.events(Hay {
            text: &self.body[self.body.len() - at..],
            base: start,
            before: None,
        })
    }

    #[inline(never)]
    fn feed_slow<'a>(&'a mut self, text: &'a str) -> Result<Events<'a>, ParseError> {
        self.begin_call()?;
        self.check_message(text.len(), || text.to_owned())?;
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
                if let Err(e) = self.check_limits(src) {
                    return Err(self.fail(e));
                }
                self.start_quick();
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
            self.start_quick();
            return Ok(self.events(src));
        }
        let from = self.text.len();
        self.text.buf.push_str(text);
        self.track(from);
        if let Err(e) = self.with_buffer(|p, src| p.process(src, false)) {
            return Err(self.fail(e));
        }
        self.start_quick();
        Ok(self.events(self.text.hay()))
    }

    /// Feeds raw bytes. A UTF-8 sequence split across calls is kept until its
    /// end arrives; bytes that are not UTF-8 are an error.
    pub fn feed_bytes(&mut self, bytes: &[u8]) -> Result<Events<'_>, ParseError> {
        self.quick = None;
        self.begin_call()?;
        self.check_message(bytes.len(), || String::from_utf8_lossy(bytes).into_owned())?;
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
        let message = self.end(true, true)?.into_map(self.t);
        Ok((message, self.events(self.text.hay())))
    }

    /// [`Parser::finalize`] with the message as the values of its fields,
    /// before the template's defaults are applied and empty values dropped
    /// ([`FieldValues::into_map`] does both), the values the machine built
    /// in its own types among them, as dicts. (A compiled template's typed
    /// message is built from [`Parser::finalize_typed`], which leaves those
    /// values in their types.)
    pub fn finalize_fields(&mut self) -> Result<(FieldValues, Events<'_>), ParseError> {
        let fields = self.end(true, true)?;
        Ok((fields, self.events(self.text.hay())))
    }

    /// [`Parser::finalize_fields`] for the machine's own types: the fields
    /// the machine builds typed ([`TypedRegions`]) are in the returned
    /// regions (their entries in the values are empty lists, in the dict's
    /// order), the rest in the values.
    pub fn finalize_typed(&mut self) -> Result<(FieldValues, M::Regions, Events<'_>), ParseError> {
        // (The last events' typed values are made by `end`, which moves
        // every event's value aside: the regions move out.)
        let fields = self.end(true, false)?;
        let regions = std::mem::take(&mut self.kept.regions);
        Ok((fields, regions, self.events(self.text.hay())))
    }

    /// [`Parser::finalize`] for a caller that does not read the last events:
    /// the values of regions that closed at the end are not copied for them
    /// (the message holds them), which halves the memory a long last region
    /// needs at the end.
    pub fn finalize_message(&mut self) -> Result<Map, ParseError> {
        let message = self.end(false, true)?.into_map(self.t);
        self.log.raw.clear();
        Ok(message)
    }

    /// Settles the end of the generation and moves the message's values
    /// out; with `spill`, the values the machine built typed among them.
    fn end(&mut self, keep_events: bool, spill: bool) -> Result<FieldValues, ParseError> {
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
            .enumerate()
            .filter(|&(i, f)| {
                !f.optional && !self.kept.output.contains(i) && !defaults.contains_key(&f.name)
            })
            .map(|(_, f)| f.name.clone())
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
        if spill {
            self.spill_typed();
        }
        // The last events must not point into the message or the machine's
        // types, which move out.
        if keep_events {
            self.detach(|_| true);
        }
        // The reference starts from a copy of the defaults and drops empty
        // values of other keys at the end; that is applied when the message
        // is made (`FieldValues::into_map`), or by a compiled template's
        // typed message.
        let mut output = std::mem::take(&mut self.kept.output);
        if self.inline.is_some() {
            self.inline_message(&mut output);
        }
        Ok(output)
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
        self.settle();
        if self.m.holds_started() {
            self.lead = None;
        }
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
        self.log.raw.clear();
        // A call that opens and closes regions logs a few events each: room
        // for 16 at once spares the doubling from 4 (two or three copies in
        // a short message's first call). A no-op from then on.
        self.log.raw.reserve(16);
        self.kept.values.clear();
        self.kept.cells.clear();
        self.log.params.clear();
        let keep = if self.t.needs_history {
            0
        } else {
            self.pos.saturating_sub(4)
        };
        self.text.compact(keep);
        self.trim_guards();
        Ok(())
    }

    /// Records `e`: later calls return it again, without its `raw` text,
    /// which this first return hands over (a copy could double the memory
    /// a limit error is about).
    fn fail(&mut self, e: ParseError) -> ParseError {
        self.failed = Some(Box::new(ParseError {
            kind: e.kind.clone(),
            field: e.field.clone(),
            offset: e.offset,
            raw: String::new(),
            message: e.message.clone(),
        }));
        e
    }

    #[inline]
    fn events<'a>(&'a self, src: Hay<'a>) -> Events<'a> {
        Events {
            log: &self.log,
            kept: &self.kept,
            src: src.text,
            src_base: src.base,
            t: self.t,
        }
    }

    fn watch_set(&self) -> &'t WatchSet {
        &self.t.watch_sets[self.watch_index()]
    }

    /// The current state: the index of the watch set that can end it.
    #[inline]
    fn watch_index(&self) -> usize {
        match self.current {
            Some(f) if Some(f) != self.t.implicit => f as usize,
            _ => self.t.fields.len(),
        }
    }

    // ----- lookbehind trackers (see crate::scan::guards) ---------------

    /// Runs the trackers over the text from `from` to the end.
    fn track(&mut self, from: usize) {
        let bytes = &self.text.buf.as_bytes()[from - self.text.base..];
        self.guards.track(&self.t.trackers.tables, from, bytes);
    }

    fn end_guards(&mut self) {
        self.guards.end(&self.t.trackers.tables);
    }

    fn trim_guards(&mut self) {
        self.guards.trim(self.pos);
    }

    fn process(&mut self, src: Hay<'_>, eos: bool) -> Result<(), ParseError> {
        self.process_scan(src, eos)?;
        self.check_limits(src)
    }

    fn check_limits(&mut self, src: Hay<'_>) -> Result<(), ParseError> {
        let limits = &self.options.limits;
        let held = src.end().saturating_sub(self.pos);
        if held > limits.max_held {
            let from = self.pos.max(src.base);
            let raw = src.slice(from, src.end()).to_owned();
            let message = format!(
                "{held} bytes of text may still begin a delimiter (limit max_held = {})",
                limits.max_held
            );
            return Err(self.limit_error("max_held", limits.max_held, self.pos, raw, message));
        }
        if self.body.len() > limits.max_region {
            let message = format!(
                "a region holds {} bytes (limit max_region = {})",
                self.body.len(),
                limits.max_region
            );
            // The parser fails here: the region's text moves into the error
            // rather than being copied (it may be hundreds of megabytes).
            let raw = std::mem::take(&mut self.body);
            return Err(self.limit_error(
                "max_region",
                limits.max_region,
                self.body_start,
                raw,
                message,
            ));
        }
        Ok(())
    }

    /// Model output read so far, in bytes.
    fn fed(&self) -> usize {
        self.text.len() - self.output_start + self.pending_utf8.len()
    }

    /// Refuses a piece of `len` bytes that would take the output past
    /// `max_message`. The piece is not read: the parser stays as it was (it
    /// can still be finalized), and the error's `raw` is the piece.
    fn check_message(&self, len: usize, raw: impl FnOnce() -> String) -> Result<(), ParseError> {
        let limit = self.options.limits.max_message;
        let fed = self.fed();
        if fed.saturating_add(len) <= limit {
            return Ok(());
        }
        let message = format!(
            "the output would reach {} bytes (limit max_message = {limit}); the piece was not read",
            fed.saturating_add(len)
        );
        let mut e = self.limit_error("max_message", limit, self.text.len(), raw(), message);
        e.field = None;
        Err(e)
    }

    /// The error for a limit that was reached: the text it concerns is kept
    /// in `raw`.
    fn limit_error(
        &self,
        name: &'static str,
        limit: usize,
        offset: usize,
        raw: String,
        message: String,
    ) -> ParseError {
        ParseError {
            kind: ParseErrorKind::Limit { name, limit },
            field: self.current.map(|f| self.t.fields[f as usize].name.clone()),
            offset,
            raw,
            message,
        }
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
            let wi = self.watch_index();
            let ws = &self.t.watch_sets[wi];
            let delims: &[Delimiter] = &self.t.delimiters;
            let m = self.m;
            let answered = m.answers(wi) && !self.scan.declined();
            let specialised = ws.literals.is_none()
                && !answered
                && m.advance(
                    wi,
                    &mut self.scan,
                    Advance {
                        ws,
                        delims,
                        hay: &src,
                        guards: &self.guards,
                        eos,
                    },
                );
            if !specialised {
                self.scan.advance_with(
                    ws,
                    delims,
                    IrAutomata { ws, delims },
                    &src,
                    &self.guards,
                    eos,
                    answered,
                    |bytes, before, eos, memo, origin| {
                        m.find_literal(wi, bytes, eos)
                            .or_else(|| m.find_started(wi, bytes, before, eos, memo, origin))
                    },
                );
            }
            let decision =
                match self
                    .scan
                    .decide(ws, delims, &src, eos, answered, |d, text, a, z| {
                        m.captures(d, text, a, z)
                    }) {
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
}

/// The quick path's test (see [`Parser::quick_stop`]).
#[derive(Clone, Copy, Debug)]
struct Quick<'t> {
    /// The watch set (parser state) the test is for.
    ws: u16,
    /// The open region's field.
    field: u16,
    /// Bytes the quick path may still take before `max_region` or
    /// `max_message` could be reached.
    room: usize,
    /// The bytes at which a watched delimiter can begin (one byte).
    stops: &'t ByteSet,
    /// With leading loops (`\s*<tool_call>`): their ASCII bytes. A piece
    /// that ends in one may begin a delimiter.
    loop_bytes: Option<&'t [bool; 128]>,
    /// The machine's search decides the state ([`Machine::searches`]):
    /// the piece is searched instead of tested byte by byte.
    searched: bool,
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
        // (`ByteSet::lacks`, the word-at-a-time test that compiled
        // parsers run with their stop bytes as constants, measured slower
        // here: 4-5% more instructions on reasoning-gpt-oss stream1 and
        // stream4, the set's size dispatched at run time.)
        self.stops.find(text).is_none()
    }
}

/// Appends `text` to `s`. The lengths of streamed tokens are copied
/// without a call to `memcpy` (within each arm the length is a constant, so
/// the copy is a load and a store): the quick path's holds move a few
/// bytes at a time, and the call cost more than the copy. (The quick path
/// itself tests only the lengths it meets most, see `feed_quick`: a test
/// per length there measured slower.)
#[inline(always)]
fn push_short(s: &mut String, text: &str) {
    // (Slicing at the length itself is on a character boundary: the
    // checks fold away.)
    match text.len() {
        1 => s.push_str(&text[..1]),
        2 => s.push_str(&text[..2]),
        3 => s.push_str(&text[..3]),
        4 => s.push_str(&text[..4]),
        5 => s.push_str(&text[..5]),
        6 => s.push_str(&text[..6]),
        7 => s.push_str(&text[..7]),
        8 => s.push_str(&text[..8]),
        _ => s.push_str(text),
    }
}

/// Whether `b` continues a UTF-8 sequence (is not where a character starts).
#[inline]
fn is_continuation(b: u8) -> bool {
    (b as i8) < -0x40
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
    fn region_values_do_not_keep_the_buffers_spare_room() {
        // A region's text is copied out of the body when short or when the
        // buffer has more room than text (made by `reserve`: the body keeps
        // it), and moved out when long in a buffer grown to it; either way
        // the value's capacity is about its text's length.
        let t = Template::from_json(
            r#"{"start_anchor": "<s>", "fields": {"r": {"open": "<r>", "close": "</r>"}, "c": {"close": "</s>"}}}"#,
        )
        .expect("valid template");
        let long = "x".repeat(super::message::COPY_OUT_MAX + 1);
        for (text, reserve) in [
            ("short", 1 << 20),
            (long.as_str(), 0),
            (long.as_str(), 1 << 20),
        ] {
            let mut p = t.parser("<s>").expect("parser");
            p.reserve(reserve);
            for piece in ["<r>", text, "</r>", "after", "</s>"] {
                p.feed(piece).expect("feeds");
            }
            let (message, _) = p.finalize().expect("finalizes");
            let Some(crate::Value::Str(r)) = message.get("r") else {
                panic!("no reasoning in {message:?}");
            };
            assert_eq!(r, text);
            assert!(
                r.capacity() < 2 * r.len() + 16,
                "{} bytes of room for {} of text",
                r.capacity(),
                r.len()
            );
            assert_eq!(message.get("c"), Some(&crate::Value::Str("after".into())));
        }
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
