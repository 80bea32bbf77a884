//! `retort`: check response templates, parse model output with them, show
//! what they compile to, and run conformance vectors.
//!
//! Exit codes: 0 success, 1 a bad template or bad model output (reported on
//! stderr with where and why), 2 a usage or I/O error.

mod explain;
mod parse;
mod render;
mod source;

use clap::{Parser as ClapParser, Subcommand};
use retort::py::json_loads_with_depth;
use retort::value::NonFinite;
use retort::{Template, Value};
use source::Source;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Why a command did not succeed, which decides the exit code.
#[derive(Debug)]
pub enum Failure {
    /// A usage or I/O problem (exit 2); the message is printed by `main`.
    Io(String),
    /// A bad template or bad model output (exit 1), already reported on
    /// stderr.
    Reported,
}

const TEMPLATE_ARG: &str = "A template file (a bare response template or a \
    tokenizer_config.json), or a bundled model family by name (qwen3, smollm3, ...) or \
    Hugging Face repo id (Qwen/Qwen3-8B)";

#[derive(ClapParser)]
#[command(
    name = "retort",
    version,
    about = "Streaming, typed parsers for chat-model output, driven by response templates",
    after_help = "Examples:\n  \
        retort check templates/qwen3.json\n  \
        printf '<think>hm</think>Hi!<|im_end|>' | retort parse qwen3\n  \
        retort parse -t qwen3 output.txt\n  \
        retort explain qwen3\n\n\
        Exit codes: 0 success, 1 bad template or bad model output, 2 usage or I/O error."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Validates a template; with --verbose, shows how each delimiter is
    /// matched and the size of its automata.
    #[command(after_help = "Examples:\n  \
        retort check templates/qwen3.json\n  \
        retort check --verbose path/to/tokenizer_config.json\n  \
        retort check -v smollm3\n\n\
        A broken template prints the rule it breaks, its JSON path and\n\
        file:line:column with a snippet.\n\n\
        Exit codes: 0 valid, 1 bad template, 2 usage or I/O error.")]
    Check {
        #[arg(help = TEMPLATE_ARG)]
        template: String,
        /// Show each delimiter's matching path (literal, DFA, backtracking)
        /// and automaton sizes.
        #[arg(long, short)]
        verbose: bool,
    },
    /// Parses a model's output: prints the message as JSON, or with
    /// --stream the events as JSON lines as they happen.
    #[command(after_help = "Examples:\n  \
        printf '<think>hm</think>Hi!<|im_end|>' | retort parse qwen3\n  \
        retort parse -t qwen3 output.txt\n  \
        retort parse templates/smollm3.json output.txt --prefix-file prompt.txt\n  \
        retort parse qwen3 output.txt --stream --chunk 4\n  \
        retort parse qwen3 output.txt --tools tools.json\n\n\
        --stream prints one JSON object per line: the events\n\
        ({\"type\": \"region_open\" | \"region_chunk\" | \"region_close\", ...}) as the\n\
        input arrives, then {\"type\": \"message\", \"message\": {...}}, or on bad\n\
        model output {\"type\": \"error\", \"error\": {...}}. Standard input is parsed as\n\
        it arrives.\n\n\
        Bad model output (a region that does not parse, a required field never\n\
        written) is reported on stderr with the field, the offset and the raw\n\
        text of the region, and what was parsed before it.\n\n\
        Exit codes: 0 parsed, 1 bad template or bad model output, 2 usage or I/O error.")]
    Parse {
        /// The template, when given as an option; then the only positional
        /// argument is the input.
        #[arg(short = 't', long = "template", value_name = "TEMPLATE")]
        template_opt: Option<String>,
        /// TEMPLATE (unless given with -t) and then the model's output file
        /// (default: standard input).
        #[arg(value_names = ["TEMPLATE", "INPUT"], num_args = 0..=2)]
        positional: Vec<String>,
        /// Print events as JSON lines as they happen, then the message.
        #[arg(long)]
        stream: bool,
        /// Feed the input in pieces of this many characters (default: as it
        /// is read).
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
        chunk: Option<u64>,
        /// The prompt that preceded the output (default: none). Chat
        /// templates often open a region in the prompt (`<think>`).
        #[arg(long)]
        prefix: Option<String>,
        /// Read the prompt from this file instead.
        #[arg(long, conflicts_with = "prefix")]
        prefix_file: Option<PathBuf>,
        /// Tool definitions (a JSON list, OpenAI style): tool-call arguments
        /// are cast to the declared parameter types.
        #[arg(long)]
        tools: Option<PathBuf>,
        /// Print OpenAI `chat.completion.chunk` objects as JSON lines (the
        /// chunks `retort::openai` gives for this chunking), ending with the
        /// one that carries `finish_reason`.
        #[arg(long, conflicts_with = "stream")]
        openai: bool,
        /// Lenient mode: a region that does not parse (bad JSON, a missing
        /// required field, ...) is reported — a `region_malformed` event with
        /// its raw text under --stream, a warning on stderr — and parsing
        /// goes on with the next delimiter, instead of stopping with an error.
        #[arg(long, conflicts_with = "openai")]
        lenient: bool,
        /// A prompt (--prefix, --prefix-file) that does not contain the
        /// template's start anchor is an error (exit 1) instead of a warning
        /// on stderr: without the anchor the whole prompt is parsed as output.
        #[arg(long)]
        require_anchor: bool,
        /// Where the reasoning goes: `auto` (the default) splits it out
        /// into `reasoning_content`; `none` keeps it inline in `content`,
        /// delimiters included, where the model wrote it (llama.cpp's
        /// `--reasoning-format none`).
        #[arg(long, value_name = "FORMAT", default_value = "auto")]
        reasoning_format: retort::ReasoningFormat,
    },
    /// Prints the Rust module that `response_template!` generates for a
    /// template, formatted.
    #[command(after_help = "Examples:\n  \
        retort gen templates/qwen3.json\n  \
        retort gen qwen3 --name qwen --out src/qwen.rs\n\n\
        The module refers to the runtime as `::retort` (see --crate).\n\n\
        Exit codes: 0 written, 1 bad template, 2 usage or I/O error.")]
    Gen {
        #[arg(help = TEMPLATE_ARG)]
        template: String,
        /// Write the module to this file instead of standard output.
        #[arg(long, short)]
        out: Option<PathBuf>,
        /// The module's name (default: from the file name, e.g. `qwen3_coder`).
        #[arg(long)]
        name: Option<String>,
        /// The path of the runtime crate in the generated code.
        #[arg(long = "crate", default_value = "::retort")]
        crate_path: String,
    },
    /// Explains a template in words: its fields, what opens and closes each,
    /// how regions are parsed, and what a stream holds back and why.
    #[command(after_help = "Examples:\n  \
        retort explain qwen3\n  \
        retort explain path/to/tokenizer_config.json\n\n\
        Exit codes: 0 explained, 1 bad template, 2 usage or I/O error.")]
    Explain {
        #[arg(help = TEMPLATE_ARG)]
        template: String,
    },
    /// Renders a chat template as transformers 5.23.0 renders it: the
    /// prompt for a conversation, or (with --cases) a file of conformance
    /// cases, one result line each.
    #[command(after_help = "Examples:\n  \
        retort render chat_template.jinja --conversation chat.json --add-generation-prompt\n  \
        retort render path/to/tokenizer_config.json --conversation chat.json --set enable_thinking=false\n  \
        retort render path/to/model-dir --conversation chat.json --tools tools.json\n  \
        retort render --cases tests/conformance/chat/cases.jsonl > results.jsonl\n\n\
        CHAT_TEMPLATE is a .jinja file, a tokenizer_config.json (its chat_template, a\n\
        string or named templates; its special tokens are variables), a\n\
        chat_template.json, or a model directory holding them. The conversation is a\n\
        JSON list of messages, or {\"messages\": [...], \"tools\": [...], \"documents\": [...]}.\n\
        --set NAME=VALUE reads VALUE as JSON where it is JSON (true, 3), as text otherwise.\n\n\
        Case lines: {\"id\", \"chat_template\", \"messages\", \"tools\", \"documents\",\n\
        \"add_generation_prompt\", \"continue_final_message\", \"kwargs\"}; result lines\n\
        {\"id\", \"rendered\", \"generation\"} or {\"id\", \"error\": {\"type\", \"message\"}},\n\
        in input order (strftime_now reads 2026-01-01 00:00:00).\n\n\
        Exit codes: 0 rendered, 1 the template failed (its error on stderr), 2 usage or I/O error.")]
    Render {
        /// The chat template (not with --cases).
        #[arg(value_name = "CHAT_TEMPLATE", required_unless_present = "cases")]
        source: Option<PathBuf>,
        /// A conformance case file (`-`: standard input).
        #[arg(long, conflicts_with_all = ["source", "conversation"])]
        cases: Option<PathBuf>,
        /// The conversation (JSON).
        #[arg(long, required_unless_present = "cases")]
        conversation: Option<PathBuf>,
        /// Tool definitions (a JSON list, OpenAI style).
        #[arg(long)]
        tools: Option<PathBuf>,
        /// Documents (a JSON list).
        #[arg(long)]
        documents: Option<PathBuf>,
        /// End with the generation prompt (the assistant turn's header).
        #[arg(long)]
        add_generation_prompt: bool,
        /// Leave the last message open, to be continued: its `content`, or
        /// the field given (`--continue-final-message=reasoning_content`).
        #[arg(long, num_args = 0..=1, default_missing_value = "", value_name = "FIELD")]
        continue_final_message: Option<String>,
        /// A template variable: NAME=VALUE (repeatable).
        #[arg(long = "set", value_name = "NAME=VALUE")]
        set: Vec<String>,
        /// The named template of a config with several (`tool_use`, ...).
        #[arg(long)]
        name: Option<String>,
        /// Print {"rendered", "generation": [{"bytes", "chars"}]} as JSON:
        /// the text and the spans of `{% generation %}` blocks.
        #[arg(long)]
        json: bool,
    },
    /// Runs conformance cases and prints one result line per case.
    #[command(after_help = "Example:\n  \
        retort conformance ../shared/conformance/cases/gen.jsonl \\\n      \
        --templates ../shared/conformance/templates > gen.results.jsonl\n\n\
        Cases whose parse fails are results, not failures: the runner exits 0.\n\n\
        Exit codes: 0 ran, 2 usage or I/O error (or a malformed case).")]
    Conformance {
        /// A case file (JSON lines, see the conformance format).
        cases: PathBuf,
        /// Where templates named by cases live.
        #[arg(long, default_value = "tests/conformance/templates")]
        templates: PathBuf,
    },
}

fn main() -> ExitCode {
    restore_sigpipe();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Check { template, verbose } => check(&template, verbose),
        Command::Parse {
            template_opt,
            positional,
            stream,
            chunk,
            prefix,
            prefix_file,
            tools,
            openai,
            lenient,
            require_anchor,
            reasoning_format,
        } => match parse_operands(template_opt, positional) {
            Ok((template, input)) => parse::run(parse::Options {
                template,
                input,
                stream,
                chunk: chunk.map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
                prefix,
                prefix_file,
                tools,
                openai,
                lenient,
                require_anchor,
                reasoning_format,
            }),
            Err(e) => e.exit(),
        },
        Command::Gen {
            template,
            out,
            name,
            crate_path,
        } => generate(&template, out.as_deref(), name, crate_path),
        Command::Explain { template } => explain(&template),
        Command::Conformance { cases, templates } => conformance(&cases, &templates),
        Command::Render {
            source,
            cases,
            conversation,
            tools,
            documents,
            add_generation_prompt,
            continue_final_message,
            set,
            name,
            json,
        } => render::run(render::Options {
            source,
            cases,
            conversation,
            tools,
            documents,
            add_generation_prompt,
            continue_final_message: continue_final_message.map(|f| (!f.is_empty()).then_some(f)),
            set,
            name,
            json,
        }),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Reported) => ExitCode::from(1),
        Err(Failure::Io(message)) => {
            eprintln!("retort: {message}");
            ExitCode::from(2)
        }
    }
}

/// Reads a file, naming it in the error.
pub fn read(path: &Path) -> Result<String, Failure> {
    std::fs::read_to_string(path).map_err(|e| Failure::Io(format!("{}: {e}", path.display())))
}

/// The template for `check`: exactly the file or family named.
fn load(arg: &str) -> Result<(Source, Template), Failure> {
    let source = source::resolve(arg)?;
    let template = source.load()?;
    Ok((source, template))
}

fn check(arg: &str, verbose: bool) -> Result<(), Failure> {
    let (source, t) = load(arg)?;
    let names: Vec<&str> = t.fields().iter().map(|f| f.name.as_str()).collect();
    println!(
        "{}: ok ({} field{}: {})",
        source.display,
        names.len(),
        if names.len() == 1 { "" } else { "s" },
        names.join(", ")
    );
    let d = t.describe();
    let base = if source.wrapped() {
        "response_template."
    } else {
        ""
    };
    for w in explain::deferred_problems(&d, base) {
        println!("warning: {w}");
    }
    if verbose {
        print!("{}", explain::delimiter_report(&d, base));
        println!("compiled parser (`retort gen`, response_template!), per state:");
        for s in retort_codegen::machine::plan(&t) {
            println!(
                "  {:<36} {}{}",
                s.name,
                s.search(),
                if s.quick_test {
                    "; quick-path test generated"
                } else {
                    ""
                }
            );
        }
        // Where a delimiter has groups, how a settled match's groups are
        // read.
        for f in t.fields() {
            for (which, i) in [("open_pattern", f.open), ("close_pattern", f.close)] {
                let Some(i) = i else { continue };
                let delim = t.delimiter(i as usize);
                if !delim.needs_regex_at_commit || delim.regex.group_count() == 0 {
                    continue;
                }
                let key = format!("{base}fields.{}.{which}", f.name);
                let how = if retort_codegen::machine::captures_generated(delim) {
                    "groups read off automaton pieces by generated code (the backtracking matcher where the pieces cannot tell)"
                } else {
                    "groups taken by the backtracking matcher"
                };
                println!("  {key:<36} {how}");
            }
        }
        // Where a field has a transform, what builds its values.
        for (i, built) in retort_codegen::regions::plan(&t) {
            let key = format!("{base}fields.{}.transform", t.fields()[i].name);
            match built {
                Ok(built) => {
                    let from = match &built.entries {
                        Some(keys) => format!(
                            ", from the entries {} of the region's JSON object without building the object",
                            keys.iter()
                                .map(|k| format!("`{k}`"))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                        None => String::new(),
                    };
                    println!(
                        "  {key:<36} built as `{}` by generated code{from} (the engine's transform with `tools=` coercion, or for a region whose group took no part or whose list has an element without an entry it names)",
                        built.item
                    );
                }
                Err(why) => println!("  {key:<36} the engine's transform: {why}"),
            }
        }
    } else if !d.linear {
        println!(
            "note: some delimiters use the backtracking path (not linear-time); \
             --verbose says which"
        );
    }
    Ok(())
}

/// Rust ignores SIGPIPE, so writing to a closed pipe (`retort gen … | head`)
/// makes `println!` panic. Restoring the default action ends the process
/// quietly instead, as other command-line tools end.
fn restore_sigpipe() {
    #[cfg(unix)]
    // SAFETY: called first thing in `main`, before any thread exists;
    // `signal` with `SIG_DFL` only resets the disposition of SIGPIPE.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

fn explain(arg: &str) -> Result<(), Failure> {
    let (source, t) = source::resolve(arg)?.load_or_recognise()?;
    print!("{}", explain::explain(&source.display, &t));
    Ok(())
}

fn generate(
    arg: &str,
    out: Option<&Path>,
    name: Option<String>,
    crate_path: String,
) -> Result<(), Failure> {
    // Validate first, so that a broken template gets the same report as
    // `check`.
    let (source, _) = source::resolve(arg)?.load_or_recognise()?;
    let opts = retort_codegen::ModuleOptions {
        name: name.unwrap_or_else(|| retort_codegen::module_name(&source.stem)),
        crate_path,
        display_path: source.display.clone(),
        track_path: None,
    };
    let tokens = retort_codegen::compile_module(&source.text, &opts).map_err(|e| {
        eprintln!("{e}");
        Failure::Reported
    })?;
    let code = retort_codegen::format(&tokens).map_err(|e| {
        eprintln!("error: {e}");
        Failure::Reported
    })?;
    match out {
        Some(path) => {
            std::fs::write(path, code).map_err(|e| Failure::Io(format!("{}: {e}", path.display())))
        }
        None => std::io::stdout()
            .lock()
            .write_all(code.as_bytes())
            .map_err(|e| Failure::Io(format!("stdout: {e}"))),
    }
}

// ----- conformance -----------------------------------------------------------

fn conformance(cases: &Path, templates: &Path) -> Result<(), Failure> {
    let io = |e: std::io::Error| Failure::Io(format!("{}: {e}", cases.display()));
    let file = std::fs::File::open(cases).map_err(io)?;
    let out = std::io::stdout();
    let mut out = std::io::BufWriter::new(out.lock());
    for (n, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line.map_err(io)?;
        if line.trim().is_empty() {
            continue;
        }
        let at = |e: String| Failure::Io(format!("{}:{}: {e}", cases.display(), n + 1));
        // Vectors hold values as deep as the reference allowed: no depth limit.
        let case = json_loads_with_depth(&line, usize::MAX).map_err(|e| at(e.to_string()))?;
        let result = run_case(&case, templates).map_err(at)?;
        writeln!(out, "{result}").map_err(|e| Failure::Io(format!("stdout: {e}")))?;
    }
    out.flush().map_err(|e| Failure::Io(format!("stdout: {e}")))
}

/// Runs one case through the run-time parser: its result line.
fn run_case(case: &Value, templates: &Path) -> Result<String, String> {
    let load = |name: &str| {
        let path = templates.join(format!("{name}.json"));
        std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))
    };
    retort_conformance::run_case(case, &load).map(|r| retort_conformance::to_line(&r))
}

/// A value as JSON, with Python's spelling of non-finite floats.
pub fn json(v: &Value) -> String {
    let mut s = String::new();
    v.write_json(&mut s, NonFinite::Python);
    s
}

/// `parse`'s operands: the template comes from `-t` or is the first
/// positional argument (both forms are documented); the input follows.
fn parse_operands(
    template_opt: Option<String>,
    mut positional: Vec<String>,
) -> Result<(String, Option<PathBuf>), clap::Error> {
    use clap::CommandFactory;
    let usage = |message: &str| {
        let mut cmd = Cli::command();
        let sub = cmd.find_subcommand_mut("parse").map(|c| c.clone());
        sub.unwrap_or(cmd)
            .bin_name("retort parse")
            .error(clap::error::ErrorKind::WrongNumberOfValues, message)
    };
    match template_opt {
        Some(template) => match positional.len() {
            0 => Ok((template, None)),
            1 => Ok((template, positional.pop().map(PathBuf::from))),
            _ => Err(usage("with -t, give at most one INPUT")),
        },
        None => {
            if positional.is_empty() {
                return Err(usage("a TEMPLATE is required (positionally or with -t)"));
            }
            let template = positional.remove(0);
            Ok((template, positional.pop().map(PathBuf::from)))
        }
    }
}
