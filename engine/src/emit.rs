//! Rust source for the compiled form of a template, for `retort-codegen`.
//!
//! The runtime owns the layout of its data, so it also knows how to write it
//! out: [`Emit`] writes a Rust expression that rebuilds a value, naming
//! runtime items only through the path given to the [`Emitter`] (by default
//! `::retort::__private`). Automata (DFA tables, regex programs) are written
//! as `const`-compatible expressions, so the generated code keeps them in
//! `static`s and reads them in place; the small metadata around them
//! (names, defaults) is rebuilt by plain constructor code once per process.
//!
//! The output is text; the code generator parses it into tokens.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Collects the items and expressions of generated code.
#[derive(Debug)]
pub struct Emitter {
    krate: String,
    statics: Vec<String>,
}

impl Emitter {
    /// An emitter naming runtime items through `krate` (for example
    /// `::retort::__private`).
    pub fn new(krate: &str) -> Emitter {
        Emitter {
            krate: krate.trim_end_matches("::").to_owned(),
            statics: Vec::new(),
        }
    }

    /// The full path of a runtime item, `krate::name`.
    pub fn path(&self, name: &str) -> String {
        format!("{}::{name}", self.krate)
    }

    /// Writes the full path of a runtime item.
    pub fn write_path(&self, out: &mut String, name: &str) {
        out.push_str(&self.krate);
        out.push_str("::");
        out.push_str(name);
    }

    /// Hoists a `static` of type `ty` (a runtime item name, or any Rust type
    /// when it contains `::` or `[`) with initialiser `expr`, and returns its
    /// name. Statics are numbered in the order they are hoisted, so output is
    /// deterministic.
    pub fn hoist(&mut self, ty: &str, expr: &str) -> String {
        let name = format!("RETORT_STATIC_{}", self.statics.len());
        let ty = if ty.contains("::") || ty.starts_with('[') || ty.starts_with('&') {
            ty.to_owned()
        } else {
            self.path(ty)
        };
        self.statics.push(format!("static {name}: {ty} = {expr};"));
        name
    }

    /// The hoisted `static` items, in order.
    pub fn statics(&self) -> &[String] {
        &self.statics
    }

    /// Writes `value` as an expression.
    pub fn expr<T: Emit + ?Sized>(&mut self, value: &T) -> String {
        let mut out = String::new();
        value.emit(self, &mut out);
        out
    }

    /// Writes `Cow::Borrowed(&[items...])`, a `const`-compatible slice.
    pub fn borrowed_slice<T: Emit>(&mut self, out: &mut String, items: &[T]) {
        self.write_path(out, "Cow::Borrowed(&[");
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            item.emit(self, out);
        }
        out.push_str("])");
    }

    /// Writes `::std::vec![items...]`.
    pub fn vec<T: Emit>(&mut self, out: &mut String, items: &[T]) {
        out.push_str("::std::vec![");
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            item.emit(self, out);
        }
        out.push(']');
    }

    /// Writes a struct literal `krate::ty { name: value, ... }` from
    /// already-written field expressions.
    pub fn struct_lit(&self, out: &mut String, ty: &str, fields: &[(&str, String)]) {
        self.write_path(out, ty);
        out.push_str(" { ");
        for (name, value) in fields {
            out.push_str(name);
            out.push_str(": ");
            out.push_str(value);
            out.push_str(", ");
        }
        out.push('}');
    }
}

/// A value the code generator can write as a Rust expression.
pub trait Emit {
    /// Appends an expression that evaluates to a copy of `self`.
    fn emit(&self, e: &mut Emitter, out: &mut String);
}

macro_rules! emit_int {
    ($($t:ty),*) => {$(
        impl Emit for $t {
            fn emit(&self, _: &mut Emitter, out: &mut String) {
                let _ = write!(out, "{}{}", self, stringify!($t));
            }
        }
    )*};
}
emit_int!(u8, u16, u32, u64, usize, i64);

impl Emit for bool {
    fn emit(&self, _: &mut Emitter, out: &mut String) {
        out.push_str(if *self { "true" } else { "false" });
    }
}

impl Emit for char {
    fn emit(&self, _: &mut Emitter, out: &mut String) {
        // Debug output of a char is a valid Rust char literal.
        let _ = write!(out, "{self:?}");
    }
}

impl Emit for f64 {
    fn emit(&self, _: &mut Emitter, out: &mut String) {
        // Bits, so NaN payloads, infinities and -0.0 survive exactly.
        let _ = write!(out, "f64::from_bits({:#x}u64)", self.to_bits());
    }
}

impl Emit for str {
    fn emit(&self, _: &mut Emitter, out: &mut String) {
        // Debug output of a str is a valid Rust string literal.
        let _ = write!(out, "{self:?}");
    }
}

impl Emit for String {
    fn emit(&self, e: &mut Emitter, out: &mut String) {
        out.push_str("::std::string::String::from(");
        self.as_str().emit(e, out);
        out.push(')');
    }
}

impl<T: Emit> Emit for Option<T> {
    fn emit(&self, e: &mut Emitter, out: &mut String) {
        match self {
            Some(v) => {
                out.push_str("::core::option::Option::Some(");
                v.emit(e, out);
                out.push(')');
            }
            None => out.push_str("::core::option::Option::None"),
        }
    }
}

impl<A: Emit, B: Emit> Emit for (A, B) {
    fn emit(&self, e: &mut Emitter, out: &mut String) {
        out.push('(');
        self.0.emit(e, out);
        out.push(',');
        self.1.emit(e, out);
        out.push(')');
    }
}

impl<T: Emit, const N: usize> Emit for [T; N] {
    fn emit(&self, e: &mut Emitter, out: &mut String) {
        out.push('[');
        for (i, item) in self.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            item.emit(e, out);
        }
        out.push(']');
    }
}

impl<T: Emit> Emit for Vec<T> {
    fn emit(&self, e: &mut Emitter, out: &mut String) {
        e.vec(out, self);
    }
}

impl<T: Emit + Clone> Emit for Cow<'static, [T]>
where
    [T]: ToOwned,
{
    fn emit(&self, e: &mut Emitter, out: &mut String) {
        e.borrowed_slice(out, self);
    }
}

impl Emit for Cow<'static, str> {
    fn emit(&self, e: &mut Emitter, out: &mut String) {
        e.write_path(out, "Cow::Borrowed(");
        self.as_ref().emit(e, out);
        out.push(')');
    }
}

/// Writes a byte table as `Cow::Borrowed(b"...")`: byte strings compile far
/// faster than arrays of integer literals.
pub fn emit_bytes(e: &Emitter, out: &mut String, bytes: &[u8]) {
    e.write_path(out, "Cow::Borrowed(b\"");
    for &b in bytes {
        match b {
            b'\\' => out.push_str("\\\\"),
            b'"' => out.push_str("\\\""),
            0x20..=0x7e => out.push(b as char),
            _ => {
                let _ = write!(out, "\\x{b:02x}");
            }
        }
    }
    out.push_str("\")");
}

/// Appends `v` as LEB128.
fn leb128(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Run-length encodes a table: `(value, count)` pairs in LEB128. DFA
/// tables are mostly runs (dead transitions, rows of one state), so this
/// is two orders of magnitude smaller than the table written out.
pub fn rle_u32(table: &[u32]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < table.len() {
        let v = table[i];
        let mut j = i;
        while j < table.len() && table[j] == v {
            j += 1;
        }
        leb128(&mut out, u64::from(v));
        leb128(&mut out, (j - i) as u64);
        i = j;
    }
    out
}

/// Writes a `u32` table as `Cow::Borrowed(&STATIC)`. Long tables are
/// hoisted into a static decoded at compile time from a run-length encoded
/// byte string: one short literal instead of thousands of tokens keeps the
/// generated code small and the using crate's build fast.
pub fn emit_u32_table(e: &mut Emitter, out: &mut String, table: &[u32]) {
    if table.len() <= 32 {
        e.borrowed_slice(out, table);
        return;
    }
    let mut literal = String::new();
    emit_bytes(e, &mut literal, &rle_u32(table));
    // `emit_bytes` writes `Cow::Borrowed(b"...")`; the decoder takes the
    // byte string itself.
    let literal = literal
        .trim_start_matches(&e.path("Cow::Borrowed("))
        .trim_end_matches(')')
        .to_owned();
    let n = table.len();
    let name = e.hoist(
        &format!("[u32; {n}]"),
        &format!("{}::<{n}>({literal})", e.path("u32_table")),
    );
    e.write_path(out, "Cow::Borrowed(&");
    out.push_str(&name);
    out.push(')');
}

// ---------------------------------------------------------------------------
// The runtime's data

use crate::content::ContentSpec;
use crate::scan::delimiter::{Branch, Delimiter, DelimiterSource, Matcher};
use crate::scan::table::DfaTable;
use crate::template::{Field, Template};
use crate::transform::{Node, Transform};
use crate::value::Value;

impl Emit for Value {
    fn emit(&self, e: &mut Emitter, out: &mut String) {
        match self {
            Value::Null => e.write_path(out, "Value::Null"),
            Value::Bool(b) => {
                e.write_path(out, "Value::Bool(");
                b.emit(e, out);
                out.push(')');
            }
            Value::Int(i) => {
                e.write_path(out, "Value::Int(");
                i.emit(e, out);
                out.push(')');
            }
            Value::BigInt(n) => {
                // Decimal digits: the only form a bignum literal can take.
                e.write_path(out, "big_int(");
                n.to_string().as_str().emit(e, out);
                out.push(')');
            }
            Value::Float(f) => {
                e.write_path(out, "Value::Float(");
                f.emit(e, out);
                out.push(')');
            }
            Value::Str(s) => {
                e.write_path(out, "Value::Str(");
                s.emit(e, out);
                out.push(')');
            }
            Value::List(items) => {
                e.write_path(out, "Value::List(");
                e.vec(out, items);
                out.push(')');
            }
            Value::Map(m) => {
                e.write_path(out, "Value::Map(");
                e.write_path(out, "map(::std::vec![");
                for (i, (k, v)) in m.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push('(');
                    k.emit(e, out);
                    out.push(',');
                    v.emit(e, out);
                    out.push(')');
                }
                out.push_str("]))");
            }
        }
    }
}

impl Emit for Node {
    fn emit(&self, e: &mut Emitter, out: &mut String) {
        match self {
            Node::Map(entries) => {
                e.write_path(out, "TransformNode::Map(");
                e.vec(out, entries);
                out.push(')');
            }
            Node::List(items) => {
                e.write_path(out, "TransformNode::List(");
                e.vec(out, items);
                out.push(')');
            }
            Node::Placeholder { path, root, keys } => {
                let fields = [
                    ("path", e.expr(path)),
                    ("root", e.expr(root)),
                    ("keys", e.expr(keys)),
                ];
                e.struct_lit(out, "TransformNode::Placeholder", &fields);
            }
            Node::Literal(v) => {
                e.write_path(out, "TransformNode::Literal(");
                v.emit(e, out);
                out.push(')');
            }
            Node::TooDeep => e.write_path(out, "TransformNode::TooDeep"),
        }
    }
}

impl Emit for Transform {
    fn emit(&self, e: &mut Emitter, out: &mut String) {
        e.write_path(out, "Transform::from_node(");
        self.node.emit(e, out);
        out.push(')');
    }
}

impl Emit for ContentSpec {
    fn emit(&self, e: &mut Emitter, out: &mut String) {
        // The content parser is built from its settings on first use: its
        // arguments keep the reference's lazily raised errors, and a
        // `tag_pattern` is compiled then, once per process.
        e.write_path(out, "ContentSpec::new(");
        self.name().emit(e, out);
        out.push_str(", &");
        self.args().emit(e, out);
        out.push(')');
    }
}

impl Emit for DfaTable {
    fn emit(&self, e: &mut Emitter, out: &mut String) {
        let mut classes = String::new();
        emit_bytes(e, &mut classes, &self.classes);
        let mut flags = String::new();
        emit_bytes(e, &mut flags, &self.flags);
        let fields = [
            ("classes", classes),
            ("stride", e.expr(&self.stride)),
            ("trans", {
                let mut t = String::new();
                emit_u32_table(e, &mut t, &self.trans);
                t
            }),
            ("eoi", {
                let mut t = String::new();
                emit_u32_table(e, &mut t, &self.eoi);
                t
            }),
            ("flags", flags),
            ("start_text", e.expr(&self.start_text)),
            ("start_after", {
                let mut t = String::new();
                emit_u32_table(e, &mut t, &self.start_after);
                t
            }),
        ];
        e.struct_lit(out, "DfaTable", &fields);
    }
}

impl Emit for Branch {
    fn emit(&self, e: &mut Emitter, out: &mut String) {
        let fields = [
            ("table", e.expr(&self.table)),
            ("guard", e.expr(&self.guard)),
        ];
        e.struct_lit(out, "Branch", &fields);
    }
}

impl Emit for Matcher {
    fn emit(&self, e: &mut Emitter, out: &mut String) {
        match self {
            Matcher::Dfa(branches) => {
                // A static of its own: the automata are read in place.
                let items: Vec<String> = branches.iter().map(|b| e.expr(b)).collect();
                let ty = format!("[{}; {}]", e.path("Branch"), items.len());
                let name = e.hoist(&ty, &format!("[{}]", items.join(",")));
                e.write_path(out, "Matcher::Dfa(");
                e.write_path(out, "Cow::Borrowed(&");
                out.push_str(&name);
                out.push_str("))");
            }
            Matcher::Backtrack => e.write_path(out, "Matcher::Backtrack"),
        }
    }
}

impl Emit for DelimiterSource {
    fn emit(&self, e: &mut Emitter, out: &mut String) {
        match self {
            DelimiterSource::Literals(l) => {
                e.write_path(out, "DelimiterSource::Literals(");
                e.vec(out, l);
                out.push(')');
            }
            DelimiterSource::Pattern(p) => {
                e.write_path(out, "DelimiterSource::Pattern(");
                p.emit(e, out);
                out.push(')');
            }
        }
    }
}

/// Writes a byte set as the list of its members.
fn emit_byte_set(e: &Emitter, out: &mut String, set: &[bool; 256]) {
    e.write_path(out, "byte_set(&[");
    let members: Vec<String> = (0..=255u8)
        .filter(|&b| set[b as usize])
        .map(|b| b.to_string())
        .collect();
    out.push_str(&members.join(","));
    out.push_str("])");
}

impl Emit for Delimiter {
    fn emit(&self, e: &mut Emitter, out: &mut String) {
        let mut first_bytes = String::new();
        emit_byte_set(e, &mut first_bytes, &self.first_bytes);
        let fields = [
            ("source", e.expr(&self.source)),
            ("regex", self.regex.emit_static(e)),
            ("matcher", e.expr(&self.matcher)),
            ("needs_regex_at_commit", e.expr(&self.needs_regex_at_commit)),
            ("ref_can_grow", e.expr(&self.ref_can_grow)),
            ("first_bytes", first_bytes),
            ("may_match_empty", e.expr(&self.may_match_empty)),
            ("needs_history", e.expr(&self.needs_history)),
        ];
        e.struct_lit(out, "Delimiter", &fields);
    }
}

impl Emit for Field {
    fn emit(&self, e: &mut Emitter, out: &mut String) {
        let fields = [
            ("name", e.expr(&self.name)),
            ("open", e.expr(&self.open)),
            ("close", e.expr(&self.close)),
            ("content", e.expr(&self.content)),
            ("dirty", e.expr(&self.dirty)),
            ("repeats", e.expr(&self.repeats)),
            ("join", e.expr(&self.join)),
            ("optional", e.expr(&self.optional)),
            ("transform", e.expr(&self.transform)),
            ("transform_each", e.expr(&self.transform_each)),
            // Recomputed by `Template::assemble`.
            ("name_rank", "0u16".to_owned()),
        ];
        e.struct_lit(out, "Field", &fields);
    }
}

impl Emit for Template {
    /// `Template::assemble(...)` over the template's parts: automata as
    /// static data, the rest built by constructor code.
    fn emit(&self, e: &mut Emitter, out: &mut String) {
        let defaults = e.expr(&Value::Map(self.defaults.clone()));
        let fields = e.expr(&self.fields);
        let start_anchor = e.expr(&self.start_anchor);
        let delimiters = e.expr(&self.delimiters);
        let trackers = e.expr(&self.trackers.tables);
        e.write_path(out, "Template::assemble(");
        // `defaults` is written as a `Value::Map`; unwrap it to the map.
        e.write_path(out, "defaults_map(");
        out.push_str(&defaults);
        out.push_str("),");
        out.push_str(&fields);
        out.push(',');
        out.push_str(&start_anchor);
        out.push(',');
        out.push_str(&delimiters);
        out.push(',');
        e.write_path(out, "Trackers::from_tables(");
        out.push_str(&trackers);
        out.push_str("))");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_and_containers_are_rust_expressions() {
        let mut e = Emitter::new("::retort::__private");
        assert_eq!(e.expr(&7u32), "7u32");
        assert_eq!(e.expr(&'\n'), "'\\n'");
        assert_eq!(e.expr("a\"b"), "\"a\\\"b\"");
        assert_eq!(
            e.expr(&Some((1u8, true))),
            "::core::option::Option::Some((1u8,true))"
        );
        let slice: Cow<'static, [u16]> = Cow::Owned(vec![1, 2]);
        assert_eq!(
            e.expr(&slice),
            "::retort::__private::Cow::Borrowed(&[1u16,2u16])"
        );
        assert_eq!(e.expr(&-0.0f64), "f64::from_bits(0x8000000000000000u64)");
        let mut out = String::new();
        emit_bytes(&e, &mut out, b"a\"\x00");
        assert_eq!(out, "::retort::__private::Cow::Borrowed(b\"a\\\"\\x00\")");
        assert_eq!(rle_u32(&[0, 0, 0, 300, 1]), [0, 3, 0xac, 0x02, 1, 1, 1]);
        let table: Vec<u32> = (0..5000u32).map(|i| (i / 7) % 3 * (u32::MAX / 2)).collect();
        let decoded: [u32; 5000] = crate::__private::u32_table::<5000>(&rle_u32(&table));
        assert_eq!(decoded[..], table[..]);
        let name = e.hoist("Program", "X");
        assert_eq!(
            e.statics(),
            [format!("static {name}: ::retort::__private::Program = X;")]
        );
    }
}
