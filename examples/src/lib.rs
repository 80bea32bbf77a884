//! The retort demo: a model's generation replayed token by token through a
//! streaming parser, shown as it is parsed.
//!
//! By default the parser is compiled at build time from
//! `templates/kimi-k2.json` by `retort_codegen::Builder` (build.rs), and the
//! generation is a bundled Kimi-K2 answer in the model's own format: it
//! thinks, says a sentence, and calls two tools. With `--template FILE` (the
//! crate's `dynamic` feature) the template is loaded at run time instead
//! (`retort::Template::from_json`), with the generation from `--input FILE`.
//!
//! ```sh
//! cargo run --release --example stream
//! cargo run --release --features dynamic --example stream -- --template templates/glm-4.5.json \
//!     --input examples/data/glm-4.5.txt --prefix-file examples/data/glm-4.5.prompt.txt
//! ```
//!
//! Everything here goes through the `retort` facade: the typed parser the
//! macro generates, the run-time [`retort::Parser`], their events and the
//! model-agnostic [`retort::AssistantMessage`] view of the final message.
//! The time spent inside `feed`/`finalize` is measured apart from the time
//! spent showing the events and waiting between tokens.

#![warn(missing_docs)]

pub mod pieces;
pub mod screen;

use std::fmt;
use std::io::{self, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser as _;
#[cfg(feature = "dynamic")]
use retort::Template;
use retort::{AssistantMessage, OwnedEvent, ParseError, ToolCall, Value};

use crate::screen::OpenCaptures;
use crate::screen::Screen;

// -> mod kimi_k2, compiled by build.rs (retort_codegen::Builder).
include!(concat!(env!("OUT_DIR"), "/templates.rs"));

/// The bundled template's JSON.
pub const BUNDLED_TEMPLATE: &str = include_str!("../../templates/kimi-k2.json");
/// The prompt the bundled generation answers, ending with Kimi-K2's
/// generation prompt `<|im_assistant|>assistant<|im_middle|>`.
pub const BUNDLED_PROMPT: &str = include_str!("../data/kimi-k2.prompt.txt");
/// A Kimi-K2 generation: reasoning, a sentence, two tool calls.
pub const BUNDLED_GENERATION: &str = include_str!("../data/kimi-k2.txt");

/// Replays a model's generation through a retort parser, token by token,
/// showing reasoning, content and tool calls as they stream, then the final
/// message and the time spent parsing.
#[derive(clap::Parser, Debug, Clone)]
#[command(name = "stream", version)]
pub struct Options {
    /// Load this response template at run time (JSON: a bare template or a
    /// whole tokenizer_config.json) instead of the bundled Kimi-K2 one
    /// compiled by build.rs; needs --input and the `dynamic` feature.
    #[arg(long, value_name = "FILE", requires = "input")]
    pub template: Option<PathBuf>,
    /// The generation to replay, fed exactly as it is in the file (a final
    /// newline the model did not write is text too). Default: the bundled
    /// Kimi-K2 generation.
    #[arg(long, value_name = "FILE")]
    pub input: Option<PathBuf>,
    /// The prompt the generation followed (the parser's prefix; it is cut
    /// after the template's start anchor). Default: the bundled prompt for
    /// the bundled generation, "" for --input.
    #[arg(long, value_name = "TEXT", conflicts_with = "prefix_file")]
    pub prefix: Option<String>,
    /// Like --prefix, read from a file.
    #[arg(long, value_name = "FILE")]
    pub prefix_file: Option<PathBuf>,
    /// Feed pieces of N characters instead of token-like pieces.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub chunk: Option<u32>,
    /// Milliseconds to wait between pieces.
    #[arg(long, value_name = "MS", default_value_t = 30)]
    pub delay: u64,
    /// Wrap text at this column (default: $COLUMNS when exported, else 80).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(40..))]
    pub width: Option<u16>,
    /// Do not wait between pieces (for scripts and tests).
    #[arg(long)]
    pub no_delay: bool,
    /// No colours (they are also off when stdout is not a terminal or
    /// NO_COLOR is set).
    #[arg(long)]
    pub no_color: bool,
}

impl Options {
    /// Whether to colour output written to `stdout`: only on a terminal,
    /// and never with `--no-color` or a non-empty `NO_COLOR`
    /// (<https://no-color.org>).
    pub fn color(&self, stdout: &impl IsTerminal) -> bool {
        self.color_when(
            stdout.is_terminal(),
            std::env::var_os("NO_COLOR").as_deref(),
        )
    }

    /// [`Options::color`] given whether stdout is a terminal and the value
    /// of `NO_COLOR`.
    pub fn color_when(&self, terminal: bool, no_color: Option<&std::ffi::OsStr>) -> bool {
        terminal && !self.no_color && no_color.is_none_or(|v| v.is_empty())
    }
}

/// Why the demo stopped.
#[derive(Debug)]
pub enum DemoError {
    /// A file could not be read.
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        error: io::Error,
    },
    /// The template given is broken (or its JSON is).
    Template(String),
    /// The parser rejected the generation (a region that does not parse,
    /// a required field never written).
    Parse(ParseError),
    /// Writing the output failed.
    Write(io::Error),
}

impl fmt::Display for DemoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DemoError::Read { path, error } => write!(f, "cannot read {}: {error}", path.display()),
            DemoError::Template(why) => write!(f, "template: {why}"),
            DemoError::Parse(e) => write!(f, "parse error: {e}"),
            DemoError::Write(e) => write!(f, "cannot write the output: {e}"),
        }
    }
}

impl std::error::Error for DemoError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            DemoError::Read { error, .. } | DemoError::Write(error) => Some(error),
            DemoError::Parse(e) => Some(e),
            DemoError::Template(_) => None,
        }
    }
}

impl From<ParseError> for DemoError {
    fn from(e: ParseError) -> Self {
        DemoError::Parse(e)
    }
}

impl From<io::Error> for DemoError {
    fn from(e: io::Error) -> Self {
        DemoError::Write(e)
    }
}

/// What a run produced.
#[derive(Debug, Clone)]
pub struct Summary {
    /// The final message, as the reference's dict.
    pub message: Value,
    /// Its tool calls, read through [`AssistantMessage::tool_calls`].
    pub tool_calls: Vec<ToolCall>,
    /// Bytes of generation fed.
    pub bytes: usize,
    /// Pieces fed.
    pub pieces: usize,
    /// Time spent inside the parser's `feed` and `finalize` calls.
    pub parse_time: Duration,
    /// Time it took to make the parser (which reads the prompt; the first
    /// compiled parser of a process also puts its template together).
    pub setup_time: Duration,
    /// Time from making the parser to the end of the output.
    pub wall_time: Duration,
}

/// A parser the demo can drive: the compiled one or the run-time one.
/// Each call times the parser alone and shows the events afterwards.
trait Session {
    /// The events the prompt produced.
    fn initial_events(&self) -> &[OwnedEvent];
    /// What the delimiter of the region open now captured.
    fn open_captures(&self) -> Option<OpenCaptures>;
    /// Feeds one piece.
    fn feed_piece(
        &mut self,
        piece: &str,
        clock: &mut Duration,
        screen: &mut Screen<'_>,
    ) -> Result<(), DemoError>;
    /// Ends the stream: the message and its JSON (as the reference's dict).
    fn finish(
        &mut self,
        clock: &mut Duration,
        screen: &mut Screen<'_>,
    ) -> Result<(Box<dyn AssistantMessage>, String), DemoError>;
}

impl Session for kimi_k2::Parser {
    fn initial_events(&self) -> &[OwnedEvent] {
        kimi_k2::Parser::initial_events(self)
    }

    fn open_captures(&self) -> Option<OpenCaptures> {
        OpenCaptures::of(self.engine().open_region())
    }

    fn feed_piece(
        &mut self,
        piece: &str,
        clock: &mut Duration,
        screen: &mut Screen<'_>,
    ) -> Result<(), DemoError> {
        let start = Instant::now();
        let events = self.feed(piece)?;
        *clock += start.elapsed();
        // Owned copies (the events borrow the parser), so that the parser
        // can then say what the open region's delimiter captured.
        let events = events.untyped().to_vec();
        let open = OpenCaptures::of(self.engine().open_region());
        screen.events(&events, open.as_ref())?;
        Ok(())
    }

    fn finish(
        &mut self,
        clock: &mut Duration,
        screen: &mut Screen<'_>,
    ) -> Result<(Box<dyn AssistantMessage>, String), DemoError> {
        let start = Instant::now();
        let (message, events) = self.finalize()?;
        *clock += start.elapsed();
        for event in events.iter() {
            screen.event(event, &[])?;
        }
        // `kimi_k2::Message` is a struct with one typed field per key; serde
        // writes the reference's dict with its keys in the struct's order
        // (the reference orders them by when each was first written).
        let json = serde_json::to_string_pretty(&message).map_err(io::Error::from)?;
        Ok((Box::new(message), json))
    }
}

#[cfg(feature = "dynamic")]
impl Session for retort::Parser<'_> {
    fn initial_events(&self) -> &[OwnedEvent] {
        retort::Parser::initial_events(self)
    }

    fn open_captures(&self) -> Option<OpenCaptures> {
        OpenCaptures::of(self.open_region())
    }

    fn feed_piece(
        &mut self,
        piece: &str,
        clock: &mut Duration,
        screen: &mut Screen<'_>,
    ) -> Result<(), DemoError> {
        let start = Instant::now();
        let events = self.feed(piece)?;
        *clock += start.elapsed();
        let events = events.to_vec();
        let open = OpenCaptures::of(self.open_region());
        screen.events(&events, open.as_ref())?;
        Ok(())
    }

    fn finish(
        &mut self,
        clock: &mut Duration,
        screen: &mut Screen<'_>,
    ) -> Result<(Box<dyn AssistantMessage>, String), DemoError> {
        let start = Instant::now();
        let (message, events) = self.finalize()?;
        *clock += start.elapsed();
        for event in events.iter() {
            screen.event(event, &[])?;
        }
        let json = serde_json::to_string_pretty(&message).map_err(io::Error::from)?;
        Ok((Box::new(message), json))
    }
}

fn read(path: &Path) -> Result<String, DemoError> {
    std::fs::read_to_string(path).map_err(|error| DemoError::Read {
        path: path.to_owned(),
        error,
    })
}

/// The column to wrap at: `--width`, else `COLUMNS` when the shell exports
/// it (never wider than 100: long lines of prose are hard to follow), else
/// 80.
fn width(options: &Options) -> usize {
    match options.width {
        Some(w) => usize::from(w),
        None => std::env::var("COLUMNS")
            .ok()
            .and_then(|c| c.parse::<usize>().ok())
            .unwrap_or(80)
            .clamp(40, 100),
    }
}

/// Runs the demo with `options`, writing to `out` (coloured or not).
pub fn run(options: &Options, out: &mut dyn Write, color: bool) -> Result<Summary, DemoError> {
    let generation = match &options.input {
        Some(path) => read(path)?,
        None => BUNDLED_GENERATION.to_owned(),
    };
    let prefix = match (&options.prefix, &options.prefix_file) {
        (Some(text), _) => text.clone(),
        (None, Some(path)) => read(path)?,
        (None, None) if options.input.is_none() => BUNDLED_PROMPT.to_owned(),
        (None, None) => String::new(),
    };
    let pieces = match options.chunk {
        Some(n) => pieces::by_chars(&generation, n as usize),
        None => pieces::token_like(&generation),
    };
    let delay = if options.no_delay {
        Duration::ZERO
    } else {
        Duration::from_millis(options.delay)
    };
    let how = match options.chunk {
        Some(n) => format!("pieces of {n} characters"),
        None => "token-like pieces".to_owned(),
    };

    match &options.template {
        None => {
            let mut screen = Screen::new(out, color, width(options));
            screen.header(
                "retort · Kimi-K2 · templates/kimi-k2.json compiled by retort_codegen::Builder",
            )?;
            if options.input.is_none()
                && let Some(question) = bundled_question(&prefix)
            {
                screen.note(&format!("user: {question}"))?;
            }
            screen.note(&format!(
                "replaying {} bytes as {} {how}",
                generation.len(),
                pieces.len()
            ))?;
            let wall = Instant::now();
            let mut parser = kimi_k2::Parser::new(&prefix)?;
            let setup = wall.elapsed();
            replay(
                &mut parser,
                &pieces,
                delay,
                (setup, wall),
                screen,
                "kimi_k2::Message",
            )
        }
        #[cfg(feature = "dynamic")]
        Some(path) => {
            let json = read(path)?;
            let template = Template::from_json(&json)
                .map_err(|e| DemoError::Template(format!("{}: {e}", path.display())))?;
            let mut screen = Screen::new(out, color, width(options));
            screen.header(&format!(
                "retort · {} loaded at run time by Template::from_json",
                path.display()
            ))?;
            screen.note(&format!(
                "replaying {} bytes as {} {how}",
                generation.len(),
                pieces.len()
            ))?;
            let wall = Instant::now();
            let mut parser = template.parser(&prefix)?;
            let setup = wall.elapsed();
            replay(
                &mut parser,
                &pieces,
                delay,
                (setup, wall),
                screen,
                "retort::Map",
            )
        }
        #[cfg(not(feature = "dynamic"))]
        Some(path) => Err(DemoError::Template(format!(
            "{}: this demo was built without run-time templates; rebuild it with `--features dynamic`",
            path.display()
        ))),
    }
}

/// The user's last message in a Kimi-K2 prompt, to show what the bundled
/// generation answers.
fn bundled_question(prompt: &str) -> Option<&str> {
    let (_, turn) = prompt.rsplit_once("<|im_user|>user<|im_middle|>")?;
    turn.split("<|im_end|>").next()
}

/// Feeds `pieces` one by one, showing the events, then the message and the
/// timing line. `setup` is the time it took to make the parser (which
/// reads the prompt), `wall` when the wall clock started.
fn replay(
    session: &mut dyn Session,
    pieces: &[&str],
    delay: Duration,
    (setup, wall): (Duration, Instant),
    mut screen: Screen<'_>,
    message_type: &str,
) -> Result<Summary, DemoError> {
    let mut clock = Duration::ZERO;
    screen.events(session.initial_events(), session.open_captures().as_ref())?;
    for piece in pieces {
        session.feed_piece(piece, &mut clock, &mut screen)?;
        screen.flush()?;
        if !delay.is_zero() {
            std::thread::sleep(delay);
        }
    }
    let (message, json) = session.finish(&mut clock, &mut screen)?;
    screen.finish()?;
    screen.message(&format!("final message ({message_type}, as JSON)"), &json)?;
    let bytes = pieces.iter().map(|p| p.len()).sum();
    let wall_time = wall.elapsed();
    let tool_calls = message.tool_calls();
    screen.start_block()?;
    screen.line(
        screen::DIM,
        &format!(
            "parse {} in feed + finalize (+ {} new) · wall {} · {bytes} bytes, {} piece{}",
            human(clock),
            human(setup),
            human(wall_time),
            pieces.len(),
            if pieces.len() == 1 { "" } else { "s" },
        ),
    )?;
    screen.flush()?;
    Ok(Summary {
        message: message.to_value(),
        tool_calls,
        bytes,
        pieces: pieces.len(),
        parse_time: clock,
        setup_time: setup,
        wall_time,
    })
}

/// A duration in the unit that suits it.
fn human(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s >= 1.0 {
        format!("{s:.2} s")
    } else if s >= 1e-3 {
        format!("{:.2} ms", s * 1e3)
    } else {
        format!("{:.1} µs", s * 1e6)
    }
}

/// The demo's `main`: parses the arguments, runs, reports an error on
/// stderr (exit status 1; 2 for bad arguments).
pub fn main() -> ExitCode {
    let options = Options::parse();
    let stdout = io::stdout();
    let color = options.color(&stdout);
    let mut out = io::BufWriter::new(stdout.lock());
    match run(&options, &mut out, color) {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            let _ = out.flush();
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
