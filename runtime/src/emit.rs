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
        self.statics
            .push(format!("static {name}: {ty} = {expr};"));
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
        let name = e.hoist("Program", "X");
        assert_eq!(
            e.statics(),
            [format!("static {name}: ::retort::__private::Program = X;")]
        );
    }
}
