//! Character sets: the classes of the `regex` module, case folding, and
//! Unicode properties.
//!
//! `\w`, `\d` and `\s` come from the tables read off the reference
//! ([`crate::unicode_tables`]); general categories, scripts and binary
//! properties come from regex-syntax's Unicode tables, which may trail the
//! reference's Unicode version by a release.

use crate::unicode_tables::{REGEX_DIGIT, REGEX_SPACE, REGEX_WORD};
use regex_syntax::hir::{ClassUnicode, ClassUnicodeRange};
use std::borrow::Cow;

/// A set of characters: sorted, disjoint, non-adjacent ranges, plus an ASCII
/// bitmap so the common case is one load.
///
/// Public (hidden) only so that generated code can write a compiled
/// [`super::Program`] as a `static`; build it with [`Class::from_unicode`].
#[doc(hidden)]
#[derive(Clone, PartialEq, Eq)]
pub struct Class {
    /// The members: sorted, disjoint, non-adjacent inclusive ranges.
    pub ranges: Cow<'static, [(char, char)]>,
    /// The ASCII members: bit `c % 64` of word `c / 64`; must agree with
    /// `ranges`.
    pub ascii: [u64; 2],
}

impl std::fmt::Debug for Class {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("[")?;
        for &(a, b) in self.ranges.iter().take(8) {
            if a == b {
                write!(f, "{a:?}")?;
            } else {
                write!(f, "{a:?}-{b:?}")?;
            }
        }
        if self.ranges.len() > 8 {
            f.write_str("…")?;
        }
        f.write_str("]")
    }
}

impl Class {
    /// The class of exactly the characters of `cls`.
    pub(crate) fn from_unicode(cls: &ClassUnicode) -> Class {
        let ranges: Vec<(char, char)> = cls.ranges().iter().map(|r| (r.start(), r.end())).collect();
        let mut ascii = [0u64; 2];
        for &(a, b) in ranges.iter() {
            let (a, b) = (a as u32, b as u32);
            if a >= 128 {
                break;
            }
            for c in a..=b.min(127) {
                ascii[(c / 64) as usize] |= 1 << (c % 64);
            }
        }
        Class {
            ranges: Cow::Owned(ranges),
            ascii,
        }
    }

    /// Whether `c` is in the set.
    #[inline]
    pub fn contains(&self, c: char) -> bool {
        let u = c as u32;
        if u < 128 {
            return self.ascii[(u / 64) as usize] & (1 << (u % 64)) != 0;
        }
        crate::unicode_tables::in_ranges(&self.ranges, c)
    }

    /// The ranges, sorted.
    pub fn ranges(&self) -> &[(char, char)] {
        &self.ranges
    }

    /// The same set as a regex-syntax class.
    pub(crate) fn to_unicode(&self) -> ClassUnicode {
        ClassUnicode::new(
            self.ranges
                .iter()
                .map(|&(a, b)| ClassUnicodeRange::new(a, b)),
        )
    }

    /// The only member, if the set has exactly one.
    pub(crate) fn single(&self) -> Option<char> {
        match *self.ranges() {
            [(a, b)] if a == b => Some(a),
            _ => None,
        }
    }
}

/// A class from sorted `(lo, hi)` table ranges.
pub(crate) fn table(ranges: &[(char, char)]) -> ClassUnicode {
    ClassUnicode::new(ranges.iter().map(|&(a, b)| ClassUnicodeRange::new(a, b)))
}

/// A class of code points `lo..=hi` (Python code points; surrogates, which no
/// `&str` contains, are dropped).
pub(crate) fn cp_range(lo: u32, hi: u32) -> ClassUnicode {
    let mut out = ClassUnicode::empty();
    let mut push = |a: u32, b: u32| {
        if let (true, Some(a), Some(b)) = (a <= b, char::from_u32(a), char::from_u32(b)) {
            out.push(ClassUnicodeRange::new(a, b));
        }
    };
    if hi < 0xD800 || lo > 0xDFFF {
        push(lo, hi);
    } else {
        push(lo, 0xD7FF.min(hi));
        push(0xE000.max(lo), hi);
    }
    out
}

/// All of ASCII.
pub(crate) fn ascii() -> ClassUnicode {
    cp_range(0, 127)
}

/// Every character.
pub(crate) fn any() -> ClassUnicode {
    cp_range(0, 0x10FFFF)
}

/// Closure under simple case folding: every character some case variant of
/// which is in `cls` (what the `regex` module's `_IGN` set opcodes test).
pub(crate) fn fold_unicode(cls: &ClassUnicode) -> ClassUnicode {
    let mut c = cls.clone();
    c.case_fold_simple();
    // The module also counts the Turkic dotted and dotless i among the
    // cases of `i` and `I` (one way each): `(?i)i` matches `İ`, `(?i)I`
    // matches `ı`, `(?i)İ` matches `i`, `(?i)ı` matches `I`.
    let has = |ch: char| {
        cls.ranges()
            .iter()
            .any(|r| r.start() <= ch && ch <= r.end())
    };
    for (member, extra) in [
        ('i', '\u{130}'),
        ('I', '\u{131}'),
        ('\u{130}', 'i'),
        ('\u{131}', 'I'),
    ] {
        if has(member) {
            c.push(ClassUnicodeRange::new(extra, extra));
        }
    }
    c
}

/// Whether `a` and `b` are the same character under the module's
/// case-insensitive comparison (simple case folding plus the Turkic i's).
pub(crate) fn same_ignoring_case(a: char, b: char) -> bool {
    a == b
        || simple_fold(a) == simple_fold(b)
        || matches!(
            (a, b),
            ('i', '\u{130}') | ('\u{130}', 'i') | ('I', '\u{131}') | ('\u{131}', 'I')
        )
}

/// Closure under ASCII-only case folding (`(?ai)`).
pub(crate) fn fold_ascii(cls: &ClassUnicode) -> ClassUnicode {
    let mut out = cls.clone();
    let mut lower = cls.clone();
    lower.intersect(&cp_range('a' as u32, 'z' as u32));
    let mut upper = cls.clone();
    upper.intersect(&cp_range('A' as u32, 'Z' as u32));
    for r in lower.ranges() {
        out.push(ClassUnicodeRange::new(
            (r.start() as u8 - 32) as char,
            (r.end() as u8 - 32) as char,
        ));
    }
    for r in upper.ranges() {
        out.push(ClassUnicodeRange::new(
            (r.start() as u8 + 32) as char,
            (r.end() as u8 + 32) as char,
        ));
    }
    out
}

/// The canonical simple case fold of `c` (for comparing backreferences):
/// the smallest member of its case-equivalence class.
pub(crate) fn simple_fold(c: char) -> char {
    if c.is_ascii() {
        // ASCII upper case sorts below every other case variant.
        return c.to_ascii_uppercase();
    }
    let mut cls = ClassUnicode::new([ClassUnicodeRange::new(c, c)]);
    cls.case_fold_simple();
    cls.ranges().first().map_or(c, |r| r.start())
}

/// The three built-in classes `\w`, `\d`, `\s` (positive forms).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Perl {
    /// `\w`.
    Word,
    /// `\d`.
    Digit,
    /// `\s`.
    Space,
}

/// The members of a built-in class; `ascii` under `(?a)`.
pub(crate) fn perl(kind: Perl, ascii: bool) -> ClassUnicode {
    if ascii {
        match kind {
            Perl::Word => {
                let mut c = cp_range('0' as u32, '9' as u32);
                c.union(&cp_range('A' as u32, 'Z' as u32));
                c.union(&cp_range('a' as u32, 'z' as u32));
                c.union(&cp_range('_' as u32, '_' as u32));
                c
            }
            Perl::Digit => cp_range('0' as u32, '9' as u32),
            Perl::Space => {
                let mut c = cp_range(9, 13);
                c.union(&cp_range(32, 32));
                c
            }
        }
    } else {
        match kind {
            Perl::Word => table(REGEX_WORD),
            Perl::Digit => table(REGEX_DIGIT),
            Perl::Space => table(REGEX_SPACE),
        }
    }
}

/// Whether `c` is a word character for `\b` and friends.
#[inline]
pub(crate) fn is_word(c: char, ascii: bool) -> bool {
    if ascii || c.is_ascii() {
        c.is_ascii_alphanumeric() || c == '_'
    } else {
        crate::unicode_tables::in_ranges(REGEX_WORD, c)
    }
}

/// A resolved property: its members, and how `(?i)` widens it outside a set.
#[derive(Clone, Debug)]
pub(crate) struct Property {
    /// The members (positive form).
    pub(crate) class: ClassUnicode,
    /// The members under `(?i)` when the property stands alone (the
    /// `regex` module makes `Lu`/`Ll`/`Lt` match any cased letter and
    /// `Uppercase`/`Lowercase` match `Cased`; other properties are unchanged).
    pub(crate) folded: Option<ClassUnicode>,
}

/// Why a property lookup failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum PropertyError {
    /// Python: "unknown property value".
    UnknownValue,
    /// A property this engine has no table for (blocks, numeric values, …).
    Unsupported,
}

/// The `regex` module's name normalisation: drop `_`, `-` and spaces, upper-case.
pub(crate) fn standardise(name: &str) -> String {
    name.chars()
        .filter(|c| !matches!(c, '_' | '-' | ' '))
        .flat_map(char::to_uppercase)
        .collect()
}

fn syntax_class(query: &str) -> Option<ClassUnicode> {
    use regex_syntax::hir::{Class as HClass, HirKind};
    let hir = regex_syntax::ParserBuilder::new()
        .unicode(true)
        .utf8(true)
        .build()
        .parse(query)
        .ok()?;
    match hir.kind() {
        HirKind::Class(HClass::Unicode(c)) => Some(c.clone()),
        HirKind::Literal(lit) => {
            let s = std::str::from_utf8(&lit.0).ok()?;
            let mut chars = s.chars();
            let c = chars.next()?;
            if chars.next().is_some() {
                return None;
            }
            Some(ClassUnicode::new([ClassUnicodeRange::new(c, c)]))
        }
        _ => None,
    }
}

fn gencat(name: &str) -> Option<ClassUnicode> {
    let name = if name == "L&" { "LC" } else { name };
    if !name.chars().all(|c| c.is_ascii_alphanumeric()) {
        return None;
    }
    syntax_class(&format!(r"\p{{gc={name}}}"))
}

fn script(name: &str) -> Option<ClassUnicode> {
    if !name.chars().all(|c| c.is_ascii_alphanumeric()) {
        return None;
    }
    syntax_class(&format!(r"\p{{sc={name}}}"))
}

fn script_ext(name: &str) -> Option<ClassUnicode> {
    if !name.chars().all(|c| c.is_ascii_alphanumeric()) {
        return None;
    }
    syntax_class(&format!(r"\p{{scx={name}}}"))
}

/// A binary property regex-syntax knows (it also accepts general categories
/// and scripts, which callers try first).
fn binary(name: &str) -> Option<ClassUnicode> {
    if !name.chars().all(|c| c.is_ascii_alphanumeric()) || name.is_empty() {
        return None;
    }
    syntax_class(&format!(r"\p{{{name}}}"))
}

fn gc_set(names: &[&str]) -> ClassUnicode {
    let mut out = ClassUnicode::empty();
    for n in names {
        if let Some(c) = gencat(n) {
            out.union(&c);
        }
    }
    out
}

/// The properties the `regex` module defines itself (see its
/// `build_regex_unicode.py`), by standardised name.
fn special(name: &str) -> Option<ClassUnicode> {
    let alphabetic = || binary("ALPHABETIC").unwrap_or_else(ClassUnicode::empty);
    let nd = || gc_set(&["Nd"]);
    Some(match name {
        "WORD" => table(REGEX_WORD),
        "DIGIT" => table(REGEX_DIGIT),
        "SPACE" => table(REGEX_SPACE),
        "ANY" => any(),
        "ALPHANUMERIC" | "ALNUM" => {
            let mut c = alphabetic();
            c.union(&nd());
            c
        }
        "BLANK" => {
            let mut c = gc_set(&["Zs"]);
            c.union(&cp_range(9, 9));
            c
        }
        "GRAPH" | "PRINT" => {
            let mut assigned = gc_set(&["Cn"]);
            assigned.negate();
            let mut minus = binary("WHITESPACE").unwrap_or_else(ClassUnicode::empty);
            minus.union(&gc_set(&["Cc", "Cs"]));
            assigned.difference(&minus);
            if name == "PRINT" {
                let mut blank = gc_set(&["Zs"]);
                blank.union(&cp_range(9, 9));
                assigned.union(&blank);
                assigned.difference(&gc_set(&["Cc"]));
            }
            assigned
        }
        "XDIGIT" => {
            let mut c = nd();
            c.union(&binary("HEXDIGIT").unwrap_or_else(ClassUnicode::empty));
            c
        }
        "POSIXDIGIT" => cp_range('0' as u32, '9' as u32),
        "POSIXALNUM" => {
            let mut c = alphabetic();
            c.union(&cp_range('0' as u32, '9' as u32));
            c
        }
        "POSIXPUNCT" => {
            let mut c = gc_set(&[
                "Pd", "Ps", "Pe", "Pc", "Po", "Pi", "Pf", "Sm", "Sc", "Sk", "So",
            ]);
            c.difference(&alphabetic());
            c
        }
        "POSIXXDIGIT" => {
            let mut c = cp_range('0' as u32, '9' as u32);
            c.union(&cp_range('A' as u32, 'F' as u32));
            c.union(&cp_range('a' as u32, 'f' as u32));
            c
        }
        "HORIZSPACE" | "H" => {
            let mut c = ClassUnicode::empty();
            for &(a, b) in &[
                (0x09, 0x09),
                (0x20, 0x20),
                (0xA0, 0xA0),
                (0x1680, 0x1680),
                (0x180E, 0x180E),
                (0x2000, 0x200A),
                (0x202F, 0x202F),
                (0x205F, 0x205F),
                (0x3000, 0x3000),
            ] {
                c.union(&cp_range(a, b));
            }
            c
        }
        "VERTSPACE" | "V" => {
            let mut c = cp_range(0x0A, 0x0D);
            c.union(&cp_range(0x85, 0x85));
            c.union(&cp_range(0x2028, 0x2029));
            c
        }
        "ASSIGNED" => {
            let mut c = gc_set(&["Cn"]);
            c.negate();
            c
        }
        _ => return None,
    })
}

const BINARY_VALUES: [&str; 8] = ["YES", "Y", "NO", "N", "TRUE", "T", "FALSE", "F"];

/// Resolves `\p{prop=value}` / `\p{value}` the way the `regex` module's
/// `lookup_property` does. Returns the members and whether the sense is
/// flipped (`\p{Alphabetic=No}`).
pub(crate) fn lookup(
    prop: Option<&str>,
    value: &str,
    posix: bool,
) -> Result<(Property, bool), PropertyError> {
    let prop = prop.map(standardise);
    let mut value = standardise(value);
    if posix && prop.is_none() && matches!(value.as_str(), "ALNUM" | "DIGIT" | "PUNCT" | "XDIGIT") {
        value = format!("POSIX{value}");
    }
    let finish = |class: ClassUnicode, name: &str| {
        let folded = match name {
            "LU" | "LL" | "LT" | "UPPERCASELETTER" | "LOWERCASELETTER" | "TITLECASELETTER" => {
                gencat("LC")
            }
            "UPPERCASE" | "UPPER" | "LOWERCASE" | "LOWER" => binary("CASED"),
            _ => None,
        };
        Property { class, folded }
    };
    if let Some(prop) = prop {
        match prop.as_str() {
            "GC" | "GENERALCATEGORY" => {
                if value == "ASSIGNED" {
                    return Ok((
                        finish(special("ASSIGNED").unwrap_or_else(ClassUnicode::empty), ""),
                        false,
                    ));
                }
                return gencat(&value)
                    .map(|c| (finish(c, &value), false))
                    .ok_or(PropertyError::UnknownValue);
            }
            "SC" | "SCRIPT" => {
                return script(&value)
                    .map(|c| (finish(c, ""), false))
                    .ok_or(PropertyError::UnknownValue);
            }
            "SCX" | "SCRIPTEXTENSIONS" => {
                return script_ext(&value)
                    .map(|c| (finish(c, ""), false))
                    .ok_or(PropertyError::UnknownValue);
            }
            "BLK" | "BLOCK" => return Err(PropertyError::Unsupported),
            _ => {
                // A binary property with a yes/no value.
                let class = special(&prop)
                    .or_else(|| binary(&prop))
                    .ok_or(PropertyError::Unsupported)?;
                let is_gc_or_script = gencat(&prop).is_some() || script(&prop).is_some();
                if is_gc_or_script || !BINARY_VALUES.contains(&value.as_str()) {
                    return Err(PropertyError::Unsupported);
                }
                let negated = matches!(value.as_str(), "NO" | "N" | "FALSE" | "F");
                return Ok((finish(class, &prop), negated));
            }
        }
    }
    if let Some(c) = special(&value) {
        return Ok((finish(c, &value), false));
    }
    if let Some(c) = gencat(&value) {
        return Ok((finish(c, &value), false));
    }
    if let Some(c) = script(&value) {
        return Ok((finish(c, &value), false));
    }
    if let Some(c) = binary(&value) {
        return Ok((finish(c, &value), false));
    }
    if let Some(rest) = value.strip_prefix("IS") {
        if let Some(c) = special(rest).or_else(|| binary(rest)) {
            return Ok((finish(c, rest), false));
        }
        if let Some(c) = script(rest) {
            return Ok((finish(c, rest), false));
        }
    }
    // Blocks (`InBasicLatin`, `BasicLatin`) and properties regex-syntax lacks.
    Err(PropertyError::Unsupported)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folding() {
        let k = fold_unicode(&cp_range('k' as u32, 'k' as u32));
        let c = Class::from_unicode(&k);
        assert!(c.contains('K') && c.contains('\u{212A}') && c.contains('k'));
        assert_eq!(simple_fold('\u{212A}'), simple_fold('K'));
        assert_eq!(simple_fold('ς'), simple_fold('Σ'));
        let i = Class::from_unicode(&fold_unicode(&cp_range('i' as u32, 'i' as u32)));
        assert!(i.contains('I') && i.contains('\u{130}') && !i.contains('\u{131}'));
        let a = Class::from_unicode(&fold_ascii(&cp_range('k' as u32, 'k' as u32)));
        assert!(a.contains('K') && !a.contains('\u{212A}'));
    }

    #[test]
    fn properties() {
        let (p, neg) = lookup(None, "Lu", false).unwrap();
        assert!(!neg);
        let c = Class::from_unicode(&p.class);
        assert!(c.contains('A') && !c.contains('a'));
        assert!(Class::from_unicode(p.folded.as_ref().unwrap()).contains('a'));
        assert!(lookup(None, "Greek", false).is_ok());
        assert!(lookup(Some("Script"), "Latin", false).is_ok());
        assert_eq!(
            lookup(Some("gc"), "Nope", false).unwrap_err(),
            PropertyError::UnknownValue
        );
        let (p, neg) = lookup(Some("Alphabetic"), "No", false).unwrap();
        assert!(neg && Class::from_unicode(&p.class).contains('x'));
        let blank = Class::from_unicode(&lookup(None, "blank", true).unwrap().0.class);
        assert!(blank.contains('\t') && blank.contains('\u{3000}') && !blank.contains('\n'));
    }
}
