//! transformers' `tojson` filter: `json.dumps(x, ensure_ascii=False,
//! indent=None, separators=None, sort_keys=False)`, byte for byte.

use std::fmt::Write as _;

use minijinja::value::ValueKind;
use minijinja::{Error, State, Value};

use crate::args;
use crate::error::{PyExc, py_err, type_err, value_err};
use crate::repr;

/// The filter: `x|tojson(ensure_ascii=False, indent=None, separators=None,
/// sort_keys=False)`, positional or keyword.
pub(crate) fn tojson(state: &State, args: &[Value]) -> Result<Value, Error> {
    let slots = args::bind(
        "tojson",
        args,
        &["x", "ensure_ascii", "indent", "separators", "sort_keys"],
        1,
    )?;
    let value = slots[0].clone().unwrap_or_default();
    let ensure_ascii = args::truthy(&slots[1], false);
    let indent = match &slots[2] {
        None => None,
        Some(v) if v.is_none() => None,
        Some(v) => Some(indent_text(v)?),
    };
    let (item_sep, key_sep) = match &slots[3] {
        Some(v) if !v.is_none() => {
            let items: Vec<Value> = v
                .try_iter()
                .map_err(|_| {
                    type_err(format!(
                        "cannot unpack non-iterable {} object",
                        repr::type_name(v)
                    ))
                })?
                .collect();
            match items.as_slice() {
                [a, b] => (sep_text(a)?, sep_text(b)?),
                _ if items.len() > 2 => {
                    return Err(value_err("too many values to unpack (expected 2)"));
                }
                _ => {
                    return Err(value_err(format!(
                        "not enough values to unpack (expected 2, got {})",
                        items.len()
                    )));
                }
            }
        }
        _ if indent.is_some() => (",".to_owned(), ": ".to_owned()),
        _ => (", ".to_owned(), ": ".to_owned()),
    };
    let dumper = Dumper {
        ensure_ascii,
        indent,
        item_sep,
        key_sep,
        sort_keys: args::truthy(&slots[4], false),
        max_depth: crate::limits::depth_of(state),
    };
    let mut out = String::new();
    dumper.dump(&value, 0, &mut out)?;
    Ok(Value::from(out))
}

fn indent_text(v: &Value) -> Result<String, Error> {
    if let Some(s) = v.as_str() {
        return Ok(s.to_owned());
    }
    if v.kind() == ValueKind::Bool {
        return Ok(if v.is_true() { " " } else { "" }.to_owned());
    }
    if v.is_integer() {
        let n = v.as_i64().unwrap_or(0).clamp(0, 4096);
        return Ok(" ".repeat(usize::try_from(n).unwrap_or(0)));
    }
    Err(type_err(format!(
        "can't multiply sequence by non-int of type '{}'",
        repr::type_name(v)
    )))
}

fn sep_text(v: &Value) -> Result<String, Error> {
    v.as_str().map(str::to_owned).ok_or_else(|| {
        type_err(format!(
            "make_encoder() argument must be str, not {}",
            repr::type_name(v)
        ))
    })
}

/// `json.dumps` with its options chosen.
pub(crate) struct Dumper {
    pub(crate) ensure_ascii: bool,
    pub(crate) indent: Option<String>,
    pub(crate) item_sep: String,
    pub(crate) key_sep: String,
    pub(crate) sort_keys: bool,
    pub(crate) max_depth: usize,
}

impl Dumper {
    fn newline(&self, level: usize, out: &mut String) {
        if let Some(indent) = &self.indent {
            out.push('\n');
            for _ in 0..level {
                out.push_str(indent);
            }
        }
    }

    /// Serialises `value` into `out`.
    pub(crate) fn dump(&self, value: &Value, level: usize, out: &mut String) -> Result<(), Error> {
        if level > self.max_depth {
            return Err(py_err(
                PyExc::RecursionError,
                "maximum recursion depth exceeded while encoding a JSON object",
            ));
        }
        match value.kind() {
            ValueKind::None => out.push_str("null"),
            ValueKind::Bool => out.push_str(if value.is_true() { "true" } else { "false" }),
            ValueKind::Number if value.is_integer() => {
                let _ = write!(out, "{value}");
            }
            ValueKind::Number => {
                let f = f64::try_from(value.clone()).unwrap_or(f64::NAN);
                out.push_str(&float(f));
            }
            ValueKind::String => self.string(value.as_str().unwrap_or_default(), out),
            ValueKind::Seq => self.list(value, level, out)?,
            ValueKind::Iterable if repr::type_name(value) == "list" => {
                self.list(value, level, out)?;
            }
            ValueKind::Map if repr::is_dict(value) => self.dict(value, level, out)?,
            _ => {
                return Err(type_err(format!(
                    "Object of type {} is not JSON serializable",
                    repr::type_name(value)
                )));
            }
        }
        Ok(())
    }

    fn list(&self, value: &Value, level: usize, out: &mut String) -> Result<(), Error> {
        let items: Vec<Value> = value.try_iter()?.collect();
        if items.is_empty() {
            out.push_str("[]");
            return Ok(());
        }
        out.push('[');
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                out.push_str(&self.item_sep);
            }
            self.newline(level + 1, out);
            self.dump(item, level + 1, out)?;
        }
        self.newline(level, out);
        out.push(']');
        Ok(())
    }

    fn dict(&self, value: &Value, level: usize, out: &mut String) -> Result<(), Error> {
        let mut keys: Vec<Value> = value.try_iter()?.collect();
        if keys.is_empty() {
            out.push_str("{}");
            return Ok(());
        }
        if self.sort_keys {
            crate::compare::sort_values(&mut keys, false)?;
        }
        out.push('{');
        for (i, key) in keys.iter().enumerate() {
            if i > 0 {
                out.push_str(&self.item_sep);
            }
            self.newline(level + 1, out);
            // Python writes None/bool/number keys as their JSON text.
            match key.kind() {
                ValueKind::String => self.string(key.as_str().unwrap_or_default(), out),
                ValueKind::None => out.push_str("\"null\""),
                ValueKind::Bool => out.push_str(if key.is_true() {
                    "\"true\""
                } else {
                    "\"false\""
                }),
                ValueKind::Number => {
                    let mut text = String::new();
                    self.dump(key, 0, &mut text)?;
                    self.string(&text, out);
                }
                _ => {
                    return Err(type_err(format!(
                        "keys must be str, int, float, bool or None, not {}",
                        repr::type_name(key)
                    )));
                }
            }
            out.push_str(&self.key_sep);
            self.dump(&value.get_item(key)?, level + 1, out)?;
        }
        self.newline(level, out);
        out.push('}');
        Ok(())
    }

    fn string(&self, s: &str, out: &mut String) {
        out.push('"');
        for c in s.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                '\u{8}' => out.push_str("\\b"),
                '\u{c}' => out.push_str("\\f"),
                c if (c as u32) < 0x20 => {
                    let _ = write!(out, "\\u{:04x}", c as u32);
                }
                c if self.ensure_ascii && !c.is_ascii() => {
                    let mut units = [0u16; 2];
                    for unit in c.encode_utf16(&mut units) {
                        let _ = write!(out, "\\u{unit:04x}");
                    }
                }
                c => out.push(c),
            }
        }
        out.push('"');
    }
}

/// `json.dumps` of a float: `repr`, with `NaN`, `Infinity`, `-Infinity`.
fn float(f: f64) -> String {
    if f.is_nan() {
        "NaN".to_owned()
    } else if f.is_infinite() {
        if f > 0.0 { "Infinity" } else { "-Infinity" }.to_owned()
    } else {
        repr::shortest_float(f)
    }
}
