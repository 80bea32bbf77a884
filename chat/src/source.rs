//! Where chat templates come from: a `.jinja` file, a
//! `tokenizer_config.json` (`chat_template` a string or a list of
//! `{"name", "template"}`), a processor's `chat_template.json`, or a model
//! directory holding those, `chat_template.jinja` and
//! `additional_chat_templates/*.jinja`; with the tokenizer's special tokens
//! (`bos_token`, `eos_token`, …), which transformers passes to every
//! render. [`ChatTemplates::select`] follows transformers'
//! `get_chat_template`.

use std::path::Path;

use indexmap::IndexMap;
use serde_json::{Map, Value as Json};

use crate::error::{ChatError, ChatErrorKind, RenderError};
use crate::input::{RenderInput, Rendered};
use crate::limits::Limits;
use crate::template::ChatTemplate;

/// The special tokens transformers passes to templates
/// (`SPECIAL_TOKENS_ATTRIBUTES`, the ones set).
const SPECIAL_TOKENS: [&str; 7] = [
    "bos_token",
    "eos_token",
    "unk_token",
    "sep_token",
    "pad_token",
    "cls_token",
    "mask_token",
];

/// A model's chat templates (one, or several by name) and the variables its
/// tokenizer passes them.
#[derive(Debug)]
pub struct ChatTemplates {
    templates: IndexMap<String, ChatTemplate>,
    /// Whether the model has a single unnamed template (transformers'
    /// `chat_template` is a string, not a dict).
    single: bool,
    special_tokens: Map<String, Json>,
}

fn config_error(message: impl Into<String>) -> ChatError {
    ChatError::new(ChatErrorKind::Config, message)
}

fn read(path: &Path) -> Result<String, ChatError> {
    std::fs::read_to_string(path)
        .map_err(|e| ChatError::new(ChatErrorKind::Io, format!("{}: {e}", path.display())))
}

/// A special token's text: a string, or an `AddedToken` object's `content`.
fn token_text(v: &Json) -> Option<String> {
    match v {
        Json::String(s) => Some(s.clone()),
        Json::Object(o) => o.get("content").and_then(Json::as_str).map(str::to_owned),
        _ => None,
    }
}

impl ChatTemplates {
    /// One template, no special tokens.
    pub fn single(template: ChatTemplate) -> ChatTemplates {
        let mut templates = IndexMap::new();
        templates.insert("default".to_owned(), template);
        ChatTemplates {
            templates,
            single: true,
            special_tokens: Map::new(),
        }
    }

    /// From the text of a `tokenizer_config.json`: its `chat_template` and
    /// special tokens.
    pub fn from_tokenizer_config(json: &str, limits: Limits) -> Result<ChatTemplates, ChatError> {
        let config: Json = serde_json::from_str(json)
            .map_err(|e| config_error(format!("tokenizer_config.json: {e}")))?;
        let mut set = ChatTemplates::from_config_value(&config, limits)?;
        set.special_tokens = special_tokens(&config);
        Ok(set)
    }

    fn from_config_value(config: &Json, limits: Limits) -> Result<ChatTemplates, ChatError> {
        let mut templates = IndexMap::new();
        let single = match config.get("chat_template") {
            Some(Json::String(s)) => {
                templates.insert("default".to_owned(), ChatTemplate::with_limits(s, limits)?);
                true
            }
            Some(Json::Array(list)) => {
                for entry in list {
                    let name = entry.get("name").and_then(Json::as_str);
                    let text = entry.get("template").and_then(Json::as_str);
                    let (Some(name), Some(text)) = (name, text) else {
                        return Err(config_error(
                            "chat_template: each entry needs a \"name\" and a \"template\"",
                        ));
                    };
                    templates.insert(name.to_owned(), ChatTemplate::with_limits(text, limits)?);
                }
                false
            }
            Some(Json::Object(map)) => {
                for (name, text) in map {
                    let Some(text) = text.as_str() else {
                        return Err(config_error("chat_template: templates must be strings"));
                    };
                    templates.insert(name.clone(), ChatTemplate::with_limits(text, limits)?);
                }
                false
            }
            Some(Json::Null) | None => true,
            Some(_) => return Err(config_error("chat_template must be a string or a list")),
        };
        Ok(ChatTemplates {
            templates,
            single,
            special_tokens: Map::new(),
        })
    }

    /// From a file: a `.jinja` template, a `tokenizer_config.json`, or a
    /// `chat_template.json` (`{"chat_template": "..."}`).
    pub fn from_file(path: &Path, limits: Limits) -> Result<ChatTemplates, ChatError> {
        let text = read(path)?;
        let is_json = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("json"));
        if !is_json {
            return Ok(ChatTemplates::single(ChatTemplate::with_limits(
                &text, limits,
            )?));
        }
        ChatTemplates::from_tokenizer_config(&text, limits)
    }

    /// From a model directory, with transformers' precedence: the
    /// `chat_template.jinja` file and `additional_chat_templates/*.jinja`
    /// (named by file) over a legacy `chat_template.json` over
    /// `tokenizer_config.json`'s `chat_template`. Special tokens from
    /// `tokenizer_config.json`, else `special_tokens_map.json`.
    pub fn from_dir(dir: &Path, limits: Limits) -> Result<ChatTemplates, ChatError> {
        let config_path = dir.join("tokenizer_config.json");
        let config: Json = if config_path.is_file() {
            serde_json::from_str(&read(&config_path)?)
                .map_err(|e| config_error(format!("tokenizer_config.json: {e}")))?
        } else {
            Json::Object(Map::new())
        };
        let mut special = special_tokens(&config);
        let map_path = dir.join("special_tokens_map.json");
        if map_path.is_file()
            && let Ok(map) = serde_json::from_str::<Json>(&read(&map_path)?)
        {
            for (k, v) in special_tokens(&map) {
                special.entry(k).or_insert(v);
            }
        }
        let mut files = IndexMap::new();
        let jinja = dir.join("chat_template.jinja");
        if jinja.is_file() {
            files.insert("default".to_owned(), read(&jinja)?);
        }
        let extra = dir.join("additional_chat_templates");
        if extra.is_dir() {
            let mut entries: Vec<_> = std::fs::read_dir(&extra)
                .map_err(|e| {
                    ChatError::new(ChatErrorKind::Io, format!("{}: {e}", extra.display()))
                })?
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "jinja"))
                .collect();
            entries.sort();
            for p in entries {
                if let Some(stem) = p.file_stem().and_then(|s| s.to_str()) {
                    files.insert(stem.to_owned(), read(&p)?);
                }
            }
        }
        let mut set = if !files.is_empty() {
            let single = files.len() == 1 && files.contains_key("default");
            let mut templates = IndexMap::new();
            for (name, text) in files {
                templates.insert(name, ChatTemplate::with_limits(&text, limits)?);
            }
            ChatTemplates {
                templates,
                single,
                special_tokens: Map::new(),
            }
        } else if dir.join("chat_template.json").is_file() {
            let legacy: Json = serde_json::from_str(&read(&dir.join("chat_template.json"))?)
                .map_err(|e| config_error(format!("chat_template.json: {e}")))?;
            ChatTemplates::from_config_value(&legacy, limits)?
        } else {
            ChatTemplates::from_config_value(&config, limits)?
        };
        set.special_tokens = special;
        Ok(set)
    }

    /// The template names (`"default"` for a single template).
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.templates.keys().map(String::as_str)
    }

    /// The special tokens passed to every render (`bos_token`, …).
    pub fn special_tokens(&self) -> &Map<String, Json> {
        &self.special_tokens
    }

    /// Sets (or replaces) a variable passed to every render by default.
    pub fn set_default(&mut self, name: &str, value: Json) {
        self.special_tokens.insert(name.to_owned(), value);
    }

    /// The template transformers' `get_chat_template` picks: the named one
    /// if `name` is given; otherwise `tool_use` when tools are given and
    /// there is one, else `default`; with several templates and no
    /// `default`, transformers' `ValueError`.
    pub fn select(
        &self,
        name: Option<&str>,
        tools_given: bool,
    ) -> Result<&ChatTemplate, ChatError> {
        if self.templates.is_empty() {
            return Err(ChatError::new(
                ChatErrorKind::Selection,
                "Cannot use chat template functions because tokenizer.chat_template is not set and no template argument was passed! For information about writing templates and setting the tokenizer.chat_template attribute, please see the documentation at https://huggingface.co/docs/transformers/main/en/chat_templating",
            ));
        }
        if let Some(name) = name {
            return self.templates.get(name).ok_or_else(|| {
                ChatError::new(
                    ChatErrorKind::Selection,
                    format!(
                        "no chat template named {name:?}; available: {:?}",
                        self.sorted_names()
                    ),
                )
            });
        }
        if self.single {
            return self.templates.get("default").ok_or_else(|| {
                ChatError::new(ChatErrorKind::Selection, "no default chat template")
            });
        }
        if tools_given && let Some(t) = self.templates.get("tool_use") {
            return Ok(t);
        }
        if let Some(t) = self.templates.get("default") {
            return Ok(t);
        }
        let names: Vec<String> = self
            .sorted_names()
            .iter()
            .map(|n| format!("'{n}'"))
            .collect();
        Err(ChatError::new(
            ChatErrorKind::Selection,
            format!(
                "This model has multiple chat templates with no default specified! Please either pass a chat template or the name of the template you wish to use to the `chat_template` argument. Available template names are [{}].",
                names.join(", ")
            ),
        ))
    }

    fn sorted_names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.names().collect();
        names.sort_unstable();
        names
    }

    /// Renders with the template [`select`](Self::select) picks for the
    /// input (by its tools), the special tokens as default variables.
    pub fn render(&self, input: &RenderInput) -> Result<Rendered, RenderError> {
        let template = self
            .select(None, input.tools.is_some())
            .map_err(|e| RenderError::new(crate::RenderErrorKind::Value, e.message()))?;
        let mut out = template.render_batch_with(
            std::slice::from_ref(&input.messages),
            input,
            &self.special_tokens,
        )?;
        Ok(out.pop().unwrap_or_default())
    }
}

/// The special tokens of a config, as strings.
fn special_tokens(config: &Json) -> Map<String, Json> {
    let mut out = Map::new();
    for name in SPECIAL_TOKENS {
        if let Some(text) = config.get(name).and_then(token_text) {
            out.insert(name.to_owned(), Json::String(text));
        }
    }
    out
}
