//! What transformers does around the template: the checks of tools,
//! documents and messages, the reasoning aliases, the
//! `continue_final_message` tag and its errors (`render_jinja_template`),
//! and `apply_chat_template`'s normalisation.

use minijinja::value::Value;
use serde_json::{Map, Value as Json};

use crate::error::{Limit, RenderError, RenderErrorKind};
use crate::input::RenderInput;
use crate::pystr;
use crate::repr;

/// The tag transformers appends to the continued field, then cuts at.
const TAG: &str = "CONTINUE_FINAL_MESSAGE_TAG ";

/// The names a message's reasoning is passed under; templates read the
/// first.
const REASONING_FIELDS: [&str; 3] = ["reasoning_content", "thinking", "reasoning"];

/// The parameters of `render_jinja_template` and of the template's
/// `render` call, which variables cannot override.
const RESERVED: [&str; 8] = [
    "conversations",
    "tools",
    "documents",
    "chat_template",
    "return_assistant_tokens_mask",
    "continue_final_message",
    "add_generation_prompt",
    "messages",
];

/// Values shared by every conversation of a batch.
pub(crate) struct Shared {
    pub(crate) tools: Value,
    pub(crate) documents: Value,
    pub(crate) vars: Vec<(String, Value)>,
}

fn value_error(message: impl Into<String>) -> RenderError {
    RenderError::new(RenderErrorKind::Value, message)
}

fn type_error(message: impl Into<String>) -> RenderError {
    RenderError::new(RenderErrorKind::Type, message)
}

fn convert(json: &Json, depth: usize) -> Result<Value, RenderError> {
    crate::value::from_json(json, depth)
        .map_err(|_| RenderError::limit(Limit::Depth, "the input data is nested too deeply"))
}

/// Python's `repr` of a JSON value (for messages in errors).
pub(crate) fn json_repr(json: &Json) -> String {
    crate::value::from_json(json, 64).map_or_else(|_| "...".to_owned(), |v| repr::repr_string(&v))
}

/// Checks and converts the tools, documents and variables.
pub(crate) fn shared(
    input: &RenderInput,
    defaults: &Map<String, Json>,
    depth: usize,
) -> Result<Shared, RenderError> {
    for key in input.kwargs.keys() {
        if let Some(name) = RESERVED.iter().find(|r| **r == key) {
            // the reference renders with `return_assistant_tokens_mask=True`
            // (the case format reports generation spans), whose call names
            // `_render_with_assistant_indices`
            let func = if *name == "messages" {
                "transformers.utils.chat_template_utils._render_with_assistant_indices"
            } else {
                "transformers.utils.chat_template_utils.render_jinja_template"
            };
            return Err(type_error(format!(
                "{func}() got multiple values for keyword argument '{name}'"
            )));
        }
    }
    if input.entry.is_apply()
        && input.continue_final_message.is_set()
        && input.add_generation_prompt
    {
        return Err(value_error(
            "continue_final_message and add_generation_prompt are not compatible. Use continue_final_message when you want the model to continue the final message, and add_generation_prompt when you want to add a header that will prompt it to start a new assistant message instead.",
        ));
    }
    let tools = match &input.tools {
        None => Value::from(()),
        Some(tools) => {
            if tools.iter().any(|t| !t.is_object()) {
                return Err(value_error(
                    "Tools should either be a JSON schema, or a callable function with type hints and a docstring suitable for auto-conversion to a schema.",
                ));
            }
            convert(&Json::Array(tools.clone()), depth)?
        }
    };
    let documents = match &input.documents {
        None => Value::from(()),
        Some(docs) => {
            if docs.iter().any(|d| !d.is_object()) {
                return Err(type_error(
                    "Documents should be a list of dicts with 'title' and 'text' keys!",
                ));
            }
            convert(&Json::Array(docs.clone()), depth)?
        }
    };
    let mut vars = Vec::with_capacity(defaults.len() + input.kwargs.len());
    for (k, v) in defaults {
        if !input.kwargs.contains_key(k) {
            vars.push((k.clone(), convert(v, depth)?));
        }
    }
    for (k, v) in &input.kwargs {
        vars.push((k.clone(), convert(v, depth)?));
    }
    Ok(Shared {
        tools,
        documents,
        vars,
    })
}

/// A conversation ready for the template.
pub(crate) struct Conversation {
    pub(crate) messages: Vec<Json>,
    /// With `continue_final_message`: the text continued (what the output
    /// is cut after).
    pub(crate) continued: Option<String>,
}

/// Python's `==` on JSON values (`1 == 1.0 == True`).
fn json_eq(a: &Json, b: &Json) -> bool {
    match (a, b) {
        (Json::Number(_) | Json::Bool(_), Json::Number(_) | Json::Bool(_)) => {
            let f = |v: &Json| match v {
                Json::Bool(b) => Some(f64::from(u8::from(*b))),
                Json::Number(n) => n.as_f64(),
                _ => None,
            };
            match (a, b) {
                (Json::Number(x), Json::Number(y)) if x.is_i64() && y.is_i64() => x == y,
                _ => f(a) == f(b),
            }
        }
        (Json::Array(x), Json::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_eq(p, q))
        }
        (Json::Object(x), Json::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

/// Python's type name of a JSON value.
fn json_type(v: &Json) -> &'static str {
    match v {
        Json::Null => "NoneType",
        Json::Bool(_) => "bool",
        Json::Number(n) if n.is_f64() => "float",
        Json::Number(_) => "int",
        Json::String(_) => "str",
        Json::Array(_) => "list",
        Json::Object(_) => "dict",
    }
}

/// `value + "CONTINUE_FINAL_MESSAGE_TAG "`, or Python's `TypeError`.
fn add_tag(v: &Json) -> Result<Json, RenderError> {
    match v {
        Json::String(s) => Ok(Json::String(format!("{s}{TAG}"))),
        Json::Array(_) => Err(type_error(
            "can only concatenate list (not \"str\") to list",
        )),
        other => Err(type_error(format!(
            "unsupported operand type(s) for +: '{}' and 'str'",
            json_type(other)
        ))),
    }
}

/// Validates and prepares one conversation.
pub(crate) fn conversation(
    messages: &[Json],
    input: &RenderInput,
    source: &str,
) -> Result<Conversation, RenderError> {
    if input.entry.is_apply() && messages.is_empty() {
        return Err(value_error(
            "Cannot apply chat template to an empty conversation. Provide at least one message.",
        ));
    }
    let mut chat: Vec<Json> = Vec::with_capacity(messages.len());
    for m in messages {
        if input.entry.is_apply() {
            // apply_chat_template: `{k: v for k, v in msg.items() if v is not None}`
            let Json::Object(map) = m else {
                return Err(RenderError::new(
                    RenderErrorKind::Other("AttributeError"),
                    format!("'{}' object has no attribute 'items'", json_type(m)),
                ));
            };
            let kept: Map<String, Json> = map
                .iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            chat.push(Json::Object(kept));
        } else {
            chat.push(m.clone());
        }
    }
    for m in &chat {
        if !m.is_object() {
            return Err(type_error(format!(
                "Chat messages should be dicts, dataclasses or pydantic models, but got {}.",
                json_repr(m)
            )));
        }
    }
    for m in &mut chat {
        alias_reasoning(m);
    }
    let Some(field) = input.continue_final_message.field().map(str::to_owned) else {
        return Ok(Conversation {
            messages: chat,
            continued: None,
        });
    };
    let Some(last) = chat.last_mut().and_then(Json::as_object_mut) else {
        return Err(value_error(
            "continue_final_message is set but the conversation is empty!",
        ));
    };
    let final_message = match last.get(&field) {
        None | Some(Json::Null) => {
            return Err(value_error(format!(
                "continue_final_message is set but the final message has no \"{field}\" to continue!"
            )));
        }
        Some(v) => v.clone(),
    };
    let fields: Vec<String> = if REASONING_FIELDS.contains(&field.as_str()) {
        REASONING_FIELDS
            .iter()
            .filter(|f| last.get(**f).is_some_and(|v| json_eq(v, &final_message)))
            .map(|f| (*f).to_owned())
            .collect()
    } else {
        vec![field.clone()]
    };
    if !fields.iter().any(|f| source.contains(f.as_str())) {
        return Err(value_error(format!(
            "continue_final_message is set to \"{field}\" but this is not an accepted field in the chat_template"
        )));
    }
    let continued = if let Json::Array(blocks) = &final_message {
        let mut found = None;
        for (i, block) in blocks.iter().enumerate().rev() {
            if has_text(block)? {
                found = Some(i);
                break;
            }
        }
        let Some(i) = found else {
            return Err(value_error(
                "continue_final_message is set but we could not find any text to continue in the final message!",
            ));
        };
        let Some(Json::Array(blocks)) = last.get_mut(&field) else {
            return Err(value_error(
                "continue_final_message: the final message changed",
            ));
        };
        let text = match &blocks[i] {
            Json::Object(o) => o.get("text").cloned().unwrap_or(Json::Null),
            other => {
                return Err(type_error(format!(
                    "{} indices must be integers or slices, not str",
                    json_type(other)
                )));
            }
        };
        let tagged = add_tag(&text)?;
        if let Json::Object(o) = &mut blocks[i] {
            o.insert("text".to_owned(), tagged);
        }
        text
    } else {
        for f in &fields {
            if let Some(v) = last.get(f) {
                let tagged = add_tag(v)?;
                last.insert(f.clone(), tagged);
            }
        }
        final_message
    };
    let Json::String(continued) = continued else {
        return Err(RenderError::new(
            RenderErrorKind::Other("AttributeError"),
            format!(
                "'{}' object has no attribute 'strip'",
                json_type(&continued)
            ),
        ));
    };
    Ok(Conversation {
        messages: chat,
        continued: Some(continued),
    })
}

/// Python's `"text" in block`.
fn has_text(block: &Json) -> Result<bool, RenderError> {
    match block {
        Json::Object(o) => Ok(o.contains_key("text")),
        Json::String(s) => Ok(s.contains("text")),
        Json::Array(a) => Ok(a.iter().any(|v| v.as_str() == Some("text"))),
        other => Err(type_error(format!(
            "argument of type '{}' is not iterable",
            json_type(other)
        ))),
    }
}

/// `_alias_reasoning_fields`: `{"thinking": r, **message, "reasoning_content": r}`
/// where `r` is the first non-`None` reasoning field.
fn alias_reasoning(message: &mut Json) {
    let Json::Object(map) = message else {
        return;
    };
    let reasoning = REASONING_FIELDS
        .iter()
        .find_map(|f| map.get(*f).filter(|v| !v.is_null()))
        .cloned();
    let Some(reasoning) = reasoning else {
        return;
    };
    let mut out = Map::with_capacity(map.len() + 2);
    out.insert("thinking".to_owned(), reasoning.clone());
    for (k, v) in map.iter() {
        out.insert(k.clone(), v.clone());
    }
    out.insert("reasoning_content".to_owned(), reasoning);
    *map = out;
}

/// The end of `render_jinja_template`'s `continue_final_message`: the
/// rendered text must hold the continued text and the tag; it is cut at
/// the tag's last occurrence (and right-stripped if the template trimmed
/// the tag's space).
pub(crate) fn cut_continued(rendered: String, final_message: &str) -> Result<String, RenderError> {
    let stripped = pystr::strip(final_message, None, true, true);
    let tag = TAG.trim_end();
    if !rendered.contains(stripped) || !rendered.contains(tag) {
        return Err(value_error(format!(
            "continue_final_message is set but the final message does not appear in the chat after applying the chat template! This can happen if the chat template deletes portions of the final message. Please verify the chat template and final message in your chat to ensure they are compatible.Final message to continue: {stripped}\nRendered chat:\n{rendered}"
        )));
    }
    let at = rendered.rfind(tag).unwrap_or(0);
    if rendered[at..].starts_with(TAG) {
        Ok(rendered[..at].to_owned())
    } else {
        Ok(pystr::strip(&rendered[..at], None, false, true).to_owned())
    }
}
