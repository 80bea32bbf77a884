//! Read-only access to the region the parser has open between calls.
//!
//! Layers built on the parser's events (the OpenAI delta adapter) need what
//! the open delimiter captured — a tool call's name or id written in the
//! delimiter, e.g. `<function=(?P<name>…)>` — as soon as the region opens,
//! not only once its value is known at the close.

use super::Parser;
use crate::Machine;

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
