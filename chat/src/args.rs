//! Python-style argument binding for the filters, functions and methods
//! implemented here: positional and keyword arguments matched against a
//! signature, with Python's `TypeError` messages when they do not fit.

use minijinja::Value;
use minijinja::value::Kwargs;

use crate::error::type_err;

/// Arguments as a call passed them: positional values, then keyword pairs.
pub(crate) struct CallArgs {
    pub(crate) positional: Vec<Value>,
    pub(crate) keywords: Vec<(String, Value)>,
}

/// Splits minijinja's argument list (keyword arguments travel as one
/// trailing kwargs value) into positional and keyword arguments.
pub(crate) fn split(args: &[Value]) -> CallArgs {
    let (positional, kwargs) = match args.last() {
        Some(last) if last.is_kwargs() => (&args[..args.len() - 1], Some(last)),
        _ => (args, None),
    };
    let mut keywords = Vec::new();
    if let Some(kwargs) = kwargs.and_then(|k| Kwargs::try_from(k.clone()).ok()) {
        for name in kwargs.args() {
            let value: Value = kwargs.peek(name).unwrap_or_default();
            keywords.push((name.to_owned(), value));
        }
    }
    CallArgs {
        positional: positional.to_vec(),
        keywords,
    }
}

/// Binds `args` to the parameters `names` of Python function `func`
/// (`required` of them without defaults; `*args`/`**kwargs` not allowed).
/// Returns one slot per name, `None` where the default applies.
pub(crate) fn bind(
    func: &str,
    args: &[Value],
    names: &[&str],
    required: usize,
) -> Result<Vec<Option<Value>>, minijinja::Error> {
    let call = split(args);
    bind_split(func, call, names, required)
}

/// [`bind`] for arguments already split.
pub(crate) fn bind_split(
    func: &str,
    call: CallArgs,
    names: &[&str],
    required: usize,
) -> Result<Vec<Option<Value>>, minijinja::Error> {
    let mut slots: Vec<Option<Value>> = vec![None; names.len()];
    if call.positional.len() > names.len() {
        return Err(type_err(too_many(
            func,
            names.len(),
            required,
            call.positional.len(),
        )));
    }
    for (slot, value) in slots.iter_mut().zip(call.positional) {
        *slot = Some(value);
    }
    for (name, value) in call.keywords {
        match names.iter().position(|n| *n == name) {
            Some(i) if slots[i].is_some() => {
                return Err(type_err(format!(
                    "{func}() got multiple values for argument '{name}'"
                )));
            }
            Some(i) => slots[i] = Some(value),
            None => {
                return Err(type_err(format!(
                    "{func}() got an unexpected keyword argument '{name}'"
                )));
            }
        }
    }
    let missing: Vec<&str> = names[..required]
        .iter()
        .zip(&slots)
        .filter(|(_, s)| s.is_none())
        .map(|(n, _)| *n)
        .collect();
    if !missing.is_empty() {
        return Err(type_err(missing_message(func, &missing)));
    }
    Ok(slots)
}

/// Binds positional-only arguments (Python's built-in methods: `str.split`
/// takes keywords, `str.startswith` does not), `min..=max` of them.
pub(crate) fn positional(
    func: &str,
    args: &[Value],
    min: usize,
    max: usize,
) -> Result<Vec<Value>, minijinja::Error> {
    let call = split(args);
    if !call.keywords.is_empty() {
        return Err(type_err(format!("{func}() takes no keyword arguments")));
    }
    let n = call.positional.len();
    if n < min || n > max {
        let message = if min == max {
            match min {
                0 => format!("{func}() takes no arguments ({n} given)"),
                1 => format!("{func}() takes exactly one argument ({n} given)"),
                _ => format!("{func}() takes exactly {min} arguments ({n} given)"),
            }
        } else if n < min {
            format!(
                "{func} expected at least {min} argument{}, got {n}",
                if min == 1 { "" } else { "s" }
            )
        } else {
            format!(
                "{func} expected at most {max} argument{}, got {n}",
                if max == 1 { "" } else { "s" }
            )
        };
        return Err(type_err(message));
    }
    Ok(call.positional)
}

fn too_many(func: &str, max: usize, required: usize, given: usize) -> String {
    let takes = if required == max {
        format!("{max}")
    } else {
        format!("from {required} to {max}")
    };
    let plural = if max == 1 && required == max {
        "argument"
    } else {
        "arguments"
    };
    let were = if given == 1 { "was" } else { "were" };
    format!("{func}() takes {takes} positional {plural} but {given} {were} given")
}

fn missing_message(func: &str, missing: &[&str]) -> String {
    let quoted: Vec<String> = missing.iter().map(|n| format!("'{n}'")).collect();
    let list = match quoted.len() {
        1 => quoted[0].clone(),
        2 => format!("{} and {}", quoted[0], quoted[1]),
        _ => {
            let (last, rest) = quoted
                .split_last()
                .map_or((String::new(), &[][..]), |(l, r)| (l.clone(), r));
            format!("{}, and {last}", rest.join(", "))
        }
    };
    format!(
        "{func}() missing {} required positional argument{}: {list}",
        missing.len(),
        if missing.len() == 1 { "" } else { "s" }
    )
}

/// Python truthiness of an optional argument (absent = `default`).
pub(crate) fn truthy(slot: &Option<Value>, default: bool) -> bool {
    slot.as_ref().map_or(default, Value::is_true)
}
