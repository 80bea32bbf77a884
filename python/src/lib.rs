//! `retort._native`: the Python bindings of retort.
//!
//! The Python package `retort` (python/python/retort) wraps this module. It
//! mirrors transformers 5.23.0's `transformers.utils.chat_parsing`
//! (`ResponseParser`, `parse_response`) on retort's engine, and adds a batch
//! API that parses on all cores with the GIL released.
//!
//! Values cross the boundary as Python objects built directly from
//! [`retort::Value`] (no JSON text in between), so ints stay ints of any
//! size, floats keep NaN and the infinities, and dicts keep key order.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use num_bigint::BigInt;
use pyo3::exceptions::{
    PyAttributeError, PyKeyError, PyRecursionError, PyRuntimeError, PyTypeError, PyValueError,
};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::{PyBool, PyDict, PyFloat, PyList, PyString, PyTuple};
use pyo3::{IntoPyObjectExt, intern};
use retort::{Event, Map, ParseError, ParseErrorKind, TemplateError, Value};
use self_cell::self_cell;

mod chat;

/// The message the reference raises when `prefix` is `None`.
const PREFIX_REQUIRED: &str = "`ResponseParser`/`parse_response` requires `prefix` (the chat prompt sent to the model before \
generation), because chat templates often pre-write part of the assistant message (e.g. an \
opening `<think>` tag) that the parser must see to parse the output correctly. If the generation \
already contains the complete message, pass `prefix=\"\"` to opt out explicitly.";

// ---------------------------------------------------------------------------
// Values: Rust -> Python

fn value_to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Int(i) => i.into_bound_py_any(py)?,
        Value::BigInt(n) => n.into_bound_py_any(py)?,
        Value::Float(f) => PyFloat::new(py, *f).into_any(),
        Value::Str(s) => PyString::new(py, s).into_any(),
        Value::List(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(value_to_py(py, item)?)?;
            }
            list.into_any()
        }
        Value::Map(map) => map_to_py(py, map)?.into_any(),
    })
}

fn map_to_py<'py>(py: Python<'py>, map: &Map) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    for (k, v) in map {
        dict.set_item(PyString::new(py, k), value_to_py(py, v)?)?;
    }
    Ok(dict)
}

/// The reference's event dict: `type` and `field` first, then `text` and
/// `dirty` (chunks) or `value` (closes).
fn event_to_py<'py>(py: Python<'py>, e: &Event<'_>) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    match e {
        Event::RegionOpen { field } => {
            d.set_item(intern!(py, "type"), intern!(py, "region_open"))?;
            d.set_item(intern!(py, "field"), PyString::new(py, field))?;
        }
        Event::RegionChunk { field, text, dirty } => {
            d.set_item(intern!(py, "type"), intern!(py, "region_chunk"))?;
            d.set_item(intern!(py, "field"), PyString::new(py, field))?;
            d.set_item(intern!(py, "text"), PyString::new(py, text))?;
            d.set_item(intern!(py, "dirty"), PyBool::new(py, *dirty))?;
        }
        Event::RegionClose { field, value } => {
            d.set_item(intern!(py, "type"), intern!(py, "region_close"))?;
            d.set_item(intern!(py, "field"), PyString::new(py, field))?;
            d.set_item(intern!(py, "value"), value_to_py(py, value)?)?;
        }
        Event::RegionMalformed { field, raw, error } => {
            d.set_item(intern!(py, "type"), intern!(py, "region_malformed"))?;
            d.set_item(intern!(py, "field"), PyString::new(py, field))?;
            d.set_item(intern!(py, "raw"), PyString::new(py, raw))?;
            d.set_item(intern!(py, "error"), PyString::new(py, error))?;
        }
        // Kinds added to the engine later are not produced by the parsers
        // this binding makes until it learns them.
        _ => {
            d.set_item(intern!(py, "type"), intern!(py, "unknown"))?;
            d.set_item(intern!(py, "field"), PyString::new(py, e.field()))?;
        }
    }
    Ok(d)
}

fn events_to_py<'py, 'e>(
    py: Python<'py>,
    events: impl IntoIterator<Item = Event<'e>>,
) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for e in events {
        list.append(event_to_py(py, &e)?)?;
    }
    Ok(list)
}

// ---------------------------------------------------------------------------
// Values: Python -> Rust (templates and tool definitions)

/// Python's JSON-like data as a [`Value`]; `path` names where an object
/// that has no such form sits (for the `TypeError`).
fn py_to_value(obj: &Bound<'_, PyAny>, path: &mut String, depth: usize) -> PyResult<Value> {
    if depth > 512 {
        return Err(PyRecursionError::new_err(format!(
            "{path}: nested more than 512 levels deep"
        )));
    }
    if obj.is_none() {
        return Ok(Value::Null);
    }
    // `bool` before `int`: in Python, `True` is an `int` too.
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Value::Str(s.to_cow()?.into_owned()));
    }
    if obj.is_instance_of::<pyo3::types::PyInt>() {
        return Ok(match obj.extract::<i64>() {
            Ok(i) => Value::Int(i),
            Err(_) => Value::from_bigint(obj.extract::<BigInt>()?),
        });
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        return Ok(Value::Float(f.value()));
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        let mut map = retort::value::map_with_capacity(d.len());
        for (k, v) in d.iter() {
            let Ok(key) = k.cast::<PyString>() else {
                return Err(PyTypeError::new_err(format!(
                    "{path}: dict keys must be str, got {}",
                    k.get_type().name()?
                )));
            };
            let key = key.to_cow()?.into_owned();
            let len = path.len();
            path.push('.');
            path.push_str(&key);
            let value = py_to_value(&v, path, depth + 1)?;
            path.truncate(len);
            map.insert(key, value);
        }
        return Ok(Value::Map(map));
    }
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        let mut items = Vec::new();
        for (i, item) in obj.try_iter()?.enumerate() {
            let len = path.len();
            path.push_str(&format!("[{i}]"));
            items.push(py_to_value(&item?, path, depth + 1)?);
            path.truncate(len);
        }
        return Ok(Value::List(items));
    }
    Err(PyTypeError::new_err(format!(
        "{path}: a {} cannot be used here (only None, bool, int, float, str, list, tuple and dict with str keys)",
        obj.get_type().name()?
    )))
}

// ---------------------------------------------------------------------------
// Errors

/// Sets extra attributes on an exception (where it happened, for callers
/// that want to recover the model's text).
fn with_attrs(py: Python<'_>, err: PyErr, attrs: &[(&str, Bound<'_, PyAny>)]) -> PyErr {
    let value = err.value(py);
    for (k, v) in attrs {
        // An exception class that refuses attributes keeps its message.
        let _ = value.setattr(*k, v);
    }
    err
}

/// A rejected template, as the reference reports it: `ValueError` with the
/// reference's message; `rule`, `path` and `location` say more.
fn template_error(py: Python<'_>, e: &TemplateError) -> PyErr {
    let err = PyValueError::new_err(e.message.clone());
    let location = e
        .location
        .as_ref()
        .map(|l| PyString::new(py, &l.to_string()).into_any())
        .unwrap_or_else(|| py.None().into_bound(py));
    with_attrs(
        py,
        err,
        &[
            ("rule", PyString::new(py, e.rule.name()).into_any()),
            ("path", PyString::new(py, &e.path).into_any()),
            ("location", location),
        ],
    )
}

/// Splits `"KeyError: 'x'"` (how the engine writes a Python exception it
/// reproduces) into the class name and `str(exc)`.
fn split_exception(message: &str) -> Option<(&str, &str)> {
    const NAMES: [&str; 7] = [
        "ValueError",
        "TypeError",
        "AttributeError",
        "KeyError",
        "RecursionError",
        "RuntimeError",
        "error",
    ];
    let (name, rest) = message.split_once(": ")?;
    NAMES.contains(&name).then_some((name, rest))
}

/// The exception the reference raises for this error in model output: its
/// class and `str(exc)`.
fn classify(e: &ParseError) -> (&'static str, &str) {
    let message = e.message.as_str();
    match &e.kind {
        ParseErrorKind::Finalized => ("RuntimeError", message),
        ParseErrorKind::MissingFields(_) => ("ValueError", message),
        ParseErrorKind::Field | ParseErrorKind::Tools => match split_exception(message) {
            Some((name, rest)) => (
                match name {
                    "ValueError" => "ValueError",
                    "TypeError" => "TypeError",
                    "AttributeError" => "AttributeError",
                    "KeyError" => "KeyError",
                    "RecursionError" => "RecursionError",
                    "RuntimeError" => "RuntimeError",
                    // `regex.error` from a `tag_pattern` that does not
                    // compile; without the `regex` module at hand it is
                    // reported as the `ValueError` it is closest to.
                    _ => "error",
                },
                rest,
            ),
            // Messages the engine words without a class are those of
            // Python's own operations in the reference's `_close_current`.
            None if message.contains("object has no attribute") => ("AttributeError", message),
            None => ("ValueError", message),
        },
        ParseErrorKind::InvalidUtf8 | ParseErrorKind::MissingAnchor => ("ValueError", message),
        // The reference loops or searches forever here (docs/divergences.md);
        // retort stops with an error of its own.
        _ => ("RuntimeError", message),
    }
}

fn parse_error(py: Python<'_>, e: &ParseError) -> PyErr {
    let (class, message) = classify(e);
    let err = match class {
        "ValueError" => PyValueError::new_err(message.to_owned()),
        "TypeError" => PyTypeError::new_err(message.to_owned()),
        "AttributeError" => PyAttributeError::new_err(message.to_owned()),
        "RecursionError" => PyRecursionError::new_err(message.to_owned()),
        "RuntimeError" => PyRuntimeError::new_err(message.to_owned()),
        "KeyError" => {
            // `str(KeyError(arg))` is `repr(arg)`, which is what the engine
            // wrote: raise `KeyError(arg)` so that `str()` matches.
            let arg = py
                .import(intern!(py, "ast"))
                .and_then(|ast| ast.call_method1(intern!(py, "literal_eval"), (message,)))
                .unwrap_or_else(|_| PyString::new(py, message).into_any());
            PyKeyError::new_err(arg.unbind())
        }
        _ => match py
            .import(intern!(py, "regex"))
            .and_then(|m| m.getattr(intern!(py, "error")))
        {
            Ok(class) => match class.call1((message,)) {
                Ok(instance) => PyErr::from_value(instance),
                Err(_) => PyValueError::new_err(message.to_owned()),
            },
            Err(_) => PyValueError::new_err(message.to_owned()),
        },
    };
    let field = match &e.field {
        Some(f) => PyString::new(py, f).into_any(),
        None => py.None().into_bound(py),
    };
    let offset = e
        .offset
        .into_bound_py_any(py)
        .unwrap_or_else(|_| py.None().into_bound(py));
    with_attrs(
        py,
        err,
        &[
            ("field", field),
            ("offset", offset),
            ("raw", PyString::new(py, &e.raw).into_any()),
        ],
    )
}

// ---------------------------------------------------------------------------
// Templates

/// A compiled response template.
///
/// `retort.Template(spec)` compiles a template given as a dict (the
/// `response_template` of a `tokenizer_config.json`), a JSON string (a bare
/// template or a whole `tokenizer_config.json`), or transformers'
/// `ResponseTemplate`. Passing a `Template` where a template is expected
/// skips the compilation; dicts and strings are compiled once and cached.
#[pyclass(frozen, module = "retort", name = "Template")]
struct PyTemplate {
    inner: Arc<retort::Template>,
}

#[pymethods]
impl PyTemplate {
    #[new]
    fn new(py: Python<'_>, spec: &Bound<'_, PyAny>) -> PyResult<PyTemplate> {
        Ok(PyTemplate {
            inner: resolve_template(py, spec)?,
        })
    }

    /// The names of the template's fields, in the template's order.
    #[getter]
    fn fields(&self) -> Vec<String> {
        self.inner.fields().iter().map(|f| f.name.clone()).collect()
    }

    /// The template's `defaults` (a fresh dict).
    #[getter]
    fn defaults<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        map_to_py(py, self.inner.defaults())
    }

    fn __repr__(&self) -> String {
        format!("<retort.Template fields={:?}>", self.fields())
    }
}

/// Compiled templates by their canonical JSON text: callers of
/// `parse_response` pass the same dict over and over, and compiling it
/// (delimiter automata) costs far more than writing it as text.
fn cache() -> &'static Mutex<HashMap<String, Arc<retort::Template>>> {
    static CACHE: OnceLock<Mutex<HashMap<String, Arc<retort::Template>>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

const CACHE_LIMIT: usize = 256;

fn cached(
    key: String,
    build: impl FnOnce() -> Result<retort::Template, TemplateError>,
) -> Result<Arc<retort::Template>, TemplateError> {
    if let Some(t) = cache().lock().ok().and_then(|c| c.get(&key).cloned()) {
        return Ok(t);
    }
    let t = Arc::new(build()?);
    if let Ok(mut c) = cache().lock() {
        if c.len() >= CACHE_LIMIT {
            c.clear();
        }
        c.insert(key, Arc::clone(&t));
    }
    Ok(t)
}

fn resolve_template(py: Python<'_>, spec: &Bound<'_, PyAny>) -> PyResult<Arc<retort::Template>> {
    if let Ok(t) = spec.cast::<PyTemplate>() {
        return Ok(Arc::clone(&t.get().inner));
    }
    if let Ok(s) = spec.cast::<PyString>() {
        let text = s.to_cow()?.into_owned();
        return cached(format!("s{text}"), || retort::Template::from_json(&text))
            .map_err(|e| template_error(py, &e));
    }
    let converted;
    let spec = if spec.is_instance_of::<PyDict>() {
        spec
    } else {
        // transformers' `ResponseTemplate` (or something that is no
        // template: the helper raises the reference's error for it).
        converted = py
            .import(intern!(py, "retort._compat"))?
            .call_method1(intern!(py, "template_spec"), (spec,))?;
        &converted
    };
    let value = py_to_value(spec, &mut String::from("response_template"), 0)?;
    cached(format!("v{}", value.to_json_string()), || {
        retort::Template::from_value(&value)
    })
    .map_err(|e| template_error(py, &e))
}

/// `tools` as the engine takes them: callables converted the way the
/// reference converts them (`get_json_schema`, by the Python helper).
fn resolve_tools(py: Python<'_>, tools: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Value>> {
    let Some(tools) = tools.filter(|t| !t.is_none()) else {
        return Ok(None);
    };
    let list = py
        .import(intern!(py, "retort._compat"))?
        .call_method1(intern!(py, "tool_list"), (tools,))?;
    Ok(Some(py_to_value(&list, &mut String::from("tools"), 0)?))
}

fn make_parser<'t>(
    t: &'t retort::Template,
    prefix: &str,
    tools: Option<&Value>,
) -> Result<retort::Parser<'t>, ParseError> {
    match tools {
        Some(tools) => t.parser_with_tools(prefix, tools),
        None => t.parser(prefix),
    }
}

/// `reasoning_format=`: llama.cpp's names (`"auto"`, `"none"`, ...).
fn reasoning_format(name: &str) -> PyResult<retort::ReasoningFormat> {
    name.parse()
        .map_err(|e: retort::UnknownReasoningFormat| PyValueError::new_err(e.to_string()))
}

/// One whole generation: the reference's `parse_response` (with the
/// reasoning split, the default, or inline).
fn parse_one(
    t: &retort::Template,
    text: &str,
    prefix: &str,
    tools: Option<&Value>,
    format: retort::ReasoningFormat,
) -> Result<Map, ParseError> {
    let mut p = match format {
        retort::ReasoningFormat::Split => make_parser(t, prefix, tools)?,
        _ => t.parser_with(
            prefix,
            retort::ParserOptions::new().reasoning_format(format),
            tools,
        )?,
    };
    p.feed(text)?;
    Ok(p.finalize()?.0)
}

// ---------------------------------------------------------------------------
// The streaming parser

type RParser<'a> = retort::Parser<'a>;

self_cell!(
    struct ParserCell {
        owner: Arc<retort::Template>,
        #[not_covariant]
        dependent: RParser,
    }
);

/// A streaming parser: transformers' `ResponseParser` on retort's engine.
///
/// `ResponseParser(response_template, prefix, *, tools=None)`: `prefix` is
/// the prompt sent to the model (required: `None` raises `ValueError`; pass
/// `""` to opt out); `tools` (dicts or functions) cast tool-call arguments
/// by their declared types; `reasoning_format="none"` keeps the reasoning
/// inline in `content`, delimiters included, as llama.cpp's
/// `reasoning_format: none` does (the default, `"auto"`, splits it out:
/// the reference's result).
///
///     parser = ResponseParser(template, prefix=prompt)
///     for event in parser.initial_events: handle(event)
///     for piece in stream:
///         for event in parser.feed(piece): handle(event)
///     message, final_events = parser.finalize()
///
/// Events are dicts: `region_open` (`field`), `region_chunk` (`field`,
/// `text`, `dirty`: whether the text is raw material of a structured
/// parser) and `region_close` (`field`, `value`). Every chunking gives the
/// same message. Errors in the output raise the reference's exception
/// (mostly `ValueError`) with `field`, `offset` and `raw` attributes; the
/// parser then keeps raising it. Use after `finalize` raises `RuntimeError`.
#[pyclass(subclass, module = "retort", name = "ResponseParser")]
struct PyResponseParser {
    cell: ParserCell,
    initial: Py<PyList>,
}

#[pymethods]
impl PyResponseParser {
    #[new]
    #[pyo3(signature = (response_template, prefix=None, *, tools=None, require_anchor=false, reasoning_format="auto"))]
    fn new(
        py: Python<'_>,
        response_template: &Bound<'_, PyAny>,
        prefix: Option<&Bound<'_, PyAny>>,
        tools: Option<&Bound<'_, PyAny>>,
        require_anchor: bool,
        reasoning_format: &str,
    ) -> PyResult<PyResponseParser> {
        let format = self::reasoning_format(reasoning_format)?;
        let template = resolve_template(py, response_template)?;
        let Some(prefix) = prefix.filter(|p| !p.is_none()) else {
            return Err(PyValueError::new_err(PREFIX_REQUIRED));
        };
        let prefix: PyBackedStr = prefix.extract()?;
        let tools = resolve_tools(py, tools)?;
        let cell = ParserCell::try_new(template, |t| {
            if require_anchor || format != retort::ReasoningFormat::Split {
                let options = retort::ParserOptions::new()
                    .require_anchor(require_anchor)
                    .reasoning_format(format);
                t.parser_with(&prefix, options, tools.as_ref())
            } else {
                make_parser(t, &prefix, tools.as_ref())
            }
        })
        .map_err(|e| parse_error(py, &e))?;
        let initial = cell
            .with_dependent(|_, p| {
                events_to_py(py, p.initial_events().iter().map(|e| e.as_event()))
            })?
            .unbind();
        Ok(PyResponseParser { cell, initial })
    }

    /// Whether the prompt (not empty) lacks the template's start anchor:
    /// then the whole prompt was parsed as if the model had written it (the
    /// reference's semantics), which usually means the template does not
    /// fit the prompt. `require_anchor=True` raises `ValueError` instead.
    #[getter]
    fn anchor_missing(&self) -> bool {
        self.cell.with_dependent(|_, p| p.anchor_missing())
    }

    /// The generation's text that no region claimed so far (templates
    /// without an implicit field drop text outside regions, as the
    /// reference does; an end-of-turn close that takes the rest keeps what
    /// follows the marker out of the message): a list of `(offset, text)`,
    /// whitespace included.
    #[getter]
    fn unclaimed(&self) -> Vec<(usize, String)> {
        self.cell.with_dependent(|_, p| {
            p.unclaimed()
                .iter()
                .map(|u| (u.offset, u.text.clone()))
                .collect()
        })
    }

    /// The events the prompt produced (regions it opened or wrote), to
    /// replay before the model's output.
    #[getter]
    fn initial_events(&self, py: Python<'_>) -> Py<PyList> {
        self.initial.clone_ref(py)
    }

    /// Feeds the next piece of the generation; returns the events it produced.
    fn feed<'py>(&mut self, py: Python<'py>, text: PyBackedStr) -> PyResult<Bound<'py, PyList>> {
        self.cell.with_dependent_mut(|_, p| match p.feed(&text) {
            Ok(events) => events_to_py(py, events),
            Err(e) => Err(parse_error(py, &e)),
        })
    }

    /// Ends the generation: returns `(message, final_events)`.
    fn finalize<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        self.cell.with_dependent_mut(|_, p| match p.finalize() {
            Ok((message, events)) => {
                let events = events_to_py(py, events)?;
                let message = map_to_py(py, &message)?;
                PyTuple::new(py, [message.into_any(), events.into_any()])
            }
            Err(e) => Err(parse_error(py, &e)),
        })
    }
}

/// Parses a complete generation: transformers' `parse_response`.
///
/// Returns the message dict. `prefix` (the prompt) is required, as for
/// `ResponseParser`; `tools` cast tool-call arguments;
/// `reasoning_format="none"` keeps the reasoning inline in `content`.
/// Generations of 64 KiB
/// and more are parsed with the GIL released.
#[pyfunction]
#[pyo3(signature = (text, response_template, *, prefix=None, tools=None, reasoning_format="auto"))]
fn parse_response<'py>(
    py: Python<'py>,
    text: PyBackedStr,
    response_template: &Bound<'py, PyAny>,
    prefix: Option<&Bound<'py, PyAny>>,
    tools: Option<&Bound<'py, PyAny>>,
    reasoning_format: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let format = self::reasoning_format(reasoning_format)?;
    let template = resolve_template(py, response_template)?;
    let Some(prefix) = prefix.filter(|p| !p.is_none()) else {
        return Err(PyValueError::new_err(PREFIX_REQUIRED));
    };
    let prefix: PyBackedStr = prefix.extract()?;
    let tools = resolve_tools(py, tools)?;
    // Long generations are parsed without the GIL, so that other Python
    // threads run meanwhile; short ones are not worth the hand-over.
    let result = if text.len() >= 1 << 16 {
        py.detach(|| parse_one(&template, &text, &prefix, tools.as_ref(), format))
    } else {
        parse_one(&template, &text, &prefix, tools.as_ref(), format)
    };
    match result {
        Ok(message) => map_to_py(py, &message),
        Err(e) => Err(parse_error(py, &e)),
    }
}

// ---------------------------------------------------------------------------
// Batches

/// Parses every generation of `texts` on `threads` threads (all cores by
/// default) with the GIL released; results come back in input order.
/// `reasoning_format` as for `parse_response`.
#[pyfunction]
#[allow(clippy::too_many_arguments)] // Python's keyword arguments
#[pyo3(signature = (texts, response_template, *, prefixes=None, tools=None, threads=None, errors="raise", output="dict", reasoning_format="auto"))]
fn parse_many<'py>(
    py: Python<'py>,
    texts: &Bound<'py, PyAny>,
    response_template: &Bound<'py, PyAny>,
    prefixes: Option<&Bound<'py, PyAny>>,
    tools: Option<&Bound<'py, PyAny>>,
    threads: Option<usize>,
    errors: &str,
    output: &str,
    reasoning_format: &str,
) -> PyResult<Bound<'py, PyList>> {
    let format = self::reasoning_format(reasoning_format)?;
    let return_errors = match errors {
        "raise" => false,
        "return" => true,
        other => {
            return Err(PyValueError::new_err(format!(
                "errors must be \"raise\" or \"return\", got {other:?}"
            )));
        }
    };
    let as_json = match output {
        "dict" => false,
        "json" => true,
        other => {
            return Err(PyValueError::new_err(format!(
                "output must be \"dict\" or \"json\", got {other:?}"
            )));
        }
    };
    let template = resolve_template(py, response_template)?;
    if texts.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err(
            "texts must be a sequence of str, not a single str (use parse_response)",
        ));
    }
    let texts: Vec<PyBackedStr> = texts
        .try_iter()?
        .map(|t| t.and_then(|t| t.extract()))
        .collect::<PyResult<_>>()?;
    let prefixes: Vec<PyBackedStr> = match prefixes.filter(|p| !p.is_none()) {
        None => return Err(PyValueError::new_err(PREFIX_REQUIRED)),
        Some(p) if p.is_instance_of::<PyString>() => vec![p.extract()?],
        Some(p) => {
            let list: Vec<PyBackedStr> = p
                .try_iter()?
                .map(|t| t.and_then(|t| t.extract()))
                .collect::<PyResult<_>>()?;
            if list.len() != texts.len() {
                return Err(PyValueError::new_err(format!(
                    "Got {} text(s) but {} prefix(es); `prefixes` must be a single str (used for every \
                     text) or one prefix per text.",
                    texts.len(),
                    list.len()
                )));
            }
            list
        }
    };
    let tools = resolve_tools(py, tools)?;
    let threads = match threads {
        Some(0) => return Err(PyValueError::new_err("threads must be at least 1")),
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, usize::from),
    };
    let prefix_of = |i: usize| -> &str {
        if prefixes.len() == 1 {
            &prefixes[0]
        } else {
            &prefixes[i]
        }
    };
    let results: Vec<Result<Parsed, ParseError>> = py.detach(|| {
        let run = |i: usize| {
            let message = parse_one(&template, &texts[i], prefix_of(i), tools.as_ref(), format)?;
            // JSON text is written here, on the worker threads: building
            // Python objects is the part of a batch that needs the GIL.
            Ok(if as_json {
                Parsed::Json(Value::Map(message).to_json_string())
            } else {
                Parsed::Dict(message)
            })
        };
        let n = texts.len();
        let threads = threads.min(n.div_ceil(BLOCK)).max(1);
        if threads == 1 {
            return (0..n).map(run).collect();
        }
        // Workers take blocks of consecutive texts from a shared counter,
        // so that a few long generations do not leave the others idle.
        let next = AtomicUsize::new(0);
        let mut parts: Vec<Vec<(usize, Result<Parsed, ParseError>)>> = std::thread::scope(|s| {
            let workers: Vec<_> = (0..threads)
                .map(|_| {
                    s.spawn(|| {
                        let mut out = Vec::new();
                        loop {
                            let start = next.fetch_add(BLOCK, Ordering::Relaxed);
                            if start >= n {
                                break out;
                            }
                            for i in start..(start + BLOCK).min(n) {
                                out.push((i, run(i)));
                            }
                        }
                    })
                })
                .collect();
            workers
                .into_iter()
                .map(|w| w.join().unwrap_or_default())
                .collect()
        });
        let mut slots: Vec<Option<Result<Parsed, ParseError>>> = (0..n).map(|_| None).collect();
        for part in parts.iter_mut() {
            for (i, r) in part.drain(..) {
                slots[i] = Some(r);
            }
        }
        slots
            .into_iter()
            .map(|r| {
                r.unwrap_or_else(|| {
                    Err(ParseError {
                        kind: ParseErrorKind::Internal,
                        field: None,
                        offset: 0,
                        raw: String::new(),
                        message: "a worker thread panicked".into(),
                    })
                })
            })
            .collect()
    });
    let out = PyList::empty(py);
    for (i, r) in results.iter().enumerate() {
        match r {
            Ok(Parsed::Dict(message)) => out.append(map_to_py(py, message)?)?,
            Ok(Parsed::Json(text)) => out.append(PyString::new(py, text))?,
            Err(e) => {
                let err = parse_error(py, e);
                let err = with_attrs(py, err, &[("index", i.into_bound_py_any(py)?)]);
                if !return_errors {
                    return Err(err);
                }
                out.append(err.into_value(py))?;
            }
        }
    }
    Ok(out)
}

/// A message of `parse_many`: the reference's dict, or that dict as the
/// text `json.dumps(message, ensure_ascii=False)` writes.
enum Parsed {
    Dict(Map),
    Json(String),
}

/// Texts a worker takes at a time in `parse_many`.
const BLOCK: usize = 16;

// ---------------------------------------------------------------------------
// Bundled templates

/// The names of the bundled templates (the facade's registry: the
/// repository's `templates/`), sorted.
#[pyfunction]
fn bundled_names() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = retort::registry::families()
        .iter()
        .map(|f| f.name())
        .collect();
    names.sort_unstable();
    names
}

/// The JSON text of a bundled template, by family name.
#[pyfunction]
fn bundled_json(name: &str) -> PyResult<&'static str> {
    retort::registry::family(name)
        .map(|f| f.json())
        .map_err(|e| PyKeyError::new_err(e.to_string()))
}

/// The bundled family for a family name, a Hugging Face repo id
/// (`Qwen/Qwen3-8B`, quantised copies too) or a hub address.
#[pyfunction]
fn resolve_model(query: &str) -> PyResult<&'static str> {
    retort::registry::resolve(query)
        .map(|f| f.name())
        .map_err(|e| PyKeyError::new_err(e.to_string()))
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyTemplate>()?;
    m.add_class::<PyResponseParser>()?;
    m.add_class::<chat::PyChatTemplate>()?;
    m.add("RenderFailure", m.py().get_type::<chat::RenderFailure>())?;
    m.add_function(wrap_pyfunction!(parse_response, m)?)?;
    m.add_function(wrap_pyfunction!(parse_many, m)?)?;
    m.add_function(wrap_pyfunction!(bundled_names, m)?)?;
    m.add_function(wrap_pyfunction!(bundled_json, m)?)?;
    m.add_function(wrap_pyfunction!(resolve_model, m)?)?;
    m.add("PREFIX_REQUIRED", PREFIX_REQUIRED)?;
    Ok(())
}
