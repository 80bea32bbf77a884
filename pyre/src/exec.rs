//! The backtracking VM.
//!
//! Threads are explored depth first in priority order, so the first match
//! found is the `regex` module's (leftmost-first) match. The backtrack stack
//! holds alternatives and undo records for captures and loop registers.
//! Lookarounds and atomic groups run their body and, on success, cut the
//! alternatives the body left behind (keeping the undo records, so that
//! backtracking past the construct still restores captures).
//!
//! Without backreferences, whether the rest of the pattern can match from a
//! choice point depends only on `(pc, pos)` (outside loops that keep
//! registers), so a choice point whose alternatives have all failed is
//! remembered and never explored again. This keeps ordinary patterns
//! polynomial. A step budget bounds everything else.

use super::ast::{Assertion, Fold};
use super::class::{is_word, same_ignoring_case};
use super::compile::{Inst, One, Peek, Program, Required, StartScan, in_byte_set};

/// The most steps one call may take.
pub(crate) const STEP_BUDGET: u64 = 10_000_000;

/// What one look-up or insertion in the keyed memo (backreferences) counts
/// as, in steps: hashing the captures costs about that many plain steps, and
/// the budget is meant to bound time.
const KEYED_MEMO_COST: u64 = 32;

/// Steps after which the failure memo is switched on (small searches never
/// pay for allocating it).
const MEMO_AFTER: u64 = 2_000;

/// The most bits the failure memo may take.
const MEMO_MAX_BITS: usize = 1 << 27;

/// How the end of the haystack is treated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// The end of the haystack is the end of the text.
    Complete,
    /// Reading past the end is a partial match (Python's `partial=True`).
    Partial,
    /// The text may continue: touching the end is recorded in `hit_end`.
    Incomplete,
}

/// What one attempt produced.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// A match; the spans are in [`Vm::spans`].
    Match,
    /// No match from this start.
    NoMatch,
    /// (Partial mode) a path read past the end.
    Partial,
    /// The step budget ran out.
    Budget,
}

const NONE: usize = usize::MAX;

#[derive(Clone, Copy, Debug)]
enum Bt {
    /// Resume at `pc`, `pos`.
    Alt { pc: u32, pos: usize },
    /// Both alternatives of a memoizable choice point failed.
    Memo { slot: u32, pos: usize },
    /// Undo a committed group span.
    Cap {
        group: u32,
        start: usize,
        end: usize,
    },
    /// Undo a group's open position.
    Open { group: u32, pos: usize },
    /// Undo a loop register.
    Reg { reg: u32, count: u32, start: usize },
    /// The body of a lookaround failed.
    LookFail { negate: bool, next: u32, pos: usize },
    /// The body of an atomic group failed.
    AtomicFail,
    /// Extend the lazy repeat at `pc` (which began at `start`) by one more
    /// character from `pos` (`count` characters so far).
    LazyMore {
        pc: u32,
        start: usize,
        pos: usize,
        count: u32,
    },
}

/// Where the module's search scan (partial mode) leads.
pub(crate) enum Scan {
    /// Attempt a match here.
    At(usize),
    /// Report a partial match starting here, with no groups.
    Partial(usize),
    /// No candidate is left.
    Exhausted,
}

/// What extending a lazy single-character repeat gave.
enum Extend {
    /// Continue with the tail at this position, after this many characters.
    To(usize, u32),
    /// No further extension.
    Fail,
    /// (Partial mode) report a partial match.
    Partial,
}

/// The matcher state for one haystack.
pub(crate) struct Vm<'p, 'h> {
    prog: &'p Program,
    hay: &'h str,
    mode: Mode,
    /// Where the search started (`\G`, and the empty-match rule of finditer).
    anchor: usize,
    /// Reject a match that ends at `anchor` (after an empty match in finditer).
    must_advance: bool,
    /// Committed spans, two entries per group.
    pub(crate) spans: Vec<usize>,
    open: Vec<usize>,
    regs: Vec<(u32, usize)>,
    bt: Vec<Bt>,
    /// Indices in `bt` of the active lookaround/atomic frames.
    frames: Vec<usize>,
    /// Whether any explored path touched the end (Incomplete mode).
    pub(crate) hit_end: bool,
    steps: u64,
    /// The most steps this VM may take (at most [`STEP_BUDGET`]).
    step_limit: u64,
    memo: Vec<u64>,
    memo_on: bool,
    memo_stride: usize,
    /// The memo when backreferences make captures part of the state.
    memo_set: std::collections::HashSet<(u32, usize, Box<[usize]>)>,
    fail_now: bool,
}

/// What peeking at a repeat's decision point found (partial mode).
enum PeekResult {
    /// Report a partial match now.
    Partial,
    /// Do not try the body; continue with the tail at this pc.
    SkipBody(u32),
    /// Nothing special.
    Go,
}

impl<'p, 'h> Vm<'p, 'h> {
    pub(crate) fn new(prog: &'p Program, hay: &'h str, mode: Mode, anchor: usize) -> Vm<'p, 'h> {
        Vm {
            prog,
            hay,
            mode,
            anchor,
            must_advance: false,
            spans: vec![NONE; prog.groups * 2],
            open: vec![NONE; prog.groups],
            regs: vec![(0, 0); prog.regs],
            bt: Vec::new(),
            frames: Vec::new(),
            hit_end: false,
            steps: 0,
            step_limit: STEP_BUDGET,
            memo: Vec::new(),
            memo_on: false,
            memo_stride: hay.len() + 1,
            memo_set: std::collections::HashSet::new(),
            fail_now: false,
        }
    }

    /// Lowers the step limit (a caller's budget shared across attempts).
    pub(crate) fn set_step_limit(&mut self, limit: u64) {
        self.step_limit = limit.min(STEP_BUDGET);
    }

    /// Steps taken so far.
    pub(crate) fn steps(&self) -> u64 {
        self.steps
    }

    pub(crate) fn set_must_advance(&mut self, on: bool) {
        self.must_advance = on;
    }

    /// The span of group `g` after a match (or at a partial match).
    pub(crate) fn span(&self, g: usize) -> Option<(usize, usize)> {
        let s = self.spans[2 * g];
        if s == NONE {
            None
        } else {
            Some((s, self.spans[2 * g + 1]))
        }
    }

    /// The character starting at `pos` (which must be a char boundary).
    #[inline]
    fn next_char(&self, pos: usize) -> Option<char> {
        self.hay.get(pos..).and_then(|s| s.chars().next())
    }

    /// The character ending at `pos`.
    #[inline]
    fn prev_char(&self, pos: usize) -> Option<char> {
        self.hay.get(..pos).and_then(|s| s.chars().next_back())
    }

    /// Reading past the end: fail, recording why. Returns `Some` to abort
    /// the whole attempt (partial match).
    #[inline]
    fn at_end(&mut self) -> Option<Outcome> {
        match self.mode {
            Mode::Partial => Some(Outcome::Partial),
            Mode::Incomplete => {
                self.hit_end = true;
                None
            }
            Mode::Complete => None,
        }
    }

    /// Whether the memo for `slot` needs more than `(slot, pos)`.
    fn keyed(&self, slot: u32) -> bool {
        !self.prog.backref_groups.is_empty()
            || self
                .prog
                .memo_regs
                .get(slot as usize)
                .is_some_and(|r| !r.is_empty())
    }

    /// The full memo key: the spans of the groups backreferences read and
    /// the registers of the loops around the choice point.
    fn backref_key(&self, slot: u32, pos: usize) -> (u32, usize, Box<[usize]>) {
        let regs = self
            .prog
            .memo_regs
            .get(slot as usize)
            .map_or(&[][..], |r| &r[..]);
        let extra = self
            .prog
            .backref_groups
            .iter()
            .flat_map(|&g| [self.spans[2 * g as usize], self.spans[2 * g as usize + 1]])
            .chain(regs.iter().flat_map(|&r| {
                let (count, start) = self.regs[r as usize];
                [count as usize, start]
            }))
            .collect();
        (slot, pos, extra)
    }

    fn memo_check(&mut self, slot: u32, pos: usize) -> bool {
        if !self.memo_on {
            return false;
        }
        if self.keyed(slot) {
            self.steps += KEYED_MEMO_COST;
            return self.memo_set.contains(&self.backref_key(slot, pos));
        }
        let bit = slot as usize * self.memo_stride + pos;
        self.memo[bit / 64] & (1 << (bit % 64)) != 0
    }

    fn memo_mark(&mut self, slot: u32, pos: usize) {
        if self.keyed(slot) {
            self.steps += KEYED_MEMO_COST;
            let key = self.backref_key(slot, pos);
            self.memo_set.insert(key);
            return;
        }
        let bit = slot as usize * self.memo_stride + pos;
        if let Some(w) = self.memo.get_mut(bit / 64) {
            *w |= 1 << (bit % 64);
        }
    }

    fn maybe_enable_memo(&mut self) {
        if self.memo_on || self.prog.memo_slots == 0 || self.steps < MEMO_AFTER {
            return;
        }
        let bits = self.prog.memo_slots.saturating_mul(self.memo_stride);
        if bits > MEMO_MAX_BITS {
            return;
        }
        self.memo = vec![0; bits.div_ceil(64)];
        self.memo_on = true;
    }

    /// Runs one anchored attempt at `start`. The failure memo persists
    /// across attempts on the same VM (a state that failed from one start
    /// fails from any).
    pub(crate) fn run(&mut self, start: usize) -> Outcome {
        for s in self.spans.iter_mut() {
            *s = NONE;
        }
        for o in self.open.iter_mut() {
            *o = NONE;
        }
        self.bt.clear();
        self.frames.clear();
        let out = self.exec(0, start);
        if out == Outcome::Match || out == Outcome::Partial {
            self.spans[0] = start;
            self.spans[1] = if out == Outcome::Partial {
                self.hay.len()
            } else {
                self.spans[1]
            };
        }
        out
    }

    fn exec(&mut self, mut pc: u32, mut pos: usize) -> Outcome {
        let prog: &'p Program = self.prog;
        let insts: &'p [Inst] = &prog.insts;
        loop {
            self.steps += 1;
            if self.steps > self.step_limit {
                return Outcome::Budget;
            }
            let ok = match &insts[pc as usize] {
                // One character forwards (or backwards, in a lookbehind):
                // the three instructions differ only in what they accept.
                inst @ (Inst::Char { rev, .. } | Inst::Class { rev, .. } | Inst::Any { rev }) => {
                    let ch = if *rev {
                        self.prev_char(pos)
                    } else {
                        self.next_char(pos)
                    };
                    match ch {
                        Some(ch) if accepts(prog, inst, ch) => {
                            pos = if *rev {
                                pos - ch.len_utf8()
                            } else {
                                pos + ch.len_utf8()
                            };
                            true
                        }
                        Some(_) => false,
                        None if *rev => false,
                        None => {
                            if let Some(o) = self.at_end() {
                                return o;
                            }
                            false
                        }
                    }
                }
                Inst::Fail => false,
                Inst::Split {
                    first,
                    second,
                    memo,
                    peek,
                } => {
                    let (mut first, second) = (*first, *second);
                    if self.mode == Mode::Partial && *peek != Peek::None {
                        match self.peek_split(*peek, pos) {
                            PeekResult::Partial => return Outcome::Partial,
                            PeekResult::SkipBody(tail) => first = tail,
                            PeekResult::Go => {}
                        }
                        if first == second {
                            pc = first;
                            continue;
                        }
                    }
                    if let Some(slot) = *memo {
                        self.maybe_enable_memo();
                        if self.memo_on {
                            if self.memo_check(slot, pos) {
                                self.fail_now = true;
                            } else {
                                self.bt.push(Bt::Memo { slot, pos });
                            }
                        }
                    }
                    if self.fail_now {
                        self.fail_now = false;
                        false
                    } else {
                        self.bt.push(Bt::Alt { pc: second, pos });
                        pc = first;
                        continue;
                    }
                }
                Inst::PeekTail => {
                    if self.mode == Mode::Partial && self.peek_partial(pc + 1, pos) {
                        return Outcome::Partial;
                    }
                    true
                }
                Inst::Jmp(t) => {
                    pc = *t;
                    continue;
                }
                Inst::Open { group } => {
                    let g = *group as usize;
                    self.bt.push(Bt::Open {
                        group: *group,
                        pos: self.open[g],
                    });
                    self.open[g] = pos;
                    true
                }
                Inst::Close { group } => {
                    let g = *group as usize;
                    self.bt.push(Bt::Cap {
                        group: *group,
                        start: self.spans[2 * g],
                        end: self.spans[2 * g + 1],
                    });
                    let o = self.open[g];
                    self.spans[2 * g] = o.min(pos);
                    self.spans[2 * g + 1] = o.max(pos);
                    true
                }
                Inst::Assert(kind) => self.assert(*kind, pos),
                Inst::Backref { group, fold, rev } => {
                    match self.backref(*group as usize, *fold, *rev, pos) {
                        Ok(Some(p)) => {
                            pos = p;
                            true
                        }
                        Ok(None) => false,
                        Err(o) => return o,
                    }
                }
                Inst::LoopInit { reg } => {
                    let r = *reg as usize;
                    let (count, start) = self.regs[r];
                    self.bt.push(Bt::Reg {
                        reg: *reg,
                        count,
                        start,
                    });
                    self.regs[r] = (0, pos);
                    true
                }
                Inst::IterStart { reg } => {
                    let r = *reg as usize;
                    let (count, start) = self.regs[r];
                    self.bt.push(Bt::Reg {
                        reg: *reg,
                        count,
                        start,
                    });
                    self.regs[r].1 = pos;
                    true
                }
                Inst::LoopTail {
                    reg,
                    max,
                    greedy,
                    body,
                    exit,
                    general,
                } => {
                    let r = *reg as usize;
                    let (count, start) = self.regs[r];
                    self.bt.push(Bt::Reg {
                        reg: *reg,
                        count,
                        start,
                    });
                    let count = count + 1;
                    self.regs[r].0 = count;
                    // Another iteration only if this one moved (the module's
                    // body guard forbids restarting the body where it began).
                    let mut again = pos != start && max.is_none_or(|m| count < m);
                    if self.mode == Mode::Partial && *general {
                        if again && self.peek_partial(*body, pos) {
                            if *greedy && pos == self.hay.len() {
                                again = false;
                            } else {
                                return Outcome::Partial;
                            }
                        }
                        if self.peek_partial(*exit, pos) {
                            return Outcome::Partial;
                        }
                    }
                    if again {
                        let (first, second) = if *greedy {
                            (*body, *exit)
                        } else {
                            (*exit, *body)
                        };
                        self.bt.push(Bt::Alt { pc: second, pos });
                        pc = first;
                    } else {
                        pc = *exit;
                    }
                    continue;
                }
                Inst::CountTail { reg, count, body } => {
                    let r = *reg as usize;
                    let (c, start) = self.regs[r];
                    self.bt.push(Bt::Reg {
                        reg: *reg,
                        count: c,
                        start,
                    });
                    self.regs[r].0 = c + 1;
                    if c + 1 < *count {
                        pc = *body;
                        continue;
                    }
                    true
                }
                Inst::LazyOne { memo, .. } => {
                    if self.lazy_arrive(*memo, pc, pos, pos, 0) {
                        pc += 1;
                        continue;
                    }
                    false
                }
                Inst::LookStart { negate, next } => {
                    self.frames.push(self.bt.len());
                    self.bt.push(Bt::LookFail {
                        negate: *negate,
                        next: *next,
                        pos,
                    });
                    true
                }
                Inst::LookEnd => {
                    let Some(frame) = self.frames.pop() else {
                        return Outcome::NoMatch;
                    };
                    let Some(Bt::LookFail {
                        negate,
                        next,
                        pos: saved,
                    }) = self.bt.get(frame).copied()
                    else {
                        return Outcome::NoMatch;
                    };
                    if negate {
                        // The body matched, so the negative lookaround fails:
                        // undo what the body did and backtrack past it.
                        while self.bt.len() > frame + 1 {
                            if let Some(e) = self.bt.pop() {
                                self.undo(e);
                            }
                        }
                        self.bt.pop();
                        false
                    } else {
                        self.cut(frame);
                        pos = saved;
                        pc = next;
                        continue;
                    }
                }
                Inst::AtomicStart => {
                    self.frames.push(self.bt.len());
                    self.bt.push(Bt::AtomicFail);
                    true
                }
                Inst::AtomicEnd => {
                    let Some(frame) = self.frames.pop() else {
                        return Outcome::NoMatch;
                    };
                    self.cut(frame);
                    true
                }
                Inst::Match => {
                    if self.must_advance && pos == self.anchor {
                        false
                    } else {
                        self.spans[1] = pos;
                        return Outcome::Match;
                    }
                }
            };
            if ok {
                pc += 1;
                continue;
            }
            // Backtrack.
            loop {
                let Some(e) = self.bt.pop() else {
                    return Outcome::NoMatch;
                };
                self.steps += 1;
                match e {
                    Bt::Alt { pc: p, pos: q } => {
                        pc = p;
                        pos = q;
                        break;
                    }
                    Bt::Memo { slot, pos: q } => self.memo_mark(slot, q),
                    Bt::LookFail {
                        negate,
                        next,
                        pos: q,
                    } => {
                        self.frames.pop();
                        if negate {
                            pc = next;
                            pos = q;
                            break;
                        }
                    }
                    Bt::AtomicFail => {
                        self.frames.pop();
                    }
                    Bt::LazyMore {
                        pc: lpc,
                        start,
                        pos: q,
                        count,
                    } => match self.lazy_extend(lpc, start, q, count) {
                        Extend::Partial => return Outcome::Partial,
                        Extend::Fail => {}
                        Extend::To(p, n) => {
                            let memo = match &insts[lpc as usize] {
                                Inst::LazyOne { memo, .. } => *memo,
                                _ => None,
                            };
                            if self.lazy_arrive(memo, lpc, start, p, n) {
                                pc = lpc + 1;
                                pos = p;
                                break;
                            }
                        }
                    },
                    other => self.undo(other),
                }
            }
            if self.steps > self.step_limit {
                return Outcome::Budget;
            }
        }
    }

    /// The module's `search_start` in partial mode, from `s`: the next
    /// position where the pattern's first test holds (after which it peeks
    /// at what follows), or a partial match where the scan ran off the end.
    pub(crate) fn scan(&self, start: &StartScan, mut s: usize) -> Scan {
        let end = self.hay.len();
        loop {
            let (c, width, peek) = match start {
                StartScan::None => {
                    return if s <= end {
                        Scan::At(s)
                    } else {
                        Scan::Exhausted
                    };
                }
                StartScan::Class {
                    class,
                    consumes,
                    peek,
                } => {
                    let mut p = s;
                    loop {
                        match self.next_char(p) {
                            None => return Scan::Partial(end),
                            Some(ch) if class.contains(ch) => break,
                            Some(ch) => p += ch.len_utf8(),
                        }
                    }
                    let width = if *consumes {
                        self.next_char(p).map_or(0, char::len_utf8)
                    } else {
                        0
                    };
                    (p, width, *peek)
                }
                StartScan::Str { at, len, peek } => {
                    // The leftmost full occurrence; failing that, the module
                    // reports a partial match at the leftmost prefix that
                    // runs to the end, or at the end.
                    let mut p = s;
                    let found = loop {
                        if p > end {
                            break None;
                        }
                        match self.string_prefix(*at, *len, p) {
                            Some(true) => break Some(p),
                            Some(false) => return Scan::Partial(p),
                            None => {}
                        }
                        if p == end {
                            break None;
                        }
                        p += self.next_char(p).map_or(1, char::len_utf8);
                    };
                    let Some(p) = found else {
                        return Scan::Partial(end);
                    };
                    let mut q = p;
                    for _ in 0..*len {
                        q += self.next_char(q).map_or(0, char::len_utf8);
                    }
                    (p, q - p, *peek)
                }
            };
            match peek {
                Some(pc) if self.peek_partial(pc, c + width) => return Scan::Partial(c),
                Some(pc) if !self.peek_possible(pc, c + width) => {
                    if c >= end {
                        return Scan::Exhausted;
                    }
                    s = c + self.next_char(c).map_or(1, char::len_utf8);
                }
                _ => return Scan::At(c),
            }
        }
    }

    /// The module's search for the required string from `s` in partial
    /// mode: the leftmost full occurrence (`false`), else the leftmost
    /// prefix of it that runs to the end, else the end (`true`: partial).
    pub(crate) fn find_required(&self, req: &Required, s: usize) -> (usize, bool) {
        let end = self.hay.len();
        let mut p = s;
        while p <= end {
            let mut q = p;
            let mut full = true;
            for class in req.string.iter() {
                match self.next_char(q) {
                    None => {
                        full = false;
                        break;
                    }
                    Some(c) if class.contains(c) => q += c.len_utf8(),
                    Some(_) => {
                        full = false;
                        q = usize::MAX;
                        break;
                    }
                }
            }
            if full {
                return (p, false);
            }
            if q != usize::MAX {
                return (p, true);
            }
            if p == end {
                break;
            }
            p += self.next_char(p).map_or(1, char::len_utf8);
        }
        (end, true)
    }

    /// `n` characters before `pos`, if there are that many.
    pub(crate) fn chars_back(&self, mut pos: usize, n: usize) -> Option<usize> {
        for _ in 0..n {
            pos -= self.prev_char(pos)?.len_utf8();
        }
        Some(pos)
    }

    /// Whether the literal run at `at` matches at `p`: `Some(true)` fully,
    /// `Some(false)` as a prefix cut off by the end, `None` not at all.
    fn string_prefix(&self, at: u32, len: u32, mut p: usize) -> Option<bool> {
        for k in 0..len {
            match self.next_char(p) {
                None => return Some(false),
                Some(c) if self.lit_matches(at + k, c) => p += c.len_utf8(),
                Some(_) => return None,
            }
        }
        Some(true)
    }

    /// The module's quick test at `pc` (its `try_match`), outside partial
    /// reporting: whether the first test there could hold at `pos`.
    fn peek_possible(&self, pc: u32, pos: usize) -> bool {
        let pc = self.skip_boundaries(pc);
        match self.prog.insts.get(pc as usize) {
            Some(Inst::Char { rev: false, .. } | Inst::Class { rev: false, .. }) => {
                self.string_prefix(pc, self.run_len(pc), pos).is_some()
            }
            _ => self.tail_test(pc, pos),
        }
    }

    /// Whether the module's look-ahead test ("try_match") at `pc` would
    /// read past the end of the text: the first test after group
    /// boundaries, with a run of literals tested as one string.
    fn peek_partial(&self, pc: u32, pos: usize) -> bool {
        let pc = self.skip_boundaries(pc);
        match self.prog.insts.get(pc as usize) {
            Some(Inst::Char { rev: false, .. } | Inst::Class { rev: false, .. }) => {
                // A literal string (or a single character test) at `pos`:
                // partial if it matches as far as the end of the text.
                let n = self.run_len(pc);
                self.string_prefix(pc, n, pos) == Some(false)
            }
            Some(Inst::Any { rev: false }) => pos == self.hay.len(),
            _ => false,
        }
    }

    /// Skips the instructions the module's look-ahead test looks past.
    fn skip_boundaries(&self, mut pc: u32) -> u32 {
        loop {
            match self.prog.insts.get(pc as usize) {
                Some(Inst::Open { .. } | Inst::Close { .. } | Inst::IterStart { .. }) => pc += 1,
                Some(Inst::Jmp(t)) => pc = *t,
                _ => return pc,
            }
        }
    }

    /// How many instructions from `pc` form one test: a packed literal
    /// string, or a single character test.
    fn run_len(&self, pc: u32) -> u32 {
        let mut n = 1;
        while self.prog.joined.get((pc + n - 1) as usize) == Some(&true) {
            n += 1;
        }
        n
    }

    fn peek_split(&self, peek: Peek, pos: usize) -> PeekResult {
        match peek {
            Peek::None => PeekResult::Go,
            Peek::Entry { body, tail } => {
                if self.peek_partial(body, pos) || self.peek_partial(tail, pos) {
                    PeekResult::Partial
                } else {
                    PeekResult::Go
                }
            }
            Peek::End { body, tail, greedy } => {
                let mut skip = false;
                if self.peek_partial(body, pos) {
                    if greedy && pos == self.hay.len() {
                        skip = true;
                    } else {
                        return PeekResult::Partial;
                    }
                }
                if self.peek_partial(tail, pos) {
                    return PeekResult::Partial;
                }
                if skip {
                    PeekResult::SkipBody(tail)
                } else {
                    PeekResult::Go
                }
            }
        }
    }

    /// Arrives at the lazy repeat at `pc` with `count` characters taken,
    /// now at `pos`: records how to take one more, unless the memo says
    /// everything from here already failed. Returns whether to go on.
    fn lazy_arrive(
        &mut self,
        memo: Option<u32>,
        pc: u32,
        start: usize,
        pos: usize,
        count: u32,
    ) -> bool {
        if let Some(slot) = memo {
            self.maybe_enable_memo();
            if self.memo_on {
                if self.memo_check(slot, pos) {
                    return false;
                }
                self.bt.push(Bt::Memo { slot, pos });
            }
        }
        let max = match &self.prog.insts[pc as usize] {
            Inst::LazyOne { max, .. } => *max,
            _ => Some(0),
        };
        if max.is_none_or(|m| count < m) {
            self.bt.push(Bt::LazyMore {
                pc,
                start,
                pos,
                count,
            });
        }
        true
    }

    /// Whether the repeated test accepts `c`.
    fn one_matches(&self, item: One, c: char) -> bool {
        match item {
            One::Char(x) => c == x,
            One::Class(i) => self.prog.classes[i as usize].contains(c),
            One::Any => true,
        }
    }

    /// Whether the literal instruction at `pc` accepts `c`.
    fn lit_matches(&self, pc: u32, c: char) -> bool {
        match &self.prog.insts[pc as usize] {
            Inst::Char { c: x, .. } => c == *x,
            Inst::Class { class, .. } => self.prog.classes[*class as usize].contains(c),
            _ => false,
        }
    }

    /// Takes one more character into the lazy repeat at `pc`.
    fn lazy_extend(&mut self, pc: u32, start: usize, pos: usize, count: u32) -> Extend {
        let Inst::LazyOne {
            item,
            max,
            tail,
            tail_len,
            skip,
            ..
        } = self.prog.insts[pc as usize]
        else {
            return Extend::Fail;
        };
        if self.mode == Mode::Partial {
            return self.lazy_partial(item, max, tail, tail_len, start, pos, count);
        }
        match self.next_char(pos) {
            Some(c) if self.one_matches(item, c) => {
                let to = pos + c.len_utf8();
                match skip {
                    Some(set) => Extend::To(self.lazy_skip(item, set, to), count + 1),
                    None => Extend::To(to, count + 1),
                }
            }
            Some(_) => Extend::Fail,
            None => {
                if self.mode == Mode::Incomplete {
                    self.hit_end = true;
                }
                Extend::Fail
            }
        }
    }

    /// From `pos`, past every character the repeated test accepts before
    /// the next byte of `lazy_skips[set]` (what follows the repeat can
    /// start only there, so trying it at each character in between would
    /// fail): the repeat takes them at once. The count is not kept, as the
    /// repeat is unbounded.
    fn lazy_skip(&self, item: One, set: u32, pos: usize) -> usize {
        let Some(set) = self.prog.lazy_skips.get(set as usize) else {
            return pos;
        };
        let bytes = self.hay.as_bytes();
        match item {
            One::Any => bytes[pos..]
                .iter()
                .position(|&b| in_byte_set(set, b))
                .map_or(bytes.len(), |i| pos + i),
            _ => {
                let mut p = pos;
                while let Some(c) = self.next_char(p) {
                    if in_byte_set(set, bytes[p]) || !self.one_matches(item, c) {
                        break;
                    }
                    p += c.len_utf8();
                }
                p
            }
        }
    }

    /// The module's backtracking into a lazy single-character repeat in
    /// partial mode (`_regex.c`, `RE_OP_LAZY_REPEAT_ONE` on the backtrack
    /// stack). When the tail starts with a literal it scans ahead for it, and
    /// reports a partial match whenever the scan reaches the end of the text
    /// -- even where the repeated test would not have matched the text in
    /// between. Elsewhere it extends one character at a time, peeking at the
    /// tail.
    #[allow(clippy::too_many_arguments)]
    fn lazy_partial(
        &self,
        item: One,
        max: Option<u32>,
        tail: u32,
        tail_len: u32,
        start: usize,
        pos: usize,
        count: u32,
    ) -> Extend {
        let end = self.hay.len();
        // The furthest the repeat may reach: `max` characters past `start`.
        let mut limit = start;
        let mut taken = 0u32;
        while limit < end && max.is_none_or(|m| taken < m) {
            limit += self.next_char(limit).map_or(1, char::len_utf8);
            taken += 1;
        }
        let mut pos = pos;
        let mut count = count;
        let step = |p: usize| p + self.next_char(p).map_or(1, char::len_utf8);
        match tail_len {
            1 => {
                // The tail is one literal character.
                let last = self.prev_char(end).map(|c| end - c.len_utf8());
                let limit = match last {
                    Some(l) => limit.min(l),
                    None => return Extend::Partial,
                };
                loop {
                    if pos >= end || step(pos) >= end {
                        return Extend::Partial;
                    }
                    if pos >= limit {
                        return Extend::Fail;
                    }
                    match self.next_char(pos) {
                        Some(c) if self.one_matches(item, c) => {}
                        _ => return Extend::Fail,
                    }
                    pos = step(pos);
                    count += 1;
                    if self
                        .next_char(pos)
                        .is_some_and(|c| self.lit_matches(tail, c))
                    {
                        return Extend::To(pos, count);
                    }
                }
            }
            0 => loop {
                // Anything else: one character at a time, peeking at the tail.
                match self.next_char(pos) {
                    None => return Extend::Partial,
                    Some(c) if self.one_matches(item, c) => {}
                    Some(_) => return Extend::Fail,
                }
                pos = step(pos);
                count += 1;
                if self.peek_partial(tail, pos) {
                    return Extend::Partial;
                }
                if self.tail_test(tail, pos) {
                    return Extend::To(pos, count);
                }
                if pos >= limit {
                    return Extend::Fail;
                }
            },
            n => {
                // The tail is a literal string of `n` characters: the module
                // searches for it and treats "not found" as partial.
                let mut lim = end;
                for _ in 0..n {
                    match self.prev_char(lim) {
                        Some(c) => lim -= c.len_utf8(),
                        None => return Extend::Partial,
                    }
                }
                let limit = limit.min(lim);
                if pos >= end {
                    return Extend::Partial;
                }
                let mut p = step(pos);
                let found = loop {
                    if p > limit {
                        break None;
                    }
                    if self.string_at(tail, n, p) {
                        break Some(p);
                    }
                    p = step(p);
                };
                let Some(found) = found else {
                    return Extend::Partial;
                };
                if item != One::Any {
                    while pos < found {
                        match self.next_char(pos) {
                            Some(c) if self.one_matches(item, c) => {
                                pos = step(pos);
                                count += 1;
                            }
                            _ => return Extend::Fail,
                        }
                    }
                } else {
                    while pos < found {
                        pos = step(pos);
                        count += 1;
                    }
                }
                Extend::To(pos, count)
            }
        }
    }

    /// Whether the `n` literal instructions from `pc` match the text at `p`.
    fn string_at(&self, pc: u32, n: u32, mut p: usize) -> bool {
        for k in 0..n {
            match self.next_char(p) {
                Some(c) if self.lit_matches(pc + k, c) => p += c.len_utf8(),
                _ => return false,
            }
        }
        true
    }

    /// The module's quick test of what follows a repeat (its `try_match`):
    /// the first test after group boundaries, where one exists.
    fn tail_test(&self, mut pc: u32, pos: usize) -> bool {
        loop {
            match self.prog.insts.get(pc as usize) {
                Some(Inst::Open { .. } | Inst::Close { .. } | Inst::IterStart { .. }) => pc += 1,
                Some(Inst::Jmp(t)) => pc = *t,
                _ => break,
            }
        }
        match self.prog.insts.get(pc as usize) {
            Some(Inst::Class {
                class, rev: false, ..
            }) => self
                .next_char(pos)
                .is_some_and(|c| self.prog.classes[*class as usize].contains(c)),
            Some(Inst::Any { rev: false }) => pos < self.hay.len(),
            Some(Inst::Assert(kind)) => self.assert_value(*kind, pos).0,
            _ => true,
        }
    }

    /// Applies an undo record.
    fn undo(&mut self, e: Bt) {
        match e {
            Bt::Cap { group, start, end } => {
                self.spans[2 * group as usize] = start;
                self.spans[2 * group as usize + 1] = end;
            }
            Bt::Open { group, pos } => self.open[group as usize] = pos,
            Bt::Reg { reg, count, start } => self.regs[reg as usize] = (count, start),
            _ => {}
        }
    }

    /// Drops the alternatives pushed since the frame at `frame` (and the
    /// frame itself), keeping the undo records.
    fn cut(&mut self, frame: usize) {
        let mut w = frame;
        for r in frame + 1..self.bt.len() {
            let e = self.bt[r];
            if matches!(e, Bt::Cap { .. } | Bt::Open { .. } | Bt::Reg { .. }) {
                self.bt[w] = e;
                w += 1;
            }
        }
        self.bt.truncate(w);
    }

    fn assert(&mut self, kind: Assertion, pos: usize) -> bool {
        let (value, end_dependent) = self.assert_value(kind, pos);
        if end_dependent && self.mode == Mode::Incomplete {
            self.hit_end = true;
        }
        value
    }

    /// Evaluates an assertion at `pos`, and says whether text after the end
    /// of the haystack could change the result.
    fn assert_value(&self, kind: Assertion, pos: usize) -> (bool, bool) {
        let end = self.hay.len();
        let bytes = self.hay.as_bytes();
        match kind {
            Assertion::Start => (pos == 0, false),
            Assertion::LineStart => (
                pos == 0 || bytes.get(pos.wrapping_sub(1)) == Some(&b'\n'),
                false,
            ),
            Assertion::EndOrFinalNewline => {
                let r = pos == end || (pos + 1 == end && bytes[pos] == b'\n');
                (r, r)
            }
            Assertion::LineEnd => {
                if pos == end {
                    (true, true)
                } else {
                    (bytes[pos] == b'\n', false)
                }
            }
            Assertion::End => (pos == end, pos == end),
            Assertion::WordBoundary { ascii }
            | Assertion::NotWordBoundary { ascii }
            | Assertion::WordStart { ascii }
            | Assertion::WordEnd { ascii } => {
                let left = self.prev_char(pos).is_some_and(|c| is_word(c, ascii));
                let right = self.next_char(pos).is_some_and(|c| is_word(c, ascii));
                let v = match kind {
                    Assertion::WordBoundary { .. } => left != right,
                    Assertion::NotWordBoundary { .. } => left == right,
                    Assertion::WordStart { .. } => !left && right,
                    _ => left && !right,
                };
                (v, pos == end)
            }
            Assertion::SearchAnchor => (pos == self.anchor, false),
        }
    }

    /// Matches group `g`'s text at `pos`; `Ok(Some(new_pos))` on success.
    fn backref(
        &mut self,
        g: usize,
        fold: Fold,
        rev: bool,
        pos: usize,
    ) -> Result<Option<usize>, Outcome> {
        let (s, e) = match self.span(g) {
            Some(span) => span,
            None => return Ok(None),
        };
        let Some(text) = self.hay.get(s..e) else {
            return Ok(None);
        };
        let same = |a: char, b: char| match fold {
            Fold::None => a == b,
            Fold::Ascii => a.eq_ignore_ascii_case(&b),
            Fold::Unicode => same_ignoring_case(a, b),
        };
        if rev {
            let mut p = pos;
            for want in text.chars().rev() {
                match self.prev_char(p) {
                    Some(c) if same(c, want) => p -= c.len_utf8(),
                    _ => return Ok(None),
                }
            }
            Ok(Some(p))
        } else {
            let mut p = pos;
            for want in text.chars() {
                match self.next_char(p) {
                    Some(c) if same(c, want) => p += c.len_utf8(),
                    Some(_) => return Ok(None),
                    None => {
                        return match self.at_end() {
                            Some(o) => Err(o),
                            None => Ok(None),
                        };
                    }
                }
            }
            Ok(Some(p))
        }
    }
}

/// Whether a character-reading instruction accepts `ch`.
#[inline(always)]
fn accepts(prog: &Program, inst: &Inst, ch: char) -> bool {
    match inst {
        Inst::Char { c, .. } => *c == ch,
        Inst::Class { class, .. } => prog.classes[*class as usize].contains(ch),
        Inst::Any { .. } => true,
        _ => false,
    }
}
