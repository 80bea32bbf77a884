//! Delimiters: the open and close markers of regions, compiled for scanning.
//!
//! A delimiter is written either as literals (`"open": "<think>"`, or a list)
//! or as a Python regex (`"open_pattern": ...`). Both compile to a
//! [`Regex`], which is the ground truth (captures, the
//! reference's partial matching, and the backtracking path), and, where the
//! pattern allows, to DFA tables that the streaming scanner runs in linear
//! time.
//!
//! A pattern runs on DFAs when [`Regex::dfa_plan`](crate::pyre::Regex::dfa_plan)
//! can express it: each top-level branch gets a table, a lookbehind at the
//! start of a branch becomes a *guard* (a tracker automaton that reports where
//! the lookbehind holds), and a trailing lookahead is matched as plain text
//! (the real end then comes from the regex). Other constructs use the
//! backtracking path, which is exact but re-examines held text on each feed.

use crate::pyre::Regex;
#[cfg(feature = "dynamic")]
use crate::pyre::RegexError;
use crate::scan::table::DfaTable;
#[cfg(feature = "dynamic")]
use crate::scan::table::{TableError, TableKind};
use std::borrow::Cow;

/// How the scanner runs a delimiter.
#[derive(Clone, Debug)]
pub enum Matcher {
    /// Top-level branches in priority order, each a DFA with an optional guard.
    Dfa(Cow<'static, [Branch]>),
    /// The backtracking path: [`Regex::match_at`] at each candidate start.
    Backtrack,
}

/// One top-level alternative of a delimiter pattern.
#[derive(Clone, Debug)]
pub struct Branch {
    /// The anchored, leftmost-first automaton of the branch.
    pub table: DfaTable,
    /// Index of the tracker (in [`Trackers`]) that must report a match
    /// ending at the start position, or `None` when the branch has no
    /// lookbehind.
    pub guard: Option<u16>,
}

/// A compiled delimiter.
#[derive(Clone, Debug)]
pub struct Delimiter {
    /// The delimiter as written: its literals or its pattern.
    pub source: DelimiterSource,
    /// The pattern (literals are escaped and joined longest first, as the
    /// reference does).
    pub regex: Regex,
    /// How the streaming scanner runs it.
    pub matcher: Matcher,
    /// Whether a committed match needs [`Regex::match_at`] for its captures
    /// or its real end (named groups, or a trailing lookahead).
    pub needs_regex_at_commit: bool,
    /// The reference's rule for a complete match that ends at the end of the
    /// buffer: it is held unless it is a literal that no other literal of
    /// its list extends.
    pub ref_can_grow: bool,
    /// Bytes at which a match can begin (or match empty); used to skip text.
    pub first_bytes: [bool; 256],
    /// Whether the delimiter may match the empty string somewhere.
    pub may_match_empty: bool,
    /// Whether matching looks at text before the start position (lookbehind,
    /// `^`, `\b`): the parser then keeps the text it has consumed.
    pub needs_history: bool,
}

/// A delimiter as written in the template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DelimiterSource {
    /// `open` / `close` / `start_anchor`: literals, de-duplicated, in the
    /// order given.
    Literals(Vec<String>),
    /// `open_pattern` / `close_pattern` / `start_anchor_pattern`.
    Pattern(String),
}

/// Lookbehind trackers shared by the delimiters of one template.
#[derive(Clone, Debug, Default)]
pub struct Trackers {
    /// One unanchored automaton per distinct lookbehind.
    pub tables: Vec<DfaTable>,
    #[cfg_attr(not(feature = "dynamic"), allow(dead_code))]
    keys: Vec<String>,
}

impl Trackers {
    /// Trackers from their tables (generated code; nothing more is interned).
    #[doc(hidden)]
    pub fn from_tables(tables: Vec<DfaTable>) -> Trackers {
        Trackers {
            tables,
            keys: Vec::new(),
        }
    }

    #[cfg(feature = "dynamic")]
    fn intern(&mut self, hir: &regex_syntax::hir::Hir) -> Result<u16, TableError> {
        let key = format!("{hir:?}");
        if let Some(i) = self.keys.iter().position(|k| *k == key) {
            return Ok(i as u16);
        }
        let table = DfaTable::build(hir, TableKind::Tracker)?;
        let i = u16::try_from(self.tables.len()).map_err(|_| TableError {
            message: "too many lookbehinds".into(),
        })?;
        self.tables.push(table);
        self.keys.push(key);
        Ok(i)
    }
}

/// Escapes a literal for the pattern syntax (every character that could be
/// special is escaped; the rest stands for itself).
pub fn escape(literal: &str) -> String {
    let mut out = String::with_capacity(literal.len() * 2);
    for c in literal.chars() {
        if c.is_ascii() && !c.is_ascii_alphanumeric() && c != '_' {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

impl Delimiter {
    /// Compiles literals: the reference joins them longest first, so that the
    /// alternation prefers the longer of two literals that both match.
    #[cfg(feature = "dynamic")]
    pub fn from_literals(
        literals: Vec<String>,
        trackers: &mut Trackers,
    ) -> Result<Delimiter, RegexError> {
        let mut ordered: Vec<&String> = literals.iter().collect();
        // A stable sort keeps first-seen order among equal lengths, as
        // Python's `sorted` does.
        ordered.sort_by_key(|s| std::cmp::Reverse(s.chars().count()));
        let pattern = ordered
            .iter()
            .map(|s| escape(s))
            .collect::<Vec<_>>()
            .join("|");
        let can_extend = literals
            .iter()
            .any(|a| literals.iter().any(|b| a != b && a.starts_with(b.as_str())));
        let regex = Regex::new(&pattern)?;
        Ok(Self::finish(
            DelimiterSource::Literals(literals),
            regex,
            can_extend,
            trackers,
        ))
    }

    /// Compiles a pattern.
    #[cfg(feature = "dynamic")]
    pub fn from_pattern(pattern: &str, trackers: &mut Trackers) -> Result<Delimiter, RegexError> {
        let regex = Regex::new(pattern)?;
        Ok(Self::finish(
            DelimiterSource::Pattern(pattern.to_owned()),
            regex,
            true,
            trackers,
        ))
    }

    #[cfg(feature = "dynamic")]
    fn finish(
        source: DelimiterSource,
        regex: Regex,
        ref_can_grow: bool,
        trackers: &mut Trackers,
    ) -> Delimiter {
        let has_groups = !regex.group_names().is_empty();
        let (matcher, lookahead) = match Self::plan(&regex, trackers) {
            Some((branches, lookahead)) => (Matcher::Dfa(Cow::Owned(branches)), lookahead),
            None => (Matcher::Backtrack, false),
        };
        let (first_bytes, may_match_empty) = match &matcher {
            Matcher::Dfa(branches) => {
                let mut set = [false; 256];
                let mut empty = false;
                for b in branches.iter() {
                    for (slot, on) in set.iter_mut().zip(b.table.first_bytes()) {
                        *slot |= on;
                    }
                    empty |= b.table.may_match_empty();
                }
                (set, empty)
            }
            Matcher::Backtrack => ([true; 256], true),
        };
        // The scanner always keeps the character before the scan position
        // (enough for `^`, `\b` and start states); a lookbehind or the
        // backtracking path may look further back.
        let needs_history = match &matcher {
            Matcher::Backtrack => true,
            Matcher::Dfa(branches) => branches.iter().any(|b| b.guard.is_some()),
        };
        Delimiter {
            source,
            needs_regex_at_commit: has_groups || lookahead,
            regex,
            matcher,
            ref_can_grow,
            first_bytes,
            may_match_empty,
            needs_history,
        }
    }

    #[cfg(feature = "dynamic")]
    fn plan(regex: &Regex, trackers: &mut Trackers) -> Option<(Vec<Branch>, bool)> {
        let plan = regex.dfa_plan().ok()?;
        let mut branches = Vec::with_capacity(plan.branches.len());
        let mut lookahead = false;
        for b in &plan.branches {
            let table = DfaTable::build(&b.body, TableKind::Anchored).ok()?;
            let guard = match &b.guard {
                Some(g) => Some(trackers.intern(g).ok()?),
                None => None,
            };
            lookahead |= b.lookahead;
            branches.push(Branch { table, guard });
        }
        Some((branches, lookahead))
    }

    /// Whether the scanner runs this delimiter on automata.
    pub fn is_dfa(&self) -> bool {
        matches!(self.matcher, Matcher::Dfa(_))
    }
}

#[cfg(all(test, feature = "dynamic"))]
mod tests {
    use super::*;

    #[test]
    fn literals_are_escaped_and_joined_longest_first() {
        let mut t = Trackers::default();
        let d = Delimiter::from_literals(vec!["a.b".into(), "a.b|c".into()], &mut t).unwrap();
        assert_eq!(d.regex.pattern(), r"a\.b\|c|a\.b");
        assert!(d.ref_can_grow, "one literal extends the other");
        let d = Delimiter::from_literals(vec!["<x>".into()], &mut t).unwrap();
        assert!(!d.ref_can_grow);
        assert!(d.is_dfa());
        assert_eq!(d.first_bytes.iter().filter(|b| **b).count(), 1);
    }

    #[test]
    fn lookbehinds_become_shared_guards() {
        let mut t = Trackers::default();
        let a = Delimiter::from_pattern(r"(?<=\n)<t>|<u>", &mut t).unwrap();
        let b = Delimiter::from_pattern(r"(?<=\n)<v>", &mut t).unwrap();
        assert!(a.is_dfa() && b.is_dfa());
        assert_eq!(t.tables.len(), 1, "the same lookbehind is tracked once");
        assert!(a.needs_history);
    }

    #[test]
    fn constructs_without_a_dfa_take_the_backtracking_path() {
        let mut t = Trackers::default();
        for p in [r"(a)\1", r"a(?!b)c", r"\bword", r"(?>a+)b"] {
            let d = Delimiter::from_pattern(p, &mut t).unwrap();
            assert!(!d.is_dfa(), "{p}");
            assert!(d.needs_history, "{p}");
        }
    }
}
