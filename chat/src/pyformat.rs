//! Python's string formatting: `str.format` (through the sandbox's
//! formatter, so `{0.attr}` is a sandboxed lookup) and `%`-formatting (the
//! `format` filter is `value % args`), with the format-spec mini-language.

use minijinja::value::ValueKind;
use minijinja::{Error, Value};

use crate::args;
use crate::error::{PyExc, py_err, type_err, value_err};
use crate::repr;

/// `s.format(*args, **kwargs)`.
pub(crate) fn str_format(s: &str, call_args: &[Value]) -> Result<String, Error> {
    let call = args::split(call_args);
    let kwargs: Vec<(Value, Value)> = call
        .keywords
        .into_iter()
        .map(|(k, v)| (Value::from(k), v))
        .collect();
    let lookup = Lookup {
        positional: &call.positional,
        mapping: None,
        keywords: &kwargs,
    };
    vformat(s, &lookup, 2)
}

/// `s.format_map(mapping)`.
pub(crate) fn str_format_map(s: &str, mapping: &Value) -> Result<String, Error> {
    let lookup = Lookup {
        positional: &[],
        mapping: Some(mapping),
        keywords: &[],
    };
    vformat(s, &lookup, 2)
}

struct Lookup<'a> {
    positional: &'a [Value],
    mapping: Option<&'a Value>,
    keywords: &'a [(Value, Value)],
}

impl Lookup<'_> {
    fn index(&self, i: usize) -> Result<Value, Error> {
        self.positional
            .get(i)
            .cloned()
            .ok_or_else(|| py_err(PyExc::IndexError, "tuple index out of range".to_owned()))
    }

    fn key(&self, name: &str) -> Result<Value, Error> {
        if let Some(m) = self.mapping {
            return match m.get_item(&Value::from(name)) {
                Ok(v) if !v.is_undefined() => Ok(v),
                _ => Err(py_err(PyExc::KeyError, format!("'{name}'"))),
            };
        }
        self.keywords
            .iter()
            .find(|(k, _)| k.as_str() == Some(name))
            .map(|(_, v)| v.clone())
            .ok_or_else(|| py_err(PyExc::KeyError, format!("'{name}'")))
    }
}

fn vformat(s: &str, lookup: &Lookup<'_>, depth: usize) -> Result<String, Error> {
    if depth == 0 {
        return Err(value_err("Max string recursion exceeded"));
    }
    let mut out = String::new();
    let mut auto = 0usize;
    let mut numbering: Option<bool> = None; // Some(true): automatic
    let chars: Vec<char> = s.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '}' {
            if chars.get(i + 1) == Some(&'}') {
                out.push('}');
                i += 2;
                continue;
            }
            return Err(value_err("Single '}' encountered in format string"));
        }
        if c != '{' {
            out.push(c);
            i += 1;
            continue;
        }
        if chars.get(i + 1) == Some(&'{') {
            out.push('{');
            i += 2;
            continue;
        }
        // A replacement field: find its end, counting nested braces.
        let mut j = i + 1;
        let mut level = 1;
        while j < chars.len() {
            match chars[j] {
                '{' => level += 1,
                '}' => {
                    level -= 1;
                    if level == 0 {
                        break;
                    }
                }
                _ => {}
            }
            j += 1;
        }
        if j >= chars.len() {
            return Err(value_err(if i + 1 >= chars.len() {
                "Single '{' encountered in format string"
            } else if level > 1 {
                "unmatched '{' in format spec"
            } else {
                "expected '}' before end of string"
            }));
        }
        let field: String = chars[i + 1..j].iter().collect();
        i = j + 1;
        // field_name[!conversion][:spec]
        let (head, spec) = match split_spec(&field) {
            Some((h, sp)) => (h, Some(sp)),
            None => (field.as_str(), None),
        };
        let (name, conversion) = match head.find('!') {
            Some(k) => {
                let conv = &head[k + 1..];
                if conv.chars().count() != 1 {
                    return Err(value_err("expected ':' after conversion specifier"));
                }
                (&head[..k], conv.chars().next())
            }
            None => (head, None),
        };
        let (first, rest) = split_field_name(name);
        let mut value = if first.is_empty() {
            if numbering == Some(false) {
                return Err(value_err(
                    "cannot switch from manual field specification to automatic field numbering",
                ));
            }
            numbering = Some(true);
            let v = lookup.index(auto)?;
            auto += 1;
            v
        } else if let Ok(n) = first.parse::<usize>() {
            if numbering == Some(true) {
                return Err(value_err(
                    "cannot switch from automatic field numbering to manual field specification",
                ));
            }
            numbering = Some(false);
            lookup.index(n)?
        } else {
            lookup.key(first)?
        };
        for part in rest {
            value = match part {
                FieldPart::Attr(a) => crate::lookup::getattr(&value, &a),
                FieldPart::Item(k) => {
                    let key = match k.parse::<i64>() {
                        Ok(n) => Value::from(n),
                        Err(_) => Value::from(k.as_str()),
                    };
                    crate::lookup::getitem(&value, &key)
                }
            };
            crate::lookup::check_unsafe(&value)?;
        }
        let value = match conversion {
            None => value,
            Some('s') => Value::from(repr::str_string(&value)),
            Some('r') | Some('a') => Value::from(repr::repr_string(&value)),
            Some(c) => {
                return Err(value_err(format!("Unknown conversion specifier {c}")));
            }
        };
        let spec = match spec {
            Some(sp) if sp.contains('{') => vformat(sp, lookup, depth - 1)?,
            Some(sp) => sp.to_owned(),
            None => String::new(),
        };
        out.push_str(&format_value(&value, &spec)?);
    }
    Ok(out)
}

/// Splits `name!conv:spec` at the first `:` outside brackets.
fn split_spec(field: &str) -> Option<(&str, &str)> {
    let mut in_bracket = false;
    for (i, c) in field.char_indices() {
        match c {
            '[' => in_bracket = true,
            ']' => in_bracket = false,
            ':' if !in_bracket => return Some((&field[..i], &field[i + 1..])),
            _ => {}
        }
    }
    None
}

enum FieldPart {
    Attr(String),
    Item(String),
}

fn split_field_name(name: &str) -> (&str, Vec<FieldPart>) {
    let end = name.find(['.', '[']).unwrap_or(name.len());
    let first = &name[..end];
    let mut parts = Vec::new();
    let mut rest = &name[end..];
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('.') {
            let e = r.find(['.', '[']).unwrap_or(r.len());
            parts.push(FieldPart::Attr(r[..e].to_owned()));
            rest = &r[e..];
        } else if let Some(r) = rest.strip_prefix('[') {
            let e = r.find(']').unwrap_or(r.len());
            parts.push(FieldPart::Item(r[..e].to_owned()));
            rest = r.get(e + 1..).unwrap_or("");
        } else {
            break;
        }
    }
    (first, parts)
}

/// A parsed format spec: `[[fill]align][sign][#][0][width][,|_][.precision][type]`.
#[derive(Default)]
struct Spec {
    fill: Option<char>,
    align: Option<char>,
    sign: Option<char>,
    alternate: bool,
    zero: bool,
    width: Option<usize>,
    grouping: Option<char>,
    precision: Option<usize>,
    ty: Option<char>,
}

fn parse_spec(spec: &str) -> Result<Spec, Error> {
    let chars: Vec<char> = spec.chars().collect();
    let mut s = Spec::default();
    let mut i = 0;
    let is_align = |c: char| matches!(c, '<' | '>' | '^' | '=');
    if chars.len() >= 2 && is_align(chars[1]) {
        s.fill = Some(chars[0]);
        s.align = Some(chars[1]);
        i = 2;
    } else if !chars.is_empty() && is_align(chars[0]) {
        s.align = Some(chars[0]);
        i = 1;
    }
    if let Some(&c) = chars.get(i)
        && matches!(c, '+' | '-' | ' ')
    {
        s.sign = Some(c);
        i += 1;
    }
    if chars.get(i) == Some(&'#') {
        s.alternate = true;
        i += 1;
    }
    if chars.get(i) == Some(&'0') {
        s.zero = true;
        i += 1;
    }
    let start = i;
    while chars.get(i).is_some_and(char::is_ascii_digit) {
        i += 1;
    }
    if i > start {
        let w: String = chars[start..i].iter().collect();
        s.width = Some(
            w.parse()
                .map_err(|_| value_err("Too many decimal digits in format string"))?,
        );
    }
    if let Some(&c) = chars.get(i)
        && matches!(c, ',' | '_')
    {
        s.grouping = Some(c);
        i += 1;
    }
    if chars.get(i) == Some(&'.') {
        i += 1;
        let start = i;
        while chars.get(i).is_some_and(char::is_ascii_digit) {
            i += 1;
        }
        if i == start {
            return Err(value_err("Format specifier missing precision"));
        }
        let p: String = chars[start..i].iter().collect();
        s.precision = Some(
            p.parse()
                .map_err(|_| value_err("Too many decimal digits in format string"))?,
        );
    }
    if i < chars.len() {
        s.ty = Some(chars[i]);
        i += 1;
    }
    if i < chars.len() {
        return Err(value_err("Invalid format specifier"));
    }
    Ok(s)
}

/// `format(value, spec)`.
pub(crate) fn format_value(value: &Value, spec: &str) -> Result<String, Error> {
    if spec.is_empty() {
        return Ok(repr::str_string(value));
    }
    let s = parse_spec(spec)?;
    let kind = value.kind();
    let number = matches!(kind, ValueKind::Number | ValueKind::Bool);
    if kind == ValueKind::String {
        if let Some(t) = s.ty
            && t != 's'
        {
            return Err(value_err(format!(
                "Unknown format code '{t}' for object of type 'str'"
            )));
        }
        if s.sign.is_some() {
            return Err(value_err("Sign not allowed in string format specifier"));
        }
        let text = value.as_str().unwrap_or_default();
        let text: String = match s.precision {
            Some(p) => text.chars().take(p).collect(),
            None => text.to_owned(),
        };
        return Ok(pad(&text, &s, '<', ""));
    }
    if !number {
        return Err(type_err(format!(
            "unsupported format string passed to {}.__format__",
            repr::type_name(value)
        )));
    }
    let is_int = kind == ValueKind::Bool || value.is_integer();
    let ty = s.ty;
    if is_int && matches!(ty, None | Some('d' | 'n' | 'x' | 'X' | 'o' | 'b' | 'c')) {
        if s.precision.is_some() {
            return Err(value_err(
                "Precision not allowed in integer format specifier",
            ));
        }
        let n = i128::try_from(value.clone()).unwrap_or(0);
        let (neg, mag) = (n < 0, n.unsigned_abs());
        let (digits, prefix) = match ty {
            Some('x') => (format!("{mag:x}"), "0x"),
            Some('X') => (format!("{mag:X}"), "0X"),
            Some('o') => (format!("{mag:o}"), "0o"),
            Some('b') => (format!("{mag:b}"), "0b"),
            Some('c') => {
                let c = u32::try_from(n)
                    .ok()
                    .and_then(char::from_u32)
                    .ok_or_else(|| py_err(PyExc::OverflowError, "%c arg not in range(0x110000)"))?;
                return Ok(pad(&c.to_string(), &s, '<', ""));
            }
            _ => (mag.to_string(), ""),
        };
        let digits = group(
            &digits,
            s.grouping,
            if matches!(ty, Some('x' | 'X' | 'o' | 'b')) {
                4
            } else {
                3
            },
        );
        let sign = sign_text(neg, s.sign);
        let prefix = if s.alternate { prefix } else { "" };
        return Ok(pad_number(&format!("{prefix}{digits}"), sign, &s));
    }
    let f = f64::try_from(value.clone()).unwrap_or(f64::NAN);
    let (neg, mag) = (f.is_sign_negative() && !f.is_nan(), f.abs());
    let body = match ty {
        Some('f' | 'F') => fixed(mag, s.precision.unwrap_or(6), ty == Some('F')),
        Some('e' | 'E') => exp(mag, s.precision.unwrap_or(6), ty == Some('E')),
        Some('g' | 'G') => general(mag, s.precision.unwrap_or(6), ty == Some('G'), s.alternate),
        Some('%') => format!("{}%", fixed(mag * 100.0, s.precision.unwrap_or(6), false)),
        None => match s.precision {
            None => repr::float_repr(mag),
            Some(p) => {
                let g = general(mag, p.max(1), false, false);
                if g.contains(['.', 'e', 'n', 'i']) {
                    g
                } else {
                    format!("{g}.0")
                }
            }
        },
        Some(t) => {
            return Err(value_err(format!(
                "Unknown format code '{t}' for object of type '{}'",
                repr::type_name(value)
            )));
        }
    };
    let body = match s.grouping {
        Some(g) => {
            let (int, frac) = body.split_at(body.find(['.', 'e', '%']).unwrap_or(body.len()));
            format!("{}{frac}", group(int, Some(g), 3))
        }
        None => body,
    };
    Ok(pad_number(&body, sign_text(neg, s.sign), &s))
}

fn sign_text(neg: bool, sign: Option<char>) -> &'static str {
    match (neg, sign) {
        (true, _) => "-",
        (false, Some('+')) => "+",
        (false, Some(' ')) => " ",
        _ => "",
    }
}

fn group(digits: &str, sep: Option<char>, every: usize) -> String {
    let Some(sep) = sep else {
        return digits.to_owned();
    };
    let chars: Vec<char> = digits.chars().collect();
    let mut out = String::new();
    for (i, c) in chars.iter().enumerate() {
        if i > 0 && (chars.len() - i).is_multiple_of(every) {
            out.push(sep);
        }
        out.push(*c);
    }
    out
}

fn fixed(f: f64, precision: usize, upper: bool) -> String {
    if !f.is_finite() {
        return nonfinite(f, upper);
    }
    format!("{f:.precision$}")
}

fn exp(f: f64, precision: usize, upper: bool) -> String {
    if !f.is_finite() {
        return nonfinite(f, upper);
    }
    let s = format!("{f:.precision$e}");
    let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
    let e: i32 = e.parse().unwrap_or(0);
    let out = format!("{m}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs());
    if upper { out.to_uppercase() } else { out }
}

fn general(f: f64, precision: usize, upper: bool, alternate: bool) -> String {
    if !f.is_finite() {
        return nonfinite(f, upper);
    }
    let p = precision.max(1);
    if f == 0.0 {
        return if alternate {
            format!("{:.*}", p - 1, 0.0)
        } else {
            "0".to_owned()
        };
    }
    let sci = format!("{f:.prec$e}", prec = p - 1);
    let exp_val: i32 = sci
        .split_once('e')
        .and_then(|(_, e)| e.parse().ok())
        .unwrap_or(0);
    let p_i = i32::try_from(p).unwrap_or(i32::MAX);
    let mut out = if exp_val >= -4 && exp_val < p_i {
        let decimals = usize::try_from(p_i - 1 - exp_val).unwrap_or(0);
        format!("{f:.decimals$}")
    } else {
        exp(f, p - 1, false)
    };
    if !alternate {
        // strip trailing zeros (and a bare point) from the mantissa
        let (m, e) = match out.find('e') {
            Some(i) => (out[..i].to_owned(), out[i..].to_owned()),
            None => (out.clone(), String::new()),
        };
        let m = if m.contains('.') {
            m.trim_end_matches('0').trim_end_matches('.').to_owned()
        } else {
            m
        };
        out = format!("{m}{e}");
    }
    if upper { out.to_uppercase() } else { out }
}

fn nonfinite(f: f64, upper: bool) -> String {
    let s = if f.is_nan() { "nan" } else { "inf" };
    if upper {
        s.to_uppercase()
    } else {
        s.to_owned()
    }
}

fn pad(text: &str, s: &Spec, default_align: char, sign: &str) -> String {
    let body = format!("{sign}{text}");
    let len = body.chars().count();
    let width = s.width.unwrap_or(0).min(1 << 20);
    if len >= width {
        return body;
    }
    let fill = s.fill.unwrap_or(' ');
    let n = width - len;
    let (l, r) = match s.align.unwrap_or(default_align) {
        '<' => (0, n),
        '>' | '=' => (n, 0),
        _ => (n / 2, n - n / 2),
    };
    let mut out = String::new();
    out.extend(std::iter::repeat_n(fill, l));
    out.push_str(&body);
    out.extend(std::iter::repeat_n(fill, r));
    out
}

fn pad_number(body: &str, sign: &str, s: &Spec) -> String {
    let width = s.width.unwrap_or(0).min(1 << 20);
    let align = s
        .align
        .or(if s.zero { Some('=') } else { None })
        .unwrap_or('>');
    if align == '=' {
        let fill = s.fill.unwrap_or(if s.zero { '0' } else { ' ' });
        let len = sign.chars().count() + body.chars().count();
        let n = width.saturating_sub(len);
        let mut out = String::from(sign);
        out.extend(std::iter::repeat_n(fill, n));
        out.push_str(body);
        return out;
    }
    let spec = Spec {
        fill: s.fill,
        align: Some(align),
        width: s.width,
        ..Spec::default()
    };
    pad(body, &spec, '>', sign)
}

/// `value % args` for a string `value` (the `format` filter): `%s`, `%r`,
/// `%d`, `%i`, `%f`, `%x`, … with flags, width and precision, positional
/// (a tuple or one value) or by name (`%(name)s` with a mapping).
pub(crate) fn percent_format(s: &str, args: &Value) -> Result<String, Error> {
    let mapping = args.kind() == ValueKind::Map;
    let items: Vec<Value> = if args.is_tuple() {
        args.try_iter()?.collect()
    } else {
        vec![args.clone()]
    };
    let mut next = 0usize;
    let mut out = String::new();
    let chars: Vec<char> = s.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut key = None;
        if chars.get(i) == Some(&'(') {
            let end = chars[i..].iter().position(|&c| c == ')').map(|p| p + i);
            let Some(end) = end else {
                return Err(value_err("incomplete format key"));
            };
            key = Some(chars[i + 1..end].iter().collect::<String>());
            i = end + 1;
        }
        let mut flags = String::new();
        while let Some(&f) = chars.get(i) {
            if matches!(f, '-' | '+' | ' ' | '#' | '0') {
                flags.push(f);
                i += 1;
            } else {
                break;
            }
        }
        let mut width = String::new();
        while chars.get(i).is_some_and(char::is_ascii_digit) {
            width.push(chars[i]);
            i += 1;
        }
        let mut precision = None;
        if chars.get(i) == Some(&'.') {
            i += 1;
            let mut p = String::new();
            while chars.get(i).is_some_and(char::is_ascii_digit) {
                p.push(chars[i]);
                i += 1;
            }
            precision = Some(p);
        }
        let Some(&conv) = chars.get(i) else {
            return Err(value_err("incomplete format"));
        };
        i += 1;
        if conv == '%' {
            out.push('%');
            continue;
        }
        let value = match &key {
            Some(k) => args
                .get_item(&Value::from(k.as_str()))
                .ok()
                .filter(|v| !v.is_undefined())
                .ok_or_else(|| py_err(PyExc::KeyError, format!("'{k}'")))?,
            None if mapping && items.len() == 1 && !args.is_tuple() => args.clone(),
            None => {
                let v = items
                    .get(next)
                    .cloned()
                    .ok_or_else(|| type_err("not enough arguments for format string"))?;
                next += 1;
                v
            }
        };
        let align = if flags.contains('-') { "<" } else { "" };
        let sign = if flags.contains('+') {
            "+"
        } else if flags.contains(' ') {
            " "
        } else {
            ""
        };
        let zero = if flags.contains('0') && !flags.contains('-') {
            "0"
        } else {
            ""
        };
        let alt = if flags.contains('#') { "#" } else { "" };
        let prec = precision
            .as_ref()
            .map(|p| format!(".{}", if p.is_empty() { "0" } else { p }))
            .unwrap_or_default();
        let piece = match conv {
            's' | 'r' | 'a' => {
                let text = if conv == 's' {
                    repr::str_string(&value)
                } else {
                    repr::repr_string(&value)
                };
                let align = if align.is_empty() { ">" } else { align };
                format_value(&Value::from(text), &format!("{align}{width}{prec}"))?
            }
            'd' | 'i' | 'u' => {
                let n = to_int(&value)?;
                format_value(&n, &format!("{align}{sign}{zero}{width}d"))?
            }
            'x' | 'X' | 'o' => {
                let n = to_int(&value)?;
                format_value(&n, &format!("{align}{sign}{alt}{zero}{width}{conv}"))?
            }
            'f' | 'F' | 'e' | 'E' | 'g' | 'G' => {
                let f = to_float(&value)?;
                format_value(&f, &format!("{align}{sign}{alt}{zero}{width}{prec}{conv}"))?
            }
            'c' => match value.as_str() {
                Some(t) => t.to_owned(),
                None => format_value(&to_int(&value)?, "c")?,
            },
            other => {
                return Err(value_err(format!(
                    "unsupported format character '{other}' (0x{:x}) at index {}",
                    other as u32,
                    i - 1
                )));
            }
        };
        out.push_str(&piece);
    }
    if !mapping && next < items.len() && (args.is_tuple() || next == 0) {
        return Err(type_err(
            "not all arguments converted during string formatting",
        ));
    }
    Ok(out)
}

fn to_int(v: &Value) -> Result<Value, Error> {
    match v.kind() {
        ValueKind::Bool => Ok(Value::from(i64::from(v.is_true()))),
        ValueKind::Number if v.is_integer() => Ok(v.clone()),
        ValueKind::Number => {
            let f = f64::try_from(v.clone()).unwrap_or(0.0);
            Ok(Value::from(f.trunc() as i64))
        }
        _ => Err(type_err(format!(
            "%d format: a real number is required, not {}",
            repr::type_name(v)
        ))),
    }
}

fn to_float(v: &Value) -> Result<Value, Error> {
    match v.kind() {
        ValueKind::Bool | ValueKind::Number => {
            Ok(Value::from(f64::try_from(v.clone()).unwrap_or(0.0)))
        }
        _ => Err(type_err(format!(
            "must be real number, not {}",
            repr::type_name(v)
        ))),
    }
}
