//! jinja2's tests (`x is string`, `x is mapping`, …) with Python's type
//! rules: `True is number`, `True is not integer`, an undefined value is a
//! sequence and iterable, a generator is not a sequence, a namespace is not
//! a mapping.

use minijinja::value::{Rest, ValueKind, ValueOrKwargs};
use minijinja::{Environment, Error, State, Value};

use crate::args;
use crate::compare;
use crate::error::{PyExc, py_err, type_err};
use crate::repr;
use crate::unicode;

type TestFn = fn(&mut State, &[Value]) -> Result<bool, Error>;

fn all() -> Vec<(&'static str, TestFn)> {
    vec![
        ("odd", |_, a| parity(a, "test_odd", 1)),
        ("even", |_, a| parity(a, "test_even", 0)),
        ("divisibleby", divisibleby),
        ("defined", |_, a| {
            one(a, "test_defined").map(|v| {
                crate::attrs::probed(&v);
                !is_undefined(&v)
            })
        }),
        ("undefined", |_, a| {
            one(a, "test_undefined").map(|v| {
                crate::attrs::probed(&v);
                is_undefined(&v)
            })
        }),
        ("filter", |_, a| {
            one(a, "test_filter").map(|v| v.as_str().is_some_and(is_filter_name))
        }),
        ("test", |_, a| {
            one(a, "test_test").map(|v| v.as_str().is_some_and(is_test_name))
        }),
        ("none", |_, a| one(a, "test_none").map(|v| v.is_none())),
        ("boolean", |_, a| {
            one(a, "test_boolean").map(|v| v.kind() == ValueKind::Bool)
        }),
        ("false", |_, a| {
            one(a, "test_false").map(|v| v.kind() == ValueKind::Bool && !v.is_true())
        }),
        ("true", |_, a| {
            one(a, "test_true").map(|v| v.kind() == ValueKind::Bool && v.is_true())
        }),
        ("integer", |_, a| {
            one(a, "test_integer").map(|v| v.kind() == ValueKind::Number && v.is_integer())
        }),
        ("float", |_, a| {
            one(a, "test_float").map(|v| v.kind() == ValueKind::Number && !v.is_integer())
        }),
        ("lower", |_, a| {
            one(a, "test_lower").map(|v| is_lower(&repr::str_string(&v)))
        }),
        ("upper", |_, a| {
            one(a, "test_upper").map(|v| is_upper(&repr::str_string(&v)))
        }),
        ("string", |_, a| {
            one(a, "test_string").map(|v| v.kind() == ValueKind::String)
        }),
        ("mapping", |_, a| {
            one(a, "test_mapping").map(|v| crate::value::is_mapping(&v))
        }),
        ("number", |_, a| {
            one(a, "test_number").map(|v| matches!(v.kind(), ValueKind::Number | ValueKind::Bool))
        }),
        ("sequence", |_, a| {
            one(a, "test_sequence").map(|v| is_sequence(&v))
        }),
        ("iterable", |_, a| {
            one(a, "test_iterable").map(|v| is_iterable(&v))
        }),
        ("callable", |_, a| {
            one(a, "callable").map(|v| is_callable(&v))
        }),
        ("sameas", sameas),
        ("escaped", |_, a| {
            one(a, "test_escaped").map(|v| v.is_safe())
        }),
        ("in", contains_test),
        ("==", |_, a| {
            two(a, "eq").map(|(x, y)| compare::py_eq(&x, &y))
        }),
        ("eq", |_, a| {
            two(a, "eq").map(|(x, y)| compare::py_eq(&x, &y))
        }),
        ("equalto", |_, a| {
            two(a, "eq").map(|(x, y)| compare::py_eq(&x, &y))
        }),
        ("!=", |_, a| {
            two(a, "ne").map(|(x, y)| !compare::py_eq(&x, &y))
        }),
        ("ne", |_, a| {
            two(a, "ne").map(|(x, y)| !compare::py_eq(&x, &y))
        }),
        (">", |_, a| order(a, "gt", ">")),
        ("gt", |_, a| order(a, "gt", ">")),
        ("greaterthan", |_, a| order(a, "gt", ">")),
        (">=", |_, a| order(a, "ge", ">=")),
        ("ge", |_, a| order(a, "ge", ">=")),
        ("<", |_, a| order(a, "lt", "<")),
        ("lt", |_, a| order(a, "lt", "<")),
        ("lessthan", |_, a| order(a, "lt", "<")),
        ("<=", |_, a| order(a, "le", "<=")),
        ("le", |_, a| order(a, "le", "<=")),
    ]
}

/// Registers jinja2's tests.
pub(crate) fn register(env: &mut Environment<'static>) {
    for (name, f) in all() {
        env.add_test(name, move |state: &mut State, args: Rest<ValueOrKwargs>| {
            let args = args.into_values();
            f(state, &args)
        });
    }
}

/// Whether jinja2 has a test of this name (for `x is test`).
pub(crate) fn is_test_name(name: &str) -> bool {
    all().iter().any(|(n, _)| *n == name)
}

/// Whether jinja2 has a filter of this name (for `x is filter`).
pub(crate) fn is_filter_name(name: &str) -> bool {
    crate::filters::all().iter().any(|(n, _)| *n == name)
}

pub(crate) fn is_undefined(v: &Value) -> bool {
    v.is_undefined() || v.downcast_object_ref::<crate::value::Unsafe>().is_some()
}

fn one(args: &[Value], func: &str) -> Result<Value, Error> {
    let a = args::positional(func, args, 1, 1)?;
    Ok(a[0].clone())
}

fn two(args: &[Value], func: &str) -> Result<(Value, Value), Error> {
    let a = args::positional(func, args, 2, 2)?;
    Ok((a[0].clone(), a[1].clone()))
}

fn parity(args: &[Value], func: &str, want: i128) -> Result<bool, Error> {
    let v = one(args, func)?;
    let rem = crate::ops::modulo(&v, &Value::from(2))?;
    Ok(compare::py_eq(&rem, &Value::from(want)))
}

fn divisibleby(_: &mut State, args: &[Value]) -> Result<bool, Error> {
    let (v, n) = two(args, "test_divisibleby")?;
    let rem = crate::ops::modulo(&v, &n)?;
    Ok(compare::py_eq(&rem, &Value::from(0)))
}

fn is_lower(s: &str) -> bool {
    s.chars().any(unicode::is_lower)
        && !s
            .chars()
            .any(|c| unicode::is_upper(c) || unicode::is_title(c))
}

fn is_upper(s: &str) -> bool {
    s.chars().any(unicode::is_upper)
        && !s
            .chars()
            .any(|c| unicode::is_lower(c) || unicode::is_title(c))
}

/// `len(value)` works and `value.__getitem__` exists.
fn is_sequence(v: &Value) -> bool {
    match v.kind() {
        ValueKind::Undefined | ValueKind::String | ValueKind::Seq => true,
        ValueKind::Map => repr::is_dict(v),
        ValueKind::Iterable => matches!(repr::type_name(v), "list" | "range"),
        _ => v.downcast_object_ref::<crate::value::Unsafe>().is_some(),
    }
}

/// `iter(value)` works.
fn is_iterable(v: &Value) -> bool {
    match v.kind() {
        ValueKind::Undefined | ValueKind::String | ValueKind::Seq | ValueKind::Iterable => true,
        ValueKind::Map => repr::is_dict(v),
        _ => v.downcast_object_ref::<crate::value::Unsafe>().is_some(),
    }
}

fn is_callable(v: &Value) -> bool {
    // Undefined has __call__ (it raises), so callable() says yes.
    v.is_undefined()
        || (v.kind() == ValueKind::Plain
            && v.downcast_object_ref::<crate::value::Unsafe>().is_none())
        || repr::is_macro(v)
}

fn sameas(_: &mut State, args: &[Value]) -> Result<bool, Error> {
    let (a, b) = two(args, "test_sameas")?;
    // Identity: the singletons, and CPython's cached small ints.
    Ok(match (a.kind(), b.kind()) {
        (ValueKind::None, ValueKind::None) | (ValueKind::Undefined, ValueKind::Undefined) => {
            a.is_undefined() == b.is_undefined()
        }
        (ValueKind::Bool, ValueKind::Bool) => a.is_true() == b.is_true(),
        (ValueKind::Number, ValueKind::Number) if a.is_integer() && b.is_integer() => {
            let (x, y) = (a.as_i64(), b.as_i64());
            x == y && x.is_some_and(|x| (-5..=256).contains(&x))
        }
        _ => false,
    })
}

fn contains_test(_: &mut State, args: &[Value]) -> Result<bool, Error> {
    let (v, seq) = two(args, "test_in")?;
    py_contains(&seq, &v)
}

/// Python's `value in seq`.
pub(crate) fn py_contains(seq: &Value, value: &Value) -> Result<bool, Error> {
    match seq.kind() {
        ValueKind::String => match value.as_str() {
            Some(sub) => Ok(seq.as_str().unwrap_or_default().contains(sub)),
            None => Err(type_err(format!(
                "'in <string>' requires string as left operand, not {}",
                repr::type_name(value)
            ))),
        },
        ValueKind::Undefined => Ok(false),
        ValueKind::Map if repr::is_dict(seq) => {
            compare::check_hashable(value)?;
            Ok(seq.try_iter()?.any(|k| compare::py_eq(&k, value)))
        }
        ValueKind::Seq | ValueKind::Iterable => {
            Ok(seq.try_iter()?.any(|k| compare::py_eq(&k, value)))
        }
        _ => Err(type_err(format!(
            "argument of type '{}' is not iterable",
            repr::type_name(seq)
        ))),
    }
}

fn order(args: &[Value], func: &str, op: &str) -> Result<bool, Error> {
    let (a, b) = two(args, func)?;
    let o = compare::py_cmp(&a, &b).map_err(|_| {
        py_err(
            PyExc::TypeError,
            format!(
                "'{op}' not supported between instances of '{}' and '{}'",
                repr::type_name(&a),
                repr::type_name(&b)
            ),
        )
    })?;
    Ok(match op {
        ">" => o.is_gt(),
        ">=" => o.is_ge(),
        "<" => o.is_lt(),
        _ => o.is_le(),
    })
}
