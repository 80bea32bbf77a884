//! Response templates: loading, validation, and the compiled form the engine
//! runs.
//!
//! Validation follows the reference's loader check by check, so that exactly
//! the templates it rejects are rejected, and reports the first problem the
//! reference would report. Each error names the rule, the JSON path, and —
//! for templates loaded from text — the line and column.
//!
//! Some settings are deliberately *not* validated at load time because the
//! reference does not validate them either: `content_args` are interpreted
//! when a region is parsed (so a bad `tag_pattern` is an error only if such
//! a region occurs), and `repeats` / `optional` use Python truthiness.

pub mod describe;
pub mod error;
pub mod locate;

use crate::content::ContentSpec;
#[cfg(feature = "dynamic")]
use crate::content::PARSER_NAMES;
#[cfg(feature = "dynamic")]
use crate::py::{JsonError, json_loads, truthy};
use crate::scan::delimiter::{Delimiter, DelimiterSource, Matcher, Trackers};
use crate::scan::stream::{Kind, Watch, WatchSet};
use crate::transform::Transform;
#[cfg(feature = "dynamic")]
use crate::transform::validate_transform;
use crate::value::Map;
#[cfg(feature = "dynamic")]
use crate::value::Value;
pub use error::{Rule, TemplateError};
use locate::{Location, Seg};

/// One field of a template: a key of the output message.
#[derive(Clone, Debug)]
pub struct Field {
    /// The field's name (the message key).
    pub name: String,
    /// The delimiter that opens the region, or `None` for the implicit field.
    pub open: Option<u16>,
    /// The delimiter that closes the region, or `None` (runs to the end).
    pub close: Option<u16>,
    /// The content parser and its arguments.
    pub content: ContentSpec,
    /// Whether chunks of this region are raw text that needs parsing.
    pub dirty: bool,
    /// The value is a list; each region appends.
    pub repeats: bool,
    /// Matches are concatenated with this separator instead of listed.
    pub join: Option<String>,
    /// Whether the field may be absent from the message.
    pub optional: bool,
    /// The transform applied to the parsed body.
    pub transform: Option<Transform>,
    /// Whether the transform applies to each element of a list body.
    pub transform_each: bool,
    /// Rank of the name in sorted order (for the reference's last tie-break).
    pub name_rank: u16,
}

/// A validated, compiled response template.
#[derive(Clone, Debug)]
pub struct Template {
    pub(crate) defaults: Map,
    pub(crate) fields: Vec<Field>,
    pub(crate) implicit: Option<u16>,
    pub(crate) start_anchor: Delimiter,
    pub(crate) delimiters: Vec<Delimiter>,
    pub(crate) trackers: Trackers,
    /// `watch_sets[f]` for explicit field `f`; `watch_sets[fields.len()]` for
    /// the implicit (or null) region.
    pub(crate) watch_sets: Vec<WatchSet>,
    pub(crate) needs_history: bool,
    /// Whether the parser may scan a fed piece where it lies: no delimiter
    /// looks at text before its start (lookbehind, `^`, `\b`, the
    /// backtracking path), so text already decided can be forgotten.
    pub(crate) scan_in_place: bool,
    /// The start anchor when it is one literal: the prompt is then searched
    /// with `memmem` rather than the regex.
    pub(crate) anchor_finder: Option<memchr::memmem::Finder<'static>>,
    /// Per delimiter, whether its pattern may take the rest of the output
    /// (it holds `[\s\S]*`: an end-of-turn close that keeps what follows
    /// the marker out of every field).
    takes_rest: Vec<bool>,
    /// Per delimiter, its marker: the pattern without `[\s\S]*`, compiled
    /// the first time such a close takes text after its marker.
    end_markers: Vec<std::sync::OnceLock<Option<EndMarker>>>,
}

/// The marker of a close that takes the rest of the output: what the close
/// matches without its `[\s\S]*`.
#[derive(Clone, Debug)]
pub(crate) enum EndMarker {
    /// A literal (`<|im_end|>`): its length says where it ends.
    Literal(String),
    /// Any other pattern, matched at the close's start.
    Pattern(retort_pyre::Regex),
}

/// How a pattern takes the rest of the output.
const REST: [&str; 2] = ["[\\s\\S]*", "[\\S\\s]*"];

#[cfg(feature = "dynamic")]
struct Problem {
    rule: Rule,
    path: Vec<Seg>,
    message: String,
}

#[cfg(feature = "dynamic")]
fn problem(rule: Rule, path: &[Seg], message: impl Into<String>) -> Problem {
    Problem {
        rule,
        path: path.to_vec(),
        message: message.into(),
    }
}

#[cfg(feature = "dynamic")]
fn key(path: &[Seg], k: &str) -> Vec<Seg> {
    let mut p = path.to_vec();
    p.push(Seg::Key(k.to_owned()));
    p
}

/// Formats a path as `fields.tool_calls.open[1]`.
pub fn path_string(path: &[Seg]) -> String {
    let mut out = String::new();
    for seg in path {
        match seg {
            Seg::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            Seg::Index(i) => {
                out.push_str(&format!("[{i}]"));
            }
        }
    }
    out
}

/// A Python-style repr of a list of names, for messages (`['a', 'b']`).
#[cfg(feature = "dynamic")]
fn py_list(names: &[&str]) -> String {
    let inner: Vec<String> = names.iter().map(|n| format!("'{n}'")).collect();
    format!("[{}]", inner.join(", "))
}

/// The keys a template may have; any other is [`Rule::UnknownKey`].
pub const TEMPLATE_KEYS: [&str; 5] = [
    "version",
    "defaults",
    "fields",
    "start_anchor",
    "start_anchor_pattern",
];
/// The keys a field may have; any other is [`Rule::UnknownKey`].
pub const FIELD_KEYS: [&str; 11] = [
    "open",
    "open_pattern",
    "close",
    "close_pattern",
    "content",
    "content_args",
    "repeats",
    "join",
    "optional",
    "transform",
    "transform_each",
];

/// The largest template text [`Template::from_json`] reads, in bytes
/// (32 MiB). A response template is a few kilobytes and a whole
/// `tokenizer_config.json` rarely more than a few megabytes; the bound keeps
/// a hostile file from costing unbounded memory while it is decoded. Raise it
/// with [`Template::from_json_limited`].
pub const MAX_TEMPLATE_BYTES: usize = 32 << 20;

impl Template {
    /// Loads a template from JSON text: either a bare response template, or a
    /// `tokenizer_config.json` that holds one under `response_template`.
    /// Text longer than [`MAX_TEMPLATE_BYTES`] is refused ([`Rule::Source`]).
    #[cfg(feature = "dynamic")]
    pub fn from_json(text: &str) -> Result<Template, TemplateError> {
        Self::from_json_limited(text, MAX_TEMPLATE_BYTES)
    }

    /// [`Template::from_json`] with another size limit, in bytes.
    #[cfg(feature = "dynamic")]
    pub fn from_json_limited(text: &str, max_bytes: usize) -> Result<Template, TemplateError> {
        if text.len() > max_bytes {
            return Err(TemplateError {
                rule: Rule::Source,
                path: String::new(),
                location: None,
                message: format!(
                    "the template text is {} bytes, more than the limit of {max_bytes} bytes \
                     (Template::from_json_limited raises it)",
                    text.len()
                ),
            });
        }
        let value = json_loads(text).map_err(|e| {
            let location = match &e {
                JsonError::Decode { pos, .. } => {
                    let offset = text.char_indices().nth(*pos).map_or(text.len(), |(i, _)| i);
                    Some(locate::location_of(text, offset))
                }
                _ => None,
            };
            TemplateError {
                rule: Rule::Json,
                path: String::new(),
                location,
                message: e.to_string(),
            }
        })?;
        let (doc, base) = match &value {
            Value::Map(m) if !m.contains_key("fields") && m.contains_key("response_template") => (
                &m["response_template"],
                vec![Seg::Key("response_template".into())],
            ),
            _ => (&value, Vec::new()),
        };
        Self::build(doc, &base).map_err(|p| {
            let location = locate::find(text, &p.path).map(|o| locate::location_of(text, o));
            TemplateError {
                rule: p.rule,
                path: path_string(&p.path),
                location,
                message: p.message,
            }
        })
    }

    /// Loads a template from an already-parsed JSON value.
    #[cfg(feature = "dynamic")]
    pub fn from_value(value: &Value) -> Result<Template, TemplateError> {
        Self::build(value, &[]).map_err(|p| TemplateError {
            rule: p.rule,
            path: path_string(&p.path),
            location: None,
            message: p.message,
        })
    }

    #[cfg(feature = "dynamic")]
    fn build(spec: &Value, base: &[Seg]) -> Result<Template, Problem> {
        // _validate_template_shape
        let Value::Map(spec) = spec else {
            return Err(problem(
                Rule::NotAnObject,
                base,
                format!("response_template must be a dict, got {}", spec.type_name()),
            ));
        };
        if let Some(v) = spec.get("version") {
            // Python compares with `!=`, so 1, 1.0 and true are all version 1.
            let one = matches!(v, Value::Int(1) | Value::Bool(true))
                || matches!(v, Value::Float(f) if *f == 1.0);
            if !one {
                return Err(problem(
                    Rule::Version,
                    &key(base, "version"),
                    format!(
                        "Unsupported response_template version: {}",
                        v.to_json_string()
                    ),
                ));
            }
        }
        let mut unknown: Vec<&str> = spec
            .keys()
            .map(String::as_str)
            .filter(|k| !TEMPLATE_KEYS.contains(k))
            .collect();
        if !unknown.is_empty() {
            unknown.sort_unstable();
            return Err(problem(
                Rule::UnknownKey,
                &key(base, unknown[0]),
                format!("Unknown keys in response_template: {}", py_list(&unknown)),
            ));
        }
        let defaults = match spec.get("defaults") {
            None => Map::default(),
            Some(Value::Map(m)) => m.clone(),
            Some(_) => {
                return Err(problem(
                    Rule::DefaultsNotAnObject,
                    &key(base, "defaults"),
                    "response_template.defaults must be a dict",
                ));
            }
        };
        let fields_raw = match spec.get("fields") {
            Some(Value::Map(m)) if !m.is_empty() => m,
            _ => {
                let at = if spec.contains_key("fields") {
                    key(base, "fields")
                } else {
                    base.to_vec()
                };
                return Err(problem(
                    Rule::NoFields,
                    &at,
                    "response_template.fields must be a non-empty dict",
                ));
            }
        };

        let mut trackers = Trackers::default();
        let mut delimiters = Vec::new();
        let mut fields = Vec::new();
        let fields_path = key(base, "fields");
        for (name, raw) in fields_raw {
            let path = key(&fields_path, name);
            fields.push(build_field(
                name,
                raw,
                &path,
                &mut delimiters,
                &mut trackers,
            )?);
        }
        let implicit: Vec<usize> = (0..fields.len())
            .filter(|&i| fields[i].open.is_none())
            .collect();
        if implicit.len() > 1 {
            let names: Vec<&str> = implicit.iter().map(|&i| fields[i].name.as_str()).collect();
            return Err(problem(
                Rule::SeveralImplicitFields,
                &key(&fields_path, names[1]),
                format!(
                    "At most one field may omit 'open'/'open_pattern' (that field becomes the \
                     implicit-open / leftover sink). Found: {}",
                    names.join(", ")
                ),
            ));
        }
        let start_anchor = match compile_anchor(
            "response_template",
            spec,
            "start_anchor",
            "start_anchor_pattern",
            base,
            &mut trackers,
        )? {
            Some(d) => d,
            None => {
                return Err(problem(
                    Rule::NoStartAnchor,
                    base,
                    "response_template must define 'start_anchor' or 'start_anchor_pattern'.",
                ));
            }
        };
        Ok(Template::assemble(
            defaults,
            fields,
            start_anchor,
            delimiters,
            trackers,
        ))
    }

    /// Puts together a template from its validated, compiled parts: derives
    /// the implicit field, the tie-break ranks and the watch sets. Cheap (no
    /// pattern is compiled); compiled parsers call it once per process.
    #[doc(hidden)]
    pub fn assemble(
        defaults: Map,
        mut fields: Vec<Field>,
        start_anchor: Delimiter,
        delimiters: Vec<Delimiter>,
        trackers: Trackers,
    ) -> Template {
        let implicit = fields
            .iter()
            .position(|f| f.open.is_none())
            .map(|i| i as u16);
        // The reference breaks the last tie between delimiters by field name.
        let mut by_name: Vec<usize> = (0..fields.len()).collect();
        by_name.sort_by(|&a, &b| fields[a].name.cmp(&fields[b].name));
        for (rank, &i) in by_name.iter().enumerate() {
            fields[i].name_rank = rank as u16;
        }
        let delims = &delimiters;
        let mut watch_sets = Vec::with_capacity(fields.len() + 1);
        for (i, f) in fields.iter().enumerate() {
            let entries = match (f.open, f.close) {
                (Some(_), Some(c)) => vec![Watch {
                    delim: c,
                    kind: Kind::Close,
                    field: i as u16,
                    name_rank: f.name_rank,
                }],
                _ => Vec::new(),
            };
            watch_sets.push(entries);
        }
        let mut top = Vec::new();
        for (i, f) in fields.iter().enumerate() {
            if let Some(o) = f.open {
                top.push(Watch {
                    delim: o,
                    kind: Kind::Open,
                    field: i as u16,
                    name_rank: f.name_rank,
                });
            }
        }
        if let Some(imp) = implicit {
            let f = &fields[imp as usize];
            if let Some(c) = f.close {
                top.push(Watch {
                    delim: c,
                    kind: Kind::Close,
                    field: imp,
                    name_rank: f.name_rank,
                });
            }
        }
        watch_sets.push(top);
        let watch_sets = watch_sets
            .into_iter()
            .map(|e| WatchSet::new(e, delims))
            .collect();
        let needs_history = delimiters.iter().any(|d| d.needs_history);
        let scan_in_place = !needs_history
            && delimiters.iter().all(|d| match &d.matcher {
                Matcher::Dfa(branches) => branches.iter().all(|b| b.table.context_free()),
                Matcher::Backtrack => false,
            });
        let anchor_finder = match &start_anchor.source {
            DelimiterSource::Literals(lits) if lits.len() == 1 && !lits[0].is_empty() => {
                Some(memchr::memmem::Finder::new(lits[0].as_bytes()).into_owned())
            }
            _ => None,
        };
        let takes_rest = delimiters
            .iter()
            .map(|d| REST.iter().any(|r| d.regex.pattern().contains(r)))
            .collect();
        let end_markers = delimiters
            .iter()
            .map(|_| std::sync::OnceLock::new())
            .collect();
        Template {
            takes_rest,
            end_markers,
            anchor_finder,
            defaults,
            fields,
            implicit,
            start_anchor,
            delimiters,
            trackers,
            watch_sets,
            needs_history,
            scan_in_place,
        }
    }

    /// Whether delimiter `d` may take the rest of the output.
    #[inline]
    pub(crate) fn takes_the_rest(&self, d: u16) -> bool {
        self.takes_rest
            .get(usize::from(d))
            .copied()
            .unwrap_or(false)
    }

    /// Delimiter `d`'s marker (its pattern without what takes the rest),
    /// for a delimiter that [takes the rest](Template::takes_the_rest).
    pub(crate) fn end_marker(&self, d: usize) -> Option<&EndMarker> {
        let cell = self.end_markers.get(d)?;
        cell.get_or_init(|| {
            let mut pattern = self.delimiters[d].regex.pattern().to_owned();
            for r in REST {
                pattern = pattern.replace(r, "");
            }
            let regex = retort_pyre::Regex::new(&pattern).ok()?;
            Some(match regex.literal_sequence().map(|s| s.pieces) {
                Some(pieces) => match pieces.as_slice() {
                    [retort_pyre::SeqPiece::Lit(l)] => EndMarker::Literal(l.clone()),
                    _ => EndMarker::Pattern(regex),
                },
                None => EndMarker::Pattern(regex),
            })
        })
        .as_ref()
    }

    /// The fields, in template order.
    pub fn fields(&self) -> &[Field] {
        &self.fields
    }

    /// The default values every message starts with.
    pub fn defaults(&self) -> &Map {
        &self.defaults
    }

    /// The implicit field (the one without an open delimiter), if any.
    pub fn implicit_field(&self) -> Option<&Field> {
        self.implicit.map(|i| &self.fields[i as usize])
    }

    /// Index of the field named `name`.
    pub fn field_index(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|f| f.name == name)
    }

    /// The parser's states: per explicit field `f`, `watch_sets()[f]` (the
    /// delimiters that can end its region), and last the state outside
    /// explicit regions. Each holds the delimiters watched there, in the
    /// reference's order, with what the scanner precomputed.
    pub fn watch_sets(&self) -> &[WatchSet] {
        &self.watch_sets
    }

    /// The delimiter with index `i` (as in [`Field::open`] / [`Field::close`]).
    pub fn delimiter(&self, i: usize) -> &Delimiter {
        &self.delimiters[i]
    }

    /// Every delimiter, by index.
    pub fn delimiters(&self) -> &[Delimiter] {
        &self.delimiters
    }

    /// Whether every delimiter runs on automata (no backtracking path).
    pub fn is_linear(&self) -> bool {
        self.delimiters.iter().all(Delimiter::is_dfa)
    }
}

#[cfg(feature = "dynamic")]
fn build_field(
    name: &str,
    raw: &Value,
    path: &[Seg],
    delimiters: &mut Vec<Delimiter>,
    trackers: &mut Trackers,
) -> Result<Field, Problem> {
    let scope = format!("Field '{name}'");
    let Value::Map(field) = raw else {
        return Err(problem(
            Rule::NotAnObject,
            path,
            format!("{scope} must be a dict"),
        ));
    };
    let mut unknown: Vec<&str> = field
        .keys()
        .map(String::as_str)
        .filter(|k| !FIELD_KEYS.contains(k))
        .collect();
    if !unknown.is_empty() {
        unknown.sort_unstable();
        return Err(problem(
            Rule::UnknownKey,
            &key(path, unknown[0]),
            format!("{scope}: unknown keys {}", py_list(&unknown)),
        ));
    }
    let content = match field.get("content") {
        None => "text",
        Some(Value::Str(s)) if PARSER_NAMES.contains(&s.as_str()) => s.as_str(),
        Some(other) => {
            let shown = match other {
                Value::Str(s) => s.clone(),
                v => v.to_json_string(),
            };
            return Err(problem(
                Rule::UnknownContentParser,
                &key(path, "content"),
                format!(
                    "{scope}: unknown content parser '{shown}'. Available: {}",
                    {
                        // The reference lists them `sorted`.
                        let mut names = PARSER_NAMES;
                        names.sort_unstable();
                        py_list(&names)
                    }
                ),
            ));
        }
    };
    let open = compile_anchor(&scope, field, "open", "open_pattern", path, trackers)?;
    let close = compile_anchor(&scope, field, "close", "close_pattern", path, trackers)?;
    let join = match field.get("join") {
        None | Some(Value::Null) => None,
        Some(Value::Str(s)) => Some(s.clone()),
        Some(other) => {
            return Err(problem(
                Rule::JoinType,
                &key(path, "join"),
                format!(
                    "{scope}: 'join' must be a string, got {}",
                    other.type_name()
                ),
            ));
        }
    };
    let repeats = field.get("repeats").is_some_and(truthy);
    if join.is_some() && !repeats {
        return Err(problem(
            Rule::JoinWithoutRepeats,
            &key(path, "join"),
            format!("{scope}: 'join' requires 'repeats': true"),
        ));
    }
    let transform_raw = field.get("transform").filter(|v| !matches!(v, Value::Null));
    let transform_each = match field.get("transform_each") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            return Err(problem(
                Rule::TransformEachType,
                &key(path, "transform_each"),
                format!(
                    "{scope}: transform_each must be a bool, got {}",
                    other.type_name()
                ),
            ));
        }
    };
    if transform_each && transform_raw.is_none() {
        return Err(problem(
            Rule::TransformEachWithoutTransform,
            &key(path, "transform_each"),
            format!("{scope}: transform_each is set but no transform was provided"),
        ));
    }
    let transform = match transform_raw {
        Some(t) => {
            validate_transform(&scope, t).map_err(|message| {
                problem(Rule::MixedPlaceholder, &key(path, "transform"), message)
            })?;
            Some(Transform::new(t))
        }
        None => {
            let mut names: Vec<&str> = Vec::new();
            for d in [&open, &close].into_iter().flatten() {
                names.extend(d.regex.group_names().iter().map(|(n, _)| n.as_str()));
            }
            if !names.is_empty() {
                names.sort_unstable();
                names.dedup();
                let at = if field.contains_key("open_pattern") {
                    "open_pattern"
                } else {
                    "close_pattern"
                };
                return Err(problem(
                    Rule::NamedGroupsWithoutTransform,
                    &key(path, at),
                    format!(
                        "{scope}: open_pattern/close_pattern declares named group(s) {}, but the field has no \
                         'transform'. Named captures are only surfaced through a 'transform' template (where \
                         they appear alongside 'content'). Either add a 'transform' that uses the captures, or \
                         remove the named groups from the pattern.",
                        py_list(&names)
                    ),
                ));
            }
            None
        }
    };
    let empty_args = Value::Map(Map::default());
    let content_args = field.get("content_args").unwrap_or(&empty_args);
    let content = ContentSpec::new(content, content_args);
    let dirty = content.dirty();
    let mut push = |d: Option<Delimiter>| {
        d.map(|d| {
            delimiters.push(d);
            (delimiters.len() - 1) as u16
        })
    };
    let open = push(open);
    let close = push(close);
    Ok(Field {
        name: name.to_owned(),
        open,
        close,
        content,
        dirty,
        repeats,
        join,
        optional: field.get("optional").is_none_or(truthy),
        transform,
        transform_each,
        name_rank: 0,
    })
}

/// `_compile_anchor`: a delimiter from the literal key or the pattern key.
#[cfg(feature = "dynamic")]
fn compile_anchor(
    scope: &str,
    spec: &Map,
    literal_key: &str,
    pattern_key: &str,
    path: &[Seg],
    trackers: &mut Trackers,
) -> Result<Option<Delimiter>, Problem> {
    if spec.contains_key(literal_key) && spec.contains_key(pattern_key) {
        return Err(problem(
            Rule::LiteralAndPattern,
            &key(path, pattern_key),
            format!("{scope}: cannot specify both '{literal_key}' and '{pattern_key}'"),
        ));
    }
    if let Some(raw) = spec.get(literal_key) {
        let at = key(path, literal_key);
        let literals: Vec<String> = match raw {
            Value::Str(s) => vec![s.clone()],
            Value::List(items) => {
                if items.is_empty() {
                    return Err(problem(
                        Rule::EmptyLiteralList,
                        &at,
                        format!("{scope}: '{literal_key}' list must contain at least one literal"),
                    ));
                }
                let mut out: Vec<String> = Vec::new();
                for (i, item) in items.iter().enumerate() {
                    match item {
                        Value::Str(s) => {
                            if !out.contains(s) {
                                out.push(s.clone());
                            }
                        }
                        _ => {
                            let mut p = at.clone();
                            p.push(Seg::Index(i));
                            return Err(problem(
                                Rule::LiteralType,
                                &p,
                                format!("{scope}: '{literal_key}' list must contain only strings"),
                            ));
                        }
                    }
                }
                out
            }
            other => {
                return Err(problem(
                    Rule::LiteralType,
                    &at,
                    format!(
                        "{scope}: '{literal_key}' must be a string or list of strings, got {}",
                        other.type_name()
                    ),
                ));
            }
        };
        if literals.iter().any(String::is_empty) {
            return Err(problem(
                Rule::EmptyLiteral,
                &at,
                format!("{scope}: '{literal_key}' literals cannot be empty strings"),
            ));
        }
        let d = Delimiter::from_literals(literals, trackers).map_err(|e| {
            problem(
                Rule::InvalidPattern,
                &at,
                format!("{scope}: invalid {literal_key}: {e}"),
            )
        })?;
        return Ok(Some(d));
    }
    if let Some(raw) = spec.get(pattern_key) {
        let at = key(path, pattern_key);
        let Value::Str(pattern) = raw else {
            return Err(problem(
                Rule::PatternType,
                &at,
                format!(
                    "{scope}: {pattern_key} must be a string, got {}",
                    raw.type_name()
                ),
            ));
        };
        let d = Delimiter::from_pattern(pattern, trackers).map_err(|e| {
            problem(
                Rule::InvalidPattern,
                &at,
                format!("{scope}: invalid {pattern_key} regex: {e}"),
            )
        })?;
        return Ok(Some(d));
    }
    Ok(None)
}

/// Where a template error points, for callers that hold the source text and
/// want to show a snippet.
pub fn snippet(text: &str, location: &Location) -> String {
    let line = text
        .lines()
        .nth(location.line.saturating_sub(1))
        .unwrap_or("");
    let caret: String = " ".repeat(location.column.saturating_sub(1)) + "^";
    format!("{line}\n{caret}")
}

#[cfg(all(test, feature = "dynamic"))]
mod tests {
    use super::*;

    fn err(text: &str) -> TemplateError {
        Template::from_json(text).expect_err("the template is broken")
    }

    #[test]
    fn text_past_the_size_limit_is_refused_before_it_is_decoded() {
        let text = r#"{"start_anchor": "<a>", "fields": {"x": {}}}"#;
        Template::from_json_limited(text, text.len()).expect("at the limit");
        let e = Template::from_json_limited(text, text.len() - 1).expect_err("past the limit");
        assert_eq!(e.rule, Rule::Source);
        assert!(e.message.contains(&format!("{} bytes", text.len())), "{e}");
        // Even text that is not JSON: the size is checked first.
        let e = Template::from_json_limited("[[[[", 3).expect_err("past the limit");
        assert_eq!(e.rule, Rule::Source);
    }

    #[test]
    fn errors_name_the_rule_the_path_and_the_place() {
        let e = err("{\n  \"start_anchor\": \"<a>\",\n  \"fields\": {\"x\": {\"open\": []}}\n}");
        assert_eq!(e.rule, Rule::EmptyLiteralList);
        assert_eq!(e.path, "fields.x.open");
        assert_eq!(e.location.map(|l| (l.line, l.column)), Some((3, 28)));

        let e = err(r#"{"start_anchor": "<a>", "fields": {"x": {"open": ["a", 1]}}}"#);
        assert_eq!(
            (e.rule, e.path.as_str()),
            (Rule::LiteralType, "fields.x.open[1]")
        );

        let e = err(r#"{"fields": {"x": {"open": "a"}}}"#);
        assert_eq!(e.rule, Rule::NoStartAnchor);

        let e = err(r#"{"start_anchor": "a", "fields": {"x": {}, "y": {}}}"#);
        assert_eq!(
            (e.rule, e.path.as_str()),
            (Rule::SeveralImplicitFields, "fields.y")
        );

        let e = err(r#"{"start_anchor": "a", "fields": {"x": {"open_pattern": "(?P<n>a)"}}}"#);
        assert_eq!(e.rule, Rule::NamedGroupsWithoutTransform);

        let e = err(
            r#"{"start_anchor": "a", "fields": {"x": {"open": "a", "transform": "pre {content}"}}}"#,
        );
        assert_eq!(e.rule, Rule::MixedPlaceholder);

        let e = err("{\"start_anchor\": ");
        assert_eq!(e.rule, Rule::Json);
        assert!(e.location.is_some());
    }

    #[test]
    fn python_semantics_of_template_values() {
        // Version 1 is also 1.0 and true (Python's `!=`); `repeats` is truthy.
        for version in ["1", "1.0", "true"] {
            let t = Template::from_json(&format!(
                r#"{{"version": {version}, "start_anchor": "a", "fields": {{"x": {{"open": "<", "repeats": "yes"}}}}}}"#
            ))
            .unwrap();
            assert!(t.fields()[0].repeats);
        }
        assert_eq!(
            err(r#"{"version": 2, "start_anchor": "a", "fields": {"x": {}}}"#).rule,
            Rule::Version
        );
        // Repeated keys: the last wins, as in Python's json.
        let t = Template::from_json(
            r#"{"start_anchor": "a", "fields": {"x": {"open": 5, "open": "<"}}}"#,
        )
        .unwrap();
        assert_eq!(t.fields()[0].name, "x");
    }

    #[test]
    fn a_tokenizer_config_holds_the_template() {
        let t = Template::from_json(
            r#"{"model_max_length": 8, "response_template": {"start_anchor": "a", "fields": {"c": {}}}}"#,
        )
        .unwrap();
        assert_eq!(t.implicit_field().map(|f| f.name.as_str()), Some("c"));
        let e =
            err(r#"{"response_template": {"start_anchor": "a", "fields": {"c": {"open": ""}}}}"#);
        assert_eq!(e.path, "response_template.fields.c.open");
    }
}
