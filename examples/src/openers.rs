//! The named groups of the delimiter that opened a region (a tool call's
//! name and id, in most formats), known the moment the region opens.
//!
//! Why this exists: `region_open` events carry only the field (as in the
//! reference), and the parser keeps the opener's captures to itself until
//! the region closes and its value is built. To show a tool's name as soon
//! as the model has written it, the demo matches the field's `open_pattern`
//! itself (with retort's Python-regex engine) on the text it has fed, at
//! the place where the parser is. Once the parser exposes the captures of
//! the open region, this module can go.

use retort::pyre::Regex;
use serde_json::Value as Json;

use crate::DemoError;

/// Finds the captures of region openers in the generation as it is fed.
#[derive(Debug, Default)]
pub struct Openers {
    /// `(field, open_pattern)` for every field whose opener has named groups.
    patterns: Vec<(String, Regex)>,
    /// The generation fed so far.
    seen: String,
    /// How far into `seen` the events have accounted for (never past the
    /// parser's real position: see [`Openers::chunk`]).
    cursor: usize,
}

impl Openers {
    /// The openers of a template given as JSON (a bare response template
    /// or a `tokenizer_config.json` holding one under `response_template`).
    pub fn from_template_json(json: &str) -> Result<Openers, DemoError> {
        let doc: Json = serde_json::from_str(json)
            .map_err(|e| DemoError::Template(format!("not JSON: {e}")))?;
        let template = doc.get("response_template").unwrap_or(&doc);
        let mut patterns = Vec::new();
        if let Some(Json::Object(fields)) = template.get("fields") {
            for (name, field) in fields {
                let Some(Json::String(pattern)) = field.get("open_pattern") else {
                    continue;
                };
                let regex = Regex::new(pattern)
                    .map_err(|e| DemoError::Template(format!("fields.{name}.open_pattern: {e}")))?;
                if !regex.group_names().is_empty() {
                    patterns.push((name.clone(), regex));
                }
            }
        }
        Ok(Openers {
            patterns,
            ..Openers::default()
        })
    }

    /// Records a piece about to be fed to the parser.
    pub fn fed(&mut self, piece: &str) {
        self.seen.push_str(piece);
    }

    /// Accounts for a chunk of region text: the parser routed it, so its
    /// opener (if any) lies before it. The chunk is looked up from the
    /// cursor; an earlier copy of the same text inside a delimiter can only
    /// hold the cursor back, never move it past the parser.
    pub fn chunk(&mut self, text: &str) {
        if let Some(i) = self.seen[self.cursor..].find(text) {
            self.cursor += i + text.len();
        }
    }

    /// The named groups of the opener of `field`'s region, which just
    /// opened: `(group, text)` in the pattern's order. Empty when the
    /// field's opener has no named groups (or a literal `open`), or when
    /// the opener lies in the prompt.
    pub fn open(&mut self, field: &str) -> Vec<(String, String)> {
        let Some((_, regex)) = self.patterns.iter().find(|(f, _)| f == field) else {
            return Vec::new();
        };
        let Ok(Some(m)) = regex.search(&self.seen, self.cursor) else {
            return Vec::new();
        };
        self.cursor = m.end();
        let mut out: Vec<(String, String)> = Vec::new();
        for (name, group) in regex.group_names() {
            if let Some((s, e)) = m.get(*group)
                && !out.iter().any(|(n, _)| n == name)
            {
                out.push((name.clone(), self.seen[s..e].to_owned()));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_opener_is_found_after_the_last() {
        let json = r#"{"fields": {
            "calls": {"open_pattern": "<call (?P<name>\\w+)>", "close": "</call>"},
            "content": {}
        }}"#;
        let mut o = Openers::from_template_json(json).unwrap();
        o.fed("Hi <call a>{\"x\": \"<call b>\"}</call>");
        o.chunk("Hi");
        assert_eq!(o.open("calls"), [("name".to_owned(), "a".to_owned())]);
        // The opener-like text inside the arguments is not an opener.
        o.chunk("{\"x\": \"<call b>\"}");
        o.fed("<call c>");
        assert_eq!(o.open("calls"), [("name".to_owned(), "c".to_owned())]);
        assert!(o.open("content").is_empty());
    }

    #[test]
    fn a_bad_pattern_is_reported_with_its_field() {
        let err = Openers::from_template_json(r#"{"fields": {"t": {"open_pattern": "(?P<n>"}}}"#)
            .unwrap_err();
        assert!(err.to_string().contains("fields.t.open_pattern"), "{err}");
    }
}
