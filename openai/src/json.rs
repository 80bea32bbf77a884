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

#[derive(Clone, Debug)]
enum Frame {
    Obj { key: String, count: usize },
    Arr { count: usize },
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

#[derive(Clone, Debug, PartialEq)]
enum State {
    Value,
    KeyOrEnd,
    Key,
    Colon,
    After,
    Str {
        role: StrRole,
        /// `None` outside an escape; `Some(hex digits)` after `\u`, or
        /// `Some("\\")` right after the backslash.
        esc: Option<String>,
    },
    Bare(String),
    Done,
    Failed,
}

/// The reader; see the module docs.
#[derive(Clone, Debug)]
pub(crate) struct JsonReader {
    targets: Targets,
    stack: Vec<Frame>,
    state: State,
    /// The decoded string being read, for keys and watched strings.
    buf: String,
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

impl JsonReader {
    pub(crate) fn new(targets: Targets) -> JsonReader {
        JsonReader {
            targets,
            stack: Vec::new(),
            state: State::Value,
            buf: String::new(),
            cap: None,
            pending: String::new(),
            scratch: String::new(),
        }
    }

    /// The index of the call the reader is in.
    fn call(&self) -> usize {
        match (self.targets.each, self.stack.first()) {
            (true, Some(Frame::Arr { count })) => *count,
            _ => 0,
        }
    }

    /// Whether the value about to start lies at `target` (relative to its
    /// call).
    fn at(&self, target: &Option<KeyPath>) -> bool {
        let Some(target) = target else { return false };
        let frames = if self.targets.each {
            match self.stack.first() {
                Some(Frame::Arr { .. }) => &self.stack[1..],
                _ => return false,
            }
        } else {
            &self.stack[..]
        };
        frames.len() == target.len()
            && frames.iter().zip(target).all(|(f, k)| match f {
                Frame::Obj { key, .. } => key == k,
                Frame::Arr { .. } => false,
            })
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
        let mut rest = text;
        while let Some(c) = rest.chars().next() {
            if self.state == State::Failed {
                return;
            }
            // Inside a string, a run of characters that JSON writes as they
            // are (no quote, backslash or control character) is taken at
            // once: the per-character path below costs ~300 instructions.
            if let State::Str { role, esc: None } = &self.state {
                let role = *role;
                let n = rest
                    .bytes()
                    .position(|b| b == b'"' || b == b'\\' || b < 0x20)
                    .unwrap_or(rest.len());
                if n > 0 {
                    // `n` is at an ASCII byte or the end: a char boundary.
                    self.plain_run(role, &rest[..n], out);
                    rest = &rest[n..];
                    continue;
                }
            }
            self.step(c, out);
            rest = &rest[c.len_utf8()..];
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
        if let State::Bare(_) = self.state {
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
        if self.cap == Some(self.stack.len()) {
            self.flush(out);
            self.cap = None;
            out.push(Piece::ArgsDone { call: self.call() });
        }
        self.state = if self.stack.is_empty() {
            State::Done
        } else {
            State::After
        };
    }

    fn start_value(&mut self, c: char, out: &mut Vec<Piece>) {
        if self.cap.is_none() && self.at(&self.targets.args) {
            self.cap = Some(self.stack.len());
        }
        if self.targets.each && self.stack.len() == 1 {
            out.push(Piece::CallStart { call: self.call() });
        }
        match c {
            '{' => {
                self.emit("{");
                self.stack.push(Frame::Obj {
                    key: String::new(),
                    count: 0,
                });
                self.state = State::KeyOrEnd;
            }
            '[' => {
                self.emit("[");
                self.stack.push(Frame::Arr { count: 0 });
                self.state = State::Value;
            }
            '"' => {
                let role = if self.at(&self.targets.name) {
                    StrRole::Watched(true)
                } else if self.at(&self.targets.id) {
                    StrRole::Watched(false)
                } else if let Some(d) = self.cap {
                    let param = match self.stack.last() {
                        Some(Frame::Obj { key, .. }) if self.stack.len() == d + 1 => {
                            Some(key.clone())
                        }
                        _ => None,
                    };
                    match param {
                        Some(key) => {
                            self.flush(out);
                            out.push(Piece::ParamOpen {
                                call: self.call(),
                                key,
                            });
                            StrRole::Param
                        }
                        _ => {
                            self.emit("\"");
                            StrRole::InArgs
                        }
                    }
                } else {
                    StrRole::Other
                };
                self.buf.clear();
                self.state = State::Str { role, esc: None };
            }
            c if c == '-' || c.is_ascii_alphanumeric() => {
                self.state = State::Bare(c.to_string());
            }
            _ => self.fail(out),
        }
    }

    fn finish_bare(&mut self, out: &mut Vec<Piece>) {
        let State::Bare(raw) = std::mem::replace(&mut self.state, State::Value) else {
            return;
        };
        match json_loads(&raw) {
            Ok(v) if !matches!(v, retort_engine::Value::Str(_)) => {
                if self.cap.is_some() {
                    v.write_json(&mut self.pending, NonFinite::Python);
                }
                self.value_done(out);
            }
            _ => self.fail(out),
        }
    }

    fn string_char(&mut self, role: &StrRole, ch: char, out: &mut Vec<Piece>) {
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
                let key = std::mem::take(&mut self.buf);
                if self.cap.is_some() {
                    write_json_str(&mut self.pending, &key);
                }
                if let Some(Frame::Obj { key: k, .. }) = self.stack.last_mut() {
                    *k = key;
                }
                self.state = State::Colon;
                return;
            }
            StrRole::Watched(true) => out.push(Piece::Name {
                call,
                name: std::mem::take(&mut self.buf),
            }),
            StrRole::Watched(false) => out.push(Piece::Id {
                call,
                id: std::mem::take(&mut self.buf),
            }),
            StrRole::Param => {
                let key = match self.stack.last() {
                    Some(Frame::Obj { key, .. }) => key.clone(),
                    _ => String::new(),
                };
                out.push(Piece::ParamClose {
                    call,
                    key,
                    value: std::mem::take(&mut self.buf),
                });
            }
            StrRole::InArgs => self.pending.push('"'),
            StrRole::Other => {}
        }
        self.value_done(out);
    }

    fn step(&mut self, c: char, out: &mut Vec<Piece>) {
        let is_ws = matches!(c, ' ' | '\t' | '\n' | '\r');
        match std::mem::replace(&mut self.state, State::Value) {
            State::Failed => self.state = State::Failed,
            State::Done => {
                self.state = State::Done;
                if !is_ws {
                    self.fail(out);
                }
            }
            State::Value => {
                if is_ws {
                    self.state = State::Value;
                } else if c == ']' && matches!(self.stack.last(), Some(Frame::Arr { count: 0 })) {
                    self.close_container(c, out);
                } else {
                    self.start_value(c, out);
                }
            }
            State::KeyOrEnd | State::Key if is_ws => {
                // Restore whichever of the two it was.
                self.state = match self.stack.last() {
                    Some(Frame::Obj { count: 0, .. }) => State::KeyOrEnd,
                    _ => State::Key,
                };
            }
            State::KeyOrEnd if c == '}' => self.close_container(c, out),
            State::KeyOrEnd | State::Key => {
                if c == '"' {
                    self.buf.clear();
                    self.state = State::Str {
                        role: StrRole::Key,
                        esc: None,
                    };
                } else {
                    self.fail(out);
                }
            }
            State::Colon => {
                if is_ws {
                    self.state = State::Colon;
                } else if c == ':' {
                    self.emit(": ");
                    self.state = State::Value;
                } else {
                    self.fail(out);
                }
            }
            State::After => {
                if is_ws {
                    self.state = State::After;
                    return;
                }
                match (c, self.stack.last_mut()) {
                    (',', Some(Frame::Obj { count, .. })) => {
                        *count += 1;
                        self.emit(", ");
                        self.state = State::Key;
                    }
                    (',', Some(Frame::Arr { count })) => {
                        *count += 1;
                        self.emit(", ");
                        self.state = State::Value;
                    }
                    ('}', Some(Frame::Obj { .. })) | (']', Some(Frame::Arr { .. })) => {
                        self.close_container(c, out)
                    }
                    _ => self.fail(out),
                }
            }
            State::Bare(mut raw) => {
                if c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.') {
                    raw.push(c);
                    self.state = State::Bare(raw);
                } else {
                    self.state = State::Bare(raw);
                    self.finish_bare(out);
                    if self.state != State::Failed {
                        self.step(c, out);
                    }
                }
            }
            State::Str { role, esc: None } => match c {
                '"' => self.string_end(role, out),
                '\\' => {
                    self.state = State::Str {
                        role,
                        esc: Some(String::from("\\")),
                    }
                }
                c if (c as u32) < 0x20 => self.fail(out),
                c => {
                    self.string_char(&role, c, out);
                    self.state = State::Str { role, esc: None };
                }
            },
            State::Str {
                role,
                esc: Some(mut e),
            } => {
                if e == "\\" {
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
                                esc: Some(String::new()),
                            };
                            return;
                        }
                        _ => return self.fail(out),
                    };
                    self.string_char(&role, decoded, out);
                    self.state = State::Str { role, esc: None };
                    return;
                }
                if !c.is_ascii_hexdigit() {
                    return self.fail(out);
                }
                e.push(c);
                if e.len() < 4 {
                    self.state = State::Str { role, esc: Some(e) };
                    return;
                }
                // Surrogates (paired or not) are left to the engine.
                match u32::from_str_radix(&e, 16).ok().and_then(char::from_u32) {
                    Some(ch) => {
                        self.string_char(&role, ch, out);
                        self.state = State::Str { role, esc: None };
                    }
                    None => self.fail(out),
                }
            }
        }
    }

    fn close_container(&mut self, c: char, out: &mut Vec<Piece>) {
        self.emit(if c == '}' { "}" } else { "]" });
        self.stack.pop();
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
        };
        let text = r#" {"name" : "get", "arguments":{"a":1E2,"b" :[true ,null,"x\u00e9\n"],"c":"q\"","d":{}}} "#;
        let want = json_loads(r#"{"a":1E2,"b" :[true ,null,"x\u00e9\n"],"c":"q\"","d":{}}"#)
            .unwrap()
            .to_json_string();
        for step in 1..8 {
            let out = run(t.clone(), text, step);
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
            "[] x",
            r#"["\ud800"]"#,
        ] {
            assert_eq!(run(t.clone(), bad, 2).last(), Some(&Piece::Failed), "{bad}");
        }
    }
}
