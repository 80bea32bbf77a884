//! Compiles the pattern tree into a flat program for the backtracking VM.
//!
//! Repeats follow the `regex` module's own compilation: the minimum count is
//! unrolled into copies, and what remains is a loop with a minimum of zero
//! that stops iterating after an iteration that did not move (the module's
//! "changed"/body-guard rule). Lookbehind bodies are compiled backwards and
//! run right to left, as the module does, so their captures and their
//! greedy/lazy choices come out the same.

use super::RegexError;
use super::ast::{Assertion, Fold, Node};
use super::class::Class;
use regex_syntax::hir::{ClassUnicode, ClassUnicodeRange};
use std::borrow::Cow;

/// One instruction. Consuming instructions carry `rev` (run right to left,
/// inside a lookbehind).
#[doc(hidden)]
#[derive(Clone, Debug)]
pub enum Inst {
    /// Consume exactly this character.
    Char { c: char, rev: bool },
    /// Consume one character of the class.
    Class {
        class: u32,
        rev: bool,
        kind: ClassKind,
    },
    /// Consume any one character.
    Any { rev: bool },
    /// Fail.
    Fail,
    /// Try `first`; if everything from there fails, try `second`.
    /// `memo` is the failure-memo slot, if this choice point may use it;
    /// `peek` marks the decision points of repeats (for partial matching).
    Split {
        first: u32,
        second: u32,
        memo: Option<u32>,
        peek: Peek,
    },
    /// The decision point after the last iteration of a repeat that cannot
    /// iterate again: in partial mode, peek at what follows.
    PeekTail,
    /// Continue at the target.
    Jmp(u32),
    /// Remember the position where group `group` opens.
    Open { group: u32 },
    /// Commit group `group`'s span (from its open position to here).
    Close { group: u32 },
    /// A zero-width assertion.
    Assert(Assertion),
    /// Match the text of group `group` again.
    Backref { group: u32, fold: Fold, rev: bool },
    /// Start a loop that keeps registers: count = 0.
    LoopInit { reg: u32 },
    /// The start of an iteration: remember where it began.
    IterStart { reg: u32 },
    /// The end of an iteration of a `{0,max}` loop with registers.
    /// `general`: the body is more than one character test (see [`Peek`]).
    LoopTail {
        reg: u32,
        max: Option<u32>,
        greedy: bool,
        body: u32,
        exit: u32,
        general: bool,
    },
    /// The end of an iteration of an exact-count loop.
    CountTail { reg: u32, count: u32, body: u32 },
    /// A lazy repeat of one character test, `{0,max}` (forward only). In
    /// partial mode it reproduces how the module extends such a repeat on
    /// backtracking (see `Vm::lazy_partial`); otherwise it is an ordinary
    /// lazy loop. `tail_len`: 0 if what follows is not a literal, 1 for a
    /// single literal character, more for a literal string (of that many
    /// consecutive literal instructions starting at `tail`). `skip`: the
    /// index in [`Program::lazy_skips`] of the bytes what follows can start
    /// with, when that is known and the repeat is unbounded: outside
    /// partial mode the repeat takes every character up to the next such
    /// byte at once (what follows would fail at each of them).
    LazyOne {
        item: One,
        max: Option<u32>,
        tail: u32,
        tail_len: u32,
        memo: Option<u32>,
        skip: Option<u32>,
    },
    /// Enter a lookaround; its body follows, and `next` is after its `LookEnd`.
    LookStart { negate: bool, next: u32 },
    /// The body of the innermost lookaround matched.
    LookEnd,
    /// Enter an atomic group.
    AtomicStart,
    /// The body of the innermost atomic group matched.
    AtomicEnd,
    /// The whole pattern matched.
    Match,
}

/// What a class instruction stands for, in the module's terms.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClassKind {
    /// A set, a property or `.`.
    Set,
    /// A case-insensitive literal (part of a literal string).
    FoldLit,
    /// A negated single character, `[^a]` (a character test, not a string).
    NegChar,
}

/// The character test repeated by [`Inst::LazyOne`].
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum One {
    /// Exactly this character.
    Char(char),
    /// A character of the class.
    Class(u32),
    /// Any character.
    Any,
}

/// How a choice point takes part in partial matching.
///
/// At the start and at the end of each iteration of a repeat whose body is
/// more than a single character test, the `regex` module first "peeks" at
/// the body and at what follows (skipping group boundaries); if either would
/// read past the end of the text it reports a partial match at once, before
/// exploring either. At the end of an iteration of a greedy repeat that sits
/// at the very end of the text, a body that would read past the end is
/// simply not tried. This only changes which groups a partial match reports
/// (and, rarely, whether a partial match is found at a given start).
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Peek {
    /// An ordinary choice point.
    None,
    /// The start of a repeat.
    Entry { body: u32, tail: u32 },
    /// The end of an iteration of a repeat that may iterate again.
    End { body: u32, tail: u32, greedy: bool },
}

/// A compiled pattern.
///
/// Every table is a `Cow<'static, _>` (or inline), so a program can also be
/// written as a `static` by generated code (see `Regex::from_static`); the
/// matcher reads them in place either way. Public (hidden) only for that
/// generated code.
#[doc(hidden)]
#[derive(Clone, Debug)]
pub struct Program {
    /// The instructions; execution starts at 0.
    pub insts: Cow<'static, [Inst]>,
    /// The classes [`Inst::Class`] and [`One::Class`] refer to by index.
    pub classes: Cow<'static, [Class]>,
    /// Capture groups including group 0.
    pub groups: usize,
    /// Loop registers.
    pub regs: usize,
    /// Failure-memo slots.
    pub memo_slots: usize,
    /// For each instruction, whether it is a literal that the module packs
    /// into one string with the next instruction.
    pub joined: Cow<'static, [bool]>,
    /// For each memo slot, the registers of the loops around it (part of
    /// its memo key).
    pub memo_regs: Cow<'static, [Cow<'static, [u32]>]>,
    /// Groups read by backreferences: whether the rest of the pattern can
    /// match depends on their spans, so the memo records them too.
    pub backref_groups: Cow<'static, [u32]>,
    /// Bytes that can start a match (bit `b % 64` of word `b / 64`, see
    /// [`in_byte_set`]), or `None` if any position can.
    pub first_bytes: Option<[u64; 4]>,
    /// Whether the pattern can only match at offset 0 (`^`/`\A` first).
    pub anchored_start: bool,
    /// How the `regex` module's search loop finds candidate starts in
    /// partial mode (see [`StartScan`]).
    pub start: StartScan,
    /// The module's "required string" (see [`Required`]).
    pub required: Option<Required>,
    /// Byte sets of [`Inst::LazyOne`]'s `skip`.
    pub lazy_skips: Cow<'static, [[u64; 4]]>,
}

/// Whether `b` is in a byte set such as [`Program::first_bytes`].
#[inline]
pub(crate) fn in_byte_set(set: &[u64; 4], b: u8) -> bool {
    set[(b >> 6) as usize] >> (b & 63) & 1 != 0
}

/// The literal string every match must contain, as the `regex` module
/// computes it (`get_required_string`): its search loop first looks for it
/// and jumps ahead to `offset` characters before it. In partial mode a
/// string that is not found in full still moves the search to where a
/// prefix of it runs to the end (or to the end).
#[doc(hidden)]
#[derive(Clone, Debug)]
pub struct Required {
    /// Characters from the start of a match to the string, when fixed
    /// (the module's `req_offset`; `None` for its -1).
    pub offset: Option<usize>,
    /// The string, one class per character.
    pub string: Cow<'static, [Class]>,
}

/// The `regex` module's search scan for where a match could start
/// (`search_start` on the pattern's first test node). It is an optimisation
/// for complete matching, but in partial mode it decides which starts are
/// tried at all, and it reports a partial match (with no groups) when the
/// scan runs off the end of the text.
#[doc(hidden)]
#[derive(Clone, Debug)]
pub enum StartScan {
    /// Every position is tried; nothing is reported at the end.
    None,
    /// Positions where a character of the class is next. `width`: the test
    /// consumes that character (else it is the zero-width "first set").
    /// `peek`: where the module then peeks (when the test is the pattern's
    /// first node).
    Class {
        class: Class,
        consumes: bool,
        peek: Option<u32>,
    },
    /// Positions where a literal string starts (a run of `len` literal
    /// instructions from `at`); not finding it is a partial match at the
    /// leftmost prefix of it that runs to the end (or at the end).
    Str {
        at: u32,
        len: u32,
        peek: Option<u32>,
    },
}

/// The most instructions a program may have; larger patterns (huge repeat
/// counts) are declined rather than exhausting memory.
const MAX_INSTS: usize = 1 << 20;

/// Unroll a repeat's mandatory copies when they stay this small; beyond it a
/// counted loop does the same job.
const UNROLL_LIMIT: usize = 4096;

struct Compiler {
    insts: Vec<Inst>,
    classes: Vec<Class>,
    regs: u32,
    memo: bool,
    memo_slots: u32,
    /// The register loops enclosing the code being emitted: what their
    /// bodies do depends on the registers, so memo keys include them.
    reg_stack: Vec<u32>,
    memo_regs: Vec<Cow<'static, [u32]>>,
    joined: Vec<bool>,
    lazy_skips: Vec<[u64; 4]>,
}

/// Compiles `node` (with `groups` capture groups besides group 0).
pub(crate) fn compile(node: &Node, groups: usize) -> Result<Program, RegexError> {
    // With backreferences the memo is keyed by the referenced groups' spans too.
    let memo = true;
    let mut backref_groups = Vec::new();
    node.backref_groups(&mut backref_groups);
    let mut c = Compiler {
        insts: Vec::new(),
        classes: Vec::new(),
        regs: 0,
        memo,
        memo_slots: 0,
        reg_stack: Vec::new(),
        memo_regs: Vec::new(),
        joined: Vec::new(),
        lazy_skips: Vec::new(),
    };
    c.emit(node, false)?;
    c.push(Inst::Match)?;
    c.joined.resize(c.insts.len(), false);
    c.link_lazy_tails();
    let (first_bytes, nullable) = first_bytes(node);
    let mut first_set = [0u64; 4];
    for (b, _) in first_bytes.iter().enumerate().filter(|(_, on)| **on) {
        first_set[b / 64] |= 1 << (b % 64);
    }
    Ok(Program {
        insts: Cow::Owned(c.insts),
        classes: Cow::Owned(c.classes),
        groups: groups + 1,
        regs: c.regs as usize,
        memo_slots: c.memo_slots as usize,
        memo_regs: Cow::Owned(c.memo_regs),
        joined: Cow::Owned(c.joined),
        backref_groups: Cow::Owned(backref_groups),
        first_bytes: (!nullable).then_some(first_set),
        anchored_start: anchored_start(node),
        start: start_scan(node),
        required: required_string(node),
        lazy_skips: Cow::Owned(c.lazy_skips),
    })
}

fn too_large() -> RegexError {
    RegexError {
        message: "unsupported: pattern too large".into(),
        offset: 0,
    }
}

impl Compiler {
    fn push(&mut self, inst: Inst) -> Result<u32, RegexError> {
        if self.insts.len() >= MAX_INSTS {
            return Err(too_large());
        }
        self.insts.push(inst);
        Ok((self.insts.len() - 1) as u32)
    }

    fn pc(&self) -> u32 {
        self.insts.len() as u32
    }

    fn split(&mut self, first: u32, second: u32) -> Result<u32, RegexError> {
        let memo = if self.memo {
            self.memo_slots += 1;
            self.memo_regs.push(Cow::Owned(self.reg_stack.clone()));
            Some(self.memo_slots - 1)
        } else {
            None
        };
        self.push(Inst::Split {
            first,
            second,
            memo,
            peek: Peek::None,
        })
    }

    /// Sets the targets (and the partial-matching role) of a split.
    fn set_split(&mut self, at: u32, first: u32, second: u32, peek: Peek) {
        self.patch(at, |i| {
            if let Inst::Split {
                first: f,
                second: s,
                peek: p,
                ..
            } = i
            {
                *f = first;
                *s = second;
                *p = peek;
            }
        });
    }

    fn patch(&mut self, at: u32, f: impl FnOnce(&mut Inst)) {
        if let Some(i) = self.insts.get_mut(at as usize) {
            f(i);
        }
    }

    fn emit(&mut self, node: &Node, rev: bool) -> Result<(), RegexError> {
        match node {
            Node::Empty => {}
            Node::Fail => {
                self.push(Inst::Fail)?;
            }
            Node::Literal(c) => {
                self.push(Inst::Char { c: *c, rev })?;
            }
            Node::Class(class) => self.class(class, rev, ClassKind::Set)?,
            Node::FoldLit(class) => self.class(class, rev, ClassKind::FoldLit)?,
            Node::NegChar(class) => self.class(class, rev, ClassKind::NegChar)?,
            Node::Concat(items) => {
                if rev {
                    for n in items.iter().rev() {
                        self.emit(n, rev)?;
                    }
                } else {
                    // The module packs adjacent literals of one kind (after
                    // flattening nested sequences) into a string; remember
                    // which instructions continue into the next one.
                    let mut flat = Vec::new();
                    flat_items(items, &mut flat);
                    for (i, n) in flat.iter().enumerate() {
                        self.emit(n, rev)?;
                        let joined = matches!(
                            (n, flat.get(i + 1)),
                            (Node::Literal(_), Some(Node::Literal(_)))
                                | (Node::FoldLit(_), Some(Node::FoldLit(_)))
                        );
                        if joined {
                            let last = self.insts.len() - 1;
                            self.joined.resize(self.insts.len(), false);
                            self.joined[last] = true;
                        }
                    }
                }
            }
            Node::Alt(branches) => {
                // split b0 / (split b1 / (... bn)); every branch jumps to the end.
                let mut jumps = Vec::new();
                for (i, b) in branches.iter().enumerate() {
                    if i + 1 < branches.len() {
                        let split = self.split(0, 0)?;
                        let first = self.pc();
                        self.emit(b, rev)?;
                        jumps.push(self.push(Inst::Jmp(0))?);
                        let second = self.pc();
                        self.patch(split, |s| {
                            if let Inst::Split {
                                first: f,
                                second: s2,
                                ..
                            } = s
                            {
                                *f = first;
                                *s2 = second;
                            }
                        });
                    } else {
                        self.emit(b, rev)?;
                    }
                }
                let end = self.pc();
                for j in jumps {
                    self.patch(j, |i| *i = Inst::Jmp(end));
                }
            }
            Node::Group { index, node } => {
                self.push(Inst::Open {
                    group: *index as u32,
                })?;
                self.emit(node, rev)?;
                self.push(Inst::Close {
                    group: *index as u32,
                })?;
            }
            Node::Repeat {
                node,
                min,
                max,
                greedy,
                possessive,
                ..
            } => {
                if *possessive {
                    self.push(Inst::AtomicStart)?;
                    self.repeat(node, *min, *max, *greedy, rev)?;
                    self.push(Inst::AtomicEnd)?;
                } else {
                    self.repeat(node, *min, *max, *greedy, rev)?;
                }
            }
            Node::Look {
                behind,
                negate,
                node,
                ..
            } => {
                let start = self.push(Inst::LookStart {
                    negate: *negate,
                    next: 0,
                })?;
                self.emit(node, *behind)?;
                self.push(Inst::LookEnd)?;
                let next = self.pc();
                self.patch(start, |i| {
                    if let Inst::LookStart { next: n, .. } = i {
                        *n = next;
                    }
                });
            }
            Node::Atomic { node, .. } => {
                self.push(Inst::AtomicStart)?;
                self.emit(node, rev)?;
                self.push(Inst::AtomicEnd)?;
            }
            Node::Backref { group, fold, .. } => {
                self.push(Inst::Backref {
                    group: *group as u32,
                    fold: *fold,
                    rev,
                })?;
            }
            Node::Assert { kind, .. } => {
                self.push(Inst::Assert(*kind))?;
            }
        }
        Ok(())
    }

    fn class_index(&mut self, class: &Class) -> u32 {
        let idx = match self.classes.iter().position(|c| c == class) {
            Some(i) => i,
            None => {
                self.classes.push(class.clone());
                self.classes.len() - 1
            }
        };
        idx as u32
    }

    fn class(&mut self, class: &Class, rev: bool, kind: ClassKind) -> Result<(), RegexError> {
        if class.ranges() == [('\0', char::MAX)] {
            self.push(Inst::Any { rev })?;
        } else {
            let class = self.class_index(class);
            self.push(Inst::Class { class, rev, kind })?;
        }
        Ok(())
    }

    /// Fills in what follows each [`Inst::LazyOne`]: the module looks past
    /// group boundaries at the next test, and packs a run of literals into
    /// one string.
    fn link_lazy_tails(&mut self) {
        for pc in 0..self.insts.len() {
            if !matches!(self.insts[pc], Inst::LazyOne { .. }) {
                continue;
            }
            let mut t = pc + 1;
            let mut hops = 0;
            while let Some(i) = self.insts.get(t) {
                match i {
                    Inst::Open { .. } | Inst::Close { .. } => t += 1,
                    Inst::Jmp(j) if hops < self.insts.len() => {
                        t = *j as usize;
                        hops += 1;
                    }
                    _ => break,
                }
            }
            let is_lit = |i: Option<&Inst>| {
                matches!(
                    i,
                    Some(
                        Inst::Char { rev: false, .. }
                            | Inst::Class {
                                rev: false,
                                kind: ClassKind::FoldLit | ClassKind::NegChar,
                                ..
                            }
                    )
                )
            };
            let mut n = 0;
            if is_lit(self.insts.get(t)) {
                n = 1;
                while self.joined.get(t + n - 1) == Some(&true) && is_lit(self.insts.get(t + n)) {
                    n += 1;
                }
            }
            let skip = match self.insts[pc] {
                Inst::LazyOne { max: None, .. } => self.continuation_bytes(pc + 1),
                _ => None,
            };
            let skip = skip.map(|set| {
                self.lazy_skips.push(set);
                (self.lazy_skips.len() - 1) as u32
            });
            if let Inst::LazyOne {
                tail,
                tail_len,
                skip: s,
                ..
            } = &mut self.insts[pc]
            {
                *tail = t as u32;
                *tail_len = n as u32;
                *s = skip;
            }
        }
    }

    /// The bytes that the code from `pc` must read first, when every path
    /// from there starts with a character test (through group marks, jumps
    /// and choices); `None` when some path may do anything else first (an
    /// assertion, a lookaround, a loop register, the end of the pattern) or
    /// when any byte will do.
    fn continuation_bytes(&self, pc: usize) -> Option<[u64; 4]> {
        let mut out = [false; 256];
        let mut todo = vec![pc];
        let mut seen = vec![false; self.insts.len()];
        while let Some(pc) = todo.pop() {
            if std::mem::replace(seen.get_mut(pc)?, true) {
                continue;
            }
            match self.insts.get(pc)? {
                Inst::Open { .. } | Inst::Close { .. } => todo.push(pc + 1),
                Inst::Jmp(j) => todo.push(*j as usize),
                Inst::Split { first, second, .. } => {
                    todo.push(*first as usize);
                    todo.push(*second as usize);
                }
                Inst::Char { c, rev: false } => lead_bytes(*c, *c, &mut out),
                Inst::Class {
                    class, rev: false, ..
                } => {
                    for &(a, b) in self.classes[*class as usize].ranges() {
                        lead_bytes(a, b, &mut out);
                    }
                }
                Inst::Fail => {}
                _ => return None,
            }
        }
        if out.iter().all(|&on| on) {
            return None;
        }
        let mut set = [0u64; 4];
        for (b, _) in out.iter().enumerate().filter(|(_, on)| **on) {
            set[b / 64] |= 1 << (b % 64);
        }
        Some(set)
    }

    fn repeat(
        &mut self,
        node: &Node,
        min: u32,
        max: Option<u32>,
        greedy: bool,
        rev: bool,
    ) -> Result<(), RegexError> {
        // The mandatory copies.
        if min > 0 {
            let before = self.pc() as usize;
            self.emit(node, rev)?;
            let size = self.pc() as usize - before;
            if size.saturating_mul(min as usize) <= UNROLL_LIMIT {
                for _ in 1..min {
                    self.emit(node, rev)?;
                }
            } else {
                // Replace the single copy by a counted loop of `min` copies.
                self.insts.truncate(before);
                let reg = self.new_reg();
                self.push(Inst::LoopInit { reg })?;
                let body = self.pc();
                self.reg_stack.push(reg);
                self.emit(node, rev)?;
                self.reg_stack.pop();
                self.push(Inst::CountTail {
                    reg,
                    count: min,
                    body,
                })?;
            }
        }
        let rest = max.map(|m| m - min);
        // The module runs a repeat of a single character test with its own
        // opcode, which does not peek (see `Peek`).
        let general = !matches!(
            node,
            Node::Literal(_) | Node::Class(_) | Node::FoldLit(_) | Node::NegChar(_)
        );
        if rest == Some(0) {
            if general {
                self.push(Inst::PeekTail)?;
            }
            return Ok(());
        }
        if !greedy && !rev && !general {
            let item = match node {
                Node::Literal(c) => One::Char(*c),
                Node::Class(c) | Node::FoldLit(c) | Node::NegChar(c)
                    if c.ranges() == [('\0', char::MAX)] =>
                {
                    One::Any
                }
                Node::Class(c) | Node::FoldLit(c) | Node::NegChar(c) => {
                    One::Class(self.class_index(c))
                }
                _ => One::Any,
            };
            let memo = if self.memo && self.reg_stack.is_empty() && rest.is_none() {
                self.memo_slots += 1;
                self.memo_regs.push(Cow::Borrowed(&[]));
                Some(self.memo_slots - 1)
            } else {
                None
            };
            self.push(Inst::LazyOne {
                item,
                max: rest,
                tail: 0,
                tail_len: 0,
                memo,
                skip: None,
            })?;
            return Ok(());
        }
        if rest == Some(1) || (rest.is_none() && node.min_len() > 0) {
            // No registers needed: `X?`, or a loop whose body always moves.
            let entry = self.split(0, 0)?;
            let body = self.pc();
            self.emit(node, rev)?;
            let end_split = if rest.is_none() {
                Some(self.split(0, 0)?)
            } else {
                if general {
                    self.push(Inst::PeekTail)?;
                }
                None
            };
            let exit = self.pc();
            let (first, second) = if greedy { (body, exit) } else { (exit, body) };
            let entry_peek = if general {
                Peek::Entry { body, tail: exit }
            } else {
                Peek::None
            };
            self.set_split(entry, first, second, entry_peek);
            if let Some(end_split) = end_split {
                let end_peek = if general {
                    Peek::End {
                        body,
                        tail: exit,
                        greedy,
                    }
                } else {
                    Peek::None
                };
                self.set_split(end_split, first, second, end_peek);
            }
            return Ok(());
        }
        let reg = self.new_reg();
        self.push(Inst::LoopInit { reg })?;
        let split = self.split(0, 0)?;
        let body = self.pc();
        self.reg_stack.push(reg);
        self.push(Inst::IterStart { reg })?;
        self.emit(node, rev)?;
        let tail = self.push(Inst::LoopTail {
            reg,
            max: rest,
            greedy,
            body: 0,
            exit: 0,
            general,
        })?;
        self.reg_stack.pop();
        let exit = self.pc();
        self.patch(tail, |i| {
            if let Inst::LoopTail {
                body: b, exit: e, ..
            } = i
            {
                *b = body;
                *e = exit;
            }
        });
        let (first, second) = if greedy { (body, exit) } else { (exit, body) };
        let entry_peek = if general {
            Peek::Entry { body, tail: exit }
        } else {
            Peek::None
        };
        self.set_split(split, first, second, entry_peek);
        Ok(())
    }

    fn new_reg(&mut self) -> u32 {
        self.regs += 1;
        self.regs - 1
    }
}

/// The UTF-8 lead bytes of the characters in `lo..=hi`.
fn lead_bytes(lo: char, hi: char, out: &mut [bool; 256]) {
    let bounds: [(u32, u32); 4] = [
        (0, 0x7F),
        (0x80, 0x7FF),
        (0x800, 0xFFFF),
        (0x10000, 0x10FFFF),
    ];
    for (a, b) in bounds {
        let (l, h) = ((lo as u32).max(a), (hi as u32).min(b));
        if l > h {
            continue;
        }
        let (Some(lc), Some(hc)) = (
            char::from_u32(l).or(char::from_u32(0xE000)),
            char::from_u32(h).or(char::from_u32(0xD7FF)),
        ) else {
            continue;
        };
        let mut buf = [0u8; 4];
        let lb = lc.encode_utf8(&mut buf).as_bytes()[0];
        let hb = hc.encode_utf8(&mut buf).as_bytes()[0];
        for byte in lb..=hb {
            out[byte as usize] = true;
        }
    }
}

/// The bytes a match can start with, and whether the node can match without
/// consuming anything (then any position is a candidate).
fn first_bytes(node: &Node) -> ([bool; 256], bool) {
    let mut out = [false; 256];
    let nullable = first_into(node, &mut out);
    (out, nullable)
}

fn first_into(node: &Node, out: &mut [bool; 256]) -> bool {
    match node {
        Node::Empty | Node::Assert { .. } | Node::Look { .. } => true,
        Node::Fail => false,
        Node::Literal(c) => {
            lead_bytes(*c, *c, out);
            false
        }
        Node::Class(class) | Node::FoldLit(class) | Node::NegChar(class) => {
            for &(a, b) in class.ranges() {
                lead_bytes(a, b, out);
            }
            false
        }
        Node::Concat(items) => {
            for n in items {
                if !first_into(n, out) {
                    return false;
                }
            }
            true
        }
        Node::Alt(branches) => {
            let mut nullable = false;
            for b in branches {
                nullable |= first_into(b, out);
            }
            nullable
        }
        Node::Group { node, .. } | Node::Atomic { node, .. } => first_into(node, out),
        Node::Repeat { node, min, .. } => first_into(node, out) || *min == 0,
        Node::Backref { .. } => true,
    }
}

/// Whether every match must start at offset 0.
fn anchored_start(node: &Node) -> bool {
    match node {
        Node::Assert {
            kind: Assertion::Start,
            ..
        } => true,
        Node::Concat(items) => items.first().is_some_and(anchored_start),
        Node::Alt(branches) => !branches.is_empty() && branches.iter().all(anchored_start),
        Node::Group { node, .. } | Node::Atomic { node, .. } => anchored_start(node),
        Node::Repeat { node, min, .. } => *min > 0 && anchored_start(node),
        _ => false,
    }
}

/// The module's repeat limit, standing for "unbounded" in widths too.
const UNLIMITED_WIDTH: u64 = u32::MAX as u64;

/// The module's `max_width`.
fn max_width(node: &Node) -> u64 {
    match node {
        Node::Empty | Node::Assert { .. } | Node::Look { .. } | Node::Fail => 0,
        Node::Literal(_) | Node::Class(_) | Node::FoldLit(_) | Node::NegChar(_) => 1,
        Node::Concat(items) => items
            .iter()
            .fold(0u64, |a, n| a.saturating_add(max_width(n)))
            .min(UNLIMITED_WIDTH),
        Node::Alt(branches) => branches.iter().map(max_width).max().unwrap_or(0),
        Node::Group { node, .. } | Node::Atomic { node, .. } => max_width(node),
        Node::Repeat { node, max, .. } => match max {
            Some(m) => max_width(node)
                .saturating_mul(u64::from(*m))
                .min(UNLIMITED_WIDTH),
            None => UNLIMITED_WIDTH,
        },
        Node::Backref { .. } => UNLIMITED_WIDTH,
    }
}

fn literal_class(node: &Node) -> Option<Class> {
    match node {
        Node::Literal(c) => Some(Class::from_unicode(&ClassUnicode::new([
            ClassUnicodeRange::new(*c, *c),
        ]))),
        Node::FoldLit(c) => Some(c.clone()),
        _ => None,
    }
}

/// The module's `get_required_string`: (offset, string).
fn required_in(node: &Node) -> (u64, Option<Vec<Class>>) {
    match node {
        Node::Literal(_) | Node::FoldLit(_) => (0, literal_class(node).map(|c| vec![c])),
        Node::Group { node, .. } | Node::Atomic { node, .. } => required_in(node),
        Node::Repeat { node, min, max, .. } => {
            if *min > 0 {
                let (ofs, req) = required_in(node);
                if req.is_some() {
                    return (ofs, req);
                }
            }
            let w = match max {
                Some(m) => max_width(node).saturating_mul(u64::from(*m)),
                None => UNLIMITED_WIDTH,
            };
            (w.min(UNLIMITED_WIDTH), None)
        }
        Node::Concat(items) => {
            let mut flat = Vec::new();
            flat_items(items, &mut flat);
            let mut offset = 0u64;
            let mut i = 0;
            while i < flat.len() {
                // A run of literals of one kind is a single string.
                if literal_class(flat[i]).is_some() {
                    let folded = matches!(flat[i], Node::FoldLit(_));
                    let run: Vec<Class> = flat[i..]
                        .iter()
                        .take_while(|n| match n {
                            Node::Literal(_) => !folded,
                            Node::FoldLit(_) => folded,
                            _ => false,
                        })
                        .filter_map(|n| literal_class(n))
                        .collect();
                    return (offset, Some(run));
                }
                let (ofs, req) = required_in(flat[i]);
                offset = offset.saturating_add(ofs);
                if req.is_some() {
                    return (offset, req);
                }
                i += 1;
            }
            (offset, None)
        }
        other => (max_width(other), None),
    }
}

fn required_string(node: &Node) -> Option<Required> {
    let (offset, string) = required_in(node);
    let string = string?;
    let offset = (offset < UNLIMITED_WIDTH).then_some(offset as usize);
    Some(Required {
        offset,
        string: Cow::Owned(string),
    })
}

/// The module's `has_simple_start`: the pattern begins with a character
/// test (looking through groups).
fn simple_start(node: &Node) -> bool {
    match node {
        Node::Literal(_) | Node::Class(_) | Node::FoldLit(_) | Node::NegChar(_) => true,
        Node::Concat(items) => items
            .iter()
            .find(|n| !matches!(n, Node::Empty))
            .is_some_and(simple_start),
        Node::Group { node, .. } | Node::Atomic { node, .. } => simple_start(node),
        _ => false,
    }
}

/// The module's `get_firstset`: the characters a match can begin with, and
/// whether it can begin without one (`None` in the module). `Err` when there
/// is no first set at all (a backreference).
fn firstset(node: &Node) -> Result<(ClassUnicode, bool), ()> {
    Ok(match node {
        Node::Literal(c) => (ClassUnicode::new([ClassUnicodeRange::new(*c, *c)]), false),
        Node::Class(c) | Node::FoldLit(c) => (c.to_unicode(), false),
        // A negative character in the first set means there is none.
        Node::NegChar(_) => return Err(()),
        Node::Empty | Node::Fail | Node::Assert { .. } => (ClassUnicode::empty(), true),
        Node::Look {
            behind: false,
            negate: false,
            node,
            ..
        } => firstset(node)?,
        Node::Look { .. } => (ClassUnicode::empty(), true),
        Node::Backref { .. } => return Err(()),
        Node::Group { node, .. } | Node::Atomic { node, .. } => firstset(node)?,
        Node::Repeat { node, min, .. } => {
            let (c, none) = firstset(node)?;
            (c, none || *min == 0)
        }
        Node::Alt(branches) => {
            let mut out = ClassUnicode::empty();
            let mut none = branches.is_empty();
            for b in branches {
                let (c, n) = firstset(b)?;
                out.union(&c);
                none |= n;
            }
            (out, none)
        }
        Node::Concat(items) => {
            let mut out = ClassUnicode::empty();
            for item in items {
                let (c, none) = firstset(item)?;
                out.union(&c);
                if !none {
                    return Ok((out, false));
                }
            }
            (out, true)
        }
    })
}

/// The items of a sequence, with nested sequences (non-capturing groups)
/// flattened as the module's optimiser does.
fn flat_items<'a>(items: &'a [Node], out: &mut Vec<&'a Node>) {
    for n in items {
        match n {
            Node::Concat(inner) => flat_items(inner, out),
            Node::Empty => {}
            other => out.push(other),
        }
    }
}

/// Models the module's choice of the first test node and its search scan.
fn start_scan(node: &Node) -> StartScan {
    if !simple_start(node) {
        return match firstset(node) {
            Ok((class, false)) if class.ranges() != [ClassUnicodeRange::new('\0', char::MAX)] => {
                StartScan::Class {
                    class: Class::from_unicode(&class),
                    consumes: false,
                    peek: Some(0),
                }
            }
            _ => StartScan::None,
        };
    }
    // Walk to the first character test; group boundaries are skipped by the
    // module, but then the test is not the start node and nothing is peeked.
    let mut cur = node;
    let mut direct = true;
    let mut pc = 0u32;
    loop {
        match cur {
            Node::Group { node, .. } => {
                direct = false;
                pc += 1;
                cur = node;
            }
            Node::Atomic { .. } => return StartScan::None,
            Node::Concat(items) => {
                let mut flat = Vec::new();
                flat_items(items, &mut flat);
                let Some(first) = flat.first() else {
                    return StartScan::None;
                };
                if let Node::Literal(_) | Node::FoldLit(_) = first {
                    // A run of literals of the same kind is one string.
                    let folded = matches!(first, Node::FoldLit(_));
                    let len = flat
                        .iter()
                        .take_while(|n| match n {
                            Node::Literal(_) => !folded,
                            Node::FoldLit(_) => folded,
                            _ => false,
                        })
                        .count() as u32;
                    let peek = direct.then_some(pc + len);
                    return if len >= 2 {
                        StartScan::Str { at: pc, len, peek }
                    } else {
                        lit_scan(first, peek)
                    };
                }
                cur = first;
            }
            Node::Literal(_) | Node::FoldLit(_) => return lit_scan(cur, direct.then_some(pc + 1)),
            Node::NegChar(c) => {
                return StartScan::Class {
                    class: c.clone(),
                    consumes: true,
                    peek: direct.then_some(pc + 1),
                };
            }
            Node::Class(c) => {
                if c.ranges() == [('\0', char::MAX)] {
                    return StartScan::None;
                }
                return StartScan::Class {
                    class: c.clone(),
                    consumes: true,
                    peek: direct.then_some(pc + 1),
                };
            }
            _ => return StartScan::None,
        }
    }
}

fn lit_scan(node: &Node, peek: Option<u32>) -> StartScan {
    let class = match node {
        Node::Literal(c) => {
            Class::from_unicode(&ClassUnicode::new([ClassUnicodeRange::new(*c, *c)]))
        }
        Node::FoldLit(c) | Node::Class(c) => c.clone(),
        _ => return StartScan::None,
    };
    StartScan::Class {
        class,
        consumes: true,
        peek,
    }
}
