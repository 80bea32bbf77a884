//! A template's states as code: the `Machine` a generated module gives its
//! parser (see `retort_engine::machine`).
//!
//! Per parser state (watch set), two things are compiled in when the state
//! allows it:
//!
//! - **Literal search.** A state whose delimiters are all literal strings
//!   (no regex needed at commit) is searched by a function of its own: the
//!   bytes that can begin a literal found with `memchr`/`memchr2`/`memchr3`
//!   (or a `match` over the byte for more), then, at each such position, the
//!   partial-match holdback for this state's literals and the complete
//!   literals compared inline in the reference's priority order (longest,
//!   opens before closes, field name, entry) — the order resolved here, at
//!   build time.
//! - **The quick path's byte test.** A piece fed while everything is decided
//!   is all region text when no byte of it can begin a delimiter of the
//!   state and it does not end inside a leading loop (`\s*<tool_call>`):
//!   the test is emitted with the state's bytes as constants, whatever
//!   their number (the engine's own test takes states with one such byte
//!   only).
//!
//! States with regex delimiters keep the engine's automaton scanner for the
//! search (its tables are the IR's); `retort check` says which.

use proc_macro2::{Literal, TokenStream};
use quote::quote;
use retort::Template;
use retort::scan::stream::{ByteSet, WatchSet};

/// What one state compiles to, for `retort check` and the module's docs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatePlan {
    /// The state's name: the field whose region it is in, or `outside`.
    pub name: String,
    /// The state's literals are searched by generated code.
    pub literal_search: bool,
    /// The quick path's byte test is generated.
    pub quick_test: bool,
    /// Some delimiter of the state runs on the engine's backtracking path
    /// (back-references, lookarounds off the DFA plan).
    pub backtracking: bool,
}

impl StatePlan {
    /// How the compiled parser searches this state, in words.
    pub fn search(&self) -> &'static str {
        if self.literal_search {
            "literals compared by generated code"
        } else if self.backtracking {
            "the engine's backtracking matcher (falls back)"
        } else {
            "the engine's automaton scanner over the template's DFA tables"
        }
    }
}

/// The plan for every state of `t`, in watch-set order (the implicit
/// field has no state of its own: its text is what lies outside explicit
/// regions).
pub fn plan(t: &Template) -> Vec<StatePlan> {
    let implicit = t.implicit_field().map(|f| f.name.as_str());
    t.watch_sets()
        .iter()
        .enumerate()
        .filter(|(i, _)| {
            t.fields()
                .get(*i)
                .is_none_or(|f| Some(f.name.as_str()) != implicit)
        })
        .map(|(i, ws)| StatePlan {
            name: state_name(t, i),
            literal_search: ws.literals.is_some(),
            quick_test: quick_bytes(ws).is_some(),
            backtracking: ws
                .entries
                .iter()
                .any(|w| !t.delimiter(w.delim as usize).is_dfa()),
        })
        .collect()
}

/// The state's name as docs show it.
fn state_name(t: &Template, ws: usize) -> String {
    match t.fields().get(ws) {
        Some(f) => format!("inside `{}`", f.name),
        None => "outside explicit regions".to_owned(),
    }
}

/// The bytes that stop the quick path in `ws`, and its leading-loop bytes
/// (a piece ending in one may begin a delimiter), if the state has a test.
fn quick_bytes(ws: &WatchSet) -> Option<(&ByteSet, Option<&[bool; 128]>)> {
    if ws.entries.is_empty() {
        return None;
    }
    match &ws.literals {
        Some(set) => Some((&set.firsts, None)),
        None => {
            let loops = ws.loops.iter().any(Option::is_some);
            Some((&ws.stops, loops.then_some(&ws.loop_bytes)))
        }
    }
}

fn byte_lit(b: u8) -> Literal {
    Literal::byte_character(b)
}

/// An expression: the offset in `hay` of the first byte of `members`. A
/// streamed piece of a few bytes does not repay `memchr`'s set-up (its
/// searchers are chosen at run time, behind a call): short texts are read
/// by an inlined loop; longer ones by `memchr`/`memchr2`/`memchr3` up to
/// three bytes, by the loop beyond.
fn find_any(members: &[u8], hay: TokenStream, rt: &TokenStream) -> TokenStream {
    let bytes: Vec<Literal> = members.iter().copied().map(byte_lit).collect();
    let long = match bytes.as_slice() {
        [] => return quote!(::core::option::Option::None::<usize>),
        [a] => quote!(#rt::memchr::memchr(#a, hay)),
        [a, b] => quote!(#rt::memchr::memchr2(#a, #b, hay)),
        [a, b, c] => quote!(#rt::memchr::memchr3(#a, #b, #c, hay)),
        _ => quote!(hay.iter().position(|b| matches!(*b, #(#bytes)|*))),
    };
    quote! {{
        let hay: &[u8] = #hay;
        if hay.len() < 16 {
            hay.iter().position(|b| matches!(*b, #(#bytes)|*))
        } else {
            #long
        }
    }}
}

/// The search of one literal state.
fn literal_fn(t: &Template, wi: usize, ws: &WatchSet, rt: &TokenStream) -> Option<TokenStream> {
    let set = ws.literals.as_ref()?;
    // The reference's order at one position: longest first, then the
    // watch entry's kind (opens first), field name rank, entry.
    let mut lits: Vec<(usize, &[u8])> = set.lits.iter().map(|(k, l)| (*k, &l[..])).collect();
    lits.sort_by_key(|(k, l)| {
        let w = ws.entries[*k];
        (usize::MAX - l.len(), w.kind, w.name_rank, *k)
    });
    let name = quote::format_ident!("state_{}", wi);
    let doc = format!(
        " State {wi} ({}): its literals, in the reference's order: {}.",
        state_name(t, wi),
        lits.iter()
            .map(|(_, l)| format!("`{}`", String::from_utf8_lossy(l).escape_debug()))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let firsts = &set.firsts.members;
    let find = find_any(firsts, quote!(&bytes[i..]), rt);
    let longest = lits.iter().map(|(_, l)| l.len()).max().unwrap_or(0);
    let all: Vec<Literal> = lits.iter().map(|(_, l)| Literal::byte_string(l)).collect();
    let arms = lits.iter().map(|(k, l)| {
        let lit = Literal::byte_string(l);
        let len = l.len();
        quote! {
            if tail.starts_with(#lit) {
                return #rt::LiteralHit::Found { at, len: #len, entry: #k };
            }
        }
    });
    // A single literal long enough for `memmem` to pay off on long texts:
    // jump to its first occurrence (or to where a partial one could start).
    let skip = match lits.as_slice() {
        [(_, l)] if l.len() > 1 => {
            let lit = Literal::byte_string(l);
            let keep = l.len() - 1;
            quote! {
                if bytes.len() >= 64 {
                    i = match #rt::memchr::memmem::find(bytes, #lit) {
                        ::core::option::Option::Some(at) => at,
                        ::core::option::Option::None => bytes.len().saturating_sub(#keep),
                    };
                }
            }
        }
        _ => quote!(),
    };
    Some(quote! {
        #[doc = #doc]
        #[inline(always)]
        fn #name(bytes: &[u8], eos: bool) -> #rt::LiteralHit {
            let mut i = 0usize;
            #skip
            while let ::core::option::Option::Some(p) = #find {
                let at = i + p;
                let tail = &bytes[at..];
                // The text ends inside a literal: what follows decides.
                if !eos && tail.len() < #longest && #rt::is_partial_of_any(tail, &[#(#all),*]) {
                    return #rt::LiteralHit::Partial(at);
                }
                #(#arms)*
                i = at + 1;
            }
            #rt::LiteralHit::Nothing
        }
    })
}

/// The machine's items: the `Machine` type and its trait implementation.
/// `template` is an expression giving `&'static Template`.
pub fn generate(t: &Template, rt: &TokenStream, template: TokenStream) -> TokenStream {
    let mut fns = Vec::new();
    let mut literal_arms = Vec::new();
    let mut quick_arms = Vec::new();
    let mut quick_states = Vec::new();
    let implicit = t.implicit_field().map(|f| f.name.as_str());
    for (wi, ws) in t.watch_sets().iter().enumerate() {
        // The implicit field's text is what lies outside explicit regions:
        // the parser is never in a state of its own for it.
        if t.fields()
            .get(wi)
            .is_some_and(|f| Some(f.name.as_str()) == implicit)
        {
            continue;
        }
        if let Some(f) = literal_fn(t, wi, ws, rt) {
            fns.push(f);
            let name = quote::format_ident!("state_{}", wi);
            literal_arms.push(quote!(#wi => ::core::option::Option::Some(#name(bytes, eos)),));
        }
        if let Some((stops, loops)) = quick_bytes(ws) {
            let find = find_any(&stops.members, quote!(text), rt);
            let loop_test = loops.map(|l| {
                let bytes: Vec<Literal> = (0u8..128)
                    .filter(|b| l[*b as usize])
                    .map(byte_lit)
                    .collect();
                quote! {
                    // A piece ending in a leading loop (`\s*`) may begin a
                    // delimiter; so may one ending in a non-ASCII byte.
                    if last >= 0x80 || matches!(last, #(#bytes)|*) {
                        return ::core::option::Option::Some(false);
                    }
                }
            });
            quick_arms.push(quote! {
                #wi => {
                    let ::core::option::Option::Some(&last) = text.last() else {
                        return ::core::option::Option::Some(false);
                    };
                    let _ = last;
                    #loop_test
                    ::core::option::Option::Some(#find.is_none())
                }
            });
            quick_states.push(wi);
        }
    }
    let has_quick = if quick_states.is_empty() {
        quote!({
            let _ = ws;
            false
        })
    } else {
        quote!(matches!(ws, #(#quick_states)|*))
    };
    quote! {
        /// This template's states as code: the parser's machine, with the
        /// literal searches and quick-path tests compiled in (the rest runs
        /// on the engine over [`template`]).
        #[derive(Clone, Copy, Debug, Default)]
        pub struct Machine;

        #(#fns)*

        impl #rt::Machine<'static> for Machine {
            #[inline(always)]
            fn template(self) -> &'static #rt::Template {
                #template
            }

            #[inline(always)]
            fn find_literal(self, ws: usize, bytes: &[u8], eos: bool) -> ::core::option::Option<#rt::LiteralHit> {
                let _ = (bytes, eos);
                match ws {
                    #(#literal_arms)*
                    _ => ::core::option::Option::None,
                }
            }

            #[inline(always)]
            fn has_quick(self, ws: usize) -> bool {
                #has_quick
            }

            #[inline(always)]
            fn quick_takes(self, ws: usize, text: &[u8]) -> ::core::option::Option<bool> {
                let _ = text;
                match ws {
                    #(#quick_arms)*
                    _ => ::core::option::Option::None,
                }
            }
        }
    }
}
