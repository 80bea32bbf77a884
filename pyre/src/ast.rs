//! The parsed form of a pattern, with every flag already applied.
//!
//! Flags such as `(?i)` or `(?m)` only change how individual items match, so
//! the parser resolves them into the items themselves (a case-insensitive
//! literal becomes the class of its case variants, `$` under `(?m)` becomes
//! [`Assertion::LineEnd`]); nothing downstream needs to know about flags.

use super::class::Class;

/// A zero-width test of the position.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Assertion {
    /// `^` without `(?m)`, `\A`: offset 0 of the haystack.
    Start,
    /// `^` under `(?m)`: offset 0 or just after a `\n`.
    LineStart,
    /// `$` without `(?m)`: the end, or just before a `\n` that ends the text.
    EndOrFinalNewline,
    /// `$` under `(?m)`: the end or just before any `\n`.
    LineEnd,
    /// `\Z`, `\z`: the end only.
    End,
    /// `\b` (`ascii`: under `(?a)`).
    WordBoundary { ascii: bool },
    /// `\B`.
    NotWordBoundary { ascii: bool },
    /// `\m`: a word starts here.
    WordStart { ascii: bool },
    /// `\M`: a word ends here.
    WordEnd { ascii: bool },
    /// `\G`: the position where the search started.
    SearchAnchor,
}

/// How a backreference compares characters.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fold {
    /// Exact comparison.
    None,
    /// Simple Unicode case folding (`(?i)`).
    Unicode,
    /// ASCII-only case folding (`(?ia)`).
    Ascii,
}

/// A node of the pattern tree. `pos` fields are character offsets in the
/// pattern, kept for the messages of [`super::Unsupported`].
#[derive(Clone, Debug)]
pub(crate) enum Node {
    /// Matches the empty string.
    Empty,
    /// Never matches (`(*FAIL)`, or a literal that no `&str` can contain).
    Fail,
    /// One character, exactly.
    Literal(char),
    /// One character from a set.
    Class(Class),
    /// A case-insensitive literal: the set of its case variants. (Kept
    /// apart from [`Node::Class`] because the module treats runs of literals
    /// as strings when it peeks for partial matches.)
    FoldLit(Class),
    /// A negated single character (`[^a]`): the module keeps it as a
    /// character test, which behaves differently from a set in its search
    /// optimisations.
    NegChar(Class),
    /// Items in sequence.
    Concat(Vec<Node>),
    /// Alternatives, tried left to right.
    Alt(Vec<Node>),
    /// A capture group (index ≥ 1).
    Group { index: usize, node: Box<Node> },
    /// A quantified item. `max == None` is unbounded.
    Repeat {
        node: Box<Node>,
        min: u32,
        max: Option<u32>,
        greedy: bool,
        possessive: bool,
        pos: usize,
    },
    /// A lookaround.
    Look {
        behind: bool,
        negate: bool,
        node: Box<Node>,
        pos: usize,
    },
    /// An atomic group `(?>...)`.
    Atomic { node: Box<Node>, pos: usize },
    /// A backreference to a capture group.
    Backref {
        group: usize,
        fold: Fold,
        pos: usize,
    },
    /// A zero-width assertion.
    Assert { kind: Assertion, pos: usize },
}

impl Node {
    /// Collects the groups read by backreferences.
    pub(crate) fn backref_groups(&self, out: &mut Vec<u32>) {
        match self {
            Node::Backref { group, .. } if !out.contains(&(*group as u32)) => {
                out.push(*group as u32)
            }
            Node::Concat(v) | Node::Alt(v) => v.iter().for_each(|n| n.backref_groups(out)),
            Node::Group { node, .. }
            | Node::Repeat { node, .. }
            | Node::Look { node, .. }
            | Node::Atomic { node, .. } => node.backref_groups(out),
            _ => {}
        }
    }

    /// The fewest characters the node can consume (saturating).
    pub(crate) fn min_len(&self) -> u32 {
        match self {
            Node::Empty | Node::Assert { .. } | Node::Look { .. } | Node::Backref { .. } => 0,
            Node::Fail => u32::MAX,
            Node::Literal(_) | Node::Class(_) | Node::FoldLit(_) | Node::NegChar(_) => 1,
            Node::Concat(v) => v.iter().fold(0u32, |a, n| a.saturating_add(n.min_len())),
            Node::Alt(v) => v.iter().map(Node::min_len).min().unwrap_or(0),
            Node::Group { node, .. } | Node::Atomic { node, .. } => node.min_len(),
            Node::Repeat { node, min, .. } => node.min_len().saturating_mul(*min),
        }
    }
}
