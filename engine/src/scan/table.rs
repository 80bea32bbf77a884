//! Delimiter automata as flat tables.
//!
//! A [`DfaTable`] is a deterministic automaton over bytes, extracted from a
//! regex-automata dense DFA into plain arrays. Plain arrays serve both back
//! ends: the run-time loader keeps them in `Vec`s, the compiler writes them out
//! as `static` data (`Cow::Borrowed`), and the scanner reads both the same way.
//!
//! Besides the transitions, every state carries flags that the streaming
//! scanner needs to decide *as early as possible* whether a match is final.
//! regex-automata reports matches one byte late (a state is a match state when
//! a match ended just before the byte that led to it); the flags fold that
//! delay into three questions about a thread sitting in state `q` at position
//! `p`:
//!
//! - [`FUT`]: can a match ending at `p` or later still happen?
//! - [`CERTAIN`]: is a match ending exactly at `p` already certain, whatever
//!   follows (every next byte, and the end of input, report it)?
//! - [`LATER`]: can a match ending after `p` still happen?
//!
//! A leftmost-first thread's result is the last match it saw before dying, so
//! a thread is resolved once `!FUT` (its last recorded match, if any, is final)
//! or `CERTAIN && !LATER` (the match ends here). That is what lets a literal
//! delimiter commit on its last byte instead of one byte later.

#[cfg(feature = "dynamic")]
use regex_automata::dfa::{Automaton, StartKind, dense};
#[cfg(feature = "dynamic")]
use regex_automata::nfa::thompson;
#[cfg(feature = "dynamic")]
use regex_automata::util::primitives::StateID;
#[cfg(feature = "dynamic")]
use regex_automata::util::start;
#[cfg(feature = "dynamic")]
use regex_automata::{Anchored, MatchKind};
#[cfg(feature = "dynamic")]
use regex_syntax::hir::Hir;
use std::borrow::Cow;
#[cfg(feature = "dynamic")]
use std::collections::HashMap;

/// A state was reached with a match ending just before the byte that led
/// here (regex-automata's delayed match).
pub const MATCH: u8 = 1;
/// The end of input right after this state reports a match ending here.
pub const EOI_MATCH: u8 = 2;
/// A match ending at the current position or later is still possible.
pub const FUT: u8 = 4;
/// A match ending at the current position is certain, whatever follows.
pub const CERTAIN: u8 = 8;
/// A match ending after the current position is still possible.
pub const LATER: u8 = 16;

/// The dead state: no match is possible from it, and it never leaves.
/// (State index 0 with no flags: its encoding is 0 too.)
pub const DEAD: u32 = 0;

/// How many low bits of an encoded state hold its flags.
pub const FLAG_BITS: u32 = 5;

/// The largest `trans` whose row offsets, shifted by [`FLAG_BITS`], fit
/// in a `u32`.
#[cfg(feature = "dynamic")]
const MAX_TRANS: usize = (u32::MAX >> FLAG_BITS) as usize;

/// A DFA over bytes as flat tables. State 0 is the dead state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DfaTable {
    /// Byte to equivalence class; 256 entries.
    pub classes: Cow<'static, [u8]>,
    /// Number of equivalence classes (the row length of `trans`).
    pub stride: u32,
    /// The transitions, row after row. A state is named by its encoding
    /// (see [`DfaTable::next`]): its row's offset in `trans`, shifted left
    /// by [`FLAG_BITS`], with its flags in the low bits. A step is then one
    /// load whose result both indexes the next row and carries the flags
    /// the scanner tests, with no multiply and no second table on the
    /// path from one byte to the next.
    pub trans: Cow<'static, [u32]>,
    /// The encoded state reached from each state (by index) by the end of
    /// input.
    pub eoi: Cow<'static, [u32]>,
    /// Per-state flags, by state index: [`MATCH`], [`EOI_MATCH`], [`FUT`],
    /// [`CERTAIN`], [`LATER`] (the same bits the encoding carries).
    pub flags: Cow<'static, [u8]>,
    /// The start state at offset 0 of the text.
    pub start_text: u32,
    /// `start_after[b]` is the start state at an offset whose previous byte is `b`
    /// (the start configuration depends on it for `^`, `$` and word boundaries).
    pub start_after: Cow<'static, [u32]>,
}

/// Why a DFA could not be built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableError {
    /// What went wrong, in words.
    pub message: String,
}

impl std::fmt::Display for TableError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// How a table is used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableKind {
    /// Anchored at a start position, leftmost-first: the delimiter matcher.
    Anchored,
    /// Unanchored, reporting every match end: tracks where a lookbehind holds.
    Tracker,
}

/// Size limit for one determinised automaton. Delimiters are short patterns;
/// one that blows past this gets the backtracking path instead.
#[cfg(feature = "dynamic")]
const SIZE_LIMIT: usize = 8 << 20;

#[cfg(feature = "dynamic")]
impl DfaTable {
    /// Builds the table for `hir`.
    pub fn build(hir: &Hir, kind: TableKind) -> Result<DfaTable, TableError> {
        let err = |e: &dyn std::fmt::Display| TableError {
            message: e.to_string(),
        };
        let nfa = thompson::Compiler::new()
            .configure(
                thompson::Config::new()
                    .which_captures(thompson::WhichCaptures::None)
                    .shrink(true),
            )
            .build_from_hir(hir)
            .map_err(|e| err(&e))?;
        let (match_kind, start_kind) = match kind {
            TableKind::Anchored => (MatchKind::LeftmostFirst, StartKind::Anchored),
            TableKind::Tracker => (MatchKind::All, StartKind::Unanchored),
        };
        let dfa = dense::Builder::new()
            .configure(
                dense::Config::new()
                    .match_kind(match_kind)
                    .start_kind(start_kind)
                    .byte_classes(true)
                    .unicode_word_boundary(false)
                    .dfa_size_limit(Some(SIZE_LIMIT))
                    .determinize_size_limit(Some(SIZE_LIMIT)),
            )
            .build_from_nfa(&nfa)
            .map_err(|e| err(&e))?;
        let anchored = match kind {
            TableKind::Anchored => Anchored::Yes,
            TableKind::Tracker => Anchored::No,
        };
        Self::extract(&dfa, anchored)
    }

    fn extract(dfa: &dense::DFA<Vec<u32>>, anchored: Anchored) -> Result<DfaTable, TableError> {
        let byte_classes = dfa.byte_classes();
        let mut classes = vec![0u8; 256];
        let mut stride = 0u32;
        let mut representative = Vec::new();
        for b in 0..=255u8 {
            let c = byte_classes.get(b);
            classes[b as usize] = c;
            if u32::from(c) >= stride {
                stride = u32::from(c) + 1;
                representative.resize(stride as usize, 0u8);
            }
            representative[c as usize] = b;
        }
        let start_err = |e: regex_automata::dfa::StartError| TableError {
            message: format!("no start state: {e}"),
        };
        let start_for = |lb: Option<u8>| {
            dfa.start_state(&start::Config::new().anchored(anchored).look_behind(lb))
                .map_err(start_err)
        };

        // Number the states reachable from the start states; the dead state
        // is 0 whatever regex-automata calls it.
        let mut index: HashMap<StateID, u32> = HashMap::new();
        let mut order: Vec<StateID> = Vec::new();
        // regex-automata's dense DFAs always give the dead state ID 0.
        let dead = StateID::ZERO;
        index.insert(dead, DEAD);
        order.push(dead);
        let mut visit = |id: StateID, order: &mut Vec<StateID>| -> Result<u32, TableError> {
            if dfa.is_quit_state(id) {
                return Err(TableError {
                    message: "automaton needs a quit state".into(),
                });
            }
            if let Some(&i) = index.get(&id) {
                return Ok(i);
            }
            let i = u32::try_from(order.len()).map_err(|_| TableError {
                message: "too many states".into(),
            })?;
            index.insert(id, i);
            order.push(id);
            Ok(i)
        };
        let start_text = visit(start_for(None)?, &mut order)?;
        let mut start_after = Vec::with_capacity(256);
        for b in 0..=255u8 {
            start_after.push(visit(start_for(Some(b))?, &mut order)?);
        }
        let mut trans = Vec::new();
        let mut eoi = Vec::new();
        let mut is_match = Vec::new();
        let mut next = 0;
        while next < order.len() {
            let id = order[next];
            next += 1;
            for &b in &representative {
                let to = dfa.next_state(id, b);
                let i = visit(to, &mut order)?;
                trans.push(i);
            }
            let to = dfa.next_eoi_state(id);
            let i = visit(to, &mut order)?;
            eoi.push(i);
            is_match.push(dfa.is_match_state(id));
        }
        let flags = compute_flags(stride as usize, &trans, &eoi, &is_match);
        if trans.len() > MAX_TRANS {
            return Err(TableError {
                message: "too many states".into(),
            });
        }
        let encode = |q: u32| ((q * stride) << FLAG_BITS) | u32::from(flags[q as usize]);
        let trans = trans.into_iter().map(encode).collect();
        let eoi = eoi.into_iter().map(encode).collect();
        let start_after = start_after.into_iter().map(encode).collect();
        Ok(DfaTable {
            classes: Cow::Owned(classes),
            stride,
            trans: Cow::Owned(trans),
            eoi: Cow::Owned(eoi),
            start_text: encode(start_text),
            flags: Cow::Owned(flags),
            start_after: Cow::Owned(start_after),
        })
    }
}

impl DfaTable {
    /// The (encoded) state after the encoded `state` reads `byte`.
    #[inline(always)]
    pub fn next(&self, state: u32, byte: u8) -> u32 {
        let class = self.classes[byte as usize] as usize;
        self.trans[(state >> FLAG_BITS) as usize + class]
    }

    /// The (encoded) state after the encoded `state` reaches the end of
    /// input.
    #[inline(always)]
    pub fn next_eoi(&self, state: u32) -> u32 {
        self.eoi[self.index(state)]
    }

    /// The flags of the encoded `state`.
    #[inline(always)]
    pub fn flags(&self, state: u32) -> u8 {
        (state & ((1 << FLAG_BITS) - 1)) as u8
    }

    /// The index (0 for the dead state, in `flags` and `eoi`) of the
    /// encoded `state`.
    #[inline(always)]
    pub fn index(&self, state: u32) -> usize {
        ((state >> FLAG_BITS) / self.stride.max(1)) as usize
    }

    /// The flags of the state with index `index`.
    pub fn flags_of_index(&self, index: usize) -> u8 {
        self.flags[index]
    }

    /// The start state at `offset`, whose previous byte is `prev` (`None` at
    /// offset 0 of the text).
    #[inline(always)]
    pub fn start(&self, prev: Option<u8>) -> u32 {
        match prev {
            None => self.start_text,
            Some(b) => self.start_after[b as usize],
        }
    }

    /// Whether the start state is the same whatever precedes the start
    /// position (no `^`, `$`-before or word boundary at the start).
    pub fn context_free(&self) -> bool {
        self.start_after.iter().all(|&s| s == self.start_text)
    }

    /// Number of states, the dead state included.
    pub fn state_count(&self) -> usize {
        self.flags.len()
    }

    /// The bytes on which some start state does not die at once: a match can
    /// only begin at a byte of this set (or be empty).
    pub fn first_bytes(&self) -> [bool; 256] {
        let mut set = [false; 256];
        let mut starts: Vec<u32> = self.start_after.to_vec();
        starts.push(self.start_text);
        starts.sort_unstable();
        starts.dedup();
        for s in starts {
            for (b, slot) in set.iter_mut().enumerate() {
                let to = self.next(s, b as u8);
                if self.flags(to) & (FUT | MATCH) != 0 {
                    *slot = true;
                }
            }
        }
        set
    }

    /// Whether some start state can match the empty string (it then needs no
    /// byte at all to match).
    pub fn may_match_empty(&self) -> bool {
        let mut starts: Vec<u32> = self.start_after.to_vec();
        starts.push(self.start_text);
        starts.iter().any(|&s| {
            let f = self.flags(s);
            f & EOI_MATCH != 0 || (0..=255u8).any(|b| self.flags(self.next(s, b)) & MATCH != 0)
        })
    }
}

/// Computes [`MATCH`], [`EOI_MATCH`], [`FUT`], [`CERTAIN`] and [`LATER`].
#[cfg(feature = "dynamic")]
fn compute_flags(stride: usize, trans: &[u32], eoi: &[u32], is_match: &[bool]) -> Vec<u8> {
    let n = is_match.len();
    let mut flags = vec![0u8; n];
    for q in 0..n {
        if is_match[q] {
            flags[q] |= MATCH;
        }
        if is_match[eoi[q] as usize] {
            flags[q] |= EOI_MATCH;
        }
    }
    // FUT is a least fixed point: a match ends here (the end of input or some
    // next byte reports it), or some successor has FUT. Propagate backwards.
    let mut preds: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut fut = vec![false; n];
    let mut work = Vec::new();
    for q in 0..n {
        let row = &trans[q * stride..(q + 1) * stride];
        for &to in row {
            preds[to as usize].push(q as u32);
        }
        let ends_here = flags[q] & EOI_MATCH != 0 || row.iter().any(|&to| is_match[to as usize]);
        if ends_here && q as u32 != DEAD {
            fut[q] = true;
            work.push(q as u32);
        }
    }
    while let Some(q) = work.pop() {
        for &p in &preds[q as usize] {
            if !fut[p as usize] && p != DEAD {
                fut[p as usize] = true;
                work.push(p);
            }
        }
    }
    for q in 0..n {
        let row = &trans[q * stride..(q + 1) * stride];
        if fut[q] {
            flags[q] |= FUT;
        }
        if flags[q] & EOI_MATCH != 0 && row.iter().all(|&to| is_match[to as usize]) {
            flags[q] |= CERTAIN;
        }
        if row.iter().any(|&to| fut[to as usize]) {
            flags[q] |= LATER;
        }
    }
    flags
}

#[cfg(all(test, feature = "dynamic"))]
mod tests {
    use super::*;

    fn table(pattern: &str) -> DfaTable {
        let hir = regex_syntax::ParserBuilder::new()
            .dot_matches_new_line(true)
            .build()
            .parse(pattern)
            .unwrap();
        DfaTable::build(&hir, TableKind::Anchored).unwrap()
    }

    /// Runs an anchored thread from `start` over `hay` the way the scanner
    /// does, returning (resolved at, match end) or None if still pending.
    fn run(t: &DfaTable, hay: &[u8], start: usize, eoi: bool) -> Option<(usize, Option<usize>)> {
        let mut q = t.start(if start == 0 {
            None
        } else {
            Some(hay[start - 1])
        });
        let mut rec = None;
        let mut p = start;
        loop {
            let f = t.flags(q);
            if f & FUT == 0 {
                return Some((p, rec));
            }
            if f & CERTAIN != 0 && f & LATER == 0 {
                return Some((p, Some(p)));
            }
            if p == hay.len() {
                if !eoi {
                    return None;
                }
                let e = t.next_eoi(q);
                if t.flags(e) & MATCH != 0 {
                    rec = Some(p);
                }
                return Some((p, rec));
            }
            q = t.next(q, hay[p]);
            if t.flags(q) & MATCH != 0 {
                rec = Some(p);
            }
            p += 1;
        }
    }

    #[test]
    fn literal_resolves_on_its_last_byte() {
        let t = table("</think>");
        assert_eq!(run(&t, b"</think>", 0, false), Some((8, Some(8))));
        assert_eq!(run(&t, b"</thin", 0, false), None);
        assert_eq!(run(&t, b"</tx", 0, false), Some((4, None)));
    }

    #[test]
    fn greedy_tail_waits_for_a_byte_that_ends_it() {
        let t = table(r"</call>\s*(?:</calls>)?");
        assert_eq!(run(&t, b"</call>\n", 0, false), None);
        assert_eq!(run(&t, b"</call>\n</cal", 0, false), None);
        assert_eq!(run(&t, b"</call>\n</calx", 0, false), Some((14, Some(8))));
        assert_eq!(
            run(&t, b"</call>\n</calls>", 0, false),
            Some((16, Some(16)))
        );
        assert_eq!(run(&t, b"</call>\n", 0, true), Some((8, Some(8))));
    }

    #[test]
    fn lazy_middle_resolves_at_the_first_terminator() {
        let t = table(r"<a>.*?<b>");
        assert_eq!(run(&t, b"<a> x <b> y <b>", 0, false), Some((9, Some(9))));
        assert_eq!(run(&t, b"<a> x <", 0, false), None);
    }

    #[test]
    fn end_of_text_only_at_finalize() {
        let t = table(r"\s*<eot>|\z");
        assert_eq!(run(&t, b"abc", 3, false), None);
        assert_eq!(run(&t, b"abc", 3, true), Some((3, Some(3))));
        assert_eq!(run(&t, b"abc", 1, false), Some((2, None)));
        assert_eq!(run(&t, b"  <eot>", 0, false), Some((7, Some(7))));
    }

    #[test]
    fn start_of_text_depends_on_the_previous_byte() {
        let t = table(r"(?:\A|<think>\s*)");
        // At offset 0 the empty alternative matches at once.
        assert_eq!(run(&t, b"abc", 0, false), Some((0, Some(0))));
        // Elsewhere only "<think>" does.
        assert_eq!(run(&t, b"x<think>a", 1, false), Some((9, Some(8))));
        assert_eq!(run(&t, b"xy", 1, false), Some((2, None)));
    }

    #[test]
    fn tracker_reports_every_match_end() {
        let hir = regex_syntax::parse(r"\n").unwrap();
        let t = DfaTable::build(&hir, TableKind::Tracker).unwrap();
        let hay = b"a\nb\n";
        let mut q = t.start(None);
        let mut ends = Vec::new();
        for (i, &b) in hay.iter().enumerate() {
            q = t.next(q, b);
            if t.flags(q) & MATCH != 0 {
                ends.push(i);
            }
        }
        if t.flags(t.next_eoi(q)) & MATCH != 0 {
            ends.push(hay.len());
        }
        assert_eq!(ends, vec![2, 4]);
    }
}
