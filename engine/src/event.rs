//! Streaming events: a region opened, a chunk of its text, a region closed.
//!
//! [`Event`] borrows from the parser (the chunk text is a slice of the text
//! the parser holds), so streaming plain text allocates nothing per feed.
//! [`OwnedEvent`] is the same event with its own data.

use crate::value::{NonFinite, Value, write_json_str};

/// An event, borrowing its data from the parser that produced it.
///
/// `F` names the field: its name (`&str`) for run-time templates, the
/// generated `Field` enum for compiled ones.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum Event<'a, F = &'a str> {
    /// A region started: the model is now writing `field`.
    RegionOpen {
        /// The field.
        field: F,
    },
    /// A piece of the current region's text.
    RegionChunk {
        /// The field.
        field: F,
        /// The text, exactly as the model wrote it.
        text: &'a str,
        /// Whether the text is raw material for a structured parser (`json`,
        /// `xml-inline`, `kv-lines`) rather than part of the final value.
        dirty: bool,
    },
    /// A region ended; `value` is its parsed (and transformed) value.
    RegionClose {
        /// The field.
        field: F,
        /// The parsed value.
        value: &'a Value,
    },
    /// (Lenient parsers only) a region ended but its text did not give a
    /// value: it did not parse, its transform found nothing, a value could
    /// not be joined or appended, or (at finalize, with `raw` empty) a
    /// required field was never written. The field keeps no value from it;
    /// the text was streamed in the region's chunks and is repeated here.
    RegionMalformed {
        /// The field.
        field: F,
        /// The region's text, exactly as the model wrote it.
        raw: &'a str,
        /// What the strict parser would have reported.
        error: &'a str,
    },
}

/// An event that owns its data.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum OwnedEvent {
    /// See [`Event::RegionOpen`].
    RegionOpen {
        /// The field's name.
        field: String,
    },
    /// See [`Event::RegionChunk`].
    RegionChunk {
        /// The field's name.
        field: String,
        /// The text.
        text: String,
        /// Whether the text is raw material for a structured parser.
        dirty: bool,
    },
    /// See [`Event::RegionClose`].
    RegionClose {
        /// The field's name.
        field: String,
        /// The parsed value.
        value: Value,
    },
    /// See [`Event::RegionMalformed`].
    RegionMalformed {
        /// The field's name.
        field: String,
        /// The region's text.
        raw: String,
        /// What went wrong.
        error: String,
    },
}

impl<'a, F: Copy> Event<'a, F> {
    /// The same event with its field mapped by `f` (e.g. from an index to a
    /// name).
    pub fn map_field<G>(self, f: impl FnOnce(F) -> G) -> Event<'a, G> {
        match self {
            Event::RegionOpen { field } => Event::RegionOpen { field: f(field) },
            Event::RegionChunk { field, text, dirty } => Event::RegionChunk {
                field: f(field),
                text,
                dirty,
            },
            Event::RegionClose { field, value } => Event::RegionClose {
                field: f(field),
                value,
            },
            Event::RegionMalformed { field, raw, error } => Event::RegionMalformed {
                field: f(field),
                raw,
                error,
            },
        }
    }

    /// The field the event is about.
    pub fn field_id(&self) -> F {
        match *self {
            Event::RegionOpen { field }
            | Event::RegionChunk { field, .. }
            | Event::RegionClose { field, .. }
            | Event::RegionMalformed { field, .. } => field,
        }
    }
}

impl<F: AsRef<str>> serde::Serialize for Event<'_, F> {
    /// The reference's event dict: `{"type": "region_chunk", "field": ...,
    /// "text": ..., "dirty": ...}` (`region_open`: type and field;
    /// `region_close`: type, field and value).
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let (kind, field, len) = match self {
            Event::RegionOpen { field } => ("region_open", field, 2),
            Event::RegionChunk { field, .. } => ("region_chunk", field, 4),
            Event::RegionClose { field, .. } => ("region_close", field, 3),
            Event::RegionMalformed { field, .. } => ("region_malformed", field, 4),
        };
        let mut m = s.serialize_map(Some(len))?;
        m.serialize_entry("type", kind)?;
        m.serialize_entry("field", field.as_ref())?;
        match self {
            Event::RegionOpen { .. } => {}
            Event::RegionChunk { text, dirty, .. } => {
                m.serialize_entry("text", text)?;
                m.serialize_entry("dirty", dirty)?;
            }
            Event::RegionClose { value, .. } => m.serialize_entry("value", value)?,
            Event::RegionMalformed { raw, error, .. } => {
                m.serialize_entry("raw", raw)?;
                m.serialize_entry("error", error)?;
            }
        }
        m.end()
    }
}

impl Event<'_> {
    /// Copies the event's data into an [`OwnedEvent`].
    pub fn to_owned_event(&self) -> OwnedEvent {
        match *self {
            Event::RegionOpen { field } => OwnedEvent::RegionOpen {
                field: field.to_owned(),
            },
            Event::RegionChunk { field, text, dirty } => OwnedEvent::RegionChunk {
                field: field.to_owned(),
                text: text.to_owned(),
                dirty,
            },
            Event::RegionClose { field, value } => OwnedEvent::RegionClose {
                field: field.to_owned(),
                value: value.clone(),
            },
            Event::RegionMalformed { field, raw, error } => OwnedEvent::RegionMalformed {
                field: field.to_owned(),
                raw: raw.to_owned(),
                error: error.to_owned(),
            },
        }
    }

    /// The field the event is about.
    pub fn field(&self) -> &str {
        match self {
            Event::RegionOpen { field }
            | Event::RegionChunk { field, .. }
            | Event::RegionClose { field, .. }
            | Event::RegionMalformed { field, .. } => field,
        }
    }

    /// Writes the event as the reference's JSON object
    /// (`{"type": "region_chunk", "field": ..., "text": ..., "dirty": ...}`).
    pub fn write_json(&self, out: &mut String, style: NonFinite) {
        match self {
            Event::RegionOpen { field } => {
                out.push_str("{\"type\": \"region_open\", \"field\": ");
                write_json_str(out, field);
            }
            Event::RegionChunk { field, text, dirty } => {
                out.push_str("{\"type\": \"region_chunk\", \"field\": ");
                write_json_str(out, field);
                out.push_str(", \"text\": ");
                write_json_str(out, text);
                out.push_str(if *dirty {
                    ", \"dirty\": true"
                } else {
                    ", \"dirty\": false"
                });
            }
            Event::RegionClose { field, value } => {
                out.push_str("{\"type\": \"region_close\", \"field\": ");
                write_json_str(out, field);
                out.push_str(", \"value\": ");
                value.write_json(out, style);
            }
            Event::RegionMalformed { field, raw, error } => {
                out.push_str("{\"type\": \"region_malformed\", \"field\": ");
                write_json_str(out, field);
                out.push_str(", \"raw\": ");
                write_json_str(out, raw);
                out.push_str(", \"error\": ");
                write_json_str(out, error);
            }
        }
        out.push('}');
    }
}

impl OwnedEvent {
    /// A borrowed view of the event.
    pub fn as_event(&self) -> Event<'_> {
        match self {
            OwnedEvent::RegionOpen { field } => Event::RegionOpen { field },
            OwnedEvent::RegionChunk { field, text, dirty } => Event::RegionChunk {
                field,
                text,
                dirty: *dirty,
            },
            OwnedEvent::RegionClose { field, value } => Event::RegionClose { field, value },
            OwnedEvent::RegionMalformed { field, raw, error } => {
                Event::RegionMalformed { field, raw, error }
            }
        }
    }
}

/// Merges consecutive chunks of one field and one `dirty` flag, as the
/// conformance format compares them (how text is split across chunks is not
/// part of the outcome).
pub fn coalesce<'a>(events: impl IntoIterator<Item = Event<'a>>) -> Vec<OwnedEvent> {
    let mut out: Vec<OwnedEvent> = Vec::new();
    for ev in events {
        if let Event::RegionChunk { field, text, dirty } = ev
            && let Some(OwnedEvent::RegionChunk {
                field: f,
                text: t,
                dirty: d,
            }) = out.last_mut()
            && f == field
            && *d == dirty
        {
            t.push_str(text);
            continue;
        }
        out.push(ev.to_owned_event());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_of_one_field_and_flag_merge() {
        let v = Value::Int(1);
        let events = [
            Event::RegionOpen { field: "a" },
            Event::RegionChunk {
                field: "a",
                text: "x",
                dirty: false,
            },
            Event::RegionChunk {
                field: "a",
                text: "y",
                dirty: false,
            },
            Event::RegionChunk {
                field: "a",
                text: "z",
                dirty: true,
            },
            Event::RegionClose {
                field: "a",
                value: &v,
            },
        ];
        let merged = coalesce(events);
        assert_eq!(merged.len(), 4);
        assert_eq!(
            merged[1],
            OwnedEvent::RegionChunk {
                field: "a".into(),
                text: "xy".into(),
                dirty: false
            }
        );
    }

    #[test]
    fn events_serialise_like_the_reference() {
        let v = Value::Float(f64::NAN);
        let mut s = String::new();
        Event::RegionClose {
            field: "n",
            value: &v,
        }
        .write_json(&mut s, NonFinite::Tagged);
        assert_eq!(
            s,
            r#"{"type": "region_close", "field": "n", "value": {"$float": "nan"}}"#
        );
        s.clear();
        Event::RegionChunk {
            field: "t",
            text: "a\"b\n",
            dirty: true,
        }
        .write_json(&mut s, NonFinite::Python);
        assert_eq!(
            s,
            r#"{"type": "region_chunk", "field": "t", "text": "a\"b\n", "dirty": true}"#
        );
    }
}
