//! Translation of patterns to regex-syntax HIR for the streaming scanner.
//!
//! A leftmost-first DFA finds the same match end as the backtracker when the
//! pattern has no backreferences, atomic groups or lookarounds. Two
//! lookarounds are common in delimiters and translate exactly enough:
//!
//! * a positive lookbehind at the start of a branch becomes the branch's
//!   *guard* (the branch may start only where a match of the guard ends);
//! * a positive lookahead with nothing after it becomes plain text at the end
//!   of the body (so the DFA's match runs past the real end, which the
//!   caller then takes from [`super::Regex::match_at`]). Python's `$` there
//!   is the lookahead `(?=\n?\z)`.
//!
//! Everything else a DFA cannot run exactly is reported as [`Unsupported`].

use super::ast::{Assertion, Node};
use super::{DfaBranch, DfaPlan, Unsupported};
use regex_syntax::hir::{Class as HClass, ClassUnicode, ClassUnicodeRange, Hir, Look, Repetition};

fn unsupported(construct: &str, offset: usize) -> Unsupported {
    Unsupported {
        construct: construct.to_owned(),
        offset,
    }
}

/// Builds the plan for `node`.
pub(crate) fn plan(node: &Node) -> Result<DfaPlan, Unsupported> {
    let (global_guard, rest) = split_guard(std::slice::from_ref(strip_groups(node)))?;
    if global_guard.is_none()
        && let Some(branches) = distribute(rest)
    {
        let mut out = Vec::with_capacity(branches.len());
        for items in &branches {
            let (guard, body) = split_guard(items)?;
            let (body, lookahead) = translate_seq(body, true)?;
            out.push(DfaBranch {
                guard,
                body,
                lookahead,
            });
        }
        return Ok(DfaPlan { branches: out });
    }
    // The top-level alternatives (looking through groups).
    let alternatives: Option<&Vec<Node>> = match rest {
        [one] => match strip_groups(one) {
            Node::Alt(v) => Some(v),
            _ => None,
        },
        _ => None,
    };
    let mut split = Vec::new();
    if let Some(alts) = alternatives {
        for alt in alts {
            split.push(split_guard(std::slice::from_ref(strip_groups(alt)))?);
        }
    }
    if split.iter().all(|(g, _)| g.is_none()) {
        let (body, lookahead) = translate_seq(rest, true)?;
        return Ok(DfaPlan {
            branches: vec![DfaBranch {
                guard: global_guard,
                body,
                lookahead,
            }],
        });
    }
    if global_guard.is_some() {
        return Err(unsupported(
            "lookbehind inside a lookbehind-guarded pattern",
            0,
        ));
    }
    let mut branches = Vec::with_capacity(split.len());
    for (guard, body) in split {
        let (body, lookahead) = translate_seq(body, true)?;
        branches.push(DfaBranch {
            guard,
            body,
            lookahead,
        });
    }
    Ok(DfaPlan { branches })
}

/// `(?:A|(?<=x)B)C`, a lookbehind at the start of a branch of a leading
/// group (`(?:<\|tool_call_start\|>\s*\[|(?<=\)),\s*)name\(`): under
/// leftmost-first matching `(?:A|B)C` matches as `AC|BC`, with the same order
/// of preference, which puts each lookbehind at the start of a top-level
/// branch, where it is a guard. Returns those branches' items, or `None`
/// when the pattern does not have that shape.
fn distribute(items: &[Node]) -> Option<Vec<Vec<Node>>> {
    let items = match items {
        [Node::Concat(inner)] => inner.as_slice(),
        other => other,
    };
    let [first, tail @ ..] = items else {
        return None;
    };
    let Node::Alt(alts) = strip_groups(first) else {
        return None;
    };
    let leads_with_lookbehind = |n: &Node| {
        let inner = match strip_groups(n) {
            Node::Concat(v) => v.first(),
            other => Some(other),
        };
        matches!(inner, Some(Node::Look { behind: true, .. }))
    };
    if tail.is_empty() || !alts.iter().any(leads_with_lookbehind) {
        return None;
    }
    Some(
        alts.iter()
            .map(|alt| {
                let mut branch = match strip_groups(alt) {
                    Node::Concat(v) => v.clone(),
                    other => vec![other.clone()],
                };
                branch.extend(tail.iter().cloned());
                branch
            })
            .collect(),
    )
}

/// The characters of a fixed-length lookahead body (`abc`, `\]\s`), one
/// set per position; `None` for anything else.
fn fixed_classes(node: &Node) -> Option<Vec<ClassUnicode>> {
    let mut out = Vec::new();
    let mut stack = vec![node];
    // Items in order: a concatenation pushes its items reversed.
    while let Some(n) = stack.pop() {
        match n {
            Node::Literal(c) => {
                out.push(ClassUnicode::new([ClassUnicodeRange::new(*c, *c)]));
            }
            Node::Class(c) | Node::FoldLit(c) | Node::NegChar(c) => out.push(c.to_unicode()),
            Node::Group { node, .. } => stack.push(node),
            Node::Concat(items) => stack.extend(items.iter().rev()),
            Node::Empty => {}
            _ => return None,
        }
    }
    Some(out)
}

/// A trailing `(?!c1 c2 … ck)` as text a DFA can consume: the end of the
/// text, or the first position where the text leaves the run —
/// `\z | [^c1] | c1\z | c1[^c2] | … | c1…ck-1[^ck]`. Like a trailing
/// positive lookahead, the automaton's match runs past the real end, which
/// the backtracking matcher then settles; a match exists at a start exactly
/// where the lookahead holds after some match of the body.
fn not_followed_by(classes: Vec<ClassUnicode>) -> Hir {
    let mut branches = vec![Hir::look(Look::End)];
    for j in 0..classes.len() {
        let prefix = classes[..j]
            .iter()
            .map(|c| Hir::class(HClass::Unicode(c.clone())));
        let mut other = classes[j].clone();
        other.negate();
        let mut diverges: Vec<Hir> = prefix.clone().collect();
        diverges.push(Hir::class(HClass::Unicode(other)));
        branches.push(Hir::concat(diverges));
        if j > 0 {
            let mut ends: Vec<Hir> = prefix.collect();
            ends.push(Hir::look(Look::End));
            branches.push(Hir::concat(ends));
        }
    }
    Hir::alternation(branches)
}

/// Capture groups do not matter to a DFA: look through them.
fn strip_groups(mut node: &Node) -> &Node {
    loop {
        match node {
            Node::Group { node: inner, .. } => node = inner,
            Node::Concat(v) if v.len() == 1 => node = &v[0],
            other => return other,
        }
    }
}

/// Splits a leading positive lookbehind off the sequence `items` as a guard.
fn split_guard(items: &[Node]) -> Result<(Option<Hir>, &[Node]), Unsupported> {
    let items = match items {
        [Node::Concat(inner)] => inner.as_slice(),
        other => other,
    };
    let Some(Node::Look {
        behind: true,
        negate: false,
        node: body,
        ..
    }) = items.first()
    else {
        return Ok((None, items));
    };
    let (guard, lookahead) = translate(body, false)?;
    debug_assert!(!lookahead);
    let rest = &items[1..];
    if let Some(Node::Look {
        behind: true, pos, ..
    }) = rest.first()
    {
        return Err(unsupported(
            "two lookbehinds at the start of a branch",
            *pos,
        ));
    }
    Ok((Some(guard), rest))
}

/// Translates a sequence; `tail` as for [`translate`].
fn translate_seq(items: &[Node], tail: bool) -> Result<(Hir, bool), Unsupported> {
    // The last item that is not `Empty` is in tail position.
    let last = items.iter().rposition(|n| !matches!(n, Node::Empty));
    let mut out = Vec::with_capacity(items.len());
    let mut lookahead = false;
    for (i, item) in items.iter().enumerate() {
        let (h, la) = translate(item, tail && Some(i) == last)?;
        lookahead |= la;
        out.push(h);
    }
    Ok((Hir::concat(out), lookahead))
}

/// Translates `node`; `tail` says nothing follows it in its branch, which is
/// where a lookahead (or `$`) may be turned into plain text. Returns the HIR
/// and whether such a conversion happened.
fn translate(node: &Node, tail: bool) -> Result<(Hir, bool), Unsupported> {
    Ok(match node {
        Node::Empty => (Hir::empty(), false),
        Node::Fail => (Hir::fail(), false),
        Node::Literal(c) => {
            let mut buf = [0u8; 4];
            (Hir::literal(c.encode_utf8(&mut buf).as_bytes()), false)
        }
        Node::Class(c) | Node::FoldLit(c) | Node::NegChar(c) => {
            (Hir::class(HClass::Unicode(c.to_unicode())), false)
        }
        Node::Concat(items) => translate_seq(items, tail)?,
        Node::Alt(branches) => {
            let mut out = Vec::with_capacity(branches.len());
            let mut lookahead = false;
            for b in branches {
                let (h, la) = translate(b, tail)?;
                lookahead |= la;
                out.push(h);
            }
            (Hir::alternation(out), lookahead)
        }
        Node::Group { node, .. } => translate(node, tail)?,
        Node::Repeat {
            node,
            min,
            max,
            greedy,
            possessive,
            pos,
        } => {
            if *possessive {
                return Err(unsupported("possessive quantifier", *pos));
            }
            let (sub, _) = translate(node, false)?;
            let rep = Repetition {
                min: *min,
                max: *max,
                greedy: *greedy,
                sub: Box::new(sub),
            };
            (Hir::repetition(rep), false)
        }
        Node::Look {
            behind: false,
            negate: true,
            node,
            pos,
        } if tail => match fixed_classes(node) {
            Some(classes) if !classes.is_empty() => (not_followed_by(classes), true),
            _ => {
                return Err(unsupported(
                    "negative lookahead that is not a fixed run of characters",
                    *pos,
                ));
            }
        },
        Node::Look {
            behind,
            negate,
            node,
            pos,
        } => {
            if *negate {
                return Err(unsupported("negative lookaround", *pos));
            }
            if *behind {
                return Err(unsupported("lookbehind after the start of a branch", *pos));
            }
            if !tail {
                return Err(unsupported("lookahead before the end of a branch", *pos));
            }
            let (h, _) = translate(node, true)?;
            (h, true)
        }
        Node::Atomic { pos, .. } => return Err(unsupported("atomic group", *pos)),
        Node::Backref { pos, .. } => return Err(unsupported("backreference", *pos)),
        Node::Assert { kind, pos } => match kind {
            Assertion::Start => (Hir::look(Look::Start), false),
            Assertion::End => (Hir::look(Look::End), false),
            Assertion::LineStart => (Hir::look(Look::StartLF), false),
            Assertion::LineEnd => (Hir::look(Look::EndLF), false),
            Assertion::EndOrFinalNewline => {
                if !tail {
                    return Err(unsupported("`$` before the end of a branch", *pos));
                }
                let nl = Hir::repetition(Repetition {
                    min: 0,
                    max: Some(1),
                    greedy: true,
                    sub: Box::new(Hir::literal(*b"\n")),
                });
                (Hir::concat(vec![nl, Hir::look(Look::End)]), true)
            }
            Assertion::WordBoundary { ascii: true } => (Hir::look(Look::WordAscii), false),
            Assertion::NotWordBoundary { ascii: true } => (Hir::look(Look::WordAsciiNegate), false),
            Assertion::WordStart { ascii: true } => (Hir::look(Look::WordStartAscii), false),
            Assertion::WordEnd { ascii: true } => (Hir::look(Look::WordEndAscii), false),
            Assertion::WordBoundary { .. }
            | Assertion::NotWordBoundary { .. }
            | Assertion::WordStart { .. }
            | Assertion::WordEnd { .. } => return Err(unsupported("Unicode word boundary", *pos)),
            Assertion::SearchAnchor => return Err(unsupported("\\G", *pos)),
        },
    })
}

/// Builds the capture plan for `node` (see [`super::CapturePlan`]), or
/// `None` when the pattern does not have its shape: no lookaround,
/// assertion, backreference, atomic group or possessive repeat anywhere,
/// and every capture group reachable from the top (or from a top-level
/// alternative) through concatenations and groups only.
pub(crate) fn capture_plan(node: &Node) -> Option<super::CapturePlan> {
    if !plain(node) {
        return None;
    }
    let alternatives: Vec<&Node> = match node {
        Node::Alt(v) => v.iter().collect(),
        Node::Concat(v) if v.len() == 1 => match &v[0] {
            Node::Alt(v) => v.iter().collect(),
            _ => vec![node],
        },
        _ => vec![node],
    };
    let mut branches = Vec::with_capacity(alternatives.len());
    for alt in alternatives {
        let (whole, _) = translate(alt, false).ok()?;
        let mut items = Vec::new();
        flatten(alt, &mut items)?;
        // Consecutive nodes between group boundaries make one piece.
        let mut pieces = Vec::new();
        let mut run: Vec<Node> = Vec::new();
        let flush = |run: &mut Vec<Node>, pieces: &mut Vec<super::CapturePiece>| {
            if run.is_empty() {
                return Some(());
            }
            let literal: Option<String> = run
                .iter()
                .map(|n| match n {
                    Node::Literal(c) => Some(*c),
                    _ => None,
                })
                .collect();
            let piece = match literal {
                Some(s) => super::CapturePiece::Literal(s),
                None => super::CapturePiece::Match(translate_seq(run, false).ok()?.0),
            };
            pieces.push(piece);
            run.clear();
            Some(())
        };
        for item in items {
            match item {
                Flat::Node(n) => run.push(n.clone()),
                Flat::Open(g) => {
                    flush(&mut run, &mut pieces)?;
                    pieces.push(super::CapturePiece::Open(g));
                }
                Flat::Close(g) => {
                    flush(&mut run, &mut pieces)?;
                    pieces.push(super::CapturePiece::Close(g));
                }
            }
        }
        flush(&mut run, &mut pieces)?;
        branches.push(super::CaptureBranch { whole, pieces });
    }
    Some(super::CapturePlan { branches })
}

/// An item of a branch flattened around its group boundaries.
enum Flat<'a> {
    Node(&'a Node),
    Open(usize),
    Close(usize),
}

/// Flattens `node` into items; `None` if a group is nested in anything but
/// concatenations and groups.
fn flatten<'a>(node: &'a Node, out: &mut Vec<Flat<'a>>) -> Option<()> {
    match node {
        Node::Concat(items) => {
            for n in items {
                flatten(n, out)?;
            }
        }
        Node::Group { index, node } => {
            out.push(Flat::Open(*index));
            flatten(node, out)?;
            out.push(Flat::Close(*index));
        }
        Node::Empty => {}
        other if has_group(other) => return None,
        other => out.push(Flat::Node(other)),
    }
    Some(())
}

fn has_group(node: &Node) -> bool {
    match node {
        Node::Group { .. } => true,
        Node::Concat(v) | Node::Alt(v) => v.iter().any(has_group),
        Node::Repeat { node, .. } | Node::Look { node, .. } | Node::Atomic { node, .. } => {
            has_group(node)
        }
        _ => false,
    }
}

/// Whether `node` holds nothing but characters, classes, groups,
/// alternations and (non-possessive) repeats: what a leftmost-first DFA runs
/// exactly with no context before or after the text.
fn plain(node: &Node) -> bool {
    match node {
        Node::Empty
        | Node::Fail
        | Node::Literal(_)
        | Node::Class(_)
        | Node::FoldLit(_)
        | Node::NegChar(_) => true,
        Node::Concat(v) | Node::Alt(v) => v.iter().all(plain),
        Node::Group { node, .. } => plain(node),
        Node::Repeat {
            node, possessive, ..
        } => !possessive && plain(node),
        Node::Look { .. } | Node::Atomic { .. } | Node::Backref { .. } | Node::Assert { .. } => {
            false
        }
    }
}
