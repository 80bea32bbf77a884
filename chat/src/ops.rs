//! Python's `+`, `%` and slicing: for the filters and tests that apply
//! them (`sum`, `odd`, `divisibleby`) and for the operators the source
//! rewrite turns into filters ([`crate::exprs`]).

use minijinja::value::ValueKind;
use minijinja::{Error, Value};

use crate::error::{PyExc, py_err, type_err};
use crate::repr;

fn int_of(v: &Value) -> Option<i128> {
    match v.kind() {
        ValueKind::Bool => Some(i128::from(v.is_true())),
        ValueKind::Number if v.is_integer() => i128::try_from(v.clone()).ok(),
        _ => None,
    }
}

fn float_of(v: &Value) -> Option<f64> {
    match v.kind() {
        ValueKind::Bool | ValueKind::Number => f64::try_from(v.clone()).ok(),
        _ => None,
    }
}

fn unsupported(op: &str, a: &Value, b: &Value) -> Error {
    type_err(format!(
        "unsupported operand type(s) for {op}: '{}' and '{}'",
        repr::type_name(a),
        repr::type_name(b)
    ))
}

/// Python's `a + b`.
pub(crate) fn add(a: &Value, b: &Value) -> Result<Value, Error> {
    if let (Some(x), Some(y)) = (int_of(a), int_of(b)) {
        return x
            .checked_add(y)
            .map(Value::from)
            .ok_or_else(|| py_err(PyExc::OverflowError, "integer overflow"));
    }
    if let (Some(x), Some(y)) = (float_of(a), float_of(b)) {
        return Ok(Value::from(x + y));
    }
    if let (Some(x), Some(y)) = (a.as_str(), b.as_str()) {
        return Ok(Value::from(format!("{x}{y}")));
    }
    let (ta, tb) = (repr::type_name(a), repr::type_name(b));
    if (ta == "list" && tb == "list") || (ta == "tuple" && tb == "tuple") {
        let mut items: Vec<Value> = a.try_iter()?.collect();
        items.extend(b.try_iter()?);
        return Ok(if ta == "tuple" {
            Value::from(minijinja::value::Tuple::from(items))
        } else {
            Value::from(items)
        });
    }
    Err(unsupported("+", a, b))
}

/// Python's `a % b` on numbers.
pub(crate) fn modulo(a: &Value, b: &Value) -> Result<Value, Error> {
    if let (Some(x), Some(y)) = (int_of(a), int_of(b)) {
        if y == 0 {
            return Err(py_err(PyExc::ZeroDivisionError, "integer modulo by zero"));
        }
        return Ok(Value::from(
            x.rem_euclid(y) + if y < 0 && x.rem_euclid(y) != 0 { y } else { 0 },
        ));
    }
    if let (Some(x), Some(y)) = (float_of(a), float_of(b)) {
        if y == 0.0 {
            return Err(py_err(PyExc::ZeroDivisionError, "float modulo"));
        }
        let r = x % y;
        let r = if r != 0.0 && (r < 0.0) != (y < 0.0) {
            r + y
        } else {
            r
        };
        return Ok(Value::from(r));
    }
    Err(unsupported("%", a, b))
}

/// The error jinja2 raises for using an undefined value: minijinja's own,
/// so that it names where the value came from (`'bos_token' is undefined`).
pub(crate) fn undefined_error(v: &Value) -> Error {
    v.get_attr("")
        .err()
        .unwrap_or_else(|| py_err(PyExc::UndefinedError, "undefined value"))
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&#34;")
        .replace('\'', "&#39;")
}

/// Python's `lhs % rhs` (the rewritten `%`): string formatting (a safe
/// string escapes what it formats in), or the floored remainder.
pub(crate) fn python_mod(lhs: &Value, rhs: &Value) -> Result<Value, Error> {
    for v in [lhs, rhs] {
        if v.is_undefined() {
            return Err(undefined_error(v));
        }
    }
    if let Some(s) = lhs.as_str() {
        if lhs.is_safe() {
            let escaped = escape_args(rhs)?;
            return crate::pyformat::percent_format(s, &escaped).map(Value::from_safe_string);
        }
        return crate::pyformat::percent_format(s, rhs).map(Value::from);
    }
    modulo(lhs, rhs)
}

/// `Markup.__mod__`'s escaping of the arguments.
fn escape_args(args: &Value) -> Result<Value, Error> {
    let esc = |v: &Value| {
        if v.is_safe() || v.kind() != ValueKind::String {
            v.clone()
        } else {
            Value::from_safe_string(html_escape(v.as_str().unwrap_or_default()))
        }
    };
    if args.is_tuple() {
        let items: Vec<Value> = args.try_iter()?.map(|v| esc(&v)).collect();
        return Ok(Value::from(minijinja::value::Tuple::from(items)));
    }
    Ok(esc(args))
}

/// Python's `lhs + rhs` (the rewritten `+`, in templates with safe
/// strings): `Markup + str` escapes the `str` and stays `Markup`.
pub(crate) fn python_add(lhs: &Value, rhs: &Value, max: usize) -> Result<Value, Error> {
    for v in [lhs, rhs] {
        if v.is_undefined() {
            return Err(undefined_error(v));
        }
    }
    if let (Some(a), Some(b)) = (lhs.as_str(), rhs.as_str()) {
        check_size(a.len() + b.len(), max)?;
    }
    if let (Some(a), Some(b)) = (lhs.as_str(), rhs.as_str())
        && (lhs.is_safe() || rhs.is_safe())
    {
        let a = if lhs.is_safe() {
            a.to_owned()
        } else {
            html_escape(a)
        };
        let b = if rhs.is_safe() {
            b.to_owned()
        } else {
            html_escape(b)
        };
        return Ok(Value::from_safe_string(a + &b));
    }
    if lhs.kind() == ValueKind::String && rhs.kind() != ValueKind::String {
        return Err(type_err(format!(
            "can only concatenate str (not \"{}\") to str",
            repr::type_name(rhs)
        )));
    }
    if repr::type_name(lhs) == "list" && repr::type_name(rhs) != "list" {
        return Err(type_err(format!(
            "can only concatenate list (not \"{}\") to list",
            repr::type_name(rhs)
        )));
    }
    if repr::type_name(lhs) == "tuple" && repr::type_name(rhs) != "tuple" {
        return Err(type_err(format!(
            "can only concatenate tuple (not \"{}\") to tuple",
            repr::type_name(rhs)
        )));
    }
    add(lhs, rhs)
}

/// Refuses a string of `len` bytes past the output bound (a template
/// doubling a string would otherwise fill memory before the fuel runs out).
fn check_size(len: usize, max: usize) -> Result<(), Error> {
    if len > max {
        return Err(py_err(
            PyExc::MemoryError,
            format!("a string of {len} bytes exceeds the output bound of {max} bytes"),
        ));
    }
    Ok(())
}

/// jinja2's `a ~ b ~ …`: `"".join(map(str, parts))` (undefined parts are
/// empty).
pub(crate) fn concat(parts: &[Value], max: usize) -> Result<Value, Error> {
    fn piece(v: &Value) -> Result<std::borrow::Cow<'_, str>, Error> {
        match v.as_str() {
            Some(s) => Ok(std::borrow::Cow::Borrowed(s)),
            None => {
                let mut out = String::new();
                repr::write_str(v, &mut out).map_err(|_| {
                    py_err(
                        PyExc::RecursionError,
                        "maximum recursion depth exceeded while getting the repr of an object",
                    )
                })?;
                Ok(std::borrow::Cow::Owned(out))
            }
        }
    }
    let pieces = parts.iter().map(piece).collect::<Result<Vec<_>, Error>>()?;
    let len = pieces.iter().map(|p| p.len()).sum();
    check_size(len, max)?;
    let mut out = String::with_capacity(len);
    for p in &pieces {
        out.push_str(p);
    }
    Ok(Value::from(out))
}

/// Python's unpacking of `value` into `n` targets (`set a, b = value`):
/// the items as a list, or its `TypeError` / `ValueError`.
pub(crate) fn unpack(value: &Value, n: usize) -> Result<Value, Error> {
    if value.is_undefined() {
        return Err(undefined_error(value));
    }
    let items = crate::seqfilters::py_iter(value).map_err(|_| {
        type_err(format!(
            "cannot unpack non-iterable {} object",
            repr::type_name(value)
        ))
    })?;
    if items.len() > n {
        return Err(crate::error::value_err(format!(
            "too many values to unpack (expected {n})"
        )));
    }
    if items.len() < n {
        return Err(crate::error::value_err(format!(
            "not enough values to unpack (expected {n}, got {})",
            items.len()
        )));
    }
    Ok(Value::from(items))
}

/// Python's unary `-x` / `+x`.
pub(crate) fn unary(op: &str, v: &Value) -> Result<Value, Error> {
    if v.is_undefined() {
        return Err(undefined_error(v));
    }
    match v.kind() {
        ValueKind::Bool | ValueKind::Number if v.is_integer() || v.kind() == ValueKind::Bool => {
            let n = int_of(v).unwrap_or(0);
            Ok(Value::from(if op == "-" { -n } else { n }))
        }
        ValueKind::Number => {
            let f = float_of(v).unwrap_or(0.0);
            Ok(Value::from(if op == "-" { -f } else { f }))
        }
        _ => Err(type_err(format!(
            "bad operand type for unary {op}: '{}'",
            repr::type_name(v)
        ))),
    }
}

/// A slice bound: `None` or an integer; anything else makes Python's
/// `TypeError`, which jinja2's `getitem` turns into an undefined value.
fn bound(v: &Value) -> Result<Option<i64>, ()> {
    match v.kind() {
        ValueKind::None | ValueKind::Undefined => Ok(None),
        ValueKind::Bool => Ok(Some(i64::from(v.is_true()))),
        ValueKind::Number if v.is_integer() => Ok(Some(v.as_i64().unwrap_or(i64::MAX))),
        _ => Err(()),
    }
}

/// Python's `obj[start:stop:step]` as jinja2's sandboxed `getitem` does it:
/// strings and lists slice, an undefined value raises, anything else (None,
/// numbers, dicts, generators) gives an undefined value.
pub(crate) fn python_slice(
    obj: &Value,
    start: &Value,
    stop: &Value,
    step: &Value,
) -> Result<Value, Error> {
    if obj.is_undefined() {
        return Err(undefined_error(obj));
    }
    let (Ok(start), Ok(stop), Ok(step)) = (bound(start), bound(stop), bound(step)) else {
        return Ok(Value::UNDEFINED);
    };
    let step = step.unwrap_or(1);
    if step == 0 {
        return Err(crate::error::value_err("slice step cannot be zero"));
    }
    let type_name = repr::type_name(obj);
    let items: Vec<Value> = match obj.kind() {
        ValueKind::String => obj
            .as_str()
            .unwrap_or_default()
            .chars()
            .map(Value::from)
            .collect(),
        _ if matches!(type_name, "list" | "tuple" | "range") => obj.try_iter()?.collect(),
        _ => return Ok(Value::UNDEFINED),
    };
    let len = i64::try_from(items.len()).unwrap_or(i64::MAX);
    let clamp = |v: Option<i64>, default: i64, lo: i64, hi: i64| -> i64 {
        match v {
            None => default,
            Some(x) => {
                let x = if x < 0 { x.saturating_add(len) } else { x };
                x.clamp(lo, hi)
            }
        }
    };
    let picked: Vec<Value> = if step > 0 {
        let (a, b) = (clamp(start, 0, 0, len), clamp(stop, len, 0, len));
        let mut out = Vec::new();
        let mut i = a;
        while i < b {
            out.push(items[usize::try_from(i).unwrap_or(0)].clone());
            i = i.saturating_add(step);
        }
        out
    } else {
        let (a, b) = (
            clamp(start, len - 1, -1, len - 1),
            clamp(stop, -1, -1, len - 1),
        );
        let mut out = Vec::new();
        let mut i = a;
        while i > b {
            out.push(items[usize::try_from(i).unwrap_or(0)].clone());
            i = i.saturating_add(step);
        }
        out
    };
    Ok(match obj.kind() {
        ValueKind::String => {
            let s: String = picked.iter().filter_map(|v| v.as_str()).collect();
            if obj.is_safe() {
                Value::from_safe_string(s)
            } else {
                Value::from(s)
            }
        }
        _ if type_name == "tuple" => Value::from(minijinja::value::Tuple::from(picked)),
        _ => Value::from(picked),
    })
}
