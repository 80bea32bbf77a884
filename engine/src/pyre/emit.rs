//! Compiled programs as Rust source (see [`crate::emit`]).
//!
//! A [`Program`] is written as a `const`-evaluable expression: every table
//! is a `Cow::Borrowed` of a literal slice, every type is named through the
//! emitter's path, so generated code keeps the program in a `static` and
//! [`Regex::from_static`] runs it in place, without parsing or compiling.
//!
//! Long character-range tables (`\w`, Unicode properties) are hoisted into
//! their own `static`s, once per program however many classes share them
//! (the search scan and the required string usually repeat a class of the
//! program).

use super::{
    Assertion, Class, ClassKind, Fold, Inst, One, Peek, Program, Regex, Required, StartScan,
};
use crate::emit::{Emit, Emitter};

/// Range tables with at least this many ranges get their own `static`.
const HOIST_RANGES: usize = 16;

/// The range tables hoisted while writing one value, for sharing.
#[derive(Default)]
struct Tables {
    hoisted: Vec<(Vec<(char, char)>, String)>,
}

impl Tables {
    fn class(&mut self, e: &mut Emitter, out: &mut String, class: &Class) {
        let Class { ranges, ascii } = class;
        let ranges_expr = if ranges.len() >= HOIST_RANGES {
            let name = match self.hoisted.iter().find(|(r, _)| r[..] == ranges[..]) {
                Some((_, name)) => name.clone(),
                None => {
                    let mut table = String::from("[");
                    for (i, range) in ranges.iter().enumerate() {
                        if i > 0 {
                            table.push(',');
                        }
                        range.emit(e, &mut table);
                    }
                    table.push(']');
                    let ty = format!("[(char, char); {}]", ranges.len());
                    let name = e.hoist(&ty, &table);
                    self.hoisted.push((ranges.to_vec(), name.clone()));
                    name
                }
            };
            format!("{}(&{name})", e.path("Cow::Borrowed"))
        } else {
            e.expr(ranges)
        };
        let ascii = e.expr(ascii);
        e.struct_lit(out, "Class", &[("ranges", ranges_expr), ("ascii", ascii)]);
    }

    fn classes(&mut self, e: &mut Emitter, out: &mut String, classes: &[Class]) {
        e.write_path(out, "Cow::Borrowed(&[");
        for (i, class) in classes.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            self.class(e, out, class);
        }
        out.push_str("])");
    }

    fn start_scan(&mut self, e: &mut Emitter, out: &mut String, start: &StartScan) {
        match start {
            StartScan::None => e.write_path(out, "StartScan::None"),
            StartScan::Class {
                class,
                consumes,
                peek,
            } => {
                let mut class_expr = String::new();
                self.class(e, &mut class_expr, class);
                let fields = [
                    ("class", class_expr),
                    ("consumes", e.expr(consumes)),
                    ("peek", e.expr(peek)),
                ];
                e.struct_lit(out, "StartScan::Class", &fields);
            }
            StartScan::Str { at, len, peek } => {
                let fields = [
                    ("at", e.expr(at)),
                    ("len", e.expr(len)),
                    ("peek", e.expr(peek)),
                ];
                e.struct_lit(out, "StartScan::Str", &fields);
            }
        }
    }

    fn required(&mut self, e: &mut Emitter, out: &mut String, required: &Required) {
        let Required { offset, string } = required;
        let mut string_expr = String::new();
        self.classes(e, &mut string_expr, string);
        let fields = [("offset", e.expr(offset)), ("string", string_expr)];
        e.struct_lit(out, "Required", &fields);
    }
}

impl Emit for Class {
    fn emit(&self, e: &mut Emitter, out: &mut String) {
        Tables::default().class(e, out, self);
    }
}

impl Emit for StartScan {
    fn emit(&self, e: &mut Emitter, out: &mut String) {
        Tables::default().start_scan(e, out, self);
    }
}

impl Emit for Required {
    fn emit(&self, e: &mut Emitter, out: &mut String) {
        Tables::default().required(e, out, self);
    }
}

impl Emit for Program {
    fn emit(&self, e: &mut Emitter, out: &mut String) {
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
        let mut tables = Tables::default();
        let insts = e.expr(insts);
        let mut classes_expr = String::new();
        tables.classes(e, &mut classes_expr, classes);
        let mut start_expr = String::new();
        tables.start_scan(e, &mut start_expr, start);
        let required_expr = match required {
            Some(r) => {
                let mut s = String::from("::core::option::Option::Some(");
                tables.required(e, &mut s, r);
                s.push(')');
                s
            }
            None => "::core::option::Option::None".to_owned(),
        };
        let fields = [
            ("insts", insts),
            ("classes", classes_expr),
            ("groups", e.expr(groups)),
            ("regs", e.expr(regs)),
            ("memo_slots", e.expr(memo_slots)),
            ("joined", e.expr(joined)),
            ("memo_regs", e.expr(memo_regs)),
            ("backref_groups", e.expr(backref_groups)),
            ("first_bytes", e.expr(first_bytes)),
            ("anchored_start", e.expr(anchored_start)),
            ("start", start_expr),
            ("required", required_expr),
            ("lazy_skips", e.expr(lazy_skips)),
        ];
        e.struct_lit(out, "Program", &fields);
    }
}

impl Emit for Inst {
    fn emit(&self, e: &mut Emitter, out: &mut String) {
        // Every variant's fields are listed (no `..`), so that a new field
        // cannot be forgotten here.
        let (variant, fields): (&str, Vec<(&str, String)>) = match self {
            Inst::Char { c, rev } => ("Char", vec![("c", e.expr(c)), ("rev", e.expr(rev))]),
            Inst::Class { class, rev, kind } => (
                "Class",
                vec![
                    ("class", e.expr(class)),
                    ("rev", e.expr(rev)),
                    ("kind", e.expr(kind)),
                ],
            ),
            Inst::Any { rev } => ("Any", vec![("rev", e.expr(rev))]),
            Inst::Split {
                first,
                second,
                memo,
                peek,
            } => (
                "Split",
                vec![
                    ("first", e.expr(first)),
                    ("second", e.expr(second)),
                    ("memo", e.expr(memo)),
                    ("peek", e.expr(peek)),
                ],
            ),
            Inst::Open { group } => ("Open", vec![("group", e.expr(group))]),
            Inst::Close { group } => ("Close", vec![("group", e.expr(group))]),
            Inst::Backref { group, fold, rev } => (
                "Backref",
                vec![
                    ("group", e.expr(group)),
                    ("fold", e.expr(fold)),
                    ("rev", e.expr(rev)),
                ],
            ),
            Inst::LoopInit { reg } => ("LoopInit", vec![("reg", e.expr(reg))]),
            Inst::IterStart { reg } => ("IterStart", vec![("reg", e.expr(reg))]),
            Inst::LoopTail {
                reg,
                max,
                greedy,
                body,
                exit,
                general,
            } => (
                "LoopTail",
                vec![
                    ("reg", e.expr(reg)),
                    ("max", e.expr(max)),
                    ("greedy", e.expr(greedy)),
                    ("body", e.expr(body)),
                    ("exit", e.expr(exit)),
                    ("general", e.expr(general)),
                ],
            ),
            Inst::CountTail { reg, count, body } => (
                "CountTail",
                vec![
                    ("reg", e.expr(reg)),
                    ("count", e.expr(count)),
                    ("body", e.expr(body)),
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
                "LazyOne",
                vec![
                    ("item", e.expr(item)),
                    ("max", e.expr(max)),
                    ("tail", e.expr(tail)),
                    ("tail_len", e.expr(tail_len)),
                    ("memo", e.expr(memo)),
                    ("skip", e.expr(skip)),
                ],
            ),
            Inst::LookStart { negate, next } => (
                "LookStart",
                vec![("negate", e.expr(negate)), ("next", e.expr(next))],
            ),
            Inst::Jmp(target) => {
                e.write_path(out, "Inst::Jmp(");
                target.emit(e, out);
                out.push(')');
                return;
            }
            Inst::Assert(kind) => {
                e.write_path(out, "Inst::Assert(");
                kind.emit(e, out);
                out.push(')');
                return;
            }
            Inst::Fail => return e.write_path(out, "Inst::Fail"),
            Inst::PeekTail => return e.write_path(out, "Inst::PeekTail"),
            Inst::LookEnd => return e.write_path(out, "Inst::LookEnd"),
            Inst::AtomicStart => return e.write_path(out, "Inst::AtomicStart"),
            Inst::AtomicEnd => return e.write_path(out, "Inst::AtomicEnd"),
            Inst::Match => return e.write_path(out, "Inst::Match"),
        };
        e.struct_lit(out, &format!("Inst::{variant}"), &fields);
    }
}

impl Emit for ClassKind {
    fn emit(&self, e: &mut Emitter, out: &mut String) {
        e.write_path(
            out,
            match self {
                ClassKind::Set => "ClassKind::Set",
                ClassKind::FoldLit => "ClassKind::FoldLit",
                ClassKind::NegChar => "ClassKind::NegChar",
            },
        );
    }
}

impl Emit for One {
    fn emit(&self, e: &mut Emitter, out: &mut String) {
        match self {
            One::Char(c) => {
                e.write_path(out, "One::Char(");
                c.emit(e, out);
                out.push(')');
            }
            One::Class(i) => {
                e.write_path(out, "One::Class(");
                i.emit(e, out);
                out.push(')');
            }
            One::Any => e.write_path(out, "One::Any"),
        }
    }
}

impl Emit for Peek {
    fn emit(&self, e: &mut Emitter, out: &mut String) {
        match self {
            Peek::None => e.write_path(out, "Peek::None"),
            Peek::Entry { body, tail } => {
                let fields = [("body", e.expr(body)), ("tail", e.expr(tail))];
                e.struct_lit(out, "Peek::Entry", &fields);
            }
            Peek::End { body, tail, greedy } => {
                let fields = [
                    ("body", e.expr(body)),
                    ("tail", e.expr(tail)),
                    ("greedy", e.expr(greedy)),
                ];
                e.struct_lit(out, "Peek::End", &fields);
            }
        }
    }
}

impl Emit for Assertion {
    fn emit(&self, e: &mut Emitter, out: &mut String) {
        let (variant, ascii) = match *self {
            Assertion::Start => ("Start", None),
            Assertion::LineStart => ("LineStart", None),
            Assertion::EndOrFinalNewline => ("EndOrFinalNewline", None),
            Assertion::LineEnd => ("LineEnd", None),
            Assertion::End => ("End", None),
            Assertion::SearchAnchor => ("SearchAnchor", None),
            Assertion::WordBoundary { ascii } => ("WordBoundary", Some(ascii)),
            Assertion::NotWordBoundary { ascii } => ("NotWordBoundary", Some(ascii)),
            Assertion::WordStart { ascii } => ("WordStart", Some(ascii)),
            Assertion::WordEnd { ascii } => ("WordEnd", Some(ascii)),
        };
        let path = format!("Assertion::{variant}");
        match ascii {
            None => e.write_path(out, &path),
            Some(ascii) => {
                let fields = [("ascii", e.expr(&ascii))];
                e.struct_lit(out, &path, &fields);
            }
        }
    }
}

impl Emit for Fold {
    fn emit(&self, e: &mut Emitter, out: &mut String) {
        e.write_path(
            out,
            match self {
                Fold::None => "Fold::None",
                Fold::Unicode => "Fold::Unicode",
                Fold::Ascii => "Fold::Ascii",
            },
        );
    }
}

impl Regex {
    /// Writes this regex for generated code: hoists its program into a
    /// `static` (with `e.hoist("Program", ..)`) and returns an expression
    /// `krate::Regex::from_static(pattern, names, groups, &STATIC)` that
    /// rebuilds it without parsing or compiling.
    #[doc(hidden)]
    pub fn emit_static(&self, e: &mut Emitter) -> String {
        let prog = e.expr(self.program());
        let name = e.hoist("Program", &prog);
        let mut out = String::new();
        e.write_path(&mut out, "Regex::from_static(");
        self.pattern().emit(e, &mut out);
        out.push_str(", &[");
        for (i, (group, index)) in self.group_names().iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push('(');
            group.as_str().emit(e, &mut out);
            out.push(',');
            index.emit(e, &mut out);
            out.push(')');
        }
        out.push_str("], ");
        self.group_count().emit(e, &mut out);
        out.push_str(", &");
        out.push_str(&name);
        out.push(')');
        out
    }
}
