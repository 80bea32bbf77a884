//! Compiled regex programs as [`Lit`]s.
//!
//! A [`Program`] is described with borrowed slices only, so its static is
//! `const`-evaluable and [`Regex::from_static`] runs it in place, without
//! parsing or compiling. Long character-range tables (`\w`, Unicode
//! properties) become statics of their own; the code generator writes
//! identical ones once, however many classes share them (the search scan
//! and the required string usually repeat a class of the program).

use super::{Lit, ToLit, Ty};
use crate::pyre::{
    Assertion, Class, ClassKind, Fold, Inst, One, Peek, Program, Regex, Required, StartScan,
};

/// Range tables with at least this many ranges get their own `static`.
const HOIST_RANGES: usize = 16;

fn call(path: &'static str, arg: Lit) -> Lit {
    Lit::Call(path, vec![arg])
}

/// `Regex::from_static(pattern, &[(name, index), ..], groups, &PROGRAM)`:
/// the regex rebuilt around its program, which is hoisted into a static
/// and run in place.
pub fn regex_lit(regex: &Regex) -> Lit {
    let names = regex
        .group_names()
        .iter()
        .map(|(name, index)| Lit::Tuple(vec![name.as_str().to_lit(), index.to_lit()]))
        .collect();
    Lit::Call(
        "Regex::from_static",
        vec![
            regex.pattern().to_lit(),
            Lit::Ref(Box::new(Lit::Array(names))),
            regex.group_count().to_lit(),
            Lit::Ref(Box::new(Lit::Static(
                Ty::Item("Program"),
                Box::new(regex.program().to_lit()),
            ))),
        ],
    )
}

impl ToLit for Class {
    fn to_lit(&self) -> Lit {
        let Class { ranges, ascii } = self;
        let ranges = if ranges.len() >= HOIST_RANGES {
            Lit::static_slice(
                Ty::Tuple(vec![Ty::Prim("char"), Ty::Prim("char")]),
                ranges.iter().map(ToLit::to_lit).collect(),
            )
        } else {
            ranges.to_lit()
        };
        Lit::Struct("Class", vec![("ranges", ranges), ("ascii", ascii.to_lit())])
    }
}

impl ToLit for StartScan {
    fn to_lit(&self) -> Lit {
        match self {
            StartScan::None => Lit::Item("StartScan::None"),
            StartScan::Class {
                class,
                consumes,
                peek,
            } => Lit::Struct(
                "StartScan::Class",
                vec![
                    ("class", class.to_lit()),
                    ("consumes", consumes.to_lit()),
                    ("peek", peek.to_lit()),
                ],
            ),
            StartScan::Str { at, len, peek } => Lit::Struct(
                "StartScan::Str",
                vec![
                    ("at", at.to_lit()),
                    ("len", len.to_lit()),
                    ("peek", peek.to_lit()),
                ],
            ),
        }
    }
}

impl ToLit for Required {
    fn to_lit(&self) -> Lit {
        let Required { offset, string } = self;
        Lit::Struct(
            "Required",
            vec![("offset", offset.to_lit()), ("string", string.to_lit())],
        )
    }
}

impl ToLit for Program {
    fn to_lit(&self) -> Lit {
        // Destructured so that a new field cannot be forgotten here.
        let Program {
            insts,
            classes,
            groups,
            regs,
            memo_slots,
            joined,
            memo_regs,
            backref_groups,
            first_bytes,
            anchored_start,
            start,
            required,
            lazy_skips,
        } = self;
        Lit::Struct(
            "Program",
            vec![
                ("insts", insts.to_lit()),
                ("classes", classes.to_lit()),
                ("groups", groups.to_lit()),
                ("regs", regs.to_lit()),
                ("memo_slots", memo_slots.to_lit()),
                ("joined", joined.to_lit()),
                ("memo_regs", memo_regs.to_lit()),
                ("backref_groups", backref_groups.to_lit()),
                ("first_bytes", first_bytes.to_lit()),
                ("anchored_start", anchored_start.to_lit()),
                ("start", start.to_lit()),
                ("required", required.to_lit()),
                ("lazy_skips", lazy_skips.to_lit()),
            ],
        )
    }
}

impl ToLit for Inst {
    fn to_lit(&self) -> Lit {
        // Every variant's fields are listed (no `..`), so that a new field
        // cannot be forgotten here.
        let (path, fields): (&'static str, Vec<(&'static str, Lit)>) = match self {
            Inst::Char { c, rev } => ("Inst::Char", vec![("c", c.to_lit()), ("rev", rev.to_lit())]),
            Inst::Class { class, rev, kind } => (
                "Inst::Class",
                vec![
                    ("class", class.to_lit()),
                    ("rev", rev.to_lit()),
                    ("kind", kind.to_lit()),
                ],
            ),
            Inst::Any { rev } => ("Inst::Any", vec![("rev", rev.to_lit())]),
            Inst::Split {
                first,
                second,
                memo,
                peek,
            } => (
                "Inst::Split",
                vec![
                    ("first", first.to_lit()),
                    ("second", second.to_lit()),
                    ("memo", memo.to_lit()),
                    ("peek", peek.to_lit()),
                ],
            ),
            Inst::Open { group } => ("Inst::Open", vec![("group", group.to_lit())]),
            Inst::Close { group } => ("Inst::Close", vec![("group", group.to_lit())]),
            Inst::Backref { group, fold, rev } => (
                "Inst::Backref",
                vec![
                    ("group", group.to_lit()),
                    ("fold", fold.to_lit()),
                    ("rev", rev.to_lit()),
                ],
            ),
            Inst::LoopInit { reg } => ("Inst::LoopInit", vec![("reg", reg.to_lit())]),
            Inst::IterStart { reg } => ("Inst::IterStart", vec![("reg", reg.to_lit())]),
            Inst::LoopTail {
                reg,
                max,
                greedy,
                body,
                exit,
                general,
            } => (
                "Inst::LoopTail",
                vec![
                    ("reg", reg.to_lit()),
                    ("max", max.to_lit()),
                    ("greedy", greedy.to_lit()),
                    ("body", body.to_lit()),
                    ("exit", exit.to_lit()),
                    ("general", general.to_lit()),
                ],
            ),
            Inst::CountTail { reg, count, body } => (
                "Inst::CountTail",
                vec![
                    ("reg", reg.to_lit()),
                    ("count", count.to_lit()),
                    ("body", body.to_lit()),
                ],
            ),
            Inst::LazyOne {
                item,
                max,
                tail,
                tail_len,
                memo,
                skip,
            } => (
                "Inst::LazyOne",
                vec![
                    ("item", item.to_lit()),
                    ("max", max.to_lit()),
                    ("tail", tail.to_lit()),
                    ("tail_len", tail_len.to_lit()),
                    ("memo", memo.to_lit()),
                    ("skip", skip.to_lit()),
                ],
            ),
            Inst::LookStart { negate, next } => (
                "Inst::LookStart",
                vec![("negate", negate.to_lit()), ("next", next.to_lit())],
            ),
            Inst::Jmp(target) => return call("Inst::Jmp", target.to_lit()),
            Inst::Assert(kind) => return call("Inst::Assert", kind.to_lit()),
            Inst::Fail => return Lit::Item("Inst::Fail"),
            Inst::PeekTail => return Lit::Item("Inst::PeekTail"),
            Inst::LookEnd => return Lit::Item("Inst::LookEnd"),
            Inst::AtomicStart => return Lit::Item("Inst::AtomicStart"),
            Inst::AtomicEnd => return Lit::Item("Inst::AtomicEnd"),
            Inst::Match => return Lit::Item("Inst::Match"),
        };
        Lit::Struct(path, fields)
    }
}

impl ToLit for ClassKind {
    fn to_lit(&self) -> Lit {
        Lit::Item(match self {
            ClassKind::Set => "ClassKind::Set",
            ClassKind::FoldLit => "ClassKind::FoldLit",
            ClassKind::NegChar => "ClassKind::NegChar",
        })
    }
}

impl ToLit for One {
    fn to_lit(&self) -> Lit {
        match self {
            One::Char(c) => call("One::Char", c.to_lit()),
            One::Class(i) => call("One::Class", i.to_lit()),
            One::Any => Lit::Item("One::Any"),
        }
    }
}

impl ToLit for Peek {
    fn to_lit(&self) -> Lit {
        match self {
            Peek::None => Lit::Item("Peek::None"),
            Peek::Entry { body, tail } => Lit::Struct(
                "Peek::Entry",
                vec![("body", body.to_lit()), ("tail", tail.to_lit())],
            ),
            Peek::End { body, tail, greedy } => Lit::Struct(
                "Peek::End",
                vec![
                    ("body", body.to_lit()),
                    ("tail", tail.to_lit()),
                    ("greedy", greedy.to_lit()),
                ],
            ),
        }
    }
}

impl ToLit for Assertion {
    fn to_lit(&self) -> Lit {
        let word = |path, ascii: bool| Lit::Struct(path, vec![("ascii", ascii.to_lit())]);
        match *self {
            Assertion::Start => Lit::Item("Assertion::Start"),
            Assertion::LineStart => Lit::Item("Assertion::LineStart"),
            Assertion::EndOrFinalNewline => Lit::Item("Assertion::EndOrFinalNewline"),
            Assertion::LineEnd => Lit::Item("Assertion::LineEnd"),
            Assertion::End => Lit::Item("Assertion::End"),
            Assertion::SearchAnchor => Lit::Item("Assertion::SearchAnchor"),
            Assertion::WordBoundary { ascii } => word("Assertion::WordBoundary", ascii),
            Assertion::NotWordBoundary { ascii } => word("Assertion::NotWordBoundary", ascii),
            Assertion::WordStart { ascii } => word("Assertion::WordStart", ascii),
            Assertion::WordEnd { ascii } => word("Assertion::WordEnd", ascii),
        }
    }
}

impl ToLit for Fold {
    fn to_lit(&self) -> Lit {
        Lit::Item(match self {
            Fold::None => "Fold::None",
            Fold::Unicode => "Fold::Unicode",
            Fold::Ascii => "Fold::Ascii",
        })
    }
}
