//! The terminal view: one block per region, its text streaming in as the
//! events arrive, word-wrapped under a header.

use std::io::{self, Write};

use retort::typed::REASONING_KEYS;
use retort::{Event, OwnedEvent, ToolCall, Value};

// ANSI styles (SGR sequences).
/// Back to the terminal's defaults.
pub const RESET: &str = "\x1b[0m";
/// Headers.
pub const BOLD: &str = "\x1b[1m";
/// Notes and the reasoning header.
pub const DIM: &str = "\x1b[2m";
/// Reasoning text.
pub const DIM_ITALIC: &str = "\x1b[2;3m";
/// Tool-call arguments as they stream.
pub const CYAN: &str = "\x1b[36m";
/// Tool names.
pub const YELLOW_BOLD: &str = "\x1b[1;33m";
/// Parsed tool calls.
pub const GREEN: &str = "\x1b[32m";
/// Tool-call headers.
pub const MAGENTA_BOLD: &str = "\x1b[1;35m";
/// The content header.
pub const BLUE_BOLD: &str = "\x1b[1;34m";

/// Region text is indented by this much under its header.
const INDENT: usize = 2;
/// A word is held back until it is complete, or until it is this long (a
/// long run without spaces, such as compact JSON, streams as it comes).
const HOLD: usize = 24;

/// What a field is, for showing it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Reasoning,
    Content,
    ToolCall,
    Other,
}

impl Kind {
    fn of(field: &str) -> Kind {
        if REASONING_KEYS.contains(&field) {
            Kind::Reasoning
        } else if field == "content" {
            Kind::Content
        } else if field == "tool_calls" {
            Kind::ToolCall
        } else {
            Kind::Other
        }
    }

    /// The style of the region's text.
    fn text_style(self) -> &'static str {
        match self {
            Kind::Reasoning => DIM_ITALIC,
            Kind::Content => "",
            Kind::ToolCall => CYAN,
            Kind::Other => "",
        }
    }

    /// The style of the region's header.
    fn header_style(self) -> &'static str {
        match self {
            Kind::Reasoning => DIM,
            Kind::Content => BLUE_BOLD,
            Kind::ToolCall => MAGENTA_BOLD,
            Kind::Other => BOLD,
        }
    }
}

/// The region being shown.
#[derive(Debug)]
struct Region {
    field: String,
    kind: Kind,
    /// Whether the header (and so the block) has been written. Text regions
    /// show it with their first visible character, so that a region that
    /// only ever receives whitespace leaves no empty block.
    shown: bool,
    /// Whether any of the region's text has been written.
    started: bool,
    /// Whitespace seen since the last word: written (as one space or as
    /// line breaks) only when another word follows.
    spaces: usize,
    newlines: usize,
    /// Whether the last thing written was part of a word (the next text, if
    /// it starts without whitespace, continues it).
    in_word: bool,
    /// The end of the text, when it is part of a word: held back until the
    /// word is complete, so that it can be wrapped whole.
    word: String,
}

/// Writes events to a terminal (or any writer).
pub struct Screen<'w> {
    out: &'w mut dyn Write,
    color: bool,
    width: usize,
    /// The column the cursor is at.
    col: usize,
    /// Whether any block has been written (blocks are separated by a blank
    /// line).
    blocks: usize,
    region: Option<Region>,
    tool_calls: usize,
}

/// The region a parser has open after a call and what its open delimiter
/// captured (a tool call's name and id, in most formats): the parser's
/// `open_region`, copied so the screen can use it while showing the
/// events of that call.
#[derive(Clone, Debug)]
pub struct OpenCaptures {
    /// The open region's field.
    pub field: String,
    /// The named groups of its open delimiter, in pattern order.
    pub captures: Vec<(String, String)>,
}

impl OpenCaptures {
    /// A copy of what `open_region` says.
    pub fn of(region: Option<retort::OpenRegion<'_>>) -> Option<OpenCaptures> {
        region.map(|r| OpenCaptures {
            field: r.field.to_owned(),
            captures: r.captures.to_vec(),
        })
    }
}

impl<'w> Screen<'w> {
    /// A screen on `out`, `width` columns wide, with ANSI colours or not.
    pub fn new(out: &'w mut dyn Write, color: bool, width: usize) -> Self {
        Screen {
            out,
            color,
            width: width.max(INDENT + 20),
            col: 0,
            blocks: 0,
            region: None,
            tool_calls: 0,
        }
    }

    /// Writes `text` in `style` (no style without colours).
    fn styled(&mut self, style: &str, text: &str) -> io::Result<()> {
        if self.color && !style.is_empty() {
            write!(self.out, "{style}{text}{RESET}")
        } else {
            self.out.write_all(text.as_bytes())
        }
    }

    /// A line of its own (a title, a status line).
    pub fn line(&mut self, style: &str, text: &str) -> io::Result<()> {
        self.end_line()?;
        self.styled(style, text)?;
        self.out.write_all(b"\n")?;
        self.col = 0;
        Ok(())
    }

    /// A dimmed line of its own, wrapped.
    pub fn note(&mut self, text: &str) -> io::Result<()> {
        self.end_line()?;
        self.wrapped(DIM, text)?;
        self.end_line()
    }

    /// A header line starting a new block.
    pub fn header(&mut self, text: &str) -> io::Result<()> {
        self.start_block()?;
        self.line(BOLD, text)
    }

    fn end_line(&mut self) -> io::Result<()> {
        if self.col > 0 {
            self.out.write_all(b"\n")?;
            self.col = 0;
        }
        Ok(())
    }

    /// Starts a block: a blank line after the previous one.
    pub fn start_block(&mut self) -> io::Result<()> {
        self.end_line()?;
        if self.blocks > 0 {
            self.out.write_all(b"\n")?;
        }
        self.blocks += 1;
        Ok(())
    }

    /// Flushes the writer (after each piece, so the text appears as it
    /// streams).
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// Shows the events of one call. `open` is the region the parser has
    /// open after the call: its captures belong to the call's last
    /// `region_open` (a region that opened and closed within the call shows
    /// its name at the close, with its value).
    pub fn events(&mut self, events: &[OwnedEvent], open: Option<&OpenCaptures>) -> io::Result<()> {
        let last_open = events
            .iter()
            .rposition(|e| matches!(e, OwnedEvent::RegionOpen { .. }));
        for (i, event) in events.iter().enumerate() {
            let captures = match (event, open) {
                (OwnedEvent::RegionOpen { field }, Some(o))
                    if Some(i) == last_open && *field == o.field =>
                {
                    o.captures.as_slice()
                }
                _ => &[],
            };
            self.event(event.as_event(), captures)?;
        }
        Ok(())
    }

    /// Shows one event; `captures` are its open delimiter's named groups
    /// when it is a `region_open` whose captures are known.
    pub fn event<F: AsRef<str>>(
        &mut self,
        event: Event<'_, F>,
        captures: &[(String, String)],
    ) -> io::Result<()> {
        match event {
            Event::RegionOpen { field } => self.open(field.as_ref(), captures),
            Event::RegionChunk { field, text, .. } => {
                if self.region.is_none() {
                    // The parser opens a region before its first chunk; this
                    // only keeps a chunk visible if that ever changes.
                    self.open(field.as_ref(), &[])?;
                }
                self.text(text)
            }
            Event::RegionClose { value, .. } => self.close(value),
            // Other kinds (lenient mode's reports) are not produced by the
            // strict parsers the demo runs.
            _ => Ok(()),
        }
    }

    fn open(&mut self, field: &str, captures: &[(String, String)]) -> io::Result<()> {
        let kind = Kind::of(field);
        let mut region = Region {
            field: field.to_owned(),
            kind,
            shown: false,
            started: false,
            spaces: 0,
            newlines: 0,
            in_word: false,
            word: String::new(),
        };
        if kind == Kind::ToolCall {
            // A tool call is shown at once, with whatever its opener told.
            self.tool_calls += 1;
            self.start_block()?;
            let title = format!("▸ tool call {}", self.tool_calls);
            self.styled(kind.header_style(), &title)?;
            self.col = title.chars().count();
            if let Some((_, name)) = captures.iter().find(|(k, _)| k == "name") {
                self.styled(YELLOW_BOLD, &format!("  {name}"))?;
            }
            for (key, text) in captures.iter().filter(|(k, _)| k != "name") {
                self.styled(DIM, &format!("  {key} {text}"))?;
            }
            self.out.write_all(b"\n")?;
            self.col = 0;
            region.shown = true;
        }
        self.region = Some(region);
        Ok(())
    }

    /// The header of a text region, written with its first visible
    /// character.
    fn show(&mut self) -> io::Result<()> {
        let Some(region) = &self.region else {
            return Ok(());
        };
        let (kind, title) = (region.kind, format!("▸ {}", region.field));
        self.start_block()?;
        self.line(kind.header_style(), &title)
    }

    fn text(&mut self, text: &str) -> io::Result<()> {
        let mut rest = text;
        while !rest.is_empty() {
            let ws = rest.len() - rest.trim_start().len();
            if ws > 0 {
                self.flush_word()?;
                let Some(region) = self.region.as_mut() else {
                    return Ok(());
                };
                for c in rest[..ws].chars() {
                    match c {
                        '\n' => region.newlines += 1,
                        _ => region.spaces += 1,
                    }
                }
                region.in_word = false;
                rest = &rest[ws..];
                continue;
            }
            let word_end = rest.find(char::is_whitespace).unwrap_or(rest.len());
            if let Some(region) = self.region.as_mut() {
                region.word.push_str(&rest[..word_end]);
            }
            rest = &rest[word_end..];
        }
        if self
            .region
            .as_ref()
            .is_some_and(|r| r.word.chars().count() >= HOLD)
        {
            self.flush_word()?;
        }
        Ok(())
    }

    /// Writes the word held so far.
    fn flush_word(&mut self) -> io::Result<()> {
        let Some(region) = self.region.as_mut() else {
            return Ok(());
        };
        if region.word.is_empty() {
            return Ok(());
        }
        let word = std::mem::take(&mut region.word);
        self.word(&word)
    }

    /// Writes a run of non-whitespace, after the whitespace before it.
    fn word(&mut self, word: &str) -> io::Result<()> {
        if self.region.as_ref().is_some_and(|r| !r.shown) {
            self.show()?;
        }
        let Some(region) = self.region.as_mut() else {
            return Ok(());
        };
        region.shown = true;
        let style = region.kind.text_style();
        let len = word.chars().count();
        let lead = if !region.started {
            // The first word of the block: leading whitespace is not shown.
            region.started = true;
            Lead::Indent
        } else if region.newlines > 0 {
            Lead::Lines(region.newlines.min(2))
        } else if region.in_word {
            Lead::Nothing
        } else if self.col + 1 + len > self.width {
            Lead::Lines(1)
        } else {
            Lead::Space
        };
        region.spaces = 0;
        region.newlines = 0;
        region.in_word = true;
        match lead {
            Lead::Indent => {}
            Lead::Nothing => {}
            Lead::Space => {
                self.out.write_all(b" ")?;
                self.col += 1;
            }
            Lead::Lines(n) => {
                for _ in 0..n {
                    self.out.write_all(b"\n")?;
                }
                self.col = 0;
            }
        }
        if self.col == 0 {
            write!(self.out, "{:INDENT$}", "")?;
            self.col = INDENT;
        }
        self.styled(style, word)?;
        self.col += len;
        Ok(())
    }

    fn close(&mut self, value: &Value) -> io::Result<()> {
        self.flush_word()?;
        let Some(region) = self.region.take() else {
            return Ok(());
        };
        if region.kind == Kind::ToolCall {
            // The parsed call(s): name and arguments as the message holds
            // them. Some formats put several calls in one region.
            self.end_line()?;
            let calls = ToolCall::all_in(value);
            if calls.is_empty() {
                self.start_line("✓ ")?;
                self.wrapped(GREEN, &value.to_json_string())?;
                self.end_line()?;
            }
            for call in calls {
                self.start_line("✓ ")?;
                self.styled(YELLOW_BOLD, &call.name)?;
                self.col += call.name.chars().count();
                self.wrapped(GREEN, &format!(" {}", call.arguments.to_json_string()))?;
                self.end_line()?;
            }
            self.col = 0;
        }
        Ok(())
    }

    /// Starts an indented line with a green mark.
    fn start_line(&mut self, mark: &str) -> io::Result<()> {
        self.end_line()?;
        write!(self.out, "{:INDENT$}", "")?;
        self.styled(GREEN, mark)?;
        self.col = INDENT + mark.chars().count();
        Ok(())
    }

    /// Writes `text` from the cursor, wrapped at spaces; continuation lines
    /// are indented twice.
    fn wrapped(&mut self, style: &str, text: &str) -> io::Result<()> {
        for (i, word) in text.split(' ').enumerate() {
            let len = word.chars().count();
            if i > 0 {
                if self.col + 1 + len > self.width {
                    write!(self.out, "\n{:1$}", "", 2 * INDENT)?;
                    self.col = 2 * INDENT;
                } else {
                    self.out.write_all(b" ")?;
                    self.col += 1;
                }
            }
            self.styled(style, word)?;
            self.col += len;
        }
        Ok(())
    }

    /// The message at the end, as pretty JSON.
    pub fn message(&mut self, title: &str, json: &str) -> io::Result<()> {
        self.header(title)?;
        self.out.write_all(json.as_bytes())?;
        self.out.write_all(b"\n")?;
        self.col = 0;
        Ok(())
    }

    /// Ends the last block.
    pub fn finish(&mut self) -> io::Result<()> {
        self.flush_word()?;
        self.end_line()?;
        self.region = None;
        Ok(())
    }
}

/// What goes before a word.
enum Lead {
    /// It starts the block: just the indentation.
    Indent,
    /// It continues the previous word.
    Nothing,
    Space,
    /// Line breaks (the model's, at most two; or one to wrap).
    Lines(usize),
}
