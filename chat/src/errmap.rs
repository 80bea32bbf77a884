//! minijinja's errors as the exceptions jinja2 raises for the same template
//! and data: the class always (that is what results compare), and Python's
//! message where minijinja's error says enough to rebuild it (an undefined
//! name, the operand types of a failed `+`).

use minijinja::ErrorKind;

use crate::error::{Limit, PyError, RenderError, RenderErrorKind};
use crate::limits::OutputLimit;

/// Maps a minijinja error (from compiling or rendering) to jinja2's.
pub(crate) fn map_error(e: &minijinja::Error) -> RenderError {
    let line = e.line();
    let mut source: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(e);
    while let Some(s) = source {
        if let Some(py) = s.downcast_ref::<PyError>() {
            return RenderError::from_exc(py.exc, py.message.clone()).with_line(line);
        }
        if let Some(limit) = s.downcast_ref::<OutputLimit>() {
            return RenderError::limit(Limit::Output, limit.to_string()).with_line(line);
        }
        if let Some(io) = s.downcast_ref::<std::io::Error>()
            && let Some(limit) = io.get_ref().and_then(|i| i.downcast_ref::<OutputLimit>())
        {
            return RenderError::limit(Limit::Output, limit.to_string()).with_line(line);
        }
        source = s.source();
    }
    let detail = e.detail().unwrap_or("");
    let (detail, origin) = split_origin(detail);
    let undefined = || {
        let message = match origin {
            Some(expr) => undefined_message(expr),
            None => crate::attrs::last_miss().unwrap_or_else(|| "undefined value".to_owned()),
        };
        RenderError::new(RenderErrorKind::Undefined, message)
    };
    let other = |name: &'static str, message: String| {
        RenderError::new(RenderErrorKind::Other(name), message)
    };
    let err = match e.kind() {
        ErrorKind::OutOfFuel => RenderError::limit(Limit::Fuel, "the template ran out of fuel"),
        ErrorKind::UndefinedError => undefined(),
        ErrorKind::UnknownMethod => undefined(),
        ErrorKind::UnknownFunction => {
            let name = detail.strip_suffix(" is unknown").unwrap_or(detail);
            RenderError::new(RenderErrorKind::Undefined, format!("'{name}' is undefined"))
        }
        ErrorKind::UnknownFilter => {
            let name = detail
                .strip_prefix("filter ")
                .and_then(|d| d.strip_suffix(" is unknown"))
                .unwrap_or(detail);
            other(
                "TemplateRuntimeError",
                format!("No filter named '{name}' found."),
            )
        }
        ErrorKind::UnknownTest => {
            let name = detail
                .strip_prefix("test ")
                .and_then(|d| d.strip_suffix(" is unknown"))
                .unwrap_or(detail);
            other(
                "TemplateRuntimeError",
                format!("No test named '{name}' found."),
            )
        }
        ErrorKind::TooManyArguments | ErrorKind::MissingArgument => {
            RenderError::new(RenderErrorKind::Type, detail.to_owned())
        }
        ErrorKind::CannotUnpack => {
            if origin.is_some() {
                undefined()
            } else {
                RenderError::new(RenderErrorKind::Value, unpack_message(detail))
            }
        }
        ErrorKind::TemplateNotFound | ErrorKind::BadInclude => RenderError::new(
            RenderErrorKind::Type,
            "no loader for this environment specified",
        ),
        ErrorKind::InvalidOperation => {
            invalid_operation(detail, origin.is_some()).unwrap_or_else(undefined)
        }
        _ => RenderError::new(
            RenderErrorKind::Type,
            if detail.is_empty() {
                e.to_string()
            } else {
                detail.to_owned()
            },
        ),
    };
    err.with_line(line)
}

/// Splits minijinja's "`expr` is undefined" note (debug mode) off a detail.
fn split_origin(detail: &str) -> (&str, Option<&str>) {
    if let Some(start) = detail.find("`")
        && let Some(len) = detail[start + 1..].find("` is undefined")
    {
        let expr = &detail[start + 1..start + 1 + len];
        let before = detail[..start].trim_end().trim_end_matches('(').trim_end();
        return (before, Some(expr));
    }
    (detail, None)
}

/// jinja2's message for an undefined value made by `expr`.
fn undefined_message(expr: &str) -> String {
    let is_ident = |s: &str| {
        !s.is_empty()
            && s.chars().all(|c| c.is_alphanumeric() || c == '_')
            && !s.starts_with(|c: char| c.is_ascii_digit())
    };
    if is_ident(expr) {
        return format!("'{expr}' is undefined");
    }
    // An attribute or item: jinja2 names the object the lookup failed on.
    // Every lookup goes through `crate::attrs`, which kept the message of
    // the last one that found nothing.
    if let Some(m) = crate::attrs::last_miss() {
        return m;
    }
    format!("'{expr}' is undefined")
}

/// Python's type name for a minijinja kind name.
fn py_kind(kind: &str) -> &str {
    match kind {
        "string" => "str",
        "number" => "int",
        "map" => "dict",
        "sequence" | "iterator" => "list",
        "none" => "NoneType",
        "bool" => "bool",
        "bytes" => "bytes",
        "plain object" => "object",
        other => other,
    }
}

/// Messages of minijinja's `InvalidOperation` errors, as Python words them;
/// `None` when the operation failed on an undefined value (an
/// `UndefinedError` in jinja2).
fn invalid_operation(detail: &str, has_origin: bool) -> Option<RenderError> {
    let ty = |m: String| Some(RenderError::new(RenderErrorKind::Type, m));
    let other = |name: &'static str, m: &str| {
        Some(RenderError::new(RenderErrorKind::Other(name), m.to_owned()))
    };
    if detail.contains("recursion limit exceeded") {
        return Some(RenderError::limit(
            Limit::Recursion,
            "maximum recursion depth exceeded",
        ));
    }
    if let Some(rest) = detail.strip_prefix("tried to use ")
        && let Some((op, types)) = rest.split_once(" operator on unsupported types ")
        && let Some((a, b)) = types.split_once(" and ")
    {
        if a == "undefined" || b == "undefined" {
            return None;
        }
        let (pa, pb) = (py_kind(a), py_kind(b));
        let op = match op {
            "~" => "+",
            o => o,
        };
        return ty(match (op, pa) {
            ("+", "str") => format!("can only concatenate str (not \"{pb}\") to str"),
            ("+", "list") => format!("can only concatenate list (not \"{pb}\") to list"),
            ("*", "str" | "list") | ("*", _) if pa == "str" || pb == "str" => {
                format!(
                    "can't multiply sequence by non-int of type '{}'",
                    if pa == "str" { pb } else { pa }
                )
            }
            _ => format!("unsupported operand type(s) for {op}: '{pa}' and '{pb}'"),
        });
    }
    if has_origin && detail.is_empty() {
        return None;
    }
    if detail.contains("containment check") {
        return ty("argument of type 'NoneType' is not iterable".to_owned());
    }
    if let Some(kind) = detail
        .strip_prefix("value of type ")
        .and_then(|d| d.strip_suffix(" is not callable"))
    {
        return ty(format!("'{}' object is not callable", py_kind(kind)));
    }
    if detail == "object is not callable" {
        return ty("object is not callable".to_owned());
    }
    if let Some(kind) = detail.strip_suffix(" is not iterable") {
        return ty(format!("'{}' object is not iterable", py_kind(kind)));
    }
    if detail.starts_with("can only assign to namespaces") {
        return other(
            "TemplateRuntimeError",
            "cannot assign attribute on non-namespace object",
        );
    }
    if let Some(expr) = detail.strip_prefix("unable to calculate ") {
        let floaty = |s: &str| s.contains(['.', 'e', 'n', 'i']);
        for (op, int_msg, float_msg) in [
            (
                " // ",
                "integer division or modulo by zero",
                "float floor division by zero",
            ),
            (" / ", "division by zero", "float division by zero"),
            (" % ", "integer modulo by zero", "float modulo"),
        ] {
            if let Some((a, b)) = expr.split_once(op) {
                let msg = if floaty(a) || floaty(b) {
                    float_msg
                } else {
                    int_msg
                };
                return other("ZeroDivisionError", msg);
            }
        }
        return other("OverflowError", detail);
    }
    if detail == "repeated string is too large" || detail == "repeated sequence is too large" {
        return Some(RenderError::limit(Limit::Output, detail.to_owned()));
    }
    if detail.contains("cannot be sliced") {
        return ty(detail.to_owned());
    }
    if detail == "strings can only be multiplied with integers"
        || detail == "sequences and iterables can only be multiplied with integers"
    {
        return ty("can't multiply sequence by non-int of type 'float'".to_owned());
    }
    if has_origin {
        return None;
    }
    ty(if detail.is_empty() {
        "invalid operation".to_owned()
    } else {
        detail.to_owned()
    })
}

fn unpack_message(detail: &str) -> String {
    // "sequence of wrong length (expected 2, got 3)"
    if let Some(rest) = detail.strip_prefix("sequence of wrong length (expected ")
        && let Some((want, got)) = rest.trim_end_matches(')').split_once(", got ")
    {
        let (w, g): (usize, usize) = (want.parse().unwrap_or(0), got.parse().unwrap_or(0));
        return if g > w {
            format!("too many values to unpack (expected {w})")
        } else {
            format!("not enough values to unpack (expected {w}, got {g})")
        };
    }
    detail.to_owned()
}
