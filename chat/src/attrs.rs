//! jinja2's `x.name` and `x[key]` in the sandbox (`getattr` / `getitem`),
//! which the source rewrite routes every attribute and subscript read
//! through ([`crate::exprs`]): a method is found before an item for
//! `x.name`, an item before a method for `x[key]`, dunder attributes are
//! refused, and a lookup that finds nothing records the message jinja2's
//! undefined value would carry ("'str object' has no attribute 'name'",
//! "None has no element 0") for when that value is used.

use std::cell::RefCell;

use minijinja::value::ValueKind;
use minijinja::{Error, Value};

use crate::ops::undefined_error;
use crate::repr;
use crate::value::{BoundMethod, PyDict, PyList, Unsafe, is_mutating, unsafe_message};

thread_local! {
    /// The messages of this render's latest lookups that found nothing,
    /// newest last. A probe (`x.y is defined`, `x.y|default(...)`) drops
    /// the miss it consumed, so that a later error names the lookup whose
    /// undefined value it used.
    static MISSES: RefCell<Vec<(u64, String)>> = const { RefCell::new(Vec::new()) };
    /// Counts the rewrite's calls, so that a probe knows whether the miss it
    /// sees was made by the call just before it.
    static TICK: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Counts one of the rewrite's calls; returns its number.
pub(crate) fn tick() -> u64 {
    TICK.with(|t| {
        let n = t.get() + 1;
        t.set(n);
        n
    })
}

/// How many misses are remembered.
const KEPT: usize = 16;

/// Forgets the missed lookups (a render starts).
pub(crate) fn clear_last_miss() {
    MISSES.with(|m| m.borrow_mut().clear());
}

/// The message of the last missed lookup.
pub(crate) fn last_miss() -> Option<String> {
    MISSES.with(|m| m.borrow().last().map(|(_, s)| s.clone()))
}

/// A probe (`is defined`, `default`) was applied to `value`: when it is the
/// undefined value the call just before made, that miss is consumed.
pub(crate) fn probed(value: &Value) {
    let now = tick();
    if value.is_undefined() {
        MISSES.with(|m| {
            let mut m = m.borrow_mut();
            if m.last().is_some_and(|(at, _)| *at + 1 == now) {
                m.pop();
            }
        });
    }
}

/// jinja2's `object_type_repr`.
fn owner(obj: &Value) -> String {
    let name = repr::type_name(obj);
    match name {
        "NoneType" => "None".to_owned(),
        "Markup" => "markupsafe.Markup object".to_owned(),
        "Namespace" => "transformers.utils.chat_template_utils.TemplateNamespace object".to_owned(),
        "Undefined" => "jinja2.runtime.Undefined object".to_owned(),
        "Macro" => "jinja2.runtime.Macro object".to_owned(),
        other => format!("{other} object"),
    }
}

/// Records that looking up `key` in `obj` found nothing, and returns the
/// undefined value jinja2 gives.
pub(crate) fn miss(obj: &Value, key: &Value) -> Value {
    let message = match key.as_str() {
        Some(name) => {
            let mut q = String::new();
            repr::string_repr(name, &mut q);
            let mut o = String::new();
            repr::string_repr(&owner(obj), &mut o);
            format!("{o} has no attribute {q}")
        }
        None => format!("{} has no element {}", owner(obj), repr::repr_string(key)),
    };
    let at = TICK.with(std::cell::Cell::get);
    MISSES.with(|m| {
        let mut m = m.borrow_mut();
        if m.len() >= KEPT {
            m.remove(0);
        }
        m.push((at, message));
    });
    Value::UNDEFINED
}

fn is_dunder(name: &str) -> bool {
    name.len() > 4 && name.starts_with("__") && name.ends_with("__")
}

/// The attribute `name` of `obj`, as Python's `getattr` finds it (methods
/// and the sandbox's refusals), or `None`.
fn python_attr(obj: &Value, name: &str) -> Option<Value> {
    let type_name = repr::type_name(obj);
    if is_dunder(name) || is_mutating(type_name, name) {
        return Some(Value::from_object(Unsafe {
            message: unsafe_message(type_name, name),
        }));
    }
    let method = match type_name {
        "str" | "Markup" => crate::pystr::is_method(name),
        "dict" => matches!(
            name,
            "copy" | "fromkeys" | "get" | "items" | "keys" | "values"
        ),
        "list" => matches!(name, "copy" | "count" | "index"),
        "tuple" => matches!(name, "count" | "index"),
        _ => false,
    };
    method.then(|| {
        Value::from_object(BoundMethod {
            receiver: obj.clone(),
            name: name.to_owned(),
        })
    })
}

/// `obj.name`.
pub(crate) fn getattr(obj: &Value, name: &str) -> Result<Value, Error> {
    tick();
    if obj.is_undefined() {
        return Err(undefined_error(obj));
    }
    crate::lookup::check_unsafe(obj)?;
    if obj.downcast_object_ref::<PyDict>().is_some()
        || obj.downcast_object_ref::<PyList>().is_some()
    {
        // these resolve attributes themselves (the method first)
        return Ok(match obj.get_attr(name) {
            Ok(v) if !v.is_undefined() => v,
            _ => miss(obj, &Value::from(name)),
        });
    }
    if let Some(v) = python_attr(obj, name) {
        return Ok(v);
    }
    let found = match obj.kind() {
        ValueKind::None | ValueKind::Bool | ValueKind::Number | ValueKind::String => None,
        // a dict's (or namespace's, loop's, macro's) item, minijinja's way
        _ => obj.get_attr(name).ok().filter(|v| !v.is_undefined()),
    };
    if found.is_none() && obj.kind() == ValueKind::Map && has_key(obj, name) {
        // an undefined value stored under that name (`set ns.x = d.missing`)
        return Ok(Value::UNDEFINED);
    }
    Ok(found.unwrap_or_else(|| miss(obj, &Value::from(name))))
}

fn has_key(obj: &Value, name: &str) -> bool {
    obj.try_iter()
        .is_ok_and(|mut keys| keys.any(|k| k.as_str() == Some(name)))
}

/// `obj[key]`.
pub(crate) fn getitem(obj: &Value, key: &Value) -> Result<Value, Error> {
    tick();
    if obj.is_undefined() {
        return Err(undefined_error(obj));
    }
    crate::lookup::check_unsafe(obj)?;
    let found =
        match obj.kind() {
            ValueKind::Seq | ValueKind::String | ValueKind::Iterable
                if key.kind() == ValueKind::Number && key.is_integer() =>
            {
                index(obj, key)
            }
            ValueKind::Map if repr::is_dict(obj) => crate::compare::check_hashable(key)
                .ok()
                .and_then(|_| match obj.downcast_object_ref::<PyDict>() {
                    Some(d) => d.map.get(key).cloned(),
                    None => obj.get_item(key).ok().filter(|v| !v.is_undefined()),
                }),
            ValueKind::None
            | ValueKind::Bool
            | ValueKind::Number
            | ValueKind::Seq
            | ValueKind::String => None,
            _ => obj.get_item(key).ok().filter(|v| !v.is_undefined()),
        };
    if let Some(v) = found {
        return Ok(v);
    }
    // a string key falls back to the attribute
    if let Some(name) = key.as_str() {
        if let Some(v) = python_attr(obj, name) {
            return Ok(v);
        }
        if !repr::is_dict(obj)
            && !matches!(
                obj.kind(),
                ValueKind::None
                    | ValueKind::Bool
                    | ValueKind::Number
                    | ValueKind::String
                    | ValueKind::Seq
            )
            && let Some(v) = obj.get_attr(name).ok().filter(|v| !v.is_undefined())
        {
            return Ok(v);
        }
    }
    Ok(miss(obj, key))
}

/// `seq[i]` for a list, tuple, string or sized iterable (negative indices
/// from the end); `None` out of range and for unsized iterables.
fn index(obj: &Value, key: &Value) -> Option<Value> {
    let i = key.as_i64()?;
    if obj.kind() == ValueKind::String {
        let s = obj.as_str().unwrap_or_default();
        let len = i64::try_from(s.chars().count()).ok()?;
        let i = if i < 0 { i + len } else { i };
        return usize::try_from(i)
            .ok()
            .and_then(|i| s.chars().nth(i))
            .map(Value::from);
    }
    if let Some(l) = obj.downcast_object_ref::<PyList>() {
        let len = i64::try_from(l.items.len()).ok()?;
        let i = if i < 0 { i + len } else { i };
        return usize::try_from(i)
            .ok()
            .and_then(|i| l.items.get(i))
            .cloned();
    }
    if obj.kind() == ValueKind::Iterable && !matches!(repr::type_name(obj), "list" | "range") {
        return None; // generators and views are not subscriptable
    }
    let len = i64::try_from(obj.len()?).ok()?;
    let i = if i < 0 { i + len } else { i };
    if !(0..len).contains(&i) {
        return None;
    }
    obj.get_item(&Value::from(i))
        .ok()
        .filter(|v| !v.is_undefined())
}
