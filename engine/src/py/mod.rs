//! Python built-ins that the reference relies on: `str.strip`, `int()`,
//! `float()`, `json.loads`, `json.dumps`, `repr()` and truthiness.
//!
//! The reference parses model output with plain Python, so its results carry
//! CPython's exact rules: which characters `strip()` removes, which strings
//! `int()` accepts, how `json.loads` reports an error. Each function here
//! reproduces one of those built-ins for the inputs retort can meet (strings
//! and [`Value`]s), including its error, typed as the Python exception the
//! reference would raise (see [`PyErr`]).

mod json;
mod num;
mod repr;

use crate::Value;
use crate::unicode_tables::{PY_SPACE, in_ranges};
use std::fmt;

pub use json::{
    JSON_MAX_DEPTH, JsonError, json_dumps_ascii, json_loads, json_loads_with_depth,
    json_object_entries,
};
pub use num::{PyValueError, float_is_integer, int_of_float, parse_float, parse_int};
pub use repr::{repr_str, repr_value};

/// The Python exception classes that the reference's value layer can raise.
///
/// Only the class name is observable (the conformance format records
/// `type(exc).__name__`), so this is a closed list of the ones that occur.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PyExc {
    /// `ValueError` (also `json.JSONDecodeError`'s base, which the reference
    /// always re-raises as a plain `ValueError`).
    ValueError,
    /// `TypeError`: a content argument or tool schema of the wrong type.
    TypeError,
    /// `AttributeError`: e.g. `content_args` that is not a dict (`.get` fails).
    AttributeError,
    /// `KeyError`: an undefined transform placeholder, an unknown nested parser.
    KeyError,
    /// `RecursionError`: nesting deeper than CPython's recursion limit allows.
    RecursionError,
    /// `regex.error`: a `tag_pattern` that does not compile.
    RegexError,
    /// Not raised by the reference: `pyre` ran out of its backtracking
    /// budget, where Python's `regex` would keep searching (for a very long
    /// time). Reported as `RuntimeError`.
    RuntimeError,
}

impl PyExc {
    /// The class name, as `type(exc).__name__` gives it.
    pub fn name(self) -> &'static str {
        match self {
            PyExc::ValueError => "ValueError",
            PyExc::TypeError => "TypeError",
            PyExc::AttributeError => "AttributeError",
            PyExc::KeyError => "KeyError",
            PyExc::RecursionError => "RecursionError",
            PyExc::RegexError => "error",
            PyExc::RuntimeError => "RuntimeError",
        }
    }
}

/// A Python exception: its class and `str(exc)`.
///
/// `message` is what `str(exc)` prints, so for a `KeyError` it is the `repr()`
/// of the key or message, quotes included, as Python shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PyErr {
    /// The exception class.
    pub kind: PyExc,
    /// `str(exc)`.
    pub message: String,
}

impl PyErr {
    /// An exception of class `kind` whose `str()` is `message`.
    pub fn new(kind: PyExc, message: impl Into<String>) -> PyErr {
        PyErr {
            kind,
            message: message.into(),
        }
    }

    /// A `ValueError`.
    pub fn value(message: impl Into<String>) -> PyErr {
        PyErr::new(PyExc::ValueError, message)
    }

    /// A `TypeError`.
    pub fn type_error(message: impl Into<String>) -> PyErr {
        PyErr::new(PyExc::TypeError, message)
    }

    /// `KeyError(arg)` where `arg` is a string: `str()` of a `KeyError` is the
    /// `repr()` of its argument.
    pub fn key_error_str(arg: &str) -> PyErr {
        PyErr::new(PyExc::KeyError, repr_str(arg))
    }

    /// The `AttributeError` of calling method `attr` on a value of type `ty`.
    pub fn no_attribute(ty: &str, attr: &str) -> PyErr {
        PyErr::new(
            PyExc::AttributeError,
            format!("'{ty}' object has no attribute '{attr}'"),
        )
    }

    /// The `RecursionError` CPython raises when its recursion limit is hit.
    pub fn recursion(context: &str) -> PyErr {
        PyErr::new(
            PyExc::RecursionError,
            format!("maximum recursion depth exceeded{context}"),
        )
    }
}

impl fmt::Display for PyErr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind.name(), self.message)
    }
}

impl std::error::Error for PyErr {}

impl From<PyValueError> for PyErr {
    fn from(e: PyValueError) -> PyErr {
        PyErr::value(e.message)
    }
}

impl From<JsonError> for PyErr {
    fn from(e: JsonError) -> PyErr {
        let kind = match e {
            JsonError::Recursion(_) => PyExc::RecursionError,
            JsonError::Decode { .. } | JsonError::IntTooLong(_) => PyExc::ValueError,
        };
        PyErr::new(kind, e.to_string())
    }
}

/// Python's `str.isspace()` for one character: what `str.strip()` and
/// `str.split()` treat as whitespace. Wider than Rust's `char::is_whitespace`:
/// it includes `\x1c`-`\x1f` (the ASCII information separators) and `\x85`.
pub fn is_space(c: char) -> bool {
    // ASCII (nearly every character stripped) without the table's binary
    // search: `\t`-`\r`, `\x1c`-`\x1f` and the space.
    if c.is_ascii() {
        return matches!(c as u8, b'\t'..=b'\r' | b'\x1c'..=b' ');
    }
    in_ranges(PY_SPACE, c)
}

/// Python's `str.strip()` with no argument.
pub fn strip(s: &str) -> &str {
    s.trim_matches(is_space)
}

/// Python's `str.split()` with no argument (`sep=None`): runs of whitespace
/// separate the pieces, and there are no empty pieces.
pub fn split_whitespace(s: &str) -> Vec<&str> {
    s.split(is_space).filter(|p| !p.is_empty()).collect()
}

/// Python truthiness (`bool(value)`) of a JSON-shaped value: `None`, `False`,
/// zero, and empty strings, lists and dicts are false. `NaN` is true.
pub fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Int(i) => *i != 0,
        // Only integers outside the i64 range are BigInt, so never zero.
        Value::BigInt(_) => true,
        Value::Float(f) => *f != 0.0,
        Value::Str(s) => !s.is_empty(),
        Value::List(l) => !l.is_empty(),
        Value::Map(m) => !m.is_empty(),
    }
}

/// The items Python's `for x in value` yields, for the value kinds that are
/// iterable (a dict yields its keys, a str its characters); for the others,
/// the `TypeError` that `iter()` raises.
pub fn iterate(v: &Value) -> Result<Vec<Value>, PyErr> {
    match v {
        Value::List(items) => Ok(items.clone()),
        Value::Map(m) => Ok(m.keys().map(|k| Value::Str(k.clone())).collect()),
        Value::Str(s) => Ok(s.chars().map(|c| Value::Str(c.to_string())).collect()),
        other => Err(PyErr::type_error(format!(
            "'{}' object is not iterable",
            other.type_name()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strip_uses_python_whitespace() {
        assert_eq!(strip("\x1c a \x1f"), "a");
        assert_eq!(strip("\u{85}\u{a0}x\u{3000}"), "x");
        assert_eq!(strip("\u{200b}x"), "\u{200b}x");
        assert_eq!(strip(""), "");
        assert!(is_space('\x1e'));
        assert!(!is_space('\u{200b}'));
    }

    #[test]
    fn is_space_agrees_with_the_table() {
        // The ASCII shortcut against the table it skips, and the table's
        // edges just past ASCII.
        for c in (0u32..0x3100).filter_map(char::from_u32) {
            assert_eq!(is_space(c), in_ranges(PY_SPACE, c), "{c:?}");
        }
    }

    #[test]
    fn split_whitespace_drops_empty_pieces() {
        assert_eq!(split_whitespace("  a\x1cb \u{85} c  "), vec!["a", "b", "c"]);
        assert!(split_whitespace(" \t ").is_empty());
    }

    #[test]
    fn truthiness() {
        assert!(!truthy(&Value::Null));
        assert!(!truthy(&Value::Float(-0.0)));
        assert!(truthy(&Value::Float(f64::NAN)));
        assert!(!truthy(&Value::Str(String::new())));
        assert!(truthy(&Value::Int(-1)));
        assert!(!truthy(&Value::Map(Default::default())));
    }

    #[test]
    fn iteration() {
        assert_eq!(iterate(&Value::Str("ab".into())).unwrap().len(), 2);
        let e = iterate(&Value::Int(3)).unwrap_err();
        assert_eq!(e.message, "'int' object is not iterable");
        assert_eq!(e.kind, PyExc::TypeError);
    }
}
