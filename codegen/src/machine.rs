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
//!   build time. The machine says it searches the state
//!   (`Machine::searches`), and the parser then decides pieces there with
//!   this search alone while nothing else is pending: no delimiter in the
//!   piece, or only the start of one at its end (held), or none in the held
//!   text and the next piece together.
//! - **Leading loops before literals.** A state whose patterns are each a
//!   loop and literals (`\s*<tool_call>`, `\s*(?:<|im_end|>|<|endoftext|>)`,
//!   one loop class for all), beside plain literals, is a literal state in
//!   disguise: at each byte that can begin a literal, the literals are
//!   compared inline, and a looped literal's match starts where the run of
//!   loop characters before it starts (Unicode members included); a text
//!   ending in such a run, or inside a literal, is held from where the
//!   match would start. The machine answers for the state
//!   (`Machine::answers`), so the engine runs no automaton threads there.
//! - **The quick path's byte test.** A piece fed while everything is decided
//!   is all region text when no byte of it can begin a delimiter of the
//!   state and it does not end inside a leading loop (`\s*<tool_call>`):
//!   the test is emitted with the state's bytes as constants, whatever
//!   their number (the engine's own test takes states with one such byte
//!   only).
//!
//! - **Literals and loops in sequence.** A state whose one delimiter is a
//!   pattern such as `</function>\s*</tool_call>` or `</tool_call>\s*`
//!   (literals and greedy loops, each loop's characters excluding the
//!   next literal's first one) is searched by a function of its own too:
//!   at each byte that can begin the first literal, the pieces are
//!   compared in turn, each loop taking its whole run; the text ending
//!   inside a piece, or in a trailing loop's run, holds from the match's
//!   start. The machine answers for the state, as for leading loops.
//!
//! - **Starting literals.** A state whose delimiters' matches all begin
//!   at known literals, or at the start of a run of one loop's characters
//!   just before one (gpt-oss's tool-call header,
//!   `<\|channel\|>commentary to=functions\.(?P<name>[\w.-]+)[^<]*...`
//!   or `\s*to=functions\.…`), beside plain literals: the literals' first
//!   bytes found with `memchr`, the literals compared inline, and at each
//!   start they give, the automaton thread the scanner would have started
//!   there run alone over the text, in start order
//!   (`Machine::find_started`). Where the threads would overlap and read
//!   the text many times, or a start stays pending far back, the search
//!   declines and the scanner's threads take the state over.
//!
//! Other states with regex delimiters keep the engine's automaton threads
//! for the search, but with the state's automata as constants (a type per
//! state implementing `Automata`: the entry count, each entry's branches as
//! the template's static, its first bytes as a byte test), so that the
//! scanner's loop is compiled for the state; `retort check` says which
//! state runs what. A delimiter with named groups whose pattern allows it
//! has its groups read off a settled match by a generated function (see
//! `captures_fn`) instead of the backtracking matcher.

use crate::lower::Lowering;
use proc_macro2::{Literal, TokenStream};
use quote::quote;
use retort::Template;
use retort::lit::{Lit, ToLit, Ty};
use retort::pyre::{Class, SeqPiece};
use retort::scan::captures::{CapturePieceTable, CaptureTables};
use retort::scan::delimiter::{Delimiter, DelimiterSource, Matcher};
use retort::scan::stream::{ByteSet, WatchSet};
use retort::scan::table::DfaTable;

/// What one state compiles to, for `retort check` and the module's docs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatePlan {
    /// The state's name: the field whose region it is in, or `outside`.
    pub name: String,
    /// The state's literals are searched by generated code.
    pub literal_search: bool,
    /// The state's leading loops and literals are searched by generated
    /// code (see the module documentation).
    pub looped_search: bool,
    /// The state's one pattern, literals and loops in sequence, is
    /// searched by generated code (see the module documentation).
    pub sequence_search: bool,
    /// The state's matches all begin at known literals: generated code
    /// finds those and runs each one's automaton thread alone (see the
    /// module documentation).
    pub started_search: bool,
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
        } else if self.looped_search {
            "leading loops and literals compared by generated code"
        } else if self.sequence_search {
            "literals and loops in sequence compared by generated code"
        } else if self.started_search {
            "starting literals found by generated code, each start's automaton run alone"
        } else if self.backtracking {
            "the engine's backtracking matcher (falls back)"
        } else {
            "the engine's automaton threads, their loop compiled with this state's automata as constants"
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
            looped_search: Looped::of(t, ws).is_some(),
            sequence_search: sequence_of(t, ws).is_some(),
            started_search: started_of(t, ws).is_some(),
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

/// One literal of a state whose patterns are leading loops and literals.
#[derive(Clone, Debug)]
struct LoopedLit {
    /// The watch entry.
    entry: usize,
    /// The literal's bytes.
    bytes: Vec<u8>,
    /// Whether the loop may stand before it (a pattern's literal) or not (a
    /// plain literal delimiter).
    looped: bool,
}

/// A state whose delimiters are plain literals and patterns of the form
/// `C*(?:l1|l2|...)` with one loop class `C` for all.
#[derive(Clone, Debug)]
struct Looped {
    class: Class,
    lits: Vec<LoopedLit>,
}

impl Looped {
    /// The state's shape, if it has this one. Conservative: each condition
    /// keeps the decision at one byte position the same as the automaton
    /// threads' (see the checks in `tests/machine.rs`).
    fn of(t: &Template, ws: &WatchSet) -> Option<Looped> {
        if ws.literals.is_some() || ws.entries.is_empty() {
            return None;
        }
        let mut class: Option<Class> = None;
        let mut lits = Vec::new();
        for (k, w) in ws.entries.iter().enumerate() {
            let d = t.delimiter(w.delim as usize);
            let Matcher::Dfa(branches) = &d.matcher else {
                return None;
            };
            if d.needs_regex_at_commit || d.may_match_empty || d.needs_history {
                return None;
            }
            match &d.source {
                DelimiterSource::Literals(list) => {
                    if list.iter().any(String::is_empty) {
                        return None;
                    }
                    lits.extend(list.iter().map(|l| LoopedLit {
                        entry: k,
                        bytes: l.as_bytes().to_vec(),
                        looped: false,
                    }));
                }
                DelimiterSource::Pattern(_) => {
                    let [branch] = &branches[..] else {
                        return None;
                    };
                    if branch.guard.is_some() || d.regex.group_count() != 0 {
                        return None;
                    }
                    let shape = d.regex.looped_literals()?;
                    // Within one pattern the first alternative that matches
                    // wins, not the longest: with no literal a prefix of
                    // another, the two agree and a match cannot grow.
                    let prefixed = shape.literals.iter().any(|a| {
                        shape
                            .literals
                            .iter()
                            .any(|b| a.len() < b.len() && b.starts_with(a.as_str()))
                    });
                    if prefixed {
                        return None;
                    }
                    match &class {
                        None => class = Some(shape.class.clone()),
                        Some(c) if *c == shape.class => {}
                        Some(_) => return None,
                    }
                    lits.extend(shape.literals.iter().map(|l| LoopedLit {
                        entry: k,
                        bytes: l.as_bytes().to_vec(),
                        looped: true,
                    }));
                }
            }
        }
        let class = class?;
        // The run before a literal never reaches into another literal's
        // first character, and the class is small enough to write out.
        let first_in_loop = lits.iter().any(|l| {
            std::str::from_utf8(&l.bytes)
                .ok()
                .and_then(|s| s.chars().next())
                .is_none_or(|c| class.contains(c))
        });
        if first_in_loop || class.ranges().len() > 64 {
            return None;
        }
        Some(Looped { class, lits })
    }
}

/// The search of one state of leading loops and literals (see
/// [`Looped`]).
fn looped_fn(t: &Template, wi: usize, ws: &WatchSet, rt: &TokenStream) -> Option<TokenStream> {
    let shape = Looped::of(t, ws)?;
    // At one position: the longest first, then the watch entry's kind
    // (opens first), field name rank, entry — for each kind of literal.
    let key = |l: &LoopedLit| {
        let w = ws.entries[l.entry];
        (usize::MAX - l.bytes.len(), w.kind, w.name_rank, l.entry)
    };
    let mut looped: Vec<&LoopedLit> = shape.lits.iter().filter(|l| l.looped).collect();
    let mut plain: Vec<&LoopedLit> = shape.lits.iter().filter(|l| !l.looped).collect();
    looped.sort_by_key(|l| key(l));
    plain.sort_by_key(|l| key(l));
    let name = quote::format_ident!("state_{}", wi);
    let class_name = quote::format_ident!("LOOP_{}", wi);
    let show = |ls: &[&LoopedLit]| {
        ls.iter()
            .map(|l| format!("`{}`", String::from_utf8_lossy(&l.bytes).escape_debug()))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let doc = format!(
        " State {wi} ({}): literals after a run of `{:?}`: {}; plain literals: {}.",
        state_name(t, wi),
        shape.class,
        show(&looped),
        if plain.is_empty() {
            "none".to_owned()
        } else {
            show(&plain)
        },
    );
    let mut firsts = [false; 256];
    for l in &shape.lits {
        firsts[l.bytes[0] as usize] = true;
    }
    let firsts: Vec<u8> = (0..=255u8).filter(|b| firsts[*b as usize]).collect();
    let find = find_any(&firsts, quote!(&bytes[i..]), rt);
    let longest = shape.lits.iter().map(|l| l.bytes.len()).max().unwrap_or(0);
    let looped_all: Vec<Literal> = looped
        .iter()
        .map(|l| Literal::byte_string(&l.bytes))
        .collect();
    let plain_all: Vec<Literal> = plain
        .iter()
        .map(|l| Literal::byte_string(&l.bytes))
        .collect();
    // The best complete literal of each kind at `at`: (length of the
    // literal, entry, kind, name rank).
    let candidate = |ls: &[&LoopedLit]| {
        let arms = ls.iter().map(|l| {
            let lit = Literal::byte_string(&l.bytes);
            let len = l.bytes.len();
            let w = ws.entries[l.entry];
            let entry = l.entry;
            let kind = w.kind as u8;
            let rank = w.name_rank;
            quote! {
                if tail.starts_with(#lit) {
                    ::core::option::Option::Some((#len, #entry, #kind, #rank))
                } else
            }
        });
        quote!(#(#arms)* { ::core::option::Option::None })
    };
    let best_looped = candidate(&looped);
    // Where the text ends inside a literal, and the best complete literal
    // at `at`, as (start, length, entry, kind, name rank).
    let (partial, best) = if plain.is_empty() {
        (
            quote! {
                if !eos && tail.len() < #longest && #rt::is_partial_of_any(tail, &[#(#looped_all),*]) {
                    hold = run();
                }
            },
            quote! {
                let looped: ::core::option::Option<(usize, usize, u8, u16)> = #best_looped;
                let best = looped.map(|l| {
                    let r = run();
                    (r, at - r + l.0, l.1, l.2, l.3)
                });
            },
        )
    } else {
        let best_plain = candidate(&plain);
        (
            quote! {
                if !eos && tail.len() < #longest {
                    if #rt::is_partial_of_any(tail, &[#(#looped_all),*]) {
                        hold = run();
                    } else if #rt::is_partial_of_any(tail, &[#(#plain_all),*]) {
                        hold = at;
                    }
                }
            },
            quote! {
                let looped: ::core::option::Option<(usize, usize, u8, u16)> = #best_looped;
                let plain: ::core::option::Option<(usize, usize, u8, u16)> = #best_plain;
                // Leftmost first; at one start the longest, then opens
                // before closes, field name, entry.
                let best = match (looped, plain) {
                    (::core::option::Option::Some(l), ::core::option::Option::Some(q)) => {
                        let r = run();
                        let l = (r, at - r + l.0, l.1, l.2, l.3);
                        let q = (at, q.0, q.1, q.2, q.3);
                        if (l.0, usize::MAX - l.1, l.3, l.4, l.2) < (q.0, usize::MAX - q.1, q.3, q.4, q.2) {
                            ::core::option::Option::Some(l)
                        } else {
                            ::core::option::Option::Some(q)
                        }
                    }
                    (::core::option::Option::Some(l), ::core::option::Option::None) => {
                        let r = run();
                        ::core::option::Option::Some((r, at - r + l.0, l.1, l.2, l.3))
                    }
                    (::core::option::Option::None, ::core::option::Option::Some(q)) => {
                        ::core::option::Option::Some((at, q.0, q.1, q.2, q.3))
                    }
                    (::core::option::Option::None, ::core::option::Option::None) => ::core::option::Option::None,
                };
            },
        )
    };
    let class_static = class_static(&class_name, &shape.class, rt);
    Some(quote! {
        /// The leading loop's characters of the state below.
        #class_static

        #[doc = #doc]
        #[inline(always)]
        fn #name(bytes: &[u8], eos: bool) -> #rt::LiteralHit {
            let mut i = 0usize;
            while let ::core::option::Option::Some(p) = #find {
                let at = i + p;
                let tail = &bytes[at..];
                let run = || #rt::loop_run_start(bytes, at, &#class_name);
                // Where a literal the text ends inside would start: the
                // scan holds from there.
                let mut hold = usize::MAX;
                #partial
                #best
                match best {
                    ::core::option::Option::Some((start, len, entry, _, _)) if start < hold => {
                        return #rt::LiteralHit::Found { at: start, len, entry };
                    }
                    _ if hold != usize::MAX => return #rt::LiteralHit::Partial(hold),
                    _ => {}
                }
                i = at + 1;
            }
            // A text that ends in the loop may still begin a looped literal.
            if !eos {
                let run = #rt::loop_run_start(bytes, bytes.len(), &#class_name);
                if run < bytes.len() {
                    return #rt::LiteralHit::Partial(run);
                }
            }
            #rt::LiteralHit::Nothing
        }
    })
}

/// The class as a `static` of generated code.
fn class_static(name: &proc_macro2::Ident, class: &Class, rt: &TokenStream) -> TokenStream {
    let ranges = class.ranges().iter().map(|&(a, b)| quote!((#a, #b)));
    let [a0, a1] = class.ascii;
    quote! {
        static #name: #rt::Class = #rt::Class {
            ranges: #rt::Cow::Borrowed(&[#(#ranges),*]),
            ascii: [#a0, #a1],
        };
    }
}

/// The pieces of a state whose only delimiter is a pattern of literals and
/// loops in sequence (`</function>\s*</tool_call>`, `</tool_call>\s*`; see
/// `Regex::literal_sequence`), when it is not a leading loop and literals
/// already (those are [`Looped`] states). Conservative, as [`Looped::of`]:
/// a match at a position is then made in one way only, and the state's
/// decision is the first position where the pattern matches or the text
/// ends inside a match (`tests/machine.rs` holds it to the automaton
/// threads).
fn sequence_of(t: &Template, ws: &WatchSet) -> Option<Vec<SeqPiece>> {
    let [w] = &ws.entries[..] else {
        return None;
    };
    if ws.literals.is_some() || Looped::of(t, ws).is_some() {
        return None;
    }
    let d = t.delimiter(w.delim as usize);
    let Matcher::Dfa(branches) = &d.matcher else {
        return None;
    };
    let [branch] = &branches[..] else {
        return None;
    };
    if d.needs_regex_at_commit
        || d.may_match_empty
        || d.needs_history
        || branch.guard.is_some()
        || d.regex.group_count() != 0
        || !matches!(d.source, DelimiterSource::Pattern(_))
    {
        return None;
    }
    let pieces = d.regex.literal_sequence()?.pieces;
    // Some loop after a literal (else the pattern is a literal, or a
    // leading loop and a literal), and classes small enough to write out.
    let inner_loop = pieces
        .iter()
        .skip(1)
        .any(|p| matches!(p, SeqPiece::Loop(_)));
    let small = pieces.iter().all(|p| match p {
        SeqPiece::Loop(c) => c.ranges().len() <= 64,
        SeqPiece::Lit(_) => true,
    });
    (inner_loop && small).then_some(pieces)
}

/// The search of a state of one literal sequence (see [`sequence_of`]).
fn sequence_fn(t: &Template, wi: usize, ws: &WatchSet, rt: &TokenStream) -> Option<TokenStream> {
    let pieces = sequence_of(t, ws)?;
    let name = quote::format_ident!("state_{}", wi);
    let mut statics = Vec::new();
    let mut steps = Vec::new();
    let mut shown = Vec::new();
    let mut first_lit: Option<&str> = None;
    let mut lead_class = None;
    for (k, piece) in pieces.iter().enumerate() {
        match piece {
            SeqPiece::Lit(l) => {
                shown.push(format!("`{}`", l.escape_debug()));
                // Positions are found by the first literal's first byte.
                first_lit.get_or_insert(l.as_str());
                let len = l.len();
                let lit = Literal::byte_string(l.as_bytes());
                steps.push(quote! {
                    let tail = &bytes[j..];
                    if tail.starts_with(#lit) {
                        j += #len;
                    } else if !eos && tail.len() < #len && #lit.starts_with(tail) {
                        return #rt::LiteralHit::Partial(start);
                    } else {
                        break 'attempt;
                    }
                });
            }
            SeqPiece::Loop(class) => {
                shown.push(format!("a run of `{class:?}`"));
                let cname = quote::format_ident!("SEQ_{}_{}", wi, k);
                statics.push(class_static(&cname, class, rt));
                if k == 0 {
                    lead_class = Some(cname);
                    continue;
                }
                let trailing = k + 1 == pieces.len();
                let end_test = trailing.then(|| {
                    quote! {
                        // The match may still grow while the run goes on.
                        if j == bytes.len() && !eos {
                            return #rt::LiteralHit::Partial(start);
                        }
                    }
                });
                steps.push(quote! {
                    j = #rt::loop_run_end(bytes, j, &#cname);
                    #end_test
                });
            }
        }
    }
    let find = find_any(&[first_lit?.as_bytes()[0]], quote!(&bytes[i..]), rt);
    let start = match &lead_class {
        Some(c) => quote!(#rt::loop_run_start(bytes, at, &#c)),
        None => quote!(at),
    };
    let tail_hold = lead_class.as_ref().map(|c| {
        quote! {
            // A text ending in the leading loop may still begin a match.
            if !eos {
                let run = #rt::loop_run_start(bytes, bytes.len(), &#c);
                if run < bytes.len() {
                    return #rt::LiteralHit::Partial(run);
                }
            }
        }
    });
    let doc = format!(
        " State {wi} ({}): one pattern of literals and loops in sequence: {}.",
        state_name(t, wi),
        shown.join(", ")
    );
    Some(quote! {
        #(#statics)*

        #[doc = #doc]
        #[inline(always)]
        fn #name(bytes: &[u8], eos: bool) -> #rt::LiteralHit {
            let mut i = 0usize;
            while let ::core::option::Option::Some(p) = #find {
                let at = i + p;
                let start = #start;
                let mut j = at;
                'attempt: {
                    #(#steps)*
                    return #rt::LiteralHit::Found { at: start, len: j - start, entry: 0usize };
                }
                i = at + 1;
            }
            #tail_hold
            #rt::LiteralHit::Nothing
        }
    })
}

/// The byte test `matches!(b, ...)` for the members of `set`, as ranges.
fn byte_test(set: &[bool; 256]) -> TokenStream {
    let mut arms = Vec::new();
    let mut b = 0usize;
    while b < 256 {
        if !set[b] {
            b += 1;
            continue;
        }
        let lo = b;
        while b + 1 < 256 && set[b + 1] {
            b += 1;
        }
        let (l, h) = (byte_lit(lo as u8), byte_lit(b as u8));
        arms.push(if lo == b { quote!(#l) } else { quote!(#l..=#h) });
        b += 1;
    }
    if arms.is_empty() {
        quote!(false)
    } else {
        quote!(matches!(b, #(#arms)|*))
    }
}

/// An expression for a delimiter's automaton branches: the template's own
/// static for them (the lowering shares statics with equal contents).
fn branches_place(
    branches: &[retort::scan::delimiter::Branch],
    lowering: &mut Lowering,
) -> Option<TokenStream> {
    let slice = Lit::static_slice(
        Ty::Item("Branch"),
        branches.iter().map(ToLit::to_lit).collect(),
    );
    let Lit::Borrowed(place) = slice else {
        return None;
    };
    Some(lowering.expr(&place))
}

/// One literal at which a match of a starting-literal state's delimiter
/// can begin (see [`started_of`]).
#[derive(Clone, Debug)]
struct StartLit {
    /// The watch entry.
    entry: usize,
    /// The literal's bytes (never empty; the first one ASCII).
    bytes: Vec<u8>,
    /// The loop whose run may stand before it.
    class: Option<Class>,
}

/// The starting literals of a state whose delimiters' matches all begin at
/// one (see the module documentation), when no simpler search applies.
/// Conservative: each delimiter an automaton of one branch with no
/// lookbehind, no empty match and no history; named groups only where
/// they can be read off the match (no lookaround, so the automaton's end
/// is the match's); every literal's first byte ASCII and outside every
/// loop's class, so that a run of loop characters never holds another
/// literal's start, and starts come in the order their literals are
/// found.
fn started_of(t: &Template, ws: &WatchSet) -> Option<Vec<StartLit>> {
    if ws.literals.is_some()
        || ws.entries.is_empty()
        || Looped::of(t, ws).is_some()
        || sequence_of(t, ws).is_some()
    {
        return None;
    }
    let mut lits = Vec::new();
    for (k, w) in ws.entries.iter().enumerate() {
        let d = t.delimiter(w.delim as usize);
        let Matcher::Dfa(branches) = &d.matcher else {
            return None;
        };
        let [branch] = &branches[..] else {
            return None;
        };
        if branch.guard.is_some() || d.may_match_empty || d.needs_history {
            return None;
        }
        if d.needs_regex_at_commit && d.regex.capture_plan().is_none() {
            return None;
        }
        match &d.source {
            DelimiterSource::Literals(list) => {
                for l in list {
                    if l.is_empty() {
                        return None;
                    }
                    lits.push(StartLit {
                        entry: k,
                        bytes: l.as_bytes().to_vec(),
                        class: None,
                    });
                }
            }
            DelimiterSource::Pattern(_) => {
                for sl in d.regex.start_literals()? {
                    lits.push(StartLit {
                        entry: k,
                        bytes: sl.literal.into_bytes(),
                        class: sl.class,
                    });
                }
            }
        }
    }
    let classes: Vec<&Class> = lits.iter().filter_map(|l| l.class.as_ref()).collect();
    let clear = lits.iter().all(|l| {
        let b = l.bytes[0];
        b < 0x80 && !classes.iter().any(|c| c.contains(char::from(b)))
    });
    let small = classes.iter().all(|c| c.ranges().len() <= 64);
    (clear && small).then_some(lits)
}

/// The search of a starting-literal state (see [`started_of`]).
fn started_fn(
    t: &Template,
    wi: usize,
    ws: &WatchSet,
    rt: &TokenStream,
    lowering: &mut Lowering,
) -> Option<TokenStream> {
    let lits = started_of(t, ws)?;
    let name = quote::format_ident!("started_{}", wi);
    let held = quote::format_ident!("held_{}", wi);
    let table_fn = quote::format_ident!("table_{}", wi);
    // Each entry's automaton: the template's own static for its branch.
    let mut run_arms = Vec::new();
    let mut first_place: Option<TokenStream> = None;
    for (k, w) in ws.entries.iter().enumerate() {
        let d = t.delimiter(w.delim as usize);
        let Matcher::Dfa(branches) = &d.matcher else {
            return None;
        };
        let place = branches_place(branches, lowering)?;
        first_place.get_or_insert_with(|| place.clone());
        run_arms.push(quote!(#k => &(#place)[0].table,));
    }
    let first_place = first_place?;
    let keys = ws.entries.iter().map(|w| {
        let kind = w.kind as u8;
        let rank = w.name_rank;
        quote!((#kind, #rank))
    });
    // The loop classes, each a static once.
    let mut class_list: Vec<&Class> = Vec::new();
    for l in &lits {
        if let Some(c) = &l.class
            && !class_list.contains(&c)
        {
            class_list.push(c);
        }
    }
    let class_ident = |c: &Class| {
        let i = class_list.iter().position(|x| *x == c).unwrap_or(0);
        quote::format_ident!("START_LOOP_{}_{}", wi, i)
    };
    let statics: Vec<TokenStream> = class_list
        .iter()
        .map(|c| class_static(&class_ident(c), c, rt))
        .collect();
    let mut firsts = [false; 256];
    for l in &lits {
        firsts[l.bytes[0] as usize] = true;
    }
    let firsts: Vec<u8> = (0..=255u8).filter(|b| firsts[*b as usize]).collect();
    let find = find_any(&firsts, quote!(&bytes[i..]), rt);
    let n = lits.len();
    let check = |l: &StartLit| {
        let lit = Literal::byte_string(&l.bytes);
        let entry = l.entry;
        let start = match &l.class {
            Some(c) => {
                let ident = class_ident(c);
                quote!(#rt::loop_run_start(bytes, at, &#ident))
            }
            None => quote!(at),
        };
        quote! {
            if tail.starts_with(#lit) || (!eos && #lit.starts_with(tail)) {
                starts[n] = (#start, #entry);
                n += 1;
            }
        }
    };
    // The literals grouped by their first byte, which the search stopped
    // at: only that group's are compared (the order of the starts found
    // does not matter, `decide_starts` sorts them).
    let arms = firsts.iter().map(|&b| {
        let group = lits.iter().filter(|l| l.bytes[0] == b).map(check);
        let b = Literal::u8_suffixed(b);
        quote!(#b => { #(#group)* })
    });
    let checks = quote! {
        match tail[0] {
            #(#arms)*
            _ => {}
        }
    };
    // A text that ends in a loop's run may still begin a match there.
    let trailing = class_list.iter().map(|c| {
        let ident = class_ident(c);
        let entries: Vec<usize> = {
            let mut e: Vec<usize> = lits
                .iter()
                .filter(|l| l.class.as_ref() == Some(*c))
                .map(|l| l.entry)
                .collect();
            e.dedup();
            e
        };
        quote! {
            let r = #rt::loop_run_start(bytes, bytes.len(), &#ident);
            if r < bytes.len() {
                #(
                    starts[n] = (r, #entries);
                    n += 1;
                )*
            }
        }
    });
    let show = lits
        .iter()
        .map(|l| {
            let lit = format!("`{}`", String::from_utf8_lossy(&l.bytes).escape_debug());
            match &l.class {
                Some(c) => format!("{lit} after a run of `{c:?}`"),
                None => lit,
            }
        })
        .collect::<Vec<_>>()
        .join(", ");
    let doc = format!(
        " State {wi} ({}): matches begin at {show}; at each such start, in order, the automaton thread the scanner would start there, run alone.",
        state_name(t, wi),
    );
    let count = ws.entries.len();
    let looped = lits.iter().filter(|l| l.class.is_some()).count();
    // The starts found so far, in start order: a decision ends the search,
    // and so does running past the work bound.
    let settle = quote! {
        if n > 0 {
            let hit = #rt::decide_starts(&mut starts[..n], &KEYS, resumed, bytes.len(), &mut run);
            if steps.get() > budget {
                return ::core::option::Option::None;
            }
            if let ::core::option::Option::Some(hit) = hit {
                return decided(hit);
            }
        }
    };
    let trailing = (looped > 0).then(|| {
        quote! {
            if !eos {
                let mut starts = [(0usize, 0usize); #looped];
                let mut n = 0usize;
                #(#trailing)*
                #settle
            }
        }
    });
    Some(quote! {
        #(#statics)*

        /// Each entry's automaton in this state.
        #[inline(always)]
        fn #table_fn(k: usize) -> &'static #rt::DfaTable {
            match k {
                #(#run_arms)*
                _ => &(#first_place)[0].table,
            }
        }

        /// Whether the search below, over `bytes` (held from `origin`,
        /// not the end of the text), holds them at once: a thread left
        /// pending there is pending still (see `Machine::held_started`).
        #[inline]
        fn #held(bytes: &[u8], memo: &mut #rt::StartMemo, origin: usize) -> bool {
            bytes.len() <= 4096 && memo.still_pending(#table_fn, bytes, origin, false, &mut 0)
        }

        #[doc = #doc]
        #[inline]
        fn #name(
            bytes: &[u8],
            before: ::core::option::Option<u8>,
            eos: bool,
            memo: &mut #rt::StartMemo,
            origin: usize,
        ) -> ::core::option::Option<#rt::LiteralHit> {
            const KEYS: [(u8, u16); #count] = [#(#keys),*];
            // Re-reading is bounded: past this many steps the threads
            // take over, and so they do when a start stays pending far back
            // (each later piece would read it again).
            let budget = 4 * bytes.len() + 256;
            let table = #table_fn;
            let decided = |hit: #rt::LiteralHit| match hit {
                #rt::LiteralHit::Partial(s) if bytes.len() - s > 4096 => ::core::option::Option::None,
                hit => ::core::option::Option::Some(hit),
            };
            // A thread left pending at the hold, continued over the new
            // text, that is pending still: the text stays held.
            let mut read = 0usize;
            if memo.still_pending(table, bytes, origin, eos, &mut read) {
                return decided(#rt::LiteralHit::Partial(0));
            }
            // Where the threads kept at a hold began, if they did in this
            // text (see `decide_starts`).
            let resumed = memo.kept_from(origin);
            let steps = ::core::cell::Cell::new(read);
            let mut run = |k: usize, s: usize| {
                let prev = if s == 0 { before } else { ::core::option::Option::Some(bytes[s - 1]) };
                let mut read = steps.get();
                let result = memo.run(table(k), k, bytes, origin, s, prev, eos, &mut read);
                steps.set(read);
                result
            };
            let mut i = 0usize;
            while let ::core::option::Option::Some(p) = #find {
                let at = i + p;
                let tail = &bytes[at..];
                let mut starts = [(0usize, 0usize); #n];
                let mut n = 0usize;
                #checks
                #settle
                i = at + 1;
            }
            #trailing
            ::core::option::Option::Some(#rt::LiteralHit::Nothing)
        }
    })
}

/// The automata of a state that the engine's thread scanner searches, as
/// constants (`retort_engine::scan::stream::Automata`): the entry count,
/// each entry's branches (the template's own static), its first bytes as a
/// byte test. The scanner's loop, inlined with these, is compiled for the
/// state.
fn automata_impl(
    t: &Template,
    wi: usize,
    ws: &WatchSet,
    rt: &TokenStream,
    lowering: &mut Lowering,
) -> Option<TokenStream> {
    if ws.entries.is_empty() || ws.literals.is_some() {
        return None;
    }
    let count = ws.entries.len();
    let mut branch_arms = Vec::new();
    let mut begin_arms = Vec::new();
    let mut shown = Vec::new();
    for (k, w) in ws.entries.iter().enumerate() {
        let d = t.delimiter(w.delim as usize);
        shown.push(code_span(&match &d.source {
            DelimiterSource::Literals(l) => format!("{l:?}"),
            DelimiterSource::Pattern(p) => format!("/{}/", p.replace('\n', "\\n")),
        }));
        let Matcher::Dfa(branches) = &d.matcher else {
            continue;
        };
        let place = branches_place(branches, lowering)?;
        branch_arms.push(quote!(#k => ::core::option::Option::Some(#place),));
        let test = byte_test(&d.first_bytes);
        begin_arms.push(quote!(#k => #test,));
    }
    let name = quote::format_ident!("Automata{}", wi);
    let doc = format!(
        " State {wi} ({}): its automata for the scanner's loop, as constants: {}.",
        state_name(t, wi),
        shown.join(", ")
    );
    Some(quote! {
        #[doc = #doc]
        #[derive(Clone, Copy)]
        struct #name;

        impl #rt::Automata<'static> for #name {
            #[inline(always)]
            fn count(self) -> usize {
                #count
            }

            #[inline(always)]
            fn branches(self, k: usize) -> ::core::option::Option<&'static [#rt::Branch]> {
                match k {
                    #(#branch_arms)*
                    _ => ::core::option::Option::None,
                }
            }

            #[inline(always)]
            fn may_begin(self, k: usize, b: u8) -> bool {
                let _ = b;
                match k {
                    #(#begin_arms)*
                    _ => false,
                }
            }
        }
    })
}

/// Whether the groups of delimiter `d`'s matches are read by generated
/// code (a `groups_N` function in the module) rather than by the
/// backtracking matcher.
pub fn captures_generated(d: &Delimiter) -> bool {
    matches!(d.matcher, Matcher::Dfa(_))
        && d.needs_regex_at_commit
        && CaptureTables::build(&d.regex).is_some()
}

/// The function that reads the groups of delimiter `di`'s settled match
/// off its pieces (see `retort_engine::scan::captures`): per top-level
/// alternative, its pieces in turn — literals compared inline, the rest
/// each by its own leftmost-first automaton — recording where each group
/// opens and closes; when they do not reach the match's end, a test that
/// the alternative matches at all (the last needs none) says whether to try
/// the next. Anything unexpected answers `None`, and the backtracker
/// decides.
fn captures_fn(
    di: usize,
    d: &Delimiter,
    rt: &TokenStream,
    lowering: &mut Lowering,
) -> Option<TokenStream> {
    if !matches!(d.matcher, Matcher::Dfa(_)) || !d.needs_regex_at_commit {
        return None;
    }
    let tables = CaptureTables::build(&d.regex)?;
    let names = d.regex.group_names();
    let name = quote::format_ident!("groups_{}", di);
    let mut statics = Vec::new();
    let mut table = |suffix: String, t: &DfaTable| {
        let ident = quote::format_ident!("PIECES_{}_{}", di, suffix);
        let expr = lowering.expr(&t.to_lit());
        statics.push(quote!(static #ident: #rt::DfaTable = #expr;));
        ident
    };
    let last = tables.branches.len() - 1;
    let mut branches = Vec::new();
    for (k, b) in tables.branches.iter().enumerate() {
        let mut steps = Vec::new();
        let mut groups = Vec::new();
        for (j, p) in b.pieces.iter().enumerate() {
            steps.push(match p {
                CapturePieceTable::Literal(text) => {
                    let lit = Literal::byte_string(text.as_bytes());
                    let n = text.len();
                    quote! {
                        if !bytes.get(at..end)?.starts_with(#lit) {
                            return ::core::option::Option::None;
                        }
                        let at = at + #n;
                    }
                }
                CapturePieceTable::Match(t) => {
                    let ident = table(format!("{k}_{j}"), t);
                    quote!(let at = #rt::leftmost_first_end(&#ident, bytes, at, end)?;)
                }
                CapturePieceTable::Open(g) => {
                    let v = quote::format_ident!("open_{}", g);
                    groups.push(*g);
                    quote!(let #v = at;)
                }
                CapturePieceTable::Close(g) => {
                    let v = quote::format_ident!("close_{}", g);
                    quote!(let #v = at;)
                }
            });
        }
        let out = names.iter().filter(|(_, g)| groups.contains(g)).map(|(n, g)| {
            let a = quote::format_ident!("open_{}", g);
            let z = quote::format_ident!("close_{}", g);
            quote!((::std::string::String::from(#n), ::std::string::String::from(hay.get(#a..#z)?)))
        });
        // The pieces of alternative `k`, in a closure: any piece that finds
        // nothing, or an end elsewhere than the match's, gives `None`.
        let attempt = quote! {
            (|| -> ::core::option::Option<::std::vec::Vec<(::std::string::String, ::std::string::String)>> {
                let at = start;
                #(#steps)*
                if at != end {
                    return ::core::option::Option::None;
                }
                ::core::option::Option::Some(::std::vec![#(#out),*])
            })()
        };
        branches.push(if k < last {
            // Pieces that reach the match's end are a path through this
            // alternative, so it is the backtracker's; when they cannot
            // tell, an alternative that matches at all leaves the groups to
            // the backtracker, and one that does not passes to the next.
            let ident = table(format!("{k}"), &b.whole);
            quote! {
                let groups = #attempt;
                if groups.is_some() {
                    return groups;
                }
                if #rt::leftmost_first_end(&#ident, bytes, start, end).is_some() {
                    return ::core::option::Option::None;
                }
            }
        } else {
            quote!(#attempt)
        });
    }
    let doc = format!(
        " The groups of `{}` read off a settled match, piece by piece.",
        d.regex.pattern().replace('\n', "\\n").replace('\r', "\\r")
    );
    Some(quote! {
        #(#statics)*

        #[doc = #doc]
        fn #name(
            hay: &str,
            start: usize,
            end: usize,
        ) -> ::core::option::Option<::std::vec::Vec<(::std::string::String, ::std::string::String)>> {
            let bytes = hay.as_bytes();
            #(#branches)*
        }
    })
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
    // What every literal begins with (all of a single one): when it is
    // long enough for `memmem` to pay off on long texts, jump to its first
    // occurrence (or to where a partial one could start), as no literal
    // can begin before. (gpt-oss's content closes at `<|end|>` or
    // `<|return|>`: `<|` passes over the prose's `<` that `memchr` stops at.)
    let common =
        lits.iter()
            .skip(1)
            .fold(lits.first().map_or(&[][..], |(_, l)| *l), |c, (_, l)| {
                let n = c.iter().zip(l.iter()).take_while(|(a, b)| a == b).count();
                &c[..n]
            });
    let skip = match common {
        l if l.len() > 1 => {
            let lit = Literal::byte_string(l);
            let keep = l.len() - 1;
            // The searcher is built once (its set-up costs about as much as
            // a search of a few kilobytes), on first use.
            let find = quote! {
                static FINDER: ::std::sync::LazyLock<#rt::memchr::memmem::Finder<'static>> =
                    ::std::sync::LazyLock::new(|| #rt::memchr::memmem::Finder::new(#lit));
                match FINDER.find(bytes) {
                    ::core::option::Option::Some(at) => at,
                    ::core::option::Option::None => bytes.len().saturating_sub(#keep),
                }
            };
            // A prefix of several literals jumps out of line: inlined with
            // the rest of such a state's search into the parser's quick
            // path, it cost `reasoning-gpt-oss` stream4 7 % more
            // instructions; a single literal's jump out of line cost
            // `reasoning-qwen3` stream4 2 %.
            if lits.len() == 1 {
                quote! {
                    if bytes.len() >= 64 {
                        i = { #find };
                    }
                }
            } else {
                quote! {
                    if bytes.len() >= 64 {
                        #[inline(never)]
                        fn skip(bytes: &[u8]) -> usize {
                            #find
                        }
                        i = skip(bytes);
                    }
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

/// An expression: whether `ws` is one of `states`.
fn one_of(states: &[usize]) -> TokenStream {
    if states.is_empty() {
        quote!({
            let _ = ws;
            false
        })
    } else {
        quote!(matches!(ws, #(#states)|*))
    }
}

/// The machine's items: the `Machine` type and its trait implementation.
/// `template` is an expression giving `&'static Template`.
pub fn generate(
    t: &Template,
    rt: &TokenStream,
    template: TokenStream,
    lowering: &mut Lowering,
) -> TokenStream {
    let mut fns = Vec::new();
    let mut advance_arms = Vec::new();
    let mut capture_arms = Vec::new();
    for (di, d) in t.delimiters().iter().enumerate() {
        if let Some(f) = captures_fn(di, d, rt, lowering) {
            fns.push(f);
            let name = quote::format_ident!("groups_{}", di);
            capture_arms.push(quote!(#di => #name(hay, start, end),));
        }
    }
    let mut literal_arms = Vec::new();
    let mut literal_states = Vec::new();
    let mut answered = Vec::new();
    let mut started_arms = Vec::new();
    let mut held_arms = Vec::new();
    let mut quick_arms = Vec::new();
    let mut byte_arms = Vec::new();
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
            literal_states.push(wi);
        } else if let Some(f) = looped_fn(t, wi, ws, rt).or_else(|| sequence_fn(t, wi, ws, rt)) {
            fns.push(f);
            let name = quote::format_ident!("state_{}", wi);
            literal_arms.push(quote!(#wi => ::core::option::Option::Some(#name(bytes, eos)),));
            literal_states.push(wi);
            answered.push(wi);
        } else {
            if let Some(f) = started_fn(t, wi, ws, rt, lowering) {
                fns.push(f);
                let name = quote::format_ident!("started_{}", wi);
                started_arms.push(quote!(#wi => #name(bytes, before, eos, memo, origin),));
                let held = quote::format_ident!("held_{}", wi);
                held_arms.push(quote!(#wi => #held(bytes, memo, origin),));
                answered.push(wi);
            }
            // (A started state's threads take over where its search
            // declines.)
            if let Some(f) = automata_impl(t, wi, ws, rt, lowering) {
                fns.push(f);
                let name = quote::format_ident!("Automata{}", wi);
                advance_arms.push(quote! {
                    #wi => {
                        scan.advance_automata(args, #name);
                        true
                    }
                });
            }
        }
        if let Some((stops, loops)) = quick_bytes(ws) {
            let members: Vec<Literal> = stops.members.iter().copied().map(byte_lit).collect();
            let lacks = quote!(#rt::lacks_bytes(text, [#(#members),*]));
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
            quick_arms.push((
                wi,
                quote! {
                    {
                        let ::core::option::Option::Some(&last) = text.last() else {
                            return ::core::option::Option::Some(false);
                        };
                        let _ = last;
                        #loop_test
                        ::core::option::Option::Some(#lacks)
                    }
                },
            ));
            // The same test for a one-byte piece (an ASCII byte): the byte
            // is neither a stop nor (with leading loops) a loop byte.
            let bytes: Vec<Literal> = (0u8..128)
                .filter(|&b| stops.members.contains(&b) || loops.is_some_and(|l| l[b as usize]))
                .map(byte_lit)
                .collect();
            let test = match bytes.is_empty() {
                true => quote!(b < 0x80),
                false => quote!(b < 0x80 && !matches!(b, #(#bytes)|*)),
            };
            byte_arms.push((wi, quote!(::core::option::Option::Some(#test))));
            quick_states.push(wi);
        }
    }
    // Without a region that streams its parameters, the parser's tests for
    // them are constants.
    let streams_params = t
        .fields()
        .iter()
        .any(|f| f.content.param_stream().is_some());
    let quick_arms = merged_arms(quick_arms);
    let byte_arms = merged_arms(byte_arms);
    let has_quick = one_of(&quick_states);
    let searches = one_of(&literal_states);
    let answers = one_of(&answered);
    // States whose search holds a start get the test of a held start (the
    // trait's default answers `false`).
    let held_started = (!held_arms.is_empty()).then(|| {
        quote! {
            #[inline(always)]
            fn held_started(self, ws: usize, bytes: &[u8], memo: &mut #rt::StartMemo, origin: usize) -> bool {
                match ws {
                    #(#held_arms)*
                    _ => false,
                }
            }
            #[inline(always)]
            fn holds_started(self) -> bool {
                true
            }
        }
    });
    quote! {
        /// This template's states as code: the parser's machine, with the
        /// literal searches and quick-path tests compiled in (the rest runs
        /// on the engine over [`template`]).
        #[derive(Clone, Copy, Debug, Default)]
        pub struct Machine;

        #(#fns)*

        impl #rt::HasRegions for Machine {
            type Regions = Regions;
        }

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
            fn find_started(
                self,
                ws: usize,
                bytes: &[u8],
                before: ::core::option::Option<u8>,
                eos: bool,
                memo: &mut #rt::StartMemo,
                origin: usize,
            ) -> ::core::option::Option<#rt::LiteralHit> {
                let _ = (bytes, before, eos, &memo, origin);
                match ws {
                    #(#started_arms)*
                    _ => ::core::option::Option::None,
                }
            }

            #held_started

            #[inline(always)]
            fn answers(self, ws: usize) -> bool {
                #answers
            }

            #[inline(always)]
            fn searches(self, ws: usize) -> bool {
                #searches
            }

            #[inline(always)]
            fn streams_params(self) -> bool {
                #streams_params
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

            #[inline(always)]
            fn quick_takes_byte(self, ws: usize, b: u8) -> ::core::option::Option<bool> {
                let _ = b;
                match ws {
                    #(#byte_arms,)*
                    _ => ::core::option::Option::None,
                }
            }

            #[inline(always)]
            fn advance(self, ws: usize, scan: &mut #rt::StreamScan, args: #rt::Advance<'_>) -> bool {
                let _ = (&scan, &args);
                match ws {
                    #(#advance_arms)*
                    _ => false,
                }
            }

            #[inline]
            fn captures(
                self,
                delim: usize,
                hay: &str,
                start: usize,
                end: usize,
            ) -> ::core::option::Option<::std::vec::Vec<(::std::string::String, ::std::string::String)>> {
                let _ = (hay, start, end);
                match delim {
                    #(#capture_arms)*
                    _ => ::core::option::Option::None,
                }
            }
        }
    }
}

/// Match arms for per-state bodies, states with the same body sharing one
/// arm (`0usize | 2usize => ...`), in the order of each body's first state.
/// The quick test runs on every streamed piece: one arm for the states that
/// stop at the same bytes lets the compiler test the state with a compare
/// or two instead of a jump table.
fn merged_arms(arms: Vec<(usize, TokenStream)>) -> Vec<TokenStream> {
    let mut groups: Vec<(String, Vec<usize>, TokenStream)> = Vec::new();
    for (wi, body) in arms {
        let key = body.to_string();
        match groups.iter_mut().find(|(k, _, _)| *k == key) {
            Some((_, states, _)) => states.push(wi),
            None => groups.push((key, vec![wi], body)),
        }
    }
    groups
        .into_iter()
        .map(|(_, states, body)| quote!(#(#states)|* => #body))
        .collect()
}

/// `text` as a Markdown code span, so that rustdoc reads a pattern's
/// brackets (`[A-Za-z_][\w.]*`) as text, not as links: fenced by one more
/// backtick than its longest run of them, and padded when it begins or
/// ends with one.
fn code_span(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{text}{pad}{fence}")
}

#[cfg(test)]
mod tests {
    use super::{code_span, merged_arms};
    use quote::quote;

    #[test]
    fn code_spans_fence_past_the_backticks_inside() {
        assert_eq!(code_span("/[a-z][\\w.]*/"), "`/[a-z][\\w.]*/`");
        assert_eq!(code_span("a`b"), "``a`b``");
        assert_eq!(code_span("`x``"), "``` `x`` ```");
    }

    #[test]
    fn states_with_one_body_share_an_arm() {
        let a = quote!({ 1 });
        let b = quote!({ 2 });
        let arms = merged_arms(vec![
            (0, a.clone()),
            (1, b.clone()),
            (3, a.clone()),
            (4, b),
            (5, quote!({ 3 })),
        ]);
        let arms: Vec<String> = arms.iter().map(ToString::to_string).collect();
        assert_eq!(
            arms,
            [
                quote!(0usize | 3usize => { 1 }).to_string(),
                quote!(1usize | 4usize => { 2 }).to_string(),
                quote!(5usize => { 3 }).to_string(),
            ]
        );
    }
}
