//! The template's global names, as transformers sets them up: jinja2's
//! sandboxed `range`, `dict` (transformers' `TemplateDict`, with
//! `fromkeys`), `namespace` (`TemplateNamespace`, refusing `_` names),
//! `cycler`, `joiner`, and transformers' `raise_exception` and
//! `strftime_now`.

use std::sync::{Arc, Mutex};

use minijinja::value::{Enumerator, Object, ObjectRepr, Rest, ValueKind, ValueOrKwargs};
use minijinja::{Environment, Error, State, Value};

use crate::args;
use crate::error::{PyExc, py_err, type_err, value_err};
use crate::repr;
use crate::value::PyDict;

/// jinja2's sandbox: a range of more items than this is an `OverflowError`.
const MAX_RANGE: i128 = 100_000;

/// Registers the globals.
pub(crate) fn register(env: &mut Environment<'static>) {
    env.add_function("range", |args: Rest<ValueOrKwargs>| {
        range(&args.into_values())
    });
    env.add_global("dict", Value::from_object(TemplateDict));
    env.add_function("namespace", |args: Rest<ValueOrKwargs>| {
        namespace(&args.into_values())
    });
    env.add_function("raise_exception", |args: Rest<ValueOrKwargs>| {
        let args = args.into_values();
        let a = args::bind(
            "_cached_compile_jinja_template.<locals>.raise_exception",
            &args,
            &["message"],
            1,
        )?;
        let message = a[0].clone().unwrap_or_default();
        Err::<Value, Error>(py_err(PyExc::TemplateError, repr::str_string(&message)))
    });
    env.add_function(
        "strftime_now",
        |state: &State, args: Rest<ValueOrKwargs>| {
            let args = args.into_values();
            let a = args::bind(
                "_cached_compile_jinja_template.<locals>.strftime_now",
                &args,
                &["format"],
                1,
            )?;
            let format = a[0].clone().unwrap_or_default();
            let Some(format) = format.as_str() else {
                return Err(type_err(format!(
                    "strftime() argument 1 must be str, not {}",
                    repr::type_name(&format)
                )));
            };
            let now = crate::limits::now_of(state);
            Ok(Value::from(crate::strftime::strftime(&now, format)))
        },
    );
    env.add_global("joiner", Value::from_object(Class::Joiner));
    env.add_global("cycler", Value::from_object(Class::Cycler));
}

/// jinja2's `joiner` and `cycler` globals: classes, printed as Python
/// prints them, called to make one.
#[derive(Debug)]
enum Class {
    Joiner,
    Cycler,
}

impl Object for Class {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Plain
    }

    fn call(self: &Arc<Self>, _: &mut State<'_, '_>, args: &[Value]) -> Result<Value, Error> {
        match **self {
            Class::Joiner => {
                let a = args::bind("Joiner", args, &["sep"], 0)?;
                let sep = a[0].as_ref().map_or(", ".to_owned(), repr::str_string);
                Ok(Value::from_object(Joiner {
                    sep,
                    used: Mutex::new(false),
                }))
            }
            Class::Cycler => {
                let call = args::split(args);
                if call.positional.is_empty() {
                    return Err(type_err("at least one item has to be provided"));
                }
                Ok(Value::from_object(Cycler {
                    items: call.positional,
                    pos: Mutex::new(0),
                }))
            }
        }
    }

    fn render(self: &Arc<Self>, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match **self {
            Class::Joiner => f.write_str("<class 'jinja2.utils.Joiner'>"),
            Class::Cycler => f.write_str("<class 'jinja2.utils.Cycler'>"),
        }
    }
}

/// Python's `range` object (printed `range(0, 3)`, not JSON).
#[derive(Debug)]
pub(crate) struct PyRange {
    start: i128,
    stop: i128,
    step: i128,
}

impl PyRange {
    fn len(&self) -> usize {
        let n = if self.step > 0 && self.start < self.stop {
            (self.stop - self.start - 1) / self.step + 1
        } else if self.step < 0 && self.start > self.stop {
            (self.start - self.stop - 1) / (-self.step) + 1
        } else {
            0
        };
        usize::try_from(n).unwrap_or(0)
    }
}

impl Object for PyRange {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Iterable
    }

    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        let i = key.as_i64()?;
        let len = i64::try_from(self.len()).ok()?;
        let i = if i < 0 { i + len } else { i };
        (0..len)
            .contains(&i)
            .then(|| Value::from(self.start + i128::from(i) * self.step))
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        let (start, step, len) = (self.start, self.step, self.len());
        Enumerator::Iter(Box::new((0..len).map(move |i| {
            Value::from(start + i128::try_from(i).unwrap_or(0) * step)
        })))
    }

    fn enumerator_len(self: &Arc<Self>) -> Option<usize> {
        Some(self.len())
    }

    fn is_true(self: &Arc<Self>) -> bool {
        self.len() > 0
    }

    fn render(self: &Arc<Self>, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.step == 1 {
            write!(f, "range({}, {})", self.start, self.stop)
        } else {
            write!(f, "range({}, {}, {})", self.start, self.stop, self.step)
        }
    }
}

fn range_arg(v: &Value) -> Result<i128, Error> {
    match v.kind() {
        ValueKind::Bool => Ok(i128::from(v.is_true())),
        ValueKind::Number if v.is_integer() => i128::try_from(v.clone()).map_err(|_| {
            py_err(
                PyExc::OverflowError,
                "Python int too large to convert to C ssize_t",
            )
        }),
        _ => Err(type_err(format!(
            "'{}' object cannot be interpreted as an integer",
            repr::type_name(v)
        ))),
    }
}

/// `range(stop)` / `range(start, stop[, step])`, refusing more than
/// `MAX_RANGE` items as jinja2's `safe_range` does.
fn range(args: &[Value]) -> Result<Value, Error> {
    let call = args::split(args);
    if !call.keywords.is_empty() {
        return Err(type_err("range() takes no keyword arguments"));
    }
    let n = call.positional.len();
    let (start, stop, step) = match n {
        1 => (0, range_arg(&call.positional[0])?, 1),
        2 => (
            range_arg(&call.positional[0])?,
            range_arg(&call.positional[1])?,
            1,
        ),
        3 => (
            range_arg(&call.positional[0])?,
            range_arg(&call.positional[1])?,
            range_arg(&call.positional[2])?,
        ),
        0 => return Err(type_err("range expected at least 1 argument, got 0")),
        _ => {
            return Err(type_err(format!(
                "range expected at most 3 arguments, got {n}"
            )));
        }
    };
    if step == 0 {
        return Err(value_err("range() arg 3 must not be zero"));
    }
    let r = PyRange { start, stop, step };
    let len = if step > 0 && start < stop {
        (stop - start - 1) / step + 1
    } else if step < 0 && start > stop {
        (start - stop - 1) / (-step) + 1
    } else {
        0
    };
    if len > MAX_RANGE {
        return Err(py_err(
            PyExc::OverflowError,
            "Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).",
        ));
    }
    Ok(Value::from_object(r))
}

/// `dict(*args, **kwargs)` and `dict.fromkeys(...)`.
#[derive(Debug)]
struct TemplateDict;

impl Object for TemplateDict {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Plain
    }

    fn call(self: &Arc<Self>, _: &mut State<'_, '_>, args: &[Value]) -> Result<Value, Error> {
        make_dict(args)
    }

    fn call_method(
        self: &Arc<Self>,
        _: &mut State<'_, '_>,
        method: &str,
        args: &[Value],
    ) -> Result<Value, Error> {
        match method {
            "fromkeys" => crate::methods::fromkeys(args),
            _ => Err(py_err(
                PyExc::UndefinedError,
                format!("'TemplateDict object' has no attribute '{method}'"),
            )),
        }
    }

    fn render(self: &Arc<Self>, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<TemplateDict object at 0x7f0000000000>")
    }
}

/// Python's `dict(*args, **kwargs)`: at most one positional (a mapping, or
/// pairs), then the keywords.
pub(crate) fn make_dict(args: &[Value]) -> Result<Value, Error> {
    let call = args::split(args);
    if call.positional.len() > 1 {
        return Err(type_err(format!(
            "dict expected at most 1 argument, got {}",
            call.positional.len()
        )));
    }
    let mut map = indexmap::IndexMap::new();
    if let Some(first) = call.positional.first() {
        if repr::is_dict(first) {
            for k in first.try_iter()? {
                let v = first.get_item(&k)?;
                map.insert(k, v);
            }
        } else {
            let items = first.try_iter().map_err(|_| {
                type_err(format!(
                    "'{}' object is not iterable",
                    repr::type_name(first)
                ))
            })?;
            for (i, pair) in items.enumerate() {
                let parts: Vec<Value> = match pair.kind() {
                    ValueKind::Seq | ValueKind::Iterable => pair.try_iter()?.collect(),
                    ValueKind::String => pair
                        .as_str()
                        .unwrap_or_default()
                        .chars()
                        .map(Value::from)
                        .collect(),
                    _ => {
                        return Err(type_err(format!(
                            "cannot convert dictionary update sequence element #{i} to a sequence"
                        )));
                    }
                };
                if parts.len() != 2 {
                    return Err(value_err(format!(
                        "dictionary update sequence element #{i} has length {}; 2 is required",
                        parts.len()
                    )));
                }
                crate::compare::check_hashable(&parts[0])?;
                map.insert(parts[0].clone(), parts[1].clone());
            }
        }
    }
    for (k, v) in call.keywords {
        map.insert(Value::from(k), v);
    }
    Ok(Value::from_object(PyDict { map, depth: None }))
}

/// transformers' `TemplateNamespace`: `dict(*args, **kwargs)` as the
/// initial attributes, none of them `_`-prefixed.
fn namespace(args: &[Value]) -> Result<Value, Error> {
    let attrs = make_dict(args)?;
    for key in attrs.try_iter()? {
        if let Some(name) = key.as_str() {
            check_namespace_name(name)?;
        }
    }
    minijinja::functions::namespace(Some(attrs.into()))
}

/// The `SecurityError` transformers raises for an underscore attribute on a
/// namespace.
pub(crate) fn check_namespace_name(name: &str) -> Result<(), Error> {
    if name.starts_with('_') {
        return Err(py_err(
            PyExc::SecurityError,
            format!(
                "Chat templates cannot store underscore-prefixed attributes on a namespace, but got {}. Please rename the attribute.",
                repr::repr_string(&Value::from(name))
            ),
        ));
    }
    Ok(())
}

/// jinja2's `joiner`: `''` the first call, `sep` after.
#[derive(Debug)]
struct Joiner {
    sep: String,
    used: Mutex<bool>,
}

impl Object for Joiner {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Plain
    }

    fn call(self: &Arc<Self>, _: &mut State<'_, '_>, _: &[Value]) -> Result<Value, Error> {
        let mut used = self.used.lock().map_err(|_| value_err("joiner poisoned"))?;
        if *used {
            Ok(Value::from(self.sep.as_str()))
        } else {
            *used = true;
            Ok(Value::from(""))
        }
    }
}

/// jinja2's `cycler`: `next()`, `current`, `reset()`.
#[derive(Debug)]
struct Cycler {
    items: Vec<Value>,
    pos: Mutex<usize>,
}

impl Object for Cycler {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Plain
    }

    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        match key.as_str()? {
            "current" => {
                let pos = *self.pos.lock().ok()?;
                self.items.get(pos).cloned()
            }
            _ => None,
        }
    }

    fn call_method(
        self: &Arc<Self>,
        _: &mut State<'_, '_>,
        method: &str,
        _: &[Value],
    ) -> Result<Value, Error> {
        let mut pos = self.pos.lock().map_err(|_| value_err("cycler poisoned"))?;
        match method {
            "next" => {
                let v = self.items.get(*pos).cloned().unwrap_or_default();
                *pos = (*pos + 1) % self.items.len().max(1);
                Ok(v)
            }
            "reset" => {
                *pos = 0;
                Ok(Value::from(()))
            }
            _ => Err(py_err(
                PyExc::UndefinedError,
                format!("'Cycler object' has no attribute '{method}'"),
            )),
        }
    }
}
