//! `retort render`: a chat template rendered as transformers renders it,
//! for people (one conversation) and for conformance runs (`--cases`).

use crate::Failure;
use retort::chat::{ChatTemplate, ChatTemplates, ContinueFinal, Limits, RenderInput};
use serde_json::{Map, Value as Json};
use std::io::Write;
use std::path::{Path, PathBuf};

/// What `retort render` was asked.
pub struct Options {
    /// A chat template: a `.jinja` file, a `tokenizer_config.json`, or a
    /// model directory holding one (with `chat_template.jinja` beside it).
    pub source: Option<PathBuf>,
    /// The case file for conformance runs (`-` for standard input).
    pub cases: Option<PathBuf>,
    /// The conversation: a JSON list of messages, or an object with
    /// `messages` (and optionally `tools`, `documents`).
    pub conversation: Option<PathBuf>,
    /// Tool definitions (a JSON list), replacing the conversation's.
    pub tools: Option<PathBuf>,
    /// Documents (a JSON list), replacing the conversation's.
    pub documents: Option<PathBuf>,
    /// `add_generation_prompt=True`.
    pub add_generation_prompt: bool,
    /// `continue_final_message`: `Some(None)` for `True`, `Some(field)`.
    pub continue_final_message: Option<Option<String>>,
    /// Extra template variables, `NAME=VALUE` (VALUE read as JSON when it
    /// is JSON, as a string otherwise).
    pub set: Vec<String>,
    /// The named template of a config that has several.
    pub name: Option<String>,
    /// Print `{"rendered", "generation"}` as JSON instead of the text.
    pub json: bool,
}

/// Runs the command.
pub fn run(o: Options) -> Result<(), Failure> {
    if let Some(cases) = &o.cases {
        return cases_run(cases);
    }
    let Some(source) = &o.source else {
        return Err(Failure::Io(
            "render: give a chat template (or --cases FILE)".into(),
        ));
    };
    let templates = load(source)?;
    let conversation = match &o.conversation {
        Some(path) => json_file(path)?,
        None => {
            return Err(Failure::Io(
                "render: give the conversation with --conversation FILE".into(),
            ));
        }
    };
    let (messages, mut tools, mut documents) = match conversation {
        Json::Array(messages) => (messages, None, None),
        Json::Object(mut o) => {
            let messages = match o.remove("messages") {
                Some(Json::Array(m)) => m,
                _ => {
                    return Err(Failure::Io(
                        "render: the conversation object has no `messages` list".into(),
                    ));
                }
            };
            (
                messages,
                list(o.remove("tools"))?,
                list(o.remove("documents"))?,
            )
        }
        _ => {
            return Err(Failure::Io(
                "render: the conversation is neither a list of messages nor an object with `messages`"
                    .into(),
            ));
        }
    };
    if let Some(path) = &o.tools {
        tools = list(Some(json_file(path)?))?;
    }
    if let Some(path) = &o.documents {
        documents = list(Some(json_file(path)?))?;
    }
    let mut input = RenderInput::new(messages);
    input.tools = tools;
    input.documents = documents;
    input.add_generation_prompt = o.add_generation_prompt;
    input.continue_final_message = match &o.continue_final_message {
        None => ContinueFinal::No,
        Some(None) => ContinueFinal::Content,
        Some(Some(field)) => ContinueFinal::Field(field.clone()),
    };
    input.kwargs = variables(&o.set)?;
    // The tokenizer's special tokens (`bos_token`, …) are variables of
    // every render, under the caller's.
    for (k, v) in templates.special_tokens() {
        input.kwargs.entry(k.clone()).or_insert_with(|| v.clone());
    }
    let template = templates
        .select(o.name.as_deref(), input.tools.is_some())
        .map_err(|e| {
            eprintln!("error: {e}");
            Failure::Reported
        })?;
    let rendered = template.render(&input).map_err(|e| {
        eprintln!("error: {}: {e}", e.python_type());
        Failure::Reported
    })?;
    let mut out = std::io::stdout().lock();
    let written = if o.json {
        let spans: Vec<Json> = rendered
            .generation
            .iter()
            .map(|s| serde_json::json!({"bytes": [s.bytes.start, s.bytes.end], "chars": [s.chars.start, s.chars.end]}))
            .collect();
        writeln!(
            out,
            "{}",
            serde_json::json!({"rendered": rendered.text, "generation": spans})
        )
    } else {
        out.write_all(rendered.text.as_bytes())
    };
    written
        .and_then(|()| out.flush())
        .map_err(|e| Failure::Io(format!("stdout: {e}")))
}

/// The conformance runner: one result line per case line, in order.
fn cases_run(path: &Path) -> Result<(), Failure> {
    let stdout = std::io::stdout();
    let out = std::io::BufWriter::new(stdout.lock());
    let done = if path == Path::new("-") {
        retort::chat::render_cases(std::io::stdin().lock(), out)
    } else {
        let file = std::fs::File::open(path)
            .map_err(|e| Failure::Io(format!("{}: {e}", path.display())))?;
        retort::chat::render_cases(std::io::BufReader::new(file), out)
    };
    done.map_err(|e| Failure::Io(format!("{}: {e}", path.display())))
}

/// A chat template from a `.jinja` file, a `tokenizer_config.json`, a
/// `chat_template.json`, or a model directory.
fn load(path: &Path) -> Result<ChatTemplates, Failure> {
    let limits = Limits::default();
    let loaded = if path.is_dir() {
        ChatTemplates::from_dir(path, limits)
    } else if path.extension().is_some_and(|e| e == "json") {
        ChatTemplates::from_file(path, limits)
    } else {
        let text = crate::read(path)?;
        ChatTemplate::with_limits(&text, limits).map(ChatTemplates::single)
    };
    loaded.map_err(|e| {
        eprintln!("error: {}: {e}", path.display());
        Failure::Reported
    })
}

fn json_file(path: &Path) -> Result<Json, Failure> {
    let text = crate::read(path)?;
    serde_json::from_str(&text)
        .map_err(|e| Failure::Io(format!("{}: not JSON: {e}", path.display())))
}

fn list(v: Option<Json>) -> Result<Option<Vec<Json>>, Failure> {
    match v {
        None | Some(Json::Null) => Ok(None),
        Some(Json::Array(items)) => Ok(Some(items)),
        Some(_) => Err(Failure::Io(
            "render: `tools` and `documents` must be JSON lists".into(),
        )),
    }
}

/// `NAME=VALUE` pairs: VALUE is JSON when it parses as JSON (`true`, `3`,
/// `"high"`), the text itself otherwise (`reasoning_effort=high`).
fn variables(set: &[String]) -> Result<Map<String, Json>, Failure> {
    let mut out = Map::new();
    for pair in set {
        let Some((name, value)) = pair.split_once('=') else {
            return Err(Failure::Io(format!("--set {pair}: expected NAME=VALUE")));
        };
        if name.is_empty() {
            return Err(Failure::Io(format!("--set {pair}: the name is empty")));
        }
        let value = serde_json::from_str(value).unwrap_or_else(|_| Json::String(value.to_owned()));
        out.insert(name.to_owned(), value);
    }
    Ok(out)
}
