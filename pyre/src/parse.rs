//! The pattern parser: a port of the structure of the `regex` module's
//! `_regex_core.py` (VERSION0), so that the same patterns are accepted, the
//! same ones rejected, and errors carry Python's message and position.
//!
//! Positions are character offsets into the pattern, as in Python.

use super::RegexError;
use super::ast::{Assertion, Fold, Node};
use super::class::{self, Class, Perl, PropertyError};
use crate::unicode_tables::{PY_SPACE, in_ranges, py_decimal_value};
use regex_syntax::hir::ClassUnicode;

// Flag bits (our own numbering; only the sets they form matter).
const F_I: u32 = 1 << 0; // IGNORECASE
const F_L: u32 = 1 << 1; // LOCALE
const F_M: u32 = 1 << 2; // MULTILINE
const F_S: u32 = 1 << 3; // DOTALL
const F_U: u32 = 1 << 4; // UNICODE
const F_X: u32 = 1 << 5; // VERBOSE
const F_A: u32 = 1 << 6; // ASCII
const F_W: u32 = 1 << 7; // WORD
const F_F: u32 = 1 << 8; // FULLCASE
const F_V0: u32 = 1 << 9;
const F_V1: u32 = 1 << 10;
const F_B: u32 = 1 << 11; // BESTMATCH
const F_E: u32 = 1 << 12; // ENHANCEMATCH
const F_P: u32 = 1 << 13; // POSIX
const F_R: u32 = 1 << 14; // REVERSE

const GLOBAL_FLAGS: u32 = F_V0 | F_V1 | F_B | F_E | F_P | F_R;
const ALL_ENCODINGS: u32 = F_A | F_L | F_U;

/// The result of parsing.
#[derive(Debug)]
pub(crate) struct Parsed {
    /// The pattern tree.
    pub(crate) node: Node,
    /// Capture groups, excluding group 0.
    pub(crate) group_count: usize,
    /// Named groups, by index.
    pub(crate) names: Vec<(String, usize)>,
}

/// A parse failure: a Python error, or a construct this engine declines.
type PResult<T> = Result<T, RegexError>;

fn err<T>(message: impl Into<String>, pos: usize) -> PResult<T> {
    Err(RegexError {
        message: message.into(),
        offset: pos,
    })
}

/// Python's `str.isspace()`.
fn py_isspace(c: char) -> bool {
    in_ranges(PY_SPACE, c)
}

/// The scanner over the pattern, with the `regex` module's treatment of
/// verbose mode (whitespace and `#` comments skipped by most reads).
struct Source {
    chars: Vec<char>,
    pos: usize,
    ignore_space: bool,
}

impl Source {
    /// Where the next significant character is (skipping verbose-mode space
    /// and comments), or `None` when a comment runs to the end.
    fn skip(&self, mut pos: usize) -> Option<usize> {
        if !self.ignore_space {
            return Some(pos);
        }
        loop {
            match self.chars.get(pos) {
                Some(&c) if py_isspace(c) => pos += 1,
                Some('#') => match self.chars[pos..].iter().position(|&c| c == '\n') {
                    Some(i) => pos += i,
                    None => return None,
                },
                _ => return Some(pos),
            }
        }
    }

    fn peek(&self) -> Option<char> {
        self.skip(self.pos).and_then(|p| self.chars.get(p).copied())
    }

    fn get(&mut self, override_ignore: bool) -> Option<char> {
        let pos = if override_ignore {
            Some(self.pos)
        } else {
            self.skip(self.pos)
        };
        match pos {
            None => {
                self.pos = self.chars.len();
                None
            }
            Some(p) => match self.chars.get(p) {
                Some(&c) => {
                    self.pos = p + 1;
                    Some(c)
                }
                None => {
                    self.pos = p;
                    None
                }
            },
        }
    }

    fn get_while(&mut self, test: impl Fn(char) -> bool, keep_spaces: bool) -> String {
        let mut out = String::new();
        if self.ignore_space && !keep_spaces {
            let mut pos = self.pos;
            loop {
                match self.chars.get(pos) {
                    Some(&c) if py_isspace(c) => pos += 1,
                    Some('#') => match self.chars[pos..].iter().position(|&c| c == '\n') {
                        Some(i) => pos += i,
                        None => {
                            self.pos = self.chars.len();
                            return out;
                        }
                    },
                    Some(&c) if test(c) => {
                        out.push(c);
                        pos += 1;
                    }
                    _ => break,
                }
            }
            self.pos = pos;
        } else {
            while let Some(&c) = self.chars.get(self.pos) {
                if !test(c) {
                    break;
                }
                out.push(c);
                self.pos += 1;
            }
        }
        out
    }

    fn matches(&mut self, s: &str) -> bool {
        let mut pos = self.pos;
        for want in s.chars() {
            let Some(p) = self.skip(pos) else {
                return false;
            };
            if self.chars.get(p) != Some(&want) {
                return false;
            }
            pos = p + 1;
        }
        self.pos = pos;
        true
    }

    fn expect(&mut self, s: &str) -> PResult<()> {
        if self.matches(s) {
            Ok(())
        } else {
            err(format!("missing {s}"), self.pos)
        }
    }

    fn at_end(&self) -> bool {
        match self.skip(self.pos) {
            None => true,
            Some(p) => p >= self.chars.len(),
        }
    }
}

/// A group reference whose target is resolved after parsing (Python's
/// `fix_groups`), so forward references work.
#[derive(Debug)]
struct PendingRef {
    name: String,
    pos: usize,
}

struct Info {
    flags: u32,
    global_flags: u32,
    group_count: usize,
    group_index: Vec<(String, usize)>,
    open_groups: Vec<usize>,
    refs: Vec<PendingRef>,
    unsupported: Option<(String, usize)>,
    /// The encoding of the whole pattern (ASCII when `(?a)` is still on at
    /// the end of the top level). Items parsed with no explicit encoding flag,
    /// and all case-insensitive comparisons, follow it.
    pattern_ascii: bool,
}

impl Info {
    fn index_of(&self, name: &str) -> Option<usize> {
        self.group_index
            .iter()
            .find(|(n, _)| n == name)
            .map(|&(_, i)| i)
    }

    fn open_group(&mut self, name: Option<&str>, pos: usize) -> usize {
        let existing = name.and_then(|n| self.index_of(n));
        let group = match existing {
            Some(g) => g,
            None => {
                loop {
                    self.group_count += 1;
                    let taken = self.group_index.iter().any(|&(_, i)| i == self.group_count);
                    if name.is_none() || !taken {
                        break;
                    }
                }
                if let Some(n) = name {
                    self.group_index.push((n.to_owned(), self.group_count));
                }
                self.group_count
            }
        };
        if self.open_groups.contains(&group) {
            // A group nested inside another of the same name: the module
            // gives it a private number. Rare enough to decline.
            self.unsupport("nested groups with the same name", pos);
        }
        self.open_groups.push(group);
        group
    }

    fn is_open_group(&self, name: &str) -> bool {
        let group = match decimal(name) {
            Some(n) => Some(n),
            None => self.index_of(name),
        };
        group.is_some_and(|g| self.open_groups.contains(&g))
    }

    fn unsupport(&mut self, what: &str, pos: usize) {
        if self.unsupported.is_none() {
            self.unsupported = Some((what.to_owned(), pos));
        }
    }

    fn fold(&self) -> Fold {
        if self.flags & F_I == 0 {
            Fold::None
        } else if self.pattern_ascii {
            Fold::Ascii
        } else {
            Fold::Unicode
        }
    }

    fn ascii(&self) -> bool {
        if self.flags & F_A != 0 {
            true
        } else if self.flags & F_U != 0 {
            false
        } else {
            self.pattern_ascii
        }
    }
}

/// Python's `int(name)` for an all-digit name (Unicode decimals included).
fn decimal(name: &str) -> Option<usize> {
    if name.is_empty() {
        return None;
    }
    let mut n: usize = 0;
    for c in name.chars() {
        let d = py_decimal_value(c)?;
        n = n.saturating_mul(10).saturating_add(d as usize);
    }
    Some(n)
}

fn is_identifier(name: &str) -> bool {
    use std::sync::OnceLock;
    static XID: OnceLock<(Class, Class)> = OnceLock::new();
    let (start, cont) = XID.get_or_init(|| {
        let get = |q: &str| {
            let hir = regex_syntax::Parser::new().parse(q).expect("XID class");
            match hir.kind() {
                regex_syntax::hir::HirKind::Class(regex_syntax::hir::Class::Unicode(c)) => {
                    Class::from_unicode(c)
                }
                _ => Class::from_unicode(&ClassUnicode::empty()),
            }
        };
        (get(r"[\p{XID_Start}_]"), get(r"\p{XID_Continue}"))
    });
    let mut chars = name.chars();
    match chars.next() {
        Some(c) if start.contains(c) => chars.all(|c| cont.contains(c)),
        _ => false,
    }
}

fn is_alpha(c: char) -> bool {
    c.is_ascii_alphabetic()
}

/// An element of a character set, before the set is built.
#[derive(Clone, Debug)]
enum SetItem {
    Char(u32),
    Range(u32, u32),
    Prop {
        class: ClassUnicode,
        folded: Option<ClassUnicode>,
        positive: bool,
    },
    Union(Vec<SetItem>),
}

/// The result of parsing an escape: a node, or (inside a set) an item.
enum Escape {
    Node(Node),
    Item(SetItem),
}

/// Parses a whole pattern, compiled with DOTALL as the reference does.
pub(crate) fn parse(pattern: &str) -> PResult<Parsed> {
    let mut global_flags = F_S;
    let mut reparsed = false;
    let mut pattern_ascii = false;
    loop {
        let mut source = Source {
            chars: pattern.chars().collect(),
            pos: 0,
            ignore_space: false,
        };
        let mut info = Info {
            flags: global_flags,
            global_flags,
            group_count: 0,
            group_index: Vec::new(),
            open_groups: Vec::new(),
            refs: Vec::new(),
            unsupported: None,
            pattern_ascii,
        };
        source.ignore_space = info.flags & F_X != 0;
        match parse_pattern(&mut source, &mut info) {
            Err(Reparse::Global(flags)) if !reparsed || flags != global_flags => {
                global_flags = flags;
                reparsed = true;
                continue;
            }
            Err(Reparse::Global(_)) => return err("internal: inline flags did not settle", 0),
            Err(Reparse::Error(e)) => return Err(e),
            Ok(node) => {
                if !source.at_end() {
                    return err("unbalanced parenthesis", source.pos);
                }
                if (info.flags & ALL_ENCODINGS).count_ones() > 1 {
                    return err(
                        "ASCII, LOCALE and UNICODE flags are mutually incompatible",
                        0,
                    );
                }
                if (info.flags & F_A != 0) != pattern_ascii {
                    // The pattern turned out to be ASCII: parse again so that
                    // items before the `(?a)` follow it too.
                    pattern_ascii = !pattern_ascii;
                    continue;
                }
                let node = fix_groups(node, &info)?;
                if let Some((what, pos)) = info.unsupported {
                    return Err(RegexError {
                        message: format!("unsupported: {what}"),
                        offset: pos,
                    });
                }
                let mut names = info.group_index.clone();
                names.sort_by_key(|&(_, i)| i);
                return Ok(Parsed {
                    node,
                    group_count: info.group_count,
                    names,
                });
            }
        }
    }
}

/// Resolves group references (Python's `fix_groups`), in tree order.
fn fix_groups(node: Node, info: &Info) -> PResult<Node> {
    for r in &info.refs {
        let group = match decimal(&r.name) {
            Some(n) => n,
            None => match info.index_of(&r.name) {
                Some(g) => g,
                None => return err("unknown group", r.pos),
            },
        };
        if group < 1 || group > info.group_count {
            return err("invalid group reference", r.pos);
        }
    }
    Ok(resolve(node, info))
}

fn resolve(node: Node, info: &Info) -> Node {
    match node {
        Node::Backref { group, fold, pos } => {
            let r = &info.refs[group];
            let g = decimal(&r.name)
                .or_else(|| info.index_of(&r.name))
                .unwrap_or(0);
            Node::Backref {
                group: g,
                fold,
                pos,
            }
        }
        Node::Concat(v) => Node::Concat(v.into_iter().map(|n| resolve(n, info)).collect()),
        Node::Alt(v) => Node::Alt(v.into_iter().map(|n| resolve(n, info)).collect()),
        Node::Group { index, node } => Node::Group {
            index,
            node: Box::new(resolve(*node, info)),
        },
        Node::Repeat {
            node,
            min,
            max,
            greedy,
            possessive,
            pos,
        } => Node::Repeat {
            node: Box::new(resolve(*node, info)),
            min,
            max,
            greedy,
            possessive,
            pos,
        },
        Node::Look {
            behind,
            negate,
            node,
            pos,
        } => Node::Look {
            behind,
            negate,
            node: Box::new(resolve(*node, info)),
            pos,
        },
        Node::Atomic { node, pos } => Node::Atomic {
            node: Box::new(resolve(*node, info)),
            pos,
        },
        other => other,
    }
}

/// Parsing either fails with an error or asks to start again because a
/// global flag was turned on mid-pattern (as the module does).
enum Reparse {
    Global(u32),
    Error(RegexError),
}

impl From<RegexError> for Reparse {
    fn from(e: RegexError) -> Self {
        Reparse::Error(e)
    }
}

type RResult<T> = Result<T, Reparse>;

fn rerr<T>(message: impl Into<String>, pos: usize) -> RResult<T> {
    Err(Reparse::Error(RegexError {
        message: message.into(),
        offset: pos,
    }))
}

fn parse_pattern(source: &mut Source, info: &mut Info) -> RResult<Node> {
    let mut branches = vec![parse_sequence(source, info)?];
    while source.matches("|") {
        branches.push(parse_sequence(source, info)?);
    }
    Ok(if branches.len() == 1 {
        branches.pop().unwrap_or(Node::Empty)
    } else {
        Node::Alt(branches)
    })
}

/// Python's `is_empty()`: nodes that are (structurally) the empty sequence,
/// to which a quantifier is not applied.
fn is_empty(node: &Node) -> bool {
    match node {
        Node::Empty => true,
        Node::Concat(v) => v.iter().all(is_empty),
        Node::Alt(v) => v.iter().all(is_empty),
        Node::Atomic { node, .. } | Node::Repeat { node, .. } => is_empty(node),
        Node::Look {
            negate: false,
            node,
            ..
        } => is_empty(node),
        _ => false,
    }
}

fn parse_sequence(source: &mut Source, info: &mut Info) -> RResult<Node> {
    // `None` marks the position just after a quantifier, so that a second
    // quantifier is "multiple repeat" (the module's own trick).
    let mut seq: Vec<Option<Node>> = vec![None];
    loop {
        let saved_pos = source.pos;
        let Some(ch) = source.get(false) else {
            source.pos = saved_pos;
            break;
        };
        match ch {
            ')' | '|' => {
                source.pos = saved_pos;
                break;
            }
            '\\' => match parse_escape(source, info, false)? {
                Escape::Node(n) => seq.push(Some(n)),
                Escape::Item(_) => return rerr("internal: set item outside a set", saved_pos),
            },
            '(' => {
                if let Some(n) = parse_paren(source, info, saved_pos)? {
                    seq.push(Some(n));
                }
            }
            '.' => seq.push(Some(if info.flags & F_W != 0 {
                info.unsupport("the WORD flag (?w)", saved_pos);
                Node::Empty
            } else if info.flags & F_S != 0 {
                Node::Class(Class::from_unicode(&class::any()))
            } else {
                let mut c = class::cp_range('\n' as u32, '\n' as u32);
                c.negate();
                Node::Class(Class::from_unicode(&c))
            })),
            '[' => seq.push(Some(parse_set(source, info)?)),
            '^' => {
                let kind = if info.flags & F_M != 0 {
                    Assertion::LineStart
                } else {
                    Assertion::Start
                };
                if info.flags & F_W != 0 {
                    info.unsupport("the WORD flag (?w)", saved_pos);
                }
                seq.push(Some(Node::Assert {
                    kind,
                    pos: saved_pos,
                }));
            }
            '$' => {
                let kind = if info.flags & F_M != 0 {
                    Assertion::LineEnd
                } else {
                    Assertion::EndOrFinalNewline
                };
                if info.flags & F_W != 0 {
                    info.unsupport("the WORD flag (?w)", saved_pos);
                }
                seq.push(Some(Node::Assert {
                    kind,
                    pos: saved_pos,
                }));
            }
            '?' | '*' | '+' | '{' => {
                if let Some((min, max)) = parse_quantifier(source, ch)? {
                    apply_quantifier(source, &mut seq, min, max, saved_pos)?;
                    seq.push(None);
                } else {
                    match parse_fuzzy(source, info, ch)? {
                        Fuzzy::Literal => seq.push(Some(literal(info, ch as u32, saved_pos))),
                        Fuzzy::NoOp => {}
                        Fuzzy::Constraint => {
                            match seq.pop() {
                                Some(Some(_)) => {}
                                _ => return rerr("nothing for fuzzy constraint", saved_pos),
                            }
                            info.unsupport("fuzzy matching", saved_pos);
                            seq.push(Some(Node::Empty));
                            seq.push(None);
                        }
                    }
                }
            }
            _ => seq.push(Some(literal(info, ch as u32, saved_pos))),
        }
    }
    let items: Vec<Node> = seq.into_iter().flatten().collect();
    Ok(Node::Concat(items))
}

/// A literal character outside a set, with the current case flags.
fn literal(info: &mut Info, cp: u32, pos: usize) -> Node {
    match info.fold() {
        Fold::None => match char::from_u32(cp) {
            Some(c) => Node::Literal(c),
            None => Node::Fail,
        },
        fold => {
            if info.flags & F_F != 0 && fold == Fold::Unicode {
                info.unsupport("full case folding (?f)", pos);
            }
            let c = class::cp_range(cp, cp);
            let folded = if fold == Fold::Ascii {
                class::fold_ascii(&c)
            } else {
                class::fold_unicode(&c)
            };
            // Kept as a case-insensitive literal even when it has no other
            // case: the module packs it into the same string as its
            // neighbours, which partial matching can observe.
            if folded.ranges().is_empty() {
                Node::Fail
            } else {
                Node::FoldLit(Class::from_unicode(&folded))
            }
        }
    }
}

fn class_node(c: &ClassUnicode) -> Node {
    let class = Class::from_unicode(c);
    if c.ranges().is_empty() {
        return Node::Fail;
    }
    match class.single() {
        Some(ch) => Node::Literal(ch),
        None => Node::Class(class),
    }
}

fn apply_quantifier(
    source: &mut Source,
    seq: &mut Vec<Option<Node>>,
    min: u32,
    max: Option<u32>,
    saved_pos: usize,
) -> PResult<()> {
    let element = match seq.pop() {
        Some(Some(e)) => e,
        _ => {
            return if seq.is_empty() {
                err("nothing to repeat", saved_pos)
            } else {
                err("multiple repeat", saved_pos)
            };
        }
    };
    if matches!(element, Node::Repeat { .. }) {
        return err("multiple repeat", saved_pos);
    }
    let after = source.pos;
    let (greedy, possessive) = match source.get(false) {
        Some('?') => (false, false),
        Some('+') => (true, true),
        _ => {
            source.pos = after;
            (true, false)
        }
    };
    if !is_empty(&element) && (min != 1 || max != Some(1)) {
        seq.push(Some(Node::Repeat {
            node: Box::new(element),
            min,
            max,
            greedy,
            possessive,
            pos: saved_pos,
        }));
    } else {
        seq.push(Some(element));
    }
    Ok(())
}

/// The largest repeat count the module accepts (its code words are 32 bits).
const UNLIMITED: u64 = u32::MAX as u64;

fn parse_quantifier(source: &mut Source, ch: char) -> PResult<Option<(u32, Option<u32>)>> {
    match ch {
        '?' => Ok(Some((0, Some(1)))),
        '*' => Ok(Some((0, None))),
        '+' => Ok(Some((1, None))),
        _ => parse_limited_quantifier(source),
    }
}

fn parse_count(source: &mut Source) -> String {
    source.get_while(|c| c.is_ascii_digit(), false)
}

fn to_count(digits: &str) -> u64 {
    digits.bytes().fold(0u64, |a, d| {
        a.saturating_mul(10).saturating_add(u64::from(d - b'0'))
    })
}

fn parse_limited_quantifier(source: &mut Source) -> PResult<Option<(u32, Option<u32>)>> {
    let saved_pos = source.pos;
    let min_digits = parse_count(source);
    let (min, max) = if source.matches(",") {
        let max_digits = parse_count(source);
        let min = to_count(&min_digits);
        let max = if max_digits.is_empty() {
            None
        } else {
            Some(to_count(&max_digits))
        };
        (min, max)
    } else {
        if min_digits.is_empty() {
            source.pos = saved_pos;
            return Ok(None);
        }
        let n = to_count(&min_digits);
        (n, Some(n))
    };
    if !source.matches("}") {
        source.pos = saved_pos;
        return Ok(None);
    }
    if min >= UNLIMITED || max.is_some_and(|m| m >= UNLIMITED) {
        return err("repeat count too big", saved_pos);
    }
    if max.is_some_and(|m| min > m) {
        return err("min repeat greater than max repeat", saved_pos);
    }
    Ok(Some((min as u32, max.map(|m| m as u32))))
}

/// What a `{` that is not a counted repeat turned out to be.
enum Fuzzy {
    /// A literal `{`.
    Literal,
    /// A fuzzy constraint that allows no errors: the module drops it.
    NoOp,
    /// A real fuzzy constraint.
    Constraint,
}

/// Internal signal of the fuzzy-constraint parser: "not a constraint".
struct NotConstraint;

#[derive(Default)]
struct Constraints {
    items: Vec<(char, (u64, Option<u64>))>,
    cost: bool,
}

fn parse_fuzzy(source: &mut Source, info: &mut Info, ch: char) -> RResult<Fuzzy> {
    let saved_pos = source.pos;
    if ch != '{' {
        return Ok(Fuzzy::Literal);
    }
    let mut constraints = Constraints::default();
    let parsed = (|| -> PResult<Result<(), NotConstraint>> {
        if let Err(e) = parse_fuzzy_item(source, &mut constraints)? {
            return Ok(Err(e));
        }
        while source.matches(",") {
            if let Err(e) = parse_fuzzy_item(source, &mut constraints)? {
                return Ok(Err(e));
            }
        }
        Ok(Ok(()))
    })()?;
    if parsed.is_err() {
        source.pos = saved_pos;
        return Ok(Fuzzy::Literal);
    }
    if source.matches(":") {
        parse_fuzzy_test(source, info)?;
    }
    if !source.matches("}") {
        return rerr("expected }", source.pos);
    }
    let get = |c: char| {
        constraints
            .items
            .iter()
            .find(|(k, _)| *k == c)
            .map(|&(_, v)| v)
    };
    let zero = Some((0, Some(0)));
    if get('e') == zero || (get('s') == zero && get('i') == zero && get('d') == zero) {
        return Ok(Fuzzy::NoOp);
    }
    Ok(Fuzzy::Constraint)
}

fn parse_fuzzy_item(
    source: &mut Source,
    c: &mut Constraints,
) -> PResult<Result<(), NotConstraint>> {
    let saved_pos = source.pos;
    match parse_cost_constraint(source, c)? {
        Ok(()) => Ok(Ok(())),
        Err(NotConstraint) => {
            source.pos = saved_pos;
            parse_cost_equation(source, c)
        }
    }
}

fn fuzzy_compare(source: &mut Source) -> Option<bool> {
    if source.matches("<=") {
        Some(true)
    } else if source.matches("<") {
        Some(false)
    } else {
        None
    }
}

fn cost_limit(source: &mut Source) -> PResult<i64> {
    let pos = source.pos;
    let digits = parse_count(source);
    if digits.is_empty() {
        return err("bad fuzzy cost limit", pos);
    }
    Ok(to_count(&digits).min(i64::MAX as u64) as i64)
}

fn parse_cost_constraint(
    source: &mut Source,
    c: &mut Constraints,
) -> PResult<Result<(), NotConstraint>> {
    let saved_pos = source.pos;
    let ch = source.get(false);
    match ch {
        Some(ch) if is_alpha(ch) => {
            if !"deis".contains(ch) || c.items.iter().any(|(k, _)| *k == ch) {
                return Ok(Err(NotConstraint));
            }
            match fuzzy_compare(source) {
                None => c.items.push((ch, (0, None))),
                Some(inc) => {
                    let cost_pos = source.pos;
                    let mut max = cost_limit(source)?;
                    if !inc {
                        max -= 1;
                    }
                    if !(0..=0xFFFF_FFFF).contains(&max) {
                        return err("bad fuzzy cost limit", cost_pos);
                    }
                    c.items.push((ch, (0, Some(max as u64))));
                }
            }
            Ok(Ok(()))
        }
        Some(d) if d.is_ascii_digit() => {
            source.pos = saved_pos;
            let mut min = cost_limit(source)?;
            let Some(min_inc) = fuzzy_compare(source) else {
                return Ok(Err(NotConstraint));
            };
            let ch = source.get(false);
            let ch = match ch {
                Some(ch) if "deis".contains(ch) && !c.items.iter().any(|(k, _)| *k == ch) => ch,
                _ => return Ok(Err(NotConstraint)),
            };
            let Some(max_inc) = fuzzy_compare(source) else {
                return Ok(Err(NotConstraint));
            };
            let cost_pos = source.pos;
            let mut max = cost_limit(source)?;
            if !min_inc {
                min += 1;
            }
            if !max_inc {
                max -= 1;
            }
            if !(0 <= min && min <= max) {
                return err("bad fuzzy cost limit", cost_pos);
            }
            c.items.push((ch, (min as u64, Some(max as u64))));
            Ok(Ok(()))
        }
        _ => Ok(Err(NotConstraint)),
    }
}

fn parse_cost_equation(
    source: &mut Source,
    c: &mut Constraints,
) -> PResult<Result<(), NotConstraint>> {
    if c.cost {
        return err("more than one cost equation", source.pos);
    }
    let mut seen = String::new();
    let mut term = |source: &mut Source| -> PResult<Result<(), NotConstraint>> {
        let _coeff = parse_count(source);
        match source.get(false) {
            Some(ch) if "dis".contains(ch) => {
                if seen.contains(ch) {
                    return err("repeated fuzzy cost", source.pos);
                }
                seen.push(ch);
                Ok(Ok(()))
            }
            _ => Ok(Err(NotConstraint)),
        }
    };
    if let Err(e) = term(source)? {
        return Ok(Err(e));
    }
    while source.matches("+") {
        if let Err(e) = term(source)? {
            return Ok(Err(e));
        }
    }
    let Some(inc) = fuzzy_compare(source) else {
        return Ok(Err(NotConstraint));
    };
    let digits = parse_count(source);
    if digits.is_empty() {
        // Python: int('') raises ValueError, which escapes as a crash;
        // treat it as a malformed limit.
        return err("bad fuzzy cost limit", source.pos);
    }
    let mut max = to_count(&digits).min(i64::MAX as u64) as i64;
    if !inc {
        max -= 1;
    }
    if !(0..=0xFFFF_FFFF).contains(&max) {
        return err("bad fuzzy cost limit", source.pos);
    }
    c.cost = true;
    Ok(Ok(()))
}

fn parse_fuzzy_test(source: &mut Source, info: &mut Info) -> RResult<()> {
    let saved_pos = source.pos;
    match source.get(false) {
        Some('\\') => {
            parse_escape(source, info, false)?;
        }
        Some('.') => {}
        Some('[') => {
            parse_set(source, info)?;
        }
        Some(c) if "()|?*+{^$#".contains(c) => return rerr("expected character set", saved_pos),
        Some(_) => {}
        None => return rerr("expected character set", saved_pos),
    }
    Ok(())
}

/// Parses what follows `(`. Returns `None` for inline flags and comments.
fn parse_paren(source: &mut Source, info: &mut Info, open_pos: usize) -> RResult<Option<Node>> {
    let saved_pos = source.pos;
    let ch = source.get(true);
    if ch == Some('?') {
        let saved_pos_2 = source.pos;
        let ch = source.get(true);
        match ch {
            Some('<') => {
                let saved_pos_3 = source.pos;
                let ch = source.get(false);
                if ch == Some('=') || ch == Some('!') {
                    return parse_lookaround(source, info, true, ch == Some('!'), open_pos)
                        .map(Some);
                }
                source.pos = saved_pos_3;
                let name = parse_name(source, false, false)?;
                let group = info.open_group(Some(&name), open_pos);
                source.expect(">")?;
                let node = parse_group_body(source, info)?;
                info.open_groups.pop();
                return Ok(Some(Node::Group {
                    index: group,
                    node: Box::new(node),
                }));
            }
            Some('=') | Some('!') => {
                return parse_lookaround(source, info, false, ch == Some('!'), open_pos).map(Some);
            }
            Some('P') => return parse_extension(source, info, open_pos).map(Some),
            Some('#') => {
                parse_comment(source)?;
                return Ok(None);
            }
            Some('(') => {
                parse_conditional(source, info, open_pos)?;
                return Ok(Some(Node::Empty));
            }
            Some('>') => {
                let node = parse_group_body(source, info)?;
                return Ok(Some(Node::Atomic {
                    node: Box::new(node),
                    pos: open_pos,
                }));
            }
            Some('|') => {
                parse_common(source, info)?;
                info.unsupport("branch reset (?|...)", open_pos);
                return Ok(Some(Node::Empty));
            }
            Some(c) if c == 'R' || c.is_ascii_digit() => {
                if c != 'R' {
                    source.get_while(|c| c.is_ascii_digit(), false);
                }
                source.expect(")")?;
                info.unsupport("recursion or group call", open_pos);
                return Ok(Some(Node::Empty));
            }
            Some('&') => {
                parse_name(source, false, false)?;
                source.expect(")")?;
                info.unsupport("recursion or group call", open_pos);
                return Ok(Some(Node::Empty));
            }
            Some(c @ ('+' | '-')) if source.peek().is_some_and(|d| d.is_ascii_digit()) => {
                let digits = source.get_while(|c| c.is_ascii_digit(), false);
                if digits.is_empty() {
                    return rerr("missing relative group number", source.pos);
                }
                let offset = to_count(&digits) as i64;
                let group = if c == '+' {
                    info.group_count as i64 + offset
                } else {
                    info.group_count as i64 - offset + 1
                };
                if group <= 0 {
                    return rerr("invalid relative group number", source.pos);
                }
                source.expect(")")?;
                info.unsupport("recursion or group call", open_pos);
                return Ok(Some(Node::Empty));
            }
            _ => {
                source.pos = saved_pos_2;
                return parse_flags_subpattern(source, info, open_pos);
            }
        }
    }
    if ch == Some('*') {
        let saved_pos_2 = source.pos;
        let word = source.get_while(|c| c != ')' && c != '>', false);
        if word.chars().next().is_some_and(char::is_alphabetic) {
            let node = match word.as_str() {
                "FAIL" | "F" => Node::Fail,
                "PRUNE" | "SKIP" => {
                    info.unsupport(&format!("(*{word})"), open_pos);
                    Node::Empty
                }
                _ => return rerr("unknown verb", saved_pos_2),
            };
            source.expect(")")?;
            return Ok(Some(node));
        }
    }
    source.pos = saved_pos;
    let group = info.open_group(None, open_pos);
    let node = parse_group_body(source, info)?;
    info.open_groups.pop();
    Ok(Some(Node::Group {
        index: group,
        node: Box::new(node),
    }))
}

/// A parenthesised body: flags set inside do not leak out.
fn parse_group_body(source: &mut Source, info: &mut Info) -> RResult<Node> {
    let saved_flags = info.flags;
    let result = parse_pattern(source, info).and_then(|n| {
        source.expect(")")?;
        Ok(n)
    });
    info.flags = saved_flags;
    source.ignore_space = info.flags & F_X != 0;
    result
}

fn parse_extension(source: &mut Source, info: &mut Info, open_pos: usize) -> RResult<Node> {
    let saved_pos = source.pos;
    match source.get(false) {
        Some('<') => {
            let name = parse_name(source, false, false)?;
            let group = info.open_group(Some(&name), open_pos);
            source.expect(">")?;
            let node = parse_group_body(source, info)?;
            info.open_groups.pop();
            Ok(Node::Group {
                index: group,
                node: Box::new(node),
            })
        }
        Some('=') => {
            let name = parse_name(source, true, false)?;
            source.expect(")")?;
            if info.is_open_group(&name) {
                return rerr("cannot refer to an open group", saved_pos);
            }
            Ok(make_ref(info, name, saved_pos))
        }
        Some('>') | Some('&') => {
            parse_name(source, false, false)?;
            source.expect(")")?;
            info.unsupport("recursion or group call", open_pos);
            Ok(Node::Empty)
        }
        _ => {
            source.pos = saved_pos;
            rerr("unknown extension", saved_pos)
        }
    }
}

fn make_ref(info: &mut Info, name: String, pos: usize) -> Node {
    if info.flags & F_F != 0 && info.fold() == Fold::Unicode {
        info.unsupport("full case folding (?f)", pos);
    }
    info.refs.push(PendingRef { name, pos });
    // The group number is filled in by `fix_groups`; until then the field
    // holds the index of the pending reference.
    Node::Backref {
        group: info.refs.len() - 1,
        fold: info.fold(),
        pos,
    }
}

fn parse_comment(source: &mut Source) -> PResult<()> {
    loop {
        let saved_pos = source.pos;
        let c = source.get(true);
        match c {
            None | Some(')') => {
                source.pos = saved_pos;
                break;
            }
            Some('\\') => {
                source.get(true);
            }
            _ => {}
        }
    }
    source.expect(")")
}

fn parse_lookaround(
    source: &mut Source,
    info: &mut Info,
    behind: bool,
    negate: bool,
    pos: usize,
) -> RResult<Node> {
    let node = parse_group_body(source, info)?;
    if !negate && is_empty(&node) {
        // The module optimises `(?=)` away entirely.
        return Ok(Node::Empty);
    }
    Ok(Node::Look {
        behind,
        negate,
        node: Box::new(node),
        pos,
    })
}

fn parse_conditional(source: &mut Source, info: &mut Info, open_pos: usize) -> RResult<()> {
    let saved_flags = info.flags;
    let saved_pos = source.pos;
    let result = (|| -> RResult<()> {
        let ch = source.get(false);
        if ch == Some('?') {
            let ch = source.get(false);
            let look = match ch {
                Some('=') | Some('!') => true,
                Some('<') => matches!(source.get(false), Some('=') | Some('!')),
                _ => false,
            };
            if look {
                parse_pattern(source, info)?;
                source.expect(")")?;
                info.flags = saved_flags;
                source.ignore_space = info.flags & F_X != 0;
                parse_sequence(source, info)?;
                if source.matches("|") {
                    parse_sequence(source, info)?;
                }
                source.expect(")")?;
                info.unsupport("conditional (?(...)...)", open_pos);
                return Ok(());
            }
            source.pos = saved_pos;
            return rerr("expected lookaround conditional", source.pos);
        }
        source.pos = saved_pos;
        parse_name(source, true, false)?;
        source.expect(")")?;
        let yes = parse_sequence(source, info)?;
        let no = if source.matches("|") {
            parse_sequence(source, info)?
        } else {
            Node::Empty
        };
        source.expect(")")?;
        if !(is_empty(&yes) && is_empty(&no)) {
            info.unsupport("conditional (?(...)...)", open_pos);
        }
        Ok(())
    })();
    info.flags = saved_flags;
    source.ignore_space = info.flags & F_X != 0;
    result
}

fn parse_common(source: &mut Source, info: &mut Info) -> RResult<()> {
    let initial = info.group_count;
    parse_sequence(source, info)?;
    let mut fin = info.group_count;
    while source.matches("|") {
        info.group_count = initial;
        parse_sequence(source, info)?;
        fin = fin.max(info.group_count);
    }
    info.group_count = fin;
    source.expect(")")?;
    Ok(())
}

fn flag_of(s: &str) -> Option<u32> {
    Some(match s {
        "a" => F_A,
        "b" => F_B,
        "e" => F_E,
        "f" => F_F,
        "i" => F_I,
        "L" => F_L,
        "m" => F_M,
        "p" => F_P,
        "r" => F_R,
        "s" => F_S,
        "u" => F_U,
        "V0" => F_V0,
        "V1" => F_V1,
        "w" => F_W,
        "x" => F_X,
        _ => return None,
    })
}

fn parse_flag_set(source: &mut Source) -> u32 {
    let mut flags = 0;
    loop {
        let saved_pos = source.pos;
        let mut s = String::new();
        match source.get(false) {
            Some('V') => {
                s.push('V');
                if let Some(c) = source.get(false) {
                    s.push(c);
                }
            }
            Some(c) => s.push(c),
            None => {}
        }
        match flag_of(&s) {
            Some(f) => flags |= f,
            None => {
                source.pos = saved_pos;
                return flags;
            }
        }
    }
}

fn parse_flags_subpattern(
    source: &mut Source,
    info: &mut Info,
    open_pos: usize,
) -> RResult<Option<Node>> {
    let flags_on = parse_flag_set(source);
    let flags_off = if source.matches("-") {
        let off = parse_flag_set(source);
        if off == 0 {
            return rerr("bad inline flags: no flags after '-'", source.pos);
        }
        off
    } else {
        0
    };
    if flags_off & GLOBAL_FLAGS != 0 {
        return rerr("bad inline flags: cannot turn off global flag", source.pos);
    }
    if flags_on & flags_off != 0 {
        return rerr("bad inline flags: flag turned on and off", source.pos);
    }
    let new_global = flags_on & !info.global_flags & GLOBAL_FLAGS;
    if new_global != 0 {
        return Err(Reparse::Global(info.global_flags | new_global));
    }
    let unsupported = [
        (F_V1, "VERSION1 (?V1)"),
        (F_P, "POSIX matching (?p)"),
        (F_R, "reverse matching (?r)"),
        (F_L, "locale matching (?L)"),
        (F_W, "the WORD flag (?w)"),
    ];
    for (f, what) in unsupported {
        if (flags_on | info.global_flags) & f != 0 {
            info.unsupport(what, open_pos);
        }
    }
    let flags_on = flags_on & !GLOBAL_FLAGS;
    if source.matches(":") {
        let saved_flags = info.flags;
        info.flags = (info.flags | flags_on) & !flags_off;
        if info.flags & ALL_ENCODINGS != 0 {
            info.flags = (info.flags & !ALL_ENCODINGS) | flags_on;
        }
        source.ignore_space = info.flags & F_X != 0;
        let result = parse_pattern(source, info).and_then(|n| {
            source.expect(")")?;
            Ok(n)
        });
        info.flags = saved_flags;
        source.ignore_space = info.flags & F_X != 0;
        return result.map(Some);
    }
    if source.matches(")") {
        info.flags = (info.flags | flags_on) & !flags_off;
        source.ignore_space = info.flags & F_X != 0;
        return Ok(None);
    }
    rerr("unknown extension", source.pos)
}

fn parse_name(source: &mut Source, allow_numeric: bool, allow_group_0: bool) -> PResult<String> {
    let name = source.get_while(|c| c != ')' && c != '>', false);
    if name.is_empty() {
        return err("missing group name", source.pos);
    }
    if let Some(n) = decimal(&name) {
        let min_group = if allow_group_0 { 0 } else { 1 };
        if !allow_numeric || n < min_group {
            return err("bad character in group name", source.pos);
        }
    } else if !is_identifier(&name) {
        return err("bad character in group name", source.pos);
    }
    Ok(name)
}

fn hex_value(c: Option<char>) -> Option<u32> {
    c.filter(char::is_ascii_hexdigit)
        .and_then(|c| c.to_digit(16))
}

fn parse_escape(source: &mut Source, info: &mut Info, in_set: bool) -> RResult<Escape> {
    let esc_pos = source.pos.saturating_sub(1);
    let saved_ignore = source.ignore_space;
    source.ignore_space = false;
    let ch = source.get(false);
    source.ignore_space = saved_ignore;
    let Some(ch) = ch else {
        return rerr("bad escape (end of pattern)", source.pos);
    };
    let item_or_node = |info: &mut Info, cp: u32| -> Escape {
        if in_set {
            Escape::Item(SetItem::Char(cp))
        } else {
            Escape::Node(literal(info, cp, esc_pos))
        }
    };
    match ch {
        'x' | 'u' | 'U' => {
            let len = match ch {
                'x' => 2,
                'u' => 4,
                _ => 8,
            };
            let saved_pos = source.pos;
            let mut value: u64 = 0;
            let mut digits = String::new();
            for _ in 0..len {
                let c = source.get(false);
                match hex_value(c) {
                    Some(d) => {
                        digits.push(c.unwrap_or('0'));
                        value = value * 16 + u64::from(d);
                    }
                    None => {
                        return rerr(format!("incomplete escape \\{ch}{digits}"), saved_pos);
                    }
                }
            }
            if value >= 0x11_0000 {
                return rerr(format!("bad hex escape \\{ch}{digits}"), saved_pos);
            }
            Ok(item_or_node(info, value as u32))
        }
        'g' if !in_set => {
            let saved_pos = source.pos;
            match parse_group_ref(source, info) {
                Ok(n) => Ok(Escape::Node(n)),
                Err(_) => {
                    source.pos = saved_pos;
                    Ok(Escape::Node(literal(info, 'g' as u32, esc_pos)))
                }
            }
        }
        'G' if !in_set => Ok(Escape::Node(Node::Assert {
            kind: Assertion::SearchAnchor,
            pos: esc_pos,
        })),
        'L' if !in_set => {
            source.expect("<")?;
            parse_name(source, true, false)?;
            source.expect(">")?;
            rerr("undefined named list", source.pos)
        }
        'N' => {
            let saved_pos = source.pos;
            if source.matches("{") {
                let _name =
                    source.get_while(|c| c.is_ascii_alphanumeric() || c == ' ' || c == '-', true);
                if source.matches("}") {
                    info.unsupport("named character \\N{...}", esc_pos);
                    return Ok(if in_set {
                        Escape::Item(SetItem::Char(0))
                    } else {
                        Escape::Node(Node::Empty)
                    });
                }
            }
            source.pos = saved_pos;
            Ok(item_or_node(info, 'N' as u32))
        }
        'p' | 'P' => parse_property(source, info, ch == 'p', in_set, esc_pos),
        'R' if !in_set => {
            let mut set = ClassUnicode::empty();
            for c in [0x0A, 0x0B, 0x0C, 0x0D, 0x85, 0x2028, 0x2029] {
                set.union(&class::cp_range(c, c));
            }
            let crlf = Node::Concat(vec![Node::Literal('\r'), Node::Literal('\n')]);
            let node = Node::Alt(vec![crlf, Node::Class(Class::from_unicode(&set))]);
            Ok(Escape::Node(Node::Atomic {
                node: Box::new(node),
                pos: esc_pos,
            }))
        }
        'X' if !in_set => {
            info.unsupport("grapheme cluster \\X", esc_pos);
            Ok(Escape::Node(Node::Empty))
        }
        c if is_alpha(c) => {
            if !in_set {
                let ascii = info.ascii();
                let kind = match c {
                    'A' => Some(Assertion::Start),
                    'b' => Some(Assertion::WordBoundary { ascii }),
                    'B' => Some(Assertion::NotWordBoundary { ascii }),
                    'm' => Some(Assertion::WordStart { ascii }),
                    'M' => Some(Assertion::WordEnd { ascii }),
                    'Z' | 'z' => Some(Assertion::End),
                    'K' => {
                        info.unsupport("\\K", esc_pos);
                        return Ok(Escape::Node(Node::Empty));
                    }
                    _ => None,
                };
                if let Some(kind) = kind {
                    if info.flags & F_W != 0 {
                        info.unsupport("the WORD flag (?w)", esc_pos);
                    }
                    return Ok(Escape::Node(Node::Assert { kind, pos: esc_pos }));
                }
            }
            let perl = match c {
                'd' | 'D' => Some(Perl::Digit),
                's' | 'S' => Some(Perl::Space),
                'w' | 'W' => Some(Perl::Word),
                _ => None,
            };
            if let Some(p) = perl {
                let cls = class::perl(p, info.ascii());
                return Ok(make_property(
                    info,
                    cls,
                    None,
                    c.is_ascii_lowercase(),
                    in_set,
                    esc_pos,
                ));
            }
            if c == 'h' {
                let (prop, _) = class::lookup(None, "Blank", false)
                    .map_err(|_| err::<()>("internal: Blank", esc_pos).unwrap_err())?;
                let mut cls = prop.class;
                if info.ascii() {
                    cls.intersect(&class::ascii());
                }
                return Ok(make_property(info, cls, None, true, in_set, esc_pos));
            }
            let value = match c {
                'a' => 7,
                'b' => 8,
                'f' => 12,
                'n' => 10,
                'r' => 13,
                't' => 9,
                'v' => 11,
                _ => return rerr(format!("bad escape \\{c}"), source.pos),
            };
            Ok(if in_set {
                Escape::Item(SetItem::Char(value))
            } else {
                Escape::Node(Node::Literal(char::from(value as u8)))
            })
        }
        c if c.is_ascii_digit() => parse_numeric_escape(source, info, c, in_set, esc_pos),
        c => Ok(item_or_node(info, c as u32)),
    }
}

/// A property (`\d`, `\p{L}`, …) as a node or a set item.
fn make_property(
    info: &mut Info,
    class: ClassUnicode,
    folded: Option<ClassUnicode>,
    positive: bool,
    in_set: bool,
    pos: usize,
) -> Escape {
    if in_set {
        return Escape::Item(SetItem::Prop {
            class,
            folded,
            positive,
        });
    }
    Escape::Node(property_node(info, &class, folded.as_ref(), positive, pos))
}

/// A standalone property with the current case flags: under `(?i)` the
/// module widens only case-related properties (see [`class::Property`]).
fn property_node(
    info: &mut Info,
    class: &ClassUnicode,
    folded: Option<&ClassUnicode>,
    positive: bool,
    pos: usize,
) -> Node {
    let mut set = match (info.fold(), folded) {
        (Fold::None, _) | (_, None) => class.clone(),
        (_, Some(f)) => {
            if info.flags & F_F != 0 && info.fold() == Fold::Unicode {
                info.unsupport("full case folding (?f)", pos);
            }
            f.clone()
        }
    };
    if !positive {
        set.negate();
    }
    class_node(&set)
}

fn parse_numeric_escape(
    source: &mut Source,
    info: &mut Info,
    ch: char,
    in_set: bool,
    esc_pos: usize,
) -> RResult<Escape> {
    if in_set || ch == '0' {
        let mut digits = vec![ch];
        let mut saved_pos = source.pos;
        let mut c = source.get(false);
        while digits.len() < 3 && c.is_some_and(|c| ('0'..='7').contains(&c)) {
            digits.push(c.unwrap_or('0'));
            saved_pos = source.pos;
            c = source.get(false);
        }
        source.pos = saved_pos;
        if digits.iter().all(|c| ('0'..='7').contains(c)) {
            let value = digits
                .iter()
                .fold(0u32, |a, c| a * 8 + (*c as u32 - '0' as u32));
            return Ok(if in_set {
                Escape::Item(SetItem::Char(value))
            } else {
                Escape::Node(literal(info, value, esc_pos))
            });
        }
        let digits: String = digits.into_iter().collect();
        if ('0'..='7').contains(&ch) {
            return rerr(format!("incomplete escape \\{digits}"), source.pos);
        }
        return rerr(format!("bad escape \\{ch}"), source.pos);
    }
    let mut digits = String::from(ch);
    let mut saved_pos = source.pos;
    let c = source.get(false);
    if let Some(c) = c.filter(char::is_ascii_digit) {
        digits.push(c);
        saved_pos = source.pos;
        let c3 = source.get(false);
        let is_octal = digits.chars().all(|c| ('0'..='7').contains(&c));
        if let Some(c3) = c3.filter(|c| is_octal && ('0'..='7').contains(c)) {
            digits.push(c3);
            let value = u32::from_str_radix(&digits, 8).unwrap_or(0) & 0x1FF;
            return Ok(Escape::Node(literal(info, value, esc_pos)));
        }
    }
    source.pos = saved_pos;
    if info.is_open_group(&digits) {
        return rerr("cannot refer to an open group", source.pos);
    }
    let pos = source.pos;
    Ok(Escape::Node(make_ref(info, digits, pos)))
}

fn parse_group_ref(source: &mut Source, info: &mut Info) -> PResult<Node> {
    source.expect("<")?;
    let saved_pos = source.pos;
    let name = parse_name(source, true, false)?;
    source.expect(">")?;
    if info.is_open_group(&name) {
        return err("cannot refer to an open group", source.pos);
    }
    Ok(make_ref(info, name, saved_pos))
}

fn property_name_part(c: char) -> bool {
    c.is_ascii_alphanumeric() || " &_-.".contains(c)
}

fn parse_property_name(source: &mut Source) -> (Option<String>, String) {
    let name = source.get_while(property_name_part, false);
    let mut saved_pos = source.pos;
    let ch = source.get(false);
    let result = if ch == Some(':') || ch == Some('=') {
        let value = source.get_while(|c| c.is_ascii_alphanumeric() || " &_-./".contains(c), false);
        let value = value.trim_matches(|c: char| py_isspace(c)).to_owned();
        if !value.is_empty() {
            saved_pos = source.pos;
            (Some(name), value)
        } else {
            (None, name)
        }
    } else {
        (None, name)
    };
    source.pos = saved_pos;
    result
}

fn resolve_property(
    source: &Source,
    info: &mut Info,
    prop: Option<&str>,
    value: &str,
    posix: bool,
    pos: usize,
) -> PResult<(ClassUnicode, Option<ClassUnicode>, bool)> {
    if value.contains('/')
        || value.starts_with('-')
        || value.chars().next().is_some_and(|c| c.is_ascii_digit())
    {
        // Numeric values go through the module's rational normalisation.
        info.unsupport("numeric property value", pos);
        return Ok((ClassUnicode::empty(), None, false));
    }
    match class::lookup(prop, value, posix) {
        Ok((p, negated)) => {
            let mut cls = p.class;
            let mut folded = p.folded;
            if info.ascii() {
                cls.intersect(&class::ascii());
                if let Some(f) = folded.as_mut() {
                    f.intersect(&class::ascii());
                }
            }
            Ok((cls, folded, negated))
        }
        Err(PropertyError::UnknownValue) => err("unknown property value", source.pos),
        Err(PropertyError::Unsupported) => {
            let shown = match prop {
                Some(p) => format!("{p}={value}"),
                None => value.to_owned(),
            };
            info.unsupport(
                &format!("Unicode property \\p{{{shown}}} (unknown to this engine)"),
                pos,
            );
            Ok((ClassUnicode::empty(), None, false))
        }
    }
}

fn parse_property(
    source: &mut Source,
    info: &mut Info,
    positive: bool,
    in_set: bool,
    esc_pos: usize,
) -> RResult<Escape> {
    let saved_pos = source.pos;
    let ch = source.get(false);
    if ch == Some('{') {
        let negate = source.matches("^");
        let (prop, name) = parse_property_name(source);
        if source.matches("}") {
            let (cls, folded, flipped) =
                resolve_property(source, info, prop.as_deref(), &name, false, esc_pos)?;
            let positive = (positive != negate) != flipped;
            return Ok(make_property(info, cls, folded, positive, in_set, esc_pos));
        }
    } else if let Some(c) = ch.filter(|c| "CLMNPSZ".contains(*c)) {
        let (cls, folded, _) =
            resolve_property(source, info, None, &c.to_string(), false, esc_pos)?;
        return Ok(make_property(info, cls, folded, positive, in_set, esc_pos));
    }
    source.pos = saved_pos;
    let c = if positive { 'p' } else { 'P' };
    Ok(if in_set {
        Escape::Item(SetItem::Char(c as u32))
    } else {
        Escape::Node(literal(info, c as u32, esc_pos))
    })
}

fn parse_set(source: &mut Source, info: &mut Info) -> RResult<Node> {
    let set_pos = source.pos.saturating_sub(1);
    let saved_ignore = source.ignore_space;
    source.ignore_space = false;
    let result = (|| -> RResult<(bool, SetItem)> {
        let negate = source.matches("^");
        let item = parse_set_imp_union(source, info)?;
        if !source.matches("]") {
            return rerr("missing ]", source.pos);
        }
        Ok((negate, item))
    })();
    source.ignore_space = saved_ignore;
    let (negate, item) = result?;
    Ok(build_set(info, item, negate, set_pos))
}

fn parse_set_imp_union(source: &mut Source, info: &mut Info) -> RResult<SetItem> {
    let mut items = vec![parse_set_member(source, info)?];
    loop {
        let saved_pos = source.pos;
        if source.matches("]") {
            source.pos = saved_pos;
            break;
        }
        items.push(parse_set_member(source, info)?);
    }
    Ok(if items.len() == 1 {
        items.pop().unwrap_or(SetItem::Union(Vec::new()))
    } else {
        SetItem::Union(items)
    })
}

fn parse_set_member(source: &mut Source, info: &mut Info) -> RResult<SetItem> {
    let start = parse_set_item(source, info)?;
    let saved_pos1 = source.pos;
    let SetItem::Char(lo) = start else {
        return Ok(start);
    };
    if !source.matches("-") {
        return Ok(start);
    }
    let saved_pos2 = source.pos;
    if source.matches("]") {
        source.pos = saved_pos2;
        return Ok(SetItem::Union(vec![start, SetItem::Char('-' as u32)]));
    }
    let _ = saved_pos1;
    let end = parse_set_item(source, info)?;
    let SetItem::Char(hi) = end else {
        return Ok(SetItem::Union(vec![start, SetItem::Char('-' as u32), end]));
    };
    if lo > hi {
        return rerr("bad character range", source.pos);
    }
    if lo == hi {
        return Ok(start);
    }
    Ok(SetItem::Range(lo, hi))
}

fn parse_set_item(source: &mut Source, info: &mut Info) -> RResult<SetItem> {
    if source.matches("\\") {
        return match parse_escape(source, info, true)? {
            Escape::Item(i) => Ok(i),
            Escape::Node(_) => Ok(SetItem::Union(Vec::new())),
        };
    }
    let saved_pos = source.pos;
    if source.matches("[:") {
        let negate = source.matches("^");
        let (prop, name) = parse_property_name(source);
        if source.matches(":]") {
            let (cls, folded, flipped) =
                resolve_property(source, info, prop.as_deref(), &name, true, saved_pos)?;
            return Ok(SetItem::Prop {
                class: cls,
                folded,
                positive: negate == flipped,
            });
        }
        source.pos = saved_pos;
    }
    match source.get(false) {
        Some(c) => Ok(SetItem::Char(c as u32)),
        None => rerr("unterminated character set", source.pos),
    }
}

fn flatten(item: SetItem, out: &mut Vec<SetItem>) {
    match item {
        SetItem::Union(v) => v.into_iter().for_each(|i| flatten(i, out)),
        other => out.push(other),
    }
}

/// Builds a set node the way the module's `SetUnion.optimise` leaves it.
fn build_set(info: &mut Info, item: SetItem, negate: bool, pos: usize) -> Node {
    let mut items = Vec::new();
    flatten(item, &mut items);
    // The module turns a union holding a property and its complement into
    // "any character" -- ignoring a `^` on the set.
    let props: Vec<(&ClassUnicode, bool)> = items
        .iter()
        .filter_map(|i| match i {
            SetItem::Prop {
                class, positive, ..
            } => Some((class, *positive)),
            _ => None,
        })
        .collect();
    for (i, (ca, pa)) in props.iter().enumerate() {
        if props[i + 1..].iter().any(|(cb, pb)| pa != pb && ca == cb) {
            return Node::Class(Class::from_unicode(&class::any()));
        }
    }
    let fold = info.fold();
    if fold != Fold::None && info.flags & F_F != 0 && fold == Fold::Unicode {
        info.unsupport("full case folding (?f)", pos);
    }
    if let [
        SetItem::Prop {
            class,
            folded,
            positive,
        },
    ] = items.as_slice()
    {
        return property_node(info, class, folded.as_ref(), *positive != negate, pos);
    }
    let mut set = ClassUnicode::empty();
    for item in &items {
        match item {
            SetItem::Char(c) => set.union(&class::cp_range(*c, *c)),
            SetItem::Range(a, b) => set.union(&class::cp_range(*a, *b)),
            SetItem::Prop {
                class, positive, ..
            } => {
                let mut c = class.clone();
                if !positive {
                    c.negate();
                }
                set.union(&c);
            }
            SetItem::Union(_) => {}
        }
    }
    set = match fold {
        Fold::None => set,
        Fold::Unicode => class::fold_unicode(&set),
        Fold::Ascii => class::fold_ascii(&set),
    };
    let single_char = matches!(items.as_slice(), [SetItem::Char(_)]);
    if negate {
        set.negate();
    }
    match class_node(&set) {
        Node::Class(c) if negate && single_char => Node::NegChar(c),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(p: &str) -> (String, usize) {
        let e = parse(p).unwrap_err();
        (e.message, e.offset)
    }

    #[test]
    fn errors_match_python() {
        assert_eq!(e("[]"), ("unterminated character set".into(), 2));
        assert_eq!(e("{1}"), ("nothing to repeat".into(), 0));
        assert_eq!(
            e("x{3,2}"),
            ("min repeat greater than max repeat".into(), 2)
        );
        assert_eq!(e("a**"), ("multiple repeat".into(), 2));
        assert_eq!(e("a*?+"), ("multiple repeat".into(), 3));
        assert_eq!(e("\\8"), ("invalid group reference".into(), 2));
        assert_eq!(e("[\\8]"), ("bad escape \\8".into(), 3));
        assert_eq!(e("\\x4"), ("incomplete escape \\x4".into(), 2));
        assert_eq!(e("\\q"), ("bad escape \\q".into(), 2));
        assert_eq!(e("(a"), ("missing )".into(), 2));
        assert_eq!(e("a)"), ("unbalanced parenthesis".into(), 1));
        assert_eq!(e("(?P<1>a)"), ("bad character in group name".into(), 5));
        assert_eq!(e("(?P=x)"), ("unknown group".into(), 3));
    }

    #[test]
    fn accepts() {
        for p in [
            "x{a}",
            "x{1,2",
            "x{}",
            "x{,}",
            "[a-\\d]",
            "[]a]",
            "[^]a]",
            "\\1(a)",
            "(?i)a|b",
            "a(?i)*",
            "(?x) a b # c\n c",
            "(?P<n>a)(?P=n)",
            "(?<n>a)\\g<n>",
            "\\g<0>",
            "(?)",
            "(?#x)a*",
            "[[:alpha:]]",
            "\\p{Greek}",
            "\\pL",
            "(?<=a+)b",
            "(*FAIL)|a",
            "a{e<=0}",
        ] {
            assert!(parse(p).is_ok(), "{p}: {:?}", parse(p).err());
        }
        assert!(
            parse("a{e<=1}")
                .unwrap_err()
                .message
                .starts_with("unsupported")
        );
    }
}
