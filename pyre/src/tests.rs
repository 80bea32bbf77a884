//! Unit tests. Expected values were read off the reference (`regex`
//! 2026.11.15 with `regex.DOTALL`); the differential test in
//! `tests/pyre_conformance.rs` covers far more.

use super::*;
use regex_automata::dfa::{Automaton, StartKind, dense};
use regex_automata::nfa::thompson::{self, WhichCaptures};
use regex_automata::{Anchored, Input, MatchKind};

fn re(p: &str) -> Regex {
    Regex::new(p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

fn spans(c: &Captures) -> Vec<Option<(usize, usize)>> {
    (0..c.len()).map(|i| c.get(i)).collect()
}

fn search(p: &str, hay: &str) -> Option<Vec<Option<(usize, usize)>>> {
    re(p).search(hay, 0).expect("budget").map(|c| spans(&c))
}

fn partial(p: &str, hay: &str, pos: usize) -> Option<((usize, usize), bool)> {
    re(p)
        .search_partial(hay, pos)
        .expect("budget")
        .map(|m| ((m.captures.start(), m.captures.end()), m.partial))
}

fn finditer(p: &str, hay: &str) -> Vec<(usize, usize)> {
    re(p)
        .find_iter(hay)
        .map(|c| c.map(|c| (c.start(), c.end())).expect("budget"))
        .collect()
}

#[test]
fn regex_is_shareable() {
    fn check<T: Clone + std::fmt::Debug + Send + Sync>() {}
    check::<Regex>();
    check::<Captures>();
}

#[test]
fn template_patterns() {
    let r = re(r"<tool_call>\s*<function=(?P<name>\w+)>");
    let c = r
        .search("x<tool_call>\n<function=get_weather>", 0)
        .unwrap()
        .unwrap();
    assert_eq!((c.start(), c.end()), (1, 35));
    assert_eq!(c.get(r.group_index("name").unwrap()), Some((23, 34)));
    assert_eq!(r.group_names(), &[("name".to_owned(), 1)]);

    let r = re(r"<parameter=(?P<key>\w+)>\s*(?P<value>.*?)\s*</parameter>");
    let c = r
        .search("<parameter=city>\n Paris \n</parameter>", 0)
        .unwrap()
        .unwrap();
    assert_eq!(c.get(1), Some((11, 15)));
    assert_eq!(c.get(2), Some((18, 23)));

    assert_eq!(
        search(r"<(?P<key>\w+)>\s*(?P<value>.*?)\s*</\1>", "<a> x </b></a>"),
        Some(vec![Some((0, 14)), Some((1, 2)), Some((4, 10))])
    );
    assert_eq!(
        search(r"(?<=[{,])(\w+):", "{a:1,b:2}"),
        Some(vec![Some((1, 3)), Some((1, 2))])
    );
    assert_eq!(
        search(r"\{(\w+(?:\.\w+)*)\}", "x {a.b.c} y"),
        Some(vec![Some((2, 9)), Some((3, 8))])
    );
    assert_eq!(search(r"(?:^|<think>\s*)", "abc"), Some(vec![Some((0, 0))]));
    assert_eq!(
        re(r"(?:^|<think>\s*)")
            .search("a<think> b", 1)
            .unwrap()
            .map(|c| (c.start(), c.end())),
        Some((1, 9))
    );
    assert_eq!(
        search(r"\n?</response>", "a\n</response>"),
        Some(vec![Some((1, 13))])
    );
    assert_eq!(
        search(
            r"(?:<\|message_model\|>)?[^<]*<\|content_text\|>",
            "xy<|content_text|>"
        ),
        Some(vec![Some((0, 18))])
    );
    assert_eq!(
        search(r"(?=<call>)|<end>", "a<end><call>"),
        Some(vec![Some((1, 6))])
    );
    assert_eq!(
        search(r"(?<=^)<t>|(?<=\n)<t>", "a<t>\n<t>"),
        Some(vec![Some((5, 8))])
    );
    assert_eq!(
        search(r"</call>\s*(?:</calls>)?", "</call> </calls>"),
        Some(vec![Some((0, 16))])
    );
    assert_eq!(search(r"\s*<eot>|\Z", "ab"), Some(vec![Some((2, 2))]));
    assert_eq!(search(r"$", "ab\n"), Some(vec![Some((2, 2))]));
    assert_eq!(
        search(r"\s*(?:<\|im_end\|>|<\|endoftext\|>)", "x  <|endoftext|>"),
        Some(vec![Some((1, 16))])
    );
    assert_eq!(
        search(
            r"<\|channel\|>commentary to=functions\.(?P<name>\w+).*?<\|message\|>",
            "<|channel|>commentary to=functions.f <|constrain|>json<|message|>{}"
        ),
        Some(vec![Some((0, 65)), Some((35, 36))])
    );
}

#[test]
fn loop_captures_follow_the_module() {
    // Read off regex 2026.11.15.
    assert_eq!(
        search(r"(a*)*", "aab"),
        Some(vec![Some((0, 2)), Some((2, 2))])
    );
    assert_eq!(
        search(r"(a*)+", "b"),
        Some(vec![Some((0, 0)), Some((0, 0))])
    );
    assert_eq!(
        search(r"(a|)*b", "aab"),
        Some(vec![Some((0, 3)), Some((2, 2))])
    );
    assert_eq!(
        search(r"(|a)*", "aa"),
        Some(vec![Some((0, 0)), Some((0, 0))])
    );
    assert_eq!(search(r"(?:x*)*?y", "xxy"), Some(vec![Some((0, 3))]));
    assert_eq!(
        search(r"(a?)*?b", "aab"),
        Some(vec![Some((0, 3)), Some((1, 2))])
    );
    assert_eq!(search(r"(a*)*?", "aa"), Some(vec![Some((0, 0)), None]));
    assert_eq!(
        search(r"(?:(a)|b)*", "ab"),
        Some(vec![Some((0, 2)), Some((0, 1))])
    );
    assert_eq!(
        search(r"(|a){2}c", "ac"),
        Some(vec![Some((0, 2)), Some((0, 1))])
    );
    assert_eq!(search(r"(?:(a)??)+", "aa"), Some(vec![Some((0, 0)), None]));
    assert_eq!(
        search(r"(a(?=b)|)*", "ab"),
        Some(vec![Some((0, 1)), Some((1, 1))])
    );
}

#[test]
fn lookbehind_runs_backwards() {
    assert_eq!(
        search(r"(?<=(a+))b", "aab"),
        Some(vec![Some((2, 3)), Some((0, 2))])
    );
    assert_eq!(
        search(r"(?<=(a+?))b", "aab"),
        Some(vec![Some((2, 3)), Some((1, 2))])
    );
    assert_eq!(
        search(r"(?<=a(.*))z", "abcz"),
        Some(vec![Some((3, 4)), Some((1, 3))])
    );
    assert_eq!(
        search(r"(?<=(a)(b|bc))d", "abcd"),
        Some(vec![Some((3, 4)), Some((0, 1)), Some((1, 3))])
    );
    // Text before `pos` is visible to lookbehind; `^` is not moved by `pos`.
    let r = re(r"(?<=a)b");
    assert_eq!(r.search("ab", 1).unwrap().map(|c| c.start()), Some(1));
    assert!(re(r"^b").search("ab", 1).unwrap().is_none());
    assert!(re(r"\bb").search("ab", 1).unwrap().is_none());
}

#[test]
fn flags_and_classes() {
    assert!(search(r"(?i)k", "\u{212A}").is_some());
    assert!(search(r"(?i)ß", "SS").is_none());
    assert!(search(r"(?i)ß", "ẞ").is_some());
    assert!(search(r"(?i)[^k]", "\u{212A}").is_none());
    assert!(search(r"(?i)\p{Lu}", "a").is_some());
    assert!(search(r"a(?i)b", "AB").is_none());
    assert!(search(r"(a(?i)b)c", "aBC").is_none());
    assert!(search(r"(?a)\w", "é").is_none());
    assert!(search(r"\w(?a)", "é").is_none());
    assert!(
        search(r"[^\s\S]", "x").is_some(),
        "the module reads [^\\s\\S] as any character"
    );
    assert_eq!(search(r"(?m)^b$", "a\nb\nc"), Some(vec![Some((2, 3))]));
    assert_eq!(search(r"a$", "a\n"), Some(vec![Some((0, 1))]));
    assert!(search(r"a\Z", "a\n").is_none());
    assert_eq!(search(r"x{,}", "xx"), Some(vec![Some((0, 2))]));
    assert_eq!(search(r"x{a}", "x{a}"), Some(vec![Some((0, 4))]));
    assert_eq!(search(r"a(?#c)*", "aa"), Some(vec![Some((0, 2))]));
    assert_eq!(search(r"\141\x41\u00e9", "aAé"), Some(vec![Some((0, 4))]));
}

#[test]
fn errors_and_declined_constructs() {
    let e = Regex::new("(a").unwrap_err();
    assert_eq!((e.message.as_str(), e.offset), ("missing )", 2));
    assert_eq!(e.to_string(), "missing ) at position 2");
    for (p, what) in [
        ("a{e<=1}", "fuzzy"),
        ("(?R)", "recursion"),
        ("(a)(?(1)b)", "conditional"),
        ("(?|a)", "branch reset"),
        (r"\Ka", "\\K"),
    ] {
        let e = Regex::new(p).unwrap_err();
        assert!(
            e.message.starts_with("unsupported: ") && e.message.contains(what),
            "{p}: {e}"
        );
    }
}

#[test]
fn finditer_empty_matches() {
    assert_eq!(finditer(r"a*", "baaa"), vec![(0, 0), (1, 4), (4, 4)]);
    assert_eq!(
        finditer(r"(?=a)|a", "aab"),
        vec![(0, 0), (0, 1), (1, 1), (1, 2)]
    );
    assert_eq!(finditer(r"a|", "aa"), vec![(0, 1), (1, 2), (2, 2)]);
    assert_eq!(
        finditer(r"a*|b", "ab"),
        vec![(0, 1), (1, 1), (1, 2), (2, 2)]
    );
    assert_eq!(finditer(r"\s*<eot>|\Z", "x <eot>"), vec![(1, 7), (7, 7)]);
    assert_eq!(finditer(r"$", "a\n"), vec![(1, 1), (2, 2)]);
}

#[test]
fn partial_matching() {
    assert_eq!(partial("abc", "xxab", 0), Some(((2, 4), true)));
    assert_eq!(partial("abc", "xxabd", 0), Some(((5, 5), true)));
    assert_eq!(partial("a.*c|b", "a b", 0), Some(((2, 3), false)));
    assert_eq!(partial(r"a(?=b)", "a", 0), Some(((0, 1), true)));
    assert_eq!(partial(r"a(?!b)", "a", 0), Some(((0, 1), false)));
    assert_eq!(partial(r"a\B", "a", 0), Some(((1, 1), true)));
    assert_eq!(partial(r"\s*<eot>|\Z", "abc <e", 0), Some(((6, 6), false)));
    assert_eq!(partial(r"^x", "abc", 0), None);
    // The module's lazy-repeat quirk: a lazy single-character repeat followed
    // by a literal reports a partial match whenever the literal is not found.
    assert_eq!(
        partial(
            r"\[TOOL_CALLS\](?P<name>[^\[]+?)\[ARGS\]",
            "[TOOL_CALLS]get[x]",
            0
        ),
        Some(((0, 18), true))
    );
    assert_eq!(partial(r"a\w*?xyz", "ab-", 0), Some(((0, 3), true)));
    // Groups that had closed when the partial match was found.
    let m = re(r"(<)(\w+)(>)")
        .search_partial("<abc", 0)
        .unwrap()
        .unwrap();
    assert_eq!(
        spans(&m.captures),
        vec![Some((0, 4)), Some((0, 1)), None, None]
    );
}

#[test]
fn match_at_hit_end() {
    let r = re(r"<tool_call>\s*<function=(?P<name>\w+)>");
    let a = r.match_at("<tool_call>\n<func", 0, false).unwrap();
    assert!(a.captures.is_none() && a.hit_end);
    let a = r.match_at("<tool_cell>", 0, false).unwrap();
    assert!(a.captures.is_none() && !a.hit_end);
    let a = r.match_at("<tool_call><function=f>", 0, false).unwrap();
    assert_eq!(a.captures.map(|c| c.end()), Some(23));
    assert!(!a.hit_end);
    let r = re(r"</call>\s*(?:</calls>)?");
    let a = r.match_at("</call> ", 0, false).unwrap();
    assert!(
        a.captures.is_some() && a.hit_end,
        "more whitespace or </calls> could follow"
    );
    let a = re(r"\s*<eot>|\Z").match_at("ab", 2, false).unwrap();
    assert!(a.captures.is_some() && a.hit_end);
    let a = re(r"a$").match_at("a\n", 0, false).unwrap();
    assert!(a.captures.is_some() && a.hit_end);
    let a = re(r"a$").match_at("a\nb", 0, false).unwrap();
    assert!(a.captures.is_none() && !a.hit_end);
    let a = re(r"a\b").match_at("a", 0, false).unwrap();
    assert!(a.captures.is_some() && a.hit_end);
    let a = re(r"a(?!b)").match_at("a", 0, false).unwrap();
    assert!(a.captures.is_some() && a.hit_end);
    let a = re(r"a(?!b)").match_at("a", 0, true).unwrap();
    assert!(a.captures.is_some() && !a.hit_end);
}

#[test]
fn no_panics_and_budget() {
    // Exponential without memoization; the failure memo keeps it linear.
    let r = re(r"(x+x+)+y");
    let hay = "x".repeat(5000);
    assert!(r.search(&hay, 0).unwrap().is_none());
    // With a backreference the memo also keys on the group's span.
    let r = re(r"(x+x+)+\1y");
    assert!(r.search(&"x".repeat(40), 0).unwrap().is_none());
    // Too many distinct states even so: the budget stops it.
    let r = re(r"(x*)*\1\1y");
    assert!(matches!(
        r.search(&"x".repeat(120), 0),
        Err(MatchError::Budget)
    ));
    // Offsets that are not char boundaries are harmless.
    let r = re(r"é");
    assert_eq!(r.search("aé", 2).unwrap(), None);
    assert!(r.match_at("aé", 2, true).unwrap().captures.is_none());
    for p in ["(?<=a|bc)d", r"(?i)(?<=ǅ)x", r"\b(?<!é)", "(?=(?<=é))"] {
        let r = re(p);
        for hay in ["éé", "aǅxd", "bcd", ""] {
            for pos in 0..=hay.len() + 1 {
                let _ = r.search(hay, pos);
                let _ = r.search_partial(hay, pos);
                let _ = r.match_at(hay, pos, false);
            }
        }
    }
}

fn build_dfa(hir: &regex_syntax::hir::Hir, kind: MatchKind) -> dense::DFA<Vec<u32>> {
    let nfa = thompson::Compiler::new()
        .configure(thompson::Config::new().which_captures(WhichCaptures::None))
        .build_from_hir(hir)
        .expect("nfa");
    dense::Builder::new()
        .configure(
            dense::Config::new()
                .match_kind(kind)
                .start_kind(StartKind::Anchored),
        )
        .build_from_nfa(&nfa)
        .expect("dfa")
}

/// Whether some match of the guard DFA ends exactly at `s`.
fn guard_holds(dfa: &dense::DFA<Vec<u32>>, hay: &str, s: usize) -> bool {
    (0..=s).filter(|&t| hay.is_char_boundary(t)).any(|t| {
        let input = Input::new(hay).range(t..s).anchored(Anchored::Yes);
        matches!(dfa.try_search_fwd(&input), Ok(Some(m)) if m.offset() == s)
    })
}

/// Checks the plan against `match_at` on every start of every haystack.
fn check_plan(p: &str, hays: &[&str]) {
    let r = re(p);
    let plan = r
        .dfa_plan()
        .unwrap_or_else(|u| panic!("{p}: no plan: {u:?}"));
    let branches: Vec<_> = plan
        .branches
        .iter()
        .map(|b| {
            (
                b.guard.as_ref().map(|g| build_dfa(g, MatchKind::All)),
                build_dfa(&b.body, MatchKind::LeftmostFirst),
                b.lookahead,
            )
        })
        .collect();
    for hay in hays {
        for s in (0..=hay.len()).filter(|&s| hay.is_char_boundary(s)) {
            let want = r.match_at(hay, s, true).unwrap().captures.map(|c| c.end());
            let mut got = None;
            for (guard, body, lookahead) in &branches {
                if guard.as_ref().is_some_and(|g| !guard_holds(g, hay, s)) {
                    continue;
                }
                let input = Input::new(*hay).range(s..).anchored(Anchored::Yes);
                if let Some(m) = body.try_search_fwd(&input).expect("search") {
                    got = Some((m.offset(), *lookahead));
                    break;
                }
            }
            match (want, got) {
                (None, None) => {}
                (Some(w), Some((g, false))) => assert_eq!(w, g, "{p:?} on {hay:?} at {s}"),
                (Some(w), Some((g, true))) => {
                    assert!(g >= w, "{p:?} on {hay:?} at {s}: dfa {g} < {w}")
                }
                _ => panic!("{p:?} on {hay:?} at {s}: match_at {want:?}, plan {got:?}"),
            }
        }
    }
}

/// A few haystacks over `alphabet` (deterministic).
fn hays(alphabet: &[&str], n: usize) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    for len in 1..=n {
        for _ in 0..6 {
            let mut s = String::new();
            for _ in 0..len {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                s.push_str(alphabet[(seed % alphabet.len() as u64) as usize]);
            }
            out.push(s);
        }
    }
    out
}

#[test]
fn dfa_plan_matches_backtracker() {
    let cases: &[(&str, &[&str])] = &[
        (
            r"<tool_call>\s*<function=(?P<name>\w+)>",
            &["<tool_call>", "<function=", "ab", " ", "\n", ">", "é"],
        ),
        (
            r"<parameter=(?P<key>\w+)>\s*(?P<value>.*?)\s*</parameter>",
            &["<parameter=", "k", ">", " ", "v", "</parameter>"],
        ),
        (
            r"<\|channel\|>commentary to=functions\.(?P<name>\w+).*?<\|message\|>",
            &[
                "<|channel|>commentary to=functions.",
                "f",
                " ",
                "<|message|>",
            ],
        ),
        (r"(?:^|<think>\s*)", &["<think>", " ", "a", "\n"]),
        (r"\n?</response>", &["\n", "</response>", "a"]),
        (
            r"(?:<\|message_model\|>)?[^<]*<\|content_text\|>",
            &["<|message_model|>", "a", "<", "<|content_text|>"],
        ),
        (
            r"\s*(?:<\|im_end\|>|<\|endoftext\|>)",
            &[" ", "<|im_end|>", "<|endoftext|>", "x"],
        ),
        (r"(?=<call>)|<end>", &["<call>", "<end>", "x", "<"]),
        (r"(?<=^)<t>|(?<=\n)<t>", &["<t>", "\n", "a"]),
        (
            r"</call>\s*(?:</calls>)?",
            &["</call>", " ", "</calls>", "x"],
        ),
        (r"\s*<eot>|\Z", &[" ", "<eot>", "a", "\n"]),
        (r"$", &["a", "\n"]),
        (r"a$|b", &["a", "b", "\n"]),
        (r"(?<=[{,])(\w+):", &["{", ",", "a", ":", " "]),
        (r"\{(\w+(?:\.\w+)*)\}", &["{", "}", "a", "."]),
        (
            r"(?<=\])(?=\s*(?:<\|end\|>|$))",
            &["]", " ", "<|end|>", "\n", "x"],
        ),
        (
            r"\[TOOL_CALLS\](?P<name>[^\[]+?)(?:\[CALL_ID\](?P<id>\w+))?\[ARGS\]",
            &["[TOOL_CALLS]", "f", "[CALL_ID]", "1", "[ARGS]", "["],
        ),
        (r"(?m)^a$", &["a", "\n", "b"]),
        (r"(?a)\bab\b", &["a", "b", " ", "é"]),
        (r"(a|ab)(c|bcd)(d*)", &["a", "b", "c", "d"]),
        (r"(?:a|ab|b){0,3}c", &["a", "b", "c"]),
        (r"(a*)*b|(?:x*)*?y", &["a", "b", "x", "y"]),
        (r"(a|)*b|(|a)+c", &["a", "b", "c"]),
        (
            r"(?i)straße|ǅx",
            &["s", "t", "r", "a", "ß", "e", "ẞ", "Ǆ", "ǆ", "x"],
        ),
        (r"[^\s\S]|\d{2,3}?x", &["1", "x", "٣", " "]),
    ];
    for (p, alphabet) in cases {
        let hays = hays(alphabet, 5);
        let refs: Vec<&str> = hays.iter().map(String::as_str).collect();
        check_plan(p, &refs);
    }
}

#[test]
fn dfa_plan_declines() {
    for (p, what) in [
        (r"(a)\1", "backreference"),
        (r"a(?=b)c", "lookahead"),
        (r"a(?!b)c", "negative"),
        (r"a(?!b|cd)", "negative lookahead that is not a fixed run"),
        (r"(?>a)", "atomic"),
        (r"a++", "possessive"),
        (r"\ba", "word boundary"),
        (r"a$b", "`$`"),
        (r"a(?<=a)", "lookbehind"),
    ] {
        let u = re(p).dfa_plan().unwrap_err();
        assert!(u.construct.contains(what), "{p}: {u:?}");
    }
    let plan = re(r"(?<=^)<t>|(?<=\n)<t>").dfa_plan().unwrap();
    assert_eq!(plan.branches.len(), 2);
    assert!(
        plan.branches
            .iter()
            .all(|b| b.guard.is_some() && !b.lookahead)
    );
    let plan = re(r"(?=<call>)|<end>").dfa_plan().unwrap();
    assert_eq!(plan.branches.len(), 1);
    assert!(plan.branches[0].lookahead);
    // A trailing negative lookahead of a fixed run is read as text.
    let plan = re(r"END(?![A-Z]\d)").dfa_plan().unwrap();
    assert!(plan.branches[0].lookahead);
}

/// `hit_end == false` promises the result cannot change whatever follows:
/// check that against every continuation from a small set.
#[test]
fn hit_end_is_sound() {
    let patterns = [
        r"<tool_call>\s*<function=(?P<name>\w+)>",
        r"<parameter=(?P<key>\w+)>\s*(?P<value>.*?)\s*</parameter>",
        r"(?:^|<think>\s*)",
        r"\n?</response>",
        r"(?:<\|message_model\|>)?[^<]*<\|content_text\|>",
        r"(?=<call>)|<end>",
        r"(?<=^)<t>|(?<=\n)<t>",
        r"</call>\s*(?:</calls>)?",
        r"\s*<eot>|\Z",
        r"$",
        r"(?<=\])(?=\s*(?:<\|end\|>|$))",
        r"\[TOOL_CALLS\](?P<name>[^\[]+?)\[ARGS\]",
        r"a\b|a\B|(?m)b$|c(?!d)|e(?<=e)",
        r"(a+)+\1|x{2,3}?y",
    ];
    let texts = [
        "",
        "<",
        "<tool_call>",
        "<tool_call>\n<function=f",
        "<parameter=k> v </param",
        "<t",
        "\n<t>",
        "</call> ",
        "a",
        "b",
        "c",
        "e",
        "]",
        "] <|e",
        "[TOOL_CALLS]f[AR",
        "aa",
        "xx",
        "x <eot",
    ];
    let suffixes = [
        "",
        "a",
        "b",
        " ",
        "\n",
        ">",
        "d",
        "<",
        "</calls>",
        "<|end|>",
        "[ARGS]",
        "y",
        "</parameter>",
        "<function=g>",
    ];
    for p in patterns {
        let r = re(p);
        for t in texts {
            for start in (0..=t.len()).filter(|&s| t.is_char_boundary(s)) {
                let a = r.match_at(t, start, false).unwrap();
                if a.hit_end {
                    continue;
                }
                let base = a.captures.as_ref().map(spans);
                for suf in suffixes {
                    let longer = format!("{t}{suf}");
                    let b = r.match_at(&longer, start, true).unwrap();
                    assert_eq!(
                        b.captures.as_ref().map(spans),
                        base,
                        "{p:?} on {t:?}+{suf:?} at {start}"
                    );
                }
            }
        }
    }
}

/// Patterns covering every kind of instruction, class and scan: literals,
/// classes (Unicode, case-insensitive, negated), lazy/greedy/possessive and
/// counted repeats (unrolled and looped), lookarounds, backreferences,
/// atomic groups, anchors and named groups.
const STATIC_PATTERNS: &[&str] = &[
    "abc",
    "a.c",
    "[a-z]+",
    r"[^\[]+?",
    r"\w+",
    r"\d{2,4}\s*\S",
    "(?i)straße",
    "(?i)[a-zé]+x",
    r"(?ia)k\w",
    r"\p{Greek}+",
    r"\p{Lu}\w*",
    "a*?b",
    "a+?",
    "x*+y",
    "a{2,5}",
    "(ab){3}",
    "(?:ab){2,}?c",
    "(?:ab|cd){1100}",
    "(?:a|bc)*d",
    "(a|b)?c",
    r"(?<=[{,])(\w+):",
    "(?<!a)b",
    "(?<=ab+)c",
    "foo(?=bar)",
    "foo(?!bar)",
    r"(\w)\1",
    r"(?i)(\w+) \1",
    r"(a)(?<=\1b)",
    "(?>a+)b",
    "a++b",
    "^abc$",
    r"(?m)^x$",
    r"\bword\b",
    r"(?a)\w+\B",
    r"\mfoo\M",
    r"\Aa\Z",
    r"\Gx",
    "(*FAIL)|z",
    r"(?P<key>\w+)=(?P<value>[^;]*)",
    r"<tool_call>\s*<function=(?P<name>\w+)>",
    r"\[TOOL_CALLS\](?P<name>[^\[]+?)\[ARGS\]",
    r"<parameter=(?P<key>\w+)>\s*(?P<value>.*?)\s*</parameter>",
    r"(?P<a>x)|(?P<a>y)",
    "",
];

fn static_hays() -> Vec<String> {
    let mut out: Vec<String> = [
        "",
        "abc",
        "xxabcxx",
        "aab",
        "a",
        "Straße STRASSE strasse",
        "{a:1,b:2}",
        "foo foobar fooba",
        "ΑΒΓ abc Δ",
        "abab cd abababc",
        "word words sword",
        "x\ny\nx",
        "<tool_call>\n<function=get_weather>",
        "<tool_call>\n<funct",
        "[TOOL_CALLS]get[x]",
        "[TOOL_CALLS]get[ARGS]{}",
        "key=val;k2=",
        "aaaab xxy xxxxz",
        "12 345 6789x",
        "kK\u{212A}k_ Ki",
        "aa bb c) abc c",
        "<parameter=city>\n Paris \n</parameter>",
        "<parameter=city>\n Par",
        "y x",
    ]
    .map(str::to_owned)
    .to_vec();
    out.push("abcd".repeat(600));
    out.push(format!("{}ab", "abcd".repeat(600)));
    out
}

/// A regex running a leaked copy of `r`'s program through `from_static`.
fn static_copy(r: &Regex) -> Regex {
    let prog: &'static Program = Box::leak(Box::new(r.program().clone()));
    let names: Vec<(&str, usize)> = r
        .group_names()
        .iter()
        .map(|(n, i)| (n.as_str(), *i))
        .collect();
    Regex::from_static(r.pattern(), &names, r.group_count(), prog)
}

#[test]
fn from_static_behaves_like_the_original() {
    let hays = static_hays();
    for p in STATIC_PATTERNS {
        let r = re(p);
        let s = static_copy(&r);
        assert_eq!(s.pattern(), r.pattern());
        assert_eq!(s.group_count(), r.group_count());
        assert_eq!(s.group_names(), r.group_names());
        for (name, _) in r.group_names() {
            assert_eq!(s.group_index(name), r.group_index(name));
        }
        let no_plan = s
            .dfa_plan()
            .expect_err("a static regex has no pattern tree");
        assert!(no_plan.construct.contains("precompiled"), "{no_plan:?}");
        for h in &hays {
            let boundaries: Vec<usize> = (0..=h.len()).filter(|&i| h.is_char_boundary(i)).collect();
            // The long haystacks only from a few positions.
            let positions: Vec<usize> = if h.len() > 100 {
                vec![0, 1, h.len() - 2, h.len()]
            } else {
                boundaries
            };
            for &pos in &positions {
                let ctx = format!("{p:?} on {h:?} at {pos}");
                assert_eq!(s.search(h, pos), r.search(h, pos), "search {ctx}");
                assert_eq!(
                    s.search_partial(h, pos),
                    r.search_partial(h, pos),
                    "search_partial {ctx}"
                );
                for complete in [true, false] {
                    assert_eq!(
                        s.match_at(h, pos, complete),
                        r.match_at(h, pos, complete),
                        "match_at {ctx} {complete}"
                    );
                }
            }
            let a: Vec<_> = s.find_iter(h).collect();
            let b: Vec<_> = r.find_iter(h).collect();
            assert_eq!(a, b, "find_iter {p:?} on {h:?}");
        }
    }
}

#[test]
fn static_programs_are_borrowed() {
    static EMPTY: Program = Program {
        insts: Cow::Borrowed(&[Inst::Match]),
        classes: Cow::Borrowed(&[]),
        groups: 1,
        regs: 0,
        memo_slots: 0,
        joined: Cow::Borrowed(&[false]),
        memo_regs: Cow::Borrowed(&[]),
        backref_groups: Cow::Borrowed(&[]),
        first_bytes: None,
        anchored_start: false,
        start: StartScan::None,
        required: None,
        lazy_skips: Cow::Borrowed(&[]),
    };
    let r = Regex::from_static("", &[], 0, &EMPTY);
    assert!(std::ptr::eq(r.program(), &EMPTY));
    assert_eq!(
        r.search("ab", 1).unwrap().map(|c| (c.start(), c.end())),
        Some((1, 1))
    );
    assert_eq!(r.search("ab", 0).unwrap(), re("").search("ab", 0).unwrap());
}

#[test]
fn looped_literals_are_a_leading_loop_and_literals_only() {
    let looped = |p: &str| Regex::new(p).expect(p).looped_literals();
    let l = looped(r"\s*<tool_call>").expect("a loop and a literal");
    assert_eq!(l.literals, ["<tool_call>"]);
    assert!(l.class.contains(' ') && l.class.contains('\u{3000}') && !l.class.contains('<'));
    let l = looped(r"\s*(?:<\|im_end\|>|<\|endoftext\|>)").expect("a loop and two literals");
    assert_eq!(l.literals, ["<|im_end|>", "<|endoftext|>"]);
    let l = looped(r"\n*(?:<a|<b)c").expect("alternatives then a literal");
    assert_eq!(l.literals, ["<ac", "<bc"]);
    for p in [
        r"\s*",
        r"<a>",
        r"\s+<a>",
        r"\s*?<a>",
        r"\s*+<a>",
        r"(\s*)<a>",
        r"\s*(<a>)",
        r"\s*(?P<n><a>)",
        r"\s*(?:<tool_call>\s*)?<function=(?P<name>[^>\n]+)>",
        r"\s*<a>$",
        r"\s*(?=<)<a>",
        r"\s*(?i)<a>",
        r"\s*(?:<a>|)",
        r"x\s*<a>",
    ] {
        assert_eq!(looped(p), None, "{p}");
    }
}

#[test]
fn start_literals_are_where_every_match_begins() {
    let starts = |p: &str| {
        Regex::new(p).expect(p).start_literals().map(|v| {
            v.into_iter()
                .map(|s| (s.class.is_some(), s.literal))
                .collect::<Vec<_>>()
        })
    };
    let own = |v: &[(bool, &str)]| -> Option<Vec<(bool, String)>> {
        Some(v.iter().map(|&(c, l)| (c, l.to_owned())).collect())
    };
    assert_eq!(
        starts(r"<\|channel\|>x to=(?P<n>\w+)|\s*to=(?P<n>\w+)"),
        own(&[(false, "<|channel|>x to="), (true, "to=")])
    );
    // Alternatives and optional groups after the loop.
    assert_eq!(
        starts(r"\s*(?:<\|im_end\|>|<\|endoftext\|>)"),
        own(&[(true, "<|im_end|>"), (true, "<|endoftext|>")])
    );
    assert_eq!(
        starts(r"\s*(?:<tool_call>\s*)?<function=(?P<name>[^>\n]+)>"),
        own(&[(true, "<tool_call>"), (true, "<function=")])
    );
    assert_eq!(
        starts(r"(?:(?P<a>ab)|c)?(?:d|e)f"),
        own(&[(false, "ab"), (false, "c"), (false, "df"), (false, "ef")])
    );
    for p in [
        r"\s*",
        r"\s+<a>",
        r"\s*\s*<a>",
        r"[ab]<a>",
        r"\s*(?:<a>|)",
        r"\s*(?:<a>)?",
        r"\s*(?:\s*<a>)?<b>",
        r"\s*(?:<a>)?+<b>",
        r"\s*(?=<)<a>",
        r"\s*(?i)<a>",
        r"\s* <a>",
    ] {
        assert_eq!(starts(p), None, "{p}");
    }
    // Every match of these patterns, in texts built from their pieces,
    // begins at one of its literals or in the run of its loop's
    // characters just before one.
    let pieces = [
        " ",
        "\n",
        "x",
        "<",
        "<tool_call>",
        "<function=",
        "f>",
        "<|im_end|>",
    ];
    for p in [
        r"\s*(?:<tool_call>\s*)?<function=(?P<name>[^>\n]+)>",
        r"\s*(?:<\|im_end\|>|<tool_call>)",
    ] {
        let r = Regex::new(p).expect(p);
        let lits = r.start_literals().expect(p);
        let mut seed = 7u64;
        for _ in 0..300 {
            let mut text = String::new();
            for _ in 0..8 {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                text.push_str(pieces[(seed >> 33) as usize % pieces.len()]);
            }
            for (start, _) in finditer(p, &text) {
                let ok = lits.iter().any(|l| {
                    let run_end = text[start..]
                        .char_indices()
                        .find(|&(_, c)| l.class.as_ref().is_none_or(|k| !k.contains(c)))
                        .map_or(text.len(), |(i, _)| start + i);
                    text[run_end..].starts_with(&l.literal)
                });
                assert!(
                    ok,
                    "{p}: a match at {start} of {text:?} begins at no literal"
                );
            }
        }
    }
}

#[test]
fn literal_sequences_are_literals_and_loops_only() {
    use crate::SeqPiece;
    let seq = |p: &str| Regex::new(p).expect(p).literal_sequence();
    let s = seq(r"</function>\s*</tool_call>").expect("literal, loop, literal");
    assert!(matches!(
        s.pieces.as_slice(),
        [SeqPiece::Lit(a), SeqPiece::Loop(c), SeqPiece::Lit(b)]
            if a == "</function>" && b == "</tool_call>" && c.contains('\n') && !c.contains('<')
    ));
    let s = seq(r"</tool_call>\s*").expect("a literal and a trailing loop");
    assert!(
        matches!(s.pieces.as_slice(), [SeqPiece::Lit(a), SeqPiece::Loop(_)] if a == "</tool_call>")
    );
    let s = seq(r"\s*<a>x*").expect("leading and trailing loops");
    assert_eq!(s.pieces.len(), 3);
    assert!(seq("<a>").is_some_and(|s| s.pieces == [SeqPiece::Lit("<a>".into())]));
    for p in [
        r"\s*",
        r"\s*\s*<a>",
        r"<a>\s*\s",
        r"<a>\s+",
        r"<a>\s*?",
        r"<a>\s*+",
        r"<a>\s* b",
        r"<a>[a-z]*b",
        r"<a>(\s*)",
        r"<a>\s*(?:<b>)?",
        r"</function>\s*(?:</tool_call>\s*)?",
        r"<a>|<b>",
        r"<a>$",
        r"(?i)<a>\s*",
        r"(?=<)<a>\s*",
    ] {
        assert_eq!(seq(p), None, "{p}");
    }
}

/// xorshift64: deterministic texts without a dependency.
fn xorshift(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

#[test]
fn tag_patterns_find_what_the_vm_finds() {
    let shaped = [
        r#"<parameter=(?P<key>[^>\n]+)>\n?(?P<value>.*?)\n?</parameter>"#,
        r#"<parameter=(?P<key>[^>\n]+)>(?P<value>.*?)</parameter>"#,
        r#"<parameter name="(?P<key>[^"]+)">(?P<value>.*?)</parameter>"#,
        r#"<steptml:parameter name="(?P<key>[^"]+)">(?P<value>.*?)</steptml:parameter>"#,
        r#"<p=(?P<key>\w+)>\n?(?P<value>.*?)</p>"#,
        r#"<p=(?P<key>\w+)>(?P<value>.*?)\n?</p>"#,
        r#"<<(?P<value>[^<]+)<(?P<key>.*?)<"#,
    ];
    for p in shaped {
        let re = Regex::new(p).expect(p);
        assert!(re.finds_tags_directly(), "{p} has the tag shape");
    }
    for p in [
        r"<(?P<key>\w+)>\s*(?P<value>.*?)\s*</\1>",
        r"<arg_key>(?P<key>.*?)</arg_key>\s*<arg_value>(?P<value>.*?)</arg_value>",
        r"(?P<key>\w+)\s*=\s*(?P<value>.*?)\s*(?=,|$)",
        r"<(?P<key>\w+)=(?P<value>[^>]+)>",
        r"<p=(?P<key>[^>]+?)>(?P<value>.*?)</p>",
        r"<p=(?P<key>[\w>]+)>(?P<value>.*?)</p>",
        r"(?P<key>\w+)>(?P<value>.*?)</p>",
        r"<p=(?P<key>\w+)>(?P<value>.*?)",
        r"<p=(?P<key>\w+)>(?P<value>.*?)</p>(x)",
    ] {
        let re = Regex::new(p).expect(p);
        assert!(!re.finds_tags_directly(), "{p} is not a tag shape");
    }
    let spans = |c: &Captures| (0..c.len()).map(|i| c.get(i)).collect::<Vec<_>>();
    let mut state = 0x2545_F491_4F6C_DD1D_u64;
    let mut compared = 0;
    for p in shaped {
        let re = Regex::new(p).expect(p);
        let parts: Vec<String> = {
            let mut v: Vec<String> = [
                "<parameter=",
                "<parameter name=\"",
                "<steptml:parameter name=\"",
                "<p=",
                "<<",
                "</parameter>",
                "</steptml:parameter>",
                "</p>",
                "\">",
                ">",
                "<",
                "\n",
                "\"",
                "city",
                "a b",
                "x",
                "é",
                "大阪",
                "_1",
                "</",
                "<param",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect();
            v.push(String::new());
            v
        };
        // Whole tags of this pattern's shape, with newlines around the
        // value and stray pieces inside it, among random pieces.
        let shape = re.inner.tag.clone().expect("a tag shape");
        for _ in 0..3000 {
            let n = 1 + (xorshift(&mut state) % 14) as usize;
            let mut text = String::new();
            for _ in 0..n {
                let pick = |state: &mut u64| {
                    parts[(xorshift(state) % parts.len() as u64) as usize].as_str()
                };
                if xorshift(&mut state).is_multiple_of(3) {
                    text.push_str(&shape.prefix);
                    text.push_str(
                        ["x", "city", "a b", "大阪", "", "\n"][(xorshift(&mut state) % 6) as usize],
                    );
                    text.push_str(&shape.mid);
                    for _ in 0..xorshift(&mut state) % 3 {
                        text.push('\n');
                    }
                    for _ in 0..xorshift(&mut state) % 3 {
                        text.push_str(pick(&mut state));
                    }
                    for _ in 0..xorshift(&mut state) % 3 {
                        text.push('\n');
                    }
                    if !xorshift(&mut state).is_multiple_of(4) {
                        text.push_str(&shape.suffix);
                    }
                } else {
                    text.push_str(pick(&mut state));
                }
            }
            let direct: Vec<_> = re
                .find_iter(&text)
                .map(|m| spans(&m.expect("no budget")))
                .collect();
            let vm: Vec<_> = re
                .find_iter_vm(&text)
                .map(|m| spans(&m.expect("no budget")))
                .collect();
            assert_eq!(direct, vm, "{p} on {text:?}");
            compared += 1;
        }
    }
    assert_eq!(compared, 3000 * shaped.len());
}

/// Spans are held inline up to `INLINE_SPANS` groups and on the heap
/// beyond: both read back the same, and captures compare by their spans.
#[test]
fn captures_inline_and_on_the_heap() {
    let hay = "abcdefg";
    for groups in [0, 1, INLINE_SPANS - 1, INLINE_SPANS, INLINE_SPANS + 3] {
        // `(a)(b)...` with `groups` groups, the last one not taking part.
        let mut p: String = (0..groups.saturating_sub(1))
            .map(|i| format!("({})", &hay[i..i + 1]))
            .collect();
        if groups > 0 {
            p.push_str("(z)?");
        }
        let c = re(&p).search(hay, 0).expect("budget").expect("a match");
        assert_eq!(c.len(), groups + 1, "{p}");
        let want: Vec<_> = std::iter::once(Some((0, groups.saturating_sub(1))))
            .chain((0..groups.saturating_sub(1)).map(|i| Some((i, i + 1))))
            .chain((groups > 0).then_some(None))
            .collect();
        assert_eq!(spans(&c), want, "{p}");
        assert_eq!(c.get(groups + 1), None);
        assert_eq!(c, c.clone());
    }
    let (one, two) = (re("(a)").search(hay, 0), re("(a)(b)?").search(hay, 0));
    assert_ne!(one.expect("budget"), two.expect("budget"));
}
