//! Regions and the message: routing text to the open region, opening and
//! closing regions, finishing their values and assembling the message.

use super::*;
use crate::machine::RegionValues as _;

/// Region texts up to this long are copied out of the body into their
/// values (see [`Parser::copies_out`]).
pub(super) const COPY_OUT_MAX: usize = 4096;

impl<'t, M: Machine<'t>> Parser<'t, M> {
    /// Routes text `[a, b)` of `src` to the current region (dropped if there
    /// is none).
    pub(super) fn route(&mut self, src: Hay<'_>, a: usize, b: usize) {
        let Some(f) = self.current else {
            if self.unclaimed_on && a < b {
                self.note_unclaimed(a, src.slice(a, b));
            }
            return;
        };
        if a >= b {
            return;
        }
        if !self.opened {
            self.log.raw.push(RawEvent::Open(f));
            self.opened = true;
            self.body_start = a;
            self.start_params(f);
        }
        self.body.push_str(src.slice(a, b));
        self.push_chunk(f, a, b);
        self.follow_params();
    }

    /// Records a chunk of field `f`'s region at `a..b`: adjacent pieces of
    /// one region are one chunk.
    #[inline]
    pub(super) fn push_chunk(&mut self, f: u16, a: usize, b: usize) {
        if let Some(RawEvent::Chunk { field, end, .. }) = self.log.raw.last_mut()
            && *field == f
            && *end == a
        {
            *end = b;
        } else {
            self.log.raw.push(RawEvent::Chunk {
                field: f,
                start: a,
                end: b,
            });
        }
    }

    /// A region of field `f` opened: with [`Parser::stream_params`], an
    /// `xml-inline` or `kv-lines` region is read as it streams.
    pub(super) fn start_params(&mut self, f: u16) {
        self.xml_params.clear();
        if !self.params_on {
            return;
        }
        self.xml = match self.xml_spare.take() {
            Some((g, mut x)) if g == f => {
                x.reset();
                Some(x)
            }
            _ => self.t.fields[f as usize]
                .content
                .param_stream()
                .map(Box::new),
        };
    }

    /// The open region's stream is done: kept for the next region.
    fn end_params(&mut self) {
        if let (Some(x), Some(f)) = (self.xml.take(), self.current) {
            self.xml_spare = Some((f, x));
        }
    }

    /// Reads the open region's text for parameters now decided, and logs
    /// them for this call's events. A region the stream cannot follow is
    /// parsed whole at its close, as without streaming.
    pub(super) fn follow_params(&mut self) {
        self.read_params(false);
    }

    fn read_params(&mut self, complete: bool) {
        let Some(xml) = self.xml.as_mut() else { return };
        let before = self.xml_params.len();
        if xml
            .advance(&self.body, complete, &mut self.xml_params)
            .is_err()
        {
            self.xml = None;
            return;
        }
        let (Some(f), after) = (self.current, self.log.raw.len()) else {
            return;
        };
        for (key, value) in &self.xml_params[before..] {
            self.log.params.push(Param {
                after,
                field: f,
                key: key.clone(),
                value: value.clone(),
            });
        }
    }

    /// An error about the current region's value, carrying its raw text.
    pub(super) fn field_error(&self, name: &str, message: String) -> ParseError {
        ParseError {
            kind: ParseErrorKind::Field,
            field: Some(name.to_owned()),
            offset: self.body_start,
            raw: self.body.clone(),
            message,
        }
    }

    pub(super) fn reset_to_implicit(&mut self) {
        self.current = self.t.implicit;
        self.captures.clear();
        self.body.clear();
        self.opened = false;
        self.end_params();
        self.xml_params.clear();
    }

    /// Moves the values of this call's close events that live in the
    /// fields selected by `which` aside, before those fields change or
    /// move: values in the message's entries, and values the machine built
    /// in its own types (a value already made for a read event is taken
    /// from its cell).
    pub(super) fn detach(&mut self, which: impl Fn(usize) -> bool) {
        for r in &mut self.log.raw {
            let RawEvent::Close { value, .. } = r else {
                continue;
            };
            let v = match *value {
                ValueSlot::Output(k, item) if which(k) => match (self.kept.output.get(k), item) {
                    (Some(v), None) => v.clone(),
                    (Some(Value::List(items)), Some(j)) => {
                        items.get(j).cloned().unwrap_or(Value::Null)
                    }
                    _ => Value::Null,
                },
                ValueSlot::Typed { field, item, cell } if which(field as usize) => {
                    match self
                        .kept
                        .cells
                        .get_mut(cell as usize)
                        .and_then(|c| c.take())
                    {
                        Some(v) => v,
                        None => self.kept.regions.value(field as usize, item as usize),
                    }
                }
                _ => continue,
            };
            self.kept.values.push(v);
            *value = ValueSlot::Aside(self.kept.values.len() - 1);
        }
    }

    /// Moves the values of field `k` that the machine built in its own
    /// types into the message's list, at the same indices, and points this
    /// call's events at them there. A `transform_each` field's list is the
    /// field's value itself.
    pub(super) fn spill_typed_field(&mut self, k: usize) {
        if self.kept.regions.count(k) == 0 {
            return;
        }
        let each = self.t.fields[k].transform_each;
        let items = self.kept.regions.spill(k);
        match self.kept.output.get_mut(k) {
            Some(Value::List(list)) if list.is_empty() => *list = items,
            _ => self
                .kept
                .output
                .set(k, self.t.fields.len(), Value::List(items)),
        }
        for r in &mut self.log.raw {
            if let RawEvent::Close { value, .. } = r
                && let ValueSlot::Typed { field, item, .. } = *value
                && field as usize == k
            {
                *value = ValueSlot::Output(k, (!each).then_some(item as usize));
            }
        }
    }

    /// [`Parser::spill_typed_field`] for every field: the message as the
    /// engine builds it.
    pub(super) fn spill_typed(&mut self) {
        for k in 0..self.t.fields.len() {
            if M::Regions::takes(k) {
                self.spill_typed_field(k);
            }
        }
    }

    /// Whether a closing region's text is copied out of the body into its
    /// value (one allocation of its size), the body keeping its buffer for
    /// the next region, rather than moved there. A short text is: the next
    /// region would otherwise grow the body again from nothing, a
    /// reallocation and a copy per doubling, which costs more than the
    /// copy. So is a text in a buffer with more spare room than text (made
    /// by `reserve`), which the value would otherwise keep for as long as
    /// the message lives. A long text in a buffer grown to it moves: in a
    /// one-shot parse that is most of the message, and a copy would be
    /// the only one made of it.
    fn copies_out(&self) -> bool {
        let n = self.body.len();
        n <= COPY_OUT_MAX || self.body.capacity() - n > n
    }

    /// Closes the open region. In lenient mode a region whose text gives no
    /// value is recorded as malformed instead of failing.
    pub(super) fn close_current(&mut self) -> Result<(), ParseError> {
        let field = self.current.filter(|_| self.opened);
        match self.close_current_strict() {
            Err(e) if self.options.lenient && e.kind == ParseErrorKind::Field => {
                let Some(f) = field else { return Err(e) };
                self.push_malformed(f, e.offset, e.raw, e.message);
                self.reset_to_implicit();
                Ok(())
            }
            other => other,
        }
    }

    pub(super) fn push_malformed(&mut self, f: u16, offset: usize, raw: String, error: String) {
        self.log.malformed.push(Malformed {
            field: self.t.fields[f as usize].name.clone(),
            offset,
            raw,
            error,
        });
        self.log.raw.push(RawEvent::Malformed {
            field: f,
            index: self.log.malformed.len() - 1,
        });
    }

    pub(super) fn close_current_strict(&mut self) -> Result<(), ParseError> {
        let Some(f) = self.current.filter(|_| self.opened) else {
            self.reset_to_implicit();
            return Ok(());
        };
        if self.inline.is_some() {
            self.inline_region(f);
        }
        // A region whose parameters were read as it streamed: the rest are
        // read now, and its value is built from them (the same dict as the
        // parser's, without reading the text again).
        if self.xml.is_some() {
            self.read_params(true);
        }
        let streamed = self.xml.is_some().then(|| {
            let mut map = Map::default();
            for (k, v) in self.xml_params.drain(..) {
                map.insert(k, v);
            }
            Value::Map(map)
        });
        self.end_params();
        let t = self.t;
        let field = &t.fields[f as usize];
        let k = f as usize;
        let n = t.fields.len();
        // A field that neither repeats nor joins, closing with a value
        // already in the message: this region's value replaces it.
        let replaces = !field.repeats && field.join.is_none() && self.kept.output.contains(k);
        let mut streamed = streamed;
        // A region the machine builds in its own types (a compiled
        // template's tool call): its value goes there, without the
        // transform's dict. A repeating field's values are all there or all
        // in the message, so a field with values in the message stays
        // there. A `transform_each` field that does not repeat holds one
        // region's list, which the next region's replaces.
        let each = field.transform_each;
        let typed = match (field.repeats, each) {
            (true, false) => {
                self.kept.regions.count(k) > 0
                    || !self.kept.output.contains(k) && !t.defaults.contains_key(&field.name)
            }
            (false, true) => !t.defaults.contains_key(&field.name),
            _ => false,
        };
        if typed
            && M::Regions::takes(k)
            && self.typed_on
            && self.tools.is_none()
            && field.join.is_none()
        {
            // A plain JSON region whose builder reads entries of its
            // object: built from the text, without the object around them.
            let from_text = match streamed.is_none() && !each && field.content.plain_json() {
                true => self.kept.regions.close_json(
                    k,
                    &self.body,
                    crate::py::JSON_MAX_DEPTH,
                    &mut self.captures,
                ),
                false => None,
            };
            let closed = match from_text {
                Some(j) => Ok(j),
                None => {
                    let parsed = match streamed.take() {
                        Some(parsed) => parsed,
                        None => field
                            .content
                            .parse(&self.body)
                            .map_err(|e| self.field_error(&field.name, e.to_string()))?,
                    };
                    if each {
                        // This call's events keep the list they showed.
                        self.detach(|i| i == k);
                    }
                    self.kept.regions.close(k, parsed, &mut self.captures)
                }
            };
            match closed {
                Ok(j) => {
                    if each || !self.kept.output.contains(k) {
                        // The dict's entry, for its order and for the
                        // required-field check; the values are typed.
                        self.kept.output.set(k, n, Value::List(Vec::new()));
                    }
                    self.kept.cells.push(std::sync::OnceLock::new());
                    let slot = ValueSlot::Typed {
                        field: f,
                        item: u32::try_from(j).unwrap_or(u32::MAX),
                        cell: u32::try_from(self.kept.cells.len() - 1).unwrap_or(u32::MAX),
                    };
                    self.log.raw.push(RawEvent::Close {
                        field: f,
                        value: slot,
                    });
                    if replaces {
                        self.note_replaced(f);
                    }
                    self.reset_to_implicit();
                    return Ok(());
                }
                // This region needs the engine's transform. A repeating
                // field's values move into the message, where this one
                // joins them; a list (if the transform succeeds) replaces
                // the typed one below.
                Err(parsed) => {
                    if !each {
                        self.spill_typed_field(k);
                    }
                    streamed = Some(parsed);
                }
            }
        }
        let value = match streamed {
            Some(parsed) => finish_parsed(
                parsed,
                field.transform.as_ref(),
                field.transform_each,
                &self.captures,
                &field.name,
                self.tools.as_ref(),
            )
            .map_err(|e| self.field_error(&field.name, e.to_string()))?,
            // Text kept as it is becomes the value: copied out of the body,
            // which keeps its buffer, or moved there (see `copies_out`).
            None if field.transform.is_none()
                && self.tools.as_ref().is_none_or(|t| t.is_empty())
                && field.content.keeps_text() =>
            {
                if self.copies_out() {
                    field
                        .content
                        .parse(&self.body)
                        .map_err(|e| self.field_error(&field.name, e.to_string()))?
                } else {
                    field
                        .content
                        .parse_owned(std::mem::take(&mut self.body))
                        .map_err(|(e, body)| {
                            self.body = body;
                            self.field_error(&field.name, e.to_string())
                        })?
                }
            }
            // Anything else is read from the body, which keeps its buffer
            // for the next region (no allocation per region).
            None => finish_region(
                &field.content,
                field.transform.as_ref(),
                field.transform_each,
                &self.body,
                &self.captures,
                &field.name,
                self.tools.as_ref(),
            )
            .map_err(|e| self.field_error(&field.name, e.to_string()))?,
        };
        let name = &field.name;
        let existing = self.kept.output.contains(k);
        let slot = if let Some(sep) = &field.join {
            let Value::Str(piece) = value else {
                let message = format!(
                    "Field '{name}': 'join' requires each match to parse to a string, got {}.",
                    value.type_name()
                );
                return Err(self.field_error(name, message));
            };
            // Python's `previous is None` test: a default of `null` counts
            // as no previous value; any other previous value must be a
            // string to concatenate.
            let previous = match existing {
                true => self.kept.output.get(k),
                false => self.t.defaults.get(name),
            };
            match previous {
                None | Some(Value::Null) => {
                    if existing {
                        self.detach(|i| i == k);
                    }
                    self.kept.output.set(k, n, Value::Str(piece));
                    ValueSlot::Output(k, None)
                }
                Some(Value::Str(prev)) => {
                    let mut joined = String::with_capacity(prev.len() + sep.len() + piece.len());
                    joined.push_str(prev);
                    joined.push_str(sep);
                    joined.push_str(&piece);
                    if existing {
                        self.detach(|i| i == k);
                    }
                    self.kept.output.set(k, n, Value::Str(joined));
                    self.kept.values.push(Value::Str(piece));
                    ValueSlot::Aside(self.kept.values.len() - 1)
                }
                Some(other) => {
                    // The reference evaluates `previous + join + value`, so
                    // Python's message names the previous value's type.
                    let message = match other {
                        Value::List(_) => {
                            "TypeError: can only concatenate list (not \"str\") to list".to_owned()
                        }
                        _ => format!(
                            "TypeError: unsupported operand type(s) for +: '{}' and 'str'",
                            other.type_name()
                        ),
                    };
                    return Err(self.field_error(name, message));
                }
            }
        } else if field.repeats {
            if !existing {
                // `append` to the default's list (a copy of it).
                let start = match self.t.defaults.get(name) {
                    Some(default) => default.clone(),
                    None => Value::List(Vec::new()),
                };
                self.kept.output.set(k, n, start);
            }
            match self.kept.output.get_mut(k) {
                Some(Value::List(items)) => {
                    items.push(value);
                    ValueSlot::Output(k, Some(items.len() - 1))
                }
                Some(other) => {
                    let message =
                        format!("'{}' object has no attribute 'append'", other.type_name());
                    return Err(self.field_error(name, message));
                }
                None => {
                    self.kept.values.push(value);
                    ValueSlot::Aside(self.kept.values.len() - 1)
                }
            }
        } else {
            if existing || M::Regions::takes(k) {
                self.detach(|i| i == k);
            }
            if M::Regions::takes(k) {
                // Values the machine built for the field are replaced.
                self.kept.regions.clear(k);
            }
            self.kept.output.set(k, n, value);
            ValueSlot::Output(k, None)
        };
        self.log.raw.push(RawEvent::Close {
            field: f,
            value: slot,
        });
        if replaces {
            self.note_replaced(f);
        }
        self.reset_to_implicit();
        Ok(())
    }

    /// Records that the region of field `f` now closing replaced the
    /// field's earlier value (out of line: rare, and off the close's path).
    #[cold]
    fn note_replaced(&mut self, f: u16) {
        self.log.replaced.push(Replaced {
            field: self.t.fields[f as usize].name.clone(),
            offset: self.body_start,
        });
    }

    pub(super) fn open_explicit(&mut self, f: u16, captures: Vec<(String, String)>, at: usize) {
        self.current = Some(f);
        self.captures = captures;
        self.body.clear();
        self.opened = true;
        self.body_start = at;
        self.log.raw.push(RawEvent::Open(f));
        self.start_params(f);
    }

    /// Applies a delimiter match. Returns whether the reference's loop goes
    /// on (it stops after a zero-width close of a region that received
    /// nothing).
    pub(super) fn commit(
        &mut self,
        src: Hay<'_>,
        w: Watch,
        start: usize,
        end: usize,
        captures: Vec<(String, String)>,
    ) -> Result<bool, ParseError> {
        self.route(src, self.pos, start);
        if start == end && end == self.pos {
            self.idle_commits += 1;
            // Every state of the region machine has been visited at this
            // offset without consuming text: the reference loops forever.
            if self.idle_commits > 2 * (self.t.fields.len() + 2) {
                return Err(ParseError {
                    kind: ParseErrorKind::NoProgress,
                    field: Some(self.t.fields[w.field as usize].name.clone()),
                    offset: start,
                    raw: String::new(),
                    message: format!("delimiters keep matching the empty string at byte {start}"),
                });
            }
        } else {
            self.idle_commits = 0;
        }
        self.pos = end;
        match w.kind {
            Kind::Open => {
                self.close_current()?;
                self.open_explicit(w.field, captures, end);
                if self.inline.is_some() {
                    self.inline_open(src, w.field, start, end);
                }
                Ok(true)
            }
            Kind::Close => {
                let had_content = self.opened;
                if end == src.end() && self.prompt_done && self.t.takes_the_rest(w.delim) {
                    self.note_after_end(src, w.delim as usize, start, end);
                }
                if self.inline.is_some() {
                    self.inline_close(src, start, end);
                }
                self.close_current()?;
                Ok(had_content || start != end)
            }
        }
    }

    // ----- the generation: streaming scan -----------------------------------
}
