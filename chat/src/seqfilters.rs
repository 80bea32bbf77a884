//! jinja2's sequence filters with Python's semantics: `map`, `select`,
//! `reject`, `selectattr`, `rejectattr`, `unique` and `items` return
//! one-shot generators (so `|tojson` of one fails as it does in Python),
//! `reverse` returns an iterator, `length` of a generator is a `TypeError`.

use minijinja::value::{Tuple, ValueKind};
use minijinja::{Error, ErrorKind, State, Value};

use crate::args;
use crate::compare;
use crate::error::{PyExc, py_err, type_err};
use crate::filters::FilterFn;
use crate::lookup::{self, AttrGetter};
use crate::repr;
use crate::value::PyIter;

pub(crate) fn all() -> Vec<(&'static str, FilterFn)> {
    vec![
        ("attr", attr),
        ("batch", batch),
        ("count", length),
        ("d", default),
        ("default", default),
        ("dictsort", dictsort),
        ("first", first),
        ("groupby", groupby),
        ("items", items),
        ("join", join),
        ("last", last),
        ("length", length),
        ("list", list),
        ("map", map),
        ("max", max),
        ("min", min),
        ("random", random),
        ("reject", reject),
        ("rejectattr", rejectattr),
        ("reverse", reverse),
        ("select", select),
        ("selectattr", selectattr),
        ("slice", slice),
        ("sort", sort),
        ("sum", sum),
        ("unique", unique),
        ("xmlattr", xmlattr),
    ]
}

/// Python's `iter(value)` drained: a string's characters, a mapping's keys,
/// a sequence's items; `TypeError` for what does not iterate.
pub(crate) fn py_iter(value: &Value) -> Result<Vec<Value>, Error> {
    match value.kind() {
        ValueKind::Undefined => Ok(Vec::new()),
        ValueKind::String => Ok(value
            .as_str()
            .unwrap_or_default()
            .chars()
            .map(Value::from)
            .collect()),
        ValueKind::Seq | ValueKind::Map | ValueKind::Iterable
            if value.kind() != ValueKind::Map || repr::is_dict(value) =>
        {
            if let Some(e) = value
                .downcast_object_ref::<PyIter>()
                .and_then(|i| i.deferred.as_ref())
            {
                return Err(py_err(e.exc, e.message.clone()));
            }
            let mut out = Vec::new();
            for item in value.try_iter()? {
                // an invalid value carries an error raised lazily (a generator)
                if let Some(err) = invalid(&item) {
                    return Err(err);
                }
                out.push(item);
            }
            Ok(out)
        }
        _ => Err(type_err(format!(
            "'{}' object is not iterable",
            repr::type_name(value)
        ))),
    }
}

fn invalid(item: &Value) -> Option<Error> {
    if item.kind() == ValueKind::Invalid {
        Some(Error::new(ErrorKind::InvalidOperation, item.to_string()))
    } else {
        None
    }
}

/// Python's `len(value)`.
pub(crate) fn py_len(value: &Value) -> Result<usize, Error> {
    let no_len = || {
        type_err(format!(
            "object of type '{}' has no len()",
            repr::type_name(value)
        ))
    };
    match value.kind() {
        ValueKind::Undefined => Ok(0),
        ValueKind::String => Ok(value.as_str().unwrap_or_default().chars().count()),
        ValueKind::Seq | ValueKind::Map | ValueKind::Iterable => value.len().ok_or_else(no_len),
        _ => Err(no_len()),
    }
}

fn arg(a: &[Option<Value>], i: usize) -> Value {
    a.get(i).cloned().flatten().unwrap_or_default()
}

fn length(_: &mut State, args: &[Value]) -> Result<Value, Error> {
    let a = args::positional("len", args, 1, 1)?;
    Ok(Value::from(py_len(&a[0])?))
}

fn list(_: &mut State, args: &[Value]) -> Result<Value, Error> {
    let a = args::bind("sync_do_list", args, &["value"], 1)?;
    Ok(Value::from(py_iter(&arg(&a, 0))?))
}

fn default(_: &mut State, args: &[Value]) -> Result<Value, Error> {
    let a = args::bind(
        "do_default",
        args,
        &["value", "default_value", "boolean"],
        1,
    )?;
    let value = arg(&a, 0);
    crate::attrs::probed(&value);
    let fallback = a[1].clone().unwrap_or(Value::from(""));
    if value.is_undefined()
        || value
            .downcast_object_ref::<crate::value::Unsafe>()
            .is_some()
        || (args::truthy(&a[2], false) && !value.is_true())
    {
        return Ok(fallback);
    }
    Ok(value)
}

fn first(state: &mut State, args: &[Value]) -> Result<Value, Error> {
    let a = args::bind("sync_do_first", args, &["seq"], 1)?;
    let seq = arg(&a, 0);
    let _ = state;
    match py_iter_first(&seq)? {
        Some(v) => Ok(v),
        None => Ok(Value::UNDEFINED),
    }
}

fn py_iter_first(seq: &Value) -> Result<Option<Value>, Error> {
    if let Some(e) = seq
        .downcast_object_ref::<PyIter>()
        .and_then(|i| i.deferred.as_ref())
    {
        return Err(py_err(e.exc, e.message.clone()));
    }
    if seq.kind() == ValueKind::String {
        return Ok(seq
            .as_str()
            .unwrap_or_default()
            .chars()
            .next()
            .map(Value::from));
    }
    if matches!(
        seq.kind(),
        ValueKind::Seq | ValueKind::Map | ValueKind::Iterable
    ) && (seq.kind() != ValueKind::Map || repr::is_dict(seq))
    {
        let next = seq.try_iter()?.next();
        if let Some(err) = next.as_ref().and_then(invalid) {
            return Err(err);
        }
        return Ok(next);
    }
    py_iter(seq).map(|v| v.into_iter().next())
}

fn last(_: &mut State, args: &[Value]) -> Result<Value, Error> {
    let a = args::bind("do_last", args, &["seq"], 1)?;
    let seq = arg(&a, 0);
    check_reversible(&seq)?;
    Ok(py_iter(&seq)?.pop().unwrap_or(Value::UNDEFINED))
}

fn check_reversible(seq: &Value) -> Result<(), Error> {
    let kind = repr::type_name(seq);
    let reversible = matches!(
        seq.kind(),
        ValueKind::Undefined | ValueKind::String | ValueKind::Seq | ValueKind::Map
    ) || matches!(
        kind,
        "list" | "range" | "dict_keys" | "dict_values" | "dict_items"
    );
    if reversible && (seq.kind() != ValueKind::Map || repr::is_dict(seq)) {
        Ok(())
    } else {
        Err(type_err(format!("'{kind}' object is not reversible")))
    }
}

fn reverse(_: &mut State, args: &[Value]) -> Result<Value, Error> {
    let a = args::bind("do_reverse", args, &["value"], 1)?;
    let value = arg(&a, 0);
    if let Some(s) = value.as_str() {
        let r: String = s.chars().rev().collect();
        return Ok(if value.is_safe() {
            Value::from_safe_string(r)
        } else {
            Value::from(r)
        });
    }
    let kind = match repr::type_name(&value) {
        "list" => "list_reverseiterator",
        "dict" => "dict_reversekeyiterator",
        "range" => "range_iterator",
        "dict_keys" => "dict_reversekeyiterator",
        "dict_values" => "dict_reversevalueiterator",
        "dict_items" => "dict_reverseitemiterator",
        _ if value.is_undefined() || value.is_tuple() => "reversed",
        _ => {
            // not reversible: Python lists it and reverses the list
            let mut items = py_iter(&value)
                .map_err(|_| py_err(PyExc::FilterArgumentError, "argument must be iterable"))?;
            items.reverse();
            return Ok(Value::from(items));
        }
    };
    let mut items = py_iter(&value)?;
    items.reverse();
    Ok(PyIter::wrap(kind, items.into_iter()))
}

fn join(_: &mut State, args: &[Value]) -> Result<Value, Error> {
    let a = args::bind("sync_do_join", args, &["value", "d", "attribute"], 1)?;
    let mut items = py_iter(&arg(&a, 0))?;
    if let Some(attribute) = a[2].as_ref().filter(|v| !v.is_none()) {
        let getter = AttrGetter::new(attribute, None);
        items = items.iter().map(|i| getter.get(i)).collect();
    }
    let sep = a[1].as_ref().map_or(String::new(), repr::str_string);
    let mut out = String::new();
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(&sep);
        }
        out.push_str(&repr::str_string(item));
    }
    Ok(Value::from(out))
}

fn items(_: &mut State, args: &[Value]) -> Result<Value, Error> {
    let a = args::bind("do_items", args, &["value"], 1)?;
    let value = arg(&a, 0);
    if value.is_undefined() {
        return Ok(PyIter::generator("do_items", std::iter::empty()));
    }
    if !crate::value::is_mapping(&value) {
        // raised when the generator runs, as jinja2's
        return Ok(PyIter::failing(
            "do_items",
            PyExc::TypeError,
            "Can only get item pairs from a mapping.",
        ));
    }
    Ok(PyIter::generator("do_items", pairs(&value)?.into_iter()))
}

/// `dict.items()` as tuples.
pub(crate) fn pairs(value: &Value) -> Result<Vec<Value>, Error> {
    let mut out = Vec::new();
    for k in value.try_iter()? {
        let v = value.get_item(&k)?;
        out.push(Value::from(Tuple::from(vec![k, v])));
    }
    Ok(out)
}

fn dictsort(_: &mut State, args: &[Value]) -> Result<Value, Error> {
    let a = args::bind(
        "do_dictsort",
        args,
        &["value", "case_sensitive", "by", "reverse"],
        1,
    )?;
    let value = arg(&a, 0);
    let pos = match a[2]
        .as_ref()
        .and_then(|v| v.as_str().map(str::to_owned))
        .as_deref()
    {
        None | Some("key") if a[2].as_ref().is_none_or(|v| v.as_str() == Some("key")) => 0,
        Some("value") => 1,
        _ => {
            return Err(py_err(
                PyExc::FilterArgumentError,
                "You can only sort by either \"key\" or \"value\"",
            ));
        }
    };
    if !crate::value::is_mapping(&value) {
        return Err(py_err(
            PyExc::AttributeError,
            format!(
                "'{}' object has no attribute 'items'",
                repr::type_name(&value)
            ),
        ));
    }
    let case_sensitive = args::truthy(&a[1], false);
    let mut keyed = Vec::new();
    for pair in pairs(&value)? {
        let part = pair.get_item(&Value::from(pos)).unwrap_or_default();
        let key = if case_sensitive {
            part
        } else {
            compare::ignore_case(&part)
        };
        keyed.push((key, pair));
    }
    compare::sort_by_keys(&mut keyed, args::truthy(&a[3], false))?;
    Ok(Value::from(
        keyed.into_iter().map(|(_, p)| p).collect::<Vec<_>>(),
    ))
}

fn sort(_: &mut State, args: &[Value]) -> Result<Value, Error> {
    let a = args::bind(
        "do_sort",
        args,
        &["value", "reverse", "case_sensitive", "attribute"],
        1,
    )?;
    let items = py_iter(&arg(&a, 0))?;
    let case_sensitive = args::truthy(&a[2], false);
    let getters = lookup::multi_attrgetter(&a[3].clone().unwrap_or(Value::from(())));
    let mut keyed: Vec<(Value, Value)> = items
        .into_iter()
        .map(|item| {
            let keys: Vec<Value> = getters
                .iter()
                .map(|g| {
                    let k = g.get(&item);
                    if case_sensitive {
                        k
                    } else {
                        compare::ignore_case(&k)
                    }
                })
                .collect();
            (Value::from(keys), item)
        })
        .collect();
    compare::sort_by_keys(&mut keyed, args::truthy(&a[1], false))?;
    Ok(Value::from(
        keyed.into_iter().map(|(_, i)| i).collect::<Vec<_>>(),
    ))
}

fn unique(_: &mut State, args: &[Value]) -> Result<Value, Error> {
    let a = args::bind(
        "sync_do_unique",
        args,
        &["value", "case_sensitive", "attribute"],
        1,
    )?;
    let items = py_iter(&arg(&a, 0))?;
    let case_sensitive = args::truthy(&a[1], false);
    let getter = AttrGetter::new(&a[2].clone().unwrap_or(Value::from(())), None);
    let mut seen: Vec<Value> = Vec::new();
    let mut out = Vec::new();
    for item in items {
        let key = getter.get(&item);
        let key = if case_sensitive {
            key
        } else {
            compare::ignore_case(&key)
        };
        compare::check_hashable(&key)?;
        if !seen.iter().any(|s| compare::py_eq(s, &key)) {
            seen.push(key);
            out.push(item);
        }
    }
    Ok(PyIter::generator("sync_do_unique", out.into_iter()))
}

fn min_or_max(args: &[Value], func: &str, want_max: bool) -> Result<Value, Error> {
    let a = args::bind(func, args, &["value", "case_sensitive", "attribute"], 1)?;
    let items = py_iter(&arg(&a, 0))?;
    if items.is_empty() {
        return Ok(Value::UNDEFINED);
    }
    let case_sensitive = args::truthy(&a[1], false);
    let getter = AttrGetter::new(&a[2].clone().unwrap_or(Value::from(())), None);
    let key = |v: &Value| {
        let k = getter.get(v);
        if case_sensitive {
            k
        } else {
            compare::ignore_case(&k)
        }
    };
    let mut best = items[0].clone();
    let mut best_key = key(&best);
    for item in items.into_iter().skip(1) {
        let k = key(&item);
        let ord = compare::py_cmp(&k, &best_key)?;
        let better = if want_max {
            ord == std::cmp::Ordering::Greater
        } else {
            ord == std::cmp::Ordering::Less
        };
        if better {
            best = item;
            best_key = k;
        }
    }
    Ok(best)
}

fn min(_: &mut State, args: &[Value]) -> Result<Value, Error> {
    min_or_max(args, "do_min", false)
}

fn max(_: &mut State, args: &[Value]) -> Result<Value, Error> {
    min_or_max(args, "do_max", true)
}

fn sum(_: &mut State, args: &[Value]) -> Result<Value, Error> {
    let a = args::bind("sync_do_sum", args, &["iterable", "attribute", "start"], 1)?;
    let mut items = py_iter(&arg(&a, 0))?;
    if let Some(attribute) = a[1].as_ref().filter(|v| !v.is_none()) {
        let getter = AttrGetter::new(attribute, None);
        items = items.iter().map(|i| getter.get(i)).collect();
    }
    let mut total = a[2].clone().unwrap_or(Value::from(0));
    if total.kind() == ValueKind::String {
        return Err(type_err(
            "sum() can't sum strings [use ''.join(seq) instead]",
        ));
    }
    for item in items {
        total = crate::ops::add(&total, &item)?;
    }
    Ok(total)
}

fn map(state: &mut State, args: &[Value]) -> Result<Value, Error> {
    let call = args::split(args);
    let mut positional = call.positional.into_iter();
    let value = positional.next().unwrap_or_default();
    let rest: Vec<Value> = positional.collect();
    if !value.is_true() {
        return Ok(PyIter::generator("sync_do_map", std::iter::empty()));
    }
    let items = py_iter(&value)?;
    if rest.is_empty() && call.keywords.iter().any(|(k, _)| k == "attribute") {
        let mut attribute = Value::from(());
        let mut default = None;
        for (k, v) in call.keywords {
            match k.as_str() {
                "attribute" => attribute = v,
                "default" => default = Some(v),
                other => {
                    return Err(py_err(
                        PyExc::FilterArgumentError,
                        format!("Unexpected keyword argument '{other}'"),
                    ));
                }
            }
        }
        let getter = AttrGetter::new(&attribute, default);
        let out: Vec<Value> = items.iter().map(|i| getter.get(i)).collect();
        return Ok(PyIter::generator("sync_do_map", out.into_iter()));
    }
    let Some((name, filter_args)) = rest.split_first() else {
        return Err(py_err(
            PyExc::FilterArgumentError,
            "map requires a filter argument",
        ));
    };
    let name = repr::str_string(name);
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        let mut call_args = vec![item];
        call_args.extend(filter_args.iter().cloned());
        if !call.keywords.is_empty() {
            call_args.push(kwargs_value(&call.keywords));
        }
        out.push(apply_filter(state, &name, &call_args)?);
    }
    Ok(PyIter::generator("sync_do_map", out.into_iter()))
}

fn kwargs_value(keywords: &[(String, Value)]) -> Value {
    minijinja::value::Kwargs::from_iter(keywords.iter().map(|(k, v)| (k.as_str(), v.clone())))
        .into()
}

/// Calls filter `name` like jinja2's `call_filter` (unknown: a
/// `TemplateRuntimeError`).
pub(crate) fn apply_filter(state: &mut State, name: &str, args: &[Value]) -> Result<Value, Error> {
    state.apply_filter(name, args).map_err(|e| {
        if e.kind() == ErrorKind::UnknownFilter {
            py_err(
                PyExc::TemplateRuntimeError,
                format!("No filter named '{name}'."),
            )
        } else {
            e
        }
    })
}

/// Calls test `name` like jinja2's `call_test`.
pub(crate) fn perform_test(state: &mut State, name: &str, args: &[Value]) -> Result<bool, Error> {
    state.perform_test(name, args).map_err(|e| {
        if e.kind() == ErrorKind::UnknownTest {
            py_err(
                PyExc::TemplateRuntimeError,
                format!("No test named '{name}'."),
            )
        } else {
            e
        }
    })
}

fn select_or_reject(
    state: &mut State,
    args: &[Value],
    keep: bool,
    lookup_attr: bool,
) -> Result<Value, Error> {
    let call = args::split(args);
    let mut positional = call.positional.into_iter();
    let value = positional.next().unwrap_or_default();
    let rest: Vec<Value> = positional.collect();
    if !value.is_true() {
        return Ok(PyIter::generator("select_or_reject", std::iter::empty()));
    }
    let items = py_iter(&value)?;
    let (getter, off) = if lookup_attr {
        let Some(attr) = rest.first() else {
            return Err(py_err(
                PyExc::FilterArgumentError,
                "Missing parameter for attribute name",
            ));
        };
        (Some(AttrGetter::new(attr, None)), 1)
    } else {
        (None, 0)
    };
    let test = rest.get(off).map(repr::str_string);
    let test_args: Vec<Value> = rest.iter().skip(off + 1).cloned().collect();
    let mut out = Vec::new();
    for item in items {
        let subject = match &getter {
            Some(g) => g.get(&item),
            None => item.clone(),
        };
        let passed = match &test {
            Some(name) => {
                let mut call_args = vec![subject];
                call_args.extend(test_args.iter().cloned());
                if !call.keywords.is_empty() {
                    call_args.push(kwargs_value(&call.keywords));
                }
                perform_test(state, name, &call_args)?
            }
            None => subject.is_true(),
        };
        if passed == keep {
            out.push(item);
        }
    }
    Ok(PyIter::generator("select_or_reject", out.into_iter()))
}

fn select(state: &mut State, args: &[Value]) -> Result<Value, Error> {
    select_or_reject(state, args, true, false)
}

fn reject(state: &mut State, args: &[Value]) -> Result<Value, Error> {
    select_or_reject(state, args, false, false)
}

fn selectattr(state: &mut State, args: &[Value]) -> Result<Value, Error> {
    select_or_reject(state, args, true, true)
}

fn rejectattr(state: &mut State, args: &[Value]) -> Result<Value, Error> {
    select_or_reject(state, args, false, true)
}

fn attr(_: &mut State, args: &[Value]) -> Result<Value, Error> {
    let a = args::bind("do_attr", args, &["obj", "name"], 2)?;
    let obj = arg(&a, 0);
    let name = repr::str_string(&arg(&a, 1));
    // Only real attributes (methods), never items.
    if obj.as_object().is_some()
        && (obj.downcast_object_ref::<crate::value::PyDict>().is_some()
            || obj.downcast_object_ref::<crate::value::PyList>().is_some())
    {
        let v = obj.get_attr(&name).unwrap_or_default();
        let is_attr = v
            .downcast_object_ref::<crate::value::BoundMethod>()
            .is_some()
            || v.downcast_object_ref::<crate::value::Unsafe>().is_some();
        return Ok(if is_attr { v } else { Value::UNDEFINED });
    }
    if crate::value::is_mapping(&obj) {
        return Ok(Value::UNDEFINED);
    }
    if obj.kind() == ValueKind::String && !crate::pystr::is_method(&name) {
        return Ok(Value::UNDEFINED);
    }
    Ok(lookup::getattr(&obj, &name))
}

fn batch(_: &mut State, args: &[Value]) -> Result<Value, Error> {
    let a = args::bind("do_batch", args, &["value", "linecount", "fill_with"], 2)?;
    let items = py_iter(&arg(&a, 0))?;
    let n = usize::try_from(crate::pystr::int_arg(&arg(&a, 1))?.max(1)).unwrap_or(1);
    let fill = a[2].clone().filter(|v| !v.is_none());
    let mut out = Vec::new();
    for chunk in items.chunks(n) {
        let mut row = chunk.to_vec();
        if let Some(f) = &fill {
            while row.len() < n {
                row.push(f.clone());
            }
        }
        out.push(Value::from(row));
    }
    Ok(PyIter::generator("do_batch", out.into_iter()))
}

fn slice(_: &mut State, args: &[Value]) -> Result<Value, Error> {
    let a = args::bind("sync_do_slice", args, &["value", "slices", "fill_with"], 2)?;
    let seq = py_iter(&arg(&a, 0))?;
    let slices = usize::try_from(crate::pystr::int_arg(&arg(&a, 1))?.max(0)).unwrap_or(0);
    if slices == 0 {
        return Err(py_err(
            PyExc::ZeroDivisionError,
            "integer division or modulo by zero",
        ));
    }
    let fill = a[2].clone().filter(|v| !v.is_none());
    let per = seq.len() / slices;
    let extra = seq.len() % slices;
    let mut offset = 0;
    let mut out = Vec::new();
    for n in 0..slices {
        let start = offset + n * per;
        if n < extra {
            offset += 1;
        }
        let end = offset + (n + 1) * per;
        let mut tmp = seq[start.min(seq.len())..end.min(seq.len())].to_vec();
        if let Some(f) = &fill
            && n >= extra
        {
            tmp.push(f.clone());
        }
        out.push(Value::from(tmp));
    }
    Ok(PyIter::generator("sync_do_slice", out.into_iter()))
}

fn groupby(_: &mut State, args: &[Value]) -> Result<Value, Error> {
    let a = args::bind(
        "sync_do_groupby",
        args,
        &["value", "attribute", "default", "case_sensitive"],
        2,
    )?;
    let items = py_iter(&arg(&a, 0))?;
    let getter = AttrGetter::new(&arg(&a, 1), a[2].clone());
    let case_sensitive = args::truthy(&a[3], false);
    let key = |v: &Value| {
        let k = getter.get(v);
        if case_sensitive {
            k
        } else {
            compare::ignore_case(&k)
        }
    };
    let mut keyed: Vec<(Value, Value)> = items.into_iter().map(|i| (key(&i), i)).collect();
    compare::sort_by_keys(&mut keyed, false)?;
    let mut groups: Vec<(Value, Vec<Value>)> = Vec::new();
    for (k, item) in keyed {
        match groups.last_mut() {
            Some((last, members)) if compare::py_eq(last, &k) => members.push(item),
            _ => groups.push((k, vec![item])),
        }
    }
    let out: Vec<Value> = groups
        .into_iter()
        .map(|(k, members)| {
            let grouper = if case_sensitive {
                k
            } else {
                getter.get(&members[0])
            };
            Value::from(Tuple::from(vec![grouper, Value::from(members)]))
        })
        .collect();
    Ok(Value::from(out))
}

fn random(_: &mut State, args: &[Value]) -> Result<Value, Error> {
    let a = args::bind("do_random", args, &["seq"], 1)?;
    let items = py_iter(&arg(&a, 0))?;
    if items.is_empty() {
        return Ok(Value::UNDEFINED);
    }
    // Not reproducible in Python either; any item will do, deterministically.
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos() as usize);
    Ok(items[seed % items.len()].clone())
}

fn xmlattr(_: &mut State, args: &[Value]) -> Result<Value, Error> {
    let a = args::bind("do_xmlattr", args, &["d", "autospace"], 1)?;
    let d = arg(&a, 0);
    let mut parts = Vec::new();
    for pair in pairs(&d)? {
        let k = pair.get_item(&Value::from(0)).unwrap_or_default();
        let v = pair.get_item(&Value::from(1)).unwrap_or_default();
        if v.is_none() || v.is_undefined() {
            continue;
        }
        let key = repr::str_string(&k);
        if key
            .chars()
            .any(|c| c.is_ascii_whitespace() || matches!(c, '/' | '>' | '='))
        {
            return Err(crate::error::value_err(format!(
                "Invalid character in attribute name: {}",
                repr::repr_string(&k)
            )));
        }
        let escaped = repr::str_string(&v)
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&#34;")
            .replace('\'', "&#39;");
        parts.push(format!("{key}=\"{escaped}\""));
    }
    let mut rv = parts.join(" ");
    if args::truthy(&a[1], true) && !rv.is_empty() {
        rv.insert(0, ' ');
    }
    Ok(Value::from_safe_string(rv))
}
