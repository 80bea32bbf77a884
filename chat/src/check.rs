//! The compile-time check jinja2 makes and minijinja does not: a filter or
//! test that does not exist is a `TemplateAssertionError` when the template
//! is compiled, unless it sits where jinja2 defers the check to run time
//! (directly inside an `{% if %}` branch or a conditional expression, a
//! "soft" frame; loops, macros, call, filter and set blocks open hard
//! frames again). There, it is a `TemplateRuntimeError` when reached, which
//! the render reports.

use crate::error::ChatError;
use crate::lexer::{Kind, Tok, find, find_endraw, lex_tag};

/// Checks a template source (newlines normalised, not rewritten).
pub(crate) fn check(src: &str) -> Result<(), ChatError> {
    let bytes = src.as_bytes();
    // true: a soft frame (an if branch); false: a hard one.
    let mut frames: Vec<bool> = Vec::new();
    let mut i = 0;
    while let Some(open) = find(bytes, i, b"{") {
        let Some(&next) = bytes.get(open + 1) else {
            break;
        };
        match next {
            b'#' => i = find(bytes, open + 2, b"#}").map_or(bytes.len(), |j| j + 2),
            b'{' | b'%' => {
                let is_block = next == b'%';
                let mut body = open + 2;
                if matches!(bytes.get(body), Some(b'-' | b'+')) {
                    body += 1;
                }
                let (toks, end) = lex_tag(src, body, if is_block { b'%' } else { b'}' });
                i = end;
                let soft_here = frames.last().copied().unwrap_or(false);
                if !is_block {
                    check_expr(src, &toks, soft_here)?;
                    continue;
                }
                let name = toks
                    .first()
                    .filter(|t| t.kind == Kind::Name)
                    .map_or("", |t| &src[t.start..t.end]);
                let rest = toks.get(1..).unwrap_or(&[]);
                match name {
                    "raw" => {
                        i = find_endraw(src, end).unwrap_or(bytes.len());
                    }
                    "if" => {
                        // the condition and the branches are soft
                        check_expr(src, rest, true)?;
                        frames.push(true);
                    }
                    "elif" => check_expr(src, rest, true)?,
                    // an if's else stays soft, a for loop's else hard
                    "else" => {}
                    "endwith" | "endmacro" | "endcall" | "endfilter" | "endset" | "endblock"
                    | "endif" | "endfor" | "endgeneration" => {
                        frames.pop();
                    }
                    "for" => {
                        // the iterable in the enclosing frame, the loop
                        // filter and the body in an inner (hard) one
                        let (iter, cond) = split_for(src, rest);
                        check_expr(src, iter, soft_here)?;
                        check_expr(src, cond, false)?;
                        frames.push(false);
                    }
                    "filter" => {
                        check_filter_block(src, rest)?;
                        frames.push(false);
                    }
                    "set" => {
                        let has_value = rest
                            .iter()
                            .any(|t| t.kind == Kind::Op && &src[t.start..t.end] == "=");
                        if has_value {
                            check_expr(src, rest, soft_here)?;
                        } else {
                            // a block set opens a frame
                            check_expr(src, rest, false)?;
                            frames.push(false);
                        }
                    }
                    "macro" | "call" | "with" | "block" | "generation" => {
                        check_expr(src, rest, soft_here)?;
                        frames.push(false);
                    }
                    _ => check_expr(src, rest, soft_here)?,
                }
            }
            _ => i = open + 1,
        }
    }
    Ok(())
}

/// Splits a `for` tag's tokens (after `for`) into the iterable and the loop
/// filter's condition.
fn split_for<'t>(src: &str, toks: &'t [Tok]) -> (&'t [Tok], &'t [Tok]) {
    let mut depth = 0usize;
    let mut in_at = None;
    let mut if_at = None;
    for (k, t) in toks.iter().enumerate() {
        let s = &src[t.start..t.end];
        match (t.kind, s) {
            (Kind::Op, "(" | "[" | "{") => depth += 1,
            (Kind::Op, ")" | "]" | "}") => depth = depth.saturating_sub(1),
            (Kind::Name, "in") if depth == 0 && in_at.is_none() => in_at = Some(k),
            (Kind::Name, "if") if depth == 0 && in_at.is_some() && if_at.is_none() => {
                if_at = Some(k)
            }
            _ => {}
        }
    }
    let start = in_at.map_or(toks.len(), |k| k + 1);
    match if_at {
        Some(k) => (&toks[start.min(k)..k], &toks[k + 1..]),
        None => (&toks[start.min(toks.len())..], &[]),
    }
}

/// `{% filter name(args)|other %}`: the names are filters, checked hard.
fn check_filter_block(src: &str, toks: &[Tok]) -> Result<(), ChatError> {
    if let Some(t) = toks.first().filter(|t| t.kind == Kind::Name) {
        check_name(src, t, true)?;
    }
    check_expr(src, toks, false)
}

fn check_name(src: &str, t: &Tok, filter: bool) -> Result<(), ChatError> {
    let name = &src[t.start..t.end];
    let known = if filter {
        crate::tests::is_filter_name(name)
    } else {
        crate::tests::is_test_name(name)
    };
    if known {
        return Ok(());
    }
    let line = src[..t.start].matches('\n').count() + 1;
    let column = src[..t.start]
        .rfind('\n')
        .map_or(t.start, |n| t.start - n - 1)
        + 1;
    Err(ChatError::assertion(
        format!(
            "No {} named '{name}'.",
            if filter { "filter" } else { "test" }
        ),
        line,
        column,
    ))
}

/// Checks the filters and tests of an expression's tokens; `soft`: the
/// expression is in a soft frame. Conditional expressions (`a if b else
/// c`) make their part soft.
fn check_expr(src: &str, toks: &[Tok], soft: bool) -> Result<(), ChatError> {
    // Segments: runs of tokens at one bracket depth between commas/colons.
    // A segment holding an `if` is a conditional expression, soft with all
    // it contains.
    let mut seg_of = Vec::with_capacity(toks.len());
    let mut parent: Vec<Option<usize>> = Vec::new();
    let mut has_if: Vec<bool> = Vec::new();
    let mut stack: Vec<usize> = vec![0];
    parent.push(None);
    has_if.push(false);
    for t in toks {
        let s = &src[t.start..t.end];
        let cur = *stack.last().unwrap_or(&0);
        match (t.kind, s) {
            (Kind::Op, "(" | "[" | "{") => {
                seg_of.push(cur);
                parent.push(Some(cur));
                has_if.push(false);
                stack.push(parent.len() - 1);
            }
            (Kind::Op, ")" | "]" | "}") => {
                if stack.len() > 1 {
                    stack.pop();
                }
                seg_of.push(*stack.last().unwrap_or(&0));
            }
            (Kind::Op, "," | ":") => {
                // a new sibling segment
                let up = parent[cur];
                parent.push(up);
                has_if.push(false);
                if let Some(top) = stack.last_mut() {
                    *top = parent.len() - 1;
                }
                seg_of.push(parent.len() - 1);
            }
            (Kind::Name, "if") => {
                has_if[cur] = true;
                seg_of.push(cur);
            }
            _ => seg_of.push(cur),
        }
    }
    let is_soft = |mut seg: usize| loop {
        if has_if[seg] {
            return true;
        }
        match parent[seg] {
            Some(p) => seg = p,
            None => return false,
        }
    };
    for (k, t) in toks.iter().enumerate() {
        if soft || is_soft(seg_of[k]) {
            continue;
        }
        let prev = |n: usize| k.checked_sub(n).map(|j| &src[toks[j].start..toks[j].end]);
        if t.kind != Kind::Name {
            continue;
        }
        if prev(1) == Some("|") {
            check_name(src, t, true)?;
        } else if (prev(1) == Some("is") && &src[t.start..t.end] != "not")
            || (prev(1) == Some("not") && prev(2) == Some("is"))
        {
            check_name(src, t, false)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(src: &str) -> Option<String> {
        check(src).err().map(|e| e.message().to_owned())
    }

    #[test]
    fn unknown_filters_fail_outside_soft_frames() {
        assert_eq!(
            kind("{{ x|nope }}").as_deref(),
            Some("No filter named 'nope'.")
        );
        assert_eq!(
            kind("{{ x is nope }}").as_deref(),
            Some("No test named 'nope'.")
        );
        assert_eq!(kind("{% if a %}{{ x|nope }}{% endif %}"), None);
        assert_eq!(kind("{% if x|nope %}{% endif %}"), None);
        assert_eq!(kind("{{ x|nope if a else 1 }}"), None);
        assert_eq!(
            kind("{{ (x|nope, 1 if a else 2) }}").as_deref(),
            Some("No filter named 'nope'.")
        );
        assert_eq!(
            kind("{% if a %}{% for i in b %}{{ i|nope }}{% endfor %}{% endif %}").as_deref(),
            Some("No filter named 'nope'.")
        );
        assert_eq!(
            kind("{% if a %}{% for i in b|nope %}{% endfor %}{% endif %}"),
            None
        );
        assert_eq!(
            kind("{{ x|upper|tojson }}{{ 1 is not odd }}{% filter upper %}{% endfilter %}"),
            None
        );
        assert_eq!(
            kind("{% filter nope %}{% endfilter %}").as_deref(),
            Some("No filter named 'nope'.")
        );
    }
}
