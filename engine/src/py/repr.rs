//! Python's `repr()`, which the reference's error messages embed (`{text!r}`,
//! `%R`), so that retort's messages read exactly like the reference's.

use crate::Value;
use crate::unicode_tables::PY_NON_PRINTABLE as NON_PRINTABLE;
use crate::unicode_tables::in_ranges;
use crate::value::python_float_repr;
use std::fmt::Write as _;

/// Python's `repr()` of a `str`: single quotes unless the text contains a
/// single quote and no double quote; backslash escapes for the quote, `\\`,
/// `\t`, `\n`, `\r`; `\xNN`/`\uNNNN`/`\UNNNNNNNN` for characters that
/// `str.isprintable()` rejects.
pub fn repr_str(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if in_ranges(NON_PRINTABLE, c) => {
                let n = c as u32;
                let _ = if n <= 0xff {
                    write!(out, "\\x{n:02x}")
                } else if n <= 0xffff {
                    write!(out, "\\u{n:04x}")
                } else {
                    write!(out, "\\U{n:08x}")
                };
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// Python's `repr()` of a JSON-shaped value (`None`, `True`, `1.5`, `'s'`,
/// `[...]`, `{...}`).
pub fn repr_value(v: &Value) -> String {
    let mut out = String::new();
    write_repr(&mut out, v);
    out
}

fn write_repr(out: &mut String, v: &Value) {
    match v {
        Value::Null => out.push_str("None"),
        Value::Bool(true) => out.push_str("True"),
        Value::Bool(false) => out.push_str("False"),
        Value::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Value::BigInt(n) => {
            let _ = write!(out, "{n}");
        }
        Value::Float(f) => out.push_str(&float_repr(*f)),
        Value::Str(s) => out.push_str(&repr_str(s)),
        Value::List(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_repr(out, item);
            }
            out.push(']');
        }
        Value::Map(m) => {
            out.push('{');
            for (i, (k, item)) in m.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&repr_str(k));
                out.push_str(": ");
                write_repr(out, item);
            }
            out.push('}');
        }
    }
}

/// Python's `repr(float)`, including `inf`, `-inf` and `nan`.
pub(crate) fn float_repr(f: f64) -> String {
    if f.is_nan() {
        "nan".into()
    } else if f.is_infinite() {
        if f > 0.0 { "inf".into() } else { "-inf".into() }
    } else {
        python_float_repr(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn str_repr_matches_python() {
        assert_eq!(repr_str("abc"), "'abc'");
        assert_eq!(repr_str("it's"), "\"it's\"");
        assert_eq!(repr_str("'\""), "'\\'\"'");
        assert_eq!(repr_str("a\\b\n\t\r"), "'a\\\\b\\n\\t\\r'");
        assert_eq!(repr_str("\x1c\x7f\u{85}\u{a0}é"), "'\\x1c\\x7f\\x85\\xa0é'");
        assert_eq!(repr_str("\u{200b}\u{3000}"), "'\\u200b\\u3000'");
        assert_eq!(repr_str("\u{e0001}😀"), "'\\U000e0001😀'");
    }

    #[test]
    fn value_repr_matches_python() {
        let v = Value::List(vec![
            Value::Null,
            Value::Bool(true),
            Value::Float(1e16),
            Value::Float(f64::NEG_INFINITY),
            Value::Str("x".into()),
        ]);
        assert_eq!(repr_value(&v), "[None, True, 1e+16, -inf, 'x']");
    }
}
