//! `find_iter` without the backtracking VM for the tag patterns models
//! write: `P(?P<key>C+)M\n?(?P<value>.*?)\n?S`.
//!
//! Qwen3-Coder's `<parameter=(?P<key>[^>\n]+)>\n?(?P<value>.*?)\n?</parameter>`
//! and its relatives (`<parameter name="(?P<key>[^"]+)">(?P<value>.*?)</parameter>`,
//! Step3's `steptml:` form) are literals around a greedy run of one class
//! and a lazy run of anything. Such a pattern has one way to match at a
//! start, which plain string searches find:
//!
//! - a match starts at an occurrence of the literal `P`;
//! - the key is the longest run of `C` after it, at least one character,
//!   and `M` must follow it: backtracking cannot help, because `M` begins
//!   with a character outside `C`, so no shorter run is followed by `M`;
//! - the value, lazy, ends at the first place where `S` (or, with the
//!   optional newline, `\nS`) follows: at `q - 1` when the first `S` at or
//!   after the value's start is at `q` and a newline before it belongs to the
//!   value's span, else at `q`. The optional newline before the value is
//!   taken when the rest then matches, else left (greedy, then backtrack);
//! - a start without such a match fails, and the search goes on at the next
//!   occurrence of `P`; after a match it goes on at the match's end.
//!
//! The search for `S` only moves forward (the value's start grows from
//! match to match), so the whole scan is linear in the text. The
//! differential test in `tests.rs` holds this to the VM on random texts.

use crate::Captures;
use crate::ast::Node;
use crate::class::Class;
use memchr::memmem;

/// A tag pattern of the shape above.
#[derive(Clone, Debug)]
pub(crate) struct TagShape {
    pub(crate) prefix: String,
    key_group: usize,
    class: Class,
    pub(crate) mid: String,
    nl_before: bool,
    value_group: usize,
    nl_after: bool,
    pub(crate) suffix: String,
    /// Groups of the pattern, excluding group 0.
    groups: usize,
    /// The searchers of `prefix` and `suffix`, built once with the shape:
    /// a region's parameters are read many times per message, and building
    /// a searcher costs about as much as a short search.
    prefix_finder: memmem::Finder<'static>,
    suffix_finder: memmem::Finder<'static>,
}

/// Appends the nodes of `node` to `out`, with nested sequences flattened.
fn flatten<'a>(node: &'a Node, out: &mut Vec<&'a Node>) {
    match node {
        Node::Concat(v) => v.iter().for_each(|n| flatten(n, out)),
        other => out.push(other),
    }
}

/// `node`, or the one node of a one-node sequence (a group's body).
fn single(node: &Node) -> &Node {
    match node {
        Node::Concat(v) if v.len() == 1 => single(&v[0]),
        other => other,
    }
}

/// Reads literal characters from the front of `items`.
fn literal(items: &mut &[&Node]) -> String {
    let mut s = String::new();
    while let [Node::Literal(c), rest @ ..] = *items {
        s.push(*c);
        *items = rest;
    }
    s
}

/// Reads an optional newline (`\n?`, greedy) from the front of `items`.
fn optional_newline(items: &mut &[&Node]) -> bool {
    if let [
        Node::Repeat {
            node,
            min: 0,
            max: Some(1),
            greedy: true,
            possessive: false,
            ..
        },
        rest @ ..,
    ] = *items
        && matches!(node.as_ref(), Node::Literal('\n'))
    {
        *items = rest;
        return true;
    }
    false
}

/// Reads a capture group around an unbounded repeat from the front of
/// `items` (`(?P<key>C+)`: `min` 1, greedy; `(?P<value>.*?)`: `min` 0,
/// lazy): the group's index and the repeated item.
fn repeated_group<'a>(
    items: &mut &[&'a Node],
    min: u32,
    greedy: bool,
) -> Option<(usize, &'a Node)> {
    let [Node::Group { index, node }, rest @ ..] = *items else {
        return None;
    };
    let Node::Repeat {
        node: item,
        min: m,
        max: None,
        greedy: g,
        possessive: false,
        ..
    } = single(node)
    else {
        return None;
    };
    if *m != min || *g != greedy {
        return None;
    }
    *items = rest;
    Some((*index, item))
}

impl TagShape {
    /// The shape of a pattern tree with `groups` groups, if it has it.
    pub(crate) fn of(node: &Node, groups: usize) -> Option<TagShape> {
        let mut all = Vec::new();
        flatten(node, &mut all);
        let mut items: &[&Node] = &all;
        let prefix = literal(&mut items);
        let (key_group, key_item) = repeated_group(&mut items, 1, true)?;
        let class = match single(key_item) {
            Node::Class(c) | Node::NegChar(c) => c.clone(),
            _ => return None,
        };
        let mid = literal(&mut items);
        let nl_before = optional_newline(&mut items);
        let (value_group, value_item) = repeated_group(&mut items, 0, false)?;
        // `.` under DOTALL: every character (surrogates are no `char`).
        let Node::Class(any) = single(value_item) else {
            return None;
        };
        let every = [('\0', '\u{d7ff}'), ('\u{e000}', char::MAX)];
        if any.ranges() != every && any.ranges() != [('\0', char::MAX)] {
            return None;
        }
        let nl_after = optional_newline(&mut items);
        let suffix = literal(&mut items);
        let mid_first = mid.chars().next()?;
        if !items.is_empty()
            || prefix.is_empty()
            || suffix.is_empty()
            || class.contains(mid_first)
            || groups != 2
            || key_group == value_group
        {
            return None;
        }
        let prefix_finder = memmem::Finder::new(prefix.as_bytes()).into_owned();
        let suffix_finder = memmem::Finder::new(suffix.as_bytes()).into_owned();
        Some(TagShape {
            prefix,
            key_group,
            class,
            mid,
            nl_before,
            value_group,
            nl_after,
            prefix_finder,
            suffix_finder,
            suffix,
            groups,
        })
    }

    /// Every match in `hay`, in order, as `Regex::find_iter` finds them.
    pub(crate) fn find_iter<'s, 'h>(&'s self, hay: &'h str) -> TagIter<'s, 'h> {
        TagIter {
            shape: self,
            hay,
            pos: 0,
            prefix: self.prefix_finder.as_ref(),
            suffix: self.suffix_finder.as_ref(),
            next_suffix: None,
        }
    }
}

/// The iterator of [`TagShape::find_iter`].
pub(crate) struct TagIter<'s, 'h> {
    shape: &'s TagShape,
    hay: &'h str,
    /// Where the search goes on.
    pos: usize,
    prefix: memmem::Finder<'s>,
    suffix: memmem::Finder<'s>,
    /// The first occurrence of the suffix at or after some offset, as
    /// `(from, found)`: valid for every start up to `found` (or, when there
    /// is none, for every start from `from` on).
    next_suffix: Option<(usize, Option<usize>)>,
}

impl TagIter<'_, '_> {
    /// The first occurrence of the suffix at or after `from`.
    fn suffix_from(&mut self, from: usize) -> Option<usize> {
        if let Some((searched, found)) = self.next_suffix {
            match found {
                Some(q) if from >= searched && from <= q => return Some(q),
                None if from >= searched => return None,
                _ => {}
            }
        }
        let found = self
            .suffix
            .find(&self.hay.as_bytes()[from..])
            .map(|q| from + q);
        self.next_suffix = Some((from, found));
        found
    }

    /// The match starting at `s` (where the prefix is), if there is one.
    fn attempt(&mut self, s: usize) -> Option<Captures> {
        let sh = self.shape;
        let bytes = self.hay.as_bytes();
        let key_start = s + sh.prefix.len();
        let key_end = key_start
            + self.hay[key_start..]
                .char_indices()
                .find(|&(_, c)| !sh.class.contains(c))
                .map_or(self.hay.len() - key_start, |(i, _)| i);
        if key_end == key_start || !self.hay[key_end..].starts_with(sh.mid.as_str()) {
            return None;
        }
        let mid_end = key_end + sh.mid.len();
        let mut starts = [None, Some(mid_end)];
        if sh.nl_before && bytes.get(mid_end) == Some(&b'\n') {
            starts[0] = Some(mid_end + 1);
        }
        for vs in starts.into_iter().flatten() {
            let Some(q) = self.suffix_from(vs) else {
                continue;
            };
            let value_end = if sh.nl_after && q > vs && bytes[q - 1] == b'\n' {
                q - 1
            } else {
                q
            };
            let end = q + sh.suffix.len();
            let mut c = Captures::none(sh.groups);
            let spans = c.spans_mut();
            spans[0] = Some((s, end));
            spans[sh.key_group] = Some((key_start, key_end));
            spans[sh.value_group] = Some((vs, value_end));
            return Some(c);
        }
        None
    }
}

impl Iterator for TagIter<'_, '_> {
    type Item = Captures;

    fn next(&mut self) -> Option<Captures> {
        while self.pos <= self.hay.len() {
            let s = self.pos + self.prefix.find(&self.hay.as_bytes()[self.pos..])?;
            match self.attempt(s) {
                Some(c) => {
                    self.pos = c.end();
                    return Some(c);
                }
                // The prefix is not empty: the next start is after this one.
                None => self.pos = s + 1,
            }
        }
        None
    }
}
