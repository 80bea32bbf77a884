//! Python's `+` and `%` for the filters and tests that apply them
//! (`sum`, `odd`, `divisibleby`); the template's own operators are
//! minijinja's.

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
