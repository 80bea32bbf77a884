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
    let mut input: Box<dyn Read> = match &o.input {
        Some(f) => Box::new(
            std::fs::File::open(f).map_err(|e| Failure::Io(format!("{}: {e}", f.display())))?,
        ),
        None => Box::new(std::io::stdin().lock()),
    };
    if o.openai {
        return openai_chunks(&template, &prefix, tools, &mut *input, o.chunk);
    }
    let mut run = Run {
        template: &template,
        prefix: &prefix,
        tools: tools.as_ref(),
        lenient: o.lenient,
        parser: None,
        stream: o.stream,
        out: std::io::BufWriter::new(std::io::stdout().lock()),
        closed: Vec::new(),
        open: None,
        prompt_kept: prompt_kept(&template, &prefix),
        seen: String::new(),
        pieces: Vec::new(),
    };
    match run.new_parser() {
        Ok(p) => run.parser = Some(p),
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
    parser: Option<Parser<'t>>,
    stream: bool,
    /// Written a feed at a time: events show as soon as the piece that
    /// produced them is parsed, without a write per event.
    out: std::io::BufWriter<std::io::StdoutLock<'static>>,
    /// The regions closed so far and their values, in order.
    closed: Vec<(String, Value)>,
    /// The region open now and the text it has received.
    open: Option<(String, String)>,
    /// Length of the prompt's part that the parser keeps (after the start
    /// anchor): error offsets count from its start.
    prompt_kept: usize,
    /// The output fed so far, and where each piece ended: a failed call
    /// returns no events, so they are recovered by replaying the pieces.
    seen: String,
    pieces: Vec<usize>,
}

impl<'t> Run<'t> {
    fn new_parser(&self) -> Result<Parser<'t>, ParseError> {
        let options = ParserOptions::new().lenient(self.lenient);
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
        match e {
            Event::RegionOpen { field } => self.open = Some(((*field).to_owned(), String::new())),
            Event::RegionChunk { text, .. } => {
                if let Some((_, body)) = &mut self.open {
                    body.push_str(text);
                }
            }
            Event::RegionClose { field, value } => {
                self.open = None;
                self.closed.push(((*field).to_owned(), (*value).clone()));
            }
            // A malformed region (lenient parsers) or a later kind: the
            // region is over, and its text is in the event.
            _ => self.open = None,
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
                drop(p);
                self.recover(&e);
                return Err(self.fail(&e, ""));
            }
        };
        self.pieces.push(self.seen.len());
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
        let mut from = 0;
        for &end in &self.pieces {
            if p.feed(&self.seen[from..end]).is_err() {
                return;
            }
            from = end;
        }
        let Some(rest) = self.seen.get(from..cut.min(self.seen.len())) else {
            return;
        };
        if rest.is_empty() {
            return;
        }
        let events: Vec<_> = match p.feed(rest) {
            Ok(events) => events.to_vec(),
            Err(_) => return,
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
        let message = match p.finalize() {
            Ok((message, events)) => {
                for e in events.iter() {
                    self.event(&e)?;
                }
                message
            }
            Err(e) => return Err(self.fail(&e, "at the end of the output")),
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
        let message = json(&Value::Map(message));
        if self.stream {
            self.line(&format!(
                "{{\"type\": \"message\", \"message\": {message}}}"
            ))?;
        } else {
            self.line(&message)?;
        }
        self.flush()
    }

    /// Reports bad model output: on stdout as the stream's last line, and
    /// on stderr for people, with what was parsed before it.
    fn fail(&mut self, e: &ParseError, when: &str) -> Failure {
        if self.stream {
            let mut err = Map::new();
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
        let mut report = String::from("error: bad model output: ");
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
    let Ok(re) = retort::pyre::Regex::new(&pattern) else {
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
) -> Result<(), Failure> {
    use retort::openai::{ChatCompletionChunk, ChunkStream, Error, Options};
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
        ..Options::deterministic()
    };
    let mut stream = ChunkStream::new(template, prefix, options).map_err(fail)?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut write = |chunks: Vec<ChatCompletionChunk>| -> Result<(), Failure> {
        for c in chunks {
            let line = serde_json::to_string(&c)
                .map_err(|e| Failure::Io(format!("writing a chunk: {e}")))?;
            writeln!(out, "{line}").map_err(|e| Failure::Io(format!("writing: {e}")))?;
        }
        out.flush()
            .map_err(|e| Failure::Io(format!("writing: {e}")))
    };
    pump(input, chunk, |piece| {
        write(stream.feed(piece).map_err(fail)?)
    })?;
    let (last, _) = stream.finalize(false).map_err(fail)?;
    write(last)
}
