//! `int(str)` and `float(str)` as CPython 3.11 implements them, plus the
//! float-to-int conversions that tool-argument coercion needs.
//!
//! CPython does not parse the Unicode text directly. It first maps it to an
//! ASCII buffer (`_PyUnicode_TransformDecimalAndSpaceToASCII`): characters
//! below U+007F are kept, other whitespace becomes `' '`, other decimal digits
//! become their ASCII digit, and the first character that is none of these
//! becomes `'?'` and ends the buffer. The C parsers then skip only *C* ASCII
//! whitespace (`Py_ISSPACE`: space, `\t\n\v\f\r`). That is why `int(' 5\x85')`
//! works (U+0085 is mapped to a space) while `int('\x1c5\x1f')` fails: U+001C
//! is below U+007F, so it is kept as is, and it is not C whitespace, although
//! `'\x1c'.isspace()` is true. The functions below follow the same two steps.

use super::repr::repr_str;
use crate::Value;
use crate::unicode_tables::py_decimal_value;
use num_bigint::BigInt;
use std::fmt;

/// CPython's default `sys.get_int_max_str_digits()`: `int()` of a string
/// with more digits raises `ValueError`.
const INT_MAX_STR_DIGITS: usize = 4300;

/// A `ValueError` from `int()` or `float()`; `message` is `str(exc)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PyValueError {
    /// The message, worded as CPython words it.
    pub message: String,
}

impl fmt::Display for PyValueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for PyValueError {}

/// `_PyUnicode_TransformDecimalAndSpaceToASCII`: see the module docs.
fn to_ascii(s: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    for c in s.chars() {
        if (c as u32) < 127 {
            out.push(c as u8);
        } else if super::is_space(c) {
            out.push(b' ');
        } else if let Some(d) = py_decimal_value(c) {
            // Decimal values are 0..=9 by construction of the table.
            out.push(b'0' + d as u8);
        } else {
            out.push(b'?');
            break;
        }
    }
    out
}

/// `Py_ISSPACE`: the C locale's whitespace, ASCII only.
fn c_isspace(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// The first `n` characters of `s` (CPython's `%.200R` cuts the repr).
fn truncate_chars(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// Python's `int(s)` for a `str` `s`, base 10.
///
/// Accepts surrounding whitespace (see the module docs for which), one sign,
/// single `_` between digits, and any Unicode decimal digits. Integers outside
/// the `i64` range come back as [`Value::BigInt`]. More than 4300 digits raise
/// CPython's digit-limit `ValueError`, which CPython checks while it scans the
/// digits, before it looks at what follows them.
pub fn parse_int(s: &str) -> Result<Value, PyValueError> {
    let invalid = || PyValueError {
        message: format!(
            "invalid literal for int() with base 10: {}",
            truncate_chars(&repr_str(s), 200)
        ),
    };
    let buf = to_ascii(s);
    // `PyLong_FromString` reads a C string, so it stops at the first NUL; the
    // caller then rejects the text because the parse did not reach its end.
    let nul = buf.iter().position(|&b| b == 0);
    let b = &buf[..nul.unwrap_or(buf.len())];
    let mut i = 0;
    while i < b.len() && c_isspace(b[i]) {
        i += 1;
    }
    let mut negative = false;
    match b.get(i) {
        Some(b'+') => i += 1,
        Some(b'-') => {
            negative = true;
            i += 1;
        }
        _ => {}
    }
    if b.get(i) == Some(&b'_') {
        return Err(invalid());
    }
    let mut digits = Vec::new();
    let mut prev = 0u8;
    while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
        if b[i] == b'_' {
            if prev == b'_' {
                return Err(invalid());
            }
        } else {
            digits.push(b[i]);
        }
        prev = b[i];
        i += 1;
    }
    if prev == b'_' {
        return Err(invalid());
    }
    if digits.len() > INT_MAX_STR_DIGITS {
        return Err(PyValueError {
            message: format!(
                "Exceeds the limit ({INT_MAX_STR_DIGITS} digits) for integer string conversion: \
                 value has {} digits; use sys.set_int_max_str_digits() to increase the limit",
                digits.len()
            ),
        });
    }
    if digits.is_empty() {
        return Err(invalid());
    }
    while i < b.len() && c_isspace(b[i]) {
        i += 1;
    }
    if i != b.len() || nul.is_some() {
        return Err(invalid());
    }
    Ok(int_from_ascii_digits(&digits, negative))
}

/// The integer spelled by ASCII decimal `digits` (at least one), negated if
/// `negative`.
pub(crate) fn int_from_ascii_digits(digits: &[u8], negative: bool) -> Value {
    if digits.len() <= 18 {
        // Fits in an i64 without overflow: at most 999_999_999_999_999_999.
        let n = digits
            .iter()
            .fold(0i64, |acc, &d| acc * 10 + i64::from(d - b'0'));
        return Value::Int(if negative { -n } else { n });
    }
    let n = BigInt::parse_bytes(digits, 10).unwrap_or_default();
    Value::from_bigint(if negative { -n } else { n })
}

/// Python's `float(s)` for a `str` `s`.
///
/// Accepts surrounding whitespace, one sign, `inf`/`infinity`/`nan` in any
/// case, `_` between digits, Unicode decimal digits, `1.`, `.5` and exponents;
/// the result is correctly rounded. `-nan` keeps its sign bit, as in CPython.
pub fn parse_float(s: &str) -> Result<f64, PyValueError> {
    let err = || PyValueError {
        message: format!("could not convert string to float: {}", repr_str(s)),
    };
    let buf = to_ascii(s);
    // The C parser stops at a NUL, which then never is the end of the text.
    if buf.contains(&0) {
        return Err(err());
    }
    let buf = if buf.contains(&b'_') {
        remove_underscores(&buf).ok_or_else(err)?
    } else {
        buf
    };
    let mut lo = 0;
    let mut hi = buf.len();
    while lo < hi && c_isspace(buf[lo]) {
        lo += 1;
    }
    while hi > lo + 1 && c_isspace(buf[hi - 1]) {
        hi -= 1;
    }
    let text = &buf[lo..hi];
    if text.is_empty() {
        return Err(err());
    }
    match strtod(text) {
        Some((x, used)) if used == text.len() => Ok(x),
        _ => match parse_inf_or_nan(text) {
            Some((x, used)) if used == text.len() => Ok(x),
            _ => Err(err()),
        },
    }
}

/// `_Py_string_to_number_with_underscores`: an underscore must sit between
/// two digits; the underscores are then dropped. `None` if one is misplaced.
fn remove_underscores(buf: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(buf.len());
    let mut prev = 0u8;
    for &b in buf {
        if b == b'_' {
            if !prev.is_ascii_digit() {
                return None;
            }
        } else {
            if prev == b'_' && !b.is_ascii_digit() {
                return None;
            }
            out.push(b);
        }
        prev = b;
    }
    if prev == b'_' { None } else { Some(out) }
}

/// `_Py_parse_inf_or_nan`: an optional sign, then `inf`, `infinity` or `nan`
/// in any case. Returns the value and the number of bytes used.
fn parse_inf_or_nan(b: &[u8]) -> Option<(f64, usize)> {
    let (negative, mut i) = match b.first() {
        Some(b'-') => (true, 1),
        Some(b'+') => (false, 1),
        _ => (false, 0),
    };
    let starts = |at: usize, word: &[u8]| {
        b.len() >= at + word.len() && b[at..at + word.len()].eq_ignore_ascii_case(word)
    };
    let x = if starts(i, b"inf") {
        i += 3;
        if starts(i, b"inity") {
            i += 5;
        }
        f64::INFINITY
    } else if starts(i, b"nan") {
        i += 3;
        f64::NAN
    } else {
        return None;
    };
    Some((if negative { -x } else { x }, i))
}

/// `_Py_dg_strtod`: the longest prefix of `b` that is a decimal number
/// (`[+-]?(digits[.digits?]|.digits)([eE][+-]?digits)?`), correctly rounded.
/// Returns the value and the bytes used; `None` when no digit was found.
fn strtod(b: &[u8]) -> Option<(f64, usize)> {
    let at = |i: usize| b.get(i).copied().unwrap_or(0);
    let mut i = 0;
    let negative = match at(0) {
        b'-' => {
            i = 1;
            true
        }
        b'+' => {
            i = 1;
            false
        }
        _ => false,
    };
    let mut mantissa: Vec<u8> = Vec::new();
    let mut any_digit = false;
    let mut frac_len: i64 = 0;
    while at(i).is_ascii_digit() {
        mantissa.push(at(i));
        any_digit = true;
        i += 1;
    }
    if at(i) == b'.' {
        i += 1;
        while at(i).is_ascii_digit() {
            mantissa.push(at(i));
            frac_len += 1;
            any_digit = true;
            i += 1;
        }
    }
    // A sign or '.' without digits: dtoa reports that it made no progress.
    if !any_digit {
        return None;
    }
    let mut exp: i64 = 0;
    if matches!(at(i), b'e' | b'E') {
        let e_start = i;
        let mut j = i + 1;
        let exp_negative = match at(j) {
            b'-' => {
                j += 1;
                true
            }
            b'+' => {
                j += 1;
                false
            }
            _ => false,
        };
        let digits_start = j;
        while at(j).is_ascii_digit() {
            // Saturate: any exponent this large already means inf or 0 for
            // mantissas of any length that fits in memory.
            exp = (exp * 10 + i64::from(at(j) - b'0')).min(1 << 40);
            j += 1;
        }
        if j == digits_start {
            i = e_start;
            exp = 0;
        } else {
            i = j;
            if exp_negative {
                exp = -exp;
            }
        }
    }
    Some((decimal_to_f64(negative, &mantissa, exp - frac_len), i))
}

/// The double nearest to `±digits × 10^exp` (round half to even).
fn decimal_to_f64(negative: bool, digits: &[u8], exp: i64) -> f64 {
    let first = digits.iter().position(|&d| d != b'0');
    let signed = |x: f64| if negative { -x } else { x };
    let Some(first) = first else {
        return signed(0.0);
    };
    let last = digits.iter().rposition(|&d| d != b'0').unwrap_or(first);
    let sig = &digits[first..=last];
    // value = 0.sig × 10^point
    let point = exp + (digits.len() - first) as i64;
    if point > 310 {
        return signed(f64::INFINITY);
    }
    if point < -330 {
        return signed(0.0);
    }
    // Rust's parser is correctly rounded for any number of digits; keeping
    // the written exponent small avoids its exponent saturation.
    let mut text = String::with_capacity(sig.len() + 16);
    text.push_str("0.");
    text.extend(sig.iter().map(|&d| d as char));
    text.push('e');
    text.push_str(&point.to_string());
    signed(text.parse::<f64>().unwrap_or(f64::NAN))
}

/// Python's `float.is_integer()`: finite and without a fractional part.
pub fn float_is_integer(f: f64) -> bool {
    f.is_finite() && f.trunc() == f
}

/// Python's `int(f)` for a float: truncation toward zero, exact for any
/// magnitude ([`Value::BigInt`] beyond `i64`). Like CPython, infinities raise
/// `OverflowError` and NaN raises `ValueError`; both come back as `Err` with
/// CPython's message.
pub fn int_of_float(f: f64) -> Result<Value, String> {
    if f.is_nan() {
        return Err("cannot convert float NaN to integer".into());
    }
    if f.is_infinite() {
        return Err("cannot convert float infinity to integer".into());
    }
    let t = f.trunc();
    // Every float strictly inside (-2^63, 2^63) converts exactly.
    if t.abs() < 2f64.powi(63) {
        return Ok(Value::Int(t as i64));
    }
    // |t| >= 2^63: an integer mantissa times a non-negative power of two.
    let bits = t.to_bits();
    let exponent = ((bits >> 52) & 0x7ff) as i64 - 1075;
    let mantissa = (bits & ((1u64 << 52) - 1)) | (1u64 << 52);
    let magnitude = BigInt::from(mantissa) << (exponent.max(0) as usize);
    Ok(Value::from_bigint(if t < 0.0 {
        -magnitude
    } else {
        magnitude
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(s: &str) -> Result<Value, String> {
        parse_int(s).map_err(|e| e.message)
    }

    fn float(s: &str) -> Result<f64, String> {
        parse_float(s).map_err(|e| e.message)
    }

    #[test]
    fn int_whitespace_is_two_layered() {
        assert_eq!(int(" 5\u{85}"), Ok(Value::Int(5)));
        assert_eq!(int("\u{3000}5\u{3000}"), Ok(Value::Int(5)));
        assert_eq!(int("\x0b1\x0c"), Ok(Value::Int(1)));
        assert_eq!(
            int("\x1c5\x1f"),
            Err("invalid literal for int() with base 10: '\\x1c5\\x1f'".into())
        );
        assert!(int("5\0").is_err());
    }

    #[test]
    fn int_digits_signs_underscores() {
        assert_eq!(int("-1_000"), Ok(Value::Int(-1000)));
        assert_eq!(int("+007"), Ok(Value::Int(7)));
        assert_eq!(int("\u{663}\u{664}"), Ok(Value::Int(34)));
        assert_eq!(int("\u{ff15}"), Ok(Value::Int(5)));
        for bad in [
            "", "+", "_1", "1_", "1__0", "1 2", "+-1", "1.0", "５x", "0x10",
        ] {
            assert!(int(bad).is_err(), "{bad:?}");
        }
        let big = int("123456789012345678901234567890").unwrap();
        assert_eq!(
            big,
            Value::from_bigint("123456789012345678901234567890".parse().unwrap())
        );
        assert_eq!(int("-9223372036854775808"), Ok(Value::Int(i64::MIN)));
    }

    #[test]
    fn int_digit_limit() {
        assert!(int(&"1".repeat(4300)).is_ok());
        let e = int(&format!("{}x", "1".repeat(4301))).unwrap_err();
        assert!(e.starts_with("Exceeds the limit (4300 digits)"), "{e}");
        assert!(e.contains("value has 4301 digits"));
        // A double underscore fails inside the scan, before the limit.
        let e = int(&format!("{}__1", "1".repeat(5000))).unwrap_err();
        assert!(e.starts_with("invalid literal"));
        // The repr in the message is cut at 200 characters.
        let e = int(&"x".repeat(300)).unwrap_err();
        assert_eq!(
            e.len(),
            "invalid literal for int() with base 10: ".len() + 200
        );
    }

    #[test]
    fn float_forms() {
        assert_eq!(float("1."), Ok(1.0));
        assert_eq!(float(".5"), Ok(0.5));
        assert_eq!(float(" -1_000.5_5e1_0 "), Ok(-10005500000000.0));
        assert_eq!(float("1.e5"), Ok(100000.0));
        assert_eq!(float("\u{661}.\u{665}"), Ok(1.5));
        assert_eq!(float("infINITY"), Ok(f64::INFINITY));
        assert_eq!(float("-inf"), Ok(f64::NEG_INFINITY));
        assert_eq!(float(" -nAn ").unwrap().to_bits(), 0xfff8000000000000);
        assert_eq!(float("nan").unwrap().to_bits(), 0x7ff8000000000000);
        assert_eq!(float("-0").unwrap().to_bits(), (-0.0f64).to_bits());
        assert_eq!(float("1e999999999999999999"), Ok(f64::INFINITY));
        assert_eq!(float(&format!("1{}e-400", "0".repeat(400))), Ok(1.0));
        assert_eq!(float("2.4703282292062328e-324"), Ok(5e-324));
        assert_eq!(float("2.4703282292062327e-324"), Ok(0.0));
        for bad in [
            "", "   ", ".", ".e5", "e5", "1e", "1e+", "--inf", "+-1", "0x10", "1_e5", "1__0", "_1",
            "nan_", "\x1c1", "infin", " \0",
        ] {
            assert!(float(bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            float("x"),
            Err("could not convert string to float: 'x'".into())
        );
    }

    #[test]
    fn float_to_int() {
        assert!(float_is_integer(3.0));
        assert!(!float_is_integer(3.5));
        assert!(!float_is_integer(f64::INFINITY));
        assert!(!float_is_integer(f64::NAN));
        assert_eq!(int_of_float(-2.5), Ok(Value::Int(-2)));
        let big = int_of_float(-1e300).unwrap();
        assert_eq!(crate::py::repr_value(&big).len(), 302);
        assert_eq!(
            int_of_float(2f64.powi(63)).unwrap(),
            Value::from_bigint(BigInt::from(1u8) << 63usize)
        );
        assert_eq!(
            int_of_float(-(2f64.powi(63))).unwrap(),
            Value::Int(i64::MIN)
        );
        assert_eq!(
            int_of_float(2f64.powi(70)).unwrap(),
            Value::from_bigint(BigInt::from(1u8) << 70usize)
        );
        assert!(int_of_float(f64::NAN).is_err());
    }
}
