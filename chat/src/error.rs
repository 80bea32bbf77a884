//! Errors, each with the Python exception class transformers (jinja2) raises
//! for the same input, so results compare with the reference's.

use std::fmt;

/// The Python exceptions a render can end in. Internal: carried inside
/// minijinja errors (as their source) from the functions that raise them.
// The variants are Python's class names, `Error` suffix and all.
#[allow(clippy::enum_variant_names)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PyExc {
    TemplateError,
    TemplateRuntimeError,
    UndefinedError,
    SecurityError,
    FilterArgumentError,
    TypeError,
    ValueError,
    OverflowError,
    ZeroDivisionError,
    AttributeError,
    KeyError,
    IndexError,
    RecursionError,
    MemoryError,
}

impl PyExc {
    pub(crate) fn name(self) -> &'static str {
        match self {
            PyExc::TemplateError => "TemplateError",
            PyExc::TemplateRuntimeError => "TemplateRuntimeError",
            PyExc::UndefinedError => "UndefinedError",
            PyExc::SecurityError => "SecurityError",
            PyExc::FilterArgumentError => "FilterArgumentError",
            PyExc::TypeError => "TypeError",
            PyExc::ValueError => "ValueError",
            PyExc::OverflowError => "OverflowError",
            PyExc::ZeroDivisionError => "ZeroDivisionError",
            PyExc::AttributeError => "AttributeError",
            PyExc::KeyError => "KeyError",
            PyExc::IndexError => "IndexError",
            PyExc::RecursionError => "RecursionError",
            PyExc::MemoryError => "MemoryError",
        }
    }
}

/// A Python exception raised inside the template, attached as the source of
/// a minijinja error so the class survives minijinja's error plumbing.
#[derive(Debug, Clone)]
pub(crate) struct PyError {
    pub(crate) exc: PyExc,
    pub(crate) message: String,
}

impl fmt::Display for PyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.exc.name(), self.message)
    }
}

impl std::error::Error for PyError {}

/// A minijinja error that is the Python exception `exc(message)`.
pub(crate) fn py_err(exc: PyExc, message: impl Into<String>) -> minijinja::Error {
    let message = message.into();
    minijinja::Error::new(minijinja::ErrorKind::InvalidOperation, message.clone())
        .with_source(PyError { exc, message })
}

/// `TypeError(message)`.
pub(crate) fn type_err(message: impl Into<String>) -> minijinja::Error {
    py_err(PyExc::TypeError, message)
}

/// `ValueError(message)`.
pub(crate) fn value_err(message: impl Into<String>) -> minijinja::Error {
    py_err(PyExc::ValueError, message)
}

/// Which of the [`Limits`](crate::Limits) a render ran into.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Limit {
    /// The work budget ([`Limits::fuel`](crate::Limits::fuel)): too many
    /// instructions, or too much data made.
    Fuel,
    /// Macro or block nesting ([`Limits::recursion`](crate::Limits::recursion)).
    Recursion,
    /// The rendered text's size ([`Limits::output_bytes`](crate::Limits::output_bytes)).
    Output,
    /// Nesting of the input data, or of a value printed or serialised
    /// ([`Limits::depth`](crate::Limits::depth)).
    Depth,
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Limit::Fuel => "fuel",
            Limit::Recursion => "recursion",
            Limit::Output => "output size",
            Limit::Depth => "nesting depth",
        })
    }
}

/// What went wrong in a render, with the exception class the reference
/// raises for it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RenderErrorKind {
    /// The template called `raise_exception(message)`: jinja2's
    /// `TemplateError`, the message verbatim.
    TemplateError,
    /// The sandbox refused an operation (`list.append`, `dict.update`, an
    /// underscore attribute): `SecurityError`.
    Security,
    /// An undefined value was used where a value is needed: `UndefinedError`.
    Undefined,
    /// An operation on the wrong types: `TypeError`.
    Type,
    /// A bad value: `ValueError`; also transformers' own checks around the
    /// template (`continue_final_message`, …).
    Value,
    /// Another Python exception, by class name (`OverflowError` for a
    /// `range` over 100,000 items, `ZeroDivisionError`,
    /// `TemplateRuntimeError`, `TemplateAssertionError`, …).
    Other(&'static str),
    /// A [`Limits`](crate::Limits) bound was reached; the reference has no
    /// such bound (it would run on, or fail with its own resource error).
    Limit {
        /// The bound.
        which: Limit,
    },
}

/// A failed render.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RenderError {
    kind: RenderErrorKind,
    message: String,
    line: Option<usize>,
}

impl RenderError {
    pub(crate) fn new(kind: RenderErrorKind, message: impl Into<String>) -> RenderError {
        RenderError {
            kind,
            message: message.into(),
            line: None,
        }
    }

    pub(crate) fn with_line(mut self, line: Option<usize>) -> RenderError {
        self.line = line;
        self
    }

    pub(crate) fn limit(which: Limit, message: impl Into<String>) -> RenderError {
        RenderError::new(RenderErrorKind::Limit { which }, message)
    }

    /// What went wrong.
    pub fn kind(&self) -> &RenderErrorKind {
        &self.kind
    }

    /// The exception's message, as Python's `str(exception)` gives it where
    /// the reference's is known (`raise_exception`'s text verbatim,
    /// transformers' `ValueError`s, the sandbox's `SecurityError`s).
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The template line the error was raised at, when known.
    pub fn line(&self) -> Option<usize> {
        self.line
    }

    /// The Python exception class the reference raises for this input
    /// (`"TemplateError"`, `"TypeError"`, …). For [`RenderErrorKind::Limit`],
    /// the class Python would end in if it ran out of the same resource:
    /// `RecursionError` for recursion and depth, `MemoryError` for output,
    /// `TimeoutError` for fuel (Python would just keep running).
    pub fn python_type(&self) -> &'static str {
        match &self.kind {
            RenderErrorKind::TemplateError => "TemplateError",
            RenderErrorKind::Security => "SecurityError",
            RenderErrorKind::Undefined => "UndefinedError",
            RenderErrorKind::Type => "TypeError",
            RenderErrorKind::Value => "ValueError",
            RenderErrorKind::Other(name) => name,
            RenderErrorKind::Limit { which } => match which {
                Limit::Fuel => "TimeoutError",
                Limit::Recursion | Limit::Depth => "RecursionError",
                Limit::Output => "MemoryError",
            },
        }
    }

    pub(crate) fn from_exc(exc: PyExc, message: String) -> RenderError {
        let kind = match exc {
            PyExc::TemplateError => RenderErrorKind::TemplateError,
            PyExc::SecurityError => RenderErrorKind::Security,
            PyExc::UndefinedError => RenderErrorKind::Undefined,
            PyExc::TypeError => RenderErrorKind::Type,
            PyExc::ValueError => RenderErrorKind::Value,
            PyExc::RecursionError => RenderErrorKind::Limit {
                which: Limit::Depth,
            },
            PyExc::MemoryError => RenderErrorKind::Limit {
                which: Limit::Output,
            },
            other => RenderErrorKind::Other(other.name()),
        };
        RenderError::new(kind, message)
    }
}

impl fmt::Display for RenderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            RenderErrorKind::Limit { which } => write!(f, "{which} limit: {}", self.message)?,
            _ => write!(f, "{}: {}", self.python_type(), self.message)?,
        }
        if let Some(line) = self.line {
            write!(f, " (line {line})")?;
        }
        Ok(())
    }
}

impl std::error::Error for RenderError {}

/// What went wrong loading a chat template.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ChatErrorKind {
    /// The template does not compile: jinja2's `TemplateSyntaxError`.
    Syntax,
    /// The template uses a filter or test jinja2 does not have, where jinja2
    /// checks that when compiling: its `TemplateAssertionError`.
    Assertion,
    /// A file could not be read.
    Io,
    /// A `tokenizer_config.json` / `chat_template.json` is not what
    /// transformers reads (bad JSON, no `chat_template`).
    Config,
    /// No template fits the request: transformers' `ValueError`s of
    /// `get_chat_template` (several templates and no `default`, an unknown
    /// name, no template at all).
    Selection,
}

/// A chat template that could not be loaded or compiled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChatError {
    kind: ChatErrorKind,
    message: String,
    line: Option<usize>,
    column: Option<usize>,
}

impl ChatError {
    pub(crate) fn new(kind: ChatErrorKind, message: impl Into<String>) -> ChatError {
        ChatError {
            kind,
            message: message.into(),
            line: None,
            column: None,
        }
    }

    pub(crate) fn syntax(message: impl Into<String>, line: usize, column: usize) -> ChatError {
        ChatError {
            kind: ChatErrorKind::Syntax,
            message: message.into(),
            line: Some(line),
            column: Some(column),
        }
    }

    pub(crate) fn assertion(message: impl Into<String>, line: usize, column: usize) -> ChatError {
        ChatError {
            kind: ChatErrorKind::Assertion,
            message: message.into(),
            line: Some(line),
            column: Some(column),
        }
    }

    /// What went wrong.
    pub fn kind(&self) -> &ChatErrorKind {
        &self.kind
    }

    /// The message (for syntax errors, the template engine's).
    pub fn message(&self) -> &str {
        &self.message
    }

    /// For syntax and assertion errors: the line (1-based) in the template
    /// source.
    pub fn line(&self) -> Option<usize> {
        self.line
    }

    /// For syntax and assertion errors: the column (1-based, in characters;
    /// for syntax errors, in the source as rewritten for minijinja, which
    /// moves columns on lines with rewritten constructs).
    pub fn column(&self) -> Option<usize> {
        self.column
    }

    /// The Python exception class the reference raises
    /// (`"TemplateSyntaxError"`, `"ValueError"`, `"OSError"`, …).
    pub fn python_type(&self) -> &'static str {
        match self.kind {
            ChatErrorKind::Syntax => "TemplateSyntaxError",
            ChatErrorKind::Assertion => "TemplateAssertionError",
            ChatErrorKind::Io => "OSError",
            ChatErrorKind::Config => "JSONDecodeError",
            ChatErrorKind::Selection => "ValueError",
        }
    }
}

impl fmt::Display for ChatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.python_type(), self.message)?;
        if let (Some(line), Some(column)) = (self.line, self.column) {
            write!(f, " (line {line}, column {column})")?;
        }
        Ok(())
    }
}

impl std::error::Error for ChatError {}
