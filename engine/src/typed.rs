//! Typed messages: what compiled templates generate, and the model-agnostic
//! view every message offers.
//!
//! A compiled template (see `response_template!`) generates a `Message`
//! struct whose fields have Rust types derived from the template (`text` →
//! `String`, `int` → [`Int`], `json` → [`Value`], `repeats` → `Vec`, ...), a
//! `Field` enum for events, and a `Parser`. Every generated message, and the
//! run-time mode's [`Map`], implements [`AssistantMessage`], so an
//! application can read content, reasoning and tool calls without knowing
//! which model wrote them.

use crate::value::{Map, Value};
use std::fmt;

/// A field of a compiled template, as its generated `Field` enum names it.
pub trait FieldId: Copy + Eq + fmt::Debug + AsRef<str> + 'static {
    /// Every field, in template order.
    const ALL: &'static [Self];

    /// The field at `index` in template order.
    fn from_index(index: usize) -> Option<Self> {
        Self::ALL.get(index).copied()
    }

    /// The field's name (the message key).
    fn name(self) -> &'static str;
}

/// A value that does not have the type the generated code expected.
///
/// Generated types are derived so that every message the template can
/// produce fits them, so this only reports a bug in the derivation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// Where in the message (`tool_calls[0].function`).
    pub path: String,
    /// The Rust type expected.
    pub expected: &'static str,
    /// The Python type found.
    pub found: &'static str,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: expected {}, found {}",
            if self.path.is_empty() {
                "message"
            } else {
                &self.path
            },
            self.expected,
            self.found
        )
    }
}

impl std::error::Error for Mismatch {}

impl Mismatch {
    /// A mismatch at the top of the value.
    pub fn new(expected: &'static str, found: &Value) -> Mismatch {
        Mismatch {
            path: String::new(),
            expected,
            found: found.type_name(),
        }
    }

    /// The same mismatch inside `key` of a dict.
    pub fn in_key(self, key: &str) -> Mismatch {
        self.under(key)
    }

    /// The same mismatch inside item `i` of a list.
    pub fn in_item(self, i: usize) -> Mismatch {
        self.under(&format!("[{i}]"))
    }

    /// The path with `step` in front: a dot between it and a key that
    /// follows, none before an index.
    fn under(mut self, step: &str) -> Mismatch {
        self.path = if self.path.is_empty() || self.path.starts_with('[') {
            format!("{step}{}", self.path)
        } else {
            format!("{step}.{}", self.path)
        };
        self
    }
}

/// A Rust type that a message value converts to and from.
pub trait Typed: Sized {
    /// Converts a value of the message.
    fn from_value(value: Value) -> Result<Self, Mismatch>;
    /// Whether [`Typed::from_value`] would succeed (checked without
    /// allocating, so that conversion can move the value).
    fn fits(value: &Value) -> bool;
    /// The value back, as the run-time mode has it.
    fn to_value(&self) -> Value;
}

impl Typed for Value {
    fn fits(_: &Value) -> bool {
        true
    }
    fn from_value(value: Value) -> Result<Self, Mismatch> {
        Ok(value)
    }
    fn to_value(&self) -> Value {
        self.clone()
    }
}

/// `Typed` for a type that is exactly one variant of [`Value`].
macro_rules! typed_variant {
    ($($t:ty => $variant:ident),* $(,)?) => {$(
        impl Typed for $t {
            fn fits(value: &Value) -> bool {
                matches!(value, Value::$variant(_))
            }
            fn from_value(value: Value) -> Result<Self, Mismatch> {
                match value {
                    Value::$variant(v) => Ok(v),
                    other => Err(Mismatch::new(stringify!($t), &other)),
                }
            }
            fn to_value(&self) -> Value {
                Value::$variant(self.clone())
            }
        }
    )*};
}

typed_variant!(String => Str, i64 => Int, f64 => Float, bool => Bool, Map => Map);

/// An integer as Python has it: an `i64` almost always, unbounded when the
/// model writes more digits (an `int` field holds whatever `int()` read).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Int {
    /// Fits in an `i64`.
    I64(i64),
    /// Beyond `i64`.
    Big(num_bigint::BigInt),
}

impl Int {
    /// The value, if it fits in an `i64`.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Int::I64(i) => Some(*i),
            Int::Big(_) => None,
        }
    }
}

impl PartialEq<i64> for Int {
    fn eq(&self, other: &i64) -> bool {
        self.as_i64() == Some(*other)
    }
}

impl fmt::Display for Int {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Int::I64(i) => write!(f, "{i}"),
            Int::Big(n) => write!(f, "{n}"),
        }
    }
}

impl serde::Serialize for Int {
    /// As [`Value`] serialises integers.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_value().serialize(s)
    }
}

impl Typed for Int {
    fn fits(value: &Value) -> bool {
        matches!(value, Value::Int(_) | Value::BigInt(_))
    }
    fn from_value(value: Value) -> Result<Self, Mismatch> {
        match value {
            Value::Int(i) => Ok(Int::I64(i)),
            Value::BigInt(n) => Ok(Int::Big(n)),
            other => Err(Mismatch::new("Int", &other)),
        }
    }
    fn to_value(&self) -> Value {
        match self {
            Int::I64(i) => Value::Int(*i),
            Int::Big(n) => Value::from_bigint(n.clone()),
        }
    }
}

impl<T: Typed> Typed for Vec<T> {
    fn fits(value: &Value) -> bool {
        matches!(value, Value::List(items) if items.iter().all(T::fits))
    }
    fn from_value(value: Value) -> Result<Self, Mismatch> {
        match value {
            Value::List(items) => items
                .into_iter()
                .enumerate()
                .map(|(i, v)| T::from_value(v).map_err(|e| e.in_item(i)))
                .collect(),
            other => Err(Mismatch::new("Vec", &other)),
        }
    }
    fn to_value(&self) -> Value {
        Value::List(self.iter().map(Typed::to_value).collect())
    }
}

/// A tool call, read the same way from every model's message.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolCall {
    /// The call's id, when the model wrote one.
    pub id: Option<String>,
    /// The tool's name.
    pub name: String,
    /// The arguments: usually a dict; a string when the model wrote them as
    /// text that is not JSON.
    pub arguments: Value,
}

impl ToolCall {
    /// The tool calls in a `tool_calls` value: a list of calls, or one call.
    pub fn all_in(value: &Value) -> Vec<ToolCall> {
        match value {
            Value::List(items) => items.iter().filter_map(ToolCall::from_value).collect(),
            item @ Value::Map(_) => ToolCall::from_value(item).into_iter().collect(),
            _ => Vec::new(),
        }
    }

    /// Reads a tool call from a message's `tool_calls` item: the OpenAI
    /// shape `{"type": "function", "function": {"name", "arguments"}}`, or
    /// the flat `{"name", "arguments"}`. `None` if there is no string name.
    pub fn from_value(item: &Value) -> Option<ToolCall> {
        let Value::Map(item) = item else {
            return None;
        };
        let call = match item.get("function") {
            Some(Value::Map(f)) => f,
            _ => item,
        };
        let Some(Value::Str(name)) = call.get("name") else {
            return None;
        };
        let arguments = call
            .get("arguments")
            .or_else(|| call.get("parameters"))
            .cloned()
            .unwrap_or(Value::Map(Map::default()));
        let id = match item.get("id") {
            Some(Value::Str(id)) => Some(id.clone()),
            _ => None,
        };
        Some(ToolCall {
            id,
            name: name.clone(),
            arguments,
        })
    }
}

/// A name that is not one of the compiled templates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownTemplate {
    /// The name asked for.
    pub name: String,
    /// The names there are.
    pub known: Vec<&'static str>,
}

impl UnknownTemplate {
    /// The error for `name`, listing `known`.
    pub fn new(name: &str, known: &[&'static str]) -> UnknownTemplate {
        UnknownTemplate {
            name: name.to_owned(),
            known: known.to_vec(),
        }
    }
}

impl fmt::Display for UnknownTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "no compiled template is called '{}' (there are: {})",
            self.name,
            self.known.join(", ")
        )
    }
}

impl std::error::Error for UnknownTemplate {}

/// The keys that hold a model's reasoning, in the order they are looked up.
pub const REASONING_KEYS: [&str; 3] = ["reasoning_content", "reasoning", "thinking"];

/// What every parsed assistant message offers, whichever model wrote it.
pub trait AssistantMessage {
    /// The visible answer (the `content` key), if the model wrote one.
    fn content(&self) -> Option<&str>;
    /// The reasoning (`reasoning_content`, `reasoning` or `thinking`).
    fn reasoning(&self) -> Option<&str>;
    /// The tool calls (the `tool_calls` key), in order. Items that do not
    /// name a tool are left out; [`AssistantMessage::to_value`] keeps them.
    fn tool_calls(&self) -> Vec<ToolCall>;
    /// The whole message as the reference's dict.
    fn to_value(&self) -> Value;
    /// The `tool_calls` value itself, when the message holds it as a
    /// [`Value`] (the run-time [`Map`] does; typed messages do not): lets a
    /// caller read the calls without copying them.
    fn tool_calls_value(&self) -> Option<&Value> {
        None
    }
}

impl AssistantMessage for Map {
    fn content(&self) -> Option<&str> {
        self.get("content").and_then(Value::as_str)
    }

    fn reasoning(&self) -> Option<&str> {
        REASONING_KEYS
            .iter()
            .find_map(|k| self.get(*k).and_then(Value::as_str))
    }

    fn tool_calls(&self) -> Vec<ToolCall> {
        self.get("tool_calls")
            .map_or_else(Vec::new, ToolCall::all_in)
    }

    fn to_value(&self) -> Value {
        Value::Map(self.clone())
    }

    fn tool_calls_value(&self) -> Option<&Value> {
        self.get("tool_calls")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::py::json_loads;

    #[test]
    fn conversions_name_where_a_value_does_not_fit() {
        let v = json_loads(r#"[["a"], ["b", 3]]"#).unwrap();
        let e = Vec::<Vec<String>>::from_value(v).unwrap_err();
        assert_eq!(e.path, "[1][1]");
        assert_eq!((e.expected, e.found), ("String", "int"));
        let e = e.in_key("tool_calls");
        assert_eq!(
            e.to_string(),
            "tool_calls[1][1]: expected String, found int"
        );
        let v = json_loads("[1.5, 2.0]").unwrap();
        assert_eq!(Vec::<f64>::from_value(v.clone()).unwrap().to_value(), v);
    }

    #[test]
    fn the_run_time_message_reads_like_any_other() {
        let Value::Map(m) = json_loads(
            r#"{"role": "assistant", "thinking": "hm", "content": "hi",
                "tool_calls": [{"type": "function", "id": "c1", "function": {"name": "f", "arguments": {"x": 1}}},
                               {"name": "g", "arguments": "raw"}, 7]}"#,
        )
        .unwrap() else {
            unreachable!("a dict")
        };
        assert_eq!(m.content(), Some("hi"));
        assert_eq!(m.reasoning(), Some("hm"));
        let calls = m.tool_calls();
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0].id.as_deref(), Some("c1"));
        assert_eq!(calls[0].name, "f");
        assert_eq!(calls[1].arguments, Value::Str("raw".into()));
    }
}
