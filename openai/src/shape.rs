//! What a template says about where a tool call's parts come from: read
//! once, from the template's public description, when a stream starts.

use crate::json::{KeyPath, Targets};
use retort_engine::Template;
use retort_engine::Value;
use retort_engine::template::describe::FieldSummary;
use retort_engine::typed::REASONING_KEYS;

/// Where one part of a call (name, id, arguments) comes from.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Source {
    /// A path inside the region's JSON content (relative to the element
    /// with `transform_each`).
    Json(KeyPath),
    /// A named group of the open delimiter.
    Capture(String),
    /// A literal in the transform.
    Literal(String),
    /// Unknown before the region's value: the part comes at the close.
    Later,
}

/// How a text field (content, reasoning) streams.
#[derive(Clone, Debug)]
pub(crate) struct TextShape {
    pub field: String,
    /// Chunks go out as they come; otherwise the value goes out at the close.
    pub streams: bool,
    pub strip: bool,
    pub join: Option<String>,
}

/// How the tool-call field's regions are read.
#[derive(Clone, Debug)]
pub(crate) struct CallShape {
    pub field: String,
    /// The region's content is a list of calls (`transform_each`).
    pub each: bool,
    /// Each region appends (otherwise a later region replaces).
    pub repeats: bool,
    /// The streaming JSON reader can follow the content.
    pub json: bool,
    /// The content is `xml-inline` or `kv-lines` and is the whole arguments
    /// of one call: parameters stream as the parser decides them
    /// (`Parser::stream_params`).
    pub xml: bool,
    pub name: Source,
    pub id: Source,
    pub args: Source,
}

impl CallShape {
    /// What the JSON reader watches; `params` as in [`Targets::params`].
    pub(crate) fn targets(&self, params: bool) -> Targets {
        let path = |s: &Source| match s {
            Source::Json(p) => Some(p.clone()),
            _ => None,
        };
        Targets {
            each: self.each,
            name: path(&self.name),
            id: path(&self.id),
            args: path(&self.args),
            params,
        }
    }
}

/// The fields of a template the chunks are made of.
#[derive(Clone, Debug)]
pub(crate) struct Shape {
    pub content: Option<TextShape>,
    pub reasoning: Option<TextShape>,
    pub calls: Option<CallShape>,
}

fn truthy_or(args: &Value, key: &str, default: bool) -> bool {
    match args.as_map().and_then(|m| m.get(key)) {
        Some(v) => retort_engine::py::truthy(v),
        None => default,
    }
}

fn text_shape(f: &FieldSummary) -> TextShape {
    TextShape {
        field: f.name.clone(),
        streams: f.content == "text" && f.transform.is_none() && (!f.repeats || f.join.is_some()),
        strip: truthy_or(&f.content_args, "strip", true),
        join: f.join.clone(),
    }
}

/// A placeholder string `{root.k1.k2}` as its parts.
fn placeholder(v: &Value) -> Option<Vec<String>> {
    let s = v.as_str()?;
    let inner = s.strip_prefix('{')?.strip_suffix('}')?;
    if inner.is_empty() || inner.contains(['{', '}', ' ']) {
        return None;
    }
    Some(inner.split('.').map(str::to_owned).collect())
}

/// Where the value at `v` (a node of the transform) comes from.
fn source(v: Option<&Value>, each: bool, suffix: &[&str]) -> Source {
    let Some(v) = v else { return Source::Later };
    match placeholder(v) {
        Some(mut parts) => {
            parts.extend(suffix.iter().map(|s| (*s).to_owned()));
            if each {
                Source::Json(parts)
            } else if parts[0] == "content" {
                Source::Json(parts[1..].to_vec())
            } else if parts.len() == 1 {
                Source::Capture(parts.remove(0))
            } else {
                Source::Later
            }
        }
        None => match (v, suffix.is_empty()) {
            (Value::Str(s), true) => Source::Literal(s.clone()),
            _ => Source::Later,
        },
    }
}

fn call_shape(f: &FieldSummary) -> CallShape {
    let each = f.transform_each;
    let json = f.content == "json"
        && !["unquoted_keys", "string_delims", "allow_non_json"]
            .iter()
            .any(|k| truthy_or(&f.content_args, k, false));
    let later = CallShape {
        field: f.name.clone(),
        each,
        repeats: f.repeats,
        json: false,
        xml: false,
        name: Source::Later,
        id: Source::Later,
        args: Source::Later,
    };
    let Some(Value::Map(t)) = f.transform.as_ref().map(|t| &t.template) else {
        return later;
    };
    let (name, args) = match t.get("function") {
        Some(Value::Map(func)) => (
            source(func.get("name"), each, &[]),
            source(func.get("arguments"), each, &[]),
        ),
        Some(whole @ Value::Str(_)) => (
            source(Some(whole), each, &["name"]),
            source(Some(whole), each, &["arguments"]),
        ),
        _ => return later,
    };
    let xml = (f.content == "xml-inline" || f.content == "kv-lines")
        && !each
        && matches!(&args, Source::Json(path) if path.is_empty());
    CallShape {
        field: f.name.clone(),
        each,
        repeats: f.repeats,
        json,
        xml,
        name,
        id: source(t.get("id"), each, &[]),
        args,
    }
}

impl Shape {
    pub(crate) fn of(template: &Template) -> Shape {
        // Per stream: the fields alone, not the whole description.
        let fields = template.field_summaries();
        let find = |name: &str| fields.iter().find(|f| f.name == name);
        Shape {
            content: find("content").map(text_shape),
            reasoning: REASONING_KEYS.iter().find_map(|k| find(k)).map(text_shape),
            calls: find("tool_calls").map(call_shape),
        }
    }
}
