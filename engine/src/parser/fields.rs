//! The message being built: one entry per field, by the field's index.
//!
//! The reference builds a dict keyed by field name. Keyed by index, a
//! region's value is stored without copying the name or hashing it, and a
//! compiled template's typed message is read by index (see
//! [`Parser::finalize_typed`](super::Parser::finalize_typed)) instead of
//! by matching names. The dict's order is kept: the order in which fields
//! were first written, which is where Python's dict keeps a key.

use crate::template::Template;
use crate::value::{Map, Value};

/// The values the message holds for its fields, before the template's
/// defaults are applied and empty values dropped.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FieldValues {
    /// By field index; sized on the first write.
    values: Vec<Option<Value>>,
    /// Field indices in the order they were first written.
    order: Vec<u16>,
}

impl FieldValues {
    /// The value of field `f`, if one was written.
    pub fn get(&self, f: usize) -> Option<&Value> {
        self.values.get(f)?.as_ref()
    }

    /// The value of field `f`, to change in place.
    pub fn get_mut(&mut self, f: usize) -> Option<&mut Value> {
        self.values.get_mut(f)?.as_mut()
    }

    /// Whether field `f` has a value.
    pub fn contains(&self, f: usize) -> bool {
        self.get(f).is_some()
    }

    /// Moves the value of field `f` out (the entry keeps its place in the
    /// order, as a dict entry set to a new value would).
    pub fn take(&mut self, f: usize) -> Option<Value> {
        self.values.get_mut(f)?.take()
    }

    /// Sets field `f` (of `n` fields) to `value`. A field written before
    /// keeps its place in the order.
    pub(super) fn set(&mut self, f: usize, n: usize, value: Value) {
        if self.values.len() < n {
            self.values.resize_with(n, || None);
        }
        if self.values[f].is_none() && !self.order.contains(&(f as u16)) {
            self.order.push(f as u16);
        }
        self.values[f] = Some(value);
    }

    /// The fields written, in the order they were first written, with
    /// their values.
    pub fn iter(&self) -> impl Iterator<Item = (usize, &Value)> {
        self.order
            .iter()
            .filter_map(|&f| Some((f as usize, self.get(f as usize)?)))
    }

    /// The message as the reference returns it: the template's defaults
    /// first (a field's value replacing its default), then the other fields
    /// in the order they were first written, without empty values.
    pub fn into_map(mut self, t: &Template) -> Map {
        let defaults = &t.defaults;
        let mut message = crate::value::map_with_capacity(defaults.len() + self.order.len());
        for (k, default) in defaults {
            let v = match t.field_index(k).and_then(|f| self.take(f)) {
                Some(v) => v,
                None => default.clone(),
            };
            message.insert(k.clone(), v);
        }
        let order = std::mem::take(&mut self.order);
        for f in order {
            let f = f as usize;
            let name = &t.fields[f].name;
            if let Some(v) = self.take(f)
                && !defaults.contains_key(name)
                && !v.is_empty_value()
            {
                message.insert(name.clone(), v);
            }
        }
        message
    }

    /// The values so far as a dict keyed by field name, in the order the
    /// fields were first written (no defaults applied, nothing dropped).
    pub fn to_map(&self, t: &Template) -> Map {
        let mut out = crate::value::map_with_capacity(self.order.len());
        for (f, v) in self.iter() {
            out.insert(t.fields[f].name.clone(), v.clone());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use crate::Template;

    /// The dict's order is Python's: the defaults' keys first, then the
    /// fields in the order the model first wrote them (not template order);
    /// a field written twice keeps its first place. (The conformance
    /// vectors compare messages as dicts, without order.) The reference,
    /// transformers 5.23.0, returns `{'role': 'assistant', 'z': '', 'b':
    /// '3', 'content': 'x', 'a': '2'}` for this template and text.
    #[test]
    fn the_message_keeps_pythons_dict_order() {
        let t = Template::from_json(
            r#"{"start_anchor": "<s>", "defaults": {"role": "assistant", "z": ""},
                "fields": {
                  "a": {"open": "<a>", "close": "</a>"},
                  "b": {"open": "<b>", "close": "</b>"},
                  "z": {"open": "<z>", "close": "</z>"},
                  "e": {"open": "<e>", "close": "</e>", "optional": true},
                  "content": {}
                }}"#,
        )
        .unwrap();
        let message = t
            .parse("<b>1</b>x<a>2</a><e></e><z></z><b>3</b>", "<s>")
            .unwrap();
        let keys: Vec<&str> = message.keys().map(String::as_str).collect();
        // `z` was written empty but has a default, so it stays; `e` was
        // written empty and is dropped.
        assert_eq!(keys, ["role", "z", "b", "content", "a"]);
        assert_eq!(message["b"].as_str(), Some("3"));
        assert_eq!(message["z"].as_str(), Some(""));
    }
}
