//! Content parsers: `text`, `int`, `float`, `bool`, `json`, `xml-inline`,
//! `kv-lines`, as the reference's `content_parsers.py` runs them.
//!
//! A [`ContentSpec`] is built once per field when a template is loaded, and
//! building it never fails: the reference does not look at `content_args`
//! until a region is parsed, and some mistakes only surface for some texts
//! (an `xml-inline` pattern without a `key` group fails only once it matches;
//! a bad `kv_sep` only once a non-empty line is seen). So every mistake found
//! while building is stored as a *deferred* [`ContentError`], and
//! [`ContentSpec::parse`] raises it at exactly the point, and for exactly the
//! texts, where the reference would raise.
//!
//! `content_args` are arbitrary JSON, read with Python's duck typing: flags
//! use Python truthiness, and a list where a string is expected is iterated as
//! Python would iterate it. The errors are the Python exceptions with the
//! reference's messages (see [`PyErr`]).

use crate::py::{
    self, JSON_MAX_DEPTH, JsonError, PyErr, PyExc, json_dumps_ascii, json_loads_with_depth,
    repr_str, repr_value, truthy,
};
use crate::pyre::Regex;
use crate::unicode_tables::{REGEX_WORD, in_ranges};
use crate::{Map, Value};

/// A Python exception raised while parsing a region's content: its class
/// ([`PyErr::kind`]) and message (`str(exc)`, [`PyErr::message`]).
pub type ContentError = PyErr;

/// The reference's `_LAX_OPEN` / `_LAX_CLOSE`: the markers that stand in for
/// strings cut out by `string_delims` until they are restored.
const LAX_OPEN: char = '\x01';
const LAX_CLOSE: char = '\x02';

/// How many frames the reference's call stack grows by per nested
/// `value_parser` (`parse_content` → parser → `_sub_parse`): each level leaves
/// that much less of CPython's recursion limit to `json.loads`.
const FRAMES_PER_NESTED_PARSER: usize = 3;

/// Nested `value_parser`s deeper than this are not built; reaching one raises
/// `RecursionError`. (JSON templates cannot nest this deep: serde_json stops
/// at 128 levels, and each parser level takes two.)
const MAX_NESTED_PARSERS: usize = 200;

/// A content parser with its arguments, ready to parse region bodies.
#[derive(Clone, Debug)]
pub struct ContentSpec {
    name: String,
    /// `content_args` as given (the code generator writes them out).
    args: Value,
    parser: Parser,
}

#[derive(Clone, Debug)]
enum Parser {
    /// Raised on every parse: an unknown parser name (`KeyError`), or
    /// `content_args` that is not a dict (`args.get` → `AttributeError`).
    Fails(PyErr),
    Text {
        strip: bool,
    },
    Int {
        strip: bool,
    },
    Float {
        strip: bool,
    },
    Bool {
        strip: bool,
    },
    Json(Box<JsonArgs>),
    XmlInline(Box<XmlArgs>),
    KvLines(Box<KvArgs>),
}

/// The `json` parser's arguments.
#[derive(Clone, Debug)]
struct JsonArgs {
    /// `bool(string_delims)`: enables the sentinel check.
    delims_truthy: bool,
    /// The `(open, close)` pairs, in order; iterating `string_delims` stops
    /// at the first entry that fails (not iterable, not a pair, ...).
    pairs: Vec<Result<Delims, PyErr>>,
    unquoted_keys: bool,
    allow_non_json: bool,
    /// `strip` for the `allow_non_json` fallback, which returns `_text(text)`.
    strip: bool,
}

/// One `string_delims` pair.
#[derive(Clone, Debug)]
enum Delims {
    /// Both markers are plain strings (the only documented form): cut out
    /// directly, see [`cut_delimited`].
    Literal(String, String),
    /// A marker given as a list or dict: `regex.escape` then joins its items
    /// without escaping multi-character ones, so the result is a real
    /// pattern (`escape(open) + "(.*?)" + escape(close)`), run by `pyre`;
    /// compiled here, or the `regex.error` of compiling it.
    Pattern(Result<Regex, PyErr>),
}

/// The `xml-inline` parser's arguments.
#[derive(Clone, Debug)]
struct XmlArgs {
    /// `tag_pattern` as written and compiled (once, here, as Python's
    /// pattern cache does), or the error of using it.
    pattern: Result<(String, Regex), PyErr>,
    value_parser: SubParser,
    merge: bool,
}

/// The `kv-lines` parser's arguments.
#[derive(Clone, Debug)]
struct KvArgs {
    line_sep: LineSep,
    /// `kv_sep`, or the `TypeError` of `kv_sep in line` for a non-string.
    kv_sep: Result<String, PyErr>,
    strip: bool,
    value_parser: SubParser,
}

/// How `text.split(line_sep)` splits.
#[derive(Clone, Debug)]
enum LineSep {
    /// A non-empty string.
    Str(String),
    /// `None`: Python splits on runs of whitespace.
    Whitespace,
    /// An empty string or a non-string: the error of the split.
    Fails(PyErr),
}

/// A `value_parser` (for `xml-inline` and `kv-lines` values).
#[derive(Clone, Debug)]
enum SubParser {
    /// None given: values stay raw strings.
    Raw,
    /// A nested parser.
    Spec(Box<ContentSpec>),
    /// Raised for each value: `value_parser` is not a dict, or its `name` is
    /// not a parser.
    Fails(PyErr),
}

/// The text a parser gets. `None` happens when an `xml-inline` pattern has a
/// `value` group that did not take part in a match: the reference then hands
/// Python's `None` to the value parser.
#[derive(Clone, Copy)]
enum Input<'a> {
    Str(&'a str),
    None,
}

/// The names the reference's `CONTENT_PARSERS` knows, in its order.
pub const PARSER_NAMES: [&str; 7] = [
    "text",
    "int",
    "float",
    "bool",
    "json",
    "xml-inline",
    "kv-lines",
];

/// The `content_args` each parser reads, by parser (in [`PARSER_NAMES`]
/// order). The lists document the format (`docs/template-format.md` has a
/// section for each, checked by a test); every key this module reads is
/// in one of them (asserted in debug builds).
pub const PARSER_ARGS: [(&str, &[&str]); 7] = [
    ("text", &["strip"]),
    ("int", &["strip"]),
    ("float", &["strip"]),
    ("bool", &["strip"]),
    (
        "json",
        &["unquoted_keys", "string_delims", "allow_non_json", "strip"],
    ),
    (
        "xml-inline",
        &["tag_pattern", "value_parser", "merge_duplicates"],
    ),
    ("kv-lines", &["line_sep", "kv_sep", "strip", "value_parser"]),
];

const VALUE_PARSER_NAME: &str = "name";
const VALUE_PARSER_ARGS: &str = "args";

/// The keys of a `value_parser` object (`xml-inline`, `kv-lines`).
pub const VALUE_PARSER_KEYS: [&str; 2] = [VALUE_PARSER_NAME, VALUE_PARSER_ARGS];

/// `args.get(key)` for a dict `args`, with Python's default when absent.
fn arg<'a>(args: &'a Map, key: &str) -> Option<&'a Value> {
    debug_assert!(
        PARSER_ARGS.iter().any(|(_, keys)| keys.contains(&key)),
        "content argument `{key}` is missing from PARSER_ARGS"
    );
    args.get(key)
}

/// Python truthiness of `args.get(key, default)`.
fn flag(args: &Map, key: &str, default: bool) -> bool {
    arg(args, key).map_or(default, truthy)
}

impl ContentSpec {
    /// Builds the parser called `name` (a `content` value the template loader
    /// has accepted) with `content_args` (pass an empty map when the field has
    /// none). Never fails; see the module docs for deferred errors.
    pub fn new(name: &str, content_args: &Value) -> ContentSpec {
        ContentSpec::build(name, content_args, 0)
    }

    fn build(name: &str, args: &Value, level: usize) -> ContentSpec {
        let parser = if !PARSER_NAMES.contains(&name) {
            // `CONTENT_PARSERS[name]` comes before the parser reads its args.
            Parser::Fails(PyErr::key_error_str(name))
        } else if let Value::Map(args) = args {
            let strip = flag(args, "strip", true);
            match name {
                "text" => Parser::Text { strip },
                "int" => Parser::Int { strip },
                "float" => Parser::Float { strip },
                "bool" => Parser::Bool { strip },
                "json" => Parser::Json(Box::new(JsonArgs::build(args))),
                "xml-inline" => Parser::XmlInline(Box::new(XmlArgs {
                    pattern: match arg(args, "tag_pattern") {
                        None | Some(Value::Null) => Err(PyErr::value(
                            "xml-inline: 'tag_pattern' content_arg is required",
                        )),
                        Some(Value::Str(p)) => {
                            Regex::new(p).map(|re| (p.clone(), re)).map_err(regex_error)
                        }
                        Some(v @ (Value::List(_) | Value::Map(_))) => Err(unhashable(v)),
                        Some(_) => Err(PyErr::type_error(
                            "first argument must be a string or compiled pattern",
                        )),
                    },
                    value_parser: SubParser::build(arg(args, "value_parser"), level),
                    merge: flag(args, "merge_duplicates", false),
                })),
                _ => Parser::KvLines(Box::new(KvArgs {
                    line_sep: match arg(args, "line_sep") {
                        None => LineSep::Str("\n".into()),
                        Some(Value::Null) => LineSep::Whitespace,
                        Some(Value::Str(s)) if s.is_empty() => {
                            LineSep::Fails(PyErr::value("empty separator"))
                        }
                        Some(Value::Str(s)) => LineSep::Str(s.clone()),
                        Some(v) => LineSep::Fails(PyErr::type_error(format!(
                            "must be str or None, not {}",
                            v.type_name()
                        ))),
                    },
                    kv_sep: match arg(args, "kv_sep") {
                        None => Ok(":".into()),
                        Some(Value::Str(s)) => Ok(s.clone()),
                        Some(v) => Err(PyErr::type_error(format!(
                            "'in <string>' requires string as left operand, not {}",
                            v.type_name()
                        ))),
                    },
                    strip,
                    value_parser: SubParser::build(arg(args, "value_parser"), level),
                })),
            }
        } else {
            Parser::Fails(PyErr::no_attribute(args.type_name(), "get"))
        };
        ContentSpec {
            name: name.to_owned(),
            args: args.clone(),
            parser,
        }
    }

    /// The `content_args` the parser was built with.
    pub fn args(&self) -> &Value {
        &self.args
    }

    /// The parser's name (`text`, `json`, ...).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether the region's chunks stream as `dirty`: the parser is not one
    /// of the reference's `STREAMABLE_PARSERS` (`text`, `int`, `float`,
    /// `bool`), so its raw text is not part of its final value.
    pub fn dirty(&self) -> bool {
        !matches!(self.name.as_str(), "text" | "int" | "float" | "bool")
    }

    /// Parses a region body, as `parse_content(text, name, content_args)`.
    pub fn parse(&self, text: &str) -> Result<Value, ContentError> {
        self.run(Input::Str(text), JSON_MAX_DEPTH)
    }

    /// Whether [`ContentSpec::parse`] is `json.loads` of the text and
    /// nothing else: `json` without `string_delims` or `unquoted_keys`
    /// (`allow_non_json` only changes what an error gives). Generated
    /// builders may then read a region's object without building it (see
    /// [`crate::machine::TypedRegions::close_json`]).
    pub fn plain_json(&self) -> bool {
        matches!(&self.parser, Parser::Json(a)
            if a.pairs.is_empty() && !a.unquoted_keys && !a.delims_truthy)
    }

    /// Whether the parser's value is the region's text itself (stripped or
    /// not), so that [`ContentSpec::parse_owned`] moves the text into it.
    pub fn keeps_text(&self) -> bool {
        matches!(self.parser, Parser::Text { .. })
    }

    /// [`ContentSpec::parse`] of a text the caller gives up: plain text
    /// becomes the value without a copy. On error the text is handed back.
    pub fn parse_owned(&self, text: String) -> Result<Value, (ContentError, String)> {
        match &self.parser {
            Parser::Text { strip: false } => Ok(Value::Str(text)),
            Parser::Text { strip: true } => {
                // Strip in place: a long region's text is not copied.
                let kept = py::strip(&text);
                let start = kept.as_ptr() as usize - text.as_ptr() as usize;
                let end = start + kept.len();
                let mut text = text;
                text.truncate(end);
                text.drain(..start);
                Ok(Value::Str(text))
            }
            _ => self.parse(&text).map_err(|e| (e, text)),
        }
    }

    /// `json_depth` is what is left of CPython's recursion limit for
    /// `json.loads` at this nesting of parsers.
    fn run(&self, text: Input<'_>, json_depth: usize) -> Result<Value, PyErr> {
        match &self.parser {
            Parser::Fails(e) => Err(e.clone()),
            Parser::Text { strip } => match text {
                Input::Str(t) => Ok(Value::Str(if *strip { py::strip(t) } else { t }.to_owned())),
                Input::None if *strip => Err(PyErr::no_attribute("NoneType", "strip")),
                Input::None => Ok(Value::Null),
            },
            Parser::Int { strip } => match text {
                Input::Str(t) => Ok(py::parse_int(if *strip { py::strip(t) } else { t })?),
                Input::None if *strip => Err(PyErr::no_attribute("NoneType", "strip")),
                Input::None => Err(PyErr::type_error(
                    "int() argument must be a string, a bytes-like object or a real number, not 'NoneType'",
                )),
            },
            Parser::Float { strip } => match text {
                Input::Str(t) => Ok(Value::Float(py::parse_float(if *strip {
                    py::strip(t)
                } else {
                    t
                })?)),
                Input::None if *strip => Err(PyErr::no_attribute("NoneType", "strip")),
                Input::None => Err(PyErr::type_error(
                    "float() argument must be a string or a real number, not 'NoneType'",
                )),
            },
            Parser::Bool { strip } => match text {
                Input::Str(t) => {
                    let t = if *strip { py::strip(t) } else { t };
                    // `t.lower() in ("true", "1")`: no non-ASCII character
                    // lowercases to these letters (only U+0130 and U+212A
                    // lowercase to anything ASCII at all), so an ASCII
                    // case-insensitive comparison is exact.
                    Ok(Value::Bool(t.eq_ignore_ascii_case("true") || t == "1"))
                }
                Input::None if *strip => Err(PyErr::no_attribute("NoneType", "strip")),
                Input::None => Err(PyErr::no_attribute("NoneType", "lower")),
            },
            Parser::Json(args) => args.run(text, json_depth),
            Parser::XmlInline(args) => args.run(text, json_depth),
            Parser::KvLines(args) => args.run(text, json_depth),
        }
    }
}

/// `TypeError: unhashable type: 'list'` (using a list or dict as a dict key
/// or set member).
fn unhashable(v: &Value) -> PyErr {
    PyErr::type_error(format!("unhashable type: '{}'", v.type_name()))
}

impl SubParser {
    /// `args.get("value_parser")` as `_sub_parse` will use it.
    fn build(vp: Option<&Value>, level: usize) -> SubParser {
        let vp = match vp {
            None | Some(Value::Null) => return SubParser::Raw,
            Some(Value::Map(vp)) => vp,
            Some(other) => return SubParser::Fails(PyErr::no_attribute(other.type_name(), "get")),
        };
        if level >= MAX_NESTED_PARSERS {
            return SubParser::Fails(PyErr::recursion(""));
        }
        let empty = Value::Map(Map::default());
        let args = vp.get(VALUE_PARSER_ARGS).unwrap_or(&empty);
        match vp.get(VALUE_PARSER_NAME) {
            None => SubParser::Spec(Box::new(ContentSpec::build("text", args, level + 1))),
            Some(Value::Str(name)) => {
                SubParser::Spec(Box::new(ContentSpec::build(name, args, level + 1)))
            }
            Some(v @ (Value::List(_) | Value::Map(_))) => SubParser::Fails(unhashable(v)),
            // `CONTENT_PARSERS[5]`: `str(KeyError(5))` is `repr(5)`.
            Some(v) => SubParser::Fails(PyErr::new(PyExc::KeyError, repr_value(v))),
        }
    }

    /// `_sub_parse(raw, value_parser)`.
    fn run(&self, raw: Input<'_>, json_depth: usize) -> Result<Value, PyErr> {
        match self {
            SubParser::Raw => Ok(match raw {
                Input::Str(s) => Value::Str(s.to_owned()),
                Input::None => Value::Null,
            }),
            SubParser::Spec(spec) => {
                spec.run(raw, json_depth.saturating_sub(FRAMES_PER_NESTED_PARSER))
            }
            SubParser::Fails(e) => Err(e.clone()),
        }
    }
}

impl JsonArgs {
    fn build(args: &Map) -> JsonArgs {
        let delims = arg(args, "string_delims");
        let mut pairs = Vec::new();
        match delims.map(py::iterate).unwrap_or(Ok(Vec::new())) {
            Err(e) => pairs.push(Err(e)),
            Ok(items) => {
                for item in &items {
                    let pair = Delims::build(item);
                    let failed = pair.is_err();
                    pairs.push(pair);
                    if failed {
                        break;
                    }
                }
            }
        }
        JsonArgs {
            delims_truthy: delims.is_some_and(truthy),
            pairs,
            unquoted_keys: flag(args, "unquoted_keys", false),
            allow_non_json: flag(args, "allow_non_json", false),
            strip: flag(args, "strip", true),
        }
    }

    /// `_json(text, args)`.
    fn run(&self, text: Input<'_>, json_depth: usize) -> Result<Value, PyErr> {
        let text = match text {
            Input::Str(t) => t,
            Input::None => return self.run_on_none(),
        };
        if self.delims_truthy && text.contains([LAX_OPEN, LAX_CLOSE]) {
            return Err(PyErr::value(
                "json: input contains reserved sentinel characters (\\x01/\\x02); cannot parse safely.",
            ));
        }
        // Without dialect transforms (the common case) the text is parsed
        // where it lies; a copy is made only for a transform to rewrite.
        if self.pairs.is_empty() && !self.unquoted_keys {
            return match json_loads_with_depth(text, json_depth) {
                Ok(v) => Ok(v),
                Err(e) => self.not_json(text, text, e),
            };
        }
        let mut working = text.to_owned();
        let mut captured: Vec<Option<String>> = Vec::new();
        for pair in &self.pairs {
            working = match pair {
                Err(e) => return Err(e.clone()),
                Ok(Delims::Literal(open, close)) => {
                    cut_delimited(&working, open, close, &mut captured)
                }
                Ok(Delims::Pattern(re)) => {
                    cut_by_pattern(&working, re.as_ref().map_err(Clone::clone)?, &mut captured)?
                }
            };
        }
        if self.unquoted_keys {
            working = quote_bare_keys(&working);
        }
        for (i, s) in captured.iter().enumerate() {
            let marker = format!("{LAX_OPEN}{i}{LAX_CLOSE}");
            // `json.dumps(m.group(1))`; the group is `None` only when a
            // pattern-form marker brings its own first group.
            let restored = s
                .as_deref()
                .map_or_else(|| "null".to_owned(), json_dumps_ascii);
            working = working.replace(&marker, &restored);
        }
        match json_loads_with_depth(&working, json_depth) {
            Ok(v) => Ok(v),
            Err(e) => self.not_json(text, &working, e),
        }
    }

    /// What a failed `json.loads` of `working` (`text` after the dialect
    /// transforms) gives: with `allow_non_json`, the text itself as the
    /// value; else the reference's error.
    fn not_json(&self, text: &str, working: &str, e: JsonError) -> Result<Value, PyErr> {
        if !e.is_decode_error() {
            return Err(e.into());
        }
        if self.allow_non_json {
            return Ok(Value::Str(
                if self.strip { py::strip(text) } else { text }.to_owned(),
            ));
        }
        Err(if working == text {
            PyErr::value(format!(
                "json parser could not parse region as JSON.\nContent: {}\nError: {e}",
                repr_str(text)
            ))
        } else {
            PyErr::value(format!(
                "json: could not parse after dialect transforms.\nOriginal: {}\nTransformed: {}\nError: {e}",
                repr_str(text),
                repr_str(working)
            ))
        })
    }

    /// `_json(None, args)`: the first operation that needs a string fails.
    fn run_on_none(&self) -> Result<Value, PyErr> {
        if self.delims_truthy {
            return Err(PyErr::type_error(
                "argument of type 'NoneType' is not iterable",
            ));
        }
        let sub_on_none = PyErr::type_error("a bytes-like object is required, not 'NoneType'");
        // The first pair either fails to unpack or fails in `re.sub`.
        match self.pairs.first() {
            Some(Err(e)) => return Err(e.clone()),
            Some(Ok(Delims::Literal(..))) => return Err(sub_on_none),
            Some(Ok(Delims::Pattern(re))) => {
                // `re.sub` compiles the pattern before it looks at the text.
                re.as_ref().map_err(Clone::clone)?;
                return Err(sub_on_none);
            }
            None => {}
        }
        if self.unquoted_keys {
            return Err(sub_on_none);
        }
        Err(PyErr::type_error(
            "the JSON object must be str, bytes or bytearray, not NoneType",
        ))
    }
}

/// `regex.error` from `pyre`; its `str()` is "message at position N".
fn regex_error(e: crate::pyre::RegexError) -> PyErr {
    PyErr::new(PyExc::RegexError, e.to_string())
}

/// `pyre` gave up on a match where Python's `regex` would keep going.
fn budget_error(e: crate::pyre::MatchError) -> PyErr {
    PyErr::new(PyExc::RuntimeError, e.to_string())
}

/// `regex`'s `_METACHARS`: what `regex.escape` puts a backslash before (along
/// with whitespace).
const METACHARS: &str = "()[]{}?*+|^$\\.-#&~";

/// One marker of a `string_delims` pair, as `regex.escape(marker)` treats it.
enum Marker {
    /// A literal string (a `str`, or a list whose items are all one-character
    /// strings, which escape to the same literal).
    Literal(String),
    /// A pattern fragment: `regex.escape` of a list or dict joins its items,
    /// escaping only items that are a metacharacter or all whitespace.
    Pattern(String),
}

/// `regex.escape(s)` for a `str`.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if METACHARS.contains(c) || py::is_space(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

impl Marker {
    fn build(v: &Value) -> Result<Marker, PyErr> {
        let items = match v {
            Value::Str(s) => return Ok(Marker::Literal(s.clone())),
            // `for c in pattern`: a dict yields its keys.
            Value::List(_) | Value::Map(_) => py::iterate(v)?,
            other => {
                return Err(PyErr::type_error(format!(
                    "'{}' object is not iterable",
                    other.type_name()
                )));
            }
        };
        let mut literal = String::new();
        let mut pattern = String::new();
        let mut all_single = true;
        for item in &items {
            match item {
                Value::Str(c) => {
                    // `c in _METACHARS or c.isspace()`, item by item.
                    let special = (c.chars().count() == 1 && METACHARS.contains(c.as_str()))
                        || (!c.is_empty() && c.chars().all(py::is_space));
                    if special {
                        pattern.push('\\');
                    }
                    pattern.push_str(c);
                    literal.push_str(c);
                    all_single &= c.chars().count() == 1;
                }
                Value::List(_) | Value::Map(_) => return Err(unhashable(item)),
                other => return Err(PyErr::no_attribute(other.type_name(), "isspace")),
            }
        }
        Ok(if all_single {
            Marker::Literal(literal)
        } else {
            Marker::Pattern(pattern)
        })
    }

    fn pattern(&self) -> String {
        match self {
            Marker::Literal(s) => escape(s),
            Marker::Pattern(p) => p.clone(),
        }
    }
}

impl Delims {
    /// `for open_d, close_d in string_delims`: unpack one entry and escape
    /// both markers, with Python's errors.
    fn build(item: &Value) -> Result<Delims, PyErr> {
        let parts = match item {
            Value::List(_) | Value::Map(_) | Value::Str(_) => py::iterate(item)?,
            other => {
                return Err(PyErr::type_error(format!(
                    "cannot unpack non-iterable {} object",
                    other.type_name()
                )));
            }
        };
        let [open, close] = parts.as_slice() else {
            return Err(PyErr::value(if parts.len() < 2 {
                format!(
                    "not enough values to unpack (expected 2, got {})",
                    parts.len()
                )
            } else {
                "too many values to unpack (expected 2)".to_owned()
            }));
        };
        let open = Marker::build(open)?;
        let close = Marker::build(close)?;
        Ok(match (open, close) {
            (Marker::Literal(o), Marker::Literal(c)) => Delims::Literal(o, c),
            (o, c) => Delims::Pattern(
                Regex::new(&format!("{}(.*?){}", o.pattern(), c.pattern())).map_err(regex_error),
            ),
        })
    }
}

/// `re.sub(escape(open) + "(.*?)" + escape(close), capture, text, flags=DOTALL)`
/// for literal markers, done directly: the pattern can only match `open`,
/// then the shortest run up to the next `close`. The `regex` module's rule for
/// empty matches matters only when both markers are empty: after an empty
/// match at `p`, the next match may start at `p` but must not be empty there,
/// so the lazy group grows to one character (`re.sub('(.*?)', '-', 'ab')` is
/// `'-----'`). Each cut-out string is replaced by `\x01N\x02`.
fn cut_delimited(
    text: &str,
    open: &str,
    close: &str,
    captured: &mut Vec<Option<String>>,
) -> String {
    let mut out = String::with_capacity(text.len());
    let mut pos = 0;
    let mut empty_at: Option<usize> = None;
    loop {
        // (match start, group start, group end, match end), byte offsets.
        let found = if !open.is_empty() {
            text[pos..].find(open).and_then(|i| {
                let start = pos + i;
                let inner = start + open.len();
                if close.is_empty() {
                    Some((start, inner, inner, inner))
                } else {
                    // No `close` after the first `open` means none after a
                    // later one either: the scan is over.
                    text[inner..]
                        .find(close)
                        .map(|j| (start, inner, inner + j, inner + j + close.len()))
                }
            })
        } else if !close.is_empty() {
            text[pos..]
                .find(close)
                .map(|j| (pos, pos, pos + j, pos + j + close.len()))
        } else if empty_at == Some(pos) {
            text[pos..]
                .chars()
                .next()
                .map(|c| (pos, pos, pos + c.len_utf8(), pos + c.len_utf8()))
        } else {
            Some((pos, pos, pos, pos))
        };
        let Some((start, inner, inner_end, end)) = found else {
            break;
        };
        out.push_str(&text[pos..start]);
        captured.push(Some(text[inner..inner_end].to_owned()));
        out.push(LAX_OPEN);
        out.push_str(&(captured.len() - 1).to_string());
        out.push(LAX_CLOSE);
        empty_at = (start == end).then_some(start);
        pos = end;
    }
    out.push_str(&text[pos..]);
    out
}

/// The same substitution for a pattern-form pair, through `pyre`.
fn cut_by_pattern(
    text: &str,
    re: &Regex,
    captured: &mut Vec<Option<String>>,
) -> Result<String, PyErr> {
    let mut out = String::with_capacity(text.len());
    let mut pos = 0;
    for m in re.find_iter(text) {
        let m = m.map_err(budget_error)?;
        out.push_str(&text[pos..m.start()]);
        captured.push(m.get(1).map(|(a, b)| text[a..b].to_owned()));
        out.push(LAX_OPEN);
        out.push_str(&(captured.len() - 1).to_string());
        out.push(LAX_CLOSE);
        pos = m.end();
    }
    out.push_str(&text[pos..]);
    Ok(out)
}

/// `re.sub(r"(?<=[{,])(\w+):", r'"\1":', text)`, done directly: a match
/// starts at a `\w` character preceded by `{` or `,`, and `\w+` must be
/// followed by `:`. Backtracking cannot help (a shorter run ends before a
/// `\w` character, never before `:`), so a run either matches whole or not
/// at all, and no match can start inside a run (its look-behind sees `\w`).
/// `\w` is the `regex` module's Unicode word class.
fn quote_bare_keys(text: &str) -> String {
    let is_word = |c: char| in_ranges(REGEX_WORD, c);
    let mut out = String::with_capacity(text.len() + 8);
    let mut prev: Option<char> = None;
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if matches!(prev, Some('{' | ',')) && is_word(c) {
            let run_len = rest.find(|ch: char| !is_word(ch)).unwrap_or(rest.len());
            let run = &rest[..run_len];
            if rest[run_len..].starts_with(':') {
                out.push('"');
                out.push_str(run);
                out.push_str("\":");
                rest = &rest[run_len + 1..];
                prev = Some(':');
            } else {
                out.push_str(run);
                rest = &rest[run_len..];
                prev = run.chars().next_back();
            }
            continue;
        }
        out.push(c);
        prev = Some(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

impl XmlArgs {
    /// `_xml_inline(text, args)`.
    fn run(&self, text: Input<'_>, json_depth: usize) -> Result<Value, PyErr> {
        let (pattern, re) = self.pattern.as_ref().map_err(Clone::clone)?;
        let Input::Str(text) = text else {
            return Err(PyErr::type_error(
                "a bytes-like object is required, not 'NoneType'",
            ));
        };
        let key_group = re.group_index("key");
        let value_group = re.group_index("value");
        let mut out = Map::default();
        for m in re.find_iter(text) {
            let m = m.map_err(budget_error)?;
            let Some((ks, ke)) = key_group.and_then(|g| m.get(g)) else {
                return Err(PyErr::value(format!(
                    "xml-inline: tag_pattern must have a named group 'key'. Pattern: {pattern}"
                )));
            };
            let key = &text[ks..ke];
            // `groups.get("value", "")`: "" without such a group, `None` when
            // the group exists but did not take part.
            let raw = match value_group {
                None => Input::Str(""),
                Some(g) => m
                    .get(g)
                    .map_or(Input::None, |(a, b)| Input::Str(&text[a..b])),
            };
            let value = self.value_parser.run(raw, json_depth)?;
            match out.get_mut(key) {
                Some(existing) if self.merge => {
                    // `out[key] = [out[key]]` unless it already is a list,
                    // then append to it (even to a list the value parser made).
                    if let Value::List(items) = existing {
                        items.push(value);
                    } else {
                        let first = std::mem::replace(existing, Value::Null);
                        *existing = Value::List(vec![first, value]);
                    }
                }
                // A repeated key keeps its first position, as in a dict.
                _ => {
                    out.insert(key.to_owned(), value);
                }
            }
        }
        Ok(Value::Map(out))
    }
}

/// An `xml-inline` region read as it streams: the parameters the model has
/// finished, each as soon as no later text can change it.
///
/// The value is `_xml_inline`'s: successive `finditer` matches of the tag
/// pattern over the region's text. A match found in a prefix of the text is
/// final when the attempts at every start before it failed, and it
/// succeeded, without reading to the end of the prefix (the matcher's
/// `hit_end`); until then the parameter is held. At the region's close the
/// rest is found with the complete text, as the parser does. The
/// parameters come in the text's order, repeated keys included: written as
/// JSON object members in that order, they load (`json.loads`) to the dict
/// the parser builds, whose repeated keys keep their first position and
/// their last value. (`merge_duplicates` turns a repeated key into a list, which no
/// earlier text announces: such parsers are not read this way.)
///
/// Work is bounded: an undecided attempt is retried only once the literal
/// text the pattern ends with (`</parameter>`) has arrived again, or, for a
/// pattern that does not end with one, once the text has grown by half; and
/// the steps of all attempts share a budget proportional to the text. The
/// trigger only decides when to look: a parameter whose end it misses is
/// found at the next look or at the close.
#[derive(Clone, Debug)]
pub struct XmlStream {
    re: Regex,
    key: usize,
    value: Option<usize>,
    value_parser: SubParser,
    /// Where the next `finditer` search begins (the end of the last match).
    pos: usize,
    /// Starts before this one failed for good.
    scan: usize,
    /// The attempt at `scan` was undecided (it read to the end of the text).
    pending: bool,
    /// The text's length at that attempt.
    tried: usize,
    /// The text's length at the last call.
    seen: usize,
    /// The literal text the pattern ends with, when it ends with one: its
    /// arrival makes an undecided attempt worth retrying.
    suffix: Option<String>,
    /// Steps left for the attempts before the close.
    budget: u64,
    /// Steps granted per byte of text.
    steps_per_byte: u64,
}

/// Why a parameter stream ([`XmlStream`], [`KvStream`]) cannot follow a
/// region (the caller then takes the region's value at its close).
#[derive(Clone, Debug, PartialEq)]
pub enum XmlStreamError {
    /// A match was empty (`finditer`'s empty-match rules are not followed
    /// incrementally).
    EmptyMatch,
    /// The value parser (or the matcher) failed: the region's parse fails
    /// the same way.
    Parse(ContentError),
}

/// A `kv-lines` region read as it streams: each line's parameter as soon
/// as the line separator after it has arrived (or, splitting on
/// whitespace, the whitespace after the item). The lines of the text so far
/// are lines of the whole text (a separator found stays one, more text only
/// adds separators after it), so each is read as `_kv_lines` reads it:
/// stripped, skipped when empty or without `kv_sep`, split at the first
/// `kv_sep`, its value given to the value parser. Written in order,
/// repeated keys included, the parameters load to the parser's dict.
#[derive(Clone, Debug)]
pub struct KvStream {
    args: KvArgs,
    /// Where the next line starts.
    pos: usize,
}

impl KvStream {
    /// Ready for a new region's text.
    pub fn reset(&mut self) {
        self.pos = 0;
    }

    /// As [`XmlStream::advance`]: the parameters of the lines of `body`
    /// now complete (all of them when `complete`).
    pub fn advance(
        &mut self,
        body: &str,
        complete: bool,
        out: &mut Vec<(String, Value)>,
    ) -> Result<(), XmlStreamError> {
        loop {
            let rest = &body[self.pos..];
            let (line, next) = match &self.args.line_sep {
                LineSep::Str(sep) => match rest.find(sep.as_str()) {
                    Some(i) => (&rest[..i], self.pos + i + sep.len()),
                    None if complete => (rest, body.len()),
                    None => return Ok(()),
                },
                LineSep::Whitespace => {
                    let item = rest.trim_start_matches(py::is_space);
                    let start = body.len() - item.len();
                    match item.find(py::is_space) {
                        Some(i) => (&item[..i], start + i),
                        None if complete => (item, body.len()),
                        None => return Ok(()),
                    }
                }
                LineSep::Fails(e) => return Err(XmlStreamError::Parse(e.clone())),
            };
            self.pos = next;
            self.line(line, out)?;
            if complete && self.pos >= body.len() {
                return Ok(());
            }
        }
    }

    /// One line, as `_kv_lines` reads it.
    fn line(&self, line: &str, out: &mut Vec<(String, Value)>) -> Result<(), XmlStreamError> {
        let a = &self.args;
        let strip = |s: &str| -> String { if a.strip { py::strip(s) } else { s }.to_owned() };
        let line = strip(line);
        if line.is_empty() {
            return Ok(());
        }
        let kv_sep = a
            .kv_sep
            .as_ref()
            .map_err(|e| XmlStreamError::Parse(e.clone()))?;
        if kv_sep.is_empty() {
            return Err(XmlStreamError::Parse(PyErr::value("empty separator")));
        }
        let Some((k, v)) = line.split_once(kv_sep.as_str()) else {
            return Ok(());
        };
        let value = a
            .value_parser
            .run(Input::Str(&strip(v)), JSON_MAX_DEPTH)
            .map_err(XmlStreamError::Parse)?;
        out.push((strip(k), value));
        Ok(())
    }
}

/// A region read as it streams: `xml-inline` or `kv-lines`
/// ([`ContentSpec::param_stream`]).
#[derive(Clone, Debug)]
pub enum ParamStream {
    /// An `xml-inline` region.
    Xml(XmlStream),
    /// A `kv-lines` region.
    Kv(KvStream),
}

impl ParamStream {
    /// Ready for a new region's text.
    pub fn reset(&mut self) {
        match self {
            ParamStream::Xml(x) => x.reset(),
            ParamStream::Kv(k) => k.reset(),
        }
    }

    /// The parameters of `body` now decided (see [`XmlStream::advance`]).
    pub fn advance(
        &mut self,
        body: &str,
        complete: bool,
        out: &mut Vec<(String, Value)>,
    ) -> Result<(), XmlStreamError> {
        match self {
            ParamStream::Xml(x) => x.advance(body, complete, out),
            ParamStream::Kv(k) => k.advance(body, complete, out),
        }
    }
}

impl ContentSpec {
    /// A [`ParamStream`] for this parser: `xml-inline` as
    /// [`ContentSpec::xml_stream`] allows, and `kv-lines`.
    pub fn param_stream(&self) -> Option<ParamStream> {
        match &self.parser {
            Parser::XmlInline(_) => self.xml_stream().map(ParamStream::Xml),
            Parser::KvLines(args) => Some(ParamStream::Kv(KvStream {
                args: (**args).clone(),
                pos: 0,
            })),
            _ => None,
        }
    }

    /// An [`XmlStream`] for this parser: `Some` for `xml-inline` without
    /// `merge_duplicates`, with a compiled tag pattern that has a `key` group.
    pub fn xml_stream(&self) -> Option<XmlStream> {
        let Parser::XmlInline(args) = &self.parser else {
            return None;
        };
        let (pattern, re) = args.pattern.as_ref().ok()?;
        if args.merge {
            return None;
        }
        let key = re.group_index("key")?;
        Some(XmlStream {
            re: re.clone(),
            key,
            value: re.group_index("value"),
            value_parser: args.value_parser.clone(),
            pos: 0,
            scan: 0,
            pending: false,
            tried: 0,
            seen: 0,
            suffix: literal_suffix(pattern),
            budget: 1 << 16,
            steps_per_byte: 64,
        })
    }
}

/// The run of plain characters `pattern` ends with (`</parameter>` for
/// `...\\n?</parameter>`): no metacharacter, no escape, nothing after it.
/// Used only to decide when to look again, so a pattern whose matches do not
/// all end this way (an alternation, inline flags) costs latency, never
/// correctness.
fn literal_suffix(pattern: &str) -> Option<String> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut start = chars.len();
    while start > 0 {
        let c = chars[start - 1];
        let plain = !c.is_ascii() || c.is_ascii_alphanumeric() || "<>/=:\"'_ ,;!@%&~`".contains(c);
        if !plain || (start >= 2 && chars[start - 2] == '\\') {
            break;
        }
        start -= 1;
    }
    (start < chars.len()).then(|| chars[start..].iter().collect())
}

impl XmlStream {
    /// Ready for a new region's text (the pattern and value parser kept).
    pub fn reset(&mut self) {
        self.pos = 0;
        self.scan = 0;
        self.pending = false;
        self.tried = 0;
        self.seen = 0;
        self.budget = 1 << 16;
    }

    /// Reads `body`, the region's whole text so far (`complete`: the region
    /// closed and this is all of it), from where the last call stopped, and
    /// appends the parameters now decided to `out`, in order.
    pub fn advance(
        &mut self,
        body: &str,
        complete: bool,
        out: &mut Vec<(String, Value)>,
    ) -> Result<(), XmlStreamError> {
        if complete {
            return self.finish(body, out);
        }
        let new = body.len().saturating_sub(self.seen) as u64;
        self.seen = body.len();
        self.budget = self.budget.saturating_add(self.steps_per_byte * new);
        if self.pending {
            // Retry the undecided attempt only when it may now be decided:
            // the pattern's closing text arrived after it, or (without one)
            // the text grew by half.
            let again = match &self.suffix {
                Some(suffix) => self.ends_after(body, self.tried.max(self.scan + suffix.len() - 1)),
                None => body.len() >= self.tried + self.tried / 2 + 16,
            };
            if !again {
                return Ok(());
            }
            self.pending = false;
        }
        while self.scan < body.len() {
            let c = self.scan;
            if !body.is_char_boundary(c) || !self.re.can_start_at(body, c) {
                self.scan += 1;
                continue;
            }
            // A match from here ends with the closing text: none yet, no
            // attempt.
            if let Some(suffix) = &self.suffix
                && !self.ends_after(body, c + suffix.len() - 1)
            {
                self.pending = true;
                self.tried = body.len();
                return Ok(());
            }
            let (attempt, steps) = self.re.match_at_limited(body, c, false, self.budget);
            self.budget = self.budget.saturating_sub(steps);
            match attempt {
                // Out of budget: the attempt is retried once more text has
                // brought more budget.
                Err(_) => {
                    self.pending = true;
                    self.tried = body.len();
                    return Ok(());
                }
                Ok(a) if a.hit_end => {
                    self.pending = true;
                    self.tried = body.len();
                    return Ok(());
                }
                Ok(a) => match a.captures {
                    None => self.scan = c + 1,
                    Some(m) => self.take(body, &m, out)?,
                },
            }
        }
        Ok(())
    }

    /// Whether the closing text occurs in `body` with its last byte at or
    /// after `at`.
    fn ends_after(&self, body: &str, at: usize) -> bool {
        let Some(suffix) = &self.suffix else {
            return true;
        };
        let (b, s) = (body.as_bytes(), suffix.as_bytes());
        let Some(&last) = s.last() else {
            return true;
        };
        if at >= b.len() {
            return false;
        }
        memchr::memchr_iter(last, &b[at..])
            .map(|i| at + i + 1)
            .any(|end| end >= s.len() && &b[end - s.len()..end] == s)
    }

    /// The rest, with the complete text: `finditer` from the last match.
    fn finish(&mut self, body: &str, out: &mut Vec<(String, Value)>) -> Result<(), XmlStreamError> {
        while self.pos <= body.len() {
            match self.re.search(body, self.pos) {
                Ok(Some(m)) => self.take(body, &m, out)?,
                Ok(None) => break,
                Err(e) => return Err(XmlStreamError::Parse(budget_error(e))),
            }
        }
        Ok(())
    }

    /// One match: its parameter, as `_xml_inline` reads it.
    fn take(
        &mut self,
        body: &str,
        m: &crate::pyre::Captures,
        out: &mut Vec<(String, Value)>,
    ) -> Result<(), XmlStreamError> {
        if m.start() == m.end() {
            return Err(XmlStreamError::EmptyMatch);
        }
        let Some((ks, ke)) = m.get(self.key) else {
            // `_xml_inline` raises here: the region's parse fails.
            return Err(XmlStreamError::EmptyMatch);
        };
        let raw = match self.value {
            None => Input::Str(""),
            Some(g) => m
                .get(g)
                .map_or(Input::None, |(a, b)| Input::Str(&body[a..b])),
        };
        let value = self
            .value_parser
            .run(raw, JSON_MAX_DEPTH)
            .map_err(XmlStreamError::Parse)?;
        out.push((body[ks..ke].to_owned(), value));
        self.pos = m.end();
        self.scan = m.end();
        Ok(())
    }
}

impl KvArgs {
    /// `_kv_lines(text, args)`.
    fn run(&self, text: Input<'_>, json_depth: usize) -> Result<Value, PyErr> {
        let Input::Str(text) = text else {
            return Err(PyErr::no_attribute("NoneType", "split"));
        };
        let lines: Vec<&str> = match &self.line_sep {
            LineSep::Str(sep) => text.split(sep.as_str()).collect(),
            LineSep::Whitespace => py::split_whitespace(text),
            LineSep::Fails(e) => return Err(e.clone()),
        };
        let strip = |s: &'_ str| -> String { if self.strip { py::strip(s) } else { s }.to_owned() };
        let mut out = Map::default();
        for line in lines {
            let line = strip(line);
            if line.is_empty() {
                continue;
            }
            let kv_sep = self.kv_sep.as_ref().map_err(Clone::clone)?;
            // `kv_sep in line` is true for an empty separator, whose split
            // then raises.
            let Some((k, v)) = (if kv_sep.is_empty() {
                return Err(PyErr::value("empty separator"));
            } else {
                line.split_once(kv_sep.as_str())
            }) else {
                continue;
            };
            let value = self.value_parser.run(Input::Str(&strip(v)), json_depth)?;
            out.insert(strip(k), value);
        }
        Ok(Value::Map(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str, args: &str) -> ContentSpec {
        let args: serde_json::Value = serde_json::from_str(args).unwrap();
        ContentSpec::new(name, &Value::from(&args))
    }

    fn ok(name: &str, args: &str, text: &str) -> String {
        spec(name, args).parse(text).unwrap().to_json_string()
    }

    fn err(name: &str, args: &str, text: &str) -> (&'static str, String) {
        let e = spec(name, args).parse(text).unwrap_err();
        (e.kind.name(), e.message)
    }

    #[test]
    fn scalars() {
        assert_eq!(ok("text", "{}", " \x1ca\u{85} "), "\"a\"");
        assert_eq!(ok("text", r#"{"strip": 0}"#, " a "), "\" a \"");
        assert_eq!(ok("int", "{}", " \u{663}_1 "), "31");
        assert_eq!(ok("float", "{}", " -InF "), "-Infinity");
        assert_eq!(ok("bool", "{}", " TRUE "), "true");
        assert_eq!(ok("bool", "{}", "yes"), "false");
        assert_eq!(ok("bool", r#"{"strip": []}"#, " 1"), "false");
        assert_eq!(
            err("int", "{}", "x"),
            (
                "ValueError",
                "invalid literal for int() with base 10: 'x'".into()
            )
        );
        assert_eq!(
            err("text", "[]", ""),
            (
                "AttributeError",
                "'list' object has no attribute 'get'".into()
            )
        );
        assert_eq!(
            err("text", "null", ""),
            (
                "AttributeError",
                "'NoneType' object has no attribute 'get'".into()
            )
        );
        assert!(!spec("int", "{}").dirty());
        assert!(spec("kv-lines", "{}").dirty());
    }

    #[test]
    fn json_dialects() {
        assert_eq!(
            ok(
                "json",
                r#"{"unquoted_keys": true}"#,
                r#"{a: 1,b_2:{c:[1]}, "d" :2}"#
            ),
            r#"{"a": 1, "b_2": {"c": [1]}, "d": 2}"#
        );
        assert_eq!(
            ok(
                "json",
                r#"{"string_delims": [["<<", ">>"]]}"#,
                r#"{"a": <<x"é
>>}"#
            ),
            r#"{"a": "x\"é\n"}"#
        );
        assert_eq!(
            ok("json", r#"{"allow_non_json": 1}"#, "  nope "),
            "\"nope\""
        );
        let (kind, msg) = err("json", r#"{"string_delims": [["<", ">"]]}"#, "\x01");
        assert_eq!(kind, "ValueError");
        assert!(msg.starts_with("json: input contains reserved sentinel"));
        let (_, msg) = err("json", "{}", "{x}");
        assert_eq!(
            msg,
            "json parser could not parse region as JSON.\nContent: '{x}'\nError: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"
        );
        assert_eq!(
            err("json", r#"{"string_delims": 5}"#, "1").1,
            "'int' object is not iterable"
        );
        assert_eq!(
            err("json", r#"{"string_delims": [[1, 2, 3]]}"#, "1").1,
            "too many values to unpack (expected 2)"
        );
        assert_eq!(
            err("json", r#"{"string_delims": ["a"]}"#, "1").1,
            "not enough values to unpack (expected 2, got 1)"
        );
        assert_eq!(ok("json", r#"{"string_delims": ["<>"]}"#, "<1>"), "\"1\"");
        assert_eq!(
            ok("json", r#"{"string_delims": [[["<"], [">"]]]}"#, "<1>"),
            "\"1\""
        );
        assert_eq!(
            err("json", r#"{"string_delims": [[5, ">"]]}"#, "1").1,
            "'int' object is not iterable"
        );
        assert_eq!(
            err("json", r#"{"string_delims": [[[5], ">"]]}"#, "1").1,
            "'int' object has no attribute 'isspace'"
        );
    }

    #[test]
    fn empty_markers_follow_the_regex_module() {
        let mut cap = Vec::new();
        let out = cut_delimited("ab", "", "", &mut cap);
        assert_eq!(out.matches(LAX_OPEN).count(), 5);
        assert_eq!(
            cap,
            vec![
                Some("".into()),
                Some("a".into()),
                Some("".into()),
                Some("b".into()),
                Some("".into())
            ]
        );
        let mut cap = Vec::new();
        assert_eq!(
            cut_delimited("x<a>y<b", "<", ">", &mut cap),
            "x\x010\x02y<b"
        );
        let mut cap = Vec::new();
        assert_eq!(
            cut_delimited("a;b;c", "", ";", &mut cap),
            "\x010\x02\x011\x02c"
        );
    }

    #[test]
    fn bare_keys() {
        assert_eq!(
            quote_bare_keys("{a:1,bc:{d:2},e f:3, g:4,h}"),
            r#"{"a":1,"bc":{"d":2},e f:3, g:4,h}"#
        );
        assert_eq!(quote_bare_keys("{é:1,a1b:{x}"), r#"{"é":1,"a1b":{x}"#);
    }

    #[test]
    fn kv_lines() {
        assert_eq!(
            ok("kv-lines", "{}", "a: 1\n\nb:2:3\nnoval\n a : x "),
            r#"{"a": "x", "b": "2:3"}"#
        );
        assert_eq!(
            ok(
                "kv-lines",
                r#"{"value_parser": {"name": "int"}}"#,
                "a: 1\na: 2"
            ),
            r#"{"a": 2}"#
        );
        assert_eq!(
            ok(
                "kv-lines",
                r#"{"line_sep": null, "kv_sep": "="}"#,
                "a=1 b=2"
            ),
            r#"{"a": "1", "b": "2"}"#
        );
        assert_eq!(
            err("kv-lines", r#"{"line_sep": ""}"#, "").1,
            "empty separator"
        );
        assert_eq!(ok("kv-lines", r#"{"kv_sep": ""}"#, "\n \n"), "{}");
        assert_eq!(
            err("kv-lines", r#"{"kv_sep": ""}"#, "x").1,
            "empty separator"
        );
        assert_eq!(ok("kv-lines", r#"{"kv_sep": 5}"#, ""), "{}");
        assert_eq!(
            err("kv-lines", r#"{"kv_sep": 5}"#, "x").1,
            "'in <string>' requires string as left operand, not int"
        );
        assert_eq!(
            err("kv-lines", r#"{"value_parser": "int"}"#, "a:1").1,
            "'str' object has no attribute 'get'"
        );
        assert_eq!(
            err("kv-lines", r#"{"value_parser": {"name": "nope"}}"#, "a:1"),
            ("KeyError", "'nope'".into())
        );
        assert_eq!(
            err("kv-lines", r#"{"value_parser": {"name": null}}"#, "a:1"),
            ("KeyError", "None".into())
        );
        assert_eq!(
            err(
                "kv-lines",
                r#"{"value_parser": {"name": "int", "args": 3}}"#,
                "a:1"
            )
            .1,
            "'int' object has no attribute 'get'"
        );
    }

    #[test]
    fn xml_inline_deferred_errors() {
        let (kind, msg) = err("xml-inline", "{}", "");
        assert_eq!(
            (kind, msg.as_str()),
            (
                "ValueError",
                "xml-inline: 'tag_pattern' content_arg is required"
            )
        );
        assert_eq!(
            err("xml-inline", r#"{"tag_pattern": 5}"#, "").1,
            "first argument must be a string or compiled pattern"
        );
        assert_eq!(
            err("xml-inline", r#"{"tag_pattern": []}"#, "").1,
            "unhashable type: 'list'"
        );
    }

    /// Every chunking of each body gives, in the stream's parameters, the
    /// dict the parser makes; decided parameters never wait for the close
    /// when their closing tag has arrived.
    #[test]
    fn xml_streams_decide_parameters_as_the_parser_reads_them() {
        let qwen = r#"{"tag_pattern": "<parameter=(?P<key>[^>\\n]+)>\\n?(?P<value>.*?)\\n?</parameter>",
                       "value_parser": {"name": "json", "args": {"allow_non_json": true}}}"#;
        let gemma = r#"{"tag_pattern": "(?P<key>\\w+)\\s*=\\s*(?:'(?P<value>(?:[^'\\\\]|\\\\.)*)'|(?P<value>.*?))\\s*(?=,\\s*\\w+\\s*=|$)",
                        "value_parser": {"name": "json", "args": {"allow_non_json": true}}}"#;
        let cases = [
            (
                qwen,
                "\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n</parameter>\n",
            ),
            (
                qwen,
                "<parameter=a>1</parameter><parameter=b>x</parameter><parameter=a>[2, 3]</parameter>",
            ),
            (
                qwen,
                "<parameter=code>\nif a > b:\n    print('</param')\n</parameter>",
            ),
            (qwen, "no parameters at all"),
            (gemma, "city='Paris', days=3, note=a, b"),
        ];
        for (args, body) in cases {
            let spec = spec("xml-inline", args);
            let want = spec.parse(body).unwrap();
            for step in 1..=body.len() {
                let mut stream = spec.xml_stream().expect("xml-inline without merge streams");
                let mut got = Vec::new();
                let mut end = 0;
                while end < body.len() {
                    end = (end + step).min(body.len());
                    while !body.is_char_boundary(end) {
                        end += 1;
                    }
                    stream.advance(&body[..end], false, &mut got).unwrap();
                }
                stream.advance(body, true, &mut got).unwrap();
                // Written in order, repeated keys load to the dict.
                let mut map = Map::default();
                for (k, v) in got {
                    map.insert(k, v);
                }
                assert_eq!(Value::Map(map), want, "{body:?} in pieces of {step}");
            }
        }
        // A parameter is decided once its closing tag arrives.
        let spec = spec("xml-inline", qwen);
        let mut stream = spec.xml_stream().unwrap();
        let mut got = Vec::new();
        stream
            .advance(
                "<parameter=a>\n1\n</parameter>\n<parameter=b>",
                false,
                &mut got,
            )
            .unwrap();
        assert_eq!(got, vec![("a".to_owned(), Value::Int(1))]);
        // `merge_duplicates` is not streamed.
        let merged =
            r#"{"tag_pattern": "<p=(?P<key>\\w+)>(?P<value>.*?)</p>", "merge_duplicates": true}"#;
        assert!(
            super::tests::spec("xml-inline", merged)
                .xml_stream()
                .is_none()
        );
    }
}
