//! The events of one call: recorded compactly while parsing, handed out
//! as views that borrow the parser and the fed piece.

use super::*;

/// An event as the parser records it: chunk text stays in the parser's text
/// buffer until the next call.
#[derive(Clone, Copy, Debug)]
pub(super) enum RawEvent {
    Open(u16),
    Chunk {
        field: u16,
        start: usize,
        end: usize,
    },
    Close {
        field: u16,
        value: ValueSlot,
    },
    /// `malformed[i]` (lenient mode).
    Malformed {
        field: u16,
        index: usize,
    },
}

/// Where the value of a close event lives: moved into the message being
/// built (no copy) or, when the message's entry changed later in the same
/// call, kept aside.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ValueSlot {
    /// `values[i]`.
    Aside(usize),
    /// The message's entry of the field at this index; with `Some(j)`,
    /// item `j` of the list there (`repeats`).
    Output(usize, Option<usize>),
    /// Value `item` of `field` among those the machine built in its own
    /// types, made into a run-time value in `cells[cell]` when read.
    Typed { field: u16, item: u32, cell: u32 },
}

/// One call's events and the lists they refer to.
#[derive(Clone, Debug, Default)]
pub(super) struct Log {
    /// The events, in order.
    pub(super) raw: Vec<RawEvent>,
    /// The parameters decided in this call (for [`Events::params`]).
    pub(super) params: Vec<Param>,
    /// Lenient mode: the regions that gave no value so far, in order
    /// (`RawEvent::Malformed` indexes it).
    pub(super) malformed: Vec<Malformed>,
    /// The values replaced so far, in order (see [`Replaced`]).
    pub(super) replaced: Vec<Replaced>,
    /// The generation's text no region claimed, in order (see
    /// [`Unclaimed`](super::Unclaimed)).
    pub(super) unclaimed: Vec<super::Unclaimed>,
}

/// The message being built and the values this call's close events point
/// at: those moved aside, and the run-time form of the values the machine
/// builds in its own types ([`TypedRegions`]), a cell per close event,
/// filled when the event is read and emptied at the next call.
#[derive(Clone, Debug, Default)]
pub(super) struct Kept<R> {
    /// The message so far, by field.
    pub(super) output: FieldValues,
    /// Values of this call's close events moved out of the message.
    pub(super) values: Vec<Value>,
    /// The values of regions the machine builds in its own types.
    pub(super) regions: R,
    pub(super) cells: Vec<std::sync::OnceLock<Value>>,
}

impl<R: TypedRegions> Kept<R> {
    /// The run-time form of value `j` of field `f`, made once into cell `c`.
    pub(super) fn cell(&self, f: usize, j: usize, c: usize) -> Option<&Value> {
        let cell = self.cells.get(c)?;
        Some(cell.get_or_init(|| self.regions.value(f, j)))
    }
}

/// [`Kept`] as the events see it, whatever the machine.
pub(super) trait KeptValues: Sync + std::fmt::Debug {
    /// The value a close event's slot points at.
    fn value(&self, slot: ValueSlot) -> Option<&Value>;
}

impl<R: TypedRegions> KeptValues for Kept<R> {
    fn value(&self, slot: ValueSlot) -> Option<&Value> {
        match slot {
            ValueSlot::Aside(i) => self.values.get(i),
            ValueSlot::Output(k, item) => match (self.output.get(k), item) {
                (Some(v), None) => Some(v),
                (Some(Value::List(items)), Some(j)) => items.get(j),
                _ => None,
            },
            ValueSlot::Typed { field, item, cell } => {
                self.cell(field as usize, item as usize, cell as usize)
            }
        }
    }
}

/// A parameter of an `xml-inline` region, decided as the region streamed
/// (see [`Parser::stream_params`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    /// It was decided after the first `after` events of the call: it
    /// belongs between events `after - 1` and `after`.
    pub after: usize,
    /// The region's field, as an index into [`Template::fields`].
    pub field: u16,
    /// The key, as the tag pattern's `key` group read it.
    pub key: String,
    /// The value, as the value parser made it (before `tools=` coercion,
    /// which applies to the region's value).
    pub value: Value,
}

/// The events of one call, borrowing from the parser.
#[derive(Clone, Copy, Debug)]
pub struct Events<'p> {
    /// This call's events and the lists they refer to (one reference, so
    /// that the `Events` the quick path returns are a few words).
    pub(super) log: &'p Log,
    pub(super) kept: &'p dyn KeptValues,
    /// The text the chunks of this call lie in, starting at absolute
    /// offset `src_base`: the caller's piece or the parser's buffer.
    pub(super) src: &'p str,
    pub(super) src_base: usize,
    pub(super) t: &'p Template,
}

impl<'p> Events<'p> {
    /// Number of events.
    pub fn len(&self) -> usize {
        self.log.raw.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.log.raw.is_empty()
    }

    /// The `i`-th event.
    pub fn get(&self, i: usize) -> Option<Event<'p>> {
        self.log.raw.get(i).map(|r| self.event(*r))
    }

    fn event(&self, r: RawEvent) -> Event<'p> {
        let fields = &self.t.fields;
        self.indexed(r)
            .map_field(|f| fields[f as usize].name.as_str())
    }

    /// The event with its field as an index into [`Template::fields`].
    fn indexed(&self, r: RawEvent) -> Event<'p, u16> {
        match r {
            RawEvent::Open(f) => Event::RegionOpen { field: f },
            RawEvent::Chunk { field, start, end } => Event::RegionChunk {
                field,
                text: &self.src[start - self.src_base..end - self.src_base],
                dirty: self.t.fields[field as usize].dirty,
            },
            RawEvent::Close { field, value } => Event::RegionClose {
                field,
                value: self.value(value),
            },
            RawEvent::Malformed { field, index } => {
                let (raw, error) = self
                    .log
                    .malformed
                    .get(index)
                    .map_or(("", ""), |m| (m.raw.as_str(), m.error.as_str()));
                Event::RegionMalformed { field, raw, error }
            }
        }
    }

    fn value(&self, slot: ValueSlot) -> &'p Value {
        static MISSING: Value = Value::Null;
        // Slots are made together with the values they point at, so the
        // lookup always succeeds.
        self.kept.value(slot).unwrap_or(&MISSING)
    }

    /// The events with their fields typed as `F` (a generated `Field` enum).
    pub fn typed<F: FieldId>(self) -> TypedEvents<'p, F> {
        TypedEvents {
            events: self,
            field: std::marker::PhantomData,
        }
    }

    /// The parameters decided in this call (empty unless
    /// [`Parser::stream_params`] is on), in order, each placed among the
    /// events by [`Param::after`].
    pub fn params(&self) -> &'p [Param] {
        &self.log.params
    }

    /// The events, in order, with their fields as indices into
    /// [`Template::fields`] (no name looked up: for layers that keep their
    /// own table per field).
    pub fn iter_indexed(&self) -> impl Iterator<Item = Event<'p, u16>> + '_ {
        self.log.raw.iter().map(|r| self.indexed(*r))
    }

    /// The events, in order.
    pub fn iter(&self) -> impl Iterator<Item = Event<'p>> + '_ {
        self.log.raw.iter().map(|r| self.event(*r))
    }

    /// Copies the events out.
    pub fn to_vec(&self) -> Vec<OwnedEvent> {
        self.iter().map(|e| e.to_owned_event()).collect()
    }
}

impl<'p> IntoIterator for Events<'p> {
    type Item = Event<'p>;
    type IntoIter = EventsIter<'p>;
    fn into_iter(self) -> EventsIter<'p> {
        EventsIter {
            events: self,
            next: 0,
        }
    }
}

/// The events of one call with typed fields (see [`Events::typed`]).
#[derive(Clone, Copy, Debug)]
pub struct TypedEvents<'p, F> {
    events: Events<'p>,
    field: std::marker::PhantomData<F>,
}

impl<'p, F: FieldId> TypedEvents<'p, F> {
    /// Number of events.
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// The `i`-th event.
    pub fn get(&self, i: usize) -> Option<Event<'p, F>> {
        let e = self.events.indexed(*self.events.log.raw.get(i)?);
        // Indices come from the template the field enum was generated
        // from, so the lookup always succeeds.
        let field = F::from_index(e.field_id() as usize)?;
        Some(e.map_field(|_| field))
    }

    /// The events, in order.
    pub fn iter(&self) -> impl Iterator<Item = Event<'p, F>> + '_ {
        (0..self.len()).filter_map(|i| self.get(i))
    }

    /// The untyped events.
    pub fn untyped(&self) -> Events<'p> {
        self.events
    }
}

impl<'p, F: FieldId> IntoIterator for TypedEvents<'p, F> {
    type Item = Event<'p, F>;
    type IntoIter = TypedEventsIter<'p, F>;
    fn into_iter(self) -> TypedEventsIter<'p, F> {
        TypedEventsIter {
            events: self,
            next: 0,
        }
    }
}

/// Iterator over [`TypedEvents`].
#[derive(Clone, Debug)]
pub struct TypedEventsIter<'p, F> {
    events: TypedEvents<'p, F>,
    next: usize,
}

impl<'p, F: FieldId> Iterator for TypedEventsIter<'p, F> {
    type Item = Event<'p, F>;
    fn next(&mut self) -> Option<Event<'p, F>> {
        while self.next < self.events.len() {
            self.next += 1;
            if let Some(e) = self.events.get(self.next - 1) {
                return Some(e);
            }
        }
        None
    }
}

/// Iterator over [`Events`].
#[derive(Clone, Debug)]
pub struct EventsIter<'p> {
    events: Events<'p>,
    next: usize,
}

impl<'p> Iterator for EventsIter<'p> {
    type Item = Event<'p>;
    fn next(&mut self) -> Option<Event<'p>> {
        let e = self.events.get(self.next)?;
        self.next += 1;
        Some(e)
    }
}
