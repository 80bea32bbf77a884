//! Python's `str` methods, as chat templates call them (`content.split('</think>')`,
//! `name.startswith(('a', 'b'))`, `text.strip('\n')`, …), with Python's
//! whitespace, index and error rules.

use minijinja::value::ValueKind;
use minijinja::{Error, State, Value};

use crate::args;
use crate::error::{PyExc, py_err, type_err, value_err};
use crate::repr;
use crate::unicode;

/// The methods of `str` this module implements.
const METHODS: &[&str] = &[
    "upper",
    "lower",
    "casefold",
    "title",
    "capitalize",
    "swapcase",
    "strip",
    "lstrip",
    "rstrip",
    "split",
    "rsplit",
    "splitlines",
    "startswith",
    "endswith",
    "replace",
    "find",
    "rfind",
    "index",
    "rindex",
    "count",
    "join",
    "partition",
    "rpartition",
    "removeprefix",
    "removesuffix",
    "center",
    "ljust",
    "rjust",
    "zfill",
    "expandtabs",
    "format",
    "format_map",
    "isalnum",
    "isalpha",
    "isascii",
    "isdecimal",
    "isdigit",
    "isnumeric",
    "isspace",
    "isprintable",
    "islower",
    "isupper",
    "istitle",
    "isidentifier",
];

/// Whether `str` has a method of this name.
pub(crate) fn is_method(name: &str) -> bool {
    METHODS.contains(&name)
}

/// Calls `s.name(*args)`; `None` when `str` has no such method.
pub(crate) fn call(
    state: &State,
    receiver: &Value,
    s: &str,
    name: &str,
    args: &[Value],
) -> Option<Result<Value, Error>> {
    Some(match name {
        "upper" => no_args(name, args).map(|_| keep_markup(receiver, unicode::upper(s))),
        "lower" | "casefold" => {
            no_args(name, args).map(|_| keep_markup(receiver, unicode::lower(s)))
        }
        "title" => no_args(name, args).map(|_| keep_markup(receiver, unicode::title(s))),
        "capitalize" => no_args(name, args).map(|_| keep_markup(receiver, unicode::capitalize(s))),
        "swapcase" => no_args(name, args).map(|_| keep_markup(receiver, unicode::swapcase(s))),
        "strip" | "lstrip" | "rstrip" => strip_method(receiver, s, name, args),
        "split" | "rsplit" => split_method(s, name, args),
        "splitlines" => args::bind("splitlines", args, &["keepends"], 0)
            .map(|a| Value::from(splitlines(s, args::truthy(&a[0], false)))),
        "startswith" | "endswith" => affix_method(s, name, args),
        "replace" => replace_method(state, receiver, s, args),
        "find" | "rfind" | "index" | "rindex" | "count" => search_method(s, name, args),
        "join" => join_method(receiver, s, args),
        "partition" | "rpartition" => partition_method(s, name, args),
        "removeprefix" | "removesuffix" => args::positional(name, args, 1, 1).and_then(|a| {
            let affix = str_arg(name, &a[0], 1)?;
            let out = if name == "removeprefix" {
                s.strip_prefix(affix.as_str()).unwrap_or(s)
            } else {
                s.strip_suffix(affix.as_str()).unwrap_or(s)
            };
            Ok(keep_markup(receiver, out.to_owned()))
        }),
        "center" | "ljust" | "rjust" => justify_method(s, name, args),
        "zfill" => args::positional(name, args, 1, 1).and_then(|a| {
            let width = int_arg(&a[0])?;
            Ok(Value::from(zfill(s, width)))
        }),
        "expandtabs" => args::bind("expandtabs", args, &["tabsize"], 0).and_then(|a| {
            let size = match &a[0] {
                Some(v) => int_arg(v)?,
                None => 8,
            };
            Ok(Value::from(expandtabs(s, size)))
        }),
        "format" => crate::pyformat::str_format(s, args).map(Value::from),
        "format_map" => args::positional("format_map", args, 1, 1)
            .and_then(|a| crate::pyformat::str_format_map(s, &a[0]).map(Value::from)),
        "isalnum" => pred(name, args, s, unicode::is_alnum),
        "isalpha" => pred(name, args, s, unicode::is_alpha),
        "isascii" => no_args(name, args).map(|_| Value::from(s.is_ascii())),
        "isdecimal" => pred(name, args, s, unicode::is_decimal),
        "isdigit" => pred(name, args, s, unicode::is_digit),
        "isnumeric" => pred(name, args, s, unicode::is_numeric),
        "isspace" => pred(name, args, s, unicode::is_space),
        "isprintable" => {
            no_args(name, args).map(|_| Value::from(s.chars().all(unicode::is_printable)))
        }
        "islower" => no_args(name, args).map(|_| {
            Value::from(
                s.chars().any(unicode::is_lower)
                    && !s
                        .chars()
                        .any(|c| unicode::is_upper(c) || unicode::is_title(c)),
            )
        }),
        "isupper" => no_args(name, args).map(|_| {
            Value::from(
                s.chars().any(unicode::is_upper)
                    && !s
                        .chars()
                        .any(|c| unicode::is_lower(c) || unicode::is_title(c)),
            )
        }),
        "istitle" => no_args(name, args).map(|_| Value::from(istitle(s))),
        "isidentifier" => no_args(name, args).map(|_| {
            let mut chars = s.chars();
            Value::from(
                chars
                    .next()
                    .is_some_and(|c| c == '_' || unicode::is_alpha(c))
                    && chars.all(|c| c == '_' || unicode::is_alnum(c)),
            )
        }),
        _ => return None,
    })
}

fn keep_markup(receiver: &Value, s: String) -> Value {
    if receiver.is_safe() {
        Value::from_safe_string(s)
    } else {
        Value::from(s)
    }
}

fn no_args(name: &str, args: &[Value]) -> Result<(), Error> {
    args::positional(name, args, 0, 0).map(|_| ())
}

fn pred(name: &str, args: &[Value], s: &str, f: fn(char) -> bool) -> Result<Value, Error> {
    no_args(name, args)?;
    Ok(Value::from(!s.is_empty() && s.chars().all(f)))
}

fn istitle(s: &str) -> bool {
    let mut cased = false;
    let mut previous_cased = false;
    for c in s.chars() {
        if unicode::is_upper(c) || unicode::is_title(c) {
            if previous_cased {
                return false;
            }
            previous_cased = true;
            cased = true;
        } else if unicode::is_lower(c) {
            if !previous_cased {
                return false;
            }
            previous_cased = true;
            cased = true;
        } else {
            previous_cased = false;
        }
    }
    cased
}

/// A `str` argument, or Python's message for argument `n` of `func`.
fn str_arg(func: &str, v: &Value, n: usize) -> Result<String, Error> {
    match v.as_str() {
        Some(s) => Ok(s.to_owned()),
        None => Err(type_err(format!(
            "{func}() argument {n} must be str, not {}",
            repr::type_name(v)
        ))),
    }
}

/// An integer argument (`__index__`: ints and bools).
pub(crate) fn int_arg(v: &Value) -> Result<i64, Error> {
    match v.kind() {
        ValueKind::Bool => Ok(i64::from(v.is_true())),
        ValueKind::Number if v.is_integer() => v.as_i64().ok_or_else(|| {
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

/// Python's `str.strip(chars)` family on `s`.
pub(crate) fn strip<'a>(s: &'a str, chars: Option<&str>, left: bool, right: bool) -> &'a str {
    let matches = |c: char| match chars {
        Some(set) => set.contains(c),
        None => unicode::is_space(c),
    };
    let mut out = s;
    if left {
        out = out.trim_start_matches(matches);
    }
    if right {
        out = out.trim_end_matches(matches);
    }
    out
}

fn strip_method(receiver: &Value, s: &str, name: &str, args: &[Value]) -> Result<Value, Error> {
    let a = args::positional(name, args, 0, 1)?;
    let chars = match a.first() {
        None => None,
        Some(v) if v.is_none() => None,
        Some(v) => Some(
            v.as_str()
                .map(str::to_owned)
                .ok_or_else(|| type_err(format!("{name} arg must be None or str")))?,
        ),
    };
    let (left, right) = match name {
        "lstrip" => (true, false),
        "rstrip" => (false, true),
        _ => (true, true),
    };
    Ok(keep_markup(
        receiver,
        strip(s, chars.as_deref(), left, right).to_owned(),
    ))
}

/// Python's `str.split(sep, maxsplit)` (`maxsplit < 0`: no limit).
pub(crate) fn split(s: &str, sep: Option<&str>, maxsplit: i64) -> Result<Vec<Value>, Error> {
    let mut out = Vec::new();
    let mut left = if maxsplit < 0 { i64::MAX } else { maxsplit };
    match sep {
        Some("") => return Err(value_err("empty separator")),
        Some(sep) => {
            let mut rest = s;
            while left > 0 {
                match rest.find(sep) {
                    Some(i) => {
                        out.push(Value::from(&rest[..i]));
                        rest = &rest[i + sep.len()..];
                        left -= 1;
                    }
                    None => break,
                }
            }
            out.push(Value::from(rest));
        }
        None => {
            let mut rest = s.trim_start_matches(unicode::is_space);
            while !rest.is_empty() {
                if left == 0 {
                    out.push(Value::from(rest));
                    break;
                }
                match rest.find(unicode::is_space) {
                    Some(i) => {
                        out.push(Value::from(&rest[..i]));
                        rest = rest[i..].trim_start_matches(unicode::is_space);
                        left -= 1;
                    }
                    None => {
                        out.push(Value::from(rest));
                        break;
                    }
                }
            }
        }
    }
    Ok(out)
}

/// Python's `str.rsplit(sep, maxsplit)`.
pub(crate) fn rsplit(s: &str, sep: Option<&str>, maxsplit: i64) -> Result<Vec<Value>, Error> {
    let mut out = Vec::new();
    let mut left = if maxsplit < 0 { i64::MAX } else { maxsplit };
    match sep {
        Some("") => return Err(value_err("empty separator")),
        Some(sep) => {
            let mut rest = s;
            while left > 0 {
                match rest.rfind(sep) {
                    Some(i) => {
                        out.push(Value::from(&rest[i + sep.len()..]));
                        rest = &rest[..i];
                        left -= 1;
                    }
                    None => break,
                }
            }
            out.push(Value::from(rest));
        }
        None => {
            let mut rest = s.trim_end_matches(unicode::is_space);
            while !rest.is_empty() {
                if left == 0 {
                    out.push(Value::from(rest));
                    break;
                }
                match rest.rfind(unicode::is_space) {
                    Some(i) => {
                        let c = rest[i..].chars().next().map_or(1, char::len_utf8);
                        out.push(Value::from(&rest[i + c..]));
                        rest = rest[..i].trim_end_matches(unicode::is_space);
                        left -= 1;
                    }
                    None => {
                        out.push(Value::from(rest));
                        break;
                    }
                }
            }
        }
    }
    out.reverse();
    Ok(out)
}

fn split_method(s: &str, name: &str, args: &[Value]) -> Result<Value, Error> {
    let a = args::bind(name, args, &["sep", "maxsplit"], 0)?;
    let sep =
        match &a[0] {
            None => None,
            Some(v) if v.is_none() => None,
            Some(v) => Some(v.as_str().map(str::to_owned).ok_or_else(|| {
                type_err(format!("must be str or None, not {}", repr::type_name(v)))
            })?),
        };
    let maxsplit = match &a[1] {
        None => -1,
        Some(v) => int_arg(v)?,
    };
    let parts = if name == "split" {
        split(s, sep.as_deref(), maxsplit)?
    } else {
        rsplit(s, sep.as_deref(), maxsplit)?
    };
    Ok(Value::from(parts))
}

/// Python's `str.splitlines(keepends)`.
pub(crate) fn splitlines(s: &str, keepends: bool) -> Vec<Value> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = s.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if !unicode::is_line_break(c) {
            continue;
        }
        let mut end = i + c.len_utf8();
        if c == '\r' && chars.peek().is_some_and(|&(_, n)| n == '\n') {
            chars.next();
            end += 1;
        }
        out.push(Value::from(if keepends {
            &s[start..end]
        } else {
            &s[start..i]
        }));
        start = end;
    }
    if start < s.len() {
        out.push(Value::from(&s[start..]));
    }
    out
}

/// Slice bounds of `s[start:end]` in characters, Python's way
/// (`ADJUST_INDICES`); `None` arguments mean the ends.
fn bounds(
    len: usize,
    start: Option<&Value>,
    end: Option<&Value>,
) -> Result<(usize, usize, bool), Error> {
    let len_i = i64::try_from(len).unwrap_or(i64::MAX);
    let get = |v: Option<&Value>, default: i64| -> Result<i64, Error> {
        match v {
            None => Ok(default),
            Some(v) if v.is_none() => Ok(default),
            Some(v) => int_arg(v).map_err(|_| {
                type_err("slice indices must be integers or None or have an __index__ method")
            }),
        }
    };
    let mut start = get(start, 0)?;
    let mut end = get(end, len_i)?;
    if end > len_i {
        end = len_i;
    } else if end < 0 {
        end = (end + len_i).max(0);
    }
    if start < 0 {
        start = (start + len_i).max(0);
    }
    // The third value says whether the window is valid at all (start <= len).
    let valid = start <= len_i;
    let start = usize::try_from(start).unwrap_or(0);
    let end = usize::try_from(end).unwrap_or(0);
    Ok((start, end, valid))
}

/// Byte offset of the `n`th character of `s` (or its end).
fn byte_at(s: &str, n: usize) -> usize {
    s.char_indices().nth(n).map_or(s.len(), |(i, _)| i)
}

fn affix_method(s: &str, name: &str, args: &[Value]) -> Result<Value, Error> {
    let a = args::positional(name, args, 1, 3)?;
    let affixes: Vec<String> = if a[0].is_tuple() {
        let mut v = Vec::new();
        for item in a[0].try_iter()? {
            v.push(item.as_str().map(str::to_owned).ok_or_else(|| {
                type_err(format!(
                    "tuple for {name} must only contain str, not {}",
                    repr::type_name(&item)
                ))
            })?);
        }
        v
    } else if let Some(x) = a[0].as_str() {
        vec![x.to_owned()]
    } else {
        return Err(type_err(format!(
            "{name} first arg must be str or a tuple of str, not {}",
            repr::type_name(&a[0])
        )));
    };
    let len = s.chars().count();
    let (start, end, valid) = bounds(len, a.get(1), a.get(2))?;
    if !valid {
        return Ok(Value::from(false));
    }
    let window = if start <= end {
        &s[byte_at(s, start)..byte_at(s, end)]
    } else {
        ""
    };
    let ok = affixes.iter().any(|x| {
        if start > end {
            // Python: an empty window matches only an empty affix... when start <= len.
            return false;
        }
        if name == "startswith" {
            window.starts_with(x.as_str())
        } else {
            window.ends_with(x.as_str())
        }
    });
    Ok(Value::from(ok))
}

fn replace_method(
    state: &State,
    receiver: &Value,
    s: &str,
    args: &[Value],
) -> Result<Value, Error> {
    let a = args::positional("replace", args, 2, 3)?;
    let old = str_arg("replace", &a[0], 1)?;
    let new = str_arg("replace", &a[1], 2)?;
    let count = match a.get(2) {
        Some(v) => int_arg(v)?,
        None => -1,
    };
    Ok(keep_markup(receiver, replace(state, s, &old, &new, count)?))
}

/// Python's `str.replace(old, new, count)`: an empty `old` inserts `new`
/// between characters. The result's size is paid for (fuel) before it is
/// made, since it can be far larger than the input.
pub(crate) fn replace(
    state: &State,
    s: &str,
    old: &str,
    new: &str,
    count: i64,
) -> Result<String, Error> {
    let limit = if count < 0 {
        usize::MAX
    } else {
        usize::try_from(count).unwrap_or(usize::MAX)
    };
    if old.is_empty() {
        let slots = s.chars().count() + 1;
        let n = slots.min(limit);
        crate::limits::charge_bytes(state, n.saturating_mul(new.len()).saturating_add(s.len()))?;
        let mut out = String::new();
        let mut done = 0;
        for c in s.chars() {
            if done < n {
                out.push_str(new);
                done += 1;
            }
            out.push(c);
        }
        if done < n {
            out.push_str(new);
        }
        return Ok(out);
    }
    if new.len() > old.len() {
        let matches = s.matches(old).count().min(limit);
        crate::limits::charge_bytes(state, matches.saturating_mul(new.len() - old.len()))?;
    }
    Ok(if limit == usize::MAX {
        s.replace(old, new)
    } else {
        s.replacen(old, new, limit)
    })
}

fn search_method(s: &str, name: &str, args: &[Value]) -> Result<Value, Error> {
    let a = args::positional(name, args, 1, 3)?;
    let sub = match a[0].as_str() {
        Some(x) => x.to_owned(),
        None => {
            return Err(type_err(format!(
                "must be str, not {}",
                repr::type_name(&a[0])
            )));
        }
    };
    let len = s.chars().count();
    let (start, end, valid) = bounds(len, a.get(1), a.get(2))?;
    let sub_len = sub.chars().count();
    if name == "count" {
        if !valid || end < start || end - start < sub_len {
            return Ok(Value::from(0));
        }
        let window = &s[byte_at(s, start)..byte_at(s, end)];
        let n = if sub.is_empty() {
            window.chars().count() + 1
        } else {
            window.matches(sub.as_str()).count()
        };
        return Ok(Value::from(n));
    }
    let found = if !valid || end < start || end - start < sub_len {
        None
    } else {
        let from = byte_at(s, start);
        let window = &s[from..byte_at(s, end)];
        let hit = if name.starts_with('r') {
            window.rfind(sub.as_str())
        } else {
            window.find(sub.as_str())
        };
        hit.map(|b| start + window[..b].chars().count())
    };
    match (found, name) {
        (Some(i), _) => Ok(Value::from(i)),
        (None, "find" | "rfind") => Ok(Value::from(-1)),
        (None, _) => Err(value_err("substring not found")),
    }
}

fn join_method(receiver: &Value, s: &str, args: &[Value]) -> Result<Value, Error> {
    let a = args::positional("join", args, 1, 1)?;
    let iter = a[0]
        .try_iter()
        .map_err(|_| type_err("can only join an iterable"))?;
    let mut out = String::new();
    for (i, item) in iter.enumerate() {
        if i > 0 {
            out.push_str(s);
        }
        match item.as_str() {
            Some(x) => out.push_str(x),
            None => {
                return Err(type_err(format!(
                    "sequence item {i}: expected str instance, {} found",
                    repr::type_name(&item)
                )));
            }
        }
    }
    Ok(keep_markup(receiver, out))
}

fn partition_method(s: &str, name: &str, args: &[Value]) -> Result<Value, Error> {
    let a = args::positional(name, args, 1, 1)?;
    let sep = match a[0].as_str() {
        Some(x) => x.to_owned(),
        None => {
            return Err(type_err(format!(
                "must be str, not {}",
                repr::type_name(&a[0])
            )));
        }
    };
    if sep.is_empty() {
        return Err(value_err("empty separator"));
    }
    let hit = if name == "partition" {
        s.find(sep.as_str())
    } else {
        s.rfind(sep.as_str())
    };
    let parts: [&str; 3] = match hit {
        Some(i) => [&s[..i], &sep, &s[i + sep.len()..]],
        None if name == "partition" => [s, "", ""],
        None => ["", "", s],
    };
    Ok(Value::from(minijinja::value::Tuple::from(
        parts.iter().map(|p| Value::from(*p)).collect::<Vec<_>>(),
    )))
}

pub(crate) fn justify_method(s: &str, name: &str, args: &[Value]) -> Result<Value, Error> {
    let a = args::positional(name, args, 1, 2)?;
    let width = int_arg(&a[0])?;
    let fill = match a.get(1) {
        None => ' ',
        Some(v) => {
            let f = v.as_str().ok_or_else(|| {
                type_err(format!(
                    "{name}() argument 2 must be str, not {}",
                    repr::type_name(v)
                ))
            })?;
            let mut chars = f.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) => c,
                _ => {
                    return Err(type_err(
                        "The fill character must be exactly one character long",
                    ));
                }
            }
        }
    };
    let len = i64::try_from(s.chars().count()).unwrap_or(i64::MAX);
    if width <= len {
        return Ok(Value::from(s));
    }
    let width = width.min(1 << 24);
    let pad = usize::try_from(width - len).unwrap_or(0);
    let (left, right) = match name {
        "ljust" => (0, pad),
        "rjust" => (pad, 0),
        _ => {
            // CPython: left = marg / 2 + (marg & width & 1)
            let w = usize::try_from(width).unwrap_or(0);
            let left = pad / 2 + (pad & w & 1);
            (left, pad - left)
        }
    };
    let mut out = String::with_capacity(s.len() + pad);
    out.extend(std::iter::repeat_n(fill, left));
    out.push_str(s);
    out.extend(std::iter::repeat_n(fill, right));
    Ok(Value::from(out))
}

fn zfill(s: &str, width: i64) -> String {
    let len = i64::try_from(s.chars().count()).unwrap_or(i64::MAX);
    if width <= len {
        return s.to_owned();
    }
    let pad = usize::try_from(width.min(1 << 24) - len).unwrap_or(0);
    let (sign, rest) = match s.chars().next() {
        Some(c @ ('+' | '-')) => (Some(c), &s[1..]),
        _ => (None, s),
    };
    let mut out = String::new();
    if let Some(c) = sign {
        out.push(c);
    }
    out.extend(std::iter::repeat_n('0', pad));
    out.push_str(rest);
    out
}

fn expandtabs(s: &str, size: i64) -> String {
    let size = usize::try_from(size.clamp(0, 1 << 16)).unwrap_or(0);
    let mut out = String::new();
    let mut column = 0;
    for c in s.chars() {
        match c {
            '\t' => {
                if size > 0 {
                    let n = size - column % size;
                    out.extend(std::iter::repeat_n(' ', n));
                    column += n;
                }
            }
            '\n' | '\r' => {
                out.push(c);
                column = 0;
            }
            c => {
                out.push(c);
                column += 1;
            }
        }
    }
    out
}
