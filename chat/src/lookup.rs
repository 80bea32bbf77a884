//! The sandbox's `getattr` and `getitem` (as filters and `str.format` use
//! them) and jinja2's attribute getters (`map(attribute='a.b')`,
//! `sort(attribute='x,y')`).

use minijinja::value::ValueKind;
use minijinja::{Error, Value};

use crate::error::{PyExc, py_err};
use crate::value::Unsafe;

/// `environment.getattr(obj, name)`: the attribute, else the item, else
/// undefined. [`crate::value::PyDict`] resolves attributes first itself.
pub(crate) fn getattr(obj: &Value, name: &str) -> Value {
    match obj.kind() {
        ValueKind::Undefined => Value::UNDEFINED,
        // a str's methods are its attributes (`s|attr('upper')`)
        ValueKind::String if crate::pystr::is_method(name) => {
            Value::from_object(crate::value::BoundMethod {
                receiver: obj.clone(),
                name: name.to_owned(),
            })
        }
        _ => obj.get_attr(name).unwrap_or_default(),
    }
}

/// `environment.getitem(obj, key)`: the item, else (string keys) the
/// attribute, else undefined.
pub(crate) fn getitem(obj: &Value, key: &Value) -> Value {
    match obj.kind() {
        ValueKind::Undefined => Value::UNDEFINED,
        _ => obj.get_item(key).unwrap_or_default(),
    }
}

/// Fails with the sandbox's `SecurityError` when `value` is the undefined it
/// returns for an unsafe attribute.
pub(crate) fn check_unsafe(value: &Value) -> Result<(), Error> {
    match value.downcast_object_ref::<Unsafe>() {
        Some(u) => Err(py_err(PyExc::SecurityError, u.message.clone())),
        None => Ok(()),
    }
}

/// One step of an attribute path: `"0"` is the index 0.
fn part_key(part: &str) -> Value {
    // `str.isdigit()`: Unicode digits count, but only ASCII ones parse here;
    // others stay strings (int() of them would succeed in Python — rare).
    if !part.is_empty()
        && part.chars().all(|c| c.is_ascii_digit())
        && let Ok(n) = part.parse::<i64>()
    {
        return Value::from(n);
    }
    Value::from(part)
}

/// jinja2's `make_attrgetter`: `attribute` is a dotted path (or an int);
/// each part is looked up with [`getitem`]; `default` replaces undefined
/// results along the way.
pub(crate) struct AttrGetter {
    parts: Vec<Value>,
    default: Option<Value>,
}

impl AttrGetter {
    pub(crate) fn new(attribute: &Value, default: Option<Value>) -> AttrGetter {
        let parts = if attribute.is_none() {
            Vec::new()
        } else if let Some(s) = attribute.as_str() {
            s.split('.').map(part_key).collect()
        } else {
            vec![attribute.clone()]
        };
        AttrGetter {
            parts,
            default: default.filter(|d| !d.is_none()),
        }
    }

    pub(crate) fn get(&self, item: &Value) -> Value {
        let mut item = item.clone();
        for part in &self.parts {
            item = getitem(&item, part);
            if item.is_undefined()
                && let Some(d) = &self.default
            {
                item = d.clone();
            }
        }
        item
    }
}

/// jinja2's `make_multi_attrgetter` (`sort(attribute="age,name")`): a list
/// of values per item.
pub(crate) fn multi_attrgetter(attribute: &Value) -> Vec<AttrGetter> {
    match attribute.as_str() {
        Some(s) => s
            .split(',')
            .map(|p| AttrGetter::new(&Value::from(p), None))
            .collect(),
        None => vec![AttrGetter::new(attribute, None)],
    }
}
