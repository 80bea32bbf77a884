//! `json.loads` and `json.dumps(str)` exactly as CPython 3.11 does them.
//!
//! CPython's decoder (`Modules/_json.c` driven by `json/decoder.py`) is more
//! lenient than RFC 8259 in some places (`NaN`, `Infinity`, `-Infinity`,
//! integers of any size) and has its own error positions and messages; this
//! module reproduces both. Positions count characters (code points), as
//! Python's do. The scanner reads bytes (everything it decides on is ASCII,
//! and runs of string text are copied whole); an error's byte offset is
//! turned into a character position only when the error is reported.
//!
//! Known divergence: a `\uXXXX` escape of a lone surrogate (one not forming a
//! high+low pair) decodes in Python to a string holding that surrogate, which
//! a Rust `String` cannot hold; it decodes here to U+FFFD instead.

use super::num::{int_from_ascii_digits, parse_float};
use crate::{Map, Value};
use std::fmt;

/// How deeply arrays and objects may nest before [`json_loads`] raises
/// `RecursionError`, as in the reference: CPython counts each nested array or
/// object against its recursion limit (1000), of which the reference's own
/// call stack has used 14 frames when a `json` region closes during `feed` or
/// `finalize` (measured through the conformance oracle). Regions closed while
/// the constructor consumes the prefix sit two frames deeper, where the
/// reference's limit is 984; retort uses this one limit for both.
pub const JSON_MAX_DEPTH: usize = 986;

/// CPython's default `sys.get_int_max_str_digits()`.
const INT_MAX_STR_DIGITS: usize = 4300;

/// Why [`json_loads`] failed, as the Python exception it would raise.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JsonError {
    /// `json.JSONDecodeError` (a `ValueError`): malformed text.
    Decode {
        /// The bare message (`"Expecting value"`, ...).
        msg: &'static str,
        /// Character offset of the error.
        pos: usize,
        /// 1-based line of `pos`.
        lineno: usize,
        /// 1-based column of `pos`.
        colno: usize,
    },
    /// `RecursionError`: nesting deeper than the depth limit. Not a
    /// `JSONDecodeError`, so the reference's `allow_non_json` does not catch it.
    Recursion(String),
    /// `ValueError` from CPython's 4300-digit limit on integers. Not a
    /// `JSONDecodeError` either.
    IntTooLong(String),
}

impl JsonError {
    /// Whether this is a `JSONDecodeError` (the only failure the reference's
    /// `except json.JSONDecodeError` handlers catch).
    pub fn is_decode_error(&self) -> bool {
        matches!(self, JsonError::Decode { .. })
    }

    /// `type(exc).__name__` of the Python exception.
    pub fn python_type(&self) -> &'static str {
        match self {
            JsonError::Decode { .. } => "JSONDecodeError",
            JsonError::Recursion(_) => "RecursionError",
            JsonError::IntTooLong(_) => "ValueError",
        }
    }
}

impl fmt::Display for JsonError {
    /// `str(exc)`: for a decode error `"{msg}: line L column C (char P)"`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JsonError::Decode {
                msg,
                pos,
                lineno,
                colno,
            } => {
                write!(f, "{msg}: line {lineno} column {colno} (char {pos})")
            }
            JsonError::Recursion(m) | JsonError::IntTooLong(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for JsonError {}

/// Python's `json.loads(s)` for a `str`, with the reference's nesting limit
/// ([`JSON_MAX_DEPTH`]).
///
/// Accepts `NaN`, `Infinity` and `-Infinity`; integers of any size (subject
/// to the 4300-digit limit); floats parsed as `float()` parses them; for a
/// repeated key, the last value at the first key's position; raw control
/// characters are rejected inside strings; whitespace is only `' \t\n\r'`.
pub fn json_loads(s: &str) -> Result<Value, JsonError> {
    json_loads_with_depth(s, JSON_MAX_DEPTH)
}

/// [`json_loads`] with an explicit nesting limit: arrays and objects nested
/// more than `max_depth` deep raise `RecursionError`. The reference's limit
/// depends on how deep its call stack already is where it calls `json.loads`.
pub fn json_loads_with_depth(s: &str, max_depth: usize) -> Result<Value, JsonError> {
    let decode = |msg: &'static str, at: usize| {
        // Byte offset to Python's character index; then
        // lineno = doc.count('\n', 0, pos) + 1; colno = pos - doc.rfind('\n', 0, pos)
        let before = s.get(..at.min(s.len())).unwrap_or(s);
        let pos = before.chars().count();
        let lineno = before.bytes().filter(|&b| b == b'\n').count() + 1;
        let colno = match before.rfind('\n') {
            Some(nl) => pos - before[..nl].chars().count(),
            None => pos + 1,
        };
        JsonError::Decode {
            msg,
            pos,
            lineno,
            colno,
        }
    };
    if s.starts_with('\u{feff}') {
        return Err(decode("Unexpected UTF-8 BOM (decode using utf-8-sig)", 0));
    }
    let scanner = Scanner {
        text: s,
        s: s.as_bytes(),
        max_depth,
    };
    let start = scanner.skip_ws(0);
    let (value, end) = match scanner.scan_once(start) {
        Ok(ok) => ok,
        Err(Fail::Stop(pos)) => return Err(decode("Expecting value", pos)),
        Err(Fail::Decode(msg, pos)) => return Err(decode(msg, pos)),
        Err(Fail::Recursion(what)) => {
            return Err(JsonError::Recursion(format!(
                "maximum recursion depth exceeded while decoding a JSON {what} from a unicode string"
            )));
        }
        Err(Fail::IntTooLong(digits)) => {
            return Err(JsonError::IntTooLong(format!(
                "Exceeds the limit ({INT_MAX_STR_DIGITS} digits) for integer string conversion: \
                 value has {digits} digits; use sys.set_int_max_str_digits() to increase the limit"
            )));
        }
    };
    let end = scanner.skip_ws(end);
    if end != s.len() {
        return Err(decode("Extra data", end));
    }
    Ok(value)
}

/// The entries `keys` of a document that is an object, parsed without
/// building the object: `out[i]` gets the value of `keys[i]` (the last one,
/// as a dict keeps it), or stays `None` when the object has no such key.
/// Every other value is parsed too, and dropped. Returns `false`, with
/// `out` in no particular state, for anything else: a document
/// [`json_loads_with_depth`] rejects, or one that is not an object. When it
/// returns `true`, that function would have returned an object whose
/// entries `keys` are what `out` holds.
///
/// Generated builders read a tool call's `{content.name}` and
/// `{content.arguments}` so, without the dict around them.
pub fn json_object_entries(
    s: &str,
    max_depth: usize,
    keys: &[&str],
    out: &mut [Option<Value>],
) -> bool {
    // The object itself takes the first level of nesting.
    if s.starts_with('\u{feff}') || max_depth == 0 {
        return false;
    }
    let scanner = Scanner {
        text: s,
        s: s.as_bytes(),
        max_depth: max_depth - 1,
    };
    let mut idx = scanner.skip_ws(0);
    if scanner.at(idx) != Some(b'{') {
        return false;
    }
    idx = scanner.skip_ws(idx + 1);
    if scanner.at(idx) == Some(b'}') {
        return scanner.skip_ws(idx + 1) == s.len();
    }
    loop {
        if scanner.at(idx) != Some(b'"') {
            return false;
        }
        // A key without escapes is compared where it lies.
        let decoded;
        let (key, next) = match string_run_end(scanner.s, idx + 1) {
            Some(q) if scanner.s[q] == b'"' => (&s[idx + 1..q], q + 1),
            _ => match scanner.scan_string(idx + 1) {
                Ok((k, next)) => {
                    decoded = k;
                    (decoded.as_str(), next)
                }
                Err(_) => return false,
            },
        };
        let colon = scanner.skip_ws(next);
        if scanner.at(colon) != Some(b':') {
            return false;
        }
        let Ok((value, end)) = scanner.scan_once(scanner.skip_ws(colon + 1)) else {
            return false;
        };
        if let Some(slot) = keys
            .iter()
            .position(|k| *k == key)
            .and_then(|i| out.get_mut(i))
        {
            *slot = Some(value);
        }
        idx = scanner.skip_ws(end);
        match scanner.at(idx) {
            Some(b',') => idx = scanner.skip_ws(idx + 1),
            Some(b'}') => return scanner.skip_ws(idx + 1) == s.len(),
            _ => return false,
        }
    }
}

/// Internal failures, before they are turned into [`JsonError`]s.
enum Fail {
    /// The C scanner's `StopIteration(idx)`: no value starts at `idx`; it
    /// becomes "Expecting value" at `idx`, wherever it was raised.
    Stop(usize),
    /// A `JSONDecodeError` with its message and position.
    Decode(&'static str, usize),
    /// The recursion limit, while entering an "array" or "object".
    Recursion(&'static str),
    /// An integer literal with this many digits.
    IntTooLong(usize),
}

/// An array or object being read, innermost last.
enum Open {
    Array(Vec<Value>),
    /// The object so far and the key whose value is being read.
    Object(Map, String),
}

/// The stack of open containers of one parse. Its buffer is kept for the
/// thread's next parse: a tool call's arguments are parsed once per region,
/// and allocating the stack each time was one of the few allocations per
/// region beyond the values returned.
struct Stack(Vec<Open>);

/// The most containers a kept buffer has room for (a deeper parse's buffer
/// is freed, not kept).
const KEPT_STACK: usize = 32;

thread_local! {
    static SPARE_STACK: std::cell::Cell<Vec<Open>> = const { std::cell::Cell::new(Vec::new()) };
}

impl Stack {
    /// The thread's spare buffer (empty), or a new one.
    fn take() -> Stack {
        Stack(
            SPARE_STACK
                .try_with(std::cell::Cell::take)
                .unwrap_or_default(),
        )
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        let mut v = std::mem::take(&mut self.0);
        if v.capacity() <= KEPT_STACK {
            // (What an error left open is dropped here.)
            v.clear();
            // During the thread's teardown the buffer is just freed.
            let _ = SPARE_STACK.try_with(|spare| spare.set(v));
        }
    }
}

/// The decoder's state. Indices are byte offsets into the text; the C
/// code's index arithmetic carries over because every character it steps
/// over one at a time is ASCII (a non-ASCII character is only ever part of
/// a run of string text, or where an error is reported).
struct Scanner<'a> {
    text: &'a str,
    s: &'a [u8],
    max_depth: usize,
}

/// `IS_WHITESPACE` in `_json.c` and `WHITESPACE` in `decoder.py`.
fn is_ws(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r')
}

impl Scanner<'_> {
    fn at(&self, i: usize) -> Option<u8> {
        self.s.get(i).copied()
    }

    fn skip_ws(&self, mut i: usize) -> usize {
        while self.at(i).is_some_and(is_ws) {
            i += 1;
        }
        i
    }

    fn has(&self, i: usize, word: &str) -> bool {
        self.s.get(i..i + word.len()) == Some(word.as_bytes())
    }

    /// `scan_once_unicode` and the array/object parsers it recurses into,
    /// run with an explicit stack of open containers instead of recursion, so
    /// that nesting up to the limit cannot overflow the thread's stack. The
    /// order of checks, and so which error wins, is the C code's.
    /// Returns the value and the index just past it.
    fn scan_once(&self, mut idx: usize) -> Result<(Value, usize), Fail> {
        let mut kept = Stack::take();
        let stack = &mut kept.0;
        loop {
            // A value is expected at `idx`.
            let (mut value, mut end) = match self.at(idx) {
                Some(c @ (b'{' | b'[')) => {
                    if stack.len() >= self.max_depth {
                        return Err(Fail::Recursion(if c == b'{' { "object" } else { "array" }));
                    }
                    let inner = self.skip_ws(idx + 1);
                    match (c, self.at(inner)) {
                        (b'{', Some(b'}')) => (Value::Map(Map::default()), inner + 1),
                        (b'[', Some(b']')) => (Value::List(Vec::new()), inner + 1),
                        (b'{', _) => {
                            let (key, next) = self.object_key(inner)?;
                            stack.push(Open::Object(Map::default(), key));
                            idx = next;
                            continue;
                        }
                        _ => {
                            stack.push(Open::Array(Vec::new()));
                            idx = inner;
                            continue;
                        }
                    }
                }
                _ => self.scalar(idx)?,
            };
            // A value ended at `end`: hand it to the innermost open container
            // and find out what comes next.
            loop {
                let Some(open) = stack.last_mut() else {
                    return Ok((value, end));
                };
                let close = match open {
                    Open::Array(items) => {
                        items.push(value);
                        b']'
                    }
                    Open::Object(map, key) => {
                        // A repeated key keeps its first position and takes
                        // the new value, as a Python dict assignment does.
                        map.insert(std::mem::take(key), value);
                        b'}'
                    }
                };
                let at = self.skip_ws(end);
                if self.at(at) == Some(close) {
                    value = match stack.pop() {
                        Some(Open::Array(items)) => Value::List(items),
                        Some(Open::Object(map, _)) => Value::Map(map),
                        None => Value::Null,
                    };
                    end = at + 1;
                    continue;
                }
                if self.at(at) != Some(b',') {
                    return Err(Fail::Decode("Expecting ',' delimiter", at));
                }
                let after = self.skip_ws(at + 1);
                idx = match stack.last_mut() {
                    Some(Open::Object(_, key)) => {
                        let (k, next) = self.object_key(after)?;
                        *key = k;
                        next
                    }
                    _ => after,
                };
                break;
            }
        }
    }

    /// In an object, at `idx`: a key, the `:` and the whitespace after it.
    /// Returns the key and the index where its value should start.
    fn object_key(&self, idx: usize) -> Result<(String, usize), Fail> {
        if self.at(idx) != Some(b'"') {
            return Err(Fail::Decode(
                "Expecting property name enclosed in double quotes",
                idx,
            ));
        }
        let (key, next) = self.scan_string(idx + 1)?;
        let colon = self.skip_ws(next);
        if self.at(colon) != Some(b':') {
            return Err(Fail::Decode("Expecting ':' delimiter", colon));
        }
        Ok((key, self.skip_ws(colon + 1)))
    }

    /// A value that is not an array or object, at `idx`.
    fn scalar(&self, idx: usize) -> Result<(Value, usize), Fail> {
        let Some(c) = self.at(idx) else {
            return Err(Fail::Stop(idx));
        };
        match c {
            b'"' => {
                let (s, end) = self.scan_string(idx + 1)?;
                return Ok((Value::Str(s), end));
            }
            b'n' if self.has(idx, "null") => return Ok((Value::Null, idx + 4)),
            b't' if self.has(idx, "true") => return Ok((Value::Bool(true), idx + 4)),
            b'f' if self.has(idx, "false") => return Ok((Value::Bool(false), idx + 5)),
            b'N' if self.has(idx, "NaN") => return Ok((Value::Float(f64::NAN), idx + 3)),
            b'I' if self.has(idx, "Infinity") => return Ok((Value::Float(f64::INFINITY), idx + 8)),
            b'-' if self.has(idx, "-Infinity") => {
                return Ok((Value::Float(f64::NEG_INFINITY), idx + 9));
            }
            _ => {}
        }
        self.match_number(idx)
    }

    /// `_match_number_unicode`: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?`
    /// with the C code's exact look-ahead rules.
    fn match_number(&self, start: usize) -> Result<(Value, usize), Fail> {
        let len = self.s.len();
        let digit = |i: usize| self.at(i).is_some_and(|c| c.is_ascii_digit());
        let mut idx = start;
        if self.at(idx) == Some(b'-') {
            idx += 1;
            if idx >= len {
                return Err(Fail::Stop(start));
            }
        }
        match self.at(idx) {
            Some(b'1'..=b'9') => {
                idx += 1;
                while digit(idx) {
                    idx += 1;
                }
            }
            Some(b'0') => idx += 1,
            _ => return Err(Fail::Stop(start)),
        }
        let mut is_float = false;
        // `idx < end_idx`: a '.', 'e' or sign is only looked at when another
        // character follows it.
        if idx + 1 < len && self.at(idx) == Some(b'.') && digit(idx + 1) {
            is_float = true;
            idx += 2;
            while digit(idx) {
                idx += 1;
            }
        }
        if idx + 1 < len && matches!(self.at(idx), Some(b'e' | b'E')) {
            let e_start = idx;
            idx += 1;
            if idx + 1 < len && matches!(self.at(idx), Some(b'-' | b'+')) {
                idx += 1;
            }
            while digit(idx) {
                idx += 1;
            }
            if digit(idx - 1) {
                is_float = true;
            } else {
                idx = e_start;
            }
        }
        // The literal is ASCII: a char boundary on both sides.
        let text = &self.text[start..idx];
        if is_float {
            // PyFloat_FromString on an ASCII literal cannot fail.
            let f = parse_float(text).unwrap_or(f64::NAN);
            return Ok((Value::Float(f), idx));
        }
        let (negative, digits) = match text.strip_prefix('-') {
            Some(d) => (true, d),
            None => (false, text),
        };
        if digits.len() > INT_MAX_STR_DIGITS {
            return Err(Fail::IntTooLong(digits.len()));
        }
        Ok((int_from_ascii_digits(digits.as_bytes(), negative), idx))
    }

    /// `scanstring_unicode` with `strict=True`: `end` is the index just past
    /// the opening quote.
    fn scan_string(&self, end: usize) -> Result<(String, usize), Fail> {
        self.scan_string_with(end, string_run_end)
    }

    /// [`Scanner::scan_string`] with `run_end` finding where each run of
    /// text ends (a test gives it the byte-at-a-time search).
    #[inline(always)]
    fn scan_string_with(
        &self,
        mut end: usize,
        run_end: impl Fn(&[u8], usize) -> Option<usize>,
    ) -> Result<(String, usize), Fail> {
        let len = self.s.len();
        let begin = end - 1;
        let mut out = String::new();
        loop {
            // The run up to the next quote, backslash or control character
            // (all ASCII: the run ends on a char boundary).
            let Some(mut next) = run_end(self.s, end) else {
                return Err(Fail::Decode("Unterminated string starting at", begin));
            };
            let c = self.s[next];
            if c <= 0x1f {
                return Err(Fail::Decode("Invalid control character at", next));
            }
            if out.is_empty() && c == b'"' {
                // The common case: no escape at all.
                return Ok((self.text[end..next].to_owned(), next + 1));
            }
            out.push_str(&self.text[end..next]);
            next += 1;
            if c == b'"' {
                return Ok((out, next));
            }
            if next == len {
                return Err(Fail::Decode("Unterminated string starting at", begin));
            }
            let esc = self.s[next];
            if esc != b'u' {
                end = next + 1;
                let ch = match esc {
                    b'"' => '"',
                    b'\\' => '\\',
                    b'/' => '/',
                    b'b' => '\u{8}',
                    b'f' => '\u{c}',
                    b'n' => '\n',
                    b'r' => '\r',
                    b't' => '\t',
                    _ => return Err(Fail::Decode("Invalid \\escape", end - 2)),
                };
                out.push(ch);
                continue;
            }
            next += 1;
            end = next + 4;
            if end >= len {
                return Err(Fail::Decode("Invalid \\uXXXX escape", next - 1));
            }
            let mut code = self
                .hex4(next)
                .ok_or(Fail::Decode("Invalid \\uXXXX escape", end - 5))?;
            if (0xd800..=0xdbff).contains(&code)
                && end + 6 < len
                && self.s[end] == b'\\'
                && self.s[end + 1] == b'u'
            {
                let low = self
                    .hex4(end + 2)
                    .ok_or(Fail::Decode("Invalid \\uXXXX escape", end + 1))?;
                if (0xdc00..=0xdfff).contains(&low) {
                    code = 0x10000 + (((code - 0xd800) << 10) | (low - 0xdc00));
                    end += 6;
                }
            }
            // A lone surrogate cannot live in a Rust string: see module docs.
            out.push(char::from_u32(code).unwrap_or('\u{fffd}'));
        }
    }

    /// Four hex digits at `i`, if they are there.
    fn hex4(&self, i: usize) -> Option<u32> {
        let mut v = 0;
        for k in 0..4 {
            v = (v << 4) | char::from(self.at(i + k)?).to_digit(16)?;
        }
        Some(v)
    }
}

/// The first byte at or after `from` that ends a run of string text: a
/// quote, a backslash or a control character (below 0x20), or `None`.
///
/// Eight bytes at a time (SWAR): arguments often carry long strings (a
/// file's content, a query), and the byte-at-a-time test with its three
/// comparisons took about 12 instructions a byte. In each word, a flag
/// is set in every byte that is a match, and possibly in bytes above a
/// match (a borrow carries upwards), never below the first; so the
/// lowest flag, over the three tests, is the first match.
#[inline]
fn string_run_end(s: &[u8], from: usize) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    // A flag in each byte of `w` that is zero.
    let zero = |w: u64| w.wrapping_sub(ONES) & !w & HIGHS;
    let mut i = from;
    while let Some(chunk) = s.get(i..i + 8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let w = u64::from_le_bytes(word);
        // Bytes below 0x20 (bytes with the high bit set are not: `!w`).
        let control = w.wrapping_sub(ONES * 0x20) & !w & HIGHS;
        let hits =
            zero(w ^ (ONES * u64::from(b'"'))) | zero(w ^ (ONES * u64::from(b'\\'))) | control;
        if hits != 0 {
            return Some(i + (hits.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    s.get(i..)?
        .iter()
        .position(|&d| d == b'"' || d == b'\\' || d <= 0x1f)
        .map(|off| i + off)
}

/// Python's `json.dumps(s)` for a `str` with the default `ensure_ascii=True`:
/// everything outside printable ASCII is written as `\uXXXX` (astral
/// characters as a surrogate pair), with the short escapes for `\b\f\n\r\t`.
pub fn json_dumps_ascii(s: &str) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            ' '..='~' => out.push(c),
            _ => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{:04x}", unit);
                }
            }
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(s: &str) -> String {
        json_loads(s).unwrap_err().to_string()
    }

    #[test]
    fn values() {
        assert_eq!(
            json_loads(" [1, -0, 1.5, true, null, \"a\"] ")
                .unwrap()
                .to_json_string(),
            "[1, 0, 1.5, true, null, \"a\"]"
        );
        let v = json_loads("[NaN, Infinity, -Infinity]").unwrap();
        let l = v.as_list().unwrap();
        assert!(matches!(l[0], Value::Float(f) if f.is_nan()));
        assert_eq!(l[2], Value::Float(f64::NEG_INFINITY));
        let big = json_loads("-123456789012345678901234567890").unwrap();
        assert_eq!(
            big,
            Value::from_bigint("-123456789012345678901234567890".parse().unwrap())
        );
        assert_eq!(json_loads("1E400").unwrap(), Value::Float(f64::INFINITY));
    }

    #[test]
    fn duplicate_keys_keep_first_position() {
        let v = json_loads(r#"{"a": 1, "b": 2, "a": 3}"#).unwrap();
        assert_eq!(v.to_json_string(), r#"{"a": 3, "b": 2}"#);
    }

    #[test]
    fn strings_and_escapes() {
        assert_eq!(
            json_loads(r#""\ud83d\ude00\n\/""#).unwrap(),
            Value::Str("😀\n/".into())
        );
        assert_eq!(
            json_loads(r#""\ud800x""#).unwrap(),
            Value::Str("\u{fffd}x".into())
        );
        assert_eq!(
            err(r#""\u12""#),
            "Invalid \\uXXXX escape: line 1 column 3 (char 2)"
        );
        assert_eq!(
            err("\"a\u{1}\""),
            "Invalid control character at: line 1 column 3 (char 2)"
        );
        assert_eq!(
            err("\"abc"),
            "Unterminated string starting at: line 1 column 1 (char 0)"
        );
        assert_eq!(err(r#""\x""#), "Invalid \\escape: line 1 column 2 (char 1)");
    }

    #[test]
    fn error_positions() {
        assert_eq!(err("[1,]"), "Expecting value: line 1 column 4 (char 3)");
        assert_eq!(
            err("{\"a\":1,}"),
            "Expecting property name enclosed in double quotes: line 1 column 8 (char 7)"
        );
        assert_eq!(
            err("[1 2]"),
            "Expecting ',' delimiter: line 1 column 4 (char 3)"
        );
        assert_eq!(
            err("{\"a\" 1}"),
            "Expecting ':' delimiter: line 1 column 6 (char 5)"
        );
        assert_eq!(err("-"), "Expecting value: line 1 column 1 (char 0)");
        assert_eq!(err("1 2"), "Extra data: line 1 column 3 (char 2)");
        assert_eq!(err("\n\n  x"), "Expecting value: line 3 column 3 (char 4)");
        assert_eq!(
            err("\u{feff}1"),
            "Unexpected UTF-8 BOM (decode using utf-8-sig): line 1 column 1 (char 0)"
        );
        assert_eq!(err(""), "Expecting value: line 1 column 1 (char 0)");
    }

    /// The stack's buffer is kept for the thread's next parse: what a parse
    /// that failed with containers open left in it must not reach the next.
    #[test]
    fn kept_stack_starts_empty() {
        assert!(json_loads(r#"{"a": [1, {"b": [2"#).is_err());
        assert!(json_loads(&"[".repeat(KEPT_STACK + 5)).is_err());
        assert_eq!(
            json_loads(r#"[{"c": 3}]"#).unwrap().to_json_string(),
            r#"[{"c": 3}]"#
        );
        assert!(json_loads(r#"{"a": [1, {"b": 2]"#).is_err());
        assert_eq!(json_loads("[]").unwrap().to_json_string(), "[]");
        assert_eq!(
            json_loads(r#"{"x": {"y": 1}}"#).unwrap().to_json_string(),
            r#"{"x": {"y": 1}}"#
        );
    }

    /// `json_object_entries` against the whole parse: it succeeds exactly
    /// where the document parses to an object, and then holds that
    /// object's entries.
    #[test]
    fn object_entries_are_the_objects() {
        let keys = ["name", "arguments", "n\\ame"];
        let check = |doc: &str, depth: usize| {
            let mut out = [None, None, None];
            let got = json_object_entries(doc, depth, &keys, &mut out);
            match json_loads_with_depth(doc, depth) {
                Ok(Value::Map(m)) => {
                    assert!(got, "{doc:?} at depth {depth}");
                    for (k, v) in keys.iter().zip(&out) {
                        // (As text: NaN is not equal to itself.)
                        assert_eq!(
                            format!("{:?}", m.get(*k)),
                            format!("{:?}", v.as_ref()),
                            "{doc:?}: {k}"
                        );
                    }
                    true
                }
                _ => {
                    assert!(!got, "{doc:?} at depth {depth}");
                    false
                }
            }
        };
        let docs = [
            r#"{"name": "f", "arguments": {"a": [1, {"b": null}]}}"#,
            r#" {"arguments":1,"name":"x","name":"y"} "#,
            r#"{"na\u006de": "esc", "n\\ame": 2, "other": [1, 2, {"x": {}}]}"#,
            r#"{}"#,
            " { } ",
            r#"{"name": "f",}"#,
            r#"{"name" "f"}"#,
            r#"{"name": "f"} x"#,
            r#"{"name": "f""#,
            r#"{name: 1}"#,
            r#"["name", 1]"#,
            r#""name""#,
            "\u{feff}{}",
            r#"{"name": "a\u0001"}"#,
            "{\"name\": \"a\u{1}\"}",
            r#"{"name": NaN, "arguments": -Infinity}"#,
            r#"{"name": 123456789012345678901234567890}"#,
            r#"{"a": [[[[]]]], "name": {"b": {"c": {}}}}"#,
            "",
            "{",
            r#"{"name": 1 "arguments": 2}"#,
        ];
        for doc in docs {
            for depth in 0..7 {
                check(doc, depth);
            }
            check(doc, JSON_MAX_DEPTH);
        }
        let mut next = xorshift(0x5eed_0b1e_c7e5);
        let atoms = [
            "{",
            "}",
            "[",
            "]",
            ",",
            ":",
            " ",
            "\"name\"",
            "\"arguments\"",
            "\"x\"",
            "1",
            "null",
            "\"v\"",
        ];
        // Random objects: entries of the keys and others, values nested a
        // few levels, with a random atom spliced in now and then.
        let mut objects = 0;
        for _ in 0..20_000 {
            let mut doc = String::from("{");
            for e in 0..(next() % 4) {
                if e > 0 {
                    doc.push(',');
                }
                doc.push_str(atoms[7 + (next() % 3) as usize]);
                doc.push(':');
                for _ in 0..(next() % 3) {
                    doc.push('[');
                }
                doc.push_str(atoms[10 + (next() % 3) as usize]);
                while next().is_multiple_of(2)
                    && doc.matches('[').count() > doc.matches(']').count()
                {
                    doc.push(']');
                }
                if next().is_multiple_of(8) {
                    doc.push_str(atoms[(next() % atoms.len() as u64) as usize]);
                }
            }
            if !next().is_multiple_of(8) {
                doc.push('}');
            }
            if check(&doc, (next() % 5) as usize) {
                objects += 1;
            }
        }
        // Both outcomes are well covered.
        assert!((2_000..18_000).contains(&objects), "{objects} objects");
    }

    #[test]
    fn limits() {
        let deep = |d: usize| format!("{}{}", "[".repeat(d), "]".repeat(d));
        assert!(json_loads(&deep(JSON_MAX_DEPTH)).is_ok());
        let e = json_loads(&deep(JSON_MAX_DEPTH + 1)).unwrap_err();
        assert_eq!(e.python_type(), "RecursionError");
        assert!(json_loads(&"1".repeat(4300)).is_ok());
        let e = json_loads(&format!("-{}", "1".repeat(4301))).unwrap_err();
        assert_eq!(e.python_type(), "ValueError");
        assert!(e.to_string().contains("value has 4301 digits"));
    }

    /// A small deterministic generator (xorshift64) for the randomized tests.
    fn xorshift(mut state: u64) -> impl FnMut() -> u64 {
        move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        }
    }

    /// The byte-at-a-time search the word-at-a-time one replaced: the
    /// oracle of the tests below.
    fn run_end_bytewise(s: &[u8], from: usize) -> Option<usize> {
        s[from..]
            .iter()
            .position(|&d| d == b'"' || d == b'\\' || d <= 0x1f)
            .map(|off| from + off)
    }

    /// The word-at-a-time search finds what the byte-at-a-time test finds,
    /// at every offset, around every byte value.
    #[test]
    fn string_runs_end_where_bytes_say() {
        let mut next = xorshift(0x2545_f491_4f6c_dd1du64);
        // Every byte value in every lane, among ordinary text and bytes
        // near the tested ones (0x1f/0x20, 0x21/0x23, 0x5b/0x5d, 0x80+).
        let near = [
            b'a', b' ', 0x1f, 0x21, b'#', b'[', b']', 0x80, 0xa2, 0xdc, 0xff, b'!',
        ];
        for b in 0..=255u8 {
            for lane in 0..20 {
                let mut s: Vec<u8> = (0..24).map(|k| near[(k * 7 + lane) % near.len()]).collect();
                s[lane] = b;
                for from in 0..s.len() {
                    assert_eq!(
                        string_run_end(&s, from),
                        run_end_bytewise(&s, from),
                        "{s:?} from {from}"
                    );
                }
            }
        }
        for _ in 0..2000 {
            let len = (next() % 40) as usize;
            let s: Vec<u8> = (0..len)
                .map(|_| near[(next() % near.len() as u64) as usize])
                .collect();
            let s2: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            for s in [s, s2] {
                for from in 0..=s.len() {
                    assert_eq!(
                        string_run_end(&s, from),
                        run_end_bytewise(&s, from),
                        "{s:?} from {from}"
                    );
                }
            }
        }
    }

    /// Strings of every kind of run, escape and error decode with the
    /// word-at-a-time search as with the byte-at-a-time one it replaced:
    /// the same text, or the same error at the same position.
    #[test]
    fn strings_decode_as_bytewise() {
        let parts = [
            "a",
            "plain words ",
            "0123456789abcdef",
            "é",
            "😀",
            "大阪",
            "\\n",
            "\\\"",
            "\\\\",
            "\\/",
            "\\t",
            "\\b\\f\\r",
            "\\u00e9",
            "\\ud83d\\ude00",
            "\\ud800",
            "\\udc00",
            "\\ud800\\u0041",
            "\\u12",
            "\\u12g4",
            "\\x",
            "\u{1}",
            "\u{1f}",
            "\t",
            "\"",
            "\\",
            "\\u",
            " ",
            "~\u{7f}",
        ];
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15u64);
        for _ in 0..20_000 {
            let mut doc = String::from("\"");
            for _ in 0..next() % 24 {
                doc.push_str(parts[(next() % parts.len() as u64) as usize]);
            }
            if !next().is_multiple_of(4) {
                doc.push('"');
            }
            let scanner = Scanner {
                text: &doc,
                s: doc.as_bytes(),
                max_depth: JSON_MAX_DEPTH,
            };
            let plain = |r: Result<(String, usize), Fail>| match r {
                Ok(ok) => Ok(ok),
                Err(Fail::Decode(msg, at)) => Err((msg, at)),
                Err(_) => panic!("{doc:?}: a string gave a non-decode failure"),
            };
            assert_eq!(
                plain(scanner.scan_string(1)),
                plain(scanner.scan_string_with(1, run_end_bytewise)),
                "{doc:?}"
            );
        }
    }

    #[test]
    fn dumps_ascii() {
        assert_eq!(
            json_dumps_ascii("a\"\\\n\u{1}é😀\u{7f}"),
            r#""a\"\\\n\u0001\u00e9\ud83d\ude00\u007f""#
        );
    }
}
