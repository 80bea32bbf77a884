//! Chat templates from Python: `retort._native.ChatTemplate`, on the same
//! renderer as the Rust API (`retort::chat`).
//!
//! The conversation crosses as JSON text that the Python side writes
//! (`json.dumps` with transformers' placeholders for what is not plain
//! data): the renderer reads `serde_json` values, and one `json.loads`-
//! shaped hand-over is cheaper than walking Python objects field by field.

use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyString;
use retort::chat::{ChatTemplate, ContinueFinal, DateTime, Entry, RenderInput};
use serde_json::Value as Json;

create_exception!(
    _native,
    RenderFailure,
    PyException,
    "A render failed: args are (the Python exception class transformers raises, its message)."
);

/// One conversation's render: the text and its `{% generation %}` spans
/// (character offsets, as transformers reports them).
type Render = (String, Vec<(usize, usize)>);

/// A compiled chat template: compile once, render many conversations.
#[pyclass(name = "ChatTemplate", module = "retort._native", frozen)]
pub struct PyChatTemplate {
    inner: ChatTemplate,
}

fn json_arg(what: &str, text: Option<&str>) -> PyResult<Option<Json>> {
    match text {
        None => Ok(None),
        Some(t) => serde_json::from_str(t)
            .map(Some)
            .map_err(|e| PyValueError::new_err(format!("{what}: not JSON: {e}"))),
    }
}

fn list_arg(what: &str, text: Option<&str>) -> PyResult<Option<Vec<Json>>> {
    match json_arg(what, text)? {
        None | Some(Json::Null) => Ok(None),
        Some(Json::Array(items)) => Ok(Some(items)),
        Some(_) => Err(PyValueError::new_err(format!("{what} must be a list"))),
    }
}

#[pymethods]
impl PyChatTemplate {
    /// Compiles `source` (a syntax error raises `RenderFailure` naming
    /// jinja2's exception class).
    #[new]
    fn new(source: &str) -> PyResult<PyChatTemplate> {
        ChatTemplate::new(source)
            .map(|inner| PyChatTemplate { inner })
            .map_err(|e| {
                RenderFailure::new_err((e.python_type().to_owned(), e.message().to_owned()))
            })
    }

    /// The template's text.
    #[getter]
    fn source(&self) -> &str {
        self.inner.source()
    }

    /// Renders each conversation of `conversations` (JSON text of a list of
    /// conversations) with the same tools, documents and variables; returns
    /// `(text, generation spans as (start, end) character offsets)` per
    /// conversation. `apply` reproduces `apply_chat_template` rather than
    /// `render_jinja_template`; `now` (year, month, day, hour, minute,
    /// second, microsecond) is what `strftime_now` formats (default: the
    /// current time, UTC). The GIL is released while rendering.
    #[pyo3(signature = (conversations, *, tools=None, documents=None, add_generation_prompt=false, continue_final_message=None, kwargs=None, apply=true, now=None))]
    #[allow(clippy::too_many_arguments)] // Python's keyword arguments
    fn render(
        &self,
        py: Python<'_>,
        conversations: &str,
        tools: Option<&str>,
        documents: Option<&str>,
        add_generation_prompt: bool,
        continue_final_message: Option<&Bound<'_, PyAny>>,
        kwargs: Option<&str>,
        apply: bool,
        now: Option<(i32, u32, u32, u32, u32, u32, u32)>,
    ) -> PyResult<Vec<Render>> {
        let conversations: Vec<Vec<Json>> = match json_arg("conversations", Some(conversations))? {
            Some(Json::Array(items)) => items
                .into_iter()
                .map(|c| match c {
                    Json::Array(m) => Ok(m),
                    _ => Err(PyValueError::new_err("each conversation must be a list")),
                })
                .collect::<PyResult<_>>()?,
            _ => return Err(PyValueError::new_err("conversations must be a list")),
        };
        let mut input = RenderInput::new(Vec::new());
        input.tools = list_arg("tools", tools)?;
        input.documents = list_arg("documents", documents)?;
        input.add_generation_prompt = add_generation_prompt;
        input.continue_final_message = match continue_final_message {
            None => ContinueFinal::No,
            Some(v) if v.is_instance_of::<PyString>() => ContinueFinal::Field(v.extract()?),
            Some(v) if v.is_truthy()? => ContinueFinal::Content,
            Some(_) => ContinueFinal::No,
        };
        input.kwargs = match json_arg("kwargs", kwargs)? {
            None | Some(Json::Null) => Default::default(),
            Some(Json::Object(o)) => o,
            Some(_) => return Err(PyValueError::new_err("kwargs must be a dict")),
        };
        input.now = now.map(
            |(year, month, day, hour, minute, second, microsecond)| DateTime {
                year,
                month,
                day,
                hour,
                minute,
                second,
                microsecond,
            },
        );
        input.entry = if apply {
            Entry::ApplyChatTemplate
        } else {
            Entry::RenderJinjaTemplate
        };
        let rendered = py
            .detach(|| self.inner.render_batch(&conversations, &input))
            .map_err(|e| {
                RenderFailure::new_err((e.python_type().to_owned(), e.message().to_owned()))
            })?;
        Ok(rendered
            .into_iter()
            .map(|r| {
                let spans = r
                    .generation
                    .iter()
                    .map(|s| (s.chars.start, s.chars.end))
                    .collect();
                (r.text, spans)
            })
            .collect())
    }
}
