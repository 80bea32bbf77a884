//! The streaming scanner: finds the next delimiter to commit in a growing
//! text, reading every byte once per watch set.
//!
//! The question it answers is the reference's, asked of the text the model
//! will eventually have written: among the watched delimiters, which has the
//! leftmost complete match (longest on ties, opens before closes, then by
//! field name)? Before the text is complete it may not know yet; it then says
//! how much text is certainly not part of any delimiter (the *hold* point).
//!
//! Each automaton delimiter runs *threads*: one per start position and branch,
//! each a DFA state plus the last match end it saw. A thread ends when its
//! state says no further match is possible (or when a match is certain and
//! cannot grow); two threads of one branch in one state share their future, so
//! only the earlier is kept (see `dedup`). The work per byte is bounded by
//! the automata, not by the text. Where nothing can start, `memchr` skips.
//!
//! Delimiters on the backtracking path are tried at each start position in
//! turn; a start whose attempt did not touch the end of the text is settled
//! for good, so only undecided starts are tried again when text arrives.

use crate::machine::LiteralHit;
use crate::pyre::MatchError;
use crate::scan::delimiter::{Branch, Delimiter, DelimiterSource, Matcher};
use crate::scan::table::{CERTAIN, DEAD, DfaTable, FUT, LATER, MATCH};

/// Whether a watched delimiter opens or closes its field's region.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// The delimiter opens the field's region.
    Open = 0,
    /// The delimiter closes the field's region.
    Close = 1,
}

/// One delimiter being watched for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Watch {
    /// Index of the delimiter in the template.
    pub delim: u16,
    /// Open or close.
    pub kind: Kind,
    /// Index of the field.
    pub field: u16,
    /// Rank of the field's name in sorted order (the reference breaks the last
    /// tie by name).
    pub name_rank: u16,
}

/// The delimiters watched in one parser state, with what the scanner needs
/// to skip text quickly.
#[derive(Clone, Debug)]
pub struct WatchSet {
    /// What is watched, in the reference's order.
    pub entries: Vec<Watch>,
    /// Bytes at which the scanner must stop while no thread is alive: the
    /// first bytes of the watched delimiters, less the bytes of their
    /// [`LeadLoop`]s.
    pub stops: ByteSet,
    /// Per entry, the delimiter's leading loop, if it has one.
    pub loops: Vec<Option<LeadLoop>>,
    /// The ASCII bytes of all leading loops.
    pub loop_bytes: [bool; 128],
    /// Set when every watched delimiter is a list of literals (the close of
    /// most regions, the opens of many templates): the scanner then compares
    /// the literals where their first bytes occur instead of running
    /// automaton threads.
    pub literals: Option<LiteralSet>,
    /// Per byte, the entries (of the first 64) whose delimiters may begin
    /// with it, as bits: the scanner visits only those and the entries with
    /// threads.
    pub begins: Box<[u64; 256]>,
    /// Whether some watched delimiter is on the backtracking path.
    pub backtracks: bool,
}

/// A delimiter that begins with a repeated class of characters, such as
/// `\s*<tool_call>`.
///
/// A thread that has read only characters of the class sits in `state`,
/// stays there on more of them, and dies on any character that can neither
/// continue the loop nor begin the delimiter. So a run of such characters
/// needs no thread until a byte that can continue it arrives: the scanner
/// skips the run and then starts one thread at the run's beginning, in
/// `state`, which is the thread that reading the run byte by byte would
/// have left (later starts in the run reach the same state and are dropped
/// as duplicates).
#[derive(Clone, Debug)]
pub struct LeadLoop {
    /// ASCII bytes of the loop.
    pub class: [bool; 128],
    /// `leads[b - 0xC0]`: every character beginning with byte `b` either
    /// continues the loop or ends the thread (so `b` needs no stop); which
    /// one, the automaton tells.
    pub leads: [bool; 64],
    /// The state a thread is in after reading characters of the loop only.
    pub state: u32,
}

impl LeadLoop {
    /// The leading loop of `d`, if it has one the scanner can use: one
    /// branch, no guard, a start state independent of the previous byte.
    pub fn of(d: &Delimiter) -> Option<LeadLoop> {
        let Matcher::Dfa(branches) = &d.matcher else {
            return None;
        };
        let [br] = &branches[..] else {
            return None;
        };
        let t = &br.table;
        if br.guard.is_some() || !t.context_free() {
            return None;
        }
        let s = t.start_text;
        let looping = |b: u8| {
            let q = t.next(s, b);
            let f = t.flags(q);
            (q != DEAD && f & MATCH == 0 && f & FUT != 0 && f & CERTAIN == 0 && t.next(q, b) == q)
                .then_some(q)
        };
        let state = (0..128u8).find_map(looping)?;
        let mut class = [false; 128];
        for b in 0..128u8 {
            class[b as usize] = looping(b) == Some(state);
        }
        // Outside the loop and the delimiter's first bytes, the thread must
        // die without a match, as a fresh thread would not even start.
        let dies_elsewhere = (0..=255u8).all(|c| {
            (c < 128 && class[c as usize]) || d.first_bytes[c as usize] || t.next(state, c) == DEAD
        });
        if !dies_elsewhere {
            return None;
        }
        // Multi-byte characters: when the loop state is the start state, a
        // lead byte needs no stop if every character it begins leads back
        // to the loop state or to the dead state, with no match on the way.
        let mut leads = [false; 64];
        if state == s {
            for lead in 0xC2..=0xF4u8 {
                let width = if lead < 0xE0 {
                    2
                } else if lead < 0xF0 {
                    3
                } else {
                    4
                };
                let mut states = vec![t.next(state, lead)];
                let mut ok = true;
                for _ in 1..width {
                    let mut next = Vec::new();
                    for &x in &states {
                        if x == DEAD {
                            continue;
                        }
                        if t.flags(x) & MATCH != 0 {
                            ok = false;
                        }
                        for c in 0x80..=0xBFu8 {
                            let y = t.next(x, c);
                            if !next.contains(&y) {
                                next.push(y);
                            }
                        }
                    }
                    states = next;
                }
                ok &= states
                    .iter()
                    .all(|&x| x == DEAD || (x == state && t.flags(x) & MATCH == 0));
                leads[(lead - 0xC0) as usize] = ok;
            }
        }
        Some(LeadLoop {
            class,
            leads,
            state,
        })
    }

    /// Whether byte `b` needs no stop of the scanner for this delimiter.
    #[inline(always)]
    pub fn covers(&self, b: u8) -> bool {
        if b < 128 {
            self.class[b as usize]
        } else {
            b >= 0xC0 && self.leads[(b - 0xC0) as usize]
        }
    }

    /// The start of the run of loop characters that ends at `end`, not
    /// looking before `from`.
    pub fn run_start(&self, t: &DfaTable, bytes: &[u8], from: usize, end: usize) -> usize {
        let mut r = end;
        while r > from {
            let b = bytes[r - 1];
            if b < 128 {
                if !self.class[b as usize] {
                    break;
                }
                r -= 1;
                continue;
            }
            // A multi-byte character: find its first byte.
            let mut c = r - 1;
            while c > from && bytes[c] & 0xC0 == 0x80 {
                c -= 1;
            }
            let lead = bytes[c];
            if lead < 0xC0 || !self.leads[(lead - 0xC0) as usize] {
                break;
            }
            let q = bytes[c..r].iter().fold(self.state, |q, &b| t.next(q, b));
            if q != self.state {
                break;
            }
            r = c;
        }
        r
    }
}

/// Whether `hay` holds none of the bytes of `set`: a streamed piece's
/// quick test. A piece of a few bytes (a token) is read a word at a time,
/// each of `set`'s bytes tested in all its bytes at once (`memchr`'s set-up
/// does not repay itself below 16 bytes); longer ones go to `memchr`.
#[inline(always)]
pub fn lacks_bytes<const N: usize>(hay: &[u8], set: [u8; N]) -> bool {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let n = hay.len();
    // Whether some byte of `w` is `b`: `w ^ b…b` has a zero byte.
    let holds = |w: u64, b: u8| {
        let x = w ^ (LO * u64::from(b));
        x.wrapping_sub(LO) & !x & HI != 0
    };
    let word = |at: usize| u64::from_le_bytes(hay[at..at + 8].try_into().unwrap_or([0; 8]));
    let half = |at: usize| {
        u64::from(u32::from_le_bytes(
            hay[at..at + 4].try_into().unwrap_or([0; 4]),
        ))
    };
    let bytewise = || !hay.iter().any(|b| set.contains(b));
    match n {
        0..4 => bytewise(),
        // The first and last four bytes (overlapping below eight) in one
        // word.
        4..8 => {
            let w = half(0) | half(n - 4) << 32;
            !set.iter().any(|&b| holds(w, b))
        }
        8..=16 => {
            let (a, z) = (word(0), word(n - 8));
            !set.iter().any(|&b| holds(a, b) || holds(z, b))
        }
        _ => match set.as_slice() {
            [a] => memchr::memchr(*a, hay).is_none(),
            [a, b] => memchr::memchr2(*a, *b, hay).is_none(),
            [a, b, c] => memchr::memchr3(*a, *b, *c, hay).is_none(),
            _ => bytewise(),
        },
    }
}

/// A set of bytes to search for: `memchr` when it has at most three, a
/// table otherwise.
#[derive(Clone, Debug)]
pub struct ByteSet {
    /// Membership, per byte.
    pub table: [bool; 256],
    /// The members, in order.
    pub members: Vec<u8>,
}

impl ByteSet {
    /// The set of the bytes marked in `table`.
    pub fn new(table: [bool; 256]) -> ByteSet {
        let members = (0..=255u8).filter(|&b| table[b as usize]).collect();
        ByteSet { table, members }
    }

    /// The first offset in `hay` whose byte is in the set.
    #[inline]
    pub fn find(&self, hay: &[u8]) -> Option<usize> {
        match self.members.as_slice() {
            [] => None,
            // A streamed piece of a few bytes does not repay `memchr`'s
            // set-up.
            [a] if hay.len() < 16 => hay.iter().position(|b| b == a),
            [a] => memchr::memchr(*a, hay),
            [a, b] => memchr::memchr2(*a, *b, hay),
            [a, b, c] => memchr::memchr3(*a, *b, *c, hay),
            _ => hay.iter().position(|&b| self.table[b as usize]),
        }
    }
}

/// A watch set made of literals only, matched by comparison.
#[derive(Clone, Debug)]
pub struct LiteralSet {
    /// Every literal of every entry, with the entry's index.
    pub lits: Vec<(usize, Box<[u8]>)>,
    /// The first bytes of the literals.
    pub firsts: ByteSet,
    /// With a single literal, its `memmem` searcher (for long texts).
    pub finder: Option<memchr::memmem::Finder<'static>>,
}

impl LiteralSet {
    /// The set for `entries`, if every delimiter is literals that need no
    /// regex at commit.
    pub fn new(entries: &[Watch], delims: &[Delimiter]) -> Option<LiteralSet> {
        if entries.is_empty() {
            return None;
        }
        let mut lits: Vec<(usize, Box<[u8]>)> = Vec::new();
        for (k, w) in entries.iter().enumerate() {
            let d = &delims[w.delim as usize];
            match (&d.source, &d.matcher) {
                // Literals have no captures, no lookaround and no context:
                // finding them is all there is to do.
                (DelimiterSource::Literals(list), Matcher::Dfa(_))
                    if !d.needs_regex_at_commit && list.iter().all(|l| !l.is_empty()) =>
                {
                    lits.extend(list.iter().map(|l| (k, Box::from(l.as_bytes()))));
                }
                _ => return None,
            }
        }
        let mut first_table = [false; 256];
        for (_, l) in &lits {
            let l: &[u8] = l;
            first_table[l[0] as usize] = true;
        }
        let firsts = ByteSet::new(first_table);
        let finder = match lits.as_slice() {
            [(_, l)] => Some(memchr::memmem::Finder::new(l).into_owned()),
            _ => None,
        };
        Some(LiteralSet {
            lits,
            firsts,
            finder,
        })
    }

    /// The first literal of the watch set `ws` (whose literals these are)
    /// in `bytes`: the engine's search, from the IR (generated machines
    /// compile the same decision into code; see [`crate::machine`]).
    pub fn search(&self, ws: &WatchSet, bytes: &[u8], eos: bool) -> LiteralHit {
        let mut i = 0;
        // `memmem` pays a set-up cost that a streamed piece of a few bytes
        // does not repay; it is used on long texts only.
        if let Some(f) = &self.finder
            && bytes.len() >= 64
        {
            match f.find(bytes) {
                Some(at) => i = at,
                None => i = bytes.len().saturating_sub(f.needle().len() - 1),
            }
        }
        while let Some(at) = self.find_first(bytes, i) {
            let tail = &bytes[at..];
            let mut partial = false;
            // (length, kind, name rank, entry): the reference's order.
            let mut best: Option<(usize, Kind, u16, usize)> = None;
            for (k, lit) in &self.lits {
                let lit: &[u8] = lit;
                if tail.len() >= lit.len() {
                    if tail.starts_with(lit) {
                        let w = ws.entries[*k];
                        let key = (lit.len(), w.kind, w.name_rank, *k);
                        let better = best.is_none_or(|b| {
                            (usize::MAX - key.0, key.1, key.2, key.3)
                                < (usize::MAX - b.0, b.1, b.2, b.3)
                        });
                        if better {
                            best = Some(key);
                        }
                    }
                } else if !eos && lit.starts_with(tail) {
                    partial = true;
                }
            }
            if partial {
                return LiteralHit::Partial(at);
            }
            if let Some((len, _, _, entry)) = best {
                return LiteralHit::Found { at, len, entry };
            }
            i = at + 1;
        }
        LiteralHit::Nothing
    }

    /// The first offset at or after `from` in `text` where a literal may
    /// begin.
    #[inline]
    pub fn find_first(&self, text: &[u8], from: usize) -> Option<usize> {
        let found = self.firsts.find(&text[from..]);
        found.map(|i| from + i)
    }
}

impl WatchSet {
    /// Builds a watch set.
    pub fn new(entries: Vec<Watch>, delims: &[Delimiter]) -> WatchSet {
        let mut stop_bytes = [false; 256];
        let mut loop_bytes = [false; 128];
        let mut loops = Vec::with_capacity(entries.len());
        for w in &entries {
            let d = &delims[w.delim as usize];
            let lead = LeadLoop::of(d);
            for (b, on) in d.first_bytes.iter().enumerate() {
                let in_loop = lead.as_ref().is_some_and(|l| l.covers(b as u8));
                stop_bytes[b] |= *on && !in_loop;
                if b < 128 {
                    loop_bytes[b] |= in_loop;
                }
            }
            loops.push(lead);
        }
        let literals = LiteralSet::new(&entries, delims);
        let mut begins = Box::new([0u64; 256]);
        for (k, w) in entries.iter().enumerate().take(64) {
            let d = &delims[w.delim as usize];
            for (b, on) in d.first_bytes.iter().enumerate() {
                begins[b] |= u64::from(*on) << k;
            }
        }
        let backtracks = entries
            .iter()
            .any(|w| matches!(delims[w.delim as usize].matcher, Matcher::Backtrack));
        WatchSet {
            entries,
            stops: ByteSet::new(stop_bytes),
            loops,
            loop_bytes,
            literals,
            begins,
            backtracks,
        }
    }

    /// Whether the scanner, with no thread alive, would have to look at
    /// `text` more closely: a watched delimiter may begin in it, or it ends
    /// inside a leading loop.
    #[inline]
    pub fn may_start_in(&self, text: &[u8]) -> bool {
        if let Some(set) = &self.literals {
            return set.find_first(text, 0).is_some();
        }
        self.stops.find(text).is_some() || self.ends_in_loop(text)
    }

    /// Whether `text` ends inside a run of some leading loop.
    fn ends_in_loop(&self, text: &[u8]) -> bool {
        let Some(&last) = text.last() else {
            return false;
        };
        if last < 128 {
            return self.loop_bytes[last as usize];
        }
        // The last character is multi-byte: whether it continues a loop
        // needs the automaton; assume it may.
        self.loops
            .iter()
            .any(|l| l.as_ref().is_some_and(|l| l.leads.iter().any(|&x| x)))
    }
}

/// A match that the scanner has settled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    /// Absolute offset where the match starts.
    pub start: usize,
    /// Absolute offset where the automaton's match ends. With a trailing
    /// lookahead this lies past the delimiter's real end, which
    /// [`Delimiter::regex`] gives.
    pub end: usize,
}

/// What the scanner concludes about the text seen so far.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Commit the match of watch entry `entry`.
    Commit {
        /// Index into the watch set's entries.
        entry: usize,
        /// Absolute start of the match.
        start: usize,
        /// Absolute end of the match (the real end).
        end: usize,
        /// Named groups that took part in the match, in group order.
        captures: Vec<(String, String)>,
    },
    /// Nothing to commit; text before `hold` belongs to the current region.
    Hold(usize),
}

#[derive(Clone, Copy, Debug)]
struct Thread {
    start: usize,
    branch: u16,
    state: u32,
    /// The last match end seen; for a settled thread, its result.
    rec: Option<usize>,
    settled: bool,
}

#[derive(Clone, Debug, Default)]
struct PatScan {
    threads: Vec<Thread>,
    /// The leftmost settled match, once known.
    best: Option<Found>,
    /// The real end and named captures of `best`, when the delimiter needs them.
    best_regex: Option<(usize, Vec<(String, String)>)>,
    /// Backtracking path: the first start not yet settled as "no match".
    bt_resume: usize,
    /// Backtracking path: the first start whose attempt touched the end.
    bt_pending: Option<usize>,
    /// Backtracking path: the end of the text when the pending start was
    /// last tried (see [`backtrack_scan`]).
    bt_tried_len: usize,
}

/// The work the backtracking path may do over a parser's life: `per_byte`
/// steps for every byte of text plus `base`, counted across all attempts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WorkBudget {
    /// Steps allowed per byte of text seen.
    pub per_byte: u64,
    /// Steps allowed whatever the length.
    pub base: u64,
}

impl Default for WorkBudget {
    fn default() -> WorkBudget {
        WorkBudget {
            per_byte: 96,
            base: 1_000_000,
        }
    }
}

impl WorkBudget {
    /// The steps allowed once `bytes` bytes of text have been seen.
    pub fn allowed(&self, bytes: usize) -> u64 {
        self.per_byte
            .saturating_mul(bytes as u64)
            .saturating_add(self.base)
    }
}

/// The bytes of the text that the scanner reads, addressed by absolute
/// offset.
#[derive(Clone, Copy, Debug)]
pub struct Hay<'a> {
    /// The retained text.
    pub text: &'a str,
    /// Absolute offset of `text[0]`.
    pub base: usize,
    /// The byte before `text[0]` (`None` at offset 0): start states depend
    /// on it.
    pub before: Option<u8>,
}

impl<'a> Hay<'a> {
    /// Absolute offset of the end of the text.
    pub fn end(&self) -> usize {
        self.base + self.text.len()
    }
    /// The text between absolute offsets `a` and `b`.
    pub fn slice(&self, a: usize, b: usize) -> &'a str {
        &self.text[a - self.base..b - self.base]
    }
    fn byte(&self, abs: usize) -> u8 {
        self.text.as_bytes()[abs - self.base]
    }
    /// The byte before absolute offset `abs` (`None` at offset 0).
    pub fn prev_byte(&self, abs: usize) -> Option<u8> {
        self.prev(abs)
    }
    #[inline]
    fn prev(&self, abs: usize) -> Option<u8> {
        if abs == self.base {
            self.before
        } else {
            Some(self.byte(abs - 1))
        }
    }
}

/// A watch set's automata as the scanner's per-byte loop reads them, entry
/// by entry (entries in [`WatchSet::entries`] order).
///
/// [`IrAutomata`] answers from the IR. Generated code implements it once per
/// state with constant answers (the entry count, each entry's branches as a
/// `static`, its first bytes as a `match`): each step reads its automaton
/// at a fixed address. Which entries a byte visits comes from the watch
/// set's [`WatchSet::begins`] masks; [`Automata::may_begin`] serves the
/// entries past the 64th, which the masks do not cover.
pub trait Automata<'a>: Copy {
    /// The number of watch entries.
    fn count(self) -> usize;
    /// Entry `k`'s automaton branches; `None` for a delimiter on the
    /// backtracking path.
    fn branches(self, k: usize) -> Option<&'a [Branch]>;
    /// Whether a match of entry `k` can begin with byte `b` (its
    /// [`Delimiter::first_bytes`]).
    fn may_begin(self, k: usize, b: u8) -> bool;
}

/// What [`StreamScan::advance_with`] reads besides the automata, passed
/// through a machine's [`crate::machine::Machine::advance`].
#[derive(Clone, Copy)]
pub struct Advance<'x> {
    /// The watch set.
    pub ws: &'x WatchSet,
    /// The template's delimiters.
    pub delims: &'x [Delimiter],
    /// The text.
    pub hay: &'x Hay<'x>,
    /// Where lookbehinds hold.
    pub guards: &'x dyn Guards,
    /// Whether the text is complete.
    pub eos: bool,
}

impl StreamScan {
    /// [`StreamScan::advance_with`] on a state that is not a literal state,
    /// with `automata` (a compiled machine's own for the state).
    #[inline(always)]
    pub fn advance_automata<'a>(&mut self, a: Advance<'_>, automata: impl Automata<'a>) {
        self.advance_with(
            a.ws,
            a.delims,
            automata,
            a.hay,
            a.guards,
            a.eos,
            false,
            |_, _, _, _, _| None,
        );
    }
}

/// [`Automata`] read from the IR: what the run-time parser runs.
#[derive(Clone, Copy, Debug)]
pub struct IrAutomata<'a> {
    /// The watch set.
    pub ws: &'a WatchSet,
    /// The template's delimiters.
    pub delims: &'a [Delimiter],
}

impl<'a> Automata<'a> for IrAutomata<'a> {
    #[inline(always)]
    fn count(self) -> usize {
        self.ws.entries.len()
    }

    #[inline(always)]
    fn branches(self, k: usize) -> Option<&'a [Branch]> {
        match &self.delims[self.ws.entries[k].delim as usize].matcher {
            Matcher::Dfa(branches) => Some(branches),
            Matcher::Backtrack => None,
        }
    }

    #[inline(always)]
    fn may_begin(self, k: usize, b: u8) -> bool {
        self.delims[self.ws.entries[k].delim as usize].first_bytes[b as usize]
    }
}

/// Where each lookbehind holds, for the positions the scanner may still
/// start threads at.
pub trait Guards {
    /// Whether tracker `t` reports a match ending at absolute offset `at`.
    fn holds(&self, t: u16, at: usize) -> bool;
}

/// The scanner's state for one watch set.
#[derive(Clone, Debug, Default)]
pub struct StreamScan {
    /// Per watch entry; only the first `active` are in use (the rest keep
    /// their allocations for later watch sets).
    pats: Vec<PatScan>,
    active: usize,
    /// Set by [`StreamScan::reset`]: the entries are cleared on first use,
    /// so that a parser that never scans never allocates them.
    stale: bool,
    /// Literal watch sets: the choice (entry and match), once made.
    lit_found: Option<(usize, Found)>,
    /// Literal watch sets: where the text ends inside a literal.
    lit_hold: Option<usize>,
    /// Absolute offset of the next byte to read.
    frontier: usize,
    /// Whether the end of input has been applied.
    ended: bool,
    /// Bytes read by [`StreamScan::advance`] over the scanner's life (a byte
    /// read again after a commit counts again).
    bytes_read: u64,
    /// Backtracking steps taken over the scanner's life, across all
    /// attempts of all delimiters.
    bt_steps: u64,
    /// The limit on `bt_steps`.
    budget: WorkBudget,
    /// A machine's search of this state declined (see
    /// [`crate::machine::Machine::find_started`]): the automaton threads
    /// decide it until the next [`StreamScan::reset`].
    declined: bool,
    /// What that search keeps between pieces.
    memo: StartMemo,
}

impl StreamScan {
    /// Starts scanning a watch set at absolute offset `origin`.
    pub fn reset(&mut self, ws: &WatchSet, origin: usize) {
        self.active = ws.entries.len();
        self.stale = true;
        self.frontier = origin;
        self.ended = false;
        self.declined = false;
        self.memo.reset(origin);
    }

    /// Whether a machine's search of the current state declined, so that
    /// the automaton threads decide it (see
    /// [`crate::machine::Machine::find_started`]).
    #[inline]
    pub fn declined(&self) -> bool {
        self.declined
    }

    /// Clears the entries after a [`StreamScan::reset`].
    #[inline]
    fn refresh(&mut self) {
        if !self.stale {
            return;
        }
        self.stale = false;
        self.lit_found = None;
        self.lit_hold = None;
        let origin = self.frontier;
        while self.pats.len() < self.active {
            self.pats.push(PatScan::default());
        }
        for p in &mut self.pats[..self.active] {
            p.threads.clear();
            p.best = None;
            p.best_regex = None;
            p.bt_resume = origin;
            p.bt_pending = None;
            p.bt_tried_len = 0;
        }
    }

    /// Sets the backtracking work budget.
    pub fn set_budget(&mut self, budget: WorkBudget) {
        self.budget = budget;
    }

    /// Backtracking steps taken so far, across all attempts: the measure of
    /// the backtracking path's work, bounded by the [`WorkBudget`].
    pub fn backtrack_steps(&self) -> u64 {
        self.bt_steps
    }

    /// Whether nothing is pending: no thread alive, no match found, no text
    /// held. Text up to the frontier is then decided.
    pub fn is_clear(&self) -> bool {
        self.stale
            || self.lit_found.is_none()
                && self.lit_hold.is_none()
                && self.pats[..self.active]
                    .iter()
                    .all(|p| p.threads.is_empty() && p.best.is_none() && p.bt_pending.is_none())
    }

    /// Literal watch sets (or states a machine's search answers for): the
    /// offset where the text ends inside a literal, when that is all the
    /// scanner holds (no match chosen).
    #[inline]
    pub fn literal_hold(&self) -> Option<usize> {
        if self.stale || self.lit_found.is_some() {
            return None;
        }
        self.lit_hold
    }

    /// Records what [`StreamScan::advance_with`] records when a search of a
    /// literal watch set over `read` bytes from the frontier finds the text
    /// ending inside a literal at `at` (absolute): the state the scanner is
    /// in after such a search, for a caller that searched itself (a
    /// compiled parser's quick path).
    #[inline]
    pub fn hold_literal(&mut self, at: usize, read: usize) {
        self.refresh();
        self.bytes_read += read as u64;
        self.lit_hold = Some(at);
        self.frontier = at;
    }

    /// Counts `read` bytes as read without moving the frontier: text a
    /// caller's own search read again (a compiled parser's quick path
    /// over a partial delimiter it held).
    #[inline]
    pub fn count_read(&mut self, read: usize) {
        self.bytes_read += read as u64;
    }

    /// Forgets a hold recorded by a literal search and moves the frontier
    /// to `to`: a caller found that the held text and `read` bytes in all
    /// (from the hold) begin no delimiter.
    #[inline]
    pub fn release_literal_hold(&mut self, to: usize, read: usize) {
        self.bytes_read += read as u64;
        self.lit_hold = None;
        self.frontier = to;
    }

    /// For a caller that continues a held start itself (a compiled parser's
    /// quick path, see `Parser::feed`): the scanner holds the text at
    /// `origin` in a state that a machine's search answers for, and `bytes`
    /// are the held text and the next piece, from `origin`. `held` is the
    /// machine's test that its search would hold them at `origin` again at
    /// once (`Machine::held_started`); when it says so, records what
    /// [`StreamScan::advance_with`] records for that hold and returns
    /// `true`. Anything else (or a state not in that shape) returns `false`
    /// and leaves the decision to `advance_with`, whose search continues
    /// the threads from where this test left them in the memo, so that the
    /// answer is the same.
    pub fn hold_started(
        &mut self,
        bytes: &[u8],
        origin: usize,
        held: impl FnOnce(&[u8], &mut StartMemo, usize) -> bool,
    ) -> bool {
        if self.stale
            || self.declined
            || self.ended
            || self.lit_found.is_some()
            || self.lit_hold != Some(origin)
            || self.frontier != origin
            || self.memo.exhausted(origin + bytes.len())
        {
            return false;
        }
        if !held(bytes, &mut self.memo, origin) {
            return false;
        }
        // As `advance_literals` counts a hold: all of the text was read.
        self.bytes_read += bytes.len() as u64;
        true
    }

    /// [`StreamScan::hold_started`] for the piece after one it held, with
    /// nothing recorded since: only the work the threads have spent can
    /// have changed what it tests of the scanner's state.
    #[inline]
    pub fn lead_held(
        &mut self,
        bytes: &[u8],
        origin: usize,
        held: impl FnOnce(&[u8], &mut StartMemo, usize) -> bool,
    ) -> bool {
        debug_assert!(
            self.lit_hold == Some(origin)
                && self.frontier == origin
                && !self.stale
                && !self.declined
                && !self.ended
                && self.lit_found.is_none()
        );
        if self.memo.exhausted(origin + bytes.len()) || !held(bytes, &mut self.memo, origin) {
            return false;
        }
        self.bytes_read += bytes.len() as u64;
        true
    }

    /// For a caller that decides a piece itself with a machine's search of
    /// starts (a compiled parser, see `Parser::quick_started`,
    /// `Parser::started_after_hold` and `Parser::outside_decides`), in a
    /// state that search answers for: `bytes` begin at `origin`, where the
    /// scanner either holds the text (the held text and the next piece) or
    /// stands with nothing held and no thread (the next piece). Runs the
    /// search (`search`, the machine's `find_started` over `bytes` with
    /// the memo) when the scanner is in one of those shapes, and returns
    /// its answer, which is the one [`StreamScan::advance_with`] would
    /// reach from there; `None` when it is not (or the search declines).
    /// Records nothing: the caller releases the hold or holds
    /// ([`StreamScan::release_literal_hold`], [`StreamScan::hold_literal`]),
    /// or leaves the piece to `advance_with`, whose search continues the
    /// threads from where this one left them in the memo.
    pub fn search_started(
        &mut self,
        bytes: &[u8],
        origin: usize,
        search: impl FnOnce(&[u8], &mut StartMemo, usize) -> Option<LiteralHit>,
    ) -> Option<LiteralHit> {
        let shaped = match self.lit_hold {
            Some(hold) => hold == origin,
            None => self.is_clear(),
        };
        if !shaped
            || self.stale
            || self.declined
            || self.ended
            || self.lit_found.is_some()
            || self.frontier != origin
            || self.memo.exhausted(origin + bytes.len())
        {
            return None;
        }
        search(bytes, &mut self.memo, origin)
    }

    /// Bytes up to `to` that [`StreamScan::skip_to`] would count as read.
    pub fn unread(&self, to: usize) -> u64 {
        to.saturating_sub(self.frontier) as u64
    }

    /// Records that the text up to `to` was found to hold no byte that can
    /// begin a watched delimiter (only valid when [`StreamScan::is_clear`]).
    #[inline]
    pub fn skip_to(&mut self, to: usize) {
        self.bytes_read += self.unread(to);
        self.frontier = self.frontier.max(to);
    }

    /// Reads the text up to its end; with `eos`, also applies the end of
    /// input, after which every thread is settled. `literal` is a machine's
    /// specialised search for a literal watch set (`None`: the engine's own
    /// search, [`LiteralSet::search`]); with `answered`, the machine's
    /// search decides this watch set although it is not all literals (see
    /// [`crate::machine::Machine::answers`]).
    ///
    /// `automata` gives the watch entries' automata to the per-byte loop:
    /// [`IrAutomata`] reads them from the IR; a compiled machine passes a
    /// type of its own per state whose answers are constants, so that the
    /// loop is compiled for that state (see [`Automata`]).
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn advance_with<'a>(
        &mut self,
        ws: &WatchSet,
        delims: &[Delimiter],
        automata: impl Automata<'a>,
        hay: &Hay<'_>,
        guards: &dyn Guards,
        eos: bool,
        answered: bool,
        literal: impl FnOnce(&[u8], Option<u8>, bool, &mut StartMemo, usize) -> Option<LiteralHit>,
    ) {
        self.refresh();
        let len = hay.end();
        if ws.literals.is_some() || (answered && !self.declined) {
            if self.advance_literals(ws, ws.literals.as_ref(), hay, eos, literal) {
                return;
            }
            // The machine declined: from the frontier, where everything
            // before is decided, the threads take the state over.
            self.declined = true;
            self.lit_hold = None;
        }
        let bytes = hay.text.as_bytes();
        let first = self.frontier;
        let mut i = first;
        let count = automata.count();
        // Entries past the 64 that `live` and `WatchSet::begins` track are
        // visited at every byte.
        let wide = count.min(64)..count;
        // The entries (of the first 64) with threads; with `begins`, the
        // only ones a byte can change.
        let mut live: u64 = 0;
        let mut idle = true;
        for (k, p) in self.pats[..self.active].iter().enumerate() {
            let has = !p.threads.is_empty();
            idle &= !has;
            if k < 64 {
                live |= u64::from(has) << k;
            }
        }
        // Once a match is settled at `cutoff`, only threads that started at
        // or before it can change the choice: nothing starts later, and the
        // scan stops when no thread is left (the text after it is read
        // again by the next watch set, not scanned to its end now).
        let mut cutoff = self.pats[..self.active]
            .iter()
            .filter_map(|p| p.best.as_ref().map(|f| f.start))
            .min()
            .unwrap_or(usize::MAX);
        while i < len {
            if idle && i > cutoff {
                break;
            }
            if idle {
                let from = i;
                i = skip(ws, bytes, hay.base, i);
                let stop = i.min(len);
                if stop > from {
                    self.start_loops(ws, delims, hay, from, stop);
                    for (k, lead) in ws.loops.iter().enumerate().take(64) {
                        if lead.is_some() {
                            live |= u64::from(!self.pats[k].threads.is_empty()) << k;
                        }
                    }
                }
                if i >= len {
                    break;
                }
            }
            let b = hay.byte(i);
            let boundary = (b & 0xC0) != 0x80;
            // A thread started on a byte outside the delimiter's first
            // bytes dies on it without recording a match: only the entries
            // this byte may begin, and those with threads, have work.
            let begins = if boundary { ws.begins[b as usize] } else { 0 };
            let mut todo = live | begins;
            while todo != 0 {
                let k = todo.trailing_zeros() as usize;
                todo &= todo - 1;
                // An entry settled earlier at this byte may have moved the
                // cutoff before it.
                let spawn_here = begins >> k & 1 != 0 && i <= cutoff;
                let (alive, best) = self.step_entry(automata, k, spawn_here, b, i, hay, guards);
                live = live & !(1 << k) | u64::from(alive) << k;
                if let Some(start) = best {
                    cutoff = cutoff.min(start);
                }
            }
            let mut wide_alive = false;
            for k in wide.clone() {
                let spawn_here = boundary && i <= cutoff && automata.may_begin(k, b);
                let (alive, best) = self.step_entry(automata, k, spawn_here, b, i, hay, guards);
                wide_alive |= alive;
                if let Some(start) = best {
                    cutoff = cutoff.min(start);
                }
            }
            idle = live == 0 && !wide_alive;
            i += 1;
        }
        let end = i.min(len).max(first);
        self.bytes_read += (end - first) as u64;
        self.frontier = end;
        if eos && !self.ended && end == len {
            self.ended = true;
            let prev = hay.prev(len);
            for k in 0..automata.count() {
                let Some(branches) = automata.branches(k) else {
                    continue;
                };
                let p = &mut self.pats[k];
                if p.best.is_some() {
                    continue;
                }
                spawn(p, branches, len, prev, guards);
                for t in p.threads.iter_mut() {
                    if t.settled {
                        continue;
                    }
                    let table = &branches[t.branch as usize].table;
                    if table.flags(table.next_eoi(t.state)) & MATCH != 0 {
                        t.rec = Some(len);
                    }
                    t.settled = true;
                }
                p.threads.retain(|t| !t.settled || t.rec.is_some());
                update_best(p);
            }
        }
    }

    /// Reads byte `b` at `i` for watch entry `k`: starts its threads there
    /// first when `spawn_here`, steps its live threads, drops those that
    /// cannot matter. Returns whether threads are left that still decide
    /// something, and the start of its match once settled.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn step_entry<'a>(
        &mut self,
        automata: impl Automata<'a>,
        k: usize,
        spawn_here: bool,
        b: u8,
        i: usize,
        hay: &Hay<'_>,
        guards: &dyn Guards,
    ) -> (bool, Option<usize>) {
        let Some(branches) = automata.branches(k) else {
            return (false, None);
        };
        let p = &mut self.pats[k];
        if p.best.is_some() {
            return (false, None);
        }
        if spawn_here {
            spawn(p, branches, i, hay.prev(i), guards);
        }
        if p.threads.is_empty() {
            return (false, None);
        }
        let mut changed = false;
        for t in p.threads.iter_mut() {
            if t.settled {
                continue;
            }
            let table = &branches[t.branch as usize].table;
            let q = table.next(t.state, b);
            t.state = q;
            let f = table.flags(q);
            if f & MATCH != 0 {
                t.rec = Some(i);
            }
            settle(t, f, i + 1);
            changed |= t.settled;
        }
        // Dropping threads that share a state only bounds the work (the
        // results are the same with them): it is worth its cost when some
        // thread settled or the threads grow past a few.
        if changed || p.threads.len() > DEDUP_ABOVE {
            dedup(&mut p.threads);
        }
        update_best(p);
        (!p.threads.is_empty(), p.best.as_ref().map(|f| f.start))
    }

    /// After skipping `[from, stop)` with no thread alive: for each entry
    /// with a leading loop, starts the thread that reading the run of loop
    /// bytes ending at `stop` would have left.
    fn start_loops(
        &mut self,
        ws: &WatchSet,
        delims: &[Delimiter],
        hay: &Hay<'_>,
        from: usize,
        stop: usize,
    ) {
        for (k, lead) in ws.loops.iter().enumerate() {
            let Some(lead) = lead else { continue };
            let p = &mut self.pats[k];
            if p.best.is_some() {
                continue;
            }
            let Matcher::Dfa(branches) = &delims[ws.entries[k].delim as usize].matcher else {
                continue;
            };
            let bytes = hay.text.as_bytes();
            let r = hay.base
                + lead.run_start(&branches[0].table, bytes, from - hay.base, stop - hay.base);
            if r < stop {
                p.threads.push(Thread {
                    start: r,
                    branch: 0,
                    state: lead.state,
                    rec: None,
                    settled: false,
                });
            }
        }
    }

    /// A literal watch set: at each place where a literal may begin, in
    /// order, the longest literal that matches there (then opens before
    /// closes, then by field name) is the choice, unless the text ends in the
    /// middle of some literal there: that place is then held.
    fn advance_literals(
        &mut self,
        ws: &WatchSet,
        set: Option<&LiteralSet>,
        hay: &Hay<'_>,
        eos: bool,
        specialised: impl FnOnce(&[u8], Option<u8>, bool, &mut StartMemo, usize) -> Option<LiteralHit>,
    ) -> bool {
        if self.lit_found.is_some() {
            return true;
        }
        let len = hay.end();
        let from = self.frontier.max(hay.base);
        let bytes = &hay.text.as_bytes()[from - hay.base..];
        // A state the machine answers for has no literal set: its search is
        // the machine's alone, which may decline (nothing is recorded then);
        // so does the scanner, once that search has read the state's text
        // too many times over.
        if set.is_none() && self.memo.exhausted(len) {
            return false;
        }
        let hit = match specialised(bytes, hay.prev(from), eos, &mut self.memo, from) {
            Some(hit) => hit,
            None => match set {
                Some(set) => set.search(ws, bytes, eos),
                None => return false,
            },
        };
        self.lit_hold = None;
        if eos {
            self.ended = true;
        }
        // What the search read: up to the end of a match, else all of it
        // (a held partial literal is read again when the rest arrives).
        self.bytes_read += match hit {
            LiteralHit::Found { at, len: n, .. } => (at + n).min(bytes.len()),
            LiteralHit::Partial(_) | LiteralHit::Nothing => bytes.len(),
        } as u64;
        match hit {
            LiteralHit::Found { at, len: n, entry } => {
                let start = from + at;
                self.lit_found = Some((
                    entry,
                    Found {
                        start,
                        end: start + n,
                    },
                ));
                self.frontier = len;
            }
            LiteralHit::Partial(at) => {
                self.lit_hold = Some(from + at);
                self.frontier = from + at;
            }
            LiteralHit::Nothing => self.frontier = len,
        }
        true
    }

    /// Bytes read so far, counting re-reads: the measure of scanning work.
    pub fn bytes_read(&self) -> u64 {
        self.bytes_read
    }

    /// Decides what to do with the text read so far. `eos` says whether the
    /// text is complete (then nothing is pending).
    #[inline]
    pub fn decide(
        &mut self,
        ws: &WatchSet,
        delims: &[Delimiter],
        hay: &Hay<'_>,
        eos: bool,
        answered: bool,
        captures: impl Fn(usize, &str, usize, usize) -> Option<Vec<(String, String)>>,
    ) -> Result<Decision, ScanError> {
        self.refresh();
        let len = hay.end();
        if ws.literals.is_some() || (answered && !self.declined) {
            return Ok(match &self.lit_found {
                Some((entry, f)) => {
                    // A machine's search may settle a pattern with named
                    // groups: they are read as for a thread's match.
                    let d = &delims[ws.entries[*entry].delim as usize];
                    let (end, captures) = if d.needs_regex_at_commit {
                        let (a, z) = (f.start - hay.base, f.end - hay.base);
                        match captures(ws.entries[*entry].delim as usize, hay.text, a, z) {
                            Some(groups) => (f.end, groups),
                            None => regex_at(d, hay, f.start, eos)?,
                        }
                    } else {
                        (f.end, Vec::new())
                    };
                    Decision::Commit {
                        entry: *entry,
                        start: f.start,
                        end,
                        captures,
                    }
                }
                None if eos => Decision::Hold(len),
                None => Decision::Hold(self.lit_hold.unwrap_or(len)),
            });
        }
        // At the end of the stream nothing is pending, but the reference's
        // hold point stays at the text's end: a match starting there (a
        // zero-width one) is never committed.
        let mut hold = len;
        // Backtracking delimiters: settle starts in order until one matches
        // or one depends on text not yet seen (none in most watch sets).
        let backtracking = if ws.backtracks { &ws.entries[..] } else { &[] };
        for (k, w) in backtracking.iter().enumerate() {
            let d = &delims[w.delim as usize];
            if !matches!(d.matcher, Matcher::Backtrack) {
                continue;
            }
            let p = &mut self.pats[k];
            if p.best.is_none() {
                let allowed = self.budget.allowed(len);
                backtrack_scan(p, d, hay, eos, &mut self.bt_steps, allowed)?;
            }
            if let Some(s) = p.bt_pending {
                hold = hold.min(s);
            }
        }
        let mut any_best = false;
        for p in &self.pats[..self.active] {
            match (&p.best, p.threads.first()) {
                (Some(_), _) => any_best = true,
                (None, Some(t)) => hold = hold.min(t.start),
                (None, None) => {}
            }
        }
        // Most calls, while a delimiter is still being read, end here.
        if !any_best {
            return Ok(Decision::Hold(hold.min(len)));
        }
        // Among settled matches that start before the hold point, the
        // reference's order: leftmost, longest, opens first, then by name.
        let mut choice: Option<(usize, usize, Kind, u16, usize)> = None;
        for (k, w) in ws.entries.iter().enumerate() {
            let Some(found) = self.pats[k].best.clone() else {
                continue;
            };
            if found.start >= hold {
                continue;
            }
            let d = &delims[w.delim as usize];
            let end = if d.needs_regex_at_commit {
                let p = &mut self.pats[k];
                if p.best_regex.is_none() {
                    // A machine may read the groups off the settled match
                    // with code of its own; else the backtracker runs.
                    let (a, z) = (found.start - hay.base, found.end - hay.base);
                    p.best_regex = Some(match captures(w.delim as usize, hay.text, a, z) {
                        Some(groups) => (found.end, groups),
                        None => regex_at(d, hay, found.start, eos)?,
                    });
                }
                p.best_regex.as_ref().map(|r| r.0).unwrap_or(found.end)
            } else {
                found.end
            };
            let key = (
                found.start,
                usize::MAX - (end - found.start),
                w.kind,
                w.name_rank,
                k,
            );
            let better = match &choice {
                None => true,
                Some(c) => (key.0, key.1, key.2, key.3) < (c.0, c.1, c.2, c.3),
            };
            if better {
                choice = Some(key);
            }
        }
        match choice {
            Some((start, inv_len, _, _, k)) => {
                let end = start + (usize::MAX - inv_len);
                let captures = self.pats[k]
                    .best_regex
                    .take()
                    .map(|r| r.1)
                    .unwrap_or_default();
                Ok(Decision::Commit {
                    entry: k,
                    start,
                    end,
                    captures,
                })
            }
            None => Ok(Decision::Hold(hold.min(len))),
        }
    }
}

/// Why the scanner could not decide.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScanError {
    /// The backtracking matcher gave up (its step budget ran out).
    Budget,
    /// The automaton settled a match that the regex does not find: a bug in
    /// retort, reported rather than hidden.
    Disagree {
        /// The pattern.
        pattern: String,
        /// Absolute offset of the match.
        at: usize,
    },
}

impl From<MatchError> for ScanError {
    fn from(_: MatchError) -> ScanError {
        ScanError::Budget
    }
}

/// The named groups of a match, as (name, text) in group order.
pub fn named_groups(
    d: &Delimiter,
    hay: &str,
    caps: &crate::pyre::Captures,
) -> Vec<(String, String)> {
    d.regex
        .group_names()
        .iter()
        .filter_map(|(name, i)| {
            caps.get(*i)
                .map(|(a, b)| (name.clone(), hay[a..b].to_owned()))
        })
        .collect()
}

/// Runs the delimiter's regex at `start` for its real end and captures.
fn regex_at(
    d: &Delimiter,
    hay: &Hay<'_>,
    start: usize,
    eos: bool,
) -> Result<(usize, Vec<(String, String)>), ScanError> {
    let attempt = d.regex.match_at(hay.text, start - hay.base, eos)?;
    match attempt.captures {
        Some(c) => Ok((hay.base + c.end(), named_groups(d, hay.text, &c))),
        None => Err(ScanError::Disagree {
            pattern: d.regex.pattern().to_owned(),
            at: start,
        }),
    }
}

/// Tries the starts of a backtracking delimiter in order until one matches
/// or one depends on text not seen yet.
///
/// Work is bounded two ways. A start that touched the end is tried again
/// only once the text after it has grown by half (or at the end of
/// input): the decision is then at most that much later, and the attempts
/// at one start cost a constant factor of the last one instead of one per
/// piece fed (which made streaming quadratic). And every step of every
/// attempt counts against `allowed`, linear in the text: past it the
/// scanner gives up with [`ScanError::Budget`].
fn backtrack_scan(
    p: &mut PatScan,
    d: &Delimiter,
    hay: &Hay<'_>,
    eos: bool,
    steps: &mut u64,
    allowed: u64,
) -> Result<(), ScanError> {
    let len = hay.end();
    if let Some(s) = p.bt_pending
        && !eos
    {
        let span = p.bt_tried_len.saturating_sub(s);
        if len <= p.bt_tried_len || len - p.bt_tried_len < span / 2 {
            return Ok(());
        }
    }
    p.bt_pending = None;
    let mut s = p.bt_resume.max(hay.base);
    while s <= len {
        if s < len && (hay.byte(s) & 0xC0) == 0x80 {
            s += 1;
            continue;
        }
        let left = allowed.saturating_sub(*steps);
        let (attempt, used) = d.regex.match_at_limited(hay.text, s - hay.base, eos, left);
        *steps += used.min(left);
        let attempt = attempt?;
        if attempt.hit_end && !eos {
            p.bt_pending = Some(s);
            p.bt_tried_len = len;
            return Ok(());
        }
        if let Some(c) = attempt.captures {
            let end = hay.base + c.end();
            p.best = Some(Found { start: s, end });
            p.best_regex = Some((end, named_groups(d, hay.text, &c)));
            return Ok(());
        }
        s += 1;
        p.bt_resume = s;
    }
    Ok(())
}

/// Starts threads at `at` for every branch whose guard holds there.
#[inline]
fn spawn(p: &mut PatScan, branches: &[Branch], at: usize, prev: Option<u8>, guards: &dyn Guards) {
    for (bi, br) in branches.iter().enumerate() {
        if let Some(g) = br.guard
            && !guards.holds(g, at)
        {
            continue;
        }
        let table: &DfaTable = &br.table;
        let q = table.start(prev);
        let f = table.flags(q);
        if f & FUT == 0 {
            continue;
        }
        let mut t = Thread {
            start: at,
            branch: bi as u16,
            state: q,
            rec: None,
            settled: false,
        };
        settle(&mut t, f, at);
        p.threads.push(t);
    }
}

/// What the thread the scanner would start at one position comes to (see
/// [`StartMemo::run`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Run {
    /// It settles on a match ending at this offset.
    Match(usize),
    /// It settles without a match, or is never started.
    NoMatch,
    /// The text ends before it settles.
    Pending,
}

/// Where a pending thread stands: its state, its last match end and the
/// offset of the next byte it reads.
type Stand = (u32, Option<usize>, usize);

/// The automaton thread that the scanner starts at `s` of `bytes` (after
/// the byte `prev`), run alone until it settles: the steps of [`spawn`],
/// the per-byte step and [`settle`], and with `eos` the end of input, so
/// that its result is the one the scanner's thread reaches; or, with
/// `from`, going on from where an earlier piece left it pending. A
/// machine's search runs it only at the positions where its delimiter can
/// begin (see [`StartMemo::run`]). Adds the bytes it read to `steps`, and
/// returns where a pending thread stands.
#[inline]
fn run_from(
    table: &DfaTable,
    bytes: &[u8],
    s: usize,
    prev: Option<u8>,
    eos: bool,
    steps: &mut usize,
    from: Option<Stand>,
) -> (Run, Stand) {
    let (mut q, mut rec, next) = match from {
        Some(stand) => stand,
        None => {
            let q = table.start(prev);
            let f = table.flags(q);
            if f & FUT == 0 {
                return (Run::NoMatch, (q, None, s));
            }
            if f & CERTAIN != 0 && f & LATER == 0 {
                return (Run::Match(s), (q, None, s));
            }
            (q, None, s)
        }
    };
    for (i, &b) in bytes.iter().enumerate().skip(next) {
        q = table.next(q, b);
        let f = table.flags(q);
        // Matches are reported one byte late: this one ended before `b`.
        if f & MATCH != 0 {
            rec = Some(i);
        }
        if f & FUT == 0 {
            *steps += i + 1 - next;
            return (rec.map_or(Run::NoMatch, Run::Match), (q, rec, i + 1));
        }
        if f & CERTAIN != 0 && f & LATER == 0 {
            *steps += i + 1 - next;
            return (Run::Match(i + 1), (q, rec, i + 1));
        }
    }
    *steps += bytes.len().saturating_sub(next);
    if !eos {
        return (Run::Pending, (q, rec, bytes.len()));
    }
    if table.flags(table.next_eoi(q)) & MATCH != 0 {
        rec = Some(bytes.len());
    }
    (rec.map_or(Run::NoMatch, Run::Match), (q, rec, bytes.len()))
}

/// The next byte of a thread in [`StartMemo`] that has settled: its last
/// match end is its result.
const SETTLED: usize = usize::MAX;

/// What a machine's search of starting literals keeps from one piece to
/// the next (see [`crate::machine::Machine::find_started`]): the threads
/// still pending at the start where it held the text, each where it
/// stands, so that the next piece continues them instead of reading the
/// held text again (streamed a byte at a time, a tool call's header would
/// be read once per byte). Offsets are absolute; at most four threads are
/// kept (a fifth is run again from its start). It also counts the bytes
/// the threads read in the state, so that the scanner can hand the state
/// to its own threads when the search has read more than a few times the
/// text (see [`StartMemo::exhausted`]).
#[derive(Clone, Copy, Debug)]
pub struct StartMemo {
    /// The start the threads began at (`usize::MAX`: none).
    start: usize,
    /// (entry, state, last match end, next byte) of each, the first `len`;
    /// a thread that settled after it was kept has [`SETTLED`] as its next
    /// byte.
    runs: [(usize, u32, Option<usize>, usize); 4],
    len: usize,
    /// Where the state began.
    origin: usize,
    /// Bytes read by threads since then.
    spent: usize,
}

impl Default for StartMemo {
    fn default() -> StartMemo {
        StartMemo {
            start: usize::MAX,
            runs: [(0, 0, None, 0); 4],
            len: 0,
            origin: 0,
            spent: 0,
        }
    }
}

impl StartMemo {
    /// Forgets every thread and the work counted: a state begins at
    /// `origin`.
    pub fn reset(&mut self, origin: usize) {
        self.start = usize::MAX;
        self.len = 0;
        self.origin = origin;
        self.spent = 0;
    }

    /// Whether the threads have read more than four times the state's text
    /// up to `end`, and a few kilobytes: each search stays within its own
    /// bound, but starts that settle one after another, each far from the
    /// last, could add up over many pieces. The scanner's threads then
    /// decide the state, in linear time.
    pub fn exhausted(&self, end: usize) -> bool {
        self.spent > 4 * end.saturating_sub(self.origin) + 4096
    }

    /// Whether a thread kept at a hold at `origin`, where `bytes` begin, is
    /// still pending once continued over the new text (`table` gives each
    /// entry's automaton). The search then holds there again without
    /// looking further: a thread pending at the leftmost start decides,
    /// whatever the others come to.
    pub fn still_pending<'t>(
        &mut self,
        table: impl Fn(usize) -> &'t DfaTable,
        bytes: &[u8],
        origin: usize,
        eos: bool,
        steps: &mut usize,
    ) -> bool {
        if self.start != origin {
            return false;
        }
        if !eos && self.lead_pending(&table, bytes, origin, steps) {
            return true;
        }
        for j in 0..self.len {
            let k = self.runs[j].0;
            if self.continue_kept(j, table(k), bytes, origin, eos, steps) == Run::Pending {
                // Asked first next time: while a header streams, the one
                // thread still reading it decides each piece, and the
                // threads that settled early are not visited again (their
                // order among the kept threads means nothing).
                self.runs.swap(0, j);
                return true;
            }
        }
        false
    }

    /// Where the kept threads began, counted from `origin` (`None`: no
    /// thread is kept, or they began before it).
    #[inline]
    pub fn kept_from(&self, origin: usize) -> Option<usize> {
        match self.len {
            0 => None,
            _ => self.start.checked_sub(origin),
        }
    }

    /// The first kept thread (the one [`StartMemo::still_pending`] asks
    /// first) continued over the bytes it has not read, when every state it
    /// passes is one that goes on reading, undecided: a tool call's header
    /// streamed a token at a time spends most pieces there, and this loop
    /// tests one mask a byte where [`StartMemo::continue_kept`] records
    /// each step. `false` (the thread settled, matched, or may stop at the
    /// next byte) leaves the memo untouched, for that function to run the
    /// same thread again from the same stand.
    #[inline]
    fn lead_pending<'t>(
        &mut self,
        table: &impl Fn(usize) -> &'t DfaTable,
        bytes: &[u8],
        origin: usize,
        steps: &mut usize,
    ) -> bool {
        if self.len == 0 {
            return false;
        }
        let (k, stand, rec, next) = self.runs[0];
        let Some(fresh) = next.checked_sub(origin).and_then(|from| bytes.get(from..)) else {
            // (A settled thread's next byte is `SETTLED`: none to read.)
            return false;
        };
        let t = table(k);
        let mut q = stand;
        for &b in fresh {
            q = t.next(q, b);
            // Still able to match later, not matching here, and not
            // certain of a match (which `run_from` settles at once).
            if t.flags(q) & (MATCH | FUT | CERTAIN) != FUT {
                return false;
            }
        }
        self.runs[0] = (k, q, rec, origin + bytes.len());
        self.spent += fresh.len();
        *steps += fresh.len();
        true
    }

    /// The kept thread `j` (at the memo's start, `origin`, where `bytes`
    /// begin) continued over the new text: its stand is updated, or its
    /// result kept once it settles, so that later pieces, while another
    /// thread at the same start is pending, do not run it again.
    fn continue_kept(
        &mut self,
        j: usize,
        table: &DfaTable,
        bytes: &[u8],
        origin: usize,
        eos: bool,
        steps: &mut usize,
    ) -> Run {
        let (k, q, rec, next) = self.runs[j];
        if next == SETTLED {
            return rec.map_or(Run::NoMatch, |e| Run::Match(e - origin));
        }
        let from = (q, rec.map(|e| e - origin), next - origin);
        let read = *steps;
        let (run, (q, rec, next)) = run_from(table, bytes, 0, None, eos, steps, Some(from));
        self.spent += *steps - read;
        self.runs[j] = match run {
            Run::Pending => (k, q, rec.map(|e| e + origin), next + origin),
            Run::Match(end) => (k, q, Some(origin + end), SETTLED),
            Run::NoMatch => (k, q, None, SETTLED),
        };
        run
    }

    /// Entry `entry`'s automaton thread from `s` of `bytes`, which begin at
    /// absolute offset `origin`, run alone until it settles (as the
    /// scanner's thread would: see `run_from`): going on from where an
    /// earlier piece left the same thread pending, and keeping it if it is
    /// pending still.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn run(
        &mut self,
        table: &DfaTable,
        entry: usize,
        bytes: &[u8],
        origin: usize,
        s: usize,
        prev: Option<u8>,
        eos: bool,
        steps: &mut usize,
    ) -> Run {
        let at = origin + s;
        // A thread kept at this start goes on from where it stands (`s` is
        // then 0: the memo's start is where `bytes` begin).
        if self.start == at
            && let Some(j) = self.runs[..self.len].iter().position(|r| r.0 == entry)
        {
            return self.continue_kept(j, table, &bytes[s..], at, eos, steps);
        }
        let read = *steps;
        let (run, (q, rec, next)) = run_from(table, bytes, s, prev, eos, steps, None);
        self.spent += *steps - read;
        if run == Run::Pending {
            if self.start != at {
                self.start = at;
                self.len = 0;
            }
            let stand = (entry, q, rec.map(|e| e + origin), next + origin);
            if self.len < self.runs.len() {
                self.runs[self.len] = stand;
                self.len += 1;
            }
        }
        run
    }
}

/// A machine's search at one position of the text (see
/// [`crate::machine::Machine::find_started`]): `starts` holds (start,
/// entry) pairs, the positions where a match of the entry may begin, none
/// before a start already searched. `keys[entry]` is the entry's (kind,
/// name rank), and `run(entry, start)` the entry's thread from there (see
/// [`StartMemo::run`]). In start order, as the scanner decides: the first
/// start at which some thread is pending holds the text from there; the
/// first at which some thread matches commits the best of its matches
/// (the longest, then opens before closes, field name, entry). `None`:
/// nothing begins at these starts.
///
/// Once a thread is pending at a start, the remaining entries' threads
/// there are run too, over the text at hand (`len` bytes; their results
/// do not change the answer), when that thread has read more than one
/// byte or the start is `resumed`, where the memo kept threads before
/// this search (relative, see [`StartMemo::kept_from`]; they have settled
/// and another entry's thread reads on). Kept in the memo, they go on
/// from where they stand when the pending one settles, instead of being
/// started again over the held text by one more search: a tool call's
/// header held at `<|channel|>` passes from one entry's literal to the
/// next as it streams. A hold of one byte (a piece ending in a space, say)
/// leaves the others to wait: most such holds end with the next byte.
pub fn decide_starts(
    starts: &mut [(usize, usize)],
    keys: &[(u8, u16)],
    resumed: Option<usize>,
    len: usize,
    mut run: impl FnMut(usize, usize) -> Run,
) -> Option<LiteralHit> {
    starts.sort_unstable();
    let mut g = 0;
    while g < starts.len() {
        let s = starts[g].0;
        // (length inverted, kind, name rank, entry) of the best match at s.
        let mut best: Option<(usize, u8, u16, usize)> = None;
        let mut last = usize::MAX;
        let mut pending = false;
        while g < starts.len() && starts[g].0 == s {
            let k = starts[g].1;
            g += 1;
            // Two literals of one entry can give the same start.
            if k == last {
                continue;
            }
            last = k;
            match run(k, s) {
                // A match here cannot be chosen before this thread settles.
                // (`s < len`: every start is a byte of the text.)
                Run::Pending if resumed != Some(s) && len - s < 2 => {
                    return Some(LiteralHit::Partial(s));
                }
                Run::Pending => pending = true,
                Run::Match(end) => {
                    let key = (usize::MAX - (end - s), keys[k].0, keys[k].1, k);
                    if best.is_none_or(|b| (key.0, key.1, key.2) < (b.0, b.1, b.2)) {
                        best = Some(key);
                    }
                }
                Run::NoMatch => {}
            }
        }
        if pending {
            return Some(LiteralHit::Partial(s));
        }
        if let Some((inv, _, _, k)) = best {
            return Some(LiteralHit::Found {
                at: s,
                len: usize::MAX - inv,
                entry: k,
            });
        }
    }
    None
}

/// How many live threads of one delimiter are stepped before those that
/// share a branch and state are dropped (see [`dedup`]).
const DEDUP_ABOVE: usize = 4;

/// Marks a thread settled when its flags say its result cannot change.
#[inline(always)]
fn settle(t: &mut Thread, flags: u8, at: usize) {
    if flags & FUT == 0 {
        t.settled = true;
    } else if flags & CERTAIN != 0 && flags & LATER == 0 {
        t.rec = Some(at);
        t.settled = true;
    }
}

/// Drops threads that cannot affect the result: settled threads without a
/// match, and later threads that share an earlier thread's branch and state.
///
/// Two such threads have the same future. If the future holds a match, the
/// earlier one wins (leftmost). If not, each keeps its last recorded match,
/// so the later one matters only when it recorded a match and the earlier did
/// not.
fn dedup(threads: &mut Vec<Thread>) {
    threads.retain(|t| !t.settled || t.rec.is_some());
    if threads.len() < 2 {
        return;
    }
    let mut k = 1;
    while k < threads.len() {
        let t = threads[k];
        let redundant = !t.settled
            && threads[..k].iter().any(|e| {
                !e.settled
                    && e.branch == t.branch
                    && e.state == t.state
                    && (e.rec.is_some() || t.rec.is_none())
            });
        if redundant {
            threads.remove(k);
        } else {
            k += 1;
        }
    }
}

/// Sets `best` once the first thread (leftmost start, highest-priority
/// branch) is settled with a match; later threads then no longer matter.
#[inline]
fn update_best(p: &mut PatScan) {
    if let Some(first) = p.threads.first()
        && first.settled
        && let Some(end) = first.rec
    {
        p.best = Some(Found {
            start: first.start,
            end,
        });
        p.threads.clear();
    }
}

/// The next offset at or after `i` whose byte can begin a watched delimiter.
fn skip(ws: &WatchSet, bytes: &[u8], base: usize, i: usize) -> usize {
    match ws.stops.find(&bytes[i - base..]) {
        Some(off) => i + off,
        None => base + bytes.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::delimiter::{Delimiter, Trackers};

    /// `lacks_bytes` against the byte-by-byte definition: every length up
    /// to 40 (each of its word cases and `memchr`'s), the set's byte at
    /// every position and nowhere, sets of one to four bytes.
    #[test]
    fn lacks_bytes_is_the_bytewise_test() {
        let sets: [&[u8]; 4] = [b"<", b"<t", b"\n<[", b"<>ab"];
        for set in sets {
            for n in 0..40 {
                for at in (0..n).map(Some).chain([None]) {
                    // Bytes near the set's (one off, high bit set).
                    let mut hay: Vec<u8> =
                        (0..n).map(|i| [b'=', b';', 0xBC, b'u'][i % 4]).collect();
                    if let Some(at) = at {
                        hay[at] = set[at % set.len()];
                    }
                    let expected = !hay.iter().any(|b| set.contains(b));
                    let got = match *set {
                        [a] => lacks_bytes(&hay, [a]),
                        [a, b] => lacks_bytes(&hay, [a, b]),
                        [a, b, c] => lacks_bytes(&hay, [a, b, c]),
                        [a, b, c, d] => lacks_bytes(&hay, [a, b, c, d]),
                        _ => unreachable!("the sets above"),
                    };
                    assert_eq!(got, expected, "set {set:?}, {n} bytes, member at {at:?}");
                }
            }
        }
    }

    struct NoGuards;
    impl Guards for NoGuards {
        fn holds(&self, _: u16, _: usize) -> bool {
            false
        }
    }

    /// Watches `delims` (all as opens of fields 0, 1, ...) and returns the
    /// decision after reading `text` (and the end of input with `eos`).
    fn decide(delims: &[Delimiter], text: &str, eos: bool) -> Decision {
        let entries = (0..delims.len())
            .map(|i| Watch {
                delim: i as u16,
                kind: Kind::Open,
                field: i as u16,
                name_rank: i as u16,
            })
            .collect();
        let ws = WatchSet::new(entries, delims);
        let mut scan = StreamScan::default();
        scan.reset(&ws, 0);
        let hay = Hay {
            text,
            base: 0,
            before: None,
        };
        let automata = IrAutomata { ws: &ws, delims };
        scan.advance_with(
            &ws,
            delims,
            automata,
            &hay,
            &NoGuards,
            eos,
            false,
            |_, _, _, _, _| None,
        );
        scan.decide(&ws, delims, &hay, eos, false, |_, _, _, _| None)
            .expect("no budget trouble")
    }

    fn lit(s: &[&str]) -> Delimiter {
        Delimiter::from_literals(
            s.iter().map(|x| x.to_string()).collect(),
            &mut Trackers::default(),
        )
        .unwrap()
    }

    fn pat(p: &str) -> Delimiter {
        Delimiter::from_pattern(p, &mut Trackers::default()).unwrap()
    }

    fn commit(entry: usize, start: usize, end: usize) -> Decision {
        Decision::Commit {
            entry,
            start,
            end,
            captures: Vec::new(),
        }
    }

    #[test]
    fn text_before_a_possible_delimiter_is_released() {
        assert_eq!(
            decide(&[lit(&["<think>"])], "hello <thi", false),
            Decision::Hold(6)
        );
        assert_eq!(
            decide(&[lit(&["<think>"])], "hello <tx", false),
            Decision::Hold(9)
        );
        assert_eq!(
            decide(&[lit(&["<think>"])], "hello <think>", false),
            commit(0, 6, 13)
        );
    }

    #[test]
    fn leftmost_then_longest_then_entry_order() {
        let d = [lit(&["<x"]), lit(&["<xy"])];
        assert_eq!(decide(&d, "a<xy!", false), commit(1, 1, 4));
        assert_eq!(decide(&d, "a<x!", false), commit(0, 1, 3));
        // "<x" is complete but "<xy" could still match at the same start.
        assert_eq!(decide(&d, "a<x", false), Decision::Hold(1));
        assert_eq!(decide(&d, "a<x", true), commit(0, 1, 3));
    }

    #[test]
    fn an_optional_tail_holds_until_settled() {
        let d = [pat(r"</c>\s*(?:</cs>)?")];
        assert_eq!(decide(&d, "x</c>\n</c", false), Decision::Hold(1));
        assert_eq!(decide(&d, "x</c>\n</cs>", false), commit(0, 1, 11));
        assert_eq!(decide(&d, "x</c>\n</cx", false), commit(0, 1, 6));
        assert_eq!(decide(&d, "x</c>\n</c", true), commit(0, 1, 6));
    }

    #[test]
    fn a_trailing_lookahead_commits_its_real_end() {
        let d = [pat("(?=<call>)|<end>")];
        assert_eq!(decide(&d, "ab<ca", false), Decision::Hold(2));
        assert_eq!(decide(&d, "ab<call>", false), commit(0, 2, 2));
    }

    #[test]
    fn end_of_text_assertions_wait_for_the_end() {
        let d = [pat(r"\Z")];
        assert_eq!(decide(&d, "abc", false), Decision::Hold(3));
        // At the end a match starting at the text's end is never committed
        // (the reference's hold point is the end): nothing to commit.
        assert_eq!(decide(&d, "abc", true), Decision::Hold(3));
        // `$` also matches before a final newline, which is before the end.
        let d = [pat("$")];
        assert_eq!(decide(&d, "abc\n", true), commit(0, 3, 3));
    }

    #[test]
    fn backtracking_delimiters_settle_starts_once() {
        // A backreference has no DFA: the backtracking path finds it.
        let d = pat(r"<(\w)>.*?</\1>");
        assert!(!d.is_dfa());
        let ds = [d];
        assert_eq!(decide(&ds, "x<a> </b>", false), Decision::Hold(1));
        assert_eq!(decide(&ds, "x<a> </b></a>!", false), commit(0, 1, 13));
    }
}
