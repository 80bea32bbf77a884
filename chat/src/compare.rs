//! Python's `==` and `<` on template values, and `sorted()` with them: what
//! `sort`, `dictsort`, `min`, `max`, `unique`, `tojson(sort_keys=True)` and
//! the list methods compare with. Unlike minijinja's total order, Python
//! refuses to order unlike types (`TypeError`).

use std::cmp::Ordering;

use minijinja::value::ValueKind;
use minijinja::{Error, Value};

use crate::error::type_err;
use crate::repr;

/// A number as Python sees it (bools are ints).
enum Num {
    Int(i128),
    Float(f64),
}

fn number(v: &Value) -> Option<Num> {
    match v.kind() {
        ValueKind::Bool => Some(Num::Int(i128::from(v.is_true()))),
        ValueKind::Number if v.is_integer() => i128::try_from(v.clone()).ok().map(Num::Int),
        ValueKind::Number => f64::try_from(v.clone()).ok().map(Num::Float),
        _ => None,
    }
}

fn num_cmp(a: &Num, b: &Num) -> Option<Ordering> {
    match (a, b) {
        (Num::Int(a), Num::Int(b)) => Some(a.cmp(b)),
        (Num::Int(a), Num::Float(b)) => (*a as f64).partial_cmp(b),
        (Num::Float(a), Num::Int(b)) => a.partial_cmp(&(*b as f64)),
        (Num::Float(a), Num::Float(b)) => a.partial_cmp(b),
    }
}

fn is_list_like(v: &Value) -> bool {
    matches!(v.kind(), ValueKind::Seq | ValueKind::Iterable) && repr::type_name(v) == "list"
}

/// Python's `a == b`.
pub(crate) fn py_eq(a: &Value, b: &Value) -> bool {
    if let (Some(x), Some(y)) = (number(a), number(b)) {
        return num_cmp(&x, &y) == Some(Ordering::Equal);
    }
    match (a.kind(), b.kind()) {
        (ValueKind::String, ValueKind::String) => a.as_str() == b.as_str(),
        (ValueKind::None, ValueKind::None) => true,
        (ValueKind::Undefined, ValueKind::Undefined) => true,
        (ValueKind::Map, ValueKind::Map) => {
            if !repr::is_dict(a) || !repr::is_dict(b) {
                return false;
            }
            let (Ok(ak), Ok(bk)) = (a.try_iter(), b.try_iter()) else {
                return false;
            };
            let ak: Vec<Value> = ak.collect();
            let bk: Vec<Value> = bk.collect();
            ak.len() == bk.len()
                && ak.iter().all(|k| {
                    bk.iter().any(|k2| py_eq(k, k2))
                        && match (a.get_item(k), b.get_item(k)) {
                            (Ok(x), Ok(y)) => py_eq(&x, &y),
                            _ => false,
                        }
                })
        }
        _ => {
            let tuples = a.is_tuple() && b.is_tuple();
            let lists = is_list_like(a) && is_list_like(b);
            if tuples || lists {
                let (Ok(x), Ok(y)) = (a.try_iter(), b.try_iter()) else {
                    return false;
                };
                let x: Vec<Value> = x.collect();
                let y: Vec<Value> = y.collect();
                x.len() == y.len() && x.iter().zip(&y).all(|(p, q)| py_eq(p, q))
            } else {
                false
            }
        }
    }
}

/// Python's ordering of `a` and `b` (what `a < b` and `b < a` decide), or
/// the `TypeError` Python raises for `op`.
pub(crate) fn py_cmp(a: &Value, b: &Value) -> Result<Ordering, Error> {
    if let (Some(x), Some(y)) = (number(a), number(b)) {
        // NaN compares false both ways; treat it as equal (sorted() keeps order).
        return Ok(num_cmp(&x, &y).unwrap_or(Ordering::Equal));
    }
    if let (Some(x), Some(y)) = (a.as_str(), b.as_str()) {
        return Ok(x.cmp(y));
    }
    let tuples = a.is_tuple() && b.is_tuple();
    let lists = is_list_like(a) && is_list_like(b);
    if tuples || lists {
        let x: Vec<Value> = a.try_iter()?.collect();
        let y: Vec<Value> = b.try_iter()?.collect();
        for (p, q) in x.iter().zip(&y) {
            if !py_eq(p, q) {
                return py_cmp(p, q);
            }
        }
        return Ok(x.len().cmp(&y.len()));
    }
    Err(type_err(format!(
        "'<' not supported between instances of '{}' and '{}'",
        repr::type_name(a),
        repr::type_name(b)
    )))
}

/// jinja2's `ignore_case`: strings lowered, anything else as it is.
pub(crate) fn ignore_case(v: &Value) -> Value {
    match v.as_str() {
        Some(s) => Value::from(crate::unicode::lower(s)),
        None => v.clone(),
    }
}

/// `sorted(values, reverse=reverse)`: stable, failing like Python on
/// values that do not order.
pub(crate) fn sort_values(values: &mut [Value], reverse: bool) -> Result<(), Error> {
    let mut error = None;
    values.sort_by(|a, b| compare_or_record(a, b, reverse, &mut error));
    error.map_or(Ok(()), Err)
}

/// Sorts `items` by their keys (`sorted(items, key=..., reverse=...)`).
pub(crate) fn sort_by_keys(items: &mut [(Value, Value)], reverse: bool) -> Result<(), Error> {
    let mut error = None;
    items.sort_by(|a, b| compare_or_record(&a.0, &b.0, reverse, &mut error));
    error.map_or(Ok(()), Err)
}

fn compare_or_record(a: &Value, b: &Value, reverse: bool, error: &mut Option<Error>) -> Ordering {
    if error.is_some() {
        return Ordering::Equal;
    }
    // Python's sort only asks `x[i] < x[i-1]`; Rust's asks `is_less(later,
    // earlier)` too, so the message names the types in Python's order.
    match py_cmp(a, b) {
        Ok(o) => {
            if reverse {
                o.reverse()
            } else {
                o
            }
        }
        Err(e) => {
            *error = Some(e);
            Ordering::Equal
        }
    }
}

/// Whether Python could hash the value (dict keys, `unique`'s set).
pub(crate) fn check_hashable(v: &Value) -> Result<(), Error> {
    match v.kind() {
        ValueKind::Map => Err(type_err("unhashable type: 'dict'")),
        ValueKind::Seq | ValueKind::Iterable if !v.is_tuple() => Err(type_err(format!(
            "unhashable type: '{}'",
            repr::type_name(v)
        ))),
        _ => Ok(()),
    }
}

/// Python's `a < b` (and `>`, `<=`, `>=`): unlike types are a `TypeError`,
/// an undefined operand jinja2's `UndefinedError`, NaN compares false.
pub(crate) fn py_compare(a: &Value, op: &str, b: &Value) -> Result<Value, Error> {
    for v in [a, b] {
        if v.is_undefined() {
            return Err(crate::ops::undefined_error(v));
        }
    }
    if let (Some(x), Some(y)) = (number(a), number(b)) {
        let o = num_cmp(&x, &y);
        return Ok(Value::from(o.is_some_and(|o| holds(o, op))));
    }
    let o = py_cmp(a, b).map_err(|_| {
        type_err(format!(
            "'{op}' not supported between instances of '{}' and '{}'",
            repr::type_name(a),
            repr::type_name(b)
        ))
    })?;
    Ok(Value::from(holds(o, op)))
}

fn holds(o: Ordering, op: &str) -> bool {
    match op {
        "<" => o.is_lt(),
        ">" => o.is_gt(),
        "<=" => o.is_le(),
        _ => o.is_ge(),
    }
}
