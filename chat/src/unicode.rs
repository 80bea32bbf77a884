//! Python's character classes (CPython 3.11, Unicode 14), from the generated
//! tables, plus the ones CPython hard-codes.

use crate::unicode_tables as t;

fn in_table(table: &[(char, char)], c: char) -> bool {
    table
        .binary_search_by(|&(lo, hi)| {
            if c < lo {
                std::cmp::Ordering::Greater
            } else if c > hi {
                std::cmp::Ordering::Less
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

/// `str.isspace()` for one character (`Py_UNICODE_ISSPACE`): Rust's
/// `White_Space` plus the ASCII separators U+001C..U+001F, which Python
/// counts as whitespace (bidirectional class B or S).
pub(crate) fn is_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// `str.isprintable()` for one character.
pub(crate) fn is_printable(c: char) -> bool {
    if c.is_ascii() {
        return (' '..='~').contains(&c);
    }
    !in_table(t::NOT_PRINTABLE, c)
}

/// `str.isalpha()` for one character.
pub(crate) fn is_alpha(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_alphabetic();
    }
    in_table(t::ALPHA, c)
}

/// `str.isdecimal()` for one character.
pub(crate) fn is_decimal(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_digit();
    }
    in_table(t::DECIMAL, c)
}

/// The value of a decimal digit (`int('٣')` is 3): decimal digits come in
/// runs of ten from a zero, and the table's ranges start at zeros.
pub(crate) fn decimal_value(c: char) -> Option<u32> {
    if c.is_ascii_digit() {
        return c.to_digit(10);
    }
    let i = t::DECIMAL
        .binary_search_by(|&(lo, hi)| {
            if c < lo {
                std::cmp::Ordering::Greater
            } else if c > hi {
                std::cmp::Ordering::Less
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .ok()?;
    Some((c as u32 - t::DECIMAL[i].0 as u32) % 10)
}

/// `str.isdigit()` for one character.
pub(crate) fn is_digit(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_digit();
    }
    in_table(t::DIGIT, c)
}

/// `str.isnumeric()` for one character.
pub(crate) fn is_numeric(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_digit();
    }
    in_table(t::NUMERIC, c)
}

/// `str.isalnum()` for one character.
pub(crate) fn is_alnum(c: char) -> bool {
    is_alpha(c) || is_decimal(c) || is_digit(c) || is_numeric(c)
}

/// Python's `re` `\w` for a `str` pattern: alphanumerics and `_`.
pub(crate) fn is_word(c: char) -> bool {
    c == '_' || is_alnum(c)
}

/// Lowercase (`str.islower()` per character).
pub(crate) fn is_lower(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_lowercase();
    }
    in_table(t::LOWER, c)
}

/// Uppercase (`str.isupper()` per character).
pub(crate) fn is_upper(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_uppercase();
    }
    in_table(t::UPPER, c)
}

/// Title-case letter (category Lt).
pub(crate) fn is_title(c: char) -> bool {
    !c.is_ascii() && in_table(t::TITLE, c)
}

/// Cased (`_PyUnicode_IsCased`).
pub(crate) fn is_cased(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_alphabetic();
    }
    in_table(t::CASED, c)
}

/// Python's line boundaries (`str.splitlines`).
pub(crate) fn is_line_break(c: char) -> bool {
    matches!(
        c,
        '\n' | '\r'
            | '\u{b}'
            | '\u{c}'
            | '\u{1c}'
            | '\u{1d}'
            | '\u{1e}'
            | '\u{85}'
            | '\u{2028}'
            | '\u{2029}'
    )
}

/// Appends the title case of `c` (`str.title()`'s mapping).
pub(crate) fn push_title(c: char, out: &mut String) {
    if c.is_ascii() {
        out.push(c.to_ascii_uppercase());
        return;
    }
    match t::TITLE_CASE.binary_search_by(|&(k, _)| k.cmp(&c)) {
        Ok(i) => out.push_str(t::TITLE_CASE[i].1),
        Err(_) => out.extend(c.to_uppercase()),
    }
}

/// Python's `str.upper()`.
pub(crate) fn upper(s: &str) -> String {
    s.to_uppercase()
}

/// Python's `str.lower()` (final sigma included, as Rust does it).
pub(crate) fn lower(s: &str) -> String {
    s.to_lowercase()
}

/// Python's `str.title()`: a character after a cased one is lowered, any
/// other is title-cased.
pub(crate) fn title(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut previous_cased = false;
    for c in s.chars() {
        if previous_cased {
            out.extend(c.to_lowercase());
        } else {
            push_title(c, &mut out);
        }
        previous_cased = is_cased(c);
    }
    out
}

/// Python's `str.capitalize()`: the first character title-cased, the rest
/// lowered.
pub(crate) fn capitalize(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    if let Some(c) = chars.next() {
        push_title(c, &mut out);
    }
    out.push_str(&chars.as_str().to_lowercase());
    out
}

/// Python's `str.swapcase()`.
pub(crate) fn swapcase(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if is_upper(c) {
            out.extend(c.to_lowercase());
        } else if is_lower(c) {
            out.extend(c.to_uppercase());
        } else {
            out.push(c);
        }
    }
    out
}
