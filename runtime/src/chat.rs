//! Both halves of the glue layer: a model's chat template, which turns a
//! conversation into the prompt, and its response template, which turns the
//! generation back into a message.
//!
//! [`ChatModel`] holds the two. The loop an agent runs — render, generate,
//! parse, append, render — needs no glue code of its own:
//!
//! ```
//! use retort::chat::{ChatModel, RenderInput};
//! use serde_json::json;
//!
//! // A model's tokenizer_config.json (here a small ChatML one, carrying the
//! // bundled Qwen3 response template; without one, the bundled family its
//! // chat template renders is recognised).
//! let response_template: serde_json::Value =
//!     serde_json::from_str(retort::registry::family("qwen3")?.json())?;
//! let config = json!({
//!     "chat_template": "{% for m in messages %}<|im_start|>{{ m.role }}\n\
//!         {% if m.reasoning_content %}<think>\n{{ m.reasoning_content }}\n</think>\n\n{% endif %}\
//!         {{ m.content }}<|im_end|>\n{% endfor %}\
//!         {% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}",
//!     "eos_token": "<|im_end|>",
//!     "response_template": response_template,
//! });
//! let model = ChatModel::from_tokenizer_config(&config.to_string())?;
//!
//! let mut conversation = vec![json!({"role": "user", "content": "What's 2+2?"})];
//! let prompt = model.prompt(&RenderInput::new(conversation.clone()))?;
//! // ... the model generates ...
//! let generation = "<think>\nEasy.\n</think>\n\nIt is 4.<|im_end|>";
//! let message = model.parse(&prompt, generation)?;
//! conversation.push(ChatModel::to_json(&message));
//! // The next turn's prompt holds the answer as if written by hand.
//! let next = model.prompt(&RenderInput::new(conversation))?;
//! assert!(next.contains("<|im_start|>assistant\n<think>\nEasy.\n</think>\n\nIt is 4.<|im_end|>"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The renderer is `retort-chat`'s, re-exported here: byte for byte what
//! transformers 5.23.0's `render_jinja_template` gives, sandboxed and
//! bounded ([`Limits`]).

pub use retort_chat::*;

use crate::registry::{self, Family, RegistryError};
use crate::{Map, ParseError, Parser, Template, Value};
use serde_json::Value as Json;
use std::fmt;

/// A model's chat template and response template together.
#[derive(Debug)]
pub struct ChatModel {
    chat: ChatTemplates,
    template: Template,
    family: Option<&'static Family>,
}

/// Why a [`ChatModel`] could not be made.
#[derive(Debug)]
pub enum ChatModelError {
    /// The chat template does not load (syntax, config shape).
    Chat(ChatError),
    /// No response template: the config has none and its chat template is
    /// not one of a bundled family's.
    Registry(RegistryError),
}

impl fmt::Display for ChatModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChatModelError::Chat(e) => write!(f, "chat template: {e}"),
            ChatModelError::Registry(e) => write!(f, "response template: {e}"),
        }
    }
}

impl std::error::Error for ChatModelError {}

impl ChatModel {
    /// From a model's `tokenizer_config.json` (its text): the chat
    /// template(s) and special tokens it carries, and its
    /// `response_template` — or, when it has none, the bundled family its
    /// chat template is recognised as ([`registry::from_tokenizer_config`]).
    pub fn from_tokenizer_config(json: &str) -> Result<ChatModel, ChatModelError> {
        let chat = ChatTemplates::from_tokenizer_config(json, Limits::default())
            .map_err(ChatModelError::Chat)?;
        let resolved = registry::from_tokenizer_config(json).map_err(ChatModelError::Registry)?;
        Ok(ChatModel {
            chat,
            template: resolved.template,
            family: resolved.family,
        })
    }

    /// From a chat template and the response template to parse its
    /// generations with (a bundled family's, or one of your own).
    pub fn new(chat: ChatTemplates, template: Template) -> ChatModel {
        ChatModel {
            chat,
            template,
            family: None,
        }
    }

    /// The chat templates.
    pub fn chat_templates(&self) -> &ChatTemplates {
        &self.chat
    }

    /// The response template.
    pub fn template(&self) -> &Template {
        &self.template
    }

    /// The bundled family the response template came from, if it was
    /// recognised rather than given.
    pub fn family(&self) -> Option<&'static Family> {
        self.family
    }

    /// Renders `input` (its tools select the `tool_use` template where the
    /// model has one; the special tokens are variables under `input`'s).
    pub fn render(&self, input: &RenderInput) -> Result<Rendered, RenderError> {
        self.chat.render(input)
    }

    /// The prompt for the model's next turn: `input` rendered with the
    /// generation prompt.
    pub fn prompt(&self, input: &RenderInput) -> Result<String, RenderError> {
        let mut input = input.clone();
        input.add_generation_prompt = true;
        Ok(self.render(&input)?.text)
    }

    /// A streaming parser for the generation that follows `prompt`.
    pub fn parser(&self, prompt: &str) -> Result<Parser<'_>, ParseError> {
        self.template.parser(prompt)
    }

    /// The message in a whole generation that followed `prompt`.
    pub fn parse(&self, prompt: &str, generation: &str) -> Result<Map, ParseError> {
        self.template.parse(generation, prompt)
    }

    /// A parsed message as the JSON message a conversation holds (what
    /// [`RenderInput::messages`] takes), to append before the next render.
    pub fn to_json(message: &Map) -> Json {
        to_json(&Value::Map(message.clone()))
    }
}

fn to_json(v: &Value) -> Json {
    match v {
        Value::Null => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Str(s) => Json::String(s.clone()),
        Value::List(items) => Json::Array(items.iter().map(to_json).collect()),
        Value::Map(m) => Json::Object(m.iter().map(|(k, v)| (k.clone(), to_json(v))).collect()),
        other => {
            // Numbers: through their JSON text, which keeps big integers
            // and Python's float spelling where serde_json can hold them.
            let mut text = String::new();
            other.write_json(&mut text, crate::value::NonFinite::Python);
            serde_json::from_str(&text).unwrap_or(Json::String(text))
        }
    }
}
