//! The Rust types of a template's messages.
//!
//! Every value the template can put under a key must fit the type derived
//! for it: the derivation follows what the reference builds (content
//! parsers, transforms, `repeats`/`join`, defaults, the final filter of
//! empty values) and falls back to [`Ty::Any`] (`retort::Value`) wherever a
//! value's shape is not fixed by the template.

use retort::template::Field;
use retort::transform::Node;
use retort::{Map, Template, Value};
use std::collections::BTreeSet;

/// A Rust type of a message value.
#[derive(Clone, Debug, PartialEq)]
pub enum Ty {
    /// `String`.
    Str,
    /// `retort::Int` (Python's `int`: an `i64`, or beyond).
    Int,
    /// `f64`.
    Float,
    /// `bool`.
    Bool,
    /// `retort::Value`: any value.
    Any,
    /// `retort::Map`: a dict of any values.
    Map,
    /// `Vec<T>`.
    List(Box<Ty>),
    /// A generated struct (index into [`Model::structs`]).
    Struct(usize),
}

/// How a message key is present.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Presence {
    /// Always there (a default guarantees it): `T`.
    Always,
    /// Always there, possibly `null` (a `null` default): `Option<T>`,
    /// serialised as `null`.
    Nullable,
    /// There only when the model wrote it (and it was not empty):
    /// `Option<T>`, left out when `None`.
    Sometimes,
}

/// One key of a message or of a generated struct.
#[derive(Clone, Debug)]
pub struct Member {
    /// The key, as in the reference's dict.
    pub key: String,
    /// The Rust field name.
    pub ident: String,
    /// Its type.
    pub ty: Ty,
    /// How it is present.
    pub presence: Presence,
}

/// A struct generated for a transform with literal keys.
#[derive(Clone, Debug)]
pub struct StructDef {
    /// The Rust type name.
    pub name: String,
    /// Its keys, in the transform's order (all always present).
    pub members: Vec<Member>,
}

/// The types of a template's messages.
#[derive(Clone, Debug)]
pub struct Model {
    /// The message's keys: defaults first, then fields not in the defaults,
    /// in template order.
    pub message: Vec<Member>,
    /// Structs for transforms.
    pub structs: Vec<StructDef>,
    /// Field enum variants, in template order: (field name, variant).
    pub variants: Vec<(String, String)>,
}

/// Names the generated module uses for its own items.
const RESERVED_TYPES: [&str; 6] = ["Message", "Field", "Parser", "Value", "Map", "Events"];

const KEYWORDS: [&str; 51] = [
    "as", "break", "const", "continue", "crate", "else", "enum", "extern", "false", "fn", "for",
    "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return",
    "self", "Self", "static", "struct", "super", "trait", "true", "type", "unsafe", "use", "where",
    "while", "async", "await", "dyn", "abstract", "become", "box", "do", "final", "macro",
    "override", "priv", "typeof", "unsized", "virtual", "yield", "try",
];

/// A snake_case identifier for a key (`"tool_calls"` → `tool_calls`,
/// `"type"` → `type_`, `"2x"` → `_2x`).
pub fn snake_ident(key: &str) -> String {
    let mut out = String::new();
    let mut prev_lower = false;
    for c in key.chars() {
        if c.is_ascii_uppercase() {
            if prev_lower {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
            prev_lower = false;
        } else if c.is_ascii_alphanumeric() {
            out.push(c);
            prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        } else {
            if !out.ends_with('_') {
                out.push('_');
            }
            prev_lower = false;
        }
    }
    let trimmed = out.trim_matches('_');
    let mut out = if trimmed.is_empty() {
        "field".to_owned()
    } else {
        trimmed.to_owned()
    };
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    if KEYWORDS.contains(&out.as_str()) {
        out.push('_');
    }
    out
}

/// A CamelCase name for a key (`"tool_calls"` → `ToolCalls`).
pub fn camel_ident(key: &str) -> String {
    let mut out = String::new();
    for part in snake_ident(key).split('_').filter(|p| !p.is_empty()) {
        let mut chars = part.chars();
        if let Some(c) = chars.next() {
            out.push(c.to_ascii_uppercase());
            out.extend(chars);
        }
    }
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, 'F');
    }
    if KEYWORDS.contains(&out.as_str()) {
        out.push('_');
    }
    out
}

/// Makes `name` unique among `used` by appending a number.
fn unique(name: String, used: &mut BTreeSet<String>) -> String {
    let mut candidate = name.clone();
    let mut n = 2;
    while used.contains(&candidate) {
        candidate = format!("{name}{n}");
        n += 1;
    }
    used.insert(candidate.clone());
    candidate
}

struct Deriver {
    structs: Vec<StructDef>,
    type_names: BTreeSet<String>,
}

/// The type of a content parser's value.
fn content_ty(name: &str) -> Ty {
    match name {
        "text" => Ty::Str,
        "int" => Ty::Int,
        "float" => Ty::Float,
        "bool" => Ty::Bool,
        "xml-inline" | "kv-lines" => Ty::Map,
        _ => Ty::Any,
    }
}

/// The type of a literal in a transform or a default.
fn literal_ty(v: &Value) -> Ty {
    match v {
        Value::Str(_) => Ty::Str,
        Value::Int(_) | Value::BigInt(_) => Ty::Int,
        Value::Float(_) => Ty::Float,
        Value::Bool(_) => Ty::Bool,
        _ => Ty::Any,
    }
}

/// What a transform placeholder's root refers to.
enum Scope<'a> {
    /// `{**captures, "content": value}`.
    Region { content: Ty, captures: &'a [String] },
    /// `{**captures, **item}` (`transform_each`): item keys are unknown.
    Item,
}

impl Deriver {
    fn node_ty(&mut self, node: &Node, scope: &Scope<'_>, name_hint: &str) -> Ty {
        match node {
            Node::Map(entries) => {
                let mut idents = BTreeSet::new();
                let mut members = Vec::with_capacity(entries.len());
                let name = unique(camel_ident(name_hint), &mut self.type_names);
                let index = self.structs.len();
                // Reserve the slot so nested structs get later indices.
                self.structs.push(StructDef {
                    name: name.clone(),
                    members: Vec::new(),
                });
                for (key, child) in entries {
                    // Tool-argument coercion rewrites the values of a call's
                    // `arguments` dict in place, whatever the template wrote.
                    let ty = if key == "arguments" {
                        Ty::Any
                    } else {
                        self.node_ty(child, scope, &format!("{name}_{key}"))
                    };
                    members.push(Member {
                        key: key.clone(),
                        ident: unique(snake_ident(key), &mut idents),
                        ty,
                        presence: Presence::Always,
                    });
                }
                self.structs[index].members = members;
                Ty::Struct(index)
            }
            Node::List(_) | Node::TooDeep => Ty::Any,
            Node::Literal(v) => literal_ty(v),
            Node::Placeholder { root, keys, .. } => match scope {
                Scope::Item => Ty::Any,
                Scope::Region { content, captures } => {
                    if !keys.is_empty() {
                        Ty::Any
                    } else if root == "content" {
                        content.clone()
                    } else if captures.iter().any(|c| c == root) {
                        Ty::Str
                    } else {
                        Ty::Any
                    }
                }
            },
        }
    }

    fn field_ty(&mut self, t: &Template, f: &Field) -> Ty {
        let content = content_ty(f.content.name());
        let base = match &f.transform {
            None => content,
            Some(transform) => {
                let mut captures = Vec::new();
                for d in [f.open, f.close].into_iter().flatten() {
                    for (name, _) in t.delimiter(d as usize).regex.group_names() {
                        captures.push(name.clone());
                    }
                }
                let node = transform.node();
                if f.transform_each {
                    Ty::List(Box::new(self.node_ty(node, &Scope::Item, &f.name)))
                } else {
                    let scope = Scope::Region {
                        content,
                        captures: &captures,
                    };
                    self.node_ty(node, &scope, &f.name)
                }
            }
        };
        if f.join.is_some() {
            Ty::Str
        } else if f.repeats {
            Ty::List(Box::new(base))
        } else {
            base
        }
    }

    /// Whether `v` fits `ty`.
    fn fits(&self, v: &Value, ty: &Ty) -> bool {
        match (ty, v) {
            (Ty::Any, _)
            | (Ty::Str, Value::Str(_))
            | (Ty::Int, Value::Int(_) | Value::BigInt(_))
            | (Ty::Float, Value::Float(_))
            | (Ty::Bool, Value::Bool(_))
            | (Ty::Map, Value::Map(_)) => true,
            (Ty::List(item), Value::List(items)) => items.iter().all(|i| self.fits(i, item)),
            (Ty::Struct(s), Value::Map(m)) => {
                let def = &self.structs[*s];
                m.len() == def.members.len()
                    && def
                        .members
                        .iter()
                        .all(|mem| m.get(&mem.key).is_some_and(|v| self.fits(v, &mem.ty)))
            }
            _ => false,
        }
    }
}

/// Derives the message types of a template.
pub fn derive(t: &Template) -> Model {
    let mut d = Deriver {
        structs: Vec::new(),
        type_names: RESERVED_TYPES.iter().map(|s| s.to_string()).collect(),
    };
    let defaults: &Map = t.defaults();
    let mut idents = BTreeSet::new();
    let mut message = Vec::new();
    let field_tys: Vec<Ty> = t.fields().iter().map(|f| d.field_ty(t, f)).collect();
    for (key, default) in defaults {
        let field = t.field_index(key);
        let (ty, presence) = match field {
            None => (literal_ty(default), Presence::Always),
            Some(i) => {
                let ty = field_tys[i].clone();
                if d.fits(default, &ty) {
                    (ty, Presence::Always)
                } else if matches!(default, Value::Null) {
                    (ty, Presence::Nullable)
                } else {
                    (Ty::Any, Presence::Always)
                }
            }
        };
        message.push(Member {
            key: key.clone(),
            ident: unique(snake_ident(key), &mut idents),
            ty,
            presence,
        });
    }
    for (f, ty) in t.fields().iter().zip(field_tys) {
        if defaults.contains_key(&f.name) {
            continue;
        }
        message.push(Member {
            key: f.name.clone(),
            ident: unique(snake_ident(&f.name), &mut idents),
            ty,
            presence: Presence::Sometimes,
        });
    }
    let mut variant_names = BTreeSet::new();
    let variants = t
        .fields()
        .iter()
        .map(|f| {
            (
                f.name.clone(),
                unique(camel_ident(&f.name), &mut variant_names),
            )
        })
        .collect();
    Model {
        message,
        structs: d.structs,
        variants,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_rust_names() {
        assert_eq!(snake_ident("tool_calls"), "tool_calls");
        assert_eq!(snake_ident("type"), "type_");
        assert_eq!(snake_ident("reasoningContent"), "reasoning_content");
        assert_eq!(snake_ident("2x"), "_2x");
        assert_eq!(snake_ident("a-b c"), "a_b_c");
        assert_eq!(snake_ident("¿"), "field");
        assert_eq!(camel_ident("tool_calls"), "ToolCalls");
        assert_eq!(camel_ident("self"), "Self_");
        assert_eq!(camel_ident("9"), "F9");
    }

    fn model(json: &str) -> Model {
        derive(&Template::from_json(json).expect("a valid template"))
    }

    #[test]
    fn fields_defaults_and_transforms_get_types() {
        let m = model(
            r#"{"defaults": {"role": "assistant", "n": 3, "content": null},
                "start_anchor": "A",
                "fields": {
                    "think": {"open": "<t>", "close": "</t>", "repeats": true, "join": "\n"},
                    "calls": {"open_pattern": "<c (?P<name>\\w+)>", "close": "</c>", "repeats": true,
                              "content": "json",
                              "transform": {"type": "function", "name": "{name}", "n": 1.5,
                                            "function": {"arguments": "{content}", "raw": "{content}"}}},
                    "score": {"open": "<s>", "close": "</s>", "content": "int"},
                    "content": {}
                }}"#,
        );
        let find = |k: &str| m.message.iter().find(|x| x.key == k).unwrap().clone();
        assert_eq!(
            (find("role").ty, find("role").presence),
            (Ty::Str, Presence::Always)
        );
        assert_eq!(find("n").ty, Ty::Int);
        assert_eq!(
            (find("content").ty, find("content").presence),
            (Ty::Str, Presence::Nullable)
        );
        assert_eq!(
            (find("think").ty, find("think").presence),
            (Ty::Str, Presence::Sometimes)
        );
        assert_eq!(find("score").ty, Ty::Int);
        assert_eq!(find("calls").ty, Ty::List(Box::new(Ty::Struct(0))));
        let calls = &m.structs[0];
        assert_eq!(calls.name, "Calls");
        let tys: Vec<(&str, &Ty)> = calls
            .members
            .iter()
            .map(|x| (x.ident.as_str(), &x.ty))
            .collect();
        assert_eq!(
            tys,
            [
                ("type_", &Ty::Str),
                ("name", &Ty::Str),
                ("n", &Ty::Float),
                ("function", &Ty::Struct(1))
            ]
        );
        let function = &m.structs[1];
        assert_eq!(function.name, "CallsFunction");
        assert_eq!(function.members[0].ty, Ty::Any, "arguments are coerced");
        assert_eq!(function.members[1].ty, Ty::Any, "json content");
    }

    #[test]
    fn defaults_that_do_not_fit_make_the_key_untyped() {
        let m = model(
            r#"{"defaults": {"tool_calls": [], "x": "s"}, "start_anchor": "A",
                "fields": {"tool_calls": {"open": "<", "close": ">", "repeats": true},
                           "x": {"open": "[", "close": "]", "content": "int"}}}"#,
        );
        assert_eq!(m.message[0].ty, Ty::List(Box::new(Ty::Str)));
        assert_eq!(m.message[0].presence, Presence::Always);
        assert_eq!(m.message[1].ty, Ty::Any);
    }
}
