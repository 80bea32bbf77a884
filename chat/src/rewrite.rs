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
//! - `A % B` becomes `(A)|__mod((B))`: Python's `%` formats strings
//!   (`'%s: %d' % (name, n)`), minijinja's only takes remainders;
//! - `{% set ns._name = value %}`: transformers' `TemplateNamespace`
//!   refuses underscore attributes with a `SecurityError` once the value is
//!   computed; minijinja's namespaces take any name, so the value is piped
//!   through a filter that raises that error.

use crate::error::ChatError;
use crate::exprs::{Edits, binop, depths, is_name, slices, text};
use crate::lexer::{Kind, Tok, decode_literal, encode_literal, find, find_endraw, lex_tag};

/// The filter `{% generation %}` turns into (`filter __g` has the length of
/// `generation`, so error columns stay right).
pub(crate) const GENERATION_FILTER: &str = "__g";
/// The filter guarding underscore namespace attributes.
pub(crate) const NS_GUARD_FILTER: &str = "__nsg";
/// The filter checking a `for` loop's iterable.
pub(crate) const ITER_FILTER: &str = "__iter";

/// Rewrites `source` (see the module docs).
pub(crate) fn rewrite(source: &str) -> Result<String, ChatError> {
    let src = normalize_newlines(source);
    let bytes = src.as_bytes();
    let mut edits = Edits::default();
    let markup = makes_markup(&src);
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
                binop(&src, &toks, "%", 7, crate::exprs::MOD_FILTER, &mut edits);
                if markup {
                    binop(&src, &toks, "+", 5, crate::exprs::ADD_FILTER, &mut edits);
                }
                slices(&src, &toks, &mut edits);
                if is_block {
                    let name = toks
                        .first()
                        .filter(|t| t.kind == Kind::Name)
                        .map(|t| &src[t.start..t.end]);
                    match name {
                        Some("raw") if toks.len() == 1 => {
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

/// Whether the template may make safe strings (`Markup`), whose `+`
/// escapes: it applies a filter that makes them.
fn makes_markup(src: &str) -> bool {
    let b = src.as_bytes();
    let mut i = 0;
    while let Some(p) = find(b, i, b"|") {
        let rest = src[p + 1..].trim_start();
        let name_len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        if matches!(
            &rest[..name_len],
            "safe" | "e" | "escape" | "forceescape" | "xmlattr" | "urlize"
        ) {
            return true;
        }
        i = p + 1;
    }
    false
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
        "(",
        format!(")|{ITER_FILTER}"),
    );
}

/// `set NS._name = VALUE`: VALUE becomes `(VALUE)|__nsg("_name")`.
fn guard_set(src: &str, toks: &[Tok], edits: &mut Edits) {
    let tx = |k: usize| toks.get(k).map(|t| text(src, t));
    let ok = toks.len() > 5
        && toks[1].kind == Kind::Name
        && tx(2) == Some(".")
        && toks[3].kind == Kind::Name
        && tx(3).is_some_and(|n| n.starts_with('_'))
        && tx(4) == Some("=");
    if !ok {
        return;
    }
    let name = tx(3).unwrap_or("_");
    edits.wrap(
        toks[5].start,
        toks[toks.len() - 1].end,
        "(",
        format!(")|{NS_GUARD_FILTER}(\"{name}\")"),
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
            "{# {% generation %} #}{{ '{% generation %}' }}{% raw %}{% generation %}{% endraw %}x";
        assert_eq!(rw(src), src);
    }

    #[test]
    fn guards_underscore_namespace_attributes() {
        assert_eq!(
            rw("{% set ns._x = 1 + 2 -%}"),
            "{% set ns._x = (1 + 2)|__nsg(\"_x\") -%}"
        );
        assert_eq!(rw("{% set ns.x = 1 %}"), "{% set ns.x = 1 %}");
    }

    #[test]
    fn checks_for_iterables() {
        assert_eq!(
            rw("{% for a, b in x.items() if a recursive %}"),
            "{% for a, b in (x.items())|__iter if a recursive %}"
        );
        assert_eq!(
            rw("{%- for m in messages -%}"),
            "{%- for m in (messages)|__iter -%}"
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
    fn percent_becomes_python_modulo() {
        assert_eq!(rw("{{ '%s'%x }}"), "{{ ('%s')|__mod((x)) }}");
        assert_eq!(rw("{{ '%s' % x }}"), "{{ ('%s') |__mod( (x)) }}");
        assert_eq!(
            rw("{{ a ~ 'v=%d'%(n, m)|length ~ b }}"),
            "{{ a ~ ('v=%d')|__mod(((n, m)|length)) ~ b }}"
        );
        assert_eq!(rw("{{ x * y%z + 1 }}"), "{{ (x * y)|__mod((z)) + 1 }}");
        assert_eq!(rw("{{ a%b%c }}"), "{{ ((a)|__mod((b)))|__mod((c)) }}");
        assert_eq!(rw("{{ -m.x[0](1)%2 }}"), "{{ (-m.x[0](1))|__mod((2)) }}");
        assert_eq!(
            rw("{% for i in range(n) if i%2 %}"),
            "{% for i in (range(n))|__iter if (i)|__mod((2)) %}"
        );
        assert_eq!(
            rw("{% set x = loop.index0%2 == 0 %}"),
            "{% set x = (loop.index0)|__mod((2)) == 0 %}"
        );
        assert_eq!(
            rw("{{ x is divisibleby 3%2 }}"),
            "{{ (x is divisibleby 3)|__mod((2)) }}"
        );
    }

    #[test]
    fn normalizes_newlines() {
        assert_eq!(rw("a\r\nb\rc"), "a\nb\nc");
    }
}
