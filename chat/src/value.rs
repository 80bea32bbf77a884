//! The values templates see: JSON data as Python's `dict` and `list`.
//!
//! transformers hands the template plain Python data (`_plain_template_data`),
//! and jinja2 resolves `x.name` and `x[key]` on it in different orders:
//! `d.items` is the bound method `dict.items` even when `d` has an `"items"`
//! key, `d["items"]` is the key (and the method only when the key is
//! missing). minijinja's own maps cannot tell the two lookups apart, so input
//! data becomes [`PyDict`] and [`PyList`], whose attribute lookup
//! (`get_value_by_str`, what minijinja's `x.name` calls) and item lookup
//! (`get_value`) follow jinja2's sandbox. They also print as Python does
//! (`{'a': 1}`), also where minijinja stringifies them itself (`~`).
//!
//! Values the template makes itself (literals, filter results) stay
//! minijinja's; [`crate::repr`] prints those the Python way too.

use std::sync::{Arc, Mutex};

use indexmap::IndexMap;
use minijinja::value::{Enumerator, Object, ObjectExt, ObjectRepr, Value};
use minijinja::{Error, State};

use crate::error::{PyExc, py_err};
use crate::methods;
use crate::repr;

/// A Python `dict` built from JSON (insertion-ordered, immutable: the
/// sandbox refuses the mutating methods).
#[derive(Debug, Default)]
pub(crate) struct PyDict {
    pub(crate) map: IndexMap<Value, Value>,
    /// How deeply the dict nests (1: no containers inside), when known: the
    /// depth check of stored values need not walk input data again.
    pub(crate) depth: Option<usize>,
}

/// A Python `list` built from JSON.
#[derive(Debug, Default)]
pub(crate) struct PyList {
    pub(crate) items: Vec<Value>,
    /// As [`PyDict::depth`].
    pub(crate) depth: Option<usize>,
}

/// The attributes jinja2 finds on a `dict` with `getattr` (methods). Names
/// here win over same-named keys for `d.name`.
const DICT_ATTRS: &[&str] = &[
    "clear",
    "copy",
    "fromkeys",
    "get",
    "items",
    "keys",
    "pop",
    "popitem",
    "setdefault",
    "update",
    "values",
];

/// The attributes of a `list`.
const LIST_ATTRS: &[&str] = &[
    "append", "clear", "copy", "count", "extend", "index", "insert", "pop", "remove", "reverse",
    "sort",
];

/// The methods `ImmutableSandboxedEnvironment` refuses (`modifies_known_mutable`):
/// looking one up gives an undefined that raises `SecurityError` when called.
pub(crate) fn is_mutating(type_name: &str, name: &str) -> bool {
    match type_name {
        "dict" => matches!(name, "clear" | "pop" | "popitem" | "setdefault" | "update"),
        "list" => matches!(
            name,
            "append" | "clear" | "pop" | "reverse" | "insert" | "sort" | "extend" | "remove"
        ),
        _ => false,
    }
}

/// The sandbox's message for an unsafe attribute.
pub(crate) fn unsafe_message(type_name: &str, name: &str) -> String {
    format!("access to attribute '{name}' of '{type_name}' object is unsafe.")
}

/// Python's dunder attributes exist on every object; the sandbox treats any
/// `_`-prefixed attribute as unsafe. Only real attributes are refused: a key
/// `"_x"` is still found by `d._x` (getattr fails first, then the item).
fn is_dunder(name: &str) -> bool {
    name.len() > 4 && name.starts_with("__") && name.ends_with("__")
}

impl Object for PyDict {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Map
    }

    /// `d[key]`: the item, else (string keys) the attribute.
    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        if let Some(v) = self.map.get(key) {
            return Some(v.clone());
        }
        key.as_str().and_then(|name| {
            attribute(
                &Value::from_dyn_object(self.clone()),
                "dict",
                name,
                DICT_ATTRS,
            )
        })
    }

    /// `d.name`: the attribute (a method), else the item.
    fn get_value_by_str(self: &Arc<Self>, name: &str) -> Option<Value> {
        if let Some(v) = attribute(
            &Value::from_dyn_object(self.clone()),
            "dict",
            name,
            DICT_ATTRS,
        ) {
            return Some(v);
        }
        self.map.get(&Value::from(name)).cloned()
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        self.mapped_enumerator(|this| Box::new(this.map.keys().cloned()))
    }

    fn enumerator_len(self: &Arc<Self>) -> Option<usize> {
        Some(self.map.len())
    }

    fn is_true(self: &Arc<Self>) -> bool {
        !self.map.is_empty()
    }

    fn call_method(
        self: &Arc<Self>,
        state: &mut State<'_, '_>,
        method: &str,
        args: &[Value],
    ) -> Result<Value, Error> {
        methods::call_method(state, &Value::from_dyn_object(self.clone()), method, args)
    }

    fn render(self: &Arc<Self>, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&repr::repr_string(&Value::from_dyn_object(self.clone())))
    }
}

impl Object for PyList {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Seq
    }

    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        if let Some(i) = key.as_i64() {
            // minijinja normalises negative indices before asking.
            usize::try_from(i)
                .ok()
                .and_then(|i| self.items.get(i))
                .cloned()
        } else {
            key.as_str().and_then(|name| {
                attribute(
                    &Value::from_dyn_object(self.clone()),
                    "list",
                    name,
                    LIST_ATTRS,
                )
            })
        }
    }

    fn get_value_by_str(self: &Arc<Self>, name: &str) -> Option<Value> {
        attribute(
            &Value::from_dyn_object(self.clone()),
            "list",
            name,
            LIST_ATTRS,
        )
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::Seq(self.items.len())
    }

    fn enumerator_len(self: &Arc<Self>) -> Option<usize> {
        Some(self.items.len())
    }

    fn is_true(self: &Arc<Self>) -> bool {
        !self.items.is_empty()
    }

    fn call_method(
        self: &Arc<Self>,
        state: &mut State<'_, '_>,
        method: &str,
        args: &[Value],
    ) -> Result<Value, Error> {
        methods::call_method(state, &Value::from_dyn_object(self.clone()), method, args)
    }

    fn render(self: &Arc<Self>, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&repr::repr_string(&Value::from_dyn_object(self.clone())))
    }
}

/// jinja2's `getattr(obj, name)` on a dict or list: a method (bound), the
/// sandbox's refusal for a dunder, or nothing.
///
/// `type_name` is the receiver's Python type (`dict`, `list`): known to the
/// caller, so no lookup asks for it (on every `m.role`, that cost a fifth of
/// a render).
fn attribute(
    receiver: &Value,
    type_name: &'static str,
    name: &str,
    attrs: &[&str],
) -> Option<Value> {
    if is_dunder(name) || is_mutating(type_name, name) {
        return Some(Value::from_object(Unsafe {
            message: unsafe_message(type_name, name),
        }));
    }
    if attrs.contains(&name) {
        return Some(Value::from_object(BoundMethod {
            receiver: receiver.clone(),
            name: name.to_owned(),
        }));
    }
    None
}

/// A method looked up without being called (`d.items`): truthy, callable,
/// printed as Python prints a bound built-in method.
#[derive(Debug)]
pub(crate) struct BoundMethod {
    pub(crate) receiver: Value,
    pub(crate) name: String,
}

impl Object for BoundMethod {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Plain
    }

    fn is_true(self: &Arc<Self>) -> bool {
        true
    }

    fn call(self: &Arc<Self>, state: &mut State<'_, '_>, args: &[Value]) -> Result<Value, Error> {
        methods::call_method(state, &self.receiver, &self.name, args)
    }

    fn render(self: &Arc<Self>, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // CPython prints the object's address; any address will do.
        write!(
            f,
            "<built-in method {} of {} object at 0x7f0000000000>",
            self.name,
            repr::type_name(&self.receiver)
        )
    }
}

/// What the sandbox returns for an unsafe attribute: an undefined value that
/// prints as nothing and raises `SecurityError` when called.
#[derive(Debug)]
pub(crate) struct Unsafe {
    pub(crate) message: String,
}

impl Object for Unsafe {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Plain
    }

    fn is_true(self: &Arc<Self>) -> bool {
        false
    }

    fn call(self: &Arc<Self>, _: &mut State<'_, '_>, _: &[Value]) -> Result<Value, Error> {
        Err(py_err(PyExc::SecurityError, self.message.clone()))
    }

    fn call_method(
        self: &Arc<Self>,
        _: &mut State<'_, '_>,
        _: &str,
        _: &[Value],
    ) -> Result<Value, Error> {
        Err(py_err(PyExc::SecurityError, self.message.clone()))
    }

    fn render(self: &Arc<Self>, _: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        Ok(())
    }
}

/// A Python iterator or generator (`map`, `select`, `reverse`, `items`, …):
/// iterates once, has no length, and is not JSON. `kind` is its Python type
/// name, `func` the generator function's (for printing), and `deferred` an
/// exception the generator raises when first iterated (jinja2's generator
/// filters check their input lazily).
pub(crate) struct PyIter {
    pub(crate) kind: &'static str,
    func: Option<&'static str>,
    iter: Mutex<Option<Box<dyn Iterator<Item = Value> + Send + Sync>>>,
    pub(crate) deferred: Option<crate::error::PyError>,
}

impl std::fmt::Debug for PyIter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "<{} object>", self.kind)
    }
}

impl PyIter {
    /// A one-shot iterator of Python type `kind` over `iter`.
    pub(crate) fn wrap(
        kind: &'static str,
        iter: impl Iterator<Item = Value> + Send + Sync + 'static,
    ) -> Value {
        Value::from_object(PyIter {
            kind,
            func: None,
            iter: Mutex::new(Some(Box::new(iter))),
            deferred: None,
        })
    }

    /// A generator made by the jinja2 function `func`.
    pub(crate) fn generator(
        func: &'static str,
        iter: impl Iterator<Item = Value> + Send + Sync + 'static,
    ) -> Value {
        Value::from_object(PyIter {
            kind: "generator",
            func: Some(func),
            iter: Mutex::new(Some(Box::new(iter))),
            deferred: None,
        })
    }

    /// A generator of `func` that raises `exc(message)` when iterated.
    pub(crate) fn failing(func: &'static str, exc: PyExc, message: impl Into<String>) -> Value {
        Value::from_object(PyIter {
            kind: "generator",
            func: Some(func),
            iter: Mutex::new(None),
            deferred: Some(crate::error::PyError {
                exc,
                message: message.into(),
            }),
        })
    }
}

impl Object for PyIter {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Iterable
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        if let Some(e) = &self.deferred {
            return Enumerator::Values(vec![Value::from(py_err(e.exc, e.message.clone()))]);
        }
        // Python's iterators are exhausted by the first pass; later passes
        // see nothing.
        let taken = self.iter.lock().ok().and_then(|mut slot| slot.take());
        match taken {
            Some(iter) => Enumerator::Iter(iter),
            None => Enumerator::Empty,
        }
    }

    fn enumerator_len(self: &Arc<Self>) -> Option<usize> {
        None
    }

    fn is_true(self: &Arc<Self>) -> bool {
        true
    }

    fn render(self: &Arc<Self>, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.func {
            Some(func) => write!(f, "<{} object {func} at 0x7f0000000000>", self.kind),
            None => write!(f, "<{} object at 0x7f0000000000>", self.kind),
        }
    }
}

/// `dict.keys()`, `.values()`, `.items()`: sized, iterable many times, not
/// subscriptable, printed as `dict_items([...])`.
#[derive(Debug)]
pub(crate) struct DictView {
    pub(crate) kind: &'static str,
    pub(crate) items: Vec<Value>,
}

impl Object for DictView {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Iterable
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        self.mapped_enumerator(|this| Box::new(this.items.iter().cloned()))
    }

    fn enumerator_len(self: &Arc<Self>) -> Option<usize> {
        Some(self.items.len())
    }

    fn is_true(self: &Arc<Self>) -> bool {
        !self.items.is_empty()
    }

    fn render(self: &Arc<Self>, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let list = Value::from(self.items.clone());
        write!(f, "{}({})", self.kind, repr::repr_string(&list))
    }
}

/// Converts JSON into template values, refusing nesting deeper than `depth`
/// (the conversion, printing and `tojson` recurse).
pub(crate) fn from_json(value: &serde_json::Value, depth: usize) -> Result<Value, DepthExceeded> {
    from_json_depth(value, depth).map(|(v, _)| v)
}

/// [`from_json`], with the depth of the value made.
fn from_json_depth(
    value: &serde_json::Value,
    depth: usize,
) -> Result<(Value, usize), DepthExceeded> {
    if depth == 0 {
        return Err(DepthExceeded);
    }
    let mut inner = 0;
    let v = match value {
        serde_json::Value::Null => Value::from(()),
        serde_json::Value::Bool(b) => Value::from(*b),
        serde_json::Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Value::from(i)
            } else if let Some(u) = n.as_u64() {
                Value::from(u)
            } else {
                Value::from(n.as_f64().unwrap_or(f64::NAN))
            }
        }
        serde_json::Value::String(s) => Value::from(s.as_str()),
        serde_json::Value::Array(items) => {
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                let (v, d) = from_json_depth(item, depth - 1)?;
                inner = inner.max(d);
                out.push(v);
            }
            Value::from_object(PyList {
                items: out,
                depth: Some(inner + 1),
            })
        }
        serde_json::Value::Object(map) => {
            let mut out = IndexMap::with_capacity(map.len());
            for (k, v) in map {
                let (v, d) = from_json_depth(v, depth - 1)?;
                inner = inner.max(d);
                out.insert(Value::from(k.as_str()), v);
            }
            Value::from_object(PyDict {
                map: out,
                depth: Some(inner + 1),
            })
        }
    };
    let own = match value {
        serde_json::Value::Array(_) | serde_json::Value::Object(_) => inner + 1,
        _ => 0,
    };
    Ok((v, own))
}

/// Fails when `value` nests containers more than `limit` deep (a stored
/// value; see the `set` rewrite). Iterative, and it does not descend into
/// input data, whose depth is known, nor consume generators.
pub(crate) fn check_stored_depth(value: &Value, limit: usize) -> Result<(), Error> {
    use minijinja::value::ValueKind;
    // (value, how many containers enclose it)
    let mut stack: Vec<(Value, usize)> = vec![(value.clone(), 0)];
    while let Some((v, d)) = stack.pop() {
        let known = v
            .downcast_object_ref::<PyDict>()
            .map(|x| x.depth)
            .or_else(|| v.downcast_object_ref::<PyList>().map(|x| x.depth))
            .flatten();
        let container = known.is_some()
            || matches!(v.kind(), ValueKind::Seq | ValueKind::Iterable)
            || repr::is_dict(&v);
        if !container {
            continue;
        }
        if d + known.unwrap_or(1) > limit {
            return Err(py_err(
                PyExc::RecursionError,
                format!("a value nested more than {limit} deep was stored"),
            ));
        }
        if known.is_some() || v.downcast_object_ref::<PyIter>().is_some() {
            continue;
        }
        if repr::is_dict(&v) {
            if let Ok(keys) = v.try_iter() {
                for k in keys {
                    let item = v.get_item(&k).unwrap_or_default();
                    stack.push((item, d + 1));
                }
            }
        } else if let Ok(items) = v.try_iter() {
            stack.extend(items.map(|i| (i, d + 1)));
        }
    }
    Ok(())
}

/// Whether `value` nests deeper than `limit` (iteratively: the caller's
/// data may be too deep for any recursion, including `clone`).
pub(crate) fn too_deep(value: &serde_json::Value, limit: usize) -> bool {
    let mut stack: Vec<(&serde_json::Value, usize)> = vec![(value, 1)];
    while let Some((v, d)) = stack.pop() {
        if d > limit {
            return true;
        }
        match v {
            serde_json::Value::Array(items) => stack.extend(items.iter().map(|i| (i, d + 1))),
            serde_json::Value::Object(map) => stack.extend(map.values().map(|i| (i, d + 1))),
            _ => {}
        }
    }
    false
}

/// Input nested deeper than [`crate::Limits::depth`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct DepthExceeded;

/// Whether a value is a mapping as Python sees it (`dict`; not a namespace,
/// which minijinja also reports as a map).
pub(crate) fn is_mapping(value: &Value) -> bool {
    repr::is_dict(value)
}
