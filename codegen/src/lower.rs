//! The runtime's [`Lit`]s as tokens.
//!
//! The engine says how each of its values is built ([`retort::lit`]); this
//! module writes that as Rust with `quote!`: runtime items named through
//! the module's alias for the private API, [`Lit::Static`]s hoisted into
//! `static` items — written once however often they occur (the `\w` range
//! table of a program's classes and of its search scan, a DFA shared by two
//! delimiters) — and long `u32` tables as run-length encoded byte strings
//! that `__private::u32_table` expands at compile time.

use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::quote;
use retort::lit::{IntTy, Lit, Ty, rle_u32};
use std::collections::HashMap;

/// Lowers [`Lit`]s to expressions, collecting the statics they hoist.
pub struct Lowering {
    /// The private API's path, as the generated code names it (`__rt`).
    kr: TokenStream,
    statics: Vec<TokenStream>,
    /// Hoisted statics by their type and initialiser, for sharing.
    seen: HashMap<String, Ident>,
}

impl Lowering {
    /// A lowering that names runtime items through `kr`.
    pub fn new(kr: TokenStream) -> Lowering {
        Lowering {
            kr,
            statics: Vec::new(),
            seen: HashMap::new(),
        }
    }

    /// The hoisted `static` items, in the order they were first needed
    /// (so output is deterministic).
    pub fn statics(&self) -> &[TokenStream] {
        &self.statics
    }

    /// A runtime item's path: `Value::Str` → `__rt::Value::Str`.
    fn path(&self, path: &str) -> TokenStream {
        let kr = &self.kr;
        let segments = path.split("::").map(|s| Ident::new(s, Span::call_site()));
        quote!(#kr #(:: #segments)*)
    }

    fn ty(&self, ty: &Ty) -> TokenStream {
        match ty {
            Ty::Item(path) => self.path(path),
            Ty::Prim(name) => {
                let name = Ident::new(name, Span::call_site());
                quote!(#name)
            }
            Ty::Array(item, n) => {
                let item = self.ty(item);
                let n = Literal::usize_unsuffixed(*n);
                quote!([#item; #n])
            }
            Ty::Tuple(items) => {
                let items = items.iter().map(|t| self.ty(t));
                quote!((#(#items,)*))
            }
        }
    }

    /// Hoists `static NAME: ty = init;` (once per distinct type and
    /// initialiser) and returns `NAME`.
    fn hoist(&mut self, ty: TokenStream, init: TokenStream) -> TokenStream {
        let key = format!("{ty} = {init}");
        if let Some(name) = self.seen.get(&key) {
            return quote!(#name);
        }
        let name = Ident::new(
            &format!("RETORT_STATIC_{}", self.statics.len()),
            Span::call_site(),
        );
        self.statics.push(quote!(static #name: #ty = #init;));
        self.seen.insert(key, name.clone());
        quote!(#name)
    }

    /// The expression that builds `lit`.
    pub fn expr(&mut self, lit: &Lit) -> TokenStream {
        match lit {
            Lit::Item(path) => self.path(path),
            Lit::Call(path, args) => {
                let f = self.path(path);
                let args: Vec<TokenStream> = args.iter().map(|a| self.expr(a)).collect();
                quote!(#f(#(#args),*))
            }
            Lit::Struct(path, fields) => {
                let ty = self.path(path);
                let names = fields.iter().map(|(n, _)| Ident::new(n, Span::call_site()));
                let values: Vec<TokenStream> = fields.iter().map(|(_, v)| self.expr(v)).collect();
                quote!(#ty { #(#names: #values,)* })
            }
            Lit::Bool(b) => quote!(#b),
            Lit::Int(v, ty) => {
                let lit = match ty {
                    IntTy::U8 => Literal::u8_suffixed(*v as u8),
                    IntTy::U16 => Literal::u16_suffixed(*v as u16),
                    IntTy::U32 => Literal::u32_suffixed(*v as u32),
                    IntTy::U64 => Literal::u64_suffixed(*v),
                    IntTy::Usize => Literal::usize_suffixed(*v as usize),
                };
                quote!(#lit)
            }
            Lit::I64(v) => {
                // A negative number is `-` and its magnitude, as rustc
                // reads it (`i64::MIN` included).
                let v = Literal::i64_suffixed(*v);
                quote!(#v)
            }
            Lit::Char(c) => {
                let c = Literal::character(*c);
                quote!(#c)
            }
            Lit::F64(f) => {
                // Bits, so NaN payloads, infinities and -0.0 survive exactly.
                let bits = Literal::u64_suffixed(f.to_bits());
                quote!(f64::from_bits(#bits))
            }
            Lit::Str(s) => {
                let s = Literal::string(s);
                quote!(#s)
            }
            Lit::String(s) => {
                let s = Literal::string(s);
                quote!(::std::string::String::from(#s))
            }
            Lit::Bytes(b) => {
                let b = Literal::byte_string(b);
                quote!(#b)
            }
            Lit::Option(None) => quote!(::core::option::Option::None),
            Lit::Option(Some(v)) => {
                let v = self.expr(v);
                quote!(::core::option::Option::Some(#v))
            }
            Lit::Tuple(items) => {
                let items: Vec<TokenStream> = items.iter().map(|a| self.expr(a)).collect();
                quote!((#(#items,)*))
            }
            Lit::Array(items) => {
                let items: Vec<TokenStream> = items.iter().map(|a| self.expr(a)).collect();
                quote!([#(#items),*])
            }
            Lit::Vec(items) => {
                let items: Vec<TokenStream> = items.iter().map(|a| self.expr(a)).collect();
                quote!(::std::vec![#(#items),*])
            }
            Lit::Ref(v) => {
                let v = self.expr(v);
                quote!(&#v)
            }
            Lit::Borrowed(v) => {
                let cow = self.path("Cow::Borrowed");
                let v = self.expr(v);
                quote!(#cow(#v))
            }
            Lit::Static(ty, init) => {
                let init = self.expr(init);
                let ty = self.ty(ty);
                self.hoist(ty, init)
            }
            Lit::U32Table(table) => {
                let n = Literal::usize_unsuffixed(table.len());
                let decode = self.path("u32_table");
                let bytes = Literal::byte_string(&rle_u32(table));
                self.hoist(quote!([u32; #n]), quote!(#decode::<#n>(#bytes)))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use retort::lit::ToLit;

    fn lower(lit: &Lit) -> (String, Vec<String>) {
        let mut l = Lowering::new(quote!(k));
        let expr = l.expr(lit).to_string();
        (expr, l.statics().iter().map(|s| s.to_string()).collect())
    }

    #[test]
    fn literals_keep_their_types_and_values() {
        assert_eq!(lower(&7u32.to_lit()).0, "7u32");
        assert_eq!(lower(&'\n'.to_lit()).0, "'\\n'");
        assert_eq!(lower(&"a\"b".to_lit()).0, "\"a\\\"b\"");
        assert_eq!(
            lower(&Some((1u8, true)).to_lit()).0,
            ":: core :: option :: Option :: Some ((1u8 , true ,))"
        );
        assert_eq!(
            lower(&(-0.0f64).to_lit()).0,
            "f64 :: from_bits (9223372036854775808u64)"
        );
        assert_eq!(
            lower(&Lit::Struct("Inst::Char", vec![("c", Lit::Char('x'))])).0,
            "k :: Inst :: Char { c : 'x' , }"
        );
    }

    #[test]
    fn negative_integers_are_negated_literals() {
        // rustc reads `- 9223372036854775808i64` as `i64::MIN` (the lint on
        // overflowing literals looks through the negation).
        assert_eq!(lower(&Lit::I64(-5)).0, "- 5i64");
        assert_eq!(lower(&Lit::I64(i64::MIN)).0, "- 9223372036854775808i64");
    }

    #[test]
    fn identical_statics_are_written_once() {
        let table = Lit::Static(
            Ty::Array(Box::new(Ty::Prim("u8")), 2),
            Box::new(Lit::Array(vec![1u8.to_lit(), 2u8.to_lit()])),
        );
        let lit = Lit::Tuple(vec![
            Lit::Ref(Box::new(table.clone())),
            Lit::Ref(Box::new(table)),
        ]);
        let (expr, statics) = lower(&lit);
        assert_eq!(
            statics,
            ["static RETORT_STATIC_0 : [u8 ; 2] = [1u8 , 2u8] ;"]
        );
        assert_eq!(expr, "(& RETORT_STATIC_0 , & RETORT_STATIC_0 ,)");
    }

    #[test]
    fn long_tables_are_run_length_encoded() {
        let (expr, statics) = lower(&Lit::U32Table(vec![0; 100]));
        assert_eq!(expr, "RETORT_STATIC_0");
        assert_eq!(
            statics,
            ["static RETORT_STATIC_0 : [u32 ; 100] = k :: u32_table :: < 100 > (b\"\\0d\") ;"]
        );
    }
}
