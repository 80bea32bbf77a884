//! Python methods on template values (`x.method(...)`): `str`'s (in
//! [`crate::pystr`]), `dict`'s and `list`'s, with the sandbox's refusals of
//! the mutating ones (`messages.append(...)` is a `SecurityError` under
//! transformers' `ImmutableSandboxedEnvironment`).

use minijinja::value::{Tuple, ValueKind};
use minijinja::{Error, ErrorKind, State, Value};

use crate::args;
use crate::compare::py_eq;
use crate::error::{PyExc, py_err, value_err};
use crate::repr;
use crate::value::{DictView, PyDict, is_mutating, unsafe_message};

/// The environment's unknown-method callback: every method call minijinja
/// does not resolve itself comes here.
pub(crate) fn unknown_method(
    state: &mut State,
    value: &Value,
    name: &str,
    args: &[Value],
) -> Result<Value, Error> {
    call_method(state, value, name, args)
}

/// `value.name(*args)` with Python's semantics.
pub(crate) fn call_method(
    state: &mut State,
    value: &Value,
    name: &str,
    args: &[Value],
) -> Result<Value, Error> {
    if value.is_undefined() {
        // jinja2 fails on the undefined value itself ("'dict object' has no
        // attribute 'content'"); minijinja reports an unknown method with
        // the undefined value's origin, which the error mapping words so.
        return Err(Error::from(ErrorKind::UnknownMethod));
    }
    let type_name = repr::type_name(value);
    if name.starts_with("__") && name.ends_with("__") && name.len() > 4 {
        // `x.__class__`, `x._private`: attributes the sandbox refuses; a
        // private *key* of a mapping would be found by the fallback below.
        if !(value.kind() == ValueKind::Map && has_key(value, name)) {
            return Err(py_err(
                PyExc::SecurityError,
                unsafe_message(type_name, name),
            ));
        }
    }
    if is_mutating(type_name, name) {
        return Err(py_err(
            PyExc::SecurityError,
            unsafe_message(type_name, name),
        ));
    }
    let found = match value.kind() {
        ValueKind::String => value
            .as_str()
            .and_then(|s| crate::pystr::call(state, value, s, name, args)),
        ValueKind::Map if type_name == "dict" => dict_method(value, name, args),
        ValueKind::Seq | ValueKind::Iterable if type_name == "list" || type_name == "tuple" => {
            list_method(value, type_name, name, args)
        }
        _ => None,
    };
    if let Some(result) = found {
        return result;
    }
    // Not a method of the type. A mapping (or namespace) may hold a callable
    // under that name (`ns.render()`); minijinja calls it when told the
    // method is unknown.
    if matches!(value.kind(), ValueKind::Map) && has_key(value, name) {
        return Err(Error::from(ErrorKind::UnknownMethod));
    }
    Err(py_err(PyExc::UndefinedError, no_attribute(value, name)))
}

fn has_key(value: &Value, name: &str) -> bool {
    value
        .get_item(&Value::from(name))
        .is_ok_and(|v| !v.is_undefined())
}

/// jinja2's message for a missing attribute of `value`.
pub(crate) fn no_attribute(value: &Value, name: &str) -> String {
    match value.kind() {
        ValueKind::None => format!("'None' has no attribute '{name}'"),
        ValueKind::Undefined => format!("'{name}' is undefined"),
        _ => format!(
            "'{} object' has no attribute '{name}'",
            repr::type_name(value)
        ),
    }
}

fn dict_method(value: &Value, name: &str, args: &[Value]) -> Option<Result<Value, Error>> {
    Some(match name {
        "get" => args::positional("get", args, 1, 2).and_then(|a| {
            crate::compare::check_hashable(&a[0])?;
            let found = match value.downcast_object_ref::<PyDict>() {
                Some(d) => d.map.get(&a[0]).cloned(),
                None => value.get_item(&a[0]).ok().filter(|v| !v.is_undefined()),
            };
            Ok(found.unwrap_or_else(|| a.get(1).cloned().unwrap_or(Value::from(()))))
        }),
        "keys" | "values" | "items" => args::positional(name, args, 0, 0).and_then(|_| {
            let keys: Vec<Value> = value.try_iter()?.collect();
            let items = match name {
                "keys" => keys,
                "values" => keys
                    .iter()
                    .map(|k| value.get_item(k).unwrap_or_default())
                    .collect(),
                _ => keys
                    .iter()
                    .map(|k| {
                        Value::from(Tuple::from(vec![
                            k.clone(),
                            value.get_item(k).unwrap_or_default(),
                        ]))
                    })
                    .collect(),
            };
            let kind = match name {
                "keys" => "dict_keys",
                "values" => "dict_values",
                _ => "dict_items",
            };
            Ok(Value::from_object(DictView { kind, items }))
        }),
        "copy" => args::positional("copy", args, 0, 0).and_then(|_| {
            let mut map = indexmap::IndexMap::new();
            for k in value.try_iter()? {
                let v = value.get_item(&k)?;
                map.insert(k, v);
            }
            Ok(Value::from_object(PyDict { map, depth: None }))
        }),
        "fromkeys" => fromkeys(args),
        _ => return None,
    })
}

/// `dict.fromkeys(iterable, value=None)`.
pub(crate) fn fromkeys(args: &[Value]) -> Result<Value, Error> {
    let a = args::positional("fromkeys", args, 1, 2)?;
    let fill = a.get(1).cloned().unwrap_or(Value::from(()));
    let mut map = indexmap::IndexMap::new();
    for k in a[0].try_iter().map_err(|_| {
        crate::error::type_err(format!(
            "'{}' object is not iterable",
            repr::type_name(&a[0])
        ))
    })? {
        crate::compare::check_hashable(&k)?;
        map.insert(k, fill.clone());
    }
    Ok(Value::from_object(PyDict { map, depth: None }))
}

fn list_method(
    value: &Value,
    type_name: &str,
    name: &str,
    args: &[Value],
) -> Option<Result<Value, Error>> {
    Some(match name {
        "count" => args::positional("count", args, 1, 1).and_then(|a| {
            Ok(Value::from(
                value.try_iter()?.filter(|x| py_eq(x, &a[0])).count(),
            ))
        }),
        "index" => args::positional("index", args, 1, 3).and_then(|a| {
            let items: Vec<Value> = value.try_iter()?.collect();
            let len = i64::try_from(items.len()).unwrap_or(i64::MAX);
            let norm = |v: Option<&Value>, default: i64| -> Result<i64, Error> {
                let n = match v {
                    None => default,
                    Some(v) => crate::pystr::int_arg(v)?,
                };
                Ok(if n < 0 { (n + len).max(0) } else { n.min(len) })
            };
            let start = norm(a.get(1), 0)?;
            let end = norm(a.get(2), len)?;
            let (start, end) = (
                usize::try_from(start).unwrap_or(0),
                usize::try_from(end).unwrap_or(0),
            );
            for (i, item) in items.iter().enumerate().take(end).skip(start) {
                if py_eq(item, &a[0]) {
                    return Ok(Value::from(i));
                }
            }
            Err(value_err(if type_name == "tuple" {
                "tuple.index(x): x not in tuple".to_owned()
            } else {
                format!("{} is not in list", repr::repr_string(&a[0]))
            }))
        }),
        "copy" if type_name == "list" => args::positional("copy", args, 0, 0)
            .and_then(|_| Ok(Value::from(value.try_iter()?.collect::<Vec<_>>()))),
        _ => return None,
    })
}
