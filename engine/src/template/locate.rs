//! Finding where a value sits in JSON text, for error messages.
//!
//! Templates are parsed into [`Value`](crate::Value)s, which forget where
//! things were written. When validation fails we know the JSON path of the
//! offending value (`fields.tool_calls.open_pattern`); this module walks the
//! text once more to turn that path into a line and column. Where a key is
//! repeated, the last occurrence is the one Python keeps, so it is the one
//! reported.

/// One step of a JSON path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seg {
    /// An object key.
    Key(String),
    /// An array index.
    Index(usize),
}

/// A position in source text: 1-based line and column (in characters).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Location {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, counted in characters.
    pub column: usize,
    /// Byte offset into the text.
    pub offset: usize,
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// The location of the byte at `offset`.
pub fn location_of(text: &str, offset: usize) -> Location {
    let offset = offset.min(text.len());
    let before = &text[..floor_char_boundary(text, offset)];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    Location {
        line,
        column,
        offset,
    }
}

fn floor_char_boundary(text: &str, mut i: usize) -> usize {
    while i > 0 && !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The byte offset at which the value at `path` starts, or `None` if the text
/// does not hold it (or is not well-formed enough to tell).
pub fn find(text: &str, path: &[Seg]) -> Option<usize> {
    let mut w = Walker {
        s: text.as_bytes(),
        i: 0,
    };
    w.ws();
    w.find_in_value(path)
}

struct Walker<'a> {
    s: &'a [u8],
    i: usize,
}

impl Walker<'_> {
    fn ws(&mut self) {
        while let Some(&c) = self.s.get(self.i) {
            if matches!(c, b' ' | b'\t' | b'\n' | b'\r') {
                self.i += 1;
            } else {
                break;
            }
        }
    }

    fn eat(&mut self, c: u8) -> Option<()> {
        self.ws();
        if self.s.get(self.i) == Some(&c) {
            self.i += 1;
            Some(())
        } else {
            None
        }
    }

    /// At the start of a value: returns the offset of `path` inside it,
    /// leaving the walker after the value.
    fn find_in_value(&mut self, path: &[Seg]) -> Option<usize> {
        self.ws();
        let start = self.i;
        let Some((seg, rest)) = path.split_first() else {
            self.skip_value()?;
            return Some(start);
        };
        match (self.s.get(self.i)?, seg) {
            (b'{', Seg::Key(want)) => {
                self.i += 1;
                let mut found = None;
                self.ws();
                if self.s.get(self.i) == Some(&b'}') {
                    self.i += 1;
                    return None;
                }
                loop {
                    self.ws();
                    let key = self.string()?;
                    self.eat(b':')?;
                    if key == *want {
                        // Keep the last occurrence, as Python's dict does.
                        found = self.find_in_value(rest).or(found);
                    } else {
                        self.skip_value()?;
                    }
                    self.ws();
                    match self.s.get(self.i)? {
                        b',' => self.i += 1,
                        b'}' => {
                            self.i += 1;
                            return found;
                        }
                        _ => return found,
                    }
                }
            }
            (b'[', Seg::Index(want)) => {
                self.i += 1;
                let mut found = None;
                let mut n = 0;
                self.ws();
                if self.s.get(self.i) == Some(&b']') {
                    self.i += 1;
                    return None;
                }
                loop {
                    if n == *want {
                        found = self.find_in_value(rest);
                    } else {
                        self.skip_value()?;
                    }
                    n += 1;
                    self.ws();
                    match self.s.get(self.i)? {
                        b',' => self.i += 1,
                        b']' => {
                            self.i += 1;
                            return found;
                        }
                        _ => return found,
                    }
                }
            }
            _ => None,
        }
    }

    fn skip_value(&mut self) -> Option<()> {
        self.ws();
        match *self.s.get(self.i)? {
            b'{' | b'[' => {
                let mut depth = 0usize;
                while let Some(&c) = self.s.get(self.i) {
                    match c {
                        b'"' => {
                            self.string()?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                self.i += 1;
                                return Some(());
                            }
                        }
                        _ => {}
                    }
                    self.i += 1;
                }
                None
            }
            b'"' => self.string().map(|_| ()),
            _ => {
                while let Some(&c) = self.s.get(self.i) {
                    if matches!(c, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') {
                        break;
                    }
                    self.i += 1;
                }
                Some(())
            }
        }
    }

    /// Reads a string literal, decoding escapes.
    fn string(&mut self) -> Option<String> {
        self.ws();
        if self.s.get(self.i) != Some(&b'"') {
            return None;
        }
        self.i += 1;
        let mut out: Vec<u16> = Vec::new();
        let mut raw = Vec::new();
        loop {
            let c = *self.s.get(self.i)?;
            self.i += 1;
            match c {
                b'"' => break,
                b'\\' => {
                    flush(&mut raw, &mut out);
                    let e = *self.s.get(self.i)?;
                    self.i += 1;
                    let unit = match e {
                        b'n' => u16::from(b'\n'),
                        b't' => u16::from(b'\t'),
                        b'r' => u16::from(b'\r'),
                        b'b' => 8,
                        b'f' => 12,
                        b'u' => {
                            let hex = std::str::from_utf8(self.s.get(self.i..self.i + 4)?).ok()?;
                            self.i += 4;
                            u16::from_str_radix(hex, 16).ok()?
                        }
                        other => u16::from(other),
                    };
                    out.push(unit);
                }
                _ => raw.push(c),
            }
        }
        flush(&mut raw, &mut out);
        Some(String::from_utf16_lossy(&out))
    }
}

fn flush(raw: &mut Vec<u8>, out: &mut Vec<u16>) {
    if !raw.is_empty() {
        out.extend(String::from_utf8_lossy(raw).encode_utf16());
        raw.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str, path: &[Seg]) -> Option<String> {
        find(text, path).map(|o| location_of(text, o).to_string())
    }

    #[test]
    fn finds_nested_keys_and_indices() {
        let text = "{\n  \"fields\": {\n    \"a\": {\"open\": [\"x\", 5]},\n    \"b\": {\"open_pattern\": \"(\"}\n  }\n}";
        let k = |s: &str| Seg::Key(s.into());
        assert_eq!(
            at(text, &[k("fields"), k("b"), k("open_pattern")]).as_deref(),
            Some("4:27")
        );
        assert_eq!(
            at(text, &[k("fields"), k("a"), k("open"), Seg::Index(1)]).as_deref(),
            Some("3:25")
        );
        assert_eq!(at(text, &[k("fields"), k("c")]), None);
        assert_eq!(at(text, &[]).as_deref(), Some("1:1"));
    }

    #[test]
    fn repeated_keys_report_the_last() {
        let text = r#"{"a": 1, "a": {"b": 2}}"#;
        assert_eq!(find(text, &[Seg::Key("a".into())]), Some(14));
    }

    #[test]
    fn escaped_keys_are_decoded() {
        let text = r#"{"t\u00e9": {"x": [1, "]", {"y": "}"}]}, "z": 0}"#;
        assert_eq!(
            find(text, &[Seg::Key("té".into()), Seg::Key("x".into())]),
            Some(18)
        );
        assert_eq!(find(text, &[Seg::Key("z".into())]), Some(46));
    }
}
