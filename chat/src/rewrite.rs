//! Source rewrites that give minijinja the constructs jinja2 has and
//! minijinja lacks, applied to the template text before compiling. A lexer
//! of jinja2's syntax ([`crate::lexer`]) finds the tags (leaving comments and
//! `raw` blocks alone); then:
//!
//! - newlines: jinja2's lexer turns `\r\n` and `\r` into `\n` (its
//!   `newline_sequence`) in the template's text and string literals;
//! - string literals are decoded the way jinja2 decodes them (Python's
//!   `unicode-escape`: `\x41`, `\u00e9`, `\101`, `\a`, `\v`, a backslash
//!   before a newline, unknown escapes kept) and re-encoded for minijinja;
//! - `{% generation %}…{% endgeneration %}` (transformers'
//!   `AssistantTracker` extension) becomes a `{% filter %}` block of the
//!   same length, whose filter records where the body lands;
//! - `{% for x in EXPR %}` iterates `(EXPR)|__iter`, which raises Python's
//!   `TypeError` for what Python cannot iterate (`None`, numbers), where
//!   minijinja would iterate nothing;
//! - operators and slices whose Python meaning differs from minijinja's
//!   become filter calls ([`crate::exprs`]: `%`, `+`, `~`, `x[a:b]`);
//! - `{% set target = value %}`: the value is piped through a filter that
//!   raises transformers' `SecurityError` for an underscore attribute of a
//!   namespace (`TemplateNamespace` refuses them once the value is
//!   computed; minijinja's namespaces take any name), and bounds how deeply
//!   stored values nest.

use crate::error::ChatError;
use crate::exprs::{Edits, binop, comparisons, depths, is_name, lookups, slices, text, unary};
use crate::lexer::{Kind, Tok, decode_literal, encode_literal, find, find_endraw, lex_tag};

/// The filter `{% generation %}` turns into (`filter __g` has the length of
/// `generation`, so error columns stay right).
pub(crate) const GENERATION_FILTER: &str = "__g";
/// The function every `set` value goes through (underscore namespace
/// attributes, nesting depth).
pub(crate) const SET_FN: &str = "__rt_set";
/// The function checking a `for` loop's iterable.
pub(crate) const ITER_FN: &str = "__rt_iter";

/// The tokens of a tag whose attribute and item reads are rewritten: a
/// `set`'s value (its target, `ns.x`, is an assignment), a `for`'s
/// iterable and condition, any other tag's expression.
fn lookup_part<'t>(src: &str, toks: &[Tok], expr: &'t [Tok]) -> &'t [Tok] {
    if toks.first().is_some_and(|t| is_name(src, t, "set")) {
        let d = depths(src, expr);
        return match (0..expr.len()).find(|&j| d[j] == 0 && text(src, &expr[j]) == "=") {
            Some(eq) => &expr[eq + 1..],
            None => &[],
        };
    }
    expr
}

/// Rewrites `source` (see the module docs).
pub(crate) fn rewrite(source: &str) -> Result<String, ChatError> {
    let src = normalize_newlines(source);
    let bytes = src.as_bytes();
    let mut edits = Edits::default();
    let mut i = 0;
    while let Some(open) = find(bytes, i, b"{") {
        let Some(&next) = bytes.get(open + 1) else {
            break;
        };
        match next {
            b'#' => {
                i = find(bytes, open + 2, b"#}").map_or(bytes.len(), |j| j + 2);
            }
            b'{' | b'%' => {
                let is_block = next == b'%';
                let mut body = open + 2;
                if matches!(bytes.get(body), Some(b'-' | b'+')) {
                    body += 1;
                }
                let (toks, end) = lex_tag(&src, body, if is_block { b'%' } else { b'}' });
                for t in toks.iter().filter(|t| t.kind == Kind::Str) {
                    let lit = &src[t.start..t.end];
                    if lit.contains('\\') {
                        let value = decode_literal(lit, line_of(&src, t.start))?;
                        edits.replace(t.start, t.end, encode_literal(&value));
                    }
                }
                // A block's first word is the statement's keyword, not an
                // operand.
                let mut expr = if is_block {
                    toks.get(1..).unwrap_or(&[])
                } else {
                    &toks[..]
                };
                // In a for tag, the first `in` is the loop's.
                if is_block && toks.first().is_some_and(|t| is_name(&src, t, "for")) {
                    let d = depths(&src, expr);
                    if let Some(p) =
                        (0..expr.len()).find(|&j| d[j] == 0 && is_name(&src, &expr[j], "in"))
                    {
                        expr = &expr[p + 1..];
                    }
                }
                binop(&src, expr, "%", 7, crate::exprs::MOD_FN, false, &mut edits);
                binop(&src, expr, "+", 5, crate::exprs::ADD_FN, false, &mut edits);
                binop(
                    &src,
                    expr,
                    "~",
                    6,
                    crate::exprs::CONCAT_FN,
                    true,
                    &mut edits,
                );
                slices(&src, expr, &mut edits);
                comparisons(&src, expr, &mut edits);
                unary(&src, expr, &mut edits);
                lookups(&src, lookup_part(&src, &toks, expr), &mut edits);
                if is_block {
                    let name = toks
                        .first()
                        .filter(|t| t.kind == Kind::Name)
                        .map(|t| &src[t.start..t.end]);
                    match name {
                        Some("raw") if toks.len() == 1 => {
                            // jinja2 keeps the newline after `{% raw %}`
                            // (trim_blocks does not apply); minijinja
                            // trims it unless told `+%}`.
                            let before = bytes.get(end.saturating_sub(3)).copied();
                            if !matches!(before, Some(b'-' | b'+')) {
                                edits.replace(end - 2, end - 2, "+");
                            }
                            i = find_endraw(&src, end).unwrap_or(bytes.len());
                            continue;
                        }
                        Some("generation") => {
                            let t = toks[0];
                            edits.replace(t.start, t.end, format!("filter {GENERATION_FILTER}"));
                        }
                        Some("endgeneration") => {
                            let t = toks[0];
                            edits.replace(t.start, t.end, "endfilter    ");
                        }
                        Some("for") => wrap_for(&src, &toks, &mut edits),
                        Some("set") => guard_set(&src, &toks, &mut edits),
                        _ => {}
                    }
                }
                i = end;
            }
            _ => i = open + 1,
        }
    }
    Ok(edits.apply(&src))
}

pub(crate) fn normalize_newlines(source: &str) -> String {
    if !source.contains('\r') {
        return source.to_owned();
    }
    source.replace("\r\n", "\n").replace('\r', "\n")
}

fn line_of(src: &str, at: usize) -> usize {
    src[..at.min(src.len())].matches('\n').count() + 1
}

/// `for TARGET in ITER [if COND] [recursive]`: ITER becomes `(ITER)|__iter`.
fn wrap_for(src: &str, toks: &[Tok], edits: &mut Edits) {
    let d = depths(src, toks);
    let Some(in_at) = (1..toks.len()).find(|&k| d[k] == 0 && is_name(src, &toks[k], "in")) else {
        return;
    };
    let first = in_at + 1;
    if first >= toks.len() {
        return;
    }
    let last = (first..toks.len())
        .find(|&k| {
            d[k] == 0 && (is_name(src, &toks[k], "if") || is_name(src, &toks[k], "recursive"))
        })
        .unwrap_or(toks.len());
    if last <= first {
        return;
    }
    edits.wrap(
        toks[first].start,
        toks[last - 1].end,
        format!("{ITER_FN}(("),
        "))",
    );
}

/// `set NS._name = VALUE`: VALUE becomes `(VALUE)|__nsg("_name")`.
///
/// Every assigned value goes through the filter, which also bounds how
/// deeply the stored value nests: a loop wrapping a namespace's value in a
/// list each time (`{% set ns.x = [ns.x] %}`) would otherwise build a chain
/// whose drop recurses past any stack.
fn guard_set(src: &str, toks: &[Tok], edits: &mut Edits) {
    let tx = |k: usize| toks.get(k).map(|t| text(src, t));
    // the `=` at depth 0 ends the target
    let d = depths(src, toks);
    let Some(eq) = (1..toks.len()).find(|&k| d[k] == 0 && tx(k) == Some("=")) else {
        return; // a block set: its value is a string
    };
    if eq + 1 >= toks.len() {
        return;
    }
    let attr =
        (eq == 4 && toks[1].kind == Kind::Name && tx(2) == Some(".") && toks[3].kind == Kind::Name)
            .then(|| tx(3))
            .flatten();
    let name = match attr {
        Some(a) => format!("\"{a}\""),
        None => "none".to_owned(),
    };
    // `set a, b = value` unpacks: the function checks it as Python does
    let targets = (1..eq).filter(|&k| d[k] == 0 && tx(k) == Some(",")).count();
    let count = if targets > 0 {
        format!(", {}", targets + 1)
    } else {
        String::new()
    };
    edits.wrap(
        toks[eq + 1].start,
        toks[toks.len() - 1].end,
        format!("{SET_FN}(("),
        format!("), {name}{count})"),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rw(s: &str) -> String {
        rewrite(s).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn generation_keeps_lengths() {
        let src = "a{%- generation -%}b{% endgeneration %}c";
        let out = rw(src);
        assert_eq!(out, "a{%- filter __g -%}b{% endfilter     %}c");
        assert_eq!(out.len(), src.len());
    }

    #[test]
    fn leaves_text_comments_and_raw_alone() {
        let src =
            "{# {% generation %} #}{{ '{% generation %}' }}{% raw -%}{% generation %}{% endraw %}x";
        assert_eq!(rw(src), src);
        assert_eq!(rw("{% raw %}a{% endraw %}"), "{% raw +%}a{% endraw %}");
    }

    #[test]
    fn guards_set_values() {
        assert_eq!(
            rw("{% set ns._x = 1 * 2 -%}"),
            "{% set ns._x = __rt_set((1 * 2), \"_x\") -%}"
        );
        assert_eq!(
            rw("{% set ns.x = 1 %}"),
            "{% set ns.x = __rt_set((1), \"x\") %}"
        );
        assert_eq!(
            rw("{% set a, b = t %}"),
            "{% set a, b = __rt_set((t), none, 2) %}"
        );
        assert_eq!(rw("{% set x %}y{% endset %}"), "{% set x %}y{% endset %}");
    }

    #[test]
    fn checks_for_iterables() {
        assert_eq!(
            rw("{% for a, b in x.items() if a recursive %}"),
            "{% for a, b in __rt_iter((x.items())) if a recursive %}"
        );
        assert_eq!(
            rw("{%- for m in messages -%}"),
            "{%- for m in __rt_iter((messages)) -%}"
        );
    }

    #[test]
    fn decodes_literals_as_python() {
        assert_eq!(
            rw(r"{{ 'a\x41\u00e9\101\v\d' }}"),
            "{{ \"aAéA\\u000b\\\\d\" }}"
        );
        assert_eq!(rw("{{ 'a\\\nb' }}"), "{{ \"ab\" }}");
        assert_eq!(rw("{{ {'a': {'b': '}}'}} }}x"), "{{ {'a': {'b': '}}'}} }}x");
    }

    #[test]
    fn operators_become_python_functions() {
        let cases = [
            ("{{ '%s'%x }}", "{{ __rt_mod(('%s'), (x)) }}"),
            ("{{ '%s' % x }}", "{{ __rt_mod(('%s') ,  (x)) }}"),
            (
                "{{ a~'v=%d'%(n, m)|length~b }}",
                "{{ __rt_cat((a), (__rt_mod(('v=%d'), ((n, m)|length))), (b)) }}",
            ),
            (
                "{{ x * y%z+1 }}",
                "{{ __rt_add((__rt_mod((x * y), (z))), (1)) }}",
            ),
            ("{{ a+b~c }}", "{{ __rt_add((a), (__rt_cat((b), (c)))) }}"),
            ("{{ a~b+c }}", "{{ __rt_add((__rt_cat((a), (b))), (c)) }}"),
            ("{{ a~b~c*d~e }}", "{{ __rt_cat((a), (b), (c*d), (e)) }}"),
            (
                "{{ -a+b }}",
                "{{ __rt_add((__rt_unary(\"-\", (a))), (b)) }}",
            ),
            ("{{ a-b+c }}", "{{ __rt_add((a-b), (c)) }}"),
            ("{{ f(a+b, c) }}", "{{ f(__rt_add((a), (b)), c) }}"),
            (
                "{{ 'a'~call['n']~'b' }}",
                "{{ __rt_cat(('a'), (__rt_item((call), 'n')), ('b')) }}",
            ),
            (
                "{% elif -a+b %}",
                "{% elif __rt_add((__rt_unary(\"-\", (a))), (b)) %}",
            ),
            ("{{ a%b%c }}", "{{ __rt_mod((__rt_mod((a), (b))), (c)) }}"),
            (
                "{{ -m.x[0](1)%2 }}",
                "{{ __rt_mod((__rt_unary(\"-\", (__rt_item((__rt_attr((m), \"x\")), 0)(1)))), (2)) }}",
            ),
            (
                "{% for i in range(n) if i%2 %}",
                "{% for i in __rt_iter((range(n))) if __rt_mod((i), (2)) %}",
            ),
            (
                "{% set x = loop.index0%2 == 0 %}",
                "{% set x = __rt_set((__rt_mod((__rt_attr((loop), \"index0\")), (2)) == 0), none) %}",
            ),
            (
                "{{ x is divisibleby 3%2 }}",
                "{{ __rt_mod((x is divisibleby 3), (2)) }}",
            ),
            ("{{ a[1:] }}", "{{ __rt_slice((a), 1, none) }}"),
            (
                "{{ a.b[::-1].c }}",
                "{{ __rt_attr((__rt_slice((__rt_attr((a), \"b\")), none, none, -1)), \"c\") }}",
            ),
            (
                "{{ -x[:2] }}",
                "{{ __rt_unary(\"-\", (__rt_slice((x), none, 2))) }}",
            ),
            ("{{ a < b }}", "{{ __rt_cmp((a) , \"<\",  (b)) }}"),
            (
                "{{ a+1 >= b }}",
                "{{ __rt_cmp((__rt_add((a), (1))) , \">=\",  (b)) }}",
            ),
            ("{{ a < b < c }}", "{{ a < b < c }}"),
            ("{{ x in y }}", "{{ __rt_in((x) ,  (y)) }}"),
            (
                "{{ x not in y.z }}",
                "{{ (not __rt_in((x) ,  (__rt_attr((y), \"z\")))) }}",
            ),
            ("{{ not x in y }}", "{{ not __rt_in((x) ,  (y)) }}"),
            (
                "{% for a in b if a in c %}",
                "{% for a in __rt_iter((b)) if __rt_in((a) ,  (c)) %}",
            ),
            (
                "{% if a and b in c %}",
                "{% if a and __rt_in((b) ,  (c)) %}",
            ),
        ];
        for (src, want) in cases {
            assert_eq!(rw(src), want, "{src}");
        }
    }

    #[test]
    fn normalizes_newlines() {
        assert_eq!(rw("a\r\nb\rc"), "a\nb\nc");
    }
}
