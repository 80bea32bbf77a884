//! `retort parse`: runs a template's parser over a model's output.

use crate::{Failure, json, read, source};
use retort::py::json_loads;
use retort::value::NonFinite;
use retort::{Event, Map, ParseError, ParseErrorKind, Parser, ParserOptions, Template, Value};
use std::io::{Read, Write};
use std::path::PathBuf;

/// The command line of `parse`.
pub struct Options {
    pub template: String,
    pub input: Option<PathBuf>,
    pub stream: bool,
    pub chunk: Option<usize>,
    pub prefix: Option<String>,
    pub prefix_file: Option<PathBuf>,
    pub tools: Option<PathBuf>,
    pub openai: bool,
    pub lenient: bool,
    pub require_anchor: bool,
    pub reasoning_format: retort::ReasoningFormat,
}

pub fn run(o: Options) -> Result<(), Failure> {
    let (_, template) = source::resolve(&o.template)?.load_or_recognise()?;
    let prefix = match (o.prefix, &o.prefix_file) {
        (Some(p), _) => p,
        (None, Some(f)) => read(f)?,
        (None, None) => String::new(),
    };
    let tools = match &o.tools {
        Some(f) => Some(
            json_loads(&read(f)?)
                .map_err(|e| Failure::Io(format!("{}: not JSON: {e}", f.display())))?,
        ),
        None => None,
    };
    // The output is kept for error reports; for a file, room for all of it
    // at once (no doubling of the buffer as it grows).
    let size_hint = o
        .input
        .as_ref()
        .and_then(|f| std::fs::metadata(f).ok())
        .map_or(0, |m| usize::try_from(m.len()).unwrap_or(0));
    let mut input: Box<dyn Read> = match &o.input {
        Some(f) => Box::new(
            std::fs::File::open(f).map_err(|e| Failure::Io(format!("{}: {e}", f.display())))?,
        ),
        None => Box::new(std::io::stdin().lock()),
    };
    if o.openai {
        // The chunk stream makes its own parser; the anchor is checked on
        // one made for that alone.
        let probe = ParserOptions::new().require_anchor(o.require_anchor);
        match template.parser_with(&prefix, probe, None) {
            Ok(p) if p.anchor_missing() => warn_anchor_missing(),
            Err(e) if e.kind == ParseErrorKind::MissingAnchor => {
                eprintln!("retort: error: {}", e.message);
                return Err(Failure::Reported);
            }
            _ => {}
        }
        return openai_chunks(
            &template,
            &prefix,
            tools,
            &mut *input,
            o.chunk,
            o.reasoning_format,
        );
    }
    let mut run = Run {
        template: &template,
        prefix: &prefix,
        tools: tools.as_ref(),
        lenient: o.lenient,
        require_anchor: o.require_anchor,
        reasoning_format: o.reasoning_format,
        parser: None,
        stream: o.stream,
        out: std::io::BufWriter::new(std::io::stdout().lock()),
        closed: Vec::new(),
        keep_closed: true,
        open: None,
        prompt_kept: prompt_kept(&template, &prefix),
        seen: String::with_capacity(size_hint),
        pieces: match o.chunk {
            Some(n) => Pieces::Every(n),
            None => Pieces::Ends(Vec::new()),
        },
    };
    match run.new_parser() {
        Ok(p) => {
            if p.anchor_missing() {
                warn_anchor_missing();
            }
            run.parser = Some(p);
        }
        // Tool definitions are an argument, not model output.
        Err(e) if e.kind == ParseErrorKind::Tools => {
            let file = o.tools.as_ref().map(|f| f.display().to_string());
            return Err(Failure::Io(format!(
                "{}: {}",
                file.unwrap_or_default(),
                e.message
            )));
        }
        // The prompt itself could not be processed.
        Err(e) => return Err(run.fail(&e, "in the prompt")),
    }
    run.initial()?;
    pump(&mut *input, o.chunk, |piece| run.feed(piece))?;
    run.finish()
}

/// Reads `input` as it arrives and hands it on as text: whole reads, or
/// pieces of `chunk` characters.
fn pump(
    input: &mut dyn Read,
    chunk: Option<usize>,
    mut feed: impl FnMut(&str) -> Result<(), Failure>,
) -> Result<(), Failure> {
    let mut buf = vec![0u8; 64 * 1024];
    // Bytes of a UTF-8 sequence split by a read.
    let mut pending: Vec<u8> = Vec::new();
    // With `chunk`, characters waiting for a full piece.
    let mut text = String::new();
    let mut consumed = 0usize;
    loop {
        let n = match input.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Failure::Io(format!("reading the input: {e}"))),
        };
        pending.extend_from_slice(&buf[..n]);
        let valid = match std::str::from_utf8(&pending) {
            Ok(s) => s.len(),
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(e) => {
                let at = consumed + e.valid_up_to();
                eprintln!("error: the model output is not UTF-8: byte {at} of the input");
                return Err(Failure::Reported);
            }
        };
        // Checked just above.
        let decoded = std::str::from_utf8(&pending[..valid]).unwrap_or_default();
        match chunk {
            None => feed(decoded)?,
            Some(n) => {
                text.push_str(decoded);
                let mut rest = text.as_str();
                while let Some((at, _)) = rest.char_indices().nth(n) {
                    feed(&rest[..at])?;
                    rest = &rest[at..];
                }
                text = rest.to_owned();
            }
        }
        consumed += valid;
        pending.drain(..valid);
    }
    if !pending.is_empty() {
        eprintln!("error: the model output ends inside a UTF-8 sequence (byte {consumed})");
        return Err(Failure::Reported);
    }
    if !text.is_empty() {
        feed(&text)?;
    }
    Ok(())
}

/// One parse: the parser, where output goes, and what was decided so far
/// (for the report of an error).
struct Run<'t> {
    template: &'t Template,
    prefix: &'t str,
    tools: Option<&'t Value>,
    /// Lenient mode: a malformed region is reported and kept, and parsing
    /// goes on.
    lenient: bool,
    /// A prompt without the start anchor is an error, not a warning.
    require_anchor: bool,
    /// Where the reasoning goes.
    reasoning_format: retort::ReasoningFormat,
    parser: Option<Parser<'t>>,
    stream: bool,
    /// Written a feed at a time: events show as soon as the piece that
    /// produced them is parsed, without a write per event.
    out: std::io::BufWriter<std::io::StdoutLock<'static>>,
    /// The regions closed so far and their values, in order (for the report
    /// of an error; not kept once the parser has finalized).
    closed: Vec<(String, Value)>,
    keep_closed: bool,
    /// After an error: the region that was open and the text it had
    /// received (the parser's own copy, taken when it fails).
    open: Option<(String, String)>,
    /// Length of the prompt's part that the parser keeps (after the start
    /// anchor): error offsets count from its start.
    prompt_kept: usize,
    /// The output fed so far, and how it was cut into pieces: a failed call
    /// returns no events, so they are recovered by replaying the pieces.
    seen: String,
    pieces: Pieces,
}

/// How the output fed so far was cut into pieces, to replay it the same way.
enum Pieces {
    /// Every piece was this many characters (`--chunk`): nothing to keep
    /// per piece, which matters for `--chunk 1` on long outputs.
    Every(usize),
    /// Where each piece (a read of the input) ended.
    Ends(Vec<usize>),
}

impl Pieces {
    fn record(&mut self, end: usize) {
        if let Pieces::Ends(ends) = self {
            ends.push(end);
        }
    }

    /// The pieces of `seen`, in order.
    fn replay<'s>(&'s self, seen: &'s str) -> Box<dyn Iterator<Item = &'s str> + 's> {
        match self {
            Pieces::Every(n) => {
                let n = (*n).max(1);
                let mut rest = seen;
                Box::new(std::iter::from_fn(move || {
                    if rest.is_empty() {
                        return None;
                    }
                    let at = rest.char_indices().nth(n).map_or(rest.len(), |(i, _)| i);
                    let (piece, tail) = rest.split_at(at);
                    rest = tail;
                    Some(piece)
                }))
            }
            Pieces::Ends(ends) => {
                let mut from = 0;
                Box::new(ends.iter().map(move |&end| {
                    let piece = &seen[from..end];
                    from = end;
                    piece
                }))
            }
        }
    }
}

impl<'t> Run<'t> {
    fn new_parser(&self) -> Result<Parser<'t>, ParseError> {
        let options = ParserOptions::new()
            .lenient(self.lenient)
            .require_anchor(self.require_anchor)
            .reasoning_format(self.reasoning_format);
        self.template.parser_with(self.prefix, options, self.tools)
    }

    fn line(&mut self, line: &str) -> Result<(), Failure> {
        writeln!(self.out, "{line}").map_err(|e| Failure::Io(format!("stdout: {e}")))
    }

    fn flush(&mut self) -> Result<(), Failure> {
        self.out
            .flush()
            .map_err(|e| Failure::Io(format!("stdout: {e}")))
    }

    fn initial(&mut self) -> Result<(), Failure> {
        let Some(p) = &self.parser else {
            return Ok(());
        };
        let events: Vec<_> = p.initial_events().to_vec();
        for e in &events {
            self.event(&e.as_event())?;
        }
        self.flush()
    }

    fn event(&mut self, e: &Event<'_>) -> Result<(), Failure> {
        if let Event::RegionClose { field, value } = e
            && self.keep_closed
        {
            self.closed.push(((*field).to_owned(), (*value).clone()));
        }
        if self.stream {
            let mut s = String::new();
            e.write_json(&mut s, NonFinite::Python);
            self.line(&s)?;
        }
        Ok(())
    }

    fn feed(&mut self, piece: &str) -> Result<(), Failure> {
        let Some(mut p) = self.parser.take() else {
            return Ok(());
        };
        self.seen.push_str(piece);
        self.pieces.record(self.seen.len());
        let result = match p.feed(piece) {
            Ok(events) => {
                let mut r = Ok(());
                for e in events.iter() {
                    r = r.and_then(|()| self.event(&e));
                }
                r
            }
            Err(e) => {
                let e = e.clone();
                self.open = p.region_text().map(|(f, t)| (f.to_owned(), t.to_owned()));
                drop(p);
                self.recover(&e);
                return Err(self.fail(&e, ""));
            }
        };
        self.parser = Some(p);
        result.and_then(|()| self.flush())
    }

    /// The events the failing call would have produced before the error:
    /// a fresh parser is fed the same pieces (whose events were already
    /// handled), then the output up to the failing region's text, which
    /// settles every region before it.
    fn recover(&mut self, e: &ParseError) {
        let Some(cut) = e.offset.checked_sub(self.prompt_kept) else {
            return;
        };
        let Ok(mut p) = self.new_parser() else {
            return;
        };
        // Every piece but the failing one, which is the last of `seen`.
        let events: Vec<_> = {
            let mut from = 0;
            let mut replay = self.pieces.replay(&self.seen).peekable();
            while let Some(piece) = replay.next() {
                if replay.peek().is_none() {
                    break;
                }
                if p.feed(piece).is_err() {
                    return;
                }
                from += piece.len();
            }
            let Some(rest) = self.seen.get(from..cut.min(self.seen.len())) else {
                return;
            };
            if rest.is_empty() {
                return;
            }
            match p.feed(rest) {
                Ok(events) => events.to_vec(),
                Err(_) => return,
            }
        };
        for ev in &events {
            // Output errors surface again with the error line.
            let _ = self.event(&ev.as_event());
        }
    }

    fn finish(mut self) -> Result<(), Failure> {
        let Some(mut p) = self.parser.take() else {
            return Ok(());
        };
        // Without --stream the last events are not printed: the parser need
        // not copy the last values for them.
        let ended = if self.stream {
            p.finalize()
                .map(|(message, events)| (message, events.to_vec()))
        } else {
            p.finalize_message().map(|message| (message, Vec::new()))
        };
        let message = match ended {
            Ok((message, events)) => {
                // Nothing can fail now: the values need not be copied.
                self.keep_closed = false;
                for e in &events {
                    self.event(&e.as_event())?;
                }
                message
            }
            Err(e) => {
                self.open = p.region_text().map(|(f, t)| (f.to_owned(), t.to_owned()));
                // The regions that closed in the failed call gave no events:
                // report what the parser holds instead.
                self.closed = p.parsed_so_far().into_iter().collect();
                return Err(self.fail(&e, "at the end of the output"));
            }
        };
        // Lenient mode: say on stderr which regions gave no value (their
        // text is in the `region_malformed` events of --stream).
        for m in p.malformed() {
            eprintln!(
                "retort: warning: `{}` at byte {} gave no value ({}); its raw text is in the region_malformed event (--stream)",
                m.field,
                m.offset,
                m.error.lines().next().unwrap_or_default()
            );
        }
        // A field written twice keeps its last value (the reference's
        // semantics): say so, so that the earlier text is not lost unseen.
        warn_replaced(p.replaced());
        warn_unclaimed(p.unclaimed());
        if self.stream {
            self.write("{\"type\": \"message\", \"message\": ")?;
            self.write_map(&message)?;
            self.write("}\n")?;
        } else {
            self.write_map(&message)?;
            self.write("\n")?;
        }
        self.flush()
    }

    fn write(&mut self, text: &str) -> Result<(), Failure> {
        self.out
            .write_all(text.as_bytes())
            .map_err(|e| Failure::Io(format!("stdout: {e}")))
    }

    /// Writes `map` as [`json`] does, an entry at a time: a long message is
    /// never held a second time as one JSON text.
    fn write_map(&mut self, map: &Map) -> Result<(), Failure> {
        self.write("{")?;
        let mut piece = String::new();
        for (i, (k, v)) in map.iter().enumerate() {
            piece.clear();
            if i > 0 {
                piece.push_str(", ");
            }
            Value::Str(k.clone()).write_json(&mut piece, NonFinite::Python);
            piece.push_str(": ");
            match v {
                // A long text (the content of a long answer) is escaped a
                // slice at a time; escapes are per character, so slices cut
                // at character boundaries give the same JSON.
                Value::Str(text) if text.len() > 1 << 16 => {
                    piece.push('"');
                    self.write(&piece)?;
                    let mut rest = text.as_str();
                    while !rest.is_empty() {
                        let mut at = rest.len().min(1 << 16);
                        while !rest.is_char_boundary(at) {
                            at -= 1;
                        }
                        let (slice, tail) = rest.split_at(at);
                        rest = tail;
                        piece.clear();
                        Value::Str(slice.to_owned()).write_json(&mut piece, NonFinite::Python);
                        // Without the quotes written around the slice.
                        self.write(&piece[1..piece.len() - 1])?;
                    }
                    piece.clear();
                    piece.push('"');
                }
                _ => v.write_json(&mut piece, NonFinite::Python),
            }
            self.write(&piece)?;
        }
        self.write("}")
    }

    /// Reports bad model output: on stdout as the stream's last line, and
    /// on stderr for people, with what was parsed before it.
    fn fail(&mut self, e: &ParseError, when: &str) -> Failure {
        if self.stream {
            let mut err = Map::default();
            err.insert("kind".into(), Value::Str(kind_name(&e.kind).into()));
            err.insert(
                "field".into(),
                e.field.clone().map_or(Value::Null, Value::Str),
            );
            // Offsets count in the output, as on stderr; an error in the
            // prompt has none there.
            let offset = e
                .offset
                .checked_sub(self.prompt_kept)
                .map_or(Value::Null, |at| Value::Int(at as i64));
            err.insert("offset".into(), offset);
            err.insert("raw".into(), Value::Str(e.raw.clone()));
            err.insert("message".into(), Value::Str(e.message.clone()));
            let line = format!(
                "{{\"type\": \"error\", \"error\": {}}}",
                json(&Value::Map(err))
            );
            // The stderr report below still says what happened.
            let _ = self.line(&line).and_then(|()| self.flush());
        }
        let mut report = String::from(if e.kind == ParseErrorKind::MissingAnchor {
            "error: the prompt does not fit the template: "
        } else {
            "error: bad model output: "
        });
        match &e.field {
            Some(f) => report.push_str(&format!("field '{f}': {}", e.message)),
            None => report.push_str(&e.message),
        }
        report.push('\n');
        report.push_str(&format!("  = kind: {}\n", kind_name(&e.kind)));
        let place = if e.offset >= self.prompt_kept {
            let at = e.offset - self.prompt_kept;
            match self.seen.get(..at) {
                Some(before) => {
                    let line = before.matches('\n').count() + 1;
                    let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
                    format!("byte {at} of the output (line {line}, column {column})")
                }
                None => format!("byte {at} of the output"),
            }
        } else {
            format!(
                "byte {} of the prompt's tail after the start anchor",
                e.offset
            )
        };
        let what = if e.field.is_some() {
            "the region's text starts at"
        } else {
            "at"
        };
        report.push_str(&format!("  = {what} {place}"));
        if !when.is_empty() {
            report.push_str(&format!(" ({when})"));
        }
        report.push('\n');
        if !e.raw.is_empty() {
            report.push_str(&format!(
                "  = raw text: {}\n",
                json(&Value::Str(e.raw.clone()))
            ));
        }
        if let Some((field, body)) = &self.open
            && !body.is_empty()
            && *body != e.raw
        {
            report.push_str(&format!(
                "  = the region of `{field}` was open, with the text {}\n",
                json(&Value::Str(body.clone()))
            ));
        }
        if !self.closed.is_empty() {
            report.push_str("  = regions parsed before the error:\n");
            for (field, value) in &self.closed {
                report.push_str(&format!("      {field}: {}\n", json(value)));
            }
        }
        report.push_str(&format!(
            "  = parsing stopped there; {} bytes of the output had been read",
            self.seen.len()
        ));
        eprintln!("{report}");
        Failure::Reported
    }
}

/// The length of the part of `prefix` after the last match of the start
/// anchor (all of it when there is none), as the parser keeps it.
fn prompt_kept(template: &Template, prefix: &str) -> usize {
    let pattern = template.describe().start_anchor.pattern;
    let Ok(re) = retort_engine::pyre::Regex::new(&pattern) else {
        return prefix.len();
    };
    let mut last_end = 0;
    for m in re.find_iter(prefix) {
        match m {
            Ok(m) => last_end = m.end(),
            Err(_) => break,
        }
    }
    prefix.len() - last_end
}

fn kind_name(kind: &ParseErrorKind) -> &'static str {
    match kind {
        ParseErrorKind::Field => "field",
        ParseErrorKind::Tools => "tools",
        ParseErrorKind::MissingFields(_) => "missing-fields",
        ParseErrorKind::Finalized => "finalized",
        ParseErrorKind::MissingAnchor => "missing-anchor",
        ParseErrorKind::InvalidUtf8 => "invalid-utf8",
        ParseErrorKind::NoProgress => "no-progress",
        ParseErrorKind::MatcherBudget => "matcher-budget",
        ParseErrorKind::Type(_) => "type",
        ParseErrorKind::Internal => "internal",
        _ => "other",
    }
}

/// `parse --openai`: one `chat.completion.chunk` per line, written a feed at
/// a time, ending with the chunk that carries `finish_reason`.
fn openai_chunks(
    template: &Template,
    prefix: &str,
    tools: Option<Value>,
    input: &mut dyn Read,
    chunk: Option<usize>,
    reasoning_format: retort::ReasoningFormat,
) -> Result<(), Failure> {
    use retort::openai::{ChunkStream, Chunks, Error, Options};
    let fail = |e: Error| match e {
        Error::Parse(e) => {
            eprintln!("error: {e}");
            if !e.raw.is_empty() {
                eprintln!("raw text: {}", json(&Value::Str(e.raw.clone())));
            }
            Failure::Reported
        }
        Error::Tools(m) => Failure::Io(format!("tools: {m}")),
        e => {
            eprintln!("error: {e}");
            Failure::Reported
        }
    };
    let options = Options {
        tools,
        reasoning_format,
        ..Options::deterministic()
    };
    let mut stream = ChunkStream::new(template, prefix, options).map_err(fail)?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    // Borrowed chunks, serialised straight into the output.
    let mut write = |chunks: Chunks<'_>| -> Result<(), Failure> {
        for c in chunks.iter() {
            serde_json::to_writer(&mut out, &c)
                .map_err(|e| Failure::Io(format!("writing a chunk: {e}")))?;
            writeln!(out).map_err(|e| Failure::Io(format!("writing: {e}")))?;
        }
        out.flush()
            .map_err(|e| Failure::Io(format!("writing: {e}")))
    };
    pump(input, chunk, |piece| {
        write(stream.feed_chunks(piece).map_err(fail)?)
    })?;
    let (last, _) = stream.finalize_chunks(false).map_err(fail)?;
    write(last)?;
    warn_replaced(stream.replaced());
    Ok(())
}

/// Tells stderr that the prompt lacks the template's start anchor, so that
/// the whole prompt was parsed as output.
fn warn_anchor_missing() {
    eprintln!(
        "retort: warning: the template's start anchor does not occur in the prompt: the whole \
         prompt is parsed as output (the reference's semantics). The template may not fit this \
         prompt; --require-anchor makes this an error"
    );
}

/// Tells stderr of the output's text that no region claimed (templates
/// without an implicit field drop it): whitespace between regions aside,
/// each run with its offset and its first line.
fn warn_unclaimed(unclaimed: &[retort::Unclaimed]) {
    for u in unclaimed.iter().filter(|u| u.is_significant()) {
        let first = u.text.trim().lines().next().unwrap_or_default();
        let shown: String = first.chars().take(80).collect();
        let more = if shown.len() < u.text.trim().len() {
            " …"
        } else {
            ""
        };
        let place = match u.after_end {
            true => "follow the end of the turn",
            false => "are in no region",
        };
        eprintln!(
            "retort: warning: {} bytes at byte {} {place} and are not in the message: {shown:?}{more}",
            u.text.len(),
            u.offset
        );
    }
}

/// Tells stderr of each value the template's semantics replaced.
fn warn_replaced(replaced: &[retort::Replaced]) {
    for r in replaced {
        eprintln!(
            "retort: warning: `{}` was written again at byte {}: the message keeps the last value \
             (the reference's semantics; an earlier one was dropped)",
            r.field, r.offset
        );
    }
}
