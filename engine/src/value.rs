//! The value model of parsed messages.
//!
//! The reference builds Python objects, so a message can hold things that
//! `serde_json::Value` cannot: integers of any size (`json.loads` and `int()`
//! are arbitrary-precision), `NaN` and the infinities (`json.loads` accepts
//! them, `float()` produces them). [`Value`] keeps all of them exactly, and
//! keeps object keys in insertion order, as Python dicts do.

use indexmap::IndexMap;
use num_bigint::BigInt;
use std::fmt::Write as _;

/// An ordered map from string keys to values (a Python `dict` with `str` keys).
///
/// Keys are hashed with foldhash, seeded per map, not SipHash: a tool
/// call's arguments are a handful of short keys, where SipHash cost a
/// fifth of a small message's parse. Make one with `Map::default()` or
/// [`map_with_capacity`].
pub type Map = IndexMap<String, Value, MapHasher>;

/// The hasher of [`Map`]: foldhash, randomly seeded.
pub type MapHasher = foldhash::fast::RandomState;

/// An empty [`Map`] with room for `n` entries.
pub fn map_with_capacity(n: usize) -> Map {
    Map::with_capacity_and_hasher(n, MapHasher::default())
}

/// A parsed value, with Python's data model.
///
/// Integers that fit in an `i64` are always [`Value::Int`]; [`Value::BigInt`]
/// holds only integers outside that range, so equal integers always compare
/// equal.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// `None` / JSON `null`.
    Null,
    /// `True` / `False`.
    Bool(bool),
    /// An integer in the `i64` range.
    Int(i64),
    /// An integer outside the `i64` range.
    BigInt(BigInt),
    /// A float, including `NaN` and the infinities.
    Float(f64),
    /// A string.
    Str(String),
    /// A list.
    List(Vec<Value>),
    /// A dict with string keys, in insertion order.
    Map(Map),
}

impl Value {
    /// Makes an integer value, choosing [`Value::Int`] when it fits.
    pub fn from_bigint(n: BigInt) -> Value {
        match i64::try_from(&n) {
            Ok(small) => Value::Int(small),
            Err(_) => Value::BigInt(n),
        }
    }

    /// The string, if this is a [`Value::Str`].
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The map, if this is a [`Value::Map`].
    pub fn as_map(&self) -> Option<&Map> {
        match self {
            Value::Map(m) => Some(m),
            _ => None,
        }
    }

    /// The list, if this is a [`Value::List`].
    pub fn as_list(&self) -> Option<&[Value]> {
        match self {
            Value::List(l) => Some(l),
            _ => None,
        }
    }

    /// Python's notion of emptiness used when a message is finalized: `None`,
    /// and empty strings, lists and dicts.
    pub fn is_empty_value(&self) -> bool {
        match self {
            Value::Null => true,
            Value::Str(s) => s.is_empty(),
            Value::List(l) => l.is_empty(),
            Value::Map(m) => m.is_empty(),
            _ => false,
        }
    }

    /// The Python type name (`str`, `int`, `dict`, ...), for error messages
    /// that match the reference's wording.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "NoneType",
            Value::Bool(_) => "bool",
            Value::Int(_) | Value::BigInt(_) => "int",
            Value::Float(_) => "float",
            Value::Str(_) => "str",
            Value::List(_) => "list",
            Value::Map(_) => "dict",
        }
    }

    /// Writes the value as JSON text the way Python's
    /// `json.dumps(value, ensure_ascii=False)` does, except for the separators,
    /// which are compact: non-finite floats become `NaN`, `Infinity` and
    /// `-Infinity`, big integers are written in full.
    pub fn to_json_string(&self) -> String {
        let mut out = String::new();
        self.write_json(&mut out, NonFinite::Python);
        out
    }

    /// Writes the value as JSON text. See [`NonFinite`] for the two ways of
    /// writing values that plain JSON cannot hold.
    pub fn write_json(&self, out: &mut String, style: NonFinite) {
        match self {
            Value::Null => out.push_str("null"),
            Value::Bool(true) => out.push_str("true"),
            Value::Bool(false) => out.push_str("false"),
            Value::Int(i) => push_i64(out, *i),
            Value::BigInt(n) => {
                let in_u64 = n.sign() != num_bigint::Sign::Minus && u64::try_from(n).is_ok();
                match style {
                    NonFinite::Tagged if !in_u64 => {
                        out.push_str("{\"$bigint\": \"");
                        let _ = write!(out, "{n}");
                        out.push_str("\"}");
                    }
                    _ => {
                        let _ = write!(out, "{n}");
                    }
                }
            }
            Value::Float(f) => write_float(out, *f, style),
            Value::Str(s) => write_json_str(out, s),
            Value::List(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    item.write_json(out, style);
                }
                out.push(']');
            }
            Value::Map(map) => {
                out.push('{');
                for (i, (k, v)) in map.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    write_json_str(out, k);
                    out.push_str(": ");
                    v.write_json(out, style);
                }
                out.push('}');
            }
        }
    }
}

/// How [`Value::write_json`] writes floats and integers that plain JSON
/// cannot hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NonFinite {
    /// As Python's `json.dumps` does: `NaN`, `Infinity`, `-Infinity`, and
    /// integers in full.
    Python,
    /// As the conformance vectors do: `{"$float": "nan" | "inf" | "-inf"}`, and
    /// `{"$bigint": "digits"}` for integers outside `[-2^63, 2^64 - 1]`.
    Tagged,
}

fn write_float(out: &mut String, f: f64, style: NonFinite) {
    if f.is_finite() {
        // Python's repr: shortest round-trip digits, always with a '.' or an
        // exponent so that the text reads back as a float.
        out.push_str(&python_float_repr(f));
        return;
    }
    let word = match (style, f.is_nan(), f > 0.0) {
        (NonFinite::Python, true, _) => "NaN",
        (NonFinite::Python, false, true) => "Infinity",
        (NonFinite::Python, false, false) => "-Infinity",
        (NonFinite::Tagged, true, _) => "{\"$float\": \"nan\"}",
        (NonFinite::Tagged, false, true) => "{\"$float\": \"inf\"}",
        (NonFinite::Tagged, false, false) => "{\"$float\": \"-inf\"}",
    };
    out.push_str(word);
}

/// Python's `repr(float)` for a finite value: the shortest digits that read
/// back to the same float, in positional notation for exponents from -4 to
/// 15 and in scientific notation (`1e+16`, `1.5e-05`) outside that range.
pub fn python_float_repr(f: f64) -> String {
    if f == 0.0 {
        return if f.is_sign_negative() {
            "-0.0".into()
        } else {
            "0.0".into()
        };
    }
    // `{:e}` gives the shortest round-trip digits as d.ddddde<exp>.
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').expect("`{:e}` always has an exponent");
    let exp: i32 = exp.parse().expect("`{:e}` exponent is an integer");
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let mut out = String::from(sign);
    if (-4..16).contains(&exp) {
        if exp < 0 {
            out.push_str("0.");
            for _ in 0..(-exp - 1) {
                out.push('0');
            }
            out.push_str(&digits);
        } else {
            let point = exp as usize + 1;
            if digits.len() <= point {
                out.push_str(&digits);
                for _ in digits.len()..point {
                    out.push('0');
                }
                out.push_str(".0");
            } else {
                out.push_str(&digits[..point]);
                out.push('.');
                out.push_str(&digits[point..]);
            }
        }
    } else {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let _ = write!(out, "e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs());
    }
    out
}

/// Appends `i` in decimal (what `write!(out, "{i}")` writes, without the
/// formatting machinery: tool-call arguments are full of small integers).
fn push_i64(out: &mut String, i: i64) {
    let mut buf = [0u8; 20];
    let mut at = buf.len();
    let mut n = i.unsigned_abs();
    loop {
        at -= 1;
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if i < 0 {
        out.push('-');
    }
    // Only ASCII digits were written.
    out.push_str(std::str::from_utf8(&buf[at..]).unwrap_or_default());
}

/// Writes a JSON string literal, escaping only what JSON requires (as
/// `json.dumps(..., ensure_ascii=False)` does).
pub fn write_json_str(out: &mut String, s: &str) {
    out.reserve(s.len() + 2);
    out.push('"');
    // Runs that need no escape are copied whole. Every byte that needs one
    // is ASCII, so the slice bounds are char boundaries.
    let mut start = 0;
    for (i, &b) in s.as_bytes().iter().enumerate() {
        let esc = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            0..0x20 => "",
            _ => continue,
        };
        out.push_str(&s[start..i]);
        if esc.is_empty() {
            let _ = write!(out, "\\u{b:04x}");
        } else {
            out.push_str(esc);
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

impl serde::Serialize for Value {
    /// Serializes through serde's data model. Non-finite floats go through
    /// `serialize_f64` unchanged (serde_json writes them as `null`); big
    /// integers are written as `u64`/`i128` when they fit and as decimal
    /// strings otherwise. Use [`Value::write_json`] for a lossless text form.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        match self {
            Value::Null => s.serialize_unit(),
            Value::Bool(b) => s.serialize_bool(*b),
            Value::Int(i) => s.serialize_i64(*i),
            Value::BigInt(n) => {
                if let Ok(u) = u64::try_from(n) {
                    s.serialize_u64(u)
                } else if let Ok(i) = i128::try_from(n) {
                    s.serialize_i128(i)
                } else {
                    s.serialize_str(&n.to_string())
                }
            }
            Value::Float(f) => s.serialize_f64(*f),
            Value::Str(v) => s.serialize_str(v),
            Value::List(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Value::Map(map) => {
                let mut m = s.serialize_map(Some(map.len()))?;
                for (k, v) in map {
                    m.serialize_entry(k, v)?;
                }
                m.end()
            }
        }
    }
}

impl From<&serde_json::Value> for Value {
    /// Converts plain JSON. Numbers keep their kind: integers become
    /// [`Value::Int`] (or [`Value::BigInt`] above `i64::MAX`), others floats.
    fn from(v: &serde_json::Value) -> Value {
        match v {
            serde_json::Value::Null => Value::Null,
            serde_json::Value::Bool(b) => Value::Bool(*b),
            serde_json::Value::Number(n) => {
                if let Some(i) = n.as_i64() {
                    Value::Int(i)
                } else if let Some(u) = n.as_u64() {
                    Value::BigInt(BigInt::from(u))
                } else {
                    Value::Float(n.as_f64().unwrap_or(f64::NAN))
                }
            }
            serde_json::Value::String(s) => Value::Str(s.clone()),
            serde_json::Value::Array(a) => Value::List(a.iter().map(Value::from).collect()),
            serde_json::Value::Object(o) => {
                Value::Map(o.iter().map(|(k, v)| (k.clone(), Value::from(v))).collect())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_are_written_as_python_writes_them() {
        for i in [
            0,
            7,
            -7,
            10,
            -10,
            1234567890,
            i64::MAX,
            i64::MIN,
            i64::MIN + 1,
        ] {
            let mut out = String::new();
            Value::Int(i).write_json(&mut out, NonFinite::Python);
            assert_eq!(out, i.to_string());
        }
    }

    #[test]
    fn float_repr_matches_python() {
        for (f, want) in [
            (1.0, "1.0"),
            (1.5, "1.5"),
            (0.1, "0.1"),
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (123456789.125, "123456789.125"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1.5e-7, "1.5e-07"),
            (-2.5e300, "-2.5e+300"),
            (-0.0, "-0.0"),
        ] {
            assert_eq!(python_float_repr(f), want, "{f}");
        }
    }

    #[test]
    fn tagged_json_keeps_what_json_cannot_hold() {
        let big: BigInt = "123456789012345678901234567890".parse().unwrap();
        let v = Value::List(vec![
            Value::Float(f64::NAN),
            Value::Float(f64::NEG_INFINITY),
            Value::from_bigint(big),
            Value::from_bigint(BigInt::from(u64::MAX)),
            Value::from_bigint(BigInt::from(7)),
        ]);
        let mut s = String::new();
        v.write_json(&mut s, NonFinite::Tagged);
        assert_eq!(
            s,
            r#"[{"$float": "nan"}, {"$float": "-inf"}, {"$bigint": "123456789012345678901234567890"}, 18446744073709551615, 7]"#
        );
        assert_eq!(Value::from_bigint(BigInt::from(7)), Value::Int(7));
    }
}
