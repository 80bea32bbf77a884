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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lit::{IntTy, Lit, Ty};
    use crate::pyre::Regex;

    fn re(p: &str) -> Regex {
        Regex::new(p).unwrap_or_else(|e| panic!("{p}: {e}"))
    }

    /// Patterns that between them use every kind of instruction, class and
    /// assertion a program can hold.
    const STATIC_PATTERNS: &[&str] = &[
        "abc",
        "a.c",
        r"[^\[]+?",
        r"\d{2,4}\s*\S",
        "(?i)straße",
        r"(?ia)k\w",
        r"\p{Greek}+",
        "(?:ab){2,}?c",
        "(?:a|bc)*d",
        r"(?<=[{,])(\w+):",
        "(?<!a)b",
        "foo(?=bar)",
        r"(?i)(\w+) \1",
        "(?>a+)b",
        "a++b",
        r"(?m)^x$",
        r"\bword\b",
        r"\mfoo\M",
        r"\Aa\Z",
        r"\Gx",
        "(*FAIL)|z",
        r"(?P<key>\w+)=(?P<value>[^;]*)",
    ];

    /// The runtime names generated code reaches through `__private`.
    const PRIVATE_NAMES: &[&str] = &[
        "Assertion",
        "Class",
        "ClassKind",
        "Cow",
        "Fold",
        "Inst",
        "One",
        "Peek",
        "Program",
        "Regex",
        "Required",
        "StartScan",
    ];

    fn statics(lit: &Lit) -> Vec<(Ty, Lit)> {
        let mut out = Vec::new();
        lit.walk(&mut |l| {
            if let Lit::Static(ty, init) = l {
                out.push((ty.clone(), (**init).clone()));
            }
        });
        out
    }

    #[test]
    fn programs_are_deterministic_and_const() {
        for p in STATIC_PATTERNS {
            let lit = regex_lit(&re(p));
            assert_eq!(lit, regex_lit(&re(p)), "{p:?}");
            let mut program = None;
            lit.walk(&mut |l| match l {
                // Owned data cannot be in a `static`.
                Lit::Vec(_) | Lit::String(_) => panic!("{p:?} builds owned data: {l:?}"),
                Lit::Item(path) | Lit::Call(path, _) | Lit::Struct(path, _) => {
                    let name = path.split("::").next().unwrap();
                    assert!(PRIVATE_NAMES.contains(&name), "{p:?}: {path}");
                }
                Lit::Static(Ty::Item("Program"), init) => program = Some(init.clone()),
                _ => {}
            });
            assert!(
                matches!(program.as_deref(), Some(Lit::Struct("Program", _))),
                "{p:?}: {lit:?}"
            );
        }
    }

    #[test]
    fn regex_lit_calls_from_static() {
        let r = re(r"(?P<key>\w+)=(?P<value>[^;]*)");
        let Lit::Call("Regex::from_static", args) = regex_lit(&r) else {
            panic!("not a from_static call");
        };
        assert_eq!(args[0], Lit::Str(r"(?P<key>\w+)=(?P<value>[^;]*)".into()));
        assert_eq!(
            args[1],
            Lit::Ref(Box::new(Lit::Array(vec![
                Lit::Tuple(vec![Lit::Str("key".into()), Lit::Int(1, IntTy::Usize)]),
                Lit::Tuple(vec![Lit::Str("value".into()), Lit::Int(2, IntTy::Usize)]),
            ])))
        );
        assert_eq!(args[2], Lit::Int(2, IntTy::Usize));
        assert!(
            matches!(&args[3], Lit::Ref(s) if matches!(**s, Lit::Static(Ty::Item("Program"), _)))
        );
    }

    #[test]
    fn long_range_tables_are_statics() {
        // `\w` is both a class of the program and its search scan: two
        // identical statics, which the code generator writes once.
        let ranges: Vec<(Ty, Lit)> = statics(&regex_lit(&re(r"\w+x")))
            .into_iter()
            .filter(|(ty, _)| matches!(ty, Ty::Array(t, _) if matches!(**t, Ty::Tuple(_))))
            .collect();
        assert_eq!(ranges.len(), 2, "{ranges:?}");
        assert_eq!(ranges[0], ranges[1]);
        // Short classes stay inline.
        let short = statics(&regex_lit(&re("[a-c]+x")));
        assert_eq!(short.len(), 1, "{short:?}");
    }

    #[test]
    fn instructions_and_assertions_are_built_by_name() {
        let u32_ = |v| Lit::Int(v, IntTy::U32);
        assert_eq!(
            Inst::Char { c: '\'', rev: true }.to_lit(),
            Lit::Struct(
                "Inst::Char",
                vec![("c", Lit::Char('\'')), ("rev", Lit::Bool(true))]
            )
        );
        assert_eq!(Inst::Jmp(3).to_lit(), Lit::Call("Inst::Jmp", vec![u32_(3)]));
        assert_eq!(
            Inst::Assert(Assertion::WordBoundary { ascii: false }).to_lit(),
            Lit::Call(
                "Inst::Assert",
                vec![Lit::Struct(
                    "Assertion::WordBoundary",
                    vec![("ascii", Lit::Bool(false))]
                )]
            )
        );
        assert_eq!(
            Inst::LazyOne {
                item: One::Class(2),
                max: None,
                tail: 4,
                tail_len: 1,
                memo: Some(0),
                skip: Some(0),
            }
            .to_lit(),
            Lit::Struct(
                "Inst::LazyOne",
                vec![
                    ("item", Lit::Call("One::Class", vec![u32_(2)])),
                    ("max", Lit::Option(None)),
                    ("tail", u32_(4)),
                    ("tail_len", u32_(1)),
                    ("memo", Lit::some(u32_(0))),
                    ("skip", Lit::some(u32_(0))),
                ]
            )
        );
        assert_eq!(Inst::Match.to_lit(), Lit::Item("Inst::Match"));
        assert_eq!(ClassKind::NegChar.to_lit(), Lit::Item("ClassKind::NegChar"));
        assert_eq!(Fold::Ascii.to_lit(), Lit::Item("Fold::Ascii"));
    }
}
