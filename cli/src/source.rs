//! Where a template comes from: a file (a bare response template or a
//! `tokenizer_config.json`), or a model family bundled with the `retort`
//! crate, named by its name or a Hugging Face repo id.

use crate::Failure;
use retort::registry::{self, Family};
use retort::template::Rule;
use retort::{Template, TemplateError};
use std::path::Path;

/// A template's text and how to name it in messages.
pub struct Source {
    /// The path as given, or `NAME (bundled)`.
    pub display: String,
    /// The name a module generated from it gets by default (the file stem,
    /// or the family's name).
    pub stem: String,
    /// The JSON text.
    pub text: String,
    /// Set for a file: where `file:line:column` points.
    file: Option<String>,
}

/// Finds `arg`: an existing file first, then a bundled family by name or
/// Hugging Face repo id.
pub fn resolve(arg: &str) -> Result<Source, Failure> {
    let path = Path::new(arg);
    if path.exists() {
        // The loader refuses text past its limit; do not read a huge file
        // into memory only to be told so.
        let limit = retort::template::MAX_TEMPLATE_BYTES;
        if let Ok(meta) = std::fs::metadata(path)
            && meta.len() > limit as u64
        {
            return Err(Failure::Io(format!(
                "{arg}: {} bytes is more than a template may be ({limit} bytes)",
                meta.len()
            )));
        }
        let text = std::fs::read_to_string(path).map_err(|e| Failure::Io(format!("{arg}: {e}")))?;
        let stem = |p: &Path| {
            p.file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or("template")
                .to_owned()
        };
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
            file: Some(arg.to_owned()),
        });
    }
    match registry::resolve(arg) {
        Ok(family) => Ok(Source::bundled(family)),
        Err(e) => Err(Failure::Io(format!("{arg}: no such file, and {e}"))),
    }
}

impl Source {
    fn bundled(family: &Family) -> Source {
        Source {
            display: format!("{} (bundled)", family.name()),
            stem: family.name().to_owned(),
            text: family.json().to_owned(),
            file: None,
        }
    }

    /// Loads the template; a broken one is reported on stderr (rule, JSON
    /// path, line:column and snippet) and fails with [`Failure::Reported`].
    pub fn load(&self) -> Result<Template, Failure> {
        Template::from_json(&self.text).map_err(|e| {
            self.report(&e);
            if self.is_config_without_template(&e) {
                let hint = match registry::from_tokenizer_config(&self.text) {
                    Ok(registry::Resolved {
                        family: Some(f), ..
                    }) => format!(
                        "; its chat_template is that of the bundled `{0}` (`retort check {0}`)",
                        f.name()
                    ),
                    _ => String::new(),
                };
                eprintln!(
                    "note: this is a tokenizer_config.json without a `response_template`{hint}"
                );
            }
            Failure::Reported
        })
    }

    /// Like [`Source::load`], but a `tokenizer_config.json` without a
    /// response template falls back to the bundled family its chat template
    /// is recognised as (said on stderr).
    pub fn load_or_recognise(self) -> Result<(Source, Template), Failure> {
        match Template::from_json(&self.text) {
            Ok(t) => Ok((self, t)),
            Err(e) => {
                if self.is_config_without_template(&e)
                    && let Ok(registry::Resolved {
                        template,
                        family: Some(f),
                    }) = registry::from_tokenizer_config(&self.text)
                {
                    eprintln!(
                        "note: {} has no `response_template`; its chat_template is that of \
                         the bundled `{}`, whose template is used",
                        self.display,
                        f.name()
                    );
                    return Ok((Source::bundled(f), template));
                }
                // Reported as `load` reports it.
                self.load().map(|t| (self, t))
            }
        }
    }

    fn report(&self, e: &TemplateError) {
        let file = self
            .file
            .clone()
            .unwrap_or_else(|| format!("{}.json", self.stem));
        eprintln!("{}", retort_codegen::render(e, &self.text, &file));
    }

    /// A document with neither `fields` nor `response_template` but a
    /// `chat_template`: the template loader then complains about an
    /// unknown key, which would mislead.
    fn is_config_without_template(&self, e: &TemplateError) -> bool {
        if !matches!(e.rule, Rule::UnknownKey | Rule::NoFields) || e.path.contains('.') {
            return false;
        }
        let Ok(serde_json::Value::Object(doc)) = serde_json::from_str(&self.text) else {
            return false;
        };
        !doc.contains_key("fields")
            && !doc.contains_key("response_template")
            && doc.contains_key("chat_template")
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
