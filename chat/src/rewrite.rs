//! Source rewrites that give minijinja the constructs jinja2 has and
//! minijinja lacks, applied to the template text before compiling. A small
//! lexer of jinja2's syntax finds the tags (leaving comments and `raw`
//! blocks alone); then:
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
//! - `{% set ns._name = value %}`: transformers' `TemplateNamespace`
//!   refuses underscore attributes with a `SecurityError` once the value is
//!   computed; minijinja's namespaces take any name, so the value is piped
//!   through a filter that raises that error.

use std::fmt::Write as _;

use crate::error::ChatError;

/// The filter `{% generation %}` turns into (`filter __g` has the length of
/// `generation`, so error columns stay right).
pub(crate) const GENERATION_FILTER: &str = "__g";
/// The filter guarding underscore namespace attributes.
pub(crate) const NS_GUARD_FILTER: &str = "__nsg";
/// The filter checking a `for` loop's iterable.
pub(crate) const ITER_FILTER: &str = "__iter";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Name,
    Str,
    Num,
    Op,
}

#[derive(Debug, Clone, Copy)]
struct Tok {
    kind: Kind,
    start: usize,
    end: usize,
}

/// Rewrites `source` (see the module docs).
pub(crate) fn rewrite(source: &str) -> Result<String, ChatError> {
    let src = normalize_newlines(source);
    let bytes = src.as_bytes();
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
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
                        edits.push((t.start, t.end, encode_literal(&value)));
                    }
                }
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
                            edits.push((t.start, t.end, format!("filter {GENERATION_FILTER}")));
                        }
                        Some("endgeneration") => {
                            let t = toks[0];
                            edits.push((t.start, t.end, "endfilter    ".to_owned()));
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
    // Edits never overlap; literals inside a wrapped range are replaced in place.
    edits.sort_by_key(|e| (e.0, e.1));
    let mut out = String::with_capacity(src.len() + 64);
    let mut at = 0;
    for (start, end, text) in edits {
        if start < at {
            continue;
        }
        out.push_str(&src[at..start]);
        out.push_str(&text);
        at = end;
    }
    out.push_str(&src[at..]);
    Ok(out)
}

fn normalize_newlines(source: &str) -> String {
    if !source.contains('\r') {
        return source.to_owned();
    }
    source.replace("\r\n", "\n").replace('\r', "\n")
}

fn line_of(src: &str, at: usize) -> usize {
    src[..at.min(src.len())].matches('\n').count() + 1
}

fn find(bytes: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    if from >= bytes.len() {
        return None;
    }
    bytes[from..]
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| p + from)
}

/// Lexes a tag body from `from` to its closing delimiter (`}}` or `%}`,
/// optionally after `-`/`+`, only outside brackets, as jinja2's lexer
/// balances them). Returns the tokens and the offset past the delimiter.
fn lex_tag(src: &str, from: usize, close: u8) -> (Vec<Tok>, usize) {
    let b = src.as_bytes();
    let mut toks = Vec::new();
    let mut depth = 0usize;
    let mut i = from;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if depth == 0 {
            let at_close = |k: usize| b.get(k) == Some(&close) && b.get(k + 1) == Some(&b'}');
            if at_close(i) {
                return (toks, i + 2);
            }
            if matches!(c, b'-' | b'+') && at_close(i + 1) {
                return (toks, i + 3);
            }
        }
        let start = i;
        let kind = match c {
            b'\'' | b'"' => {
                i += 1;
                while i < b.len() && b[i] != c {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                i = (i + 1).min(b.len());
                Kind::Str
            }
            b'0'..=b'9' => {
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
                if b.get(i) == Some(&b'.') && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
                    i += 1;
                    while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                        i += 1;
                    }
                }
                Kind::Num
            }
            c if c == b'_' || c.is_ascii_alphabetic() || c >= 0x80 => {
                while i < b.len() && (b[i] == b'_' || b[i].is_ascii_alphanumeric() || b[i] >= 0x80)
                {
                    i += 1;
                }
                Kind::Name
            }
            _ => {
                let two = &b[i..(i + 2).min(b.len())];
                i += if matches!(two, b"//" | b"**" | b"==" | b"!=" | b">=" | b"<=") {
                    2
                } else {
                    1
                };
                match c {
                    b'(' | b'[' | b'{' => depth += 1,
                    b')' | b']' | b'}' => depth = depth.saturating_sub(1),
                    _ => {}
                }
                Kind::Op
            }
        };
        toks.push(Tok {
            kind,
            start,
            end: i,
        });
    }
    (toks, b.len())
}

/// Past the `{% endraw %}` closing a raw block whose opening tag ends at
/// `from`.
fn find_endraw(src: &str, from: usize) -> Option<usize> {
    let b = src.as_bytes();
    let mut i = from;
    while let Some(j) = find(b, i, b"{%") {
        let mut k = j + 2;
        if matches!(b.get(k), Some(b'-' | b'+')) {
            k += 1;
        }
        let rest = src[k..].trim_start();
        if let Some(after) = rest.strip_prefix("endraw") {
            let after = after.trim_start();
            let after = after.strip_prefix(['-', '+']).unwrap_or(after);
            if after.starts_with("%}") {
                return Some(src.len() - after.len() + 2);
            }
        }
        i = j + 2;
    }
    None
}

fn is_name(src: &str, t: &Tok, name: &str) -> bool {
    t.kind == Kind::Name && &src[t.start..t.end] == name
}

/// Depth (bracket nesting) before each token.
fn depths(src: &str, toks: &[Tok]) -> Vec<usize> {
    let mut depth = 0usize;
    toks.iter()
        .map(|t| {
            let d = depth;
            if t.kind == Kind::Op {
                match &src[t.start..t.end] {
                    "(" | "[" | "{" => depth += 1,
                    ")" | "]" | "}" => depth = depth.saturating_sub(1),
                    _ => {}
                }
            }
            d
        })
        .collect()
}

/// `for TARGET in ITER [if COND] [recursive]`: ITER becomes `(ITER)|__iter`.
fn wrap_for(src: &str, toks: &[Tok], edits: &mut Vec<(usize, usize, String)>) {
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
    let (start, end) = (toks[first].start, toks[last - 1].end);
    edits.push((start, start, "(".to_owned()));
    edits.push((end, end, format!(")|{ITER_FILTER}")));
}

/// `set NS._name = VALUE`: VALUE becomes `(VALUE)|__nsg("_name")`.
fn guard_set(src: &str, toks: &[Tok], edits: &mut Vec<(usize, usize, String)>) {
    let text = |k: usize| toks.get(k).map(|t| &src[t.start..t.end]);
    let ok = toks.len() > 5
        && toks[1].kind == Kind::Name
        && text(2) == Some(".")
        && toks[3].kind == Kind::Name
        && text(3).is_some_and(|n| n.starts_with('_'))
        && text(4) == Some("=");
    if !ok {
        return;
    }
    let name = text(3).unwrap_or("_");
    let (start, end) = (toks[5].start, toks[toks.len() - 1].end);
    edits.push((start, start, "(".to_owned()));
    edits.push((end, end, format!(")|{NS_GUARD_FILTER}(\"{name}\")")));
}

/// jinja2's value of a string literal (quotes included): newlines
/// normalised, non-ASCII characters backslash-escaped, then Python's
/// `unicode-escape` decoding (so `'\é'` is the four characters `\xe9`, as
/// in jinja2).
fn decode_literal(lit: &str, line: usize) -> Result<String, ChatError> {
    let inner = &lit[1..lit.len().saturating_sub(1).max(1)];
    let mut ascii = String::with_capacity(inner.len());
    for c in inner.chars() {
        let n = c as u32;
        if c.is_ascii() {
            ascii.push(c);
        } else if n < 0x100 {
            let _ = write!(ascii, "\\x{n:02x}");
        } else if n < 0x10000 {
            let _ = write!(ascii, "\\u{n:04x}");
        } else {
            let _ = write!(ascii, "\\U{n:08x}");
        }
    }
    let bad = |what: &str| ChatError::syntax(what.to_owned(), line, 1);
    let chars: Vec<char> = ascii.chars().collect();
    let mut out = String::with_capacity(chars.len());
    let mut k = 0;
    while k < chars.len() {
        let c = chars[k];
        k += 1;
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(&e) = chars.get(k) else {
            return Err(bad("\\ at end of string"));
        };
        k += 1;
        match e {
            '\n' => {}
            '\\' => out.push('\\'),
            '\'' => out.push('\''),
            '"' => out.push('"'),
            'a' => out.push('\u{7}'),
            'b' => out.push('\u{8}'),
            'f' => out.push('\u{c}'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'v' => out.push('\u{b}'),
            '0'..='7' => {
                let mut n = e.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    match chars.get(k).and_then(|d| d.to_digit(8)) {
                        Some(d) => {
                            n = n * 8 + d;
                            k += 1;
                        }
                        None => break,
                    }
                }
                out.push(char::from_u32(n).unwrap_or('\u{fffd}'));
            }
            'x' | 'u' | 'U' => {
                let len = match e {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let digits: String = chars.iter().skip(k).take(len).collect();
                if digits.len() != len || !digits.chars().all(|d| d.is_ascii_hexdigit()) {
                    return Err(bad(match e {
                        'x' => "truncated \\xXX escape",
                        'u' => "truncated \\uXXXX escape",
                        _ => "truncated \\UXXXXXXXX escape",
                    }));
                }
                k += len;
                let n = u32::from_str_radix(&digits, 16).unwrap_or(0xfffd);
                match char::from_u32(n) {
                    Some(ch) => out.push(ch),
                    None if (0xd800..0xe000).contains(&n) => out.push('\u{fffd}'),
                    None => return Err(bad("illegal Unicode character")),
                }
            }
            other => {
                // unknown escapes (and \N{...}, whose names are not known
                // here) stay as written
                out.push('\\');
                out.push(other);
            }
        }
    }
    Ok(out)
}

/// A minijinja string literal with value `s`.
fn encode_literal(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
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
    fn normalizes_newlines() {
        assert_eq!(rw("a\r\nb\rc"), "a\nb\nc");
    }
}
