//! Python's `str()` and `repr()` of template values: how jinja2 prints
//! `{{ x }}` (`str(x)`), and how containers print their items (`repr`).
//!
//! `{{ {'a': [1, 'b']} }}` prints `{'a': [1, 'b']}`, `{{ true }}` `True`,
//! `{{ none }}` `None`, `{{ 1e-5 }}` `1e-05`, and strings inside containers
//! take Python's quotes and escapes (`"it's"`, `'\n'`, `'\x1b'`).

use std::fmt::Write as _;

use minijinja::Value;
use minijinja::value::{ObjectRepr, ValueKind};

use crate::unicode;
use crate::value::{BoundMethod, DictView, PyIter, Unsafe};

/// How deep `repr` descends before giving up (CPython raises
/// `RecursionError` near its recursion limit of 1000 frames).
pub(crate) const MAX_REPR_DEPTH: usize = 900;

/// Nesting deeper than [`MAX_REPR_DEPTH`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct TooDeep;

/// Python's type name of a value (`type(x).__name__`).
pub(crate) fn type_name(value: &Value) -> &'static str {
    match value.kind() {
        ValueKind::Undefined => "Undefined",
        ValueKind::None => "NoneType",
        ValueKind::Bool => "bool",
        ValueKind::Number => {
            if value.is_integer() {
                "int"
            } else {
                "float"
            }
        }
        ValueKind::String => {
            if value.is_safe() {
                "Markup"
            } else {
                "str"
            }
        }
        ValueKind::Bytes => "bytes",
        ValueKind::Seq => {
            if value.is_tuple() {
                "tuple"
            } else {
                "list"
            }
        }
        ValueKind::Map => {
            if is_namespace(value) {
                "Namespace"
            } else if is_macro(value) {
                "Macro"
            } else {
                "dict"
            }
        }
        ValueKind::Iterable => {
            if let Some(it) = value.downcast_object_ref::<PyIter>() {
                it.kind
            } else if let Some(view) = value.downcast_object_ref::<DictView>() {
                view.kind
            } else if value
                .downcast_object_ref::<crate::globals::PyRange>()
                .is_some()
            {
                "range"
            } else {
                // minijinja's lazy slices and concatenations are lists in Python.
                "list"
            }
        }
        _ => {
            if value.downcast_object_ref::<BoundMethod>().is_some() {
                "builtin_function_or_method"
            } else if value.downcast_object_ref::<Unsafe>().is_some() {
                "Undefined"
            } else if is_macro(value) {
                "Macro"
            } else {
                "function"
            }
        }
    }
}

/// A `{% macro %}` (minijinja's macro object is crate-private and reports
/// itself as a map of `name`, `arguments`, `caller`; its debug form is
/// `<macro NAME>`).
pub(crate) fn is_macro(value: &Value) -> bool {
    value.kind() == ValueKind::Map
        && value.as_object().is_some()
        && !is_own_dict(value)
        && debug_starts_with(value, "<macro ")
}

/// A Python `dict` (not a namespace or macro, which minijinja also reports
/// as maps).
pub(crate) fn is_dict(value: &Value) -> bool {
    value.kind() == ValueKind::Map && !is_namespace(value) && !is_macro(value)
}

/// A `namespace()` (minijinja's `Namespace` is crate-private too and reports
/// itself as a map; jinja2's is not a mapping).
pub(crate) fn is_namespace(value: &Value) -> bool {
    value.kind() == ValueKind::Map
        && value.as_object().is_some()
        && !is_own_dict(value)
        && debug_starts_with(value, "Namespace")
}

/// A dict of the input data ([`crate::value::PyDict`]): the usual map, told
/// apart by a type check before the `Debug` probe (which formats the
/// object).
fn is_own_dict(value: &Value) -> bool {
    value
        .downcast_object_ref::<crate::value::PyDict>()
        .is_some()
}

/// Whether the `Debug` form of an object starts with `prefix`, reading no
/// more than that: a writer that stops the formatting once it has enough.
fn debug_starts_with(value: &Value, prefix: &str) -> bool {
    struct Prefix<'a> {
        want: &'a str,
        got: String,
    }
    impl std::fmt::Write for Prefix<'_> {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            self.got.push_str(s);
            if self.got.len() >= self.want.len() {
                Err(std::fmt::Error)
            } else {
                Ok(())
            }
        }
    }
    let Some(obj) = value.as_object() else {
        return false;
    };
    let mut w = Prefix {
        want: prefix,
        got: String::new(),
    };
    let _ = write!(w, "{obj:?}");
    w.got.starts_with(prefix)
}

/// `str(value)` as jinja2 prints `{{ value }}`: strings as they are,
/// undefined as nothing, everything else as its `repr`.
pub(crate) fn write_str(value: &Value, out: &mut String) -> Result<(), TooDeep> {
    match value.kind() {
        ValueKind::Undefined => Ok(()),
        ValueKind::String => {
            out.push_str(value.as_str().unwrap_or_default());
            Ok(())
        }
        _ if value.downcast_object_ref::<Unsafe>().is_some() => Ok(()),
        _ => write_repr(value, out, 0),
    }
}

/// `str(value)` as a new string (containers nested too deep print as `...`).
pub(crate) fn str_string(value: &Value) -> String {
    let mut out = String::new();
    if write_str(value, &mut out).is_err() {
        out.push_str("...");
    }
    out
}

/// `repr(value)` as a new string (containers nested too deep print as `...`).
pub(crate) fn repr_string(value: &Value) -> String {
    let mut out = String::new();
    if write_repr(value, &mut out, 0).is_err() {
        out.push_str("...");
    }
    out
}

/// `repr(value)`.
pub(crate) fn write_repr(value: &Value, out: &mut String, depth: usize) -> Result<(), TooDeep> {
    if depth > MAX_REPR_DEPTH {
        return Err(TooDeep);
    }
    match value.kind() {
        ValueKind::Undefined => out.push_str("Undefined"),
        ValueKind::None => out.push_str("None"),
        ValueKind::Bool => out.push_str(if value.is_true() { "True" } else { "False" }),
        ValueKind::Number => {
            if value.is_integer() {
                let _ = write!(out, "{value}");
            } else {
                let f = f64::try_from(value.clone()).unwrap_or(f64::NAN);
                out.push_str(&float_repr(f));
            }
        }
        ValueKind::String => {
            let s = value.as_str().unwrap_or_default();
            if value.is_safe() {
                out.push_str("Markup(");
                string_repr(s, out);
                out.push(')');
            } else {
                string_repr(s, out);
            }
        }
        ValueKind::Bytes => {
            let _ = write!(out, "b'{value}'");
        }
        ValueKind::Seq if value.is_tuple() => {
            out.push('(');
            let items: Vec<Value> = value.try_iter().map(|i| i.collect()).unwrap_or_default();
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_repr(item, out, depth + 1)?;
            }
            if items.len() == 1 {
                out.push(',');
            }
            out.push(')');
        }
        ValueKind::Seq => write_list(value, out, depth)?,
        ValueKind::Map if is_macro(value) => {
            let name = value.get_item(&Value::from("name")).unwrap_or_default();
            let _ = write!(out, "<Macro {}>", repr_string(&name));
        }
        ValueKind::Map if is_namespace(value) => {
            out.push_str("<Namespace ");
            write_dict(value, out, depth)?;
            out.push('>');
        }
        ValueKind::Map => write_dict(value, out, depth)?,
        ValueKind::Iterable => {
            let is_list = value
                .as_object()
                .is_some_and(|o| o.repr() == ObjectRepr::Iterable)
                && value.downcast_object_ref::<PyIter>().is_none()
                && value.downcast_object_ref::<DictView>().is_none()
                && value
                    .downcast_object_ref::<crate::globals::PyRange>()
                    .is_none();
            if is_list {
                write_list(value, out, depth)?;
            } else {
                let _ = write!(out, "{value}");
            }
        }
        _ => {
            if value.downcast_object_ref::<Unsafe>().is_some() {
                out.push_str("Undefined");
            } else {
                let _ = write!(out, "{value}");
            }
        }
    }
    Ok(())
}

fn write_list(value: &Value, out: &mut String, depth: usize) -> Result<(), TooDeep> {
    out.push('[');
    if let Ok(iter) = value.try_iter() {
        for (i, item) in iter.enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            write_repr(&item, out, depth + 1)?;
        }
    }
    out.push(']');
    Ok(())
}

fn write_dict(value: &Value, out: &mut String, depth: usize) -> Result<(), TooDeep> {
    out.push('{');
    if let Ok(iter) = value.try_iter() {
        for (i, key) in iter.enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            write_repr(&key, out, depth + 1)?;
            out.push_str(": ");
            let item = value.get_item(&key).unwrap_or_default();
            write_repr(&item, out, depth + 1)?;
        }
    }
    out.push('}');
    Ok(())
}

/// Python's `repr(str)`: single quotes unless the text has a single quote
/// and no double quote; backslash escapes for the quote, `\\`, `\t`, `\n`,
/// `\r` and every character `str.isprintable()` rejects.
pub(crate) fn string_repr(s: &str, out: &mut String) {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
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
            c if unicode::is_printable(c) => out.push(c),
            c if (c as u32) < 0x100 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if (c as u32) < 0x10000 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => {
                let _ = write!(out, "\\U{:08x}", c as u32);
            }
        }
    }
    out.push(quote);
}

/// Python's `repr(float)`: the shortest digits that round trip, fixed
/// notation for decimal exponents -4 to 15, `1e-05` / `1e+16` style
/// outside, `nan`, `inf`.
pub(crate) fn float_repr(f: f64) -> String {
    if f.is_nan() {
        return "nan".to_owned();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf" } else { "-inf" }.to_owned();
    }
    shortest_float(f)
}

/// [`float_repr`] for finite values (shared with `json.dumps`, which only
/// spells the non-finite ones differently).
pub(crate) fn shortest_float(f: f64) -> String {
    let sci = format!("{f:e}"); // shortest round-trip digits: "-1.5e-7"
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    if (-4..16).contains(&exp) {
        let point = exp + 1; // digits before the decimal point
        let body = if point <= 0 {
            format!(
                "0.{}{digits}",
                "0".repeat(usize::try_from(-point).unwrap_or(0))
            )
        } else {
            let point = usize::try_from(point).unwrap_or(0);
            if digits.len() <= point {
                format!("{digits}{}.0", "0".repeat(point - digits.len()))
            } else {
                format!("{}.{}", &digits[..point], &digits[point..])
            }
        };
        format!("{sign}{body}")
    } else {
        let rest = digits.get(1..).unwrap_or("");
        let first = digits.get(..1).unwrap_or("0");
        let mantissa = if rest.is_empty() {
            first.to_owned()
        } else {
            format!("{first}.{rest}")
        };
        let esign = if exp < 0 { '-' } else { '+' };
        format!("{sign}{mantissa}e{esign}{:02}", exp.abs())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_print_as_python_repr() {
        for (f, want) in [
            (1.0, "1.0"),
            (0.1, "0.1"),
            (1e-5, "1e-05"),
            (1e-4, "0.0001"),
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (-2.5e-7, "-2.5e-07"),
            (123456789.125, "123456789.125"),
            (1.5e300, "1.5e+300"),
            (-0.0, "-0.0"),
        ] {
            assert_eq!(float_repr(f), want, "{f}");
        }
    }

    #[test]
    fn strings_repr_as_python() {
        let r = |s: &str| {
            let mut out = String::new();
            string_repr(s, &mut out);
            out
        };
        assert_eq!(r("a"), "'a'");
        assert_eq!(r("it's"), "\"it's\"");
        assert_eq!(r("it's \"x\""), "'it\\'s \"x\"'");
        assert_eq!(r("a\nb\t\\"), "'a\\nb\\t\\\\'");
        assert_eq!(
            r("\u{1b}\u{7f}\u{a0}é😀\u{200b}"),
            "'\\x1b\\x7f\\xa0é😀\\u200b'"
        );
    }
}
