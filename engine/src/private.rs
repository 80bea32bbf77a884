//! What generated code uses. Not a public API: it changes with the code
//! generator, and generated code checks it is looking at the version it
//! was generated for (see [`COMPAT_0_1`]).

pub use crate::content::ContentSpec;
pub use crate::error::{ParseError, ParseErrorKind};
pub use crate::event::{Event, OwnedEvent};
pub use crate::machine::{HasRegions, LiteralHit, Machine, NoRegions, RegionValues, TypedRegions};
pub use crate::parser::{
    Events, FieldValues, Malformed, OpenRegion, Parser, ParserOptions, Replaced, TypedEvents,
    Unclaimed,
};
pub use crate::py::{JSON_MAX_DEPTH, json_object_entries};
pub use crate::pyre::{
    Assertion, Class, ClassKind, Fold, Inst, One, Peek, Program, Regex, Required, StartScan,
};
pub use crate::scan::captures::leftmost_first_end;
pub use crate::scan::delimiter::{Branch, Delimiter, DelimiterSource, Matcher, Trackers};
pub use crate::scan::stream::{
    Advance, Automata, Run, StartMemo, StreamScan, decide_starts, lacks_bytes,
};
pub use crate::scan::table::DfaTable;
pub use crate::template::{Field, Template};
pub use crate::transform::{Node as TransformNode, Transform};
pub use crate::typed::{
    AssistantMessage, FieldId, Int, Mismatch, REASONING_KEYS, ToolCall, Typed, UnknownTemplate,
};
pub use crate::value::{Map, Value};
pub use memchr;
pub use serde;
pub use std::borrow::Cow;
pub use std::sync::LazyLock;

/// Generated code evaluates this constant; a runtime whose generated-code
/// interface changed renames it, so code generated for another version
/// fails to compile with a message naming the version.
pub const COMPAT_0_1: () = ();

/// The set of the given bytes.
pub fn byte_set(members: &[u8]) -> [bool; 256] {
    let mut set = [false; 256];
    for &b in members {
        set[b as usize] = true;
    }
    set
}

/// A dict from its entries, in order.
pub fn map(entries: Vec<(String, Value)>) -> Map {
    entries.into_iter().collect()
}

/// The value at `keys` inside `value`, each key a dict's entry, if every
/// step is there (what a transform's `{content.a.b}` reads). Generated
/// builders test this before they move anything out.
pub fn value_at<'v>(value: &'v Value, keys: &[&str]) -> Option<&'v Value> {
    keys.iter().try_fold(value, |v, key| match v {
        Value::Map(m) => m.get(*key),
        _ => None,
    })
}

/// Moves the value at `keys` out of `value`, leaving `null` there (the
/// rest of `value` is dropped by the caller, so nothing reads the hole).
/// A path that [`value_at`] did not find gives `null`.
pub fn take_at(value: &mut Value, keys: &[&str]) -> Value {
    let mut v = value;
    for key in keys {
        v = match v {
            Value::Map(m) => match m.get_mut(*key) {
                Some(next) => next,
                None => return Value::Null,
            },
            _ => return Value::Null,
        };
    }
    std::mem::replace(v, Value::Null)
}

/// `transform_each`: moves the list element's entry `key` out (leaving
/// `null`, the element is dropped after), or, when the element has none,
/// the text of the last named group `key` (the reference's scope is
/// `{**captures, **item}`); `null` if neither is there, which the
/// generated test has ruled out.
pub fn take_entry(item: &mut Map, captures: &[(String, String)], key: &str) -> Value {
    match item.get_mut(key) {
        Some(v) => std::mem::replace(v, Value::Null),
        None => captures
            .iter()
            .rev()
            .find(|(name, _)| name == key)
            .map_or(Value::Null, |(_, text)| Value::Str(text.clone())),
    }
}

/// Whether [`take_entry`] finds `key` in the element or the groups.
pub fn has_entry(item: &Map, captures: &[(String, String)], key: &str) -> bool {
    item.contains_key(key) || captures.iter().any(|(name, _)| name == key)
}

/// An integer beyond `i64`, from its decimal digits (as the generator
/// writes it; anything unreadable becomes `None`).
pub fn big_int(digits: &str) -> Value {
    match digits.parse::<num_bigint::BigInt>() {
        Ok(n) => Value::from_bigint(n),
        Err(_) => Value::Null,
    }
}

/// Converts the value a generated struct read for `key`; a missing key is
/// `None`.
pub fn convert_optional<T: Typed>(value: Option<Value>, key: &str) -> Result<Option<T>, Mismatch> {
    match value {
        None => Ok(None),
        Some(v) => T::from_value(v).map(Some).map_err(|e| e.in_key(key)),
    }
}

/// Converts the value read for `key`, which the template's defaults
/// guarantee; `null` is `None`.
pub fn convert_nullable<T: Typed>(value: Option<Value>, key: &str) -> Result<Option<T>, Mismatch> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(v) => T::from_value(v).map(Some).map_err(|e| e.in_key(key)),
    }
}

/// Converts the value read for `key`, which the template's defaults
/// guarantee.
pub fn convert_required<T: Typed>(value: Option<Value>, key: &str) -> Result<T, Mismatch> {
    match value {
        Some(v) => T::from_value(v).map_err(|e| e.in_key(key)),
        None => Err(Mismatch {
            path: key.to_owned(),
            expected: "a value",
            found: "nothing",
        }),
    }
}

/// The dict a generated struct is read from.
pub fn expect_map(value: Value) -> Result<Map, Mismatch> {
    match value {
        Value::Map(m) => Ok(m),
        other => Err(Mismatch::new("a dict", &other)),
    }
}

/// A typed message that did not fit its generated type, as a parse error
/// that keeps the whole message's text (`raw`).
pub fn mismatch_error(m: Mismatch, message: &Map) -> ParseError {
    ParseError {
        kind: ParseErrorKind::Type(Box::new(m.clone())),
        field: m.path.split(['.', '[']).next().map(str::to_owned),
        offset: 0,
        raw: Value::Map(message.clone()).to_json_string(),
        message: m.to_string(),
    }
}

/// Tool calls read from a message's `tool_calls` value.
pub fn tool_calls_of(value: &Value) -> Vec<ToolCall> {
    ToolCall::all_in(value)
}

/// `skip_serializing_if` for keys the reference leaves out when empty.
pub fn skip_none<T>(value: &Option<T>) -> bool {
    value.is_none()
}

/// Reads one LEB128 number at `*at` (const, for [`u32_table`]).
const fn leb128(bytes: &[u8], at: &mut usize) -> u64 {
    let mut v: u64 = 0;
    let mut shift = 0;
    while *at < bytes.len() && shift < 64 {
        let b = bytes[*at];
        *at += 1;
        v |= ((b & 0x7f) as u64) << shift;
        if b & 0x80 == 0 {
            break;
        }
        shift += 7;
    }
    v
}

/// Decodes a run-length encoded `u32` table at compile time (generated
/// statics use it; see `lit::rle_u32`). Input that runs short leaves the
/// rest zero (the dead state) and extra runs are ignored; the generator
/// always writes exactly `N` entries.
pub const fn u32_table<const N: usize>(bytes: &[u8]) -> [u32; N] {
    let mut out = [0u32; N];
    let mut at = 0;
    let mut i = 0;
    while at < bytes.len() && i < N {
        let value = leb128(bytes, &mut at) as u32;
        let mut count = leb128(bytes, &mut at);
        while count > 0 && i < N {
            out[i] = value;
            i += 1;
            count -= 1;
        }
    }
    out
}

/// The error for a message that passed its type check but did not convert
/// (a bug in the generated code); the message is gone by then, so `raw` is
/// empty.
pub fn conversion_bug(m: Mismatch) -> ParseError {
    ParseError {
        kind: ParseErrorKind::Internal,
        field: None,
        offset: 0,
        raw: String::new(),
        message: format!("typed conversion failed after its check: {m}"),
    }
}

/// Where the run of `class` characters that ends at `at` begins in `bytes`
/// (`at` itself when the character before `at` is not in `class`; never
/// before 0, where the search started). `bytes` is text from a character
/// boundary. The start of a leading loop's match (`\s*<tool_call>`) whose
/// literal begins at `at`.
#[inline]
pub fn loop_run_start(bytes: &[u8], at: usize, class: &Class) -> usize {
    let mut j = at;
    while j > 0 {
        let b = bytes[j - 1];
        if b < 0x80 {
            if class.contains(char::from(b)) {
                j -= 1;
                continue;
            }
            return j;
        }
        // A multi-byte character: its first byte is at most three back.
        let mut k = j - 1;
        while k > 0 && bytes[k] & 0xC0 == 0x80 && j - k < 4 {
            k -= 1;
        }
        match std::str::from_utf8(&bytes[k..j])
            .ok()
            .and_then(|s| s.chars().next())
        {
            Some(c) if class.contains(c) => j = k,
            _ => return j,
        }
    }
    j
}

/// The end of the run of `class` characters that begins at `from` (a
/// character boundary): where a loop of a literal sequence
/// (`</function>\s*</tool_call>`) stops taking characters.
#[inline]
pub fn loop_run_end(bytes: &[u8], from: usize, class: &Class) -> usize {
    let mut j = from;
    while j < bytes.len() {
        let b = bytes[j];
        if b < 0x80 {
            if class.contains(char::from(b)) {
                j += 1;
                continue;
            }
            return j;
        }
        let n = match b {
            0xF0.. => 4,
            0xE0.. => 3,
            _ => 2,
        };
        match bytes
            .get(j..j + n)
            .and_then(|s| std::str::from_utf8(s).ok())
            .and_then(|s| s.chars().next())
        {
            Some(c) if class.contains(c) => j += n,
            _ => return j,
        }
    }
    j
}

/// Whether `tail` (shorter than the longest of `lits`) is a proper prefix
/// of one of `lits`: the text ends inside that literal.
#[inline]
pub fn is_partial_of_any(tail: &[u8], lits: &[&[u8]]) -> bool {
    // (Byte by byte: tails are short, and a call to `memcmp` costs more
    // than the comparison.)
    lits.iter()
        .any(|l| tail.len() < l.len() && tail.iter().zip(l.iter()).all(|(a, b)| a == b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::py::json_loads_with_depth;

    fn json(text: &str) -> Value {
        json_loads_with_depth(text, 100).expect("test JSON parses")
    }

    #[test]
    fn element_entries_come_before_groups() {
        let Value::Map(mut item) = json(r#"{"name": [1], "id": null}"#) else {
            panic!("a dict")
        };
        let groups = [
            ("name".to_owned(), "g1".to_owned()),
            ("x".to_owned(), "early".to_owned()),
            ("x".to_owned(), "late".to_owned()),
        ];
        assert!(has_entry(&item, &groups, "name"));
        assert!(has_entry(&item, &groups, "id"));
        assert!(has_entry(&item, &groups, "x"));
        assert!(!has_entry(&item, &groups, "y"));
        assert!(!has_entry(&item, &[], "x"));
        assert_eq!(take_entry(&mut item, &groups, "name"), json("[1]"));
        assert_eq!(take_entry(&mut item, &groups, "id"), Value::Null);
        // The last group of a name wins, as in the reference's dict.
        assert_eq!(
            take_entry(&mut item, &groups, "x"),
            Value::Str("late".into())
        );
        assert_eq!(take_entry(&mut item, &groups, "y"), Value::Null);
        assert_eq!(item.get("name"), Some(&Value::Null));
    }

    #[test]
    fn key_paths_are_found_and_moved_out() {
        let mut v = json(r#"{"name": "f", "args": {"a": [1], "b": null}, "s": "x"}"#);
        assert_eq!(value_at(&v, &["name"]), Some(&json(r#""f""#)));
        assert_eq!(value_at(&v, &["args", "a"]), Some(&json("[1]")));
        // A null entry is there; a missing one, or a step into a non-dict,
        // is not.
        assert_eq!(value_at(&v, &["args", "b"]), Some(&Value::Null));
        assert_eq!(value_at(&v, &["args", "c"]), None);
        assert_eq!(value_at(&v, &["s", "x"]), None);
        assert_eq!(value_at(&v, &[]), Some(&v));
        assert_eq!(take_at(&mut v, &["args", "a"]), json("[1]"));
        assert_eq!(value_at(&v, &["args", "a"]), Some(&Value::Null));
        assert_eq!(take_at(&mut v, &["name"]), json(r#""f""#));
        assert_eq!(take_at(&mut v, &["missing"]), Value::Null);
        assert_eq!(take_at(&mut v, &["s", "x"]), Value::Null);
        assert_eq!(
            v,
            json(r#"{"name": null, "args": {"a": null, "b": null}, "s": "x"}"#)
        );
    }
}
