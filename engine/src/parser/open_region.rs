//! Read-only access to the region the parser has open between calls.
//!
//! Layers built on the parser's events (the OpenAI delta adapter) need what
//! the open delimiter captured — a tool call's name or id written in the
//! delimiter, e.g. `<function=(?P<name>…)>` — as soon as the region opens,
//! not only once its value is known at the close.

use super::Parser;
use crate::Machine;
use crate::Value;
use crate::machine::{RegionValues, TypedRegions};

/// The region a parser has open: its field and what its open delimiter
/// captured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpenRegion<'p> {
    /// The field's name.
    pub field: &'p str,
    /// The named groups of the open delimiter that matched, in pattern order
    /// (the scope a `transform` sees besides `content`).
    pub captures: &'p [(String, String)],
}

impl<'t, M: Machine<'t>> Parser<'t, M> {
    /// The explicit region open after the last call, if any. A region that
    /// opened and closed within one call is not reported (its close event
    /// carries the value); the implicit region is never reported, as it has
    /// no delimiter.
    pub fn open_region(&self) -> Option<OpenRegion<'_>> {
        let f = self.current.filter(|_| self.opened)?;
        let field = &self.t.fields[f as usize];
        field.open?;
        Some(OpenRegion {
            field: &field.name,
            captures: &self.captures,
        })
    }
}

impl<'t, M: Machine<'t>> Parser<'t, M> {
    /// The field whose region is open after the last call (the implicit
    /// field's too) and the text it has received so far, exactly as the
    /// model wrote it. After an error this is the text of the region the
    /// error is in, up to where parsing stopped, so a caller can report
    /// it without keeping a copy of the stream.
    pub fn region_text(&self) -> Option<(&str, &str)> {
        let f = self.current?;
        Some((&self.t.fields[f as usize].name, &self.body))
    }
}

impl<'t, M: Machine<'t>> Parser<'t, M> {
    /// The values of the regions closed so far, by field, as the message
    /// holds them before [`Parser::finalize`] applies the template's
    /// defaults and drops empty values. After an error (a required field
    /// missing at the end, say) this is what was parsed before it.
    pub fn parsed_so_far(&self) -> crate::Map {
        let mut map = self.kept.output.to_map(self.t);
        for (k, field) in self.t.fields.iter().enumerate() {
            let count = self.kept.regions.count(k);
            if M::Regions::takes(k)
                && count > 0
                && let Some(v) = map.get_mut(&field.name)
            {
                *v = match field.transform_each {
                    // The list is the field's value.
                    true => self.kept.regions.value(k, 0),
                    false => {
                        Value::List((0..count).map(|j| self.kept.regions.value(k, j)).collect())
                    }
                };
            }
        }
        map
    }
}
