//! Expression-level rewrites: operators and subscripts whose Python meaning
//! minijinja's do not have become calls of functions that have it, with the
//! operand extents jinja2's parser gives them (its precedence: `or` <
//! `and` < `not` < comparisons < `+ -` < `~` < `* / // %` < `**` < unary
//! signs < filters and tests < postfix).
//!
//! - `A % B` becomes `__rt_mod((A), (B))` (string formatting);
//! - `A + B` becomes `__rt_add((A), (B))`: Python's `+` (`Markup + str`
//!   escapes the `str`, `str + int` is Python's `TypeError`);
//! - `A ~ B ~ C` becomes `__rt_cat((A), (B), (C))`: Python's `str()` of
//!   each part (`'x' ~ [1, 'a']` is `x[1, 'a']`), joined once;
//! - `X[a:b:c]` becomes `__rt_slice((X), a, b, c)`: Python slices `None`
//!   to an undefined value, not to `[]`;
//! - `A < B` (and `>`, `<=`, `>=`) becomes `__rt_cmp((A), "<", (B))` and
//!   `A in B` / `A not in B` become `__rt_in((A), (B))` /
//!   `(not __rt_in((A), (B)))`: Python refuses to order unlike types
//!   (`1 < "a"`, `None < 1`) and an undefined operand, and `1 in "abc"` is
//!   its `TypeError`, where minijinja answers. Chained comparisons
//!   (`a < b < c`) are left to minijinja;
//! - `X.name` becomes `__rt_attr((X), "name")` and `X[key]`
//!   `__rt_item((X), key)` (method calls `X.name(...)` stay): jinja2's
//!   sandboxed lookups ([`crate::attrs`]), which find `str` methods, refuse
//!   dunders on every value, and remember the object a lookup failed on for
//!   jinja2's message.
//!
//! Strings made by `+` and `~` are where a template builds big data; going
//! through the crate's functions also lets them refuse a string larger than
//! the output bound before making it. (Functions rather than filters:
//! minijinja charges a filter's fuel for the string it is applied to, on
//! top of the string it makes.)

use crate::lexer::{Kind, Tok};

/// The function doing Python's `%`.
pub(crate) const MOD_FN: &str = "__rt_mod";
/// The function doing Python's `+` (with `Markup`).
pub(crate) const ADD_FN: &str = "__rt_add";
/// The function doing jinja2's `~`.
pub(crate) const CONCAT_FN: &str = "__rt_cat";
/// The function doing Python's ordering comparisons.
pub(crate) const CMP_FN: &str = "__rt_cmp";
/// The function doing Python's `in`.
pub(crate) const IN_FN: &str = "__rt_in";
/// The function doing Python's unary `-` and `+`.
pub(crate) const UNARY_FN: &str = "__rt_unary";
/// The function doing jinja2's `x.name`.
pub(crate) const ATTR_FN: &str = "__rt_attr";
/// The function doing jinja2's `x[key]`.
pub(crate) const ITEM_FN: &str = "__rt_item";
/// The function doing Python's slicing.
pub(crate) const SLICE_FN: &str = "__rt_slice";

/// The edits to a source: replacements of token ranges, and wraps (text
/// inserted before and after a range) that nest.
#[derive(Default)]
pub(crate) struct Edits {
    replace: Vec<(usize, usize, String)>,
    wrap: Vec<(usize, usize, String, String)>,
}

impl Edits {
    pub(crate) fn replace(&mut self, start: usize, end: usize, text: impl Into<String>) {
        self.replace.push((start, end, text.into()));
    }

    pub(crate) fn wrap(
        &mut self,
        start: usize,
        end: usize,
        open: impl Into<String>,
        close: impl Into<String>,
    ) {
        self.wrap.push((start, end, open.into(), close.into()));
    }

    /// Applies the edits. At one offset, closing text comes first (the
    /// innermost wrap's first), then opening text (the outermost first),
    /// then a replacement starting there.
    pub(crate) fn apply(self, src: &str) -> String {
        // (offset, order, tie-break, text, replaced end)
        let mut events: Vec<(usize, u8, i64, String, usize)> = Vec::new();
        for (i, (start, end, open, close)) in self.wrap.into_iter().enumerate() {
            let n = i64::try_from(i).unwrap_or(0);
            let (s, e) = (
                i64::try_from(start).unwrap_or(0),
                i64::try_from(end).unwrap_or(0),
            );
            events.push((start, 1, -e * 1_000_000 - n, open, start));
            events.push((end, 0, -s * 1_000_000 + n, close, end));
        }
        for (start, end, text) in self.replace {
            events.push((start, 2, 0, text, end));
        }
        events.sort_by_key(|e| (e.0, e.1, e.2));
        let mut out = String::with_capacity(src.len() + 64);
        let mut at = 0;
        for (pos, kind, _, text, end) in events {
            if pos < at {
                // inside a replaced range: only possible for overlapping
                // edits, which the rewrites do not make
                continue;
            }
            out.push_str(&src[at..pos]);
            out.push_str(&text);
            at = if kind == 2 { end } else { pos };
        }
        out.push_str(&src[at..]);
        out
    }
}

pub(crate) fn text<'a>(src: &'a str, t: &Tok) -> &'a str {
    &src[t.start..t.end]
}

pub(crate) fn is_name(src: &str, t: &Tok, name: &str) -> bool {
    t.kind == Kind::Name && text(src, t) == name
}

pub(crate) fn is_op(src: &str, t: &Tok, op: &str) -> bool {
    t.kind == Kind::Op && text(src, t) == op
}

/// Depth (bracket nesting) before each token.
pub(crate) fn depths(src: &str, toks: &[Tok]) -> Vec<usize> {
    let mut depth = 0usize;
    toks.iter()
        .map(|t| {
            let d = depth;
            if t.kind == Kind::Op {
                match text(src, t) {
                    "(" | "[" | "{" => depth += 1,
                    ")" | "]" | "}" => depth = depth.saturating_sub(1),
                    _ => {}
                }
            }
            d
        })
        .collect()
}

/// The index of the bracket matching the opening one at `open`.
pub(crate) fn matching(src: &str, toks: &[Tok], open: usize) -> usize {
    let mut depth = 0usize;
    for (k, t) in toks.iter().enumerate().skip(open) {
        if t.kind == Kind::Op {
            match text(src, t) {
                "(" | "[" | "{" => depth += 1,
                ")" | "]" | "}" => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return k;
                    }
                }
                _ => {}
            }
        }
    }
    toks.len() - 1
}

/// The index of the bracket opening the one closing at `close`.
pub(crate) fn matching_back(src: &str, toks: &[Tok], close: usize) -> usize {
    let mut depth = 0usize;
    for k in (0..=close).rev() {
        let t = &toks[k];
        if t.kind == Kind::Op {
            match text(src, t) {
                ")" | "]" | "}" => depth += 1,
                "(" | "[" | "{" => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return k;
                    }
                }
                _ => {}
            }
        }
    }
    0
}

/// The words of jinja2's expression grammar that are not names: an
/// operand does not end with one, nor continue past one. (Statement words
/// like `call`, `filter` or `block` are only keywords as a tag's first word,
/// which the rewrites leave out; elsewhere they are ordinary names.)
pub(crate) const KEYWORDS: &[&str] = &["and", "or", "not", "in", "is", "if", "else", "recursive"];

/// Whether the token ends an operand (so a following `-` is binary).
pub(crate) fn ends_operand(src: &str, t: &Tok) -> bool {
    match t.kind {
        Kind::Str | Kind::Num => true,
        Kind::Name => !KEYWORDS.contains(&text(src, t)),
        Kind::Op => matches!(text(src, t), ")" | "]" | "}"),
    }
}

/// The precedence of the binary operator at `k`, if it is one (`-` and `+`
/// after an operand are binary, before one unary).
fn binop_level(src: &str, toks: &[Tok], k: usize) -> Option<u8> {
    let t = toks.get(k)?;
    match t.kind {
        Kind::Op => match text(src, t) {
            "**" => Some(8),
            "*" | "/" | "//" | "%" => Some(7),
            "~" => Some(6),
            "+" | "-" => (k > 0 && ends_operand(src, &toks[k - 1])).then_some(5),
            "==" | "!=" | "<" | ">" | "<=" | ">=" => Some(4),
            _ => None,
        },
        Kind::Name => match text(src, t) {
            "in" => Some(4),
            "and" => Some(2),
            "or" => Some(1),
            _ => None,
        },
        _ => None,
    }
}

/// The first token of the left operand of the binary operator at `k` of
/// precedence `level` (operators binding at least as tight belong to it:
/// left associativity).
fn left_extent(src: &str, toks: &[Tok], k: usize, level: u8) -> Option<usize> {
    let mut p = k.checked_sub(1)?;
    loop {
        let q = operand_start(src, toks, p)?;
        match q.checked_sub(1) {
            Some(o) if o >= 1 && binop_level(src, toks, o).is_some_and(|l| l >= level) => {
                p = o - 1;
            }
            _ => return Some(q),
        }
    }
}

/// The last token of the right operand of a binary operator of precedence
/// `level` whose operand starts at `k` (only tighter operators belong to
/// it).
fn right_extent(src: &str, toks: &[Tok], k: usize, level: u8) -> Option<usize> {
    let mut end = unary_end(src, toks, k)?;
    while binop_level(src, toks, end + 1).is_some_and(|l| l > level) && end + 2 < toks.len() {
        end = unary_end(src, toks, end + 2)?;
    }
    Some(end)
}

/// Rewrites every binary `op` (of precedence `level`) in a tag's tokens
/// into `func((A), (B))`. With `chain`, a run `A op B op C` becomes one
/// call `func((A), (B), (C))` (jinja2 evaluates `a ~ b ~ c` as one join,
/// and one call makes one string instead of one per operator).
pub(crate) fn binop(
    src: &str,
    toks: &[Tok],
    op: &str,
    level: u8,
    func: &str,
    chain: bool,
    edits: &mut Edits,
) {
    let mut done = vec![false; toks.len()];
    for (k, t) in toks.iter().enumerate() {
        if done[k]
            || !is_op(src, t, op)
            || binop_level(src, toks, k) != Some(level)
            || k + 1 >= toks.len()
        {
            continue;
        }
        let Some(lhs) = left_extent(src, toks, k, level) else {
            continue;
        };
        // the operands to the right: one, or the whole run
        let mut ops = vec![k];
        let mut ends = Vec::new();
        let mut at = k;
        while let Some(end) = right_extent(src, toks, at + 1, level) {
            ends.push(end);
            let next = end + 1;
            if chain
                && next + 1 < toks.len()
                && is_op(src, &toks[next], op)
                && binop_level(src, toks, next) == Some(level)
            {
                ops.push(next);
                at = next;
            } else {
                break;
            }
        }
        if ends.len() != ops.len() {
            continue;
        }
        for &o in &ops {
            done[o] = true;
        }
        edits.wrap(toks[lhs].start, toks[k - 1].end, format!("{func}(("), ")");
        for (i, (&o, &end)) in ops.iter().zip(&ends).enumerate() {
            edits.replace(toks[o].start, toks[o].end, ", ");
            let close = if i + 1 == ops.len() { "))" } else { ")" };
            edits.wrap(toks[o + 1].start, toks[end].end, "(", close);
        }
    }
}

/// Rewrites unary `-` and `+` (`-x`, `+x`: minijinja has no unary `+`,
/// and its `-` of a string fails without Python's message) into
/// `__rt_unary("-", x)`. The operand is a primary with its postfix parts
/// (jinja2 applies filters after the sign: `-x|abs` is `(-x)|abs`).
pub(crate) fn unary(src: &str, toks: &[Tok], edits: &mut Edits) {
    for (k, t) in toks.iter().enumerate() {
        let sign = is_op(src, t, "-") || is_op(src, t, "+");
        if !sign || (k > 0 && ends_operand(src, &toks[k - 1])) || k + 1 >= toks.len() {
            continue;
        }
        // a literal number keeps its sign (`-1`, `x ** -2`)
        if toks[k + 1].kind == Kind::Num && is_op(src, t, "-") {
            continue;
        }
        // a chain of signs: only the innermost is rewritten at a time
        if is_op(src, &toks[k + 1], "-") || is_op(src, &toks[k + 1], "+") {
            continue;
        }
        let Some(mut end) = primary(src, toks, k + 1) else {
            continue;
        };
        while let Some(n) = toks.get(end + 1) {
            if is_op(src, n, ".")
                && toks
                    .get(end + 2)
                    .is_some_and(|x| matches!(x.kind, Kind::Name | Kind::Num))
            {
                end += 2;
            } else if is_op(src, n, "(") || is_op(src, n, "[") {
                end = matching(src, toks, end + 1);
            } else {
                break;
            }
        }
        edits.replace(t.start, t.end, format!("{UNARY_FN}(\"{}\", ", text(src, t)));
        edits.wrap(toks[k + 1].start, toks[end].end, "(", "))");
    }
}

/// Rewrites the attribute reads (`x.name`, `x.0`) and subscripts
/// (`x[key]`, not slices) of a tag's tokens into lookup calls.
pub(crate) fn lookups(src: &str, toks: &[Tok], edits: &mut Edits) {
    for (k, t) in toks.iter().enumerate() {
        if k == 0 || !ends_operand(src, &toks[k - 1]) {
            continue;
        }
        if is_op(src, t, ".") {
            let Some(name) = toks.get(k + 1) else {
                continue;
            };
            // a method call stays minijinja's (its own dispatch)
            if toks.get(k + 2).is_some_and(|n| is_op(src, n, "(")) {
                continue;
            }
            let base = postfix_start(src, toks, k - 1);
            match name.kind {
                Kind::Name => {
                    edits.wrap(
                        toks[base].start,
                        toks[k - 1].end,
                        format!("{ATTR_FN}(("),
                        ")",
                    );
                    edits.replace(t.start, t.end, ", ");
                    edits.wrap(name.start, name.end, "\"", "\")");
                }
                Kind::Num if text(src, name).chars().all(|c| c.is_ascii_digit()) => {
                    edits.wrap(
                        toks[base].start,
                        toks[k - 1].end,
                        format!("{ITEM_FN}(("),
                        ")",
                    );
                    edits.replace(t.start, t.end, ", ");
                    edits.wrap(name.start, name.end, "", ")");
                }
                _ => {}
            }
        } else if is_op(src, t, "[") {
            let close = matching(src, toks, k);
            if close <= k || !is_op(src, &toks[close], "]") || close == k + 1 {
                continue;
            }
            let mut depth = 0usize;
            let slice = toks[k + 1..close].iter().any(|u| {
                if u.kind == Kind::Op {
                    match text(src, u) {
                        "(" | "[" | "{" => depth += 1,
                        ")" | "]" | "}" => depth = depth.saturating_sub(1),
                        ":" if depth == 0 => return true,
                        _ => {}
                    }
                }
                false
            });
            if slice {
                continue;
            }
            let base = postfix_start(src, toks, k - 1);
            edits.wrap(
                toks[base].start,
                toks[k - 1].end,
                format!("{ITEM_FN}(("),
                ")",
            );
            edits.replace(t.start, t.end, ", ");
            edits.replace(toks[close].start, toks[close].end, ")");
        }
    }
}

/// Whether a level-4 (comparison) operator sits among `toks[from..to]` at
/// bracket depth 0 of that range (the operand of a comparison chain).
fn has_comparison(src: &str, toks: &[Tok], from: usize, to: usize) -> bool {
    let mut depth = 0usize;
    for k in from..to.min(toks.len()) {
        let t = &toks[k];
        if t.kind == Kind::Op {
            match text(src, t) {
                "(" | "[" | "{" => depth += 1,
                ")" | "]" | "}" => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
        if depth == 0 && binop_level(src, toks, k) == Some(4) {
            return true;
        }
    }
    false
}

/// Rewrites the ordering comparisons and the `in` / `not in` tests of a
/// tag's tokens (see the module docs).
pub(crate) fn comparisons(src: &str, toks: &[Tok], edits: &mut Edits) {
    for (k, t) in toks.iter().enumerate() {
        let ordering = t.kind == Kind::Op && matches!(text(src, t), "<" | ">" | "<=" | ">=");
        let contains = is_name(src, t, "in");
        if !(ordering || contains) || k == 0 || k + 1 >= toks.len() {
            continue;
        }
        // `a not in b`: the operator is two words; `not` must follow an
        // operand (else it is the unary `not`, and `in` has no left side
        // here).
        let negated = contains
            && is_name(src, &toks[k - 1], "not")
            && k >= 2
            && ends_operand(src, &toks[k - 2]);
        let op_start = if negated { k - 1 } else { k };
        if op_start == 0 || !ends_operand(src, &toks[op_start - 1]) {
            continue;
        }
        let Some(lhs) = left_extent(src, toks, op_start, 4) else {
            continue;
        };
        let Some(rhs_end) = right_extent(src, toks, k + 1, 4) else {
            continue;
        };
        // a chain (`a < b < c`) means `a < b and b < c`: leave it
        if has_comparison(src, toks, lhs, op_start)
            || binop_level(src, toks, rhs_end + 1) == Some(4)
            || toks
                .get(rhs_end + 1)
                .is_some_and(|n| is_name(src, n, "not"))
        {
            continue;
        }
        if ordering {
            edits.wrap(toks[lhs].start, toks[k - 1].end, format!("{CMP_FN}(("), ")");
            edits.replace(t.start, t.end, format!(", \"{}\", ", text(src, t)));
            edits.wrap(toks[k + 1].start, toks[rhs_end].end, "(", "))");
        } else {
            let open = if negated {
                format!("(not {IN_FN}((")
            } else {
                format!("{IN_FN}((")
            };
            edits.wrap(toks[lhs].start, toks[op_start - 1].end, open, ")");
            edits.replace(toks[op_start].start, t.end, ", ");
            edits.wrap(
                toks[k + 1].start,
                toks[rhs_end].end,
                "(",
                if negated { ")))" } else { "))" },
            );
        }
    }
}

/// The first token of the postfix chain (primary, `.name`, `[...]`,
/// `(...)`) whose last token is `p`.
fn postfix_start(src: &str, toks: &[Tok], mut p: usize) -> usize {
    loop {
        let t = &toks[p];
        let q = if t.kind == Kind::Op && matches!(text(src, t), ")" | "]" | "}") {
            matching_back(src, toks, p)
        } else {
            p
        };
        let Some(prev) = q.checked_sub(1) else {
            return q;
        };
        let pt = &toks[prev];
        let opens_postfix = is_op(src, &toks[q], "(") || is_op(src, &toks[q], "[");
        if opens_postfix && ends_operand(src, pt) {
            p = prev;
        } else if is_op(src, pt, ".") && prev >= 1 {
            p = prev - 1;
        } else if toks[q].kind == Kind::Str && pt.kind == Kind::Str {
            p = prev;
        } else {
            return q;
        }
    }
}

/// Rewrites the slices (`X[a:b]`, `X[::c]`) of a tag's tokens into
/// `__rt_slice((X), a, b, c)`.
pub(crate) fn slices(src: &str, toks: &[Tok], edits: &mut Edits) {
    for (k, t) in toks.iter().enumerate() {
        if !is_op(src, t, "[") || k == 0 || !ends_operand(src, &toks[k - 1]) {
            continue;
        }
        let close = matching(src, toks, k);
        if close <= k || !is_op(src, &toks[close], "]") {
            continue;
        }
        // top-level colons inside the brackets
        let mut depth = 0usize;
        let mut colons = Vec::new();
        for (j, u) in toks.iter().enumerate().take(close).skip(k + 1) {
            if u.kind == Kind::Op {
                match text(src, u) {
                    "(" | "[" | "{" => depth += 1,
                    ")" | "]" | "}" => depth = depth.saturating_sub(1),
                    ":" if depth == 0 => colons.push(j),
                    _ => {}
                }
            }
        }
        if colons.is_empty() || colons.len() > 2 {
            continue;
        }
        let base = postfix_start(src, toks, k - 1);
        let mut bounds = vec![k];
        bounds.extend(&colons);
        bounds.push(close);
        let empty = |i: usize| bounds[i] + 1 == bounds[i + 1];
        edits.wrap(
            toks[base].start,
            toks[k - 1].end,
            format!("{SLICE_FN}(("),
            ")",
        );
        edits.replace(
            t.start,
            t.end,
            format!(", {}", if empty(0) { "none" } else { "" }),
        );
        for (i, &c) in colons.iter().enumerate() {
            let part_empty = empty(i + 1);
            edits.replace(
                toks[c].start,
                toks[c].end,
                if part_empty { ", none" } else { ", " },
            );
        }
        edits.replace(toks[close].start, toks[close].end, ")");
    }
}

/// The first token of the unary-level operand (primary, postfix, filters,
/// tests, signs) whose last token is `p`.
fn operand_start(src: &str, toks: &[Tok], mut p: usize) -> Option<usize> {
    let keyword = |t: &Tok| t.kind == Kind::Name && KEYWORDS.contains(&text(src, t));
    let name_is = |i: usize, n: &str| toks.get(i).is_some_and(|t| is_name(src, t, n));
    let mut q;
    loop {
        let t = &toks[p];
        q = if t.kind == Kind::Op && matches!(text(src, t), ")" | "]" | "}") {
            matching_back(src, toks, p)
        } else {
            p
        };
        let Some(prev) = q.checked_sub(1) else {
            break;
        };
        let pt = &toks[prev];
        let opens_postfix = is_op(src, &toks[q], "(") || is_op(src, &toks[q], "[");
        if opens_postfix && ends_operand(src, pt) {
            p = prev; // a call or subscript of what precedes
        } else if is_op(src, pt, ".") || is_op(src, pt, "|") || is_name(src, pt, "is") {
            p = prev.checked_sub(1)?;
        } else if is_name(src, pt, "not") && prev >= 1 && name_is(prev - 1, "is") {
            p = prev.checked_sub(2)?;
        } else if pt.kind == Kind::Name
            && !keyword(pt)
            && toks[q].kind != Kind::Op
            && prev >= 1
            && (name_is(prev - 1, "is")
                || (name_is(prev - 1, "not") && prev >= 2 && name_is(prev - 2, "is")))
        {
            p = prev; // a test's bare argument: `x is divisibleby 3`
        } else if toks[q].kind == Kind::Str && pt.kind == Kind::Str {
            p = prev; // adjacent string literals concatenate
        } else {
            break;
        }
    }
    while q > 0
        && (is_op(src, &toks[q - 1], "-") || is_op(src, &toks[q - 1], "+"))
        && (q < 2 || !ends_operand(src, &toks[q - 2]))
    {
        q -= 1;
    }
    Some(q)
}

/// The last token of the unary-level operand (signs, primary, postfix,
/// filters, tests) starting at `k`.
fn unary_end(src: &str, toks: &[Tok], mut k: usize) -> Option<usize> {
    while k < toks.len() && (is_op(src, &toks[k], "-") || is_op(src, &toks[k], "+")) {
        k += 1;
    }
    let mut end = primary(src, toks, k)?;
    loop {
        let Some(n) = toks.get(end + 1) else {
            return Some(end);
        };
        if is_op(src, n, ".") && toks.get(end + 2).is_some_and(|t| t.kind == Kind::Name) {
            end += 2;
        } else if is_op(src, n, "(") || is_op(src, n, "[") {
            end = matching(src, toks, end + 1);
        } else if is_op(src, n, "|") {
            end += 2; // the filter's name
            while toks.get(end + 1).is_some_and(|t| is_op(src, t, "."))
                && toks.get(end + 2).is_some_and(|t| t.kind == Kind::Name)
            {
                end += 2;
            }
            if toks.get(end + 1).is_some_and(|t| is_op(src, t, "(")) {
                end = matching(src, toks, end + 1);
            }
        } else if is_name(src, n, "is") {
            end += 1;
            if toks.get(end + 1).is_some_and(|t| is_name(src, t, "not")) {
                end += 1;
            }
            end += 1; // the test's name
            match toks.get(end + 1) {
                Some(t) if is_op(src, t, "(") => end = matching(src, toks, end + 1),
                Some(t)
                    if matches!(t.kind, Kind::Str | Kind::Num)
                        || (t.kind == Kind::Name && !KEYWORDS.contains(&text(src, t))) =>
                {
                    end = primary(src, toks, end + 1)?;
                }
                _ => {}
            }
        } else {
            return Some(end.min(toks.len() - 1));
        }
        if end >= toks.len() {
            return Some(toks.len() - 1);
        }
    }
}

/// The last token of a primary expression starting at `k`.
fn primary(src: &str, toks: &[Tok], k: usize) -> Option<usize> {
    let t = toks.get(k)?;
    match t.kind {
        Kind::Str => {
            let mut end = k;
            while toks.get(end + 1).is_some_and(|n| n.kind == Kind::Str) {
                end += 1;
            }
            Some(end)
        }
        Kind::Num | Kind::Name => Some(k),
        Kind::Op if matches!(text(src, t), "(" | "[" | "{") => Some(matching(src, toks, k)),
        Kind::Op => None,
    }
}
