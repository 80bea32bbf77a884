//! Transforms (`transform`, `transform_each`) and tool-argument coercion, as
//! the reference's `_apply_transform`, `process_field` and
//! `ResponseParser._coerce_tool_calls` do them.
//!
//! # Python aliasing
//!
//! A whole-string placeholder (`"{content}"`) puts the *same object* into the
//! output, not a copy, and coercion then assigns the cast arguments into the
//! `arguments` dict in place. So with
//! `{"function": {"name": "{name}", "arguments": "{content}"}, "raw": "{content}"}`
//! the cast values show under `raw` too, and a dict reached twice is cast
//! twice, in order. To get this exactly, transforms and coercion here work on
//! `Obj`, a small model of Python objects in which dicts are shared
//! (`Rc<RefCell<..>>`) and everything else (strings, numbers, lists, which
//! coercion never mutates in place) is a value; the result is turned back into
//! a [`Value`] at the end.

use crate::content::ContentSpec;
use crate::py::{
    self, JSON_MAX_DEPTH, PyErr, PyExc, float_is_integer, int_of_float, json_loads_with_depth,
    parse_float, parse_int, repr_str,
};
use crate::unicode_tables::{REGEX_WORD, in_ranges};
use crate::{Map, Value};
use indexmap::IndexMap;
use std::cell::RefCell;
use std::rc::Rc;

/// A Python exception raised while finishing a region (content parser,
/// transform or coercion): its class and `str(exc)`.
pub type FieldError = PyErr;

/// Templates nested deeper than this are not walked: applying one raises
/// `RecursionError`, as the reference's recursive walk would somewhat deeper.
/// (JSON templates cannot nest this deep: serde_json stops at 128 levels.)
const MAX_TEMPLATE_DEPTH: usize = 400;

/// How many lists deep the reference's `_coerce_tool_calls` can recurse
/// before CPython's recursion limit (two frames per list: the call and its
/// list comprehension), measured on the reference.
const MAX_COERCE_LIST_DEPTH: usize = 496;

/// What is left of the recursion limit for `json.loads` in `_coerce` when the
/// coerced value is not inside any list (measured on the reference); each
/// enclosing list takes two frames more.
const COERCE_JSON_DEPTH: usize = JSON_MAX_DEPTH + 1;

// ---------------------------------------------------------------------------
// Placeholders

/// `\w` of the `regex` module.
fn is_word(c: char) -> bool {
    in_ranges(REGEX_WORD, c)
}

/// Whether `s` matches `\w+(?:\.\w+)*`.
fn is_path(s: &str) -> bool {
    !s.is_empty()
        && s.split('.')
            .all(|w| !w.is_empty() && w.chars().all(is_word))
}

/// `_PLACEHOLDER.fullmatch(s)`: the path inside `{...}`, if `s` is exactly
/// one placeholder.
fn placeholder_fullmatch(s: &str) -> Option<&str> {
    let inner = s.strip_prefix('{')?.strip_suffix('}')?;
    is_path(inner).then_some(inner)
}

/// `_PLACEHOLDER.search(s)`: whether a placeholder occurs anywhere. After a
/// `{`, a path can only end where the run of `\w` and `.` characters ends
/// (the `}` must follow it directly), so backtracking never finds a match
/// that this direct check misses.
fn placeholder_search(s: &str) -> bool {
    s.match_indices('{').any(|(i, _)| {
        let rest = &s[i + 1..];
        let run = rest
            .find(|c: char| c != '.' && !is_word(c))
            .unwrap_or(rest.len());
        rest[run..].starts_with('}') && is_path(&rest[..run])
    })
}

/// The reference's `validate_transform_strings(scope, transform)`: rejects a
/// string that contains a `{placeholder}` but is not exactly one. `scope` is
/// the label the message starts with (`"Field 'x'"`). The error is the
/// `ValueError`'s message.
pub fn validate_transform(scope: &str, transform: &Value) -> Result<(), String> {
    validate_at(scope, transform, 0)
}

fn validate_at(scope: &str, t: &Value, depth: usize) -> Result<(), String> {
    if depth > MAX_TEMPLATE_DEPTH {
        return Err("maximum recursion depth exceeded".into());
    }
    match t {
        Value::Map(m) => m
            .values()
            .try_for_each(|v| validate_at(scope, v, depth + 1)),
        Value::List(l) => l.iter().try_for_each(|v| validate_at(scope, v, depth + 1)),
        Value::Str(s) if placeholder_search(s) && placeholder_fullmatch(s).is_none() => {
            Err(format!(
                "{scope}: transform string {} mixes a {{placeholder}} with literal text. \
             Use either a whole-string placeholder (e.g. \"{{content}}\") or a plain literal; \
             string interpolation is not supported.",
                repr_str(s)
            ))
        }
        _ => Ok(()),
    }
}

// ---------------------------------------------------------------------------
// Python objects

/// A Python object as far as transforms and coercion can tell: dicts have
/// identity (coercion mutates them in place, and every place holding the
/// same dict sees it); strings, numbers and lists do not need it (they are
/// never mutated in place, only replaced).
#[derive(Clone, Debug)]
enum Obj {
    /// Anything but a list or dict.
    Scalar(Value),
    List(Vec<Obj>),
    Dict(Rc<RefCell<IndexMap<String, Obj>>>),
}

impl Obj {
    fn new_dict(m: IndexMap<String, Obj>) -> Obj {
        Obj::Dict(Rc::new(RefCell::new(m)))
    }

    /// Fresh objects for a value (nothing shared).
    fn from_value(v: Value) -> Obj {
        match v {
            Value::List(items) => Obj::List(items.into_iter().map(Obj::from_value).collect()),
            Value::Map(m) => Obj::new_dict(
                m.into_iter()
                    .map(|(k, v)| (k, Obj::from_value(v)))
                    .collect(),
            ),
            scalar => Obj::Scalar(scalar),
        }
    }

    /// The value now held, following shared dicts.
    fn to_value(&self) -> Value {
        match self {
            Obj::Scalar(v) => v.clone(),
            Obj::List(items) => Value::List(items.iter().map(Obj::to_value).collect()),
            Obj::Dict(d) => Value::Map(
                d.borrow()
                    .iter()
                    .map(|(k, v)| (k.clone(), v.to_value()))
                    .collect(),
            ),
        }
    }

    fn type_name(&self) -> &'static str {
        match self {
            Obj::Scalar(v) => v.type_name(),
            Obj::List(_) => "list",
            Obj::Dict(_) => "dict",
        }
    }

    fn as_str(&self) -> Option<&str> {
        match self {
            Obj::Scalar(Value::Str(s)) => Some(s),
            _ => None,
        }
    }
}

/// Python's `repr(sorted(keys))` for string keys: `['a', 'b']`.
fn sorted_repr<'a>(keys: impl Iterator<Item = &'a str>) -> String {
    let mut keys: Vec<&str> = keys.collect();
    keys.sort();
    let items: Vec<String> = keys.into_iter().map(repr_str).collect();
    format!("[{}]", items.join(", "))
}

// ---------------------------------------------------------------------------
// Transforms

/// A compiled `transform` template.
#[derive(Clone, Debug)]
pub struct Transform {
    pub(crate) node: Node,
    /// The roots that exactly one placeholder uses: such a placeholder,
    /// taking its entry whole, moves the value instead of copying it.
    moves: Vec<String>,
}

/// A node of a compiled transform (public for generated code only).
#[doc(hidden)]
#[derive(Clone, Debug)]
pub enum Node {
    /// A dict: new for each application, keys in template order.
    Map(Vec<(String, Node)>),
    /// A list: new for each application.
    List(Vec<Node>),
    /// `"{root.key.key}"`: `path` as written, split at the dots.
    Placeholder {
        path: String,
        root: String,
        keys: Vec<String>,
    },
    /// Any other string, number, bool or null: copied as is.
    Literal(Value),
    /// Nested beyond [`MAX_TEMPLATE_DEPTH`]: applying raises `RecursionError`.
    TooDeep,
}

impl Transform {
    /// Compiles a `transform` value (the loader has already run
    /// [`validate_transform`] on it). Never fails.
    pub fn new(template: &Value) -> Transform {
        Transform::from_node(Node::build(template, 0))
    }

    /// The compiled form.
    #[doc(hidden)]
    pub fn node(&self) -> &Node {
        &self.node
    }

    /// A transform from its compiled form (generated code writes it out).
    #[doc(hidden)]
    pub fn from_node(node: Node) -> Transform {
        let mut roots = Vec::new();
        node.roots(&mut roots);
        let moves = roots
            .iter()
            .filter(|r| roots.iter().filter(|o| o == r).count() == 1)
            .map(|r| r.to_string())
            .collect();
        Transform { node, moves }
    }

    /// `_apply_transform(transform, scope)` for plain values, e.g. a scope of
    /// captures and `content`. Placeholder errors are the reference's
    /// `KeyError` / `ValueError`s.
    pub fn apply(&self, scope: &Map) -> Result<Value, FieldError> {
        let scope: IndexMap<String, Obj> = scope
            .iter()
            .map(|(k, v)| (k.clone(), Obj::from_value(v.clone())))
            .collect();
        Ok(self.node.apply(&scope)?.to_value())
    }
}

impl Node {
    fn build(t: &Value, depth: usize) -> Node {
        if depth > MAX_TEMPLATE_DEPTH {
            return Node::TooDeep;
        }
        match t {
            Value::Map(m) => Node::Map(
                m.iter()
                    .map(|(k, v)| (k.clone(), Node::build(v, depth + 1)))
                    .collect(),
            ),
            Value::List(l) => Node::List(l.iter().map(|v| Node::build(v, depth + 1)).collect()),
            Value::Str(s) => match placeholder_fullmatch(s) {
                Some(path) => {
                    let mut parts = path.split('.').map(str::to_owned);
                    let root = parts.next().unwrap_or_default();
                    Node::Placeholder {
                        path: path.to_owned(),
                        root,
                        keys: parts.collect(),
                    }
                }
                None => Node::Literal(t.clone()),
            },
            other => Node::Literal(other.clone()),
        }
    }

    /// Builds the output: new dicts and lists for the template's own, the
    /// scope's objects themselves for placeholders.
    fn apply(&self, scope: &IndexMap<String, Obj>) -> Result<Obj, PyErr> {
        match self {
            Node::Map(entries) => {
                let mut out = IndexMap::with_capacity(entries.len());
                for (k, v) in entries {
                    out.insert(k.clone(), v.apply(scope)?);
                }
                Ok(Obj::new_dict(out))
            }
            Node::List(items) => Ok(Obj::List(
                items
                    .iter()
                    .map(|n| n.apply(scope))
                    .collect::<Result<_, _>>()?,
            )),
            Node::Literal(v) => Ok(Obj::Scalar(v.clone())),
            Node::TooDeep => Err(PyErr::recursion("")),
            Node::Placeholder { path, root, keys } => {
                let Some(mut value) = scope.get(root).cloned() else {
                    return Err(PyErr::key_error_str(&format!(
                        "transform placeholder '{{{path}}}' is not defined. Available: {}",
                        sorted_repr(scope.keys().map(String::as_str))
                    )));
                };
                for key in keys {
                    let Obj::Dict(d) = &value else {
                        return Err(PyErr::value(format!(
                            "transform placeholder '{{{path}}}' cannot index into {} at '{key}'",
                            value.type_name()
                        )));
                    };
                    let next = {
                        let d = d.borrow();
                        match d.get(key) {
                            Some(v) => v.clone(),
                            None => {
                                return Err(PyErr::value(format!(
                                    "transform placeholder '{{{path}}}' is missing key '{key}'. Available: {}",
                                    sorted_repr(d.keys().map(String::as_str))
                                )));
                            }
                        }
                    };
                    value = next;
                }
                Ok(value)
            }
        }
    }
}

/// [`finish_parsed`] without `tools=`: the same results and errors as the
/// object model, on plain values.
fn finish_plain(
    value: Value,
    transform: &Transform,
    transform_each: bool,
    captures: &[(String, String)],
    field_name: &str,
) -> Result<Value, FieldError> {
    let (node, moves) = (&transform.node, &transform.moves[..]);
    if !transform_each {
        // `{**captures, "content": value}`
        let mut scope = PlainScope {
            captures,
            content: Some(value),
            item: None,
        };
        return node.apply_plain(&mut scope, moves);
    }
    let out = each_item(value, field_name, |item| {
        // `{**captures, **item}`
        let mut scope = PlainScope {
            captures,
            content: None,
            item: Some(item),
        };
        node.apply_plain(&mut scope, moves)
    })?;
    Ok(Value::List(out))
}

/// The scope a transform is applied in without coercion, read where it
/// lies: `{**captures, "content": value}` or `{**captures, **item}`. The
/// reference builds that dict; building it here cost a map, its keys and
/// its hashing per region, for the two or three lookups a transform makes.
struct PlainScope<'a> {
    /// The region's named groups (a later one of the same name wins, as in
    /// the dict).
    captures: &'a [(String, String)],
    /// `"content"`, until a placeholder moves it out.
    content: Option<Value>,
    /// `transform_each`: the list element's entries.
    item: Option<Map>,
}

/// A scope entry, as [`PlainScope::get`] finds it.
enum Slot<'s> {
    /// An entry holding a value (the content, an item's entry).
    Value(&'s mut Value),
    /// A named group's text.
    Capture(&'s str),
}

impl PlainScope<'_> {
    /// The entry named `root`, if the scope has one.
    fn get(&mut self, root: &str) -> Option<Slot<'_>> {
        if let Some(item) = &mut self.item
            && let Some(v) = item.get_mut(root)
        {
            return Some(Slot::Value(v));
        }
        if root == "content"
            && let Some(v) = &mut self.content
        {
            return Some(Slot::Value(v));
        }
        self.captures
            .iter()
            .rev()
            .find(|(k, _)| k == root)
            .map(|(_, v)| Slot::Capture(v))
    }

    /// The scope's keys, each once (for the error naming them).
    fn keys(&self) -> Vec<&str> {
        let mut keys: Vec<&str> = self.captures.iter().map(|(k, _)| k.as_str()).collect();
        keys.extend(self.item.iter().flat_map(|m| m.keys().map(String::as_str)));
        if self.content.is_some() {
            keys.push("content");
        }
        keys.sort();
        keys.dedup();
        keys
    }
}

/// `transform_each`: `f` of each element of `value`, which must be a list
/// of dicts (the reference's errors otherwise, raised when the element is
/// reached, after the earlier elements' transforms).
fn each_item<T>(
    value: Value,
    field_name: &str,
    mut f: impl FnMut(Map) -> Result<T, PyErr>,
) -> Result<Vec<T>, PyErr> {
    let Value::List(items) = value else {
        return Err(PyErr::value(format!(
            "Field '{field_name}': transform_each requires the parsed content to be a list, got {}.",
            value.type_name()
        )));
    };
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        let Value::Map(item) = item else {
            return Err(PyErr::value(format!(
                "Field '{field_name}': transform_each requires each list element to be a dict, got {}.",
                item.type_name()
            )));
        };
        out.push(f(item)?);
    }
    Ok(out)
}

impl Node {
    /// The roots of the placeholders, once per use (`{content}` twice:
    /// twice).
    fn roots<'n>(&'n self, out: &mut Vec<&'n str>) {
        match self {
            Node::Map(entries) => entries.iter().for_each(|(_, n)| n.roots(out)),
            Node::List(items) => items.iter().for_each(|n| n.roots(out)),
            Node::Placeholder { root, .. } => out.push(root),
            Node::Literal(_) | Node::TooDeep => {}
        }
    }

    /// [`Node::apply`] on plain values: placeholders copy what they point
    /// at, or move it when theirs is the only use of a scope entry taken
    /// whole (`moves`: see [`Transform::moves`]).
    fn apply_plain(&self, scope: &mut PlainScope<'_>, moves: &[String]) -> Result<Value, PyErr> {
        match self {
            Node::Map(entries) => {
                let mut out = crate::value::map_with_capacity(entries.len());
                for (k, v) in entries {
                    out.insert(k.clone(), v.apply_plain(scope, moves)?);
                }
                Ok(Value::Map(out))
            }
            Node::List(items) => Ok(Value::List(
                items
                    .iter()
                    .map(|n| n.apply_plain(scope, moves))
                    .collect::<Result<_, _>>()?,
            )),
            Node::Literal(v) => Ok(v.clone()),
            Node::TooDeep => Err(PyErr::recursion("")),
            Node::Placeholder { path, root, keys } => {
                let once = keys.is_empty() && moves.iter().any(|m| m == root);
                let Some(slot) = scope.get(root) else {
                    let keys = scope.keys();
                    return Err(PyErr::key_error_str(&format!(
                        "transform placeholder '{{{path}}}' is not defined. Available: {}",
                        sorted_repr(keys.into_iter())
                    )));
                };
                let slot = match slot {
                    Slot::Value(v) => v,
                    // A named group's text is a string: it has no keys.
                    Slot::Capture(text) if keys.is_empty() => {
                        return Ok(Value::Str(text.to_owned()));
                    }
                    Slot::Capture(_) => {
                        return Err(PyErr::value(format!(
                            "transform placeholder '{{{path}}}' cannot index into str at '{}'",
                            keys[0]
                        )));
                    }
                };
                if once {
                    return Ok(std::mem::replace(slot, Value::Null));
                }
                let mut value: &Value = slot;
                for key in keys {
                    let Value::Map(d) = value else {
                        return Err(PyErr::value(format!(
                            "transform placeholder '{{{path}}}' cannot index into {} at '{key}'",
                            value.type_name()
                        )));
                    };
                    value = match d.get(key) {
                        Some(v) => v,
                        None => {
                            return Err(PyErr::value(format!(
                                "transform placeholder '{{{path}}}' is missing key '{key}'. Available: {}",
                                sorted_repr(d.keys().map(String::as_str))
                            )));
                        }
                    };
                }
                Ok(value.clone())
            }
        }
    }
}

// ---------------------------------------------------------------------------
// process_field

/// The reference's `process_field` followed by its tool-call coercion: parse
/// `body` with `content`, apply `transform` (per element with
/// `transform_each`) with the region's named `captures` in scope, then, if
/// `tools` has any tool, cast tool-call arguments. `field_name` is used in
/// error messages. Every error is the Python exception the reference raises.
pub fn finish_region(
    content: &ContentSpec,
    transform: Option<&Transform>,
    transform_each: bool,
    body: &str,
    captures: &[(String, String)],
    field_name: &str,
    tools: Option<&ToolSchemas>,
) -> Result<Value, FieldError> {
    let value = content.parse(body)?;
    finish_parsed(
        value,
        transform,
        transform_each,
        captures,
        field_name,
        tools,
    )
}

/// [`finish_region`] after the content parser: `value` is what `content`
/// made of the body (read as it streamed, for instance).
pub fn finish_parsed(
    value: Value,
    transform: Option<&Transform>,
    transform_each: bool,
    captures: &[(String, String)],
    field_name: &str,
    tools: Option<&ToolSchemas>,
) -> Result<Value, FieldError> {
    let tools = tools.filter(|t| !t.is_empty());
    let Some(transform) = transform else {
        return match tools {
            Some(tools) => {
                let obj = Obj::from_value(value);
                Ok(tools.coerce_obj(&obj, 0)?.to_value())
            }
            None => Ok(value),
        };
    };
    if tools.is_none() {
        // Without coercion nothing mutates a dict in place, so object
        // identity cannot show: the transform is applied to the values
        // themselves (a placeholder used once moves its value).
        return finish_plain(value, transform, transform_each, captures, field_name);
    }
    let capture_scope = || -> IndexMap<String, Obj> {
        captures
            .iter()
            .map(|(k, v)| (k.clone(), Obj::Scalar(Value::Str(v.clone()))))
            .collect()
    };
    let out = if transform_each {
        Obj::List(each_item(value, field_name, |item| {
            // `{**captures, **item}`
            let mut scope = capture_scope();
            for (k, v) in item {
                scope.insert(k, Obj::from_value(v));
            }
            transform.node.apply(&scope)
        })?)
    } else {
        // `{**captures, "content": value}`
        let mut scope = capture_scope();
        scope.insert("content".to_owned(), Obj::from_value(value));
        transform.node.apply(&scope)?
    };
    match tools {
        Some(tools) => Ok(tools.coerce_obj(&out, 0)?.to_value()),
        None => Ok(out.to_value()),
    }
}

// ---------------------------------------------------------------------------
// Tool-argument coercion

/// The parameter types of the tools given to a parser, by tool name: what
/// the reference's `ResponseParser.__init__` collects into `_tool_params`.
#[derive(Clone, Debug, Default)]
pub struct ToolSchemas {
    /// Tool name → parameter name → `_schema_types(schema)` (or the error
    /// computing it raises, raised when an argument of that name is cast).
    tools: IndexMap<String, IndexMap<String, Result<Vec<String>, PyErr>>>,
}

impl ToolSchemas {
    /// Reads `tools` as the reference's constructor does: for each item, a
    /// dict, either a tool itself or `{"function": tool}`, whose `name` is a
    /// string; its `parameters.properties` (or nothing) are kept; later tools
    /// replace earlier ones of the same name. Anything else is skipped. A
    /// falsy `tools` means none; a truthy value that is not iterable raises
    /// `TypeError` (as `for tool in tools` does).
    pub fn from_tools(tools: &Value) -> Result<ToolSchemas, PyErr> {
        let mut out = ToolSchemas::default();
        if !py::truthy(tools) {
            return Ok(out);
        }
        for tool in py::iterate(tools)? {
            // `tool.get("function", tool)`: a `function` key wins whatever
            // its value, which must then be a dict.
            let func = match &tool {
                Value::Map(m) => m.get("function").unwrap_or(&tool),
                _ => continue,
            };
            let Value::Map(func) = func else { continue };
            let Some(Value::Str(name)) = func.get("name") else {
                continue;
            };
            let properties = match func.get("parameters") {
                Some(Value::Map(p)) => match p.get("properties") {
                    Some(Value::Map(props)) => props
                        .iter()
                        .map(|(k, schema)| (k.clone(), schema_types(schema, 0)))
                        .collect(),
                    _ => IndexMap::new(),
                },
                _ => IndexMap::new(),
            };
            out.tools.insert(name.clone(), properties);
        }
        Ok(out)
    }

    /// Whether no tool was found: the reference then skips coercion entirely.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// `_coerce_tool_calls(value)` on a value that shares nothing with any
    /// other (e.g. the parsed content when the field has no transform).
    /// [`finish_region`] also handles the sharing a transform creates.
    pub fn coerce_tool_calls(&self, value: Value) -> Result<Value, FieldError> {
        if self.is_empty() {
            return Ok(value);
        }
        Ok(self.coerce_obj(&Obj::from_value(value), 0)?.to_value())
    }

    /// `_coerce_tool_calls`: lists are rebuilt (with the same items), tool
    /// calls have their `arguments` dict cast in place.
    fn coerce_obj(&self, v: &Obj, lists: usize) -> Result<Obj, PyErr> {
        match v {
            Obj::List(items) => {
                if lists >= MAX_COERCE_LIST_DEPTH {
                    return Err(PyErr::recursion(""));
                }
                Ok(Obj::List(
                    items
                        .iter()
                        .map(|i| self.coerce_obj(i, lists + 1))
                        .collect::<Result<_, _>>()?,
                ))
            }
            Obj::Dict(d) => {
                self.coerce_call(d, lists)?;
                Ok(v.clone())
            }
            Obj::Scalar(_) => Ok(v.clone()),
        }
    }

    fn coerce_call(
        &self,
        call: &RefCell<IndexMap<String, Obj>>,
        lists: usize,
    ) -> Result<(), PyErr> {
        // Handles are cloned out before anything is borrowed mutably, so the
        // same dict reached along two paths is never borrowed twice.
        let Some(Obj::Dict(func)) = call.borrow().get("function").cloned() else {
            return Ok(());
        };
        let (name, arguments) = {
            let func = func.borrow();
            (func.get("name").cloned(), func.get("arguments").cloned())
        };
        let (Some(Obj::Scalar(Value::Str(name))), Some(Obj::Dict(arguments))) = (name, arguments)
        else {
            return Ok(());
        };
        let Some(properties) = self.tools.get(&name).filter(|p| !p.is_empty()) else {
            return Ok(());
        };
        let json_depth = COERCE_JSON_DEPTH.saturating_sub(2 * lists);
        let mut arguments = arguments.borrow_mut();
        for (key, argument) in arguments.iter_mut() {
            let Some(types) = properties.get(key) else {
                continue;
            };
            let types = types.as_ref().map_err(Clone::clone)?;
            if types.is_empty() {
                continue;
            }
            match argument {
                Obj::Scalar(Value::Str(raw)) => {
                    *argument = Obj::from_value(coerce(raw, types, json_depth)?);
                }
                // Values collected by `merge_duplicates`: a new list, its
                // non-string items kept as they are (the same objects).
                Obj::List(items) if !types.iter().any(|t| t == "array") => {
                    let mut cast = Vec::with_capacity(items.len());
                    for item in items.iter() {
                        cast.push(match item.as_str() {
                            Some(raw) => Obj::from_value(coerce(raw, types, json_depth)?),
                            None => item.clone(),
                        });
                    }
                    *argument = Obj::List(cast);
                }
                _ => {}
            }
        }
        Ok(())
    }
}

/// `_schema_types(schema)`: the declared type names, in order: `type` (a
/// string or the strings of a list), then those of each `anyOf` and `oneOf`
/// choice, then `"null"` if `nullable` is truthy and it is not there yet.
fn schema_types(schema: &Value, depth: usize) -> Result<Vec<String>, PyErr> {
    let Value::Map(schema) = schema else {
        return Ok(Vec::new());
    };
    if depth > MAX_TEMPLATE_DEPTH {
        return Err(PyErr::recursion(""));
    }
    let mut types = Vec::new();
    match schema.get("type") {
        Some(Value::Str(t)) => types.push(t.clone()),
        Some(Value::List(ts)) => {
            types.extend(ts.iter().filter_map(|t| t.as_str().map(str::to_owned)))
        }
        _ => {}
    }
    for union in ["anyOf", "oneOf"] {
        // `schema.get(union) or []`, then iterated: a dict yields its keys and
        // a string its characters (neither has types); a truthy number or
        // `true` is not iterable.
        let Some(choices) = schema.get(union).filter(|c| py::truthy(c)) else {
            continue;
        };
        for choice in py::iterate(choices)? {
            types.extend(schema_types(&choice, depth + 1)?);
        }
    }
    if schema.get("nullable").is_some_and(py::truthy) && !types.iter().any(|t| t == "null") {
        types.push("null".to_owned());
    }
    Ok(types)
}

/// `_coerce(raw, types)`: the first declared type that `raw` casts to wins;
/// otherwise `raw` stays a string. Only a `RecursionError` from `json.loads`
/// escapes (the reference catches `ValueError` only).
fn coerce(raw: &str, types: &[String], json_depth: usize) -> Result<Value, PyErr> {
    for t in types {
        match t.as_str() {
            "integer" => {
                if let Ok(v) = parse_int(raw) {
                    return Ok(v);
                }
                // JSON Schema integers include whole numbers written as
                // floats, e.g. "3.0".
                if let Ok(f) = parse_float(raw)
                    && float_is_integer(f)
                    && let Ok(v) = int_of_float(f)
                {
                    return Ok(v);
                }
            }
            "number" => {
                if let Ok(f) = parse_float(raw)
                    && f.is_finite()
                {
                    // Ints stay ints when the text had no '.'.
                    if float_is_integer(f)
                        && !raw.contains('.')
                        && let Ok(v) = int_of_float(f)
                    {
                        return Ok(v);
                    }
                    return Ok(Value::Float(f));
                }
            }
            "boolean" => {
                let s = py::strip(raw);
                // `s.lower()` compared with ASCII words: see the `bool` parser.
                if ["true", "1"].iter().any(|w| s.eq_ignore_ascii_case(w)) {
                    return Ok(Value::Bool(true));
                }
                if ["false", "0"].iter().any(|w| s.eq_ignore_ascii_case(w)) {
                    return Ok(Value::Bool(false));
                }
            }
            "null" => {
                if matches!(py::strip(raw), "null" | "None") {
                    return Ok(Value::Null);
                }
            }
            "object" | "array" => match json_loads_with_depth(raw, json_depth) {
                Ok(v @ Value::Map(_)) if t == "object" => return Ok(v),
                Ok(v @ Value::List(_)) if t == "array" => return Ok(v),
                Ok(_) => {}
                Err(e @ py::JsonError::Recursion(_)) => {
                    return Err(PyErr::new(PyExc::RecursionError, e.to_string()));
                }
                Err(_) => {}
            },
            _ => {}
        }
    }
    Ok(Value::Str(raw.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Value {
        Value::from(&serde_json::from_str::<serde_json::Value>(s).unwrap())
    }

    #[test]
    fn placeholders() {
        assert_eq!(placeholder_fullmatch("{a.b_1.é}"), Some("a.b_1.é"));
        for s in ["{a.}", "{.a}", "{a..b}", "{}", "{a b}", "{a}}", "x{a}"] {
            assert_eq!(placeholder_fullmatch(s), None, "{s}");
        }
        assert!(placeholder_search("x {a.b} y"));
        assert!(placeholder_search("{{a}}"));
        assert!(!placeholder_search("{a.} {b c} {}"));
        assert!(validate_transform("F", &v(r#"{"a": ["{x}", 1, "plain {"]}"#)).is_ok());
        let e = validate_transform("Field 'f'", &v(r#"{"a": ["pre {x}"]}"#)).unwrap_err();
        assert!(
            e.starts_with(
                "Field 'f': transform string 'pre {x}' mixes a {placeholder} with literal text."
            ),
            "{e}"
        );
    }

    #[test]
    fn apply_and_errors() {
        let t = Transform::new(&v(
            r#"{"f": {"n": "{name}", "a": "{content.args}"}, "k": [1, "{name}"]}"#,
        ));
        let mut scope = Map::default();
        scope.insert("name".into(), Value::Str("get".into()));
        scope.insert("content".into(), v(r#"{"args": {"x": 1}}"#));
        assert_eq!(
            t.apply(&scope).unwrap().to_json_string(),
            r#"{"f": {"n": "get", "a": {"x": 1}}, "k": [1, "get"]}"#
        );
        let e = Transform::new(&v(r#""{nope}""#)).apply(&scope).unwrap_err();
        assert_eq!(e.kind, PyExc::KeyError);
        assert_eq!(
            e.message,
            "\"transform placeholder '{nope}' is not defined. Available: ['content', 'name']\""
        );
        let e = Transform::new(&v(r#""{name.x}""#))
            .apply(&scope)
            .unwrap_err();
        assert_eq!(
            e.message,
            "transform placeholder '{name.x}' cannot index into str at 'x'"
        );
        let e = Transform::new(&v(r#""{content.y}""#))
            .apply(&scope)
            .unwrap_err();
        assert_eq!(
            e.message,
            "transform placeholder '{content.y}' is missing key 'y'. Available: ['args']"
        );
    }

    fn tools() -> ToolSchemas {
        ToolSchemas::from_tools(&v(r#"[
            {"type": "function", "function": {"name": "f", "parameters": {"properties": {
                "i": {"type": "integer"}, "n": {"type": ["number", "null"]}, "b": {"anyOf": [{"type": "boolean"}]},
                "o": {"type": "object"}, "s": {"type": "string"}, "l": {"type": "integer", "nullable": true}}}}},
            {"name": "g", "parameters": {"properties": {"i": {"type": "string"}}}},
            "junk", 5
        ]"#))
        .unwrap()
    }

    #[test]
    fn coercion_casts() {
        let t = tools();
        let call = v(
            r#"{"function": {"name": "f", "arguments": {"i": "3.0", "n": "1e3", "b": " TRUE ", "o": "{\"a\": 1}", "s": "5", "l": ["7", 8, "None"], "x": "1"}}}"#,
        );
        let out = t.coerce_tool_calls(call).unwrap();
        assert_eq!(
            out.to_json_string(),
            r#"{"function": {"name": "f", "arguments": {"i": 3, "n": 1000, "b": true, "o": {"a": 1}, "s": "5", "l": [7, 8, null], "x": "1"}}}"#
        );
        let out = t
            .coerce_tool_calls(v(
                r#"[{"function": {"name": "f", "arguments": {"n": "nan", "i": "1.5"}}}]"#,
            ))
            .unwrap();
        assert_eq!(
            out.to_json_string(),
            r#"[{"function": {"name": "f", "arguments": {"n": "nan", "i": "1.5"}}}]"#
        );
        assert!(ToolSchemas::from_tools(&Value::Int(5)).is_err());
        assert!(ToolSchemas::from_tools(&Value::Int(0)).unwrap().is_empty());
    }

    #[test]
    fn coercion_sees_shared_objects() {
        let content = ContentSpec::new("json", &Value::Map(Map::default()));
        let t = Transform::new(&v(
            r#"{"function": {"name": "{name}", "arguments": "{content}"}, "raw": "{content}", "copy": "{content.i}"}"#,
        ));
        let caps = [("name".to_owned(), "f".to_owned())];
        let out = finish_region(
            &content,
            Some(&t),
            false,
            r#"{"i": "4"}"#,
            &caps,
            "tc",
            Some(&tools()),
        )
        .unwrap();
        // `raw` is the same dict as `arguments`; `copy` holds the old string.
        assert_eq!(
            out.to_json_string(),
            r#"{"function": {"name": "f", "arguments": {"i": 4}}, "raw": {"i": 4}, "copy": "4"}"#
        );
    }

    #[test]
    fn transform_each_checks() {
        let content = ContentSpec::new("json", &Value::Map(Map::default()));
        let t = Transform::new(&v(r#"{"n": "{tool}"}"#));
        let out = finish_region(
            &content,
            Some(&t),
            true,
            r#"[{"tool": "a"}, {"tool": "b"}]"#,
            &[],
            "f",
            None,
        );
        assert_eq!(out.unwrap().to_json_string(), r#"[{"n": "a"}, {"n": "b"}]"#);
        let e =
            finish_region(&content, Some(&t), true, r#"{"tool": 1}"#, &[], "f", None).unwrap_err();
        assert_eq!(
            e.message,
            "Field 'f': transform_each requires the parsed content to be a list, got dict."
        );
        let e = finish_region(&content, Some(&t), true, r#"[1]"#, &[], "f", None).unwrap_err();
        assert_eq!(
            e.message,
            "Field 'f': transform_each requires each list element to be a dict, got int."
        );
    }
}
