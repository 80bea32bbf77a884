//! `retort`: check response templates, parse model output with them, and run
//! conformance vectors.

use clap::{Parser as ClapParser, Subcommand};
use retort::py::json_loads;
use retort::value::NonFinite;
use retort::{ParseError, Template, TemplateError, Value};
use std::io::{BufRead, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(ClapParser)]
#[command(
    name = "retort",
    version,
    about = "Streaming, typed parsers for chat-model output"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Validates a template (a bare response template or a tokenizer_config.json).
    Check {
        /// The template file.
        template: PathBuf,
    },
    /// Parses model output and prints the events and the message as JSON lines.
    Parse {
        /// The template file.
        #[arg(long, short)]
        template: PathBuf,
        /// The prompt that preceded the generation (default: none).
        #[arg(long)]
        prefix: Option<String>,
        /// Read the prompt from this file instead.
        #[arg(long, conflicts_with = "prefix")]
        prefix_file: Option<PathBuf>,
        /// Feed the input in chunks of this many characters (default: whole).
        #[arg(long)]
        chunk: Option<usize>,
        /// Tool definitions (a JSON file holding a list), to cast arguments.
        #[arg(long)]
        tools: Option<PathBuf>,
        /// The generation (default: standard input).
        input: Option<PathBuf>,
    },
    /// Runs conformance cases and prints one result line per case.
    Conformance {
        /// A case file (JSON lines, see the conformance format).
        cases: PathBuf,
        /// Where templates named by cases live.
        #[arg(long, default_value = "tests/conformance/templates")]
        templates: PathBuf,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Check { template } => check(&template),
        Command::Parse {
            template,
            prefix,
            prefix_file,
            chunk,
            tools,
            input,
        } => parse(&template, prefix, prefix_file, chunk, tools, input),
        Command::Conformance { cases, templates } => conformance(&cases, &templates),
    };
    match result {
        Ok(code) => code,
        Err(message) => {
            eprintln!("retort: {message}");
            ExitCode::from(2)
        }
    }
}

fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))
}

fn load_template(path: &Path) -> Result<(String, Result<Template, TemplateError>), String> {
    let text = read(path)?;
    let t = Template::from_json(&text);
    Ok((text, t))
}

fn report_template_error(path: &Path, text: &str, e: &TemplateError) {
    eprintln!("error: {}", e.message);
    let at = e.location.map(|l| format!(":{l}")).unwrap_or_default();
    eprintln!("  --> {}{at}", path.display());
    if !e.path.is_empty() {
        eprintln!("   = at {}", e.path);
    }
    if let Some(loc) = &e.location {
        for line in retort::template::snippet(text, loc).lines() {
            eprintln!("   | {line}");
        }
    }
    eprintln!("   = rule: {}", e.rule.describe());
}

fn check(path: &Path) -> Result<ExitCode, String> {
    let (text, t) = load_template(path)?;
    match t {
        Ok(t) => {
            let names: Vec<&str> = t.fields().iter().map(|f| f.name.as_str()).collect();
            println!(
                "{}: ok ({} fields: {})",
                path.display(),
                names.len(),
                names.join(", ")
            );
            if !t.is_linear() {
                println!("note: some delimiters use the backtracking path (not linear-time)");
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            report_template_error(path, &text, &e);
            Ok(ExitCode::FAILURE)
        }
    }
}

fn parse(
    template: &Path,
    prefix: Option<String>,
    prefix_file: Option<PathBuf>,
    chunk: Option<usize>,
    tools: Option<PathBuf>,
    input: Option<PathBuf>,
) -> Result<ExitCode, String> {
    let (text, t) = load_template(template)?;
    let t = match t {
        Ok(t) => t,
        Err(e) => {
            report_template_error(template, &text, &e);
            return Ok(ExitCode::FAILURE);
        }
    };
    let prefix = match (prefix, prefix_file) {
        (Some(p), _) => p,
        (None, Some(f)) => read(&f)?,
        (None, None) => String::new(),
    };
    let generation = match input {
        Some(f) => read(&f)?,
        None => {
            let mut s = String::new();
            std::io::stdin()
                .read_to_string(&mut s)
                .map_err(|e| format!("stdin: {e}"))?;
            s
        }
    };
    let tools = match tools {
        Some(f) => Some(json_loads(&read(&f)?).map_err(|e| format!("{}: {e}", f.display()))?),
        None => None,
    };
    let out = std::io::stdout();
    let mut out = out.lock();
    let mut emit = |line: String| writeln!(out, "{line}").map_err(|e| e.to_string());
    let fail = |e: ParseError| format!("parse error: {e}\nraw text: {:?}", e.raw);
    let mut p = match &tools {
        Some(tools) => t.parser_with_tools(&prefix, tools),
        None => t.parser(&prefix),
    }
    .map_err(fail)?;
    for e in p.initial_events() {
        emit(event_json(&e.as_event()))?;
    }
    let pieces: Vec<String> = match chunk {
        Some(n) if n > 0 => {
            let chars: Vec<char> = generation.chars().collect();
            chars.chunks(n).map(|c| c.iter().collect()).collect()
        }
        _ => vec![generation],
    };
    for piece in &pieces {
        let events = p.feed(piece).map_err(fail)?;
        for e in events.iter() {
            emit(event_json(&e))?;
        }
    }
    let (message, events) = p.finalize().map_err(fail)?;
    for e in events.iter() {
        emit(event_json(&e))?;
    }
    let mut line = String::from("{\"message\": ");
    Value::Map(message).write_json(&mut line, NonFinite::Python);
    line.push('}');
    emit(line)?;
    Ok(ExitCode::SUCCESS)
}

fn event_json(e: &retort::Event<'_>) -> String {
    let mut s = String::new();
    e.write_json(&mut s, NonFinite::Python);
    s
}

// ----- conformance -----------------------------------------------------------

fn conformance(cases: &Path, templates: &Path) -> Result<ExitCode, String> {
    let file = std::fs::File::open(cases).map_err(|e| format!("{}: {e}", cases.display()))?;
    let out = std::io::stdout();
    let mut out = std::io::BufWriter::new(out.lock());
    for (n, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|e| format!("{}: {e}", cases.display()))?;
        if line.trim().is_empty() {
            continue;
        }
        let case = json_loads(&line).map_err(|e| format!("{}:{}: {e}", cases.display(), n + 1))?;
        let result = run_cases(&case, templates)
            .map_err(|e| format!("{}:{}: {e}", cases.display(), n + 1))?;
        writeln!(out, "{result}").map_err(|e| e.to_string())?;
    }
    out.flush().map_err(|e| e.to_string())?;
    Ok(ExitCode::SUCCESS)
}

/// Runs a case file through the run-time parser, one result line per case.
fn run_cases(case: &Value, templates: &Path) -> Result<String, String> {
    let load = |name: &str| read(&templates.join(format!("{name}.json")));
    retort::conformance::run_case(case, &load).map(|r| retort::conformance::to_line(&r))
}
