//! Python `regex`-module patterns: syntax, a backtracking matcher, and the
//! translation to DFAs.
//!
//! The reference parser compiles every delimiter with the PyPI `regex`
//! module (VERSION0) and `regex.DOTALL`, and decides what to emit with its
//! partial matching. [`Regex`] reproduces that: the same patterns are
//! accepted (with Python's error messages and positions otherwise), and
//! `search`, `search_partial` and `find_iter` give the module's spans and
//! groups. Constructs this engine declines (fuzzy matching, recursion,
//! conditionals, branch reset, `\K`, …) are reported as
//! `unsupported: <construct>`.
//!
//! [`Regex::dfa_plan`] translates the patterns a DFA can run exactly into
//! regex-syntax HIR for the streaming scanner; [`Regex::match_at`] is the
//! ground truth it falls back on.
//!
//! # Partial matching
//!
//! The module's partial matching is not a clean "some path reaches the end"
//! rule: it comes out of its search loop (the required-string jump, the scan
//! for the pattern's first test, a peek after it), of the peeks it makes at
//! every repeat's decision points, and of how it extends a lazy
//! single-character repeat followed by a literal (it reports a partial match
//! whenever the literal is not found ahead, even across characters the
//! repeat cannot match -- `\[TOOL_CALLS\](?P<name>[^\[]+?)\[ARGS\]` holds
//! `"[TOOL_CALLS]get[x]"` as partial). These were read off the module's C
//! source (2026.11.15) and are modelled; `tests/pyre_conformance.rs` checks
//! them. Known differences:
//!
//! * Where both sides find nothing but an empty partial match at the very
//!   end of the text, the two may disagree on whether it is reported (the
//!   reference parser cannot tell the difference).
//! * For a pattern that starts with `.` under DOTALL, the module reads an
//!   uninitialised position when its scan reaches the end; its results there
//!   (spans that end before they start) are not reproduced.
//! * A few convoluted patterns (repeats of possessive or lookaround-bearing
//!   groups) depend on the module's repeat guards, which are not modelled.
//!
//! # Unicode
//!
//! `\w`, `\d`, `\s` and word boundaries use tables read off the module.
//! General categories, scripts and binary properties come from regex-syntax,
//! which implements Unicode 16 while the module implements Unicode 17: the
//! characters added in 17 are not in those classes. Case-insensitive
//! matching is simple case folding plus the module's one-way Turkic `i`
//! equivalences.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod ast;
mod class;
mod compile;
mod dfa;
mod exec;
mod parse;
mod tag;
#[cfg(test)]
mod tests;
pub mod unicode_tables;

// The compiled form, for generated code that writes a `Program` as a
// `static` (see `Regex::from_static`); not a stable API.
#[doc(hidden)]
pub use ast::{Assertion, Fold};
#[doc(hidden)]
pub use class::Class;
#[doc(hidden)]
pub use compile::{ClassKind, Inst, One, Peek, Program, Required, StartScan};

use exec::{Mode, Outcome, Scan, Vm};
use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

/// A compiled pattern with the semantics of `regex.compile(p, regex.DOTALL)`.
#[derive(Clone, Debug)]
pub struct Regex {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    pattern: String,
    names: Vec<(String, usize)>,
    groups: usize,
    /// The pattern tree, for [`Regex::dfa_plan`]; `None` for a regex built
    /// from a precompiled program ([`Regex::from_static`]).
    node: Option<ast::Node>,
    prog: Cow<'static, Program>,
    /// The pattern's tag shape, when `find_iter` can run without the VM
    /// (see the `tag` module).
    tag: Option<tag::TagShape>,
}

/// Why a pattern does not compile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegexError {
    /// What is wrong (Python's message, without the position).
    pub message: String,
    /// Offset in the pattern, in characters, like Python's `error.pos`.
    pub offset: usize,
}

impl fmt::Display for RegexError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at position {}", self.message, self.offset)
    }
}

impl std::error::Error for RegexError {}

/// Why a match attempt gave up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatchError {
    /// The backtracking step budget was exhausted.
    Budget,
}

impl fmt::Display for MatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("regex backtracking budget exceeded")
    }
}

impl std::error::Error for MatchError {}

/// A group's span, `None` when it did not take part.
type Span = Option<(usize, usize)>;

/// How many spans a [`Captures`] holds without allocating: enough for the
/// patterns content parsers run once per parameter (a tag pattern's whole
/// match, key and value), which would otherwise allocate once per match.
const INLINE_SPANS: usize = 4;

/// The spans of a match: group 0 is the whole match; byte offsets into the haystack.
#[derive(Clone, Debug)]
pub struct Captures {
    /// The spans of a pattern with at most [`INLINE_SPANS`] groups
    /// (including group 0), the first `len`.
    inline: [Span; INLINE_SPANS],
    len: usize,
    /// The spans of a pattern with more groups (then `inline` is unused).
    heap: Vec<Span>,
}

impl PartialEq for Captures {
    fn eq(&self, other: &Captures) -> bool {
        self.spans() == other.spans()
    }
}

impl Eq for Captures {}

impl Captures {
    /// `groups + 1` spans, all `None`.
    fn none(groups: usize) -> Captures {
        let n = groups + 1;
        Captures {
            inline: [None; INLINE_SPANS],
            len: n,
            heap: if n > INLINE_SPANS {
                vec![None; n]
            } else {
                Vec::new()
            },
        }
    }

    fn spans(&self) -> &[Span] {
        if self.len > INLINE_SPANS {
            &self.heap
        } else {
            &self.inline[..self.len]
        }
    }

    fn spans_mut(&mut self) -> &mut [Span] {
        if self.len > INLINE_SPANS {
            &mut self.heap
        } else {
            &mut self.inline[..self.len]
        }
    }

    /// The span of group `i`, or `None` if it did not participate (or does not exist).
    pub fn get(&self, i: usize) -> Option<(usize, usize)> {
        self.spans().get(i).copied().flatten()
    }
    /// The number of groups including group 0.
    pub fn len(&self) -> usize {
        self.len
    }
    /// Always false: group 0 exists.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Start of the whole match.
    pub fn start(&self) -> usize {
        self.get(0).map_or(0, |s| s.0)
    }
    /// End of the whole match.
    pub fn end(&self) -> usize {
        self.get(0).map_or(0, |s| s.1)
    }
}

/// The result of [`Regex::search_partial`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartialMatch {
    /// The spans; for a partial match group 0 ends at the end of the haystack.
    pub captures: Captures,
    /// Whether the match is partial (Python's `m.partial`).
    pub partial: bool,
}

/// The result of [`Regex::match_at`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attempt {
    /// The match starting at the given position, if any.
    pub captures: Option<Captures>,
    /// Whether more text after the haystack could change this result.
    pub hit_end: bool,
}

/// How a pattern runs on DFAs.
#[derive(Clone, Debug)]
pub struct DfaPlan {
    /// Top-level alternatives in priority order.
    pub branches: Vec<DfaBranch>,
}

/// One top-level alternative of a [`DfaPlan`].
#[derive(Clone, Debug)]
pub struct DfaBranch {
    /// The branch may start at `s` only if some match of `guard` ends at `s`.
    pub guard: Option<regex_syntax::hir::Hir>,
    /// What a leftmost-first DFA runs anchored at the start.
    pub body: regex_syntax::hir::Hir,
    /// Whether `body` ends with a converted lookahead (the real end then comes from [`Regex::match_at`]).
    pub lookahead: bool,
}

/// How the groups of a match are read off with leftmost-first DFAs, for a
/// pattern whose groups sit at the top of its branches (see
/// [`Regex::capture_plan`]).
///
/// Given a match the scanner settled, the backtracker's captures are the
/// ones the pieces give when each is matched leftmost-first in turn from the
/// match's start, within the match: the first branch that matches at all is
/// the one the backtracker takes, and within it the highest-priority path
/// through the whole branch begins with the highest-priority path through
/// its first piece (a path preferred to it would diverge inside that piece
/// at a choice the piece alone prefers), and so on piece by piece. When a
/// piece finds no match or the pieces end elsewhere than the match, the
/// backtracker had to revisit an earlier piece: the caller then asks
/// [`Regex::match_at`].
#[derive(Clone, Debug)]
pub struct CapturePlan {
    /// The top-level alternatives in priority order.
    pub branches: Vec<CaptureBranch>,
}

/// One top-level alternative of a [`CapturePlan`].
#[derive(Clone, Debug)]
pub struct CaptureBranch {
    /// The whole branch, to tell whether it matches at all.
    pub whole: regex_syntax::hir::Hir,
    /// The branch in order: text matched by pieces, and group boundaries.
    pub pieces: Vec<CapturePiece>,
}

/// A step of a [`CaptureBranch`].
#[derive(Clone, Debug)]
pub enum CapturePiece {
    /// Exactly this text.
    Literal(String),
    /// What a leftmost-first DFA of this matches.
    Match(regex_syntax::hir::Hir),
    /// Group `n` opens here.
    Open(usize),
    /// Group `n` closes here.
    Close(usize),
}

/// Where matches of a pattern can begin (see [`Regex::start_literals`]):
/// at a non-empty literal, or at the start of a run of `class` characters
/// just before it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StartLiteral {
    /// The loop that may stand before the literal, if any.
    pub class: Option<Class>,
    /// The literal every match of this alternative reads first, after the
    /// loop (never empty).
    pub literal: String,
}

/// A pattern that is a leading loop and literals (see
/// [`Regex::looped_literals`]), such as `\s*<tool_call>` or
/// `\s*(?:<|im_end|>|<|endoftext|>)`: it matches at the start of the run of
/// `class` characters just before one of `literals`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoopedLiterals {
    /// The loop's characters.
    pub class: Class,
    /// The literal alternatives, in the pattern's order (never empty
    /// strings).
    pub literals: Vec<String>,
}

/// One piece of a [`LiteralSequence`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SeqPiece {
    /// Exactly this text (never empty).
    Lit(String),
    /// A greedy run of these characters, possibly empty.
    Loop(Class),
}

/// A pattern that is literals and loops in sequence (see
/// [`Regex::literal_sequence`]), such as `</function>\s*</tool_call>` or
/// `</tool_call>\s*`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LiteralSequence {
    /// The pieces, in order: no two loops in a row, and every loop that a
    /// literal follows excludes that literal's first character, so that
    /// the pattern matches at a position in one way only (each loop takes
    /// its whole run).
    pub pieces: Vec<SeqPiece>,
}

/// The characters `node` repeats when it is a greedy, unbounded,
/// possibly empty loop (`C*`) of a class or of one literal character.
fn star_class(node: &ast::Node) -> Option<Class> {
    let ast::Node::Repeat {
        node,
        min: 0,
        max: None,
        greedy: true,
        possessive: false,
        ..
    } = node
    else {
        return None;
    };
    match node.as_ref() {
        ast::Node::Class(class) => Some(class.clone()),
        ast::Node::Literal(c) => Some(Class::from_unicode(&class::cp_range(*c as u32, *c as u32))),
        _ => None,
    }
}

/// The literals that every match of `items` (in sequence) begins with, one
/// per way it can begin: its leading plain characters; or, when it begins
/// with a group, alternatives or an optional item, those of each way
/// through them (at most 16). `None` when some way begins otherwise (or
/// with nothing), so that no literal stands at the start of its matches.
fn leading_literals(items: &[&ast::Node], out: &mut Vec<String>) -> Option<()> {
    let literal: String = items
        .iter()
        .map_while(|n| match n {
            ast::Node::Literal(c) => Some(*c),
            _ => None,
        })
        .collect();
    if !literal.is_empty() {
        out.push(literal);
        return (out.len() <= 16).then_some(());
    }
    let (first, rest) = items.split_first()?;
    // `first` followed by `rest`, with `first` replaced by `inner`.
    let then = |inner: &[&ast::Node], out: &mut Vec<String>| {
        let mut seq: Vec<&ast::Node> = inner.to_vec();
        seq.extend_from_slice(rest);
        leading_literals(&seq, out)
    };
    match first {
        ast::Node::Concat(v) => then(&v.iter().collect::<Vec<_>>(), out),
        ast::Node::Group { node, .. } => then(&[node], out),
        ast::Node::Alt(branches) => {
            for b in branches {
                then(&[b], out)?;
            }
            Some(())
        }
        // An optional item: the match begins with it, or without it.
        ast::Node::Repeat {
            node,
            min: 0,
            max: Some(1),
            possessive: false,
            ..
        } => {
            then(&[node], out)?;
            leading_literals(rest, out)
        }
        _ => None,
    }
}

/// The strings a sequence of nodes matches, when it is literals and
/// alternations of literals only (at most 64 strings).
fn literal_strings(nodes: &[ast::Node]) -> Option<Vec<String>> {
    let mut out = vec![String::new()];
    for n in nodes {
        let next: Vec<String> = match n {
            ast::Node::Literal(c) => out.iter().map(|s| format!("{s}{c}")).collect(),
            ast::Node::Concat(v) => {
                let tails = literal_strings(v)?;
                out.iter()
                    .flat_map(|s| tails.iter().map(move |t| format!("{s}{t}")))
                    .collect()
            }
            ast::Node::Alt(branches) => {
                let mut tails = Vec::new();
                for b in branches {
                    tails.extend(literal_strings(std::slice::from_ref(b))?);
                }
                out.iter()
                    .flat_map(|s| tails.iter().map(move |t| format!("{s}{t}")))
                    .collect()
            }
            _ => return None,
        };
        if next.len() > 64 {
            return None;
        }
        out = next;
    }
    Some(out)
}

/// Why a pattern has no [`DfaPlan`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unsupported {
    /// The construct a DFA cannot run.
    pub construct: String,
    /// Its offset in the pattern, in characters.
    pub offset: usize,
}

impl Regex {
    /// Compiles `pattern` as `regex.compile(pattern, regex.DOTALL)` would.
    ///
    /// Errors carry Python's message and position; constructs this engine
    /// does not implement give `unsupported: <construct>`.
    pub fn new(pattern: &str) -> Result<Regex, RegexError> {
        let parsed = parse::parse(pattern)?;
        let prog = compile::compile(&parsed.node, parsed.group_count)?;
        let tag = tag::TagShape::of(&parsed.node, parsed.group_count);
        Ok(Regex {
            inner: Arc::new(Inner {
                pattern: pattern.to_owned(),
                names: parsed.names,
                groups: parsed.group_count,
                node: Some(parsed.node),
                prog: Cow::Owned(prog),
                tag,
            }),
        })
    }

    /// A regex running a program compiled ahead of time (by generated code
    /// that wrote [`Regex::program`] of `Regex::new(pattern)` as a
    /// `static`): nothing is parsed or compiled. `names` and `groups` are
    /// those of the original ([`Regex::group_names`],
    /// [`Regex::group_count`]). Such a regex has no [`Regex::dfa_plan`].
    #[doc(hidden)]
    pub fn from_static(
        pattern: &str,
        names: &[(&str, usize)],
        groups: usize,
        prog: &'static Program,
    ) -> Regex {
        Regex {
            inner: Arc::new(Inner {
                pattern: pattern.to_owned(),
                names: names.iter().map(|&(n, i)| (n.to_owned(), i)).collect(),
                groups,
                node: None,
                prog: Cow::Borrowed(prog),
                tag: None,
            }),
        }
    }

    /// The compiled program (for writing it out ahead of time).
    #[doc(hidden)]
    pub fn program(&self) -> &Program {
        &self.inner.prog
    }

    /// The pattern as written.
    pub fn pattern(&self) -> &str {
        &self.inner.pattern
    }

    /// The number of capture groups, excluding group 0.
    pub fn group_count(&self) -> usize {
        self.inner.groups
    }

    /// Named groups in order of their index (two names may share an index
    /// when a name is reused, which the `regex` module allows).
    pub fn group_names(&self) -> &[(String, usize)] {
        &self.inner.names
    }

    /// The index of the group called `name`.
    pub fn group_index(&self, name: &str) -> Option<usize> {
        self.inner
            .names
            .iter()
            .find(|(n, _)| n == name)
            .map(|&(_, i)| i)
    }

    fn captures(&self, vm: &Vm<'_, '_>) -> Captures {
        let mut c = Captures::none(self.inner.groups);
        for (g, span) in c.spans_mut().iter_mut().enumerate() {
            *span = vm.span(g);
        }
        c
    }

    /// The first candidate start at or after `pos` (a char boundary), or
    /// `None` past the end.
    fn next_start(hay: &str, mut pos: usize) -> Option<usize> {
        while pos <= hay.len() {
            if hay.is_char_boundary(pos) {
                return Some(pos);
            }
            pos += 1;
        }
        None
    }

    /// Whether a match may start at byte offset `at` of `hay`, as far as the
    /// pattern's first bytes tell (`true` when it has no such set); a
    /// `false` is final whatever text follows, so a caller trying starts
    /// one by one can skip there without running the matcher.
    pub fn can_start_at(&self, hay: &str, at: usize) -> bool {
        let prog = &self.inner.prog;
        if prog.anchored_start && at > 0 {
            return false;
        }
        match (&prog.first_bytes, hay.as_bytes().get(at)) {
            (Some(fb), Some(&b)) => compile::in_byte_set(fb, b),
            _ => true,
        }
    }

    /// Searches from `pos` in `mode`; `must_advance` rejects a match that is
    /// empty at `pos` (finditer after an empty match).
    fn search_mode(
        &self,
        hay: &str,
        pos: usize,
        must_advance: bool,
    ) -> Result<Option<Captures>, MatchError> {
        let prog = &self.inner.prog;
        let pos = pos.min(hay.len());
        let mut vm = Vm::new(prog, hay, Mode::Complete, pos);
        vm.set_must_advance(must_advance);
        let bytes = hay.as_bytes();
        let mut s = match Self::next_start(hay, pos) {
            Some(s) => s,
            None => return Ok(None),
        };
        loop {
            if prog.anchored_start && s > 0 {
                return Ok(None);
            }
            let candidate = match &prog.first_bytes {
                Some(fb) => s < bytes.len() && compile::in_byte_set(fb, bytes[s]),
                None => true,
            };
            if candidate {
                match vm.run(s) {
                    Outcome::Match => return Ok(Some(self.captures(&vm))),
                    Outcome::Budget => return Err(MatchError::Budget),
                    Outcome::NoMatch | Outcome::Partial => {}
                }
            }
            if s >= hay.len() {
                return Ok(None);
            }
            s = match &prog.first_bytes {
                // Skip ahead to the next byte that can start a match.
                Some(fb) => match bytes[s + 1..]
                    .iter()
                    .position(|&b| compile::in_byte_set(fb, b))
                {
                    Some(i) => s + 1 + i,
                    None => return Ok(None),
                },
                None => s + hay[s..].chars().next().map_or(1, char::len_utf8),
            };
        }
    }

    /// Python `compiled.search(hay, pos)`: the leftmost match starting at or
    /// after byte offset `pos`. Text before `pos` is visible to lookbehind
    /// and `\b`; `^` and `\A` match only at offset 0.
    pub fn search(&self, hay: &str, pos: usize) -> Result<Option<Captures>, MatchError> {
        self.search_mode(hay, pos, false)
    }

    /// Python `compiled.search(hay, pos, partial=True)`.
    ///
    /// As the `regex` module does, this first looks for a complete match
    /// (the end of `hay` being the end of the text) and returns the leftmost
    /// one. Failing that, it returns the leftmost start from which some path
    /// reads past the end of `hay`: a partial match spanning to the end, with
    /// the groups that had closed by then. Failing that too, the module's
    /// search scan may still report an empty partial match at the end.
    pub fn search_partial(
        &self,
        hay: &str,
        pos: usize,
    ) -> Result<Option<PartialMatch>, MatchError> {
        if let Some(captures) = self.search(hay, pos)? {
            return Ok(Some(PartialMatch {
                captures,
                partial: false,
            }));
        }
        let prog = &self.inner.prog;
        let pos = pos.min(hay.len());
        let mut vm = Vm::new(prog, hay, Mode::Partial, pos);
        let Some(mut s) = Self::next_start(hay, pos) else {
            return Ok(None);
        };
        let bare = |start: usize| {
            let mut captures = Captures::none(self.inner.groups);
            captures.spans_mut()[0] = Some((start, hay.len()));
            Some(PartialMatch {
                captures,
                partial: true,
            })
        };
        // Where the required string was last found in full.
        let mut req_pos: Option<usize> = None;
        let mut req_miss: Option<(usize, usize)> = None;
        if prog.anchored_start {
            // The module tests the first set at offset 0 and tries it alone.
            if s > 0 {
                return Ok(None);
            }
            return Ok(match vm.scan(&prog.start, 0) {
                Scan::At(0) => match vm.run(0) {
                    Outcome::Partial => Some(PartialMatch {
                        captures: self.captures(&vm),
                        partial: true,
                    }),
                    Outcome::Match => Some(PartialMatch {
                        captures: self.captures(&vm),
                        partial: false,
                    }),
                    Outcome::Budget => return Err(MatchError::Budget),
                    Outcome::NoMatch => None,
                },
                Scan::Partial(0) => bare(0),
                _ => None,
            });
        }
        loop {
            // The module first jumps to just before the required string.
            let mut t = s;
            if let Some(req) = prog
                .required
                .as_ref()
                .filter(|_| req_pos.is_none_or(|rp| s >= rp))
            {
                let (found, partial) = match (req_pos, req_miss) {
                    (Some(rp), _) if s <= rp => (rp, false),
                    // Not found in full from `from`: nor from any later start
                    // up to where its prefix was found.
                    (_, Some((from, at))) if from <= s && s <= at => (at, true),
                    _ => vm.find_required(req, s),
                };
                if partial {
                    req_miss = Some((s, found));
                }
                if !partial {
                    req_pos = Some(found);
                }
                if let Some(back) = req
                    .offset
                    .and_then(|off| vm.chars_back(found, off))
                    .filter(|&b| b >= s)
                {
                    t = back;
                }
            }
            // The module's scan for the next candidate start.
            let candidate = match vm.scan(&prog.start, t) {
                Scan::At(c) => c,
                Scan::Partial(p) => return Ok(bare(p)),
                Scan::Exhausted => return Ok(None),
            };
            match vm.run(candidate) {
                Outcome::Partial => {
                    return Ok(Some(PartialMatch {
                        captures: self.captures(&vm),
                        partial: true,
                    }));
                }
                Outcome::Match => {
                    return Ok(Some(PartialMatch {
                        captures: self.captures(&vm),
                        partial: false,
                    }));
                }
                Outcome::Budget => return Err(MatchError::Budget),
                Outcome::NoMatch => {}
            }
            if candidate >= hay.len() {
                return Ok(None);
            }
            s = candidate + hay[candidate..].chars().next().map_or(1, char::len_utf8);
        }
    }

    /// One anchored attempt at byte offset `start` (no scanning).
    ///
    /// When `hay_is_complete` is false, the end of `hay` is not the end of
    /// the text: reading past it, or evaluating `$`, `\Z`, `\b`, `\B` (or a
    /// lookaround that reads) at the end, sets `hit_end`. `hit_end` is true
    /// whenever more text could change the result of this attempt (some path
    /// explored up to the first successful one touched the end); when false,
    /// the result is final whatever follows.
    pub fn match_at(
        &self,
        hay: &str,
        start: usize,
        hay_is_complete: bool,
    ) -> Result<Attempt, MatchError> {
        self.match_at_limited(hay, start, hay_is_complete, u64::MAX)
            .0
    }

    /// [`Regex::match_at`] with at most `max_steps` backtracking steps (and
    /// never more than the per-call budget); also returns the steps taken,
    /// so that a caller can share one budget across many attempts.
    pub fn match_at_limited(
        &self,
        hay: &str,
        start: usize,
        hay_is_complete: bool,
        max_steps: u64,
    ) -> (Result<Attempt, MatchError>, u64) {
        if start > hay.len() || !hay.is_char_boundary(start) {
            return (
                Ok(Attempt {
                    captures: None,
                    hit_end: false,
                }),
                0,
            );
        }
        let mode = if hay_is_complete {
            Mode::Complete
        } else {
            Mode::Incomplete
        };
        let mut vm = Vm::new(&self.inner.prog, hay, mode, start);
        vm.set_step_limit(max_steps);
        let out = match vm.run(start) {
            Outcome::Match => Ok(Attempt {
                captures: Some(self.captures(&vm)),
                hit_end: vm.hit_end,
            }),
            Outcome::NoMatch | Outcome::Partial => Ok(Attempt {
                captures: None,
                hit_end: vm.hit_end,
            }),
            Outcome::Budget => Err(MatchError::Budget),
        };
        (out, vm.steps())
    }

    /// Python `regex.finditer(pattern, hay, flags=regex.DOTALL)`: successive
    /// non-overlapping matches. After an empty match the next match may not
    /// be empty at the same position (it may be non-empty there); an empty
    /// match may directly follow a non-empty one.
    ///
    /// (The iterator owns a copy of `hay`: the signature promises it outlives
    /// both borrows, which a borrowing iterator could not.)
    pub fn find_iter<'r, 'h>(
        &'r self,
        hay: &'h str,
    ) -> impl Iterator<Item = Result<Captures, MatchError>> + use<'r, 'h> {
        // Tag patterns (`<parameter=(?P<key>[^>\n]+)>(?P<value>.*?)</parameter>`)
        // are found by string searches, in linear time; the rest by the VM.
        let mut tag = self.inner.tag.as_ref().map(|t| t.find_iter(hay));
        let mut vm = match tag {
            Some(_) => None,
            None => Some(self.find_iter_vm(hay)),
        };
        std::iter::from_fn(move || match (&mut tag, &mut vm) {
            (Some(t), _) => t.next().map(Ok),
            (None, Some(v)) => v.next(),
            (None, None) => None,
        })
    }

    /// Whether [`Regex::find_iter`] runs without the VM for this pattern.
    #[doc(hidden)]
    pub fn finds_tags_directly(&self) -> bool {
        self.inner.tag.is_some()
    }

    /// [`Regex::find_iter`] on the backtracking VM, whatever the pattern
    /// (the differential tests compare the two).
    #[doc(hidden)]
    pub fn find_iter_vm<'r, 'h>(
        &'r self,
        hay: &'h str,
    ) -> impl Iterator<Item = Result<Captures, MatchError>> + 'r + 'h {
        let re = self.clone();
        let hay: Box<str> = hay.into();
        let mut pos = 0;
        let mut must_advance = false;
        let mut done = false;
        std::iter::from_fn(move || {
            if done || pos > hay.len() {
                return None;
            }
            match re.search_mode(&hay, pos, must_advance) {
                Ok(Some(c)) => {
                    must_advance = c.start() == c.end();
                    pos = c.end();
                    Some(Ok(c))
                }
                Ok(None) => {
                    done = true;
                    None
                }
                Err(e) => {
                    done = true;
                    Some(Err(e))
                }
            }
        })
    }

    /// The pattern as a leading loop and literals, when it is exactly
    /// `C*(?:l1|l2|...)`: a greedy, unbounded repeat of one character class
    /// followed by a choice of non-empty literal strings, with no group,
    /// assertion, lookaround or flag-folded character (see
    /// [`LoopedLiterals`]). `None` otherwise, and for a regex built by
    /// [`Regex::from_static`] (it has no pattern tree).
    pub fn looped_literals(&self) -> Option<LoopedLiterals> {
        let Some(ast::Node::Concat(items)) = &self.inner.node else {
            return None;
        };
        let (first, rest) = items.split_first()?;
        let class = star_class(first)?;
        let literals = literal_strings(rest)?;
        if literals.is_empty() || literals.iter().any(String::is_empty) {
            return None;
        }
        Some(LoopedLiterals { class, literals })
    }

    /// The pattern as literals and loops in sequence (`L1 C* L2`, `L C*`,
    /// `C* L1 C* L2`, ...): a top-level concatenation of literal
    /// characters and greedy, unbounded repeats of one character class,
    /// with no group, assertion, lookaround, alternation or flag-folded
    /// character, no two loops in a row, at least one literal, and every
    /// loop followed by a literal that does not begin with one of the
    /// loop's characters. `None` otherwise, and for a regex built by
    /// [`Regex::from_static`].
    pub fn literal_sequence(&self) -> Option<LiteralSequence> {
        let Some(ast::Node::Concat(items)) = &self.inner.node else {
            return None;
        };
        let mut pieces: Vec<SeqPiece> = Vec::new();
        for item in items {
            match item {
                ast::Node::Literal(c) => match pieces.last_mut() {
                    Some(SeqPiece::Lit(s)) => s.push(*c),
                    _ => pieces.push(SeqPiece::Lit(c.to_string())),
                },
                other => {
                    let class = star_class(other)?;
                    if matches!(pieces.last(), Some(SeqPiece::Loop(_))) {
                        return None;
                    }
                    pieces.push(SeqPiece::Loop(class));
                }
            }
        }
        for pair in pieces.windows(2) {
            if let [SeqPiece::Loop(class), SeqPiece::Lit(l)] = pair
                && l.chars().next().is_none_or(|c| class.contains(c))
            {
                return None;
            }
        }
        if !pieces.iter().any(|p| matches!(p, SeqPiece::Lit(_))) {
            return None;
        }
        Some(LiteralSequence { pieces })
    }

    /// Where the pattern's matches can begin, when every top-level
    /// alternative is an optional greedy loop of one class (`C*`), then
    /// what begins with plain literal characters: a literal, alternatives
    /// that each begin with one (`(?:<|im_end|>|<|endoftext|>)`), or an
    /// optional group that does, before what does
    /// (`(?:<tool_call>\s*)?<function=`). Each such literal gives a
    /// [`StartLiteral`] with the alternative's loop (at most 16 in all). A
    /// match then begins at an occurrence of one of the literals, or at
    /// the start of the run of its loop's characters just before it;
    /// nowhere else. `None` for any other shape (an alternative that begins
    /// with a class, a loop, an assertion, a flag-folded character, ...),
    /// and for a regex built by [`Regex::from_static`].
    pub fn start_literals(&self) -> Option<Vec<StartLiteral>> {
        let top = self.inner.node.as_ref()?;
        let alternatives: &[ast::Node] = match top {
            ast::Node::Alt(branches) => branches,
            other => std::slice::from_ref(other),
        };
        let mut out = Vec::new();
        for alt in alternatives {
            let items: &[ast::Node] = match alt {
                ast::Node::Concat(items) => items,
                other => std::slice::from_ref(other),
            };
            let (class, rest) = match items.split_first() {
                Some((first, rest)) => match star_class(first) {
                    Some(c) => (Some(c), rest),
                    None => (None, items),
                },
                None => return None,
            };
            let mut literals = Vec::new();
            leading_literals(&rest.iter().collect::<Vec<_>>(), &mut literals)?;
            for literal in literals {
                let first = literal.chars().next()?;
                if class.as_ref().is_some_and(|c| c.contains(first)) {
                    return None;
                }
                out.push(StartLiteral {
                    class: class.clone(),
                    literal,
                });
            }
            if out.len() > 16 {
                return None;
            }
        }
        Some(out)
    }

    /// The capture plan (see [`CapturePlan`]), if the pattern has its
    /// shape: no lookaround, assertion, backreference, atomic group or
    /// possessive repeat, and every group at the top of a branch (inside
    /// groups and concatenations only). `None` for a regex built by
    /// [`Regex::from_static`].
    pub fn capture_plan(&self) -> Option<CapturePlan> {
        dfa::capture_plan(self.inner.node.as_ref()?)
    }

    /// The DFA plan (see [`DfaPlan`]), or why there is none.
    ///
    /// A regex built by [`Regex::from_static`] has no pattern tree and
    /// always gives `Err` (the plan is made when the template is compiled).
    pub fn dfa_plan(&self) -> Result<DfaPlan, Unsupported> {
        match &self.inner.node {
            Some(node) => dfa::plan(node),
            None => Err(Unsupported {
                construct: "no DFA plan for a precompiled regex (Regex::from_static)".to_owned(),
                offset: 0,
            }),
        }
    }
}
