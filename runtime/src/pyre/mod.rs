//! Python `regex`-module patterns: syntax, a backtracking matcher, and the translation to DFAs.
//!
//! (Work in progress: the public API is in place; the engine lands next.)

use std::fmt;

/// A compiled pattern with the semantics of `regex.compile(p, regex.DOTALL)`.
#[derive(Clone, Debug)]
pub struct Regex {
    pattern: String,
    names: Vec<(String, usize)>,
    groups: usize,
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

/// The spans of a match: group 0 is the whole match; byte offsets into the haystack.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Captures {
    spans: Vec<Option<(usize, usize)>>,
}

impl Captures {
    /// The span of group `i`, or `None` if it did not participate (or does not exist).
    pub fn get(&self, i: usize) -> Option<(usize, usize)> {
        self.spans.get(i).copied().flatten()
    }
    /// The number of groups including group 0.
    pub fn len(&self) -> usize {
        self.spans.len()
    }
    /// Always false: group 0 exists.
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
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
    pub fn new(pattern: &str) -> Result<Regex, RegexError> {
        let _ = Regex { pattern: pattern.to_owned(), names: Vec::new(), groups: 0 };
        Err(RegexError { message: "unsupported: engine not yet available".into(), offset: 0 })
    }
    /// The pattern as written.
    pub fn pattern(&self) -> &str {
        &self.pattern
    }
    /// The number of capture groups, excluding group 0.
    pub fn group_count(&self) -> usize {
        self.groups
    }
    /// Named groups in order of their index.
    pub fn group_names(&self) -> &[(String, usize)] {
        &self.names
    }
    /// The index of the group called `name`.
    pub fn group_index(&self, name: &str) -> Option<usize> {
        self.names.iter().find(|(n, _)| n == name).map(|&(_, i)| i)
    }
    /// Python `compiled.search(hay, pos)`.
    pub fn search(&self, _hay: &str, _pos: usize) -> Result<Option<Captures>, MatchError> {
        Ok(None)
    }
    /// Python `compiled.search(hay, pos, partial=True)`.
    pub fn search_partial(&self, _hay: &str, _pos: usize) -> Result<Option<PartialMatch>, MatchError> {
        Ok(None)
    }
    /// One anchored attempt at `start`.
    pub fn match_at(&self, _hay: &str, _start: usize, _hay_is_complete: bool) -> Result<Attempt, MatchError> {
        Ok(Attempt { captures: None, hit_end: false })
    }
    /// Python `finditer(pattern, hay, flags=DOTALL)`.
    pub fn find_iter<'r, 'h>(&'r self, _hay: &'h str) -> impl Iterator<Item = Result<Captures, MatchError>> + 'r + 'h {
        std::iter::empty()
    }
    /// The DFA plan, or why there is none.
    pub fn dfa_plan(&self) -> Result<DfaPlan, Unsupported> {
        Err(Unsupported { construct: "engine not yet available".into(), offset: 0 })
    }
}
