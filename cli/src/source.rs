//! Where a template comes from: a file (a bare response template or a
//! `tokenizer_config.json`) or a model name bundled in the binary.

use crate::Failure;
use retort::template::Rule;
use retort::{Template, TemplateError};
use std::path::Path;

/// The templates of the workspace's `templates/` directory, by file stem.
pub const BUNDLED: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/bundled.rs"));

/// A template's text and how to name it in messages.
pub struct Source {
    /// The path as given, or `NAME (bundled)`.
    pub display: String,
    /// The name a module generated from it gets by default (the file stem).
    pub stem: String,
    /// The JSON text.
    pub text: String,
}

/// The names of the bundled templates, comma-separated.
pub fn bundled_names() -> String {
    let names: Vec<&str> = BUNDLED.iter().map(|(n, _)| *n).collect();
    if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(", ")
    }
}

/// Finds `arg`: an existing file first, then a bundled name.
pub fn resolve(arg: &str) -> Result<Source, Failure> {
    let path = Path::new(arg);
    let stem = |p: &Path| {
        p.file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("template")
            .to_owned()
    };
    if path.exists() {
        let text = std::fs::read_to_string(path).map_err(|e| Failure::Io(format!("{arg}: {e}")))?;
        let stem = match stem(path).as_str() {
            // A tokenizer config names the model by its directory.
            "tokenizer_config" => path
                .canonicalize()
                .ok()
                .and_then(|p| p.parent().map(stem))
                .unwrap_or_else(|| "template".to_owned()),
            s => s.to_owned(),
        };
        return Ok(Source {
            display: arg.to_owned(),
            stem,
            text,
        });
    }
    match BUNDLED.iter().find(|(name, _)| *name == arg) {
        Some((name, text)) => Ok(Source {
            display: format!("{name} (bundled)"),
            stem: (*name).to_owned(),
            text: (*text).to_owned(),
        }),
        None => Err(Failure::Io(format!(
            "{arg}: no such file, and no bundled template of that name (bundled: {})",
            bundled_names()
        ))),
    }
}

impl Source {
    /// Loads the template; a broken one is reported on stderr (rule, JSON
    /// path, line:column and snippet) and fails with [`Failure::Reported`].
    pub fn load(&self) -> Result<Template, Failure> {
        Template::from_json(&self.text).map_err(|e| {
            self.report(&e);
            Failure::Reported
        })
    }

    fn report(&self, e: &TemplateError) {
        eprintln!(
            "{}",
            retort_codegen::render(e, &self.text, &self.display_path())
        );
        if self.looks_like_config_without_template(e) {
            eprintln!(
                "note: this looks like a tokenizer_config.json without a `response_template` key; \
                 the model does not ship a response template"
            );
        }
    }

    /// The path part of [`Source::display`], for `file:line:column`.
    fn display_path(&self) -> String {
        self.display
            .strip_suffix(" (bundled)")
            .map_or_else(|| self.display.clone(), |n| format!("{n}.json"))
    }

    /// A document with neither `fields` nor `response_template` but keys a
    /// tokenizer config has: the template loader then complains about an
    /// unknown key, which would mislead.
    fn looks_like_config_without_template(&self, e: &TemplateError) -> bool {
        if !matches!(e.rule, Rule::UnknownKey | Rule::NoFields) || e.path.contains('.') {
            return false;
        }
        let Ok(serde_json::Value::Object(doc)) = serde_json::from_str(&self.text) else {
            return false;
        };
        !doc.contains_key("fields")
            && !doc.contains_key("response_template")
            && [
                "chat_template",
                "tokenizer_class",
                "model_max_length",
                "added_tokens_decoder",
            ]
            .iter()
            .any(|k| doc.contains_key(*k))
    }

    /// Whether the template sits under `response_template` (a tokenizer
    /// config): JSON paths then start with `response_template.`.
    pub fn wrapped(&self) -> bool {
        matches!(
            serde_json::from_str::<serde_json::Value>(&self.text),
            Ok(serde_json::Value::Object(doc))
                if !doc.contains_key("fields") && doc.contains_key("response_template")
        )
    }
}
