//! A lexer of jinja2's template syntax, enough to find tags and their
//! tokens (names, string literals, numbers, operators) the way jinja2's own
//! lexer splits them, and jinja2's decoding of string literals.

use std::fmt::Write as _;

use crate::error::ChatError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Name,
    Str,
    Num,
    Op,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct Tok {
    pub(crate) kind: Kind,
    pub(crate) start: usize,
    pub(crate) end: usize,
}

pub(crate) fn find(bytes: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
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
pub(crate) fn lex_tag(src: &str, from: usize, close: u8) -> (Vec<Tok>, usize) {
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
pub(crate) fn find_endraw(src: &str, from: usize) -> Option<usize> {
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

/// jinja2's value of a string literal (quotes included): newlines
/// normalised, non-ASCII characters backslash-escaped, then Python's
/// `unicode-escape` decoding (so `'\é'` is the four characters `\xe9`, as
/// in jinja2).
pub(crate) fn decode_literal(lit: &str, line: usize) -> Result<String, ChatError> {
    // Without the quotes, cut at character boundaries: an unterminated
    // literal can end in any character (a fuzzer's find).
    let mut chars = lit.chars();
    chars.next();
    chars.next_back();
    let inner = chars.as_str();
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
pub(crate) fn encode_literal(s: &str) -> String {
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
