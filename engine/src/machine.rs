//! The seam between the parser and code generated for one template.
//!
//! [`Parser`](crate::Parser) is generic over a [`Machine`]: the template it
//! runs, plus hooks through which a machine may answer the hot questions of
//! streaming with code of its own instead of the generic engine's
//! data-driven answer. The run-time machine is `&Template` itself and answers
//! none of them (every hook's provided body says "ask the engine").
//! `retort-codegen` writes, per template, a zero-sized machine whose hooks are
//! that template's states compiled in: for each parser state (watch set)
//! whose delimiters are literals, the literals as constants found with
//! `memchr` and compared inline, in the reference's priority order, with the
//! partial-match holdback for that state's literals only, with which the
//! parser also decides pieces there while nothing else is pending (a piece
//! with a delimiter's first byte but no delimiter, one ending inside a
//! delimiter, the piece after such a hold: [`Machine::searches`]); for each
//! state, the byte test of the quick path as a constant; for each state whose patterns
//! are a leading loop and literals, a search that decides it as a literal
//! state (see [`Machine::answers`]); for each state whose delimiters'
//! matches all begin at known literals, a search that runs one automaton
//! thread per start those literals allow ([`Machine::find_started`]); for
//! each other state (and one whose search declines), its automata as
//! constants, with which the scanner's thread loop is compiled for the
//! state ([`Machine::advance`]); for each delimiter with named groups whose
//! pattern allows it, a reader of a settled match's groups that runs
//! automata instead of the backtracking matcher ([`Machine::captures`]).
//! Through [`HasRegions`], a generated machine also builds the values of
//! tool-call regions in the template's generated structs instead of the
//! engine's transform dicts ([`TypedRegions`]).
//!
//! # WARNING
//!
//! This is not a stable API. Generated code implements it and checks the
//! version it was generated for (`__private::COMPAT_0_1`); anything else that
//! implements it must give, for every input, exactly what the provided
//! bodies give, or the parser stops reproducing the reference. The
//! differential tests (`tests/compiled.rs`, the compiled fuzz target, and
//! the machine property test) hold generated machines to that.

use crate::scan::stream::{Advance, StartMemo, StreamScan};
use crate::template::Template;
use crate::value::Value;
use std::fmt::Debug;

/// Where the first delimiter of a literal watch set lies in a text.
///
/// Literal watch sets (every delimiter a list of literal strings needing no
/// regex at commit) are decided position by position: at the first position
/// where some literal could begin, either the text ends inside a literal
/// (hold there), or the best complete literal there is the match (longest,
/// then opens before closes, then by field name, then by entry), or the scan
/// goes on at the next position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LiteralHit {
    /// Watch entry `entry` matches `len` bytes at `at`.
    Found {
        /// Offset of the match in the searched bytes.
        at: usize,
        /// The match's length in bytes.
        len: usize,
        /// The index of the watch entry (in the watch set) it belongs to.
        entry: usize,
    },
    /// The text ends at `at` inside a literal: what follows decides.
    Partial(usize),
    /// No literal begins in the text.
    Nothing,
}

/// A template as the parser runs it: the IR and, for compiled templates,
/// code specialised to it. See the module documentation.
pub trait Machine<'t>: Copy + Debug + HasRegions {
    /// The template's IR.
    fn template(self) -> &'t Template;

    /// Searches `bytes` for the literals of watch set `ws` (an index into
    /// the template's watch sets, which holds only literals); `eos` says
    /// that no text follows. `None`: no specialised search for this watch
    /// set, the engine searches from the IR.
    #[inline(always)]
    fn find_literal(self, ws: usize, bytes: &[u8], eos: bool) -> Option<LiteralHit> {
        let _ = (ws, bytes, eos);
        None
    }

    /// Whether [`Machine::find_literal`] (or [`Machine::find_started`])
    /// answers for watch set `ws` although its delimiters are not all
    /// literals: a state whose patterns are a leading loop and literals
    /// (`\s*<tool_call>`, `\s*(?:<|im_end|>|<|endoftext|>)`) beside plain
    /// literals, decided as a literal state is, with a match's start moved
    /// back over the run of loop characters before its literal; or a state
    /// whose matches all begin at known literals. The scanner then runs no
    /// automaton threads in that state (until `find_started` declines), and
    /// the search must answer with exactly the decision the threads would
    /// reach.
    #[inline(always)]
    fn answers(self, ws: usize) -> bool {
        let _ = ws;
        false
    }

    /// Searches watch set `ws`, a state [`Machine::answers`] for whose
    /// delimiters' matches all begin at known literals, or at the start of
    /// a run of one loop's characters just before one (a tool call's
    /// header `<|channel|>commentary to=functions.NAME ...<|message|>`
    /// with a named group and loops after its literal): at each position
    /// where a match can begin, in order, the thread the scanner would
    /// start there is run alone (`retort_engine::scan::stream::StartMemo::run`),
    /// and the first position where one settles on a match, or one is
    /// still pending, decides as the threads would. `before` is the byte
    /// before `bytes[0]` (automata start after it). `None`: the search
    /// declines, because it would read too much text again (a match still
    /// pending far back, or starts whose runs overlap); the scanner's
    /// automaton threads then decide the state from where it stands.
    /// `memo` keeps the threads pending at a hold from one piece to the
    /// next; `origin` is the absolute offset of `bytes[0]`.
    #[inline(always)]
    fn find_started(
        self,
        ws: usize,
        bytes: &[u8],
        before: Option<u8>,
        eos: bool,
        memo: &mut StartMemo,
        origin: usize,
    ) -> Option<LiteralHit> {
        let _ = (ws, bytes, before, eos, memo, origin);
        None
    }

    /// For a state [`Machine::find_started`] searches: whether that search,
    /// over `bytes` (the text it held at `origin` and the next piece, not
    /// the end of the text), would hold them there again at once, because
    /// a thread it kept pending at `origin` (in `memo`) is pending still.
    /// The parser then holds the piece without the scanner (see
    /// `Parser::feed`). `false`: anything else, or no such search; the
    /// scanner decides, and `find_started` continues from `memo`.
    #[inline(always)]
    fn held_started(self, ws: usize, bytes: &[u8], memo: &mut StartMemo, origin: usize) -> bool {
        let _ = (ws, bytes, memo, origin);
        false
    }

    /// Whether [`Machine::held_started`] answers for any state: a constant,
    /// so that a parser whose machine holds no start (the run-time one)
    /// keeps no trace of the last held piece (`Parser::lead`).
    #[inline(always)]
    fn holds_started(self) -> bool {
        false
    }

    /// Whether [`Machine::find_literal`] answers for watch set `ws` (a
    /// literal state, or one [`Machine::answers`] for). The parser then
    /// resolves pieces there with that search alone while nothing else is
    /// pending: a piece in which it finds no delimiter is region text
    /// whatever bytes it holds, one ending inside a delimiter is held from
    /// there, and the next piece is searched together with the held text
    /// (see `Parser::feed`). The run-time machine answers `false` and
    /// leaves such pieces to the scanner.
    #[inline(always)]
    fn searches(self, ws: usize) -> bool {
        let _ = ws;
        false
    }

    /// Whether any region of the template can stream its parameters
    /// (`xml-inline` or `kv-lines` content, read as it streams with
    /// `Parser::stream_params`). A generated machine answers with a
    /// constant, so that the quick path of a template without such regions
    /// tests nothing for them; the run-time machine answers `true` (the
    /// parser then looks at its state).
    #[inline(always)]
    fn streams_params(self) -> bool {
        true
    }

    /// Whether [`Machine::quick_takes`] answers for watch set `ws`: then
    /// the quick path is open in that state however many bytes may begin
    /// its delimiters (the engine's own test takes one byte only).
    #[inline(always)]
    fn has_quick(self, ws: usize) -> bool {
        let _ = ws;
        false
    }

    /// The quick path's test for watch set `ws` (see
    /// `Parser::feed`): whether `text` — a piece fed while everything before
    /// it is decided — holds no byte at which a delimiter of the watch set
    /// may begin and does not end inside a delimiter's leading loop, so
    /// that all of it is text of the open region. `None`: no specialised
    /// test, the engine tests from the IR.
    #[inline(always)]
    fn quick_takes(self, ws: usize, text: &[u8]) -> Option<bool> {
        let _ = (ws, text);
        None
    }

    /// [`Machine::quick_takes`] for a piece of one byte, `b` (a streamed
    /// character, the commonest piece): whether it is text of the open
    /// region. A separate entry so that the parser tests the piece's
    /// length once, not again inside the general test and again when it
    /// appends the byte. `None`: no specialised test.
    #[inline(always)]
    fn quick_takes_byte(self, ws: usize, b: u8) -> Option<bool> {
        let _ = (ws, b);
        None
    }

    /// Runs the scanner over watch set `ws`, a state with automaton
    /// delimiters (neither a literal state nor one [`Machine::answers`]
    /// for), with automata compiled for that state (see
    /// [`crate::scan::stream::Automata`]): the scanner's own loop,
    /// specialised. `false`: nothing compiled for `ws`, the engine runs the
    /// loop over the IR.
    #[inline(always)]
    fn advance(self, ws: usize, scan: &mut StreamScan, args: Advance<'_>) -> bool {
        let _ = (ws, scan, args);
        false
    }

    /// The named groups, as (name, text) in the order of the regex's
    /// `group_names`, of delimiter `delim`'s match at `hay[start..]`, which
    /// the scanner's automata settled as `hay[start..end]` (for a pattern
    /// with a trailing lookahead that end is not the match's: a machine
    /// answers `None` for those). `None`: the machine cannot tell, the
    /// backtracking matcher answers (see `retort_engine::scan::captures`).
    #[inline(always)]
    fn captures(
        self,
        delim: usize,
        hay: &str,
        start: usize,
        end: usize,
    ) -> Option<Vec<(String, String)>> {
        let _ = (delim, hay, start, end);
        None
    }
}

/// The run-time machine: the template's data, no specialised code.
impl<'t> Machine<'t> for &'t Template {
    #[inline(always)]
    fn template(self) -> &'t Template {
        self
    }
}

/// Where a machine's parser keeps the values of regions the machine builds
/// in its own types.
///
/// A trait of its own, without the template's lifetime: the parser names
/// the type in a field, and a projection through `Machine<'t>` would tie
/// the parser's auto traits to that lifetime (an `async` block holding a
/// run-time parser would no longer be `Send`).
pub trait HasRegions {
    /// The values' home (see [`TypedRegions`]); [`NoRegions`] for a
    /// machine that builds none.
    type Regions: TypedRegions;
}

/// The run-time machine builds no region in types of its own.
impl HasRegions for &Template {
    type Regions = NoRegions;
}

/// The values of closed regions that a compiled template builds straight
/// into its generated types (a tool call's JSON into its `ToolCalls`
/// struct), instead of the engine building the transform's dict for the
/// typed message to take apart at `finalize`.
///
/// The parser asks for it only for a field that [`TypedRegions::takes`],
/// that `repeats` without `join`, has no default, and only when no
/// `tools=` coercion applies and the parser's typed regions are on
/// ([`Parser::typed_regions`](crate::Parser::typed_regions)); the message then keeps an empty list in the
/// field's place (so that the dict's order and the required-field check
/// are as before) and the values live here, in order. A region event's
/// value is made from the typed value when someone reads it
/// ([`RegionValues::value`]).
///
/// Not a stable API (see the module documentation): generated code
/// implements it, and for every input the values it builds must be the
/// ones the engine's transform builds (`value` must give exactly the
/// transform's dict, key order included), or decline (`close` hands the
/// parsed value back and the engine's transform runs).
pub trait TypedRegions: RegionValues + Clone + Debug + Default + Send + Sync {
    /// Whether regions of field `f` are built here (a constant per field,
    /// so that the test folds away).
    fn takes(f: usize) -> bool;

    /// Builds the value of a closed region of field `f` from what its
    /// content parser made of it and the region's named groups (a later
    /// group of a name wins, as in the reference's scope dict). Returns the
    /// value's index among the field's values, or `parsed` back when this
    /// region needs the engine's transform (a placeholder whose group did
    /// not take part, a content value of another shape).
    ///
    /// A `transform_each` field (one that does not repeat) holds one
    /// region's list: a region's elements replace the field's values, the
    /// index is 0, and `value(f, _)` is the whole list.
    ///
    /// A value built here may move a group's text out of `captures` (the
    /// region's groups are not read once it is closed); one handed back
    /// leaves them as they were.
    fn close(
        &mut self,
        f: usize,
        parsed: Value,
        captures: &mut [(String, String)],
    ) -> Result<usize, Value>;

    /// [`TypedRegions::close`] for a region whose content parser is plain
    /// JSON ([`crate::content::ContentSpec::plain_json`]), from the
    /// region's text: a builder that reads only entries of the content's
    /// object (`{content.name}`, `{content.arguments}`) parses them
    /// without building the object around them (with the JSON nesting
    /// limit `json_depth`). `None`: nothing was built and nothing moved
    /// (no such builder, a text that is not an object, an entry or group
    /// missing); the engine then parses the content and calls `close`.
    #[inline(always)]
    fn close_json(
        &mut self,
        f: usize,
        text: &str,
        json_depth: usize,
        captures: &mut [(String, String)],
    ) -> Option<usize> {
        let _ = (f, text, json_depth, captures);
        None
    }

    /// How many values field `f` holds here.
    fn count(&self, f: usize) -> usize;

    /// Forgets field `f`'s values (the engine's transform built the
    /// field's value, which replaces them).
    fn clear(&mut self, f: usize);

    /// Moves field `f`'s values out as run-time values, in order.
    fn spill(&mut self, f: usize) -> Vec<Value>;
}

/// The run-time form of values kept in a compiled template's types: what a
/// region event borrows.
pub trait RegionValues {
    /// Value `j` of field `f` as the engine's transform would have built
    /// it (`Null` if there is none).
    fn value(&self, f: usize, j: usize) -> Value;
}

/// The regions of a machine that builds none in its own types.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoRegions;

impl RegionValues for NoRegions {
    fn value(&self, _: usize, _: usize) -> Value {
        Value::Null
    }
}

impl TypedRegions for NoRegions {
    #[inline(always)]
    fn takes(_: usize) -> bool {
        false
    }

    fn close(
        &mut self,
        _: usize,
        parsed: Value,
        _: &mut [(String, String)],
    ) -> Result<usize, Value> {
        Err(parsed)
    }

    fn count(&self, _: usize) -> usize {
        0
    }

    fn clear(&mut self, _: usize) {}

    fn spill(&mut self, _: usize) -> Vec<Value> {
        Vec::new()
    }
}
