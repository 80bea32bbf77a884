//! A streaming reader of strict JSON (Python's `json.loads` dialect) that
//! knows the path it is in.
//!
//! It reads a tool-call region's text as the model writes it and reports,
//! per call: its name and id once their strings are complete, and the
//! arguments value re-written in `json.dumps(..., ensure_ascii=False)`
//! spelling, one decided piece at a time. Everything it reports is final:
//! a piece is produced only once no later byte can change it (a number or
//! `true`/`NaN` only when the byte after it arrives, an escaped character
//! once its escape is complete). Anything outside what it understands makes
//! it stop ([`Piece::Failed`]); the caller then falls back to the value the
//! engine parsed, so the reader can only ever add streaming, never change a
//! result.
//!
//! It runs on every piece of a tool call as it streams, so it is built to
//! cost little per byte: the state is a small `Copy` value, runs of string
//! characters, spaces and number characters are taken a slice at a time,
//! and its buffers (the decoded string, the number being read, the keys of
//! open objects) are kept and reused rather than allocated per value.

use retort_engine::py::json_loads;
use retort_engine::value::{NonFinite, write_json_str};

/// Where, relative to one call, a value of interest lies: keys from the
/// call's root.
pub(crate) type KeyPath = Vec<String>;

/// What the reader is asked to watch.
#[derive(Clone, Debug, Default)]
pub(crate) struct Targets {
    /// The content is a list and each element is one call (`transform_each`).
    pub each: bool,
    pub name: Option<KeyPath>,
    pub id: Option<KeyPath>,
    pub args: Option<KeyPath>,
    /// Report top-level string arguments as [`Piece::ParamOpen`] /
    /// [`Piece::ParamChars`] / [`Piece::ParamClose`] (needed when `tools=`
    /// coercion may change them); otherwise they are plain [`Piece::Args`]
    /// text like any other string.
    pub params: bool,
}

/// Something the reader learned, for call `call` (0 unless `each`).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Piece {
    /// Element `call` of the list began (`each` only).
    CallStart { call: usize },
    /// The string at the name path is complete.
    Name { call: usize, name: String },
    /// The string at the id path is complete.
    Id { call: usize, id: String },
    /// Decided text of the arguments, in canonical spelling.
    Args { call: usize, text: String },
    /// A string value of a top-level argument begins (its quote is not in
    /// any `Args`: the caller writes it, or holds the value for coercion).
    ParamOpen { call: usize, key: String },
    /// Canonical text of that string's characters (no quotes).
    ParamChars { call: usize, text: String },
    /// The string ended; `value` is what it decoded to.
    ParamClose {
        call: usize,
        key: String,
        value: String,
    },
    /// The arguments value is complete.
    ArgsDone { call: usize },
    /// Text the reader does not follow: it stops here for good.
    Failed,
}

/// An open container. Frames are kept when they close (see
/// [`JsonReader::depth`]) so that their key strings are reused.
#[derive(Clone, Debug, Default)]
struct Frame {
    obj: bool,
    /// The key whose value is being read (objects).
    key: String,
    /// Members or elements seen before the current one.
    count: usize,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum StrRole {
    Key,
    /// A string whose decoded value is wanted (name or id).
    Watched(bool),
    /// A top-level argument's string.
    Param,
    /// Any other string inside the arguments: streamed as it comes.
    InArgs,
    /// Not of interest.
    Other,
}

/// Where an escape sequence in a string stands.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Esc {
    No,
    /// Right after the backslash.
    Backslash,
    /// After `\u`: `digits` hex digits read so far, making `code`.
    Hex {
        digits: u8,
        code: u32,
    },
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum State {
    Value,
    KeyOrEnd,
    Key,
    Colon,
    After,
    Str {
        role: StrRole,
        esc: Esc,
    },
    /// A number or literal, its text so far in [`JsonReader::bare`].
    Bare,
    Done,
    Failed,
}

/// The reader; see the module docs.
#[derive(Clone, Debug)]
pub(crate) struct JsonReader {
    targets: Targets,
    /// `stack[..depth]` are the open containers.
    stack: Vec<Frame>,
    depth: usize,
    state: State,
    /// The decoded string being read, for keys and watched strings.
    buf: String,
    /// The number or literal being read.
    bare: String,
    /// Stack depth of the arguments value while it is being read.
    cap: Option<usize>,
    /// Text decided in the current push, for the current call.
    pending: String,
    /// Scratch for escaping one character.
    scratch: String,
}

/// `ch` as it is written inside a JSON string (`json.dumps` escapes),
/// using `scratch` as the buffer.
fn escape_char(scratch: &mut String, ch: char) -> &str {
    scratch.clear();
    write_json_str(scratch, ch.encode_utf8(&mut [0; 4]));
    &scratch[1..scratch.len() - 1]
}

/// Whether `raw` is an integer that `json.dumps(json.loads(raw))` writes
/// back unchanged: no sign on zero, no leading zero, and short enough to
/// stay clear of Python's digit limit.
fn canonical_int(raw: &str) -> bool {
    let digits = raw.strip_prefix('-').unwrap_or(raw);
    !digits.is_empty()
        && digits.len() <= 18
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits == "0" && digits.len() == raw.len() || !digits.starts_with('0'))
}

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

fn is_bare(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.')
}

impl JsonReader {
    pub(crate) fn new(targets: Targets) -> JsonReader {
        JsonReader {
            targets,
            stack: Vec::new(),
            depth: 0,
            state: State::Value,
            buf: String::new(),
            bare: String::new(),
            cap: None,
            pending: String::new(),
            scratch: String::new(),
        }
    }

    /// Ready for a new region's text, keeping the buffers.
    pub(crate) fn reset(&mut self) {
        self.depth = 0;
        self.state = State::Value;
        self.buf.clear();
        self.bare.clear();
        self.cap = None;
        self.pending.clear();
    }

    fn top(&self) -> Option<&Frame> {
        self.stack[..self.depth].last()
    }

    fn open_frame(&mut self, obj: bool) {
        if self.depth == self.stack.len() {
            self.stack.push(Frame::default());
        }
        let f = &mut self.stack[self.depth];
        f.obj = obj;
        f.key.clear();
        f.count = 0;
        self.depth += 1;
    }

    /// How many bytes at the start of `text` continue a string inside the
    /// arguments with nothing to decide (no quote, backslash or control
    /// character, no escape under way): they are the arguments' text as
    /// they are, and the caller may append them to call [`JsonReader::call`]'s
    /// arguments itself, giving the reader only the rest. The most common
    /// piece of a streaming tool call takes this path.
    #[inline]
    pub(crate) fn plain_prefix(&self, text: &str) -> usize {
        match self.state {
            State::Str {
                role: StrRole::InArgs,
                esc: Esc::No,
            } if self.pending.is_empty() => text
                .bytes()
                .position(|b| b == b'"' || b == b'\\' || b < 0x20)
                .unwrap_or(text.len()),
            _ => 0,
        }
    }

    /// The index of the call the reader is in.
    #[inline]
    pub(crate) fn call(&self) -> usize {
        match self.stack[..self.depth].first() {
            Some(f) if self.targets.each && !f.obj => f.count,
            _ => 0,
        }
    }

    /// Whether the value about to start lies at `target` (relative to its
    /// call).
    fn at(&self, target: &Option<KeyPath>) -> bool {
        let Some(target) = target else { return false };
        let open = &self.stack[..self.depth];
        let frames = if self.targets.each {
            match open.first() {
                Some(f) if !f.obj => &open[1..],
                _ => return false,
            }
        } else {
            open
        };
        frames.len() == target.len() && frames.iter().zip(target).all(|(f, k)| f.obj && f.key == *k)
    }

    /// Takes back the string of a [`Piece::Args`] once it has been read, as
    /// the buffer for the next one (no allocation per piece).
    pub(crate) fn give_back(&mut self, mut text: String) {
        if self.pending.capacity() == 0 {
            text.clear();
            self.pending = text;
        }
    }

    fn flush(&mut self, out: &mut Vec<Piece>) {
        if !self.pending.is_empty() {
            out.push(Piece::Args {
                call: self.call(),
                text: std::mem::take(&mut self.pending),
            });
        }
    }

    fn emit(&mut self, s: &str) {
        if self.cap.is_some() {
            self.pending.push_str(s);
        }
    }

    fn fail(&mut self, out: &mut Vec<Piece>) {
        self.pending.clear();
        self.state = State::Failed;
        out.push(Piece::Failed);
    }

    /// Reads the next piece of the region's text.
    pub(crate) fn push(&mut self, text: &str, out: &mut Vec<Piece>) {
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            // Runs that need no decision per byte are taken at once; each
            // stops at an ASCII byte or the end, so `i` stays on a char
            // boundary.
            match self.state {
                State::Failed => return,
                State::Str { role, esc: Esc::No } => {
                    let n = bytes[i..]
                        .iter()
                        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
                        .unwrap_or(bytes.len() - i);
                    if n > 0 {
                        self.plain_run(role, &text[i..i + n], out);
                        i += n;
                        continue;
                    }
                }
                State::Bare => {
                    let n = bytes[i..]
                        .iter()
                        .position(|&b| !is_bare(b))
                        .unwrap_or(bytes.len() - i);
                    if n > 0 {
                        self.bare.push_str(&text[i..i + n]);
                        i += n;
                        continue;
                    }
                }
                State::Str { .. } => {}
                // Spaces between tokens change nothing in any other state.
                _ if is_ws(bytes[i]) => {
                    i += 1;
                    continue;
                }
                _ => {}
            }
            let Some(c) = text[i..].chars().next() else {
                break;
            };
            self.step(c, out);
            i += c.len_utf8();
        }
        self.flush(out);
    }

    /// A run of string characters that need no escaping, as
    /// [`JsonReader::string_char`] takes them one by one.
    fn plain_run(&mut self, role: StrRole, run: &str, out: &mut Vec<Piece>) {
        match role {
            StrRole::Key | StrRole::Watched(_) => self.buf.push_str(run),
            StrRole::Param => {
                self.buf.push_str(run);
                let call = self.call();
                match out.last_mut() {
                    Some(Piece::ParamChars { call: c, text }) if *c == call => text.push_str(run),
                    _ => out.push(Piece::ParamChars {
                        call,
                        text: run.to_owned(),
                    }),
                }
            }
            StrRole::InArgs => self.pending.push_str(run),
            StrRole::Other => {}
        }
    }

    /// The region ended: a number or literal at the very end is complete.
    pub(crate) fn end(&mut self, out: &mut Vec<Piece>) {
        if self.state == State::Bare {
            self.finish_bare(out);
        }
        self.flush(out);
        if !matches!(self.state, State::Done | State::Failed) {
            self.fail(out);
        }
    }

    /// A value ended: the arguments may be complete, the enclosing
    /// container expects a separator.
    fn value_done(&mut self, out: &mut Vec<Piece>) {
        if self.cap == Some(self.depth) {
            self.flush(out);
            self.cap = None;
            out.push(Piece::ArgsDone { call: self.call() });
        }
        self.state = if self.depth == 0 {
            State::Done
        } else {
            State::After
        };
    }

    fn start_value(&mut self, c: char, out: &mut Vec<Piece>) {
        if self.cap.is_none() && self.at(&self.targets.args) {
            self.cap = Some(self.depth);
        }
        if self.targets.each && self.depth == 1 {
            out.push(Piece::CallStart { call: self.call() });
        }
        match c {
            '{' => {
                self.emit("{");
                self.open_frame(true);
                self.state = State::KeyOrEnd;
            }
            '[' => {
                self.emit("[");
                self.open_frame(false);
                self.state = State::Value;
            }
            '"' => {
                let role = if self.at(&self.targets.name) {
                    StrRole::Watched(true)
                } else if self.at(&self.targets.id) {
                    StrRole::Watched(false)
                } else if let Some(d) = self.cap {
                    let param = self.targets.params
                        && self.depth == d + 1
                        && self.top().is_some_and(|f| f.obj);
                    if param {
                        self.flush(out);
                        let key = self.top().map(|f| f.key.clone()).unwrap_or_default();
                        out.push(Piece::ParamOpen {
                            call: self.call(),
                            key,
                        });
                        StrRole::Param
                    } else {
                        self.emit("\"");
                        StrRole::InArgs
                    }
                } else {
                    StrRole::Other
                };
                self.buf.clear();
                self.state = State::Str { role, esc: Esc::No };
            }
            c if c == '-' || c.is_ascii_alphanumeric() => {
                self.bare.clear();
                self.bare.push(c);
                self.state = State::Bare;
            }
            _ => self.fail(out),
        }
    }

    fn finish_bare(&mut self, out: &mut Vec<Piece>) {
        self.state = State::Value;
        let raw = self.bare.as_str();
        // Integers and literals are written back as the model wrote them;
        // anything else is read and re-written as Python writes it.
        if canonical_int(raw) || matches!(raw, "true" | "false" | "null") {
            if self.cap.is_some() {
                self.pending.push_str(raw);
            }
            return self.value_done(out);
        }
        match json_loads(raw) {
            Ok(v) if !matches!(v, retort_engine::Value::Str(_)) => {
                if self.cap.is_some() {
                    v.write_json(&mut self.pending, NonFinite::Python);
                }
                self.value_done(out);
            }
            _ => self.fail(out),
        }
    }

    fn string_char(&mut self, role: StrRole, ch: char, out: &mut Vec<Piece>) {
        match role {
            StrRole::Key | StrRole::Watched(_) => self.buf.push(ch),
            StrRole::Param => {
                self.buf.push(ch);
                let call = self.call();
                let escaped = escape_char(&mut self.scratch, ch);
                // Characters of one parameter in one push make one piece.
                match out.last_mut() {
                    Some(Piece::ParamChars { call: c, text }) if *c == call => {
                        text.push_str(escaped);
                    }
                    _ => out.push(Piece::ParamChars {
                        call,
                        text: escaped.to_owned(),
                    }),
                }
            }
            StrRole::InArgs => {
                let escaped = escape_char(&mut self.scratch, ch);
                self.pending.push_str(escaped);
            }
            StrRole::Other => {}
        }
    }

    fn string_end(&mut self, role: StrRole, out: &mut Vec<Piece>) {
        let call = self.call();
        match role {
            StrRole::Key => {
                if self.cap.is_some() {
                    write_json_str(&mut self.pending, &self.buf);
                }
                if let Some(f) = self.stack[..self.depth].last_mut() {
                    f.key.clear();
                    f.key.push_str(&self.buf);
                }
                self.state = State::Colon;
                return;
            }
            StrRole::Watched(true) => out.push(Piece::Name {
                call,
                name: self.buf.clone(),
            }),
            StrRole::Watched(false) => out.push(Piece::Id {
                call,
                id: self.buf.clone(),
            }),
            StrRole::Param => {
                let key = self.top().map(|f| f.key.clone()).unwrap_or_default();
                out.push(Piece::ParamClose {
                    call,
                    key,
                    value: self.buf.clone(),
                });
            }
            StrRole::InArgs => self.pending.push('"'),
            StrRole::Other => {}
        }
        self.value_done(out);
    }

    fn step(&mut self, c: char, out: &mut Vec<Piece>) {
        let is_ws = matches!(c, ' ' | '\t' | '\n' | '\r');
        match self.state {
            State::Failed => {}
            State::Done => {
                if !is_ws {
                    self.fail(out);
                }
            }
            State::Value => {
                if is_ws {
                } else if c == ']' && self.top().is_some_and(|f| !f.obj && f.count == 0) {
                    self.close_container(c, out);
                } else {
                    self.start_value(c, out);
                }
            }
            State::KeyOrEnd | State::Key if is_ws => {}
            State::KeyOrEnd if c == '}' => self.close_container(c, out),
            State::KeyOrEnd | State::Key => {
                if c == '"' {
                    self.buf.clear();
                    self.state = State::Str {
                        role: StrRole::Key,
                        esc: Esc::No,
                    };
                } else {
                    self.fail(out);
                }
            }
            State::Colon => {
                if is_ws {
                } else if c == ':' {
                    self.emit(": ");
                    self.state = State::Value;
                } else {
                    self.fail(out);
                }
            }
            State::After => {
                if is_ws {
                    return;
                }
                let Some(top) = self.depth.checked_sub(1) else {
                    return self.fail(out);
                };
                let obj = self.stack[top].obj;
                match c {
                    ',' => {
                        self.stack[top].count += 1;
                        self.emit(", ");
                        self.state = if obj { State::Key } else { State::Value };
                    }
                    '}' if obj => self.close_container(c, out),
                    ']' if !obj => self.close_container(c, out),
                    _ => self.fail(out),
                }
            }
            State::Bare => {
                if c.is_ascii() && is_bare(c as u8) {
                    self.bare.push(c);
                } else {
                    self.finish_bare(out);
                    if self.state != State::Failed {
                        self.step(c, out);
                    }
                }
            }
            State::Str { role, esc: Esc::No } => match c {
                '"' => self.string_end(role, out),
                '\\' => {
                    self.state = State::Str {
                        role,
                        esc: Esc::Backslash,
                    }
                }
                c if (c as u32) < 0x20 => self.fail(out),
                c => self.string_char(role, c, out),
            },
            State::Str {
                role,
                esc: Esc::Backslash,
            } => {
                let decoded = match c {
                    '"' => '"',
                    '\\' => '\\',
                    '/' => '/',
                    'b' => '\u{08}',
                    'f' => '\u{0c}',
                    'n' => '\n',
                    'r' => '\r',
                    't' => '\t',
                    'u' => {
                        self.state = State::Str {
                            role,
                            esc: Esc::Hex { digits: 0, code: 0 },
                        };
                        return;
                    }
                    _ => return self.fail(out),
                };
                self.state = State::Str { role, esc: Esc::No };
                self.string_char(role, decoded, out);
            }
            State::Str {
                role,
                esc: Esc::Hex { digits, code },
            } => {
                let Some(d) = c.to_digit(16) else {
                    return self.fail(out);
                };
                let code = code * 16 + d;
                if digits < 3 {
                    self.state = State::Str {
                        role,
                        esc: Esc::Hex {
                            digits: digits + 1,
                            code,
                        },
                    };
                    return;
                }
                // Surrogates (paired or not) are left to the engine.
                match char::from_u32(code) {
                    Some(ch) => {
                        self.state = State::Str { role, esc: Esc::No };
                        self.string_char(role, ch, out);
                    }
                    None => self.fail(out),
                }
            }
        }
    }

    fn close_container(&mut self, c: char, out: &mut Vec<Piece>) {
        self.emit(if c == '}' { "}" } else { "]" });
        self.depth -= 1;
        self.value_done(out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(targets: Targets, text: &str, step: usize) -> Vec<Piece> {
        let mut r = JsonReader::new(targets);
        let mut out = Vec::new();
        let chars: Vec<char> = text.chars().collect();
        for piece in chars.chunks(step) {
            r.push(&piece.iter().collect::<String>(), &mut out);
        }
        r.end(&mut out);
        out
    }

    fn args_text(pieces: &[Piece]) -> String {
        let mut s = String::new();
        for p in pieces {
            match p {
                Piece::Args { text, .. } | Piece::ParamChars { text, .. } => s.push_str(text),
                Piece::ParamOpen { .. } | Piece::ParamClose { .. } => s.push('"'),
                _ => {}
            }
        }
        s
    }

    #[test]
    fn the_arguments_come_out_in_canonical_spelling_for_every_chunking() {
        let t = Targets {
            each: false,
            name: Some(vec!["name".into()]),
            id: None,
            args: Some(vec!["arguments".into()]),
            params: false,
        };
        let text = r#" {"name" : "get", "arguments":{"a":1E2,"b" :[true ,null,"x\u00e9\n"],"c":"q\"","d":{},"e":-0,"f":[7,-12,1.50,0,123456789012345678901234,-1e-3]}} "#;
        let want = json_loads(
            r#"{"a":1E2,"b" :[true ,null,"x\u00e9\n"],"c":"q\"","d":{},"e":-0,"f":[7,-12,1.50,0,123456789012345678901234,-1e-3]}"#,
        )
            .unwrap()
            .to_json_string();
        let with_params = Targets {
            params: true,
            ..t.clone()
        };
        for (t, step) in (1..8).flat_map(|s| [(t.clone(), s), (with_params.clone(), s)]) {
            let out = run(t, text, step);
            assert!(out.contains(&Piece::Name {
                call: 0,
                name: "get".into()
            }));
            assert!(out.contains(&Piece::ArgsDone { call: 0 }));
            assert!(!out.contains(&Piece::Failed));
            assert_eq!(args_text(&out), want, "step {step}");
        }
    }

    #[test]
    fn lists_of_calls_and_bad_text() {
        let t = Targets {
            each: true,
            name: Some(vec!["name".into()]),
            id: Some(vec!["id".into()]),
            args: Some(vec!["arguments".into()]),
            params: false,
        };
        let out = run(
            t.clone(),
            r#"[{"name":"a","arguments":{}},{"id":"7","name":"b","arguments":[1]}]"#,
            3,
        );
        assert!(out.contains(&Piece::CallStart { call: 1 }));
        assert!(out.contains(&Piece::Id {
            call: 1,
            id: "7".into()
        }));
        let args1: String = out
            .iter()
            .filter_map(|p| match p {
                Piece::Args { call: 1, text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(args1, "[1]");
        for bad in [
            r#"[{"name": 'a'}]"#,
            r#"[1,]"#,
            "[01]",
            "[-01]",
            "[1 2]",
            "[] x",
            r#"["\ud800"]"#,
        ] {
            assert_eq!(run(t.clone(), bad, 2).last(), Some(&Piece::Failed), "{bad}");
        }
    }
}
