//! Values as their construction: what the code generator writes out.
//!
//! The runtime owns the layout of its data (the template, its automata,
//! its regex programs), so it is the runtime that says how a value is put
//! together again: [`ToLit`] turns a value into a [`Lit`], a small tree of
//! constructor calls, struct literals and plain literals that names runtime
//! items by their path under the private API (`Value::Str`,
//! `Template::assemble`). It is data, not Rust source: `retort-codegen`
//! lowers it to tokens with `quote!`, hoisting [`Lit::Static`]s into
//! `static` items (identical ones once) and choosing the literal forms.
//!
//! Automata (DFA tables, regex programs) are described with borrowed
//! slices only, so that their `static`s are `const`-evaluable and read in
//! place; the small metadata around them (names, defaults) is rebuilt by
//! constructor code once per process.
//!
//! This module is a leaf: the impls for the engine's types live in
//! `data` and `regex`, next to nothing they would be imported by.

use std::borrow::Cow;

mod data;
mod regex;

pub use regex::regex_lit;

/// A value as the expression that builds it.
#[derive(Clone, Debug, PartialEq)]
pub enum Lit {
    /// A unit item (constant, unit variant) of the private API, by its path
    /// there: `Value::Null`.
    Item(&'static str),
    /// A call of a function or tuple variant of the private API:
    /// `Value::Str(..)`, `Template::assemble(..)`.
    Call(&'static str, Vec<Lit>),
    /// A struct or struct-variant literal of the private API, every field
    /// named.
    Struct(&'static str, Vec<(&'static str, Lit)>),
    /// `true` / `false`.
    Bool(bool),
    /// A suffixed integer literal.
    Int(u64, IntTy),
    /// A negative-capable `i64` literal.
    I64(i64),
    /// A `char` literal.
    Char(char),
    /// An `f64` by its bits, so NaN payloads, infinities and `-0.0` survive.
    F64(f64),
    /// A `&'static str` literal.
    Str(String),
    /// An owned `String` made from a literal.
    String(String),
    /// A byte-string literal (`&'static [u8; N]`).
    Bytes(Vec<u8>),
    /// `Some(..)` or `None`.
    Option(Option<Box<Lit>>),
    /// A tuple.
    Tuple(Vec<Lit>),
    /// An array expression `[..]`.
    Array(Vec<Lit>),
    /// A `Vec` built with `vec![..]`.
    Vec(Vec<Lit>),
    /// A shared reference `&..`.
    Ref(Box<Lit>),
    /// `Cow::Borrowed(..)`.
    Borrowed(Box<Lit>),
    /// A `static` item of type `.0` initialised with `.1`; in place, the
    /// static itself (a place expression, so `Ref(Static(..))` borrows it).
    /// Identical statics are written once.
    Static(Ty, Box<Lit>),
    /// A `[u32; N]` table: a static decoded at compile time from its
    /// run-length encoding ([`rle_u32`], decoded by
    /// `__private::u32_table`). One short byte string instead of thousands
    /// of tokens keeps the using crate's build fast.
    U32Table(Vec<u32>),
}

/// The integer types of [`Lit::Int`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntTy {
    /// `u8`
    U8,
    /// `u16`
    U16,
    /// `u32`
    U32,
    /// `u64`
    U64,
    /// `usize`
    Usize,
}

/// The type of a [`Lit::Static`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ty {
    /// A type of the private API, by its path there: `Program`.
    Item(&'static str),
    /// A primitive type: `char`, `u32`.
    Prim(&'static str),
    /// `[T; N]`.
    Array(Box<Ty>, usize),
    /// `(A, B, ..)`.
    Tuple(Vec<Ty>),
}

impl Lit {
    /// `Some(lit)`.
    pub fn some(lit: Lit) -> Lit {
        Lit::Option(Some(Box::new(lit)))
    }

    /// `Cow::Borrowed(&[items])`, a `const`-compatible slice.
    pub fn slice(items: Vec<Lit>) -> Lit {
        Lit::Borrowed(Box::new(Lit::Ref(Box::new(Lit::Array(items)))))
    }

    /// `Cow::Borrowed(&STATIC)` for a static array of `ty` holding `items`.
    pub fn static_slice(ty: Ty, items: Vec<Lit>) -> Lit {
        let n = items.len();
        Lit::Borrowed(Box::new(Lit::Ref(Box::new(Lit::Static(
            Ty::Array(Box::new(ty), n),
            Box::new(Lit::Array(items)),
        )))))
    }

    /// Visits this tree depth first, parents before children.
    pub fn walk(&self, f: &mut impl FnMut(&Lit)) {
        f(self);
        match self {
            Lit::Call(_, items) | Lit::Tuple(items) | Lit::Array(items) | Lit::Vec(items) => {
                items.iter().for_each(|l| l.walk(f))
            }
            Lit::Struct(_, fields) => fields.iter().for_each(|(_, l)| l.walk(f)),
            Lit::Option(Some(l)) | Lit::Ref(l) | Lit::Borrowed(l) | Lit::Static(_, l) => l.walk(f),
            _ => {}
        }
    }
}

/// A value that can say how it is built.
pub trait ToLit {
    /// The expression that builds a copy of `self`.
    fn to_lit(&self) -> Lit;
}

macro_rules! int_lit {
    ($($t:ty => $ty:ident),*) => {$(
        impl ToLit for $t {
            fn to_lit(&self) -> Lit {
                Lit::Int(*self as u64, IntTy::$ty)
            }
        }
    )*};
}
int_lit!(u8 => U8, u16 => U16, u32 => U32, u64 => U64, usize => Usize);

impl ToLit for i64 {
    fn to_lit(&self) -> Lit {
        Lit::I64(*self)
    }
}

impl ToLit for bool {
    fn to_lit(&self) -> Lit {
        Lit::Bool(*self)
    }
}

impl ToLit for char {
    fn to_lit(&self) -> Lit {
        Lit::Char(*self)
    }
}

impl ToLit for f64 {
    fn to_lit(&self) -> Lit {
        Lit::F64(*self)
    }
}

impl ToLit for str {
    fn to_lit(&self) -> Lit {
        Lit::Str(self.to_owned())
    }
}

impl ToLit for String {
    fn to_lit(&self) -> Lit {
        Lit::String(self.clone())
    }
}

impl<T: ToLit> ToLit for Option<T> {
    fn to_lit(&self) -> Lit {
        Lit::Option(self.as_ref().map(|v| Box::new(v.to_lit())))
    }
}

impl<A: ToLit, B: ToLit> ToLit for (A, B) {
    fn to_lit(&self) -> Lit {
        Lit::Tuple(vec![self.0.to_lit(), self.1.to_lit()])
    }
}

impl<T: ToLit, const N: usize> ToLit for [T; N] {
    fn to_lit(&self) -> Lit {
        Lit::Array(self.iter().map(ToLit::to_lit).collect())
    }
}

impl<T: ToLit> ToLit for Vec<T> {
    fn to_lit(&self) -> Lit {
        Lit::Vec(self.iter().map(ToLit::to_lit).collect())
    }
}

impl<T: ToLit + Clone> ToLit for Cow<'static, [T]>
where
    [T]: ToOwned,
{
    fn to_lit(&self) -> Lit {
        Lit::slice(self.iter().map(ToLit::to_lit).collect())
    }
}

impl ToLit for Cow<'static, str> {
    fn to_lit(&self) -> Lit {
        Lit::Borrowed(Box::new(Lit::Str(self.as_ref().to_owned())))
    }
}

/// Appends `v` as LEB128.
fn leb128(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Run-length encodes a table: `(value, count)` pairs in LEB128, the form
/// `__private::u32_table` decodes. DFA tables are mostly runs (dead
/// transitions, rows of one state), so this is two orders of magnitude
/// smaller than the table written out.
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

/// Tables up to this length are written inline as slices; longer ones
/// become [`Lit::U32Table`]s.
pub const INLINE_TABLE: usize = 32;

/// A `u32` table as `Cow::Borrowed(..)`: inline when short, a run-length
/// encoded static otherwise.
pub fn u32_table(table: &[u32]) -> Lit {
    if table.len() <= INLINE_TABLE {
        Lit::slice(table.iter().map(ToLit::to_lit).collect())
    } else {
        Lit::Borrowed(Box::new(Lit::Ref(Box::new(Lit::U32Table(table.to_vec())))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_and_containers() {
        assert_eq!(7u32.to_lit(), Lit::Int(7, IntTy::U32));
        assert_eq!(
            Some((1u8, true)).to_lit(),
            Lit::some(Lit::Tuple(vec![Lit::Int(1, IntTy::U8), Lit::Bool(true)]))
        );
        let slice: Cow<'static, [u16]> = Cow::Owned(vec![1, 2]);
        assert_eq!(
            slice.to_lit(),
            Lit::slice(vec![Lit::Int(1, IntTy::U16), Lit::Int(2, IntTy::U16)])
        );
        assert_eq!(u32_table(&[1]), Lit::slice(vec![Lit::Int(1, IntTy::U32)]));
        let long = vec![0u32; INLINE_TABLE + 1];
        assert!(matches!(u32_table(&long), Lit::Borrowed(_)));
        let mut tables = 0;
        u32_table(&long).walk(&mut |l| tables += usize::from(matches!(l, Lit::U32Table(_))));
        assert_eq!(tables, 1);
    }

    #[test]
    fn run_length_encoding_round_trips() {
        assert_eq!(rle_u32(&[0, 0, 0, 300, 1]), [0, 3, 0xac, 0x02, 1, 1, 1]);
        let table: Vec<u32> = (0..5000u32).map(|i| (i / 7) % 3 * (u32::MAX / 2)).collect();
        let decoded: [u32; 5000] = crate::__private::u32_table::<5000>(&rle_u32(&table));
        assert_eq!(decoded[..], table[..]);
    }
}
