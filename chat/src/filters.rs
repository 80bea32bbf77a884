//! jinja2's built-in filters, reimplemented with Python's semantics (the
//! string and number filters here, the sequence filters in
//! [`crate::seqfilters`]). The environment has exactly jinja2's filter set:
//! minijinja's extras (`split`, `lines`, `bool`, …) are not there, since
//! jinja2 rejects them.

use minijinja::value::{Rest, ValueKind, ValueOrKwargs};
use minijinja::{Environment, Error, State, Value};

use crate::args;
use crate::error::{PyExc, py_err, type_err};
use crate::pystr;
use crate::repr;
use crate::unicode;

/// A filter: the state and jinja2's arguments (the filtered value first).
pub(crate) type FilterFn = fn(&mut State, &[Value]) -> Result<Value, Error>;

/// jinja2's filters by name.
pub(crate) fn all() -> Vec<(&'static str, FilterFn)> {
    let mut v: Vec<(&'static str, FilterFn)> = vec![
        ("abs", abs),
        ("capitalize", capitalize),
        ("center", center),
        ("e", escape),
        ("escape", escape),
        ("filesizeformat", filesizeformat),
        ("float", float),
        ("forceescape", forceescape),
        ("format", format),
        ("indent", indent),
        ("int", int),
        ("lower", lower),
        ("pprint", pprint),
        ("replace", replace),
        ("round", round),
        ("safe", safe),
        ("string", string),
        ("striptags", striptags),
        ("title", title),
        ("trim", trim),
        ("truncate", truncate),
        ("upper", upper),
        ("urlencode", urlencode),
        ("wordcount", wordcount),
        ("wordwrap", wordwrap),
        ("tojson", |state, args| crate::json::tojson(state, args)),
    ];
    v.extend(crate::seqfilters::all());
    v
}

/// Registers the filters, and the `{% generation %}` support filter.
pub(crate) fn register(env: &mut Environment<'static>) {
    for (name, f) in all() {
        env.add_filter(name, move |state: &mut State, args: Rest<ValueOrKwargs>| {
            let args = args.into_values();
            f(state, &args)
        });
    }
}

/// jinja2's `soft_str`: `str(value)`, keeping a safe string safe.
pub(crate) fn soft_str(value: &Value) -> Value {
    if value.kind() == ValueKind::String {
        value.clone()
    } else {
        Value::from(repr::str_string(value))
    }
}

fn text(value: &Value) -> String {
    match value.as_str() {
        Some(s) => s.to_owned(),
        None => repr::str_string(value),
    }
}

fn same_safety(like: &Value, s: String) -> Value {
    if like.is_safe() {
        Value::from_safe_string(s)
    } else {
        Value::from(s)
    }
}

fn upper(_: &mut State, args: &[Value]) -> Result<Value, Error> {
    let a = args::bind("do_upper", args, &["s"], 1)?;
    let v = soft_str(a[0].as_ref().unwrap_or(&Value::UNDEFINED));
    Ok(same_safety(&v, unicode::upper(&text(&v))))
}

fn lower(_: &mut State, args: &[Value]) -> Result<Value, Error> {
    let a = args::bind("do_lower", args, &["s"], 1)?;
    let v = soft_str(a[0].as_ref().unwrap_or(&Value::UNDEFINED));
    Ok(same_safety(&v, unicode::lower(&text(&v))))
}

fn capitalize(_: &mut State, args: &[Value]) -> Result<Value, Error> {
    let a = args::bind("do_capitalize", args, &["s"], 1)?;
    let v = soft_str(a[0].as_ref().unwrap_or(&Value::UNDEFINED));
    Ok(same_safety(&v, unicode::capitalize(&text(&v))))
}

/// jinja2's `title` is not `str.title`: it splits at runs of `-`,
/// whitespace and opening brackets, and upper-cases each piece's first
/// character and lowers the rest.
fn title(_: &mut State, args: &[Value]) -> Result<Value, Error> {
    let a = args::bind("do_title", args, &["s"], 1)?;
    let v = soft_str(a[0].as_ref().unwrap_or(&Value::UNDEFINED));
    let s = text(&v);
    let is_sep = |c: char| matches!(c, '-' | '(' | '{' | '[' | '<') || unicode::is_space(c);
    let mut out = String::with_capacity(s.len());
    let mut rest = s.as_str();
    while !rest.is_empty() {
        // alternate: a run of separators, then a word
        let sep_end = rest.find(|c: char| !is_sep(c)).unwrap_or(rest.len());
        let (seps, after) = rest.split_at(sep_end);
        if !seps.is_empty() {
            let mut chars = seps.chars();
            if let Some(c) = chars.next() {
                out.push_str(&unicode::upper(c.encode_utf8(&mut [0; 4])));
            }
            out.push_str(&unicode::lower(chars.as_str()));
        }
        let word_end = after.find(is_sep).unwrap_or(after.len());
        let (word, next) = after.split_at(word_end);
        let mut chars = word.chars();
        if let Some(c) = chars.next() {
            out.push_str(&unicode::upper(c.encode_utf8(&mut [0; 4])));
        }
        out.push_str(&unicode::lower(chars.as_str()));
        rest = next;
    }
    Ok(same_safety(&v, out))
}

fn trim(_: &mut State, args: &[Value]) -> Result<Value, Error> {
    let a = args::bind("do_trim", args, &["value", "chars"], 1)?;
    let v = soft_str(a[0].as_ref().unwrap_or(&Value::UNDEFINED));
    let chars = match &a[1] {
        None => None,
        Some(c) if c.is_none() => None,
        Some(c) => Some(
            c.as_str()
                .map(str::to_owned)
                .ok_or_else(|| type_err("strip arg must be None or str"))?,
        ),
    };
    let s = text(&v);
    Ok(same_safety(
        &v,
        pystr::strip(&s, chars.as_deref(), true, true).to_owned(),
    ))
}

fn replace(state: &mut State, args: &[Value]) -> Result<Value, Error> {
    let a = args::bind("do_replace", args, &["s", "old", "new", "count"], 3)?;
    let get = |i: usize| a[i].clone().unwrap_or_default();
    let s = repr::str_string(&get(0));
    let old = repr::str_string(&get(1));
    let new = repr::str_string(&get(2));
    let count = match &a[3] {
        None => -1,
        Some(v) if v.is_none() => -1,
        Some(v) => pystr::int_arg(v)?,
    };
    Ok(Value::from(pystr::replace(state, &s, &old, &new, count)?))
}

fn center(_: &mut State, args: &[Value]) -> Result<Value, Error> {
    let a = args::bind("do_center", args, &["value", "width"], 1)?;
    let s = text(&soft_str(a[0].as_ref().unwrap_or(&Value::UNDEFINED)));
    let width = a[1].clone().unwrap_or(Value::from(80));
    pystr::justify_method(&s, "center", &[width])
}

fn indent(_: &mut State, args: &[Value]) -> Result<Value, Error> {
    let a = args::bind("do_indent", args, &["s", "width", "first", "blank"], 1)?;
    let value = a[0].clone().unwrap_or_default();
    let indention = match &a[1] {
        None => "    ".to_owned(),
        Some(w) if w.kind() == ValueKind::String => w.as_str().unwrap_or("").to_owned(),
        Some(w) => {
            let n = pystr::int_arg(w).map_err(|_| {
                type_err(format!(
                    "can't multiply sequence by non-int of type '{}'",
                    repr::type_name(w)
                ))
            })?;
            " ".repeat(usize::try_from(n.clamp(0, 1 << 16)).unwrap_or(0))
        }
    };
    let Some(s) = value.as_str() else {
        return Err(type_err(format!(
            "unsupported operand type(s) for +=: '{}' and 'str'",
            repr::type_name(&value)
        )));
    };
    let s = format!("{s}\n");
    let lines: Vec<String> = pystr::splitlines(&s, false)
        .iter()
        .map(|l| l.as_str().unwrap_or_default().to_owned())
        .collect();
    let mut rv = if args::truthy(&a[3], false) {
        lines.join(&format!("\n{indention}"))
    } else {
        let mut it = lines.into_iter();
        let mut rv = it.next().unwrap_or_default();
        let rest: Vec<String> = it
            .map(|l| {
                if l.is_empty() {
                    l
                } else {
                    format!("{indention}{l}")
                }
            })
            .collect();
        if !rest.is_empty() {
            rv.push('\n');
            rv.push_str(&rest.join("\n"));
        }
        rv
    };
    if args::truthy(&a[2], false) {
        rv = format!("{indention}{rv}");
    }
    Ok(same_safety(&value, rv))
}

fn truncate(_: &mut State, args: &[Value]) -> Result<Value, Error> {
    let a = args::bind(
        "do_truncate",
        args,
        &["s", "length", "killwords", "end", "leeway"],
        1,
    )?;
    let s = text(&a[0].clone().unwrap_or_default());
    let length = match &a[1] {
        Some(v) => pystr::int_arg(v)?,
        None => 255,
    };
    let end = a[3].as_ref().map_or("...".to_owned(), text);
    let leeway = match &a[4] {
        Some(v) if !v.is_none() => pystr::int_arg(v)?,
        _ => 5,
    };
    let end_len = i64::try_from(end.chars().count()).unwrap_or(0);
    if length < end_len {
        return Err(py_err(
            PyExc::TypeError,
            format!("expected length >= {end_len}, got {length}"),
        ));
    }
    let chars: Vec<char> = s.chars().collect();
    let len = i64::try_from(chars.len()).unwrap_or(i64::MAX);
    if len <= length + leeway {
        return Ok(Value::from(s));
    }
    let cut = usize::try_from(length - end_len)
        .unwrap_or(0)
        .min(chars.len());
    let head: String = chars[..cut].iter().collect();
    if args::truthy(&a[2], false) {
        return Ok(Value::from(format!("{head}{end}")));
    }
    let result = match head.rfind(' ') {
        Some(i) => head[..i].to_owned(),
        None => head,
    };
    Ok(Value::from(format!("{result}{end}")))
}

fn wordcount(_: &mut State, args: &[Value]) -> Result<Value, Error> {
    let a = args::bind("do_wordcount", args, &["s"], 1)?;
    let s = text(&a[0].clone().unwrap_or_default());
    let mut count = 0;
    let mut in_word = false;
    for c in s.chars() {
        let w = unicode::is_word(c);
        if w && !in_word {
            count += 1;
        }
        in_word = w;
    }
    Ok(Value::from(count))
}

/// `wordwrap`: Python's `textwrap.wrap` per line (greedy, breaking long
/// words), joined by `wrapstring`.
fn wordwrap(_: &mut State, args: &[Value]) -> Result<Value, Error> {
    let a = args::bind(
        "do_wordwrap",
        args,
        &[
            "s",
            "width",
            "break_long_words",
            "wrapstring",
            "break_on_hyphens",
        ],
        1,
    )?;
    let s = text(&a[0].clone().unwrap_or_default());
    let width = match &a[1] {
        Some(v) => usize::try_from(pystr::int_arg(v)?.max(1)).unwrap_or(1),
        None => 79,
    };
    let break_long = args::truthy(&a[2], true);
    let wrapstring = match &a[3] {
        Some(v) if !v.is_none() => text(v),
        _ => "\n".to_owned(),
    };
    let mut paragraphs = Vec::new();
    for line in pystr::splitlines(&s, false) {
        let line = line.as_str().unwrap_or_default().to_owned();
        let mut lines: Vec<String> = Vec::new();
        let mut current = String::new();
        for word in line.split(' ').filter(|w| !w.is_empty()) {
            let mut word = word.to_owned();
            loop {
                let cur_len = current.chars().count();
                let word_len = word.chars().count();
                let need = if current.is_empty() {
                    word_len
                } else {
                    cur_len + 1 + word_len
                };
                if need <= width {
                    if !current.is_empty() {
                        current.push(' ');
                    }
                    current.push_str(&word);
                    break;
                }
                if !current.is_empty() {
                    lines.push(std::mem::take(&mut current));
                    continue;
                }
                if break_long {
                    let head: String = word.chars().take(width).collect();
                    word = word.chars().skip(width).collect();
                    lines.push(head);
                    if word.is_empty() {
                        break;
                    }
                } else {
                    current = word;
                    break;
                }
            }
        }
        if !current.is_empty() {
            lines.push(current);
        }
        paragraphs.push(lines.join(&wrapstring));
    }
    Ok(Value::from(paragraphs.join(&wrapstring)))
}

fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&#34;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn escape(_: &mut State, args: &[Value]) -> Result<Value, Error> {
    let a = args::bind("escape", args, &["s"], 1)?;
    let v = a[0].clone().unwrap_or_default();
    if v.is_safe() {
        return Ok(v);
    }
    // markupsafe escapes str(value); None and undefined print as 'None' / ''.
    Ok(Value::from_safe_string(html_escape(&repr::str_string(&v))))
}

fn forceescape(_: &mut State, args: &[Value]) -> Result<Value, Error> {
    let a = args::bind("do_forceescape", args, &["value"], 1)?;
    let v = a[0].clone().unwrap_or_default();
    Ok(Value::from_safe_string(html_escape(&repr::str_string(&v))))
}

fn safe(_: &mut State, args: &[Value]) -> Result<Value, Error> {
    let a = args::bind("do_mark_safe", args, &["value"], 1)?;
    let v = a[0].clone().unwrap_or_default();
    if v.is_safe() {
        return Ok(v);
    }
    Ok(Value::from_safe_string(repr::str_string(&v)))
}

fn string(_: &mut State, args: &[Value]) -> Result<Value, Error> {
    let a = args::bind("soft_str", args, &["s"], 1)?;
    Ok(soft_str(a[0].as_ref().unwrap_or(&Value::UNDEFINED)))
}

fn pprint(_: &mut State, args: &[Value]) -> Result<Value, Error> {
    let a = args::bind("do_pprint", args, &["value"], 1)?;
    Ok(Value::from(repr::repr_string(
        a[0].as_ref().unwrap_or(&Value::UNDEFINED),
    )))
}

fn striptags(_: &mut State, args: &[Value]) -> Result<Value, Error> {
    let a = args::bind("do_striptags", args, &["value"], 1)?;
    let s = repr::str_string(a[0].as_ref().unwrap_or(&Value::UNDEFINED));
    // markupsafe: drop comments, then tags, collapse whitespace, unescape.
    let mut out = String::new();
    let mut rest = s.as_str();
    while let Some(i) = rest.find("<!--") {
        out.push_str(&rest[..i]);
        match rest[i + 4..].find("-->") {
            Some(j) => rest = &rest[i + 4 + j + 3..],
            None => {
                out.push_str(&rest[i..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    let mut no_tags = String::new();
    let mut rest = out.as_str();
    while let Some(i) = rest.find('<') {
        no_tags.push_str(&rest[..i]);
        match rest[i..].find('>') {
            Some(j) => rest = &rest[i + j + 1..],
            None => {
                no_tags.push_str(&rest[i..]);
                rest = "";
            }
        }
    }
    no_tags.push_str(rest);
    let words: Vec<&str> = no_tags
        .split(unicode::is_space)
        .filter(|w| !w.is_empty())
        .collect();
    let joined = words.join(" ");
    let unescaped = joined
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&#34;", "\"")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&");
    Ok(Value::from(unescaped))
}

fn format(_: &mut State, args: &[Value]) -> Result<Value, Error> {
    let call = args::split(args);
    let Some(value) = call.positional.first() else {
        return Err(type_err(
            "do_format() missing 1 required positional argument: 'value'",
        ));
    };
    let rest = &call.positional[1..];
    if !rest.is_empty() && !call.keywords.is_empty() {
        return Err(py_err(
            PyExc::FilterArgumentError,
            "can't handle positional and keyword arguments at the same time",
        ));
    }
    let operand = if call.keywords.is_empty() {
        Value::from(minijinja::value::Tuple::from(rest.to_vec()))
    } else {
        let map: indexmap::IndexMap<Value, Value> = call
            .keywords
            .iter()
            .map(|(k, v)| (Value::from(k.as_str()), v.clone()))
            .collect();
        Value::from_object(crate::value::PyDict { map, depth: None })
    };
    let s = text(&soft_str(value));
    Ok(Value::from(crate::pyformat::percent_format(&s, &operand)?))
}

fn abs(_: &mut State, args: &[Value]) -> Result<Value, Error> {
    let a = args::positional("abs", args, 1, 1)?;
    let v = &a[0];
    match v.kind() {
        ValueKind::Bool => Ok(Value::from(i64::from(v.is_true()))),
        ValueKind::Number if v.is_integer() => {
            let n = i128::try_from(v.clone()).unwrap_or(0);
            Ok(Value::from(n.unsigned_abs()))
        }
        ValueKind::Number => Ok(Value::from(f64::try_from(v.clone()).unwrap_or(0.0).abs())),
        _ => Err(type_err(format!(
            "bad operand type for abs(): '{}'",
            repr::type_name(v)
        ))),
    }
}

/// Python's `int(str, base)` (whitespace, sign, underscores, prefixes).
fn parse_int(s: &str, base: u32) -> Option<i128> {
    let t = pystr::strip(s, None, true, true);
    let (neg, t) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let lower = t.to_ascii_lowercase();
    let (base, digits) = match (base, lower.get(..2)) {
        (16 | 0, Some("0x")) => (16, &t[2..]),
        (8 | 0, Some("0o")) => (8, &t[2..]),
        (2 | 0, Some("0b")) => (2, &t[2..]),
        (0, _) => (10, t),
        (b, _) => (b, t),
    };
    let digits = digits
        .strip_prefix('_')
        .filter(|_| base != 10)
        .unwrap_or(digits);
    if digits.is_empty()
        || digits.starts_with('_')
        || digits.ends_with('_')
        || digits.contains("__")
    {
        return None;
    }
    let mut n: i128 = 0;
    for c in digits.chars().filter(|&c| c != '_') {
        let d = if c.is_ascii() {
            c.to_digit(base)?
        } else {
            unicode::decimal_value(c)?
        };
        n = n
            .checked_mul(i128::from(base))?
            .checked_add(i128::from(d))?;
    }
    Some(if neg { -n } else { n })
}

/// Python's `float(str)`.
pub(crate) fn parse_float(s: &str) -> Option<f64> {
    let t = pystr::strip(s, None, true, true);
    let lower = t.to_ascii_lowercase();
    let body = lower.trim_start_matches(['+', '-']);
    if matches!(body, "inf" | "infinity" | "nan") {
        return lower
            .parse::<f64>()
            .ok()
            .or(Some(if lower.starts_with('-') {
                f64::NEG_INFINITY
            } else if body == "nan" {
                f64::NAN
            } else {
                f64::INFINITY
            }));
    }
    if t.contains("__") || t.starts_with('_') || t.ends_with('_') {
        return None;
    }
    let cleaned: String = t.chars().filter(|&c| c != '_').collect();
    if !cleaned
        .chars()
        .all(|c| c.is_ascii_digit() || matches!(c, '+' | '-' | '.' | 'e' | 'E'))
    {
        return None;
    }
    cleaned.parse::<f64>().ok()
}

fn int(_: &mut State, args: &[Value]) -> Result<Value, Error> {
    let a = args::bind("do_int", args, &["value", "default", "base"], 1)?;
    let value = a[0].clone().unwrap_or_default();
    let default = a[1].clone().unwrap_or(Value::from(0));
    let base = match &a[2] {
        Some(b) => u32::try_from(pystr::int_arg(b)?).unwrap_or(10),
        None => 10,
    };
    let from_float = |f: f64| -> Result<Value, Error> {
        if f.is_nan() {
            return Ok(default.clone());
        }
        if f.is_infinite() {
            return Ok(default.clone());
        }
        Ok(Value::from(f.trunc() as i128))
    };
    match value.kind() {
        ValueKind::String => {
            let s = value.as_str().unwrap_or_default();
            if let Some(n) = parse_int(s, base) {
                return Ok(Value::from(n));
            }
            match parse_float(s) {
                Some(f) => from_float(f),
                None => Ok(default),
            }
        }
        ValueKind::Bool => Ok(Value::from(i64::from(value.is_true()))),
        ValueKind::Number if value.is_integer() => Ok(value),
        ValueKind::Number => from_float(f64::try_from(value).unwrap_or(f64::NAN)),
        // int(Undefined) raises (Undefined.__int__)
        ValueKind::Undefined => Err(crate::ops::undefined_error(&value)),
        _ => Ok(default),
    }
}

fn float(_: &mut State, args: &[Value]) -> Result<Value, Error> {
    let a = args::bind("do_float", args, &["value", "default"], 1)?;
    let value = a[0].clone().unwrap_or_default();
    let default = a[1].clone().unwrap_or(Value::from(0.0));
    match value.kind() {
        ValueKind::String => Ok(parse_float(value.as_str().unwrap_or_default())
            .map(Value::from)
            .unwrap_or(default)),
        ValueKind::Bool => Ok(Value::from(if value.is_true() { 1.0 } else { 0.0 })),
        ValueKind::Number => Ok(Value::from(f64::try_from(value).unwrap_or(0.0))),
        // float(Undefined) raises (Undefined.__float__)
        ValueKind::Undefined => Err(crate::ops::undefined_error(&value)),
        _ => Ok(default),
    }
}

fn round(_: &mut State, args: &[Value]) -> Result<Value, Error> {
    let a = args::bind("do_round", args, &["value", "precision", "method"], 1)?;
    let value = a[0].clone().unwrap_or_default();
    let precision = match &a[1] {
        Some(p) => pystr::int_arg(p)?,
        None => 0,
    };
    let method = a[2].as_ref().map_or("common".to_owned(), text);
    if !matches!(method.as_str(), "common" | "ceil" | "floor") {
        return Err(py_err(
            PyExc::FilterArgumentError,
            "method must be common, ceil or floor",
        ));
    }
    let is_int = matches!(value.kind(), ValueKind::Bool) || value.is_integer();
    if !matches!(value.kind(), ValueKind::Bool | ValueKind::Number) {
        return Err(type_err(format!(
            "type {} doesn't define __round__ method",
            repr::type_name(&value)
        )));
    }
    if method == "common" && is_int {
        // round(int, n) stays an int.
        let n = i128::try_from(value).unwrap_or(0);
        if precision >= 0 {
            return Ok(Value::from(n));
        }
        let m = 10i128
            .checked_pow(u32::try_from(-precision).unwrap_or(40))
            .unwrap_or(i128::MAX);
        let q = n.div_euclid(m);
        let r = n.rem_euclid(m);
        let q = if r * 2 > m || (r * 2 == m && q % 2 != 0) {
            q + 1
        } else {
            q
        };
        return Ok(Value::from(q.saturating_mul(m)));
    }
    let f = f64::try_from(value).unwrap_or(0.0);
    let p = i32::try_from(precision.clamp(-400, 400)).unwrap_or(0);
    let rounded = match method.as_str() {
        "common" => round_half_even(f, p),
        "ceil" => (f * 10f64.powi(p)).ceil() / 10f64.powi(p),
        _ => (f * 10f64.powi(p)).floor() / 10f64.powi(p),
    };
    Ok(Value::from(rounded))
}

/// Python's `round(float, ndigits)`: correctly rounded, ties to even on the
/// exact binary value (what formatting with a precision computes).
fn round_half_even(f: f64, p: i32) -> f64 {
    if !f.is_finite() {
        return f;
    }
    if p >= 0 {
        let digits = usize::try_from(p.min(340)).unwrap_or(0);
        format!("{f:.digits$}").parse().unwrap_or(f)
    } else {
        let m = 10f64.powi(-p);
        let scaled = f / m;
        let r = scaled.round();
        let r = if (scaled - scaled.trunc()).abs() == 0.5 && r % 2.0 != 0.0 {
            r - scaled.signum()
        } else {
            r
        };
        r * m
    }
}

fn filesizeformat(_: &mut State, args: &[Value]) -> Result<Value, Error> {
    let a = args::bind("do_filesizeformat", args, &["value", "binary"], 1)?;
    let v = a[0].clone().unwrap_or_default();
    let bytes = match v.kind() {
        ValueKind::String => parse_float(v.as_str().unwrap_or_default()).ok_or_else(|| {
            crate::error::value_err(format!(
                "could not convert string to float: {}",
                repr::repr_string(&v)
            ))
        })?,
        _ => f64::try_from(v.clone()).map_err(|_| {
            type_err(format!(
                "float() argument must be a string or a real number, not '{}'",
                repr::type_name(&v)
            ))
        })?,
    };
    let binary = args::truthy(&a[1], false);
    let base: f64 = if binary { 1024.0 } else { 1000.0 };
    let prefixes = if binary {
        ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"]
    } else {
        ["kB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB"]
    };
    if bytes == 1.0 {
        return Ok(Value::from("1 Byte"));
    }
    if bytes < base {
        return Ok(Value::from(format!("{} Bytes", bytes as i64)));
    }
    let mut unit = base;
    for (i, prefix) in prefixes.iter().enumerate() {
        unit = base.powi(i32::try_from(i + 2).unwrap_or(2));
        if bytes < unit {
            return Ok(Value::from(format!("{:.1} {prefix}", base * bytes / unit)));
        }
    }
    Ok(Value::from(format!(
        "{:.1} {}",
        base * bytes / unit,
        prefixes[7]
    )))
}

/// `urllib.parse.quote` (safe `/`; `for_qs`: spaces as `+`, `/` quoted).
fn url_quote(s: &str, for_qs: bool) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'_' | b'.' | b'-' | b'~' => {
                out.push(char::from(b))
            }
            b'/' if !for_qs => out.push('/'),
            b' ' if for_qs => out.push('+'),
            b => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

fn urlencode(_: &mut State, args: &[Value]) -> Result<Value, Error> {
    let a = args::bind("do_urlencode", args, &["value"], 1)?;
    let v = a[0].clone().unwrap_or_default();
    let pairs: Vec<(Value, Value)> = match v.kind() {
        ValueKind::String | ValueKind::Number | ValueKind::Bool | ValueKind::None => {
            return Ok(Value::from(url_quote(&repr::str_string(&v), false)));
        }
        ValueKind::Map => v
            .try_iter()?
            .map(|k| {
                let item = v.get_item(&k).unwrap_or_default();
                (k, item)
            })
            .collect(),
        _ => v
            .try_iter()?
            .map(|pair| {
                let mut it = pair.try_iter().into_iter().flatten();
                (it.next().unwrap_or_default(), it.next().unwrap_or_default())
            })
            .collect(),
    };
    let parts: Vec<String> = pairs
        .iter()
        .map(|(k, v)| {
            format!(
                "{}={}",
                url_quote(&repr::str_string(k), true),
                url_quote(&repr::str_string(v), true)
            )
        })
        .collect();
    Ok(Value::from(parts.join("&")))
}
