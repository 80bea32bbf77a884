//! Differential tests of the Python value layer against the reference
//! interpreter: `tests/data/py_cases.jsonl` holds inputs with the results
//! CPython 3.11 + transformers produced for them (see `tools/py_cases.py`).
//!
//! Results must match exactly: the value (ints, floats and bools kept apart,
//! floats bit for bit with every NaN equal), or the exception's class and
//! message. Cases that need the regex engine are skipped while `pyre` cannot
//! compile patterns yet.

use retort_engine::content::ContentSpec;
use retort_engine::py::{self, PyErr};
use retort_engine::pyre::Regex;
use retort_engine::transform::{ToolSchemas, Transform, finish_region, validate_transform};
use retort_engine::{Map, Value};

const CASES: &str = include_str!("data/py_cases.jsonl");

/// One case's outcome: a value, or a Python exception's class and message.
type Outcome = Result<Value, (String, String)>;

fn err(e: PyErr) -> (String, String) {
    (e.kind.name().to_owned(), e.message)
}

/// Reads a line: serde_json when it can (so the reader is independent of
/// the parser under test), `py::json_loads` for the few lines nested deeper
/// than serde_json's recursion limit.
fn read_line(line: &str) -> Value {
    match serde_json::from_str::<serde_json::Value>(line) {
        Ok(v) => Value::from(&v),
        Err(_) => py::json_loads_with_depth(line, usize::MAX).expect("a test line is JSON"),
    }
}

/// Decodes the generator's tagged values (`$int`, `$float`, `$dict`).
fn untag(v: &Value) -> Value {
    match v {
        Value::List(items) => Value::List(items.iter().map(untag).collect()),
        Value::Map(m) => {
            if let Some(Value::Str(digits)) = m.get("$int") {
                let n: num_bigint::BigInt = digits.parse().expect("$int holds digits");
                return Value::from_bigint(n);
            }
            if let Some(Value::Str(hex)) = m.get("$float") {
                return Value::Float(f64::from_bits(
                    u64::from_str_radix(hex, 16).expect("$float holds hex"),
                ));
            }
            let Some(Value::List(pairs)) = m.get("$dict") else {
                panic!("untagged dict in a test line")
            };
            let mut out = Map::default();
            for pair in pairs {
                let [Value::Str(k), v] = pair.as_list().expect("a $dict pair") else {
                    panic!("bad $dict pair")
                };
                out.insert(k.clone(), untag(v));
            }
            Value::Map(out)
        }
        other => other.clone(),
    }
}

/// Equality with ints, floats and bools kept apart, floats compared by their
/// bits, and every NaN equal to every NaN.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Float(x), Value::Float(y)) => {
            (x.is_nan() && y.is_nan()) || x.to_bits() == y.to_bits()
        }
        (Value::List(x), Value::List(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Value::Map(x), Value::Map(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((ka, va), (kb, vb))| ka == kb && same(va, vb))
        }
        _ => a == b,
    }
}

fn field<'a>(case: &'a Map, key: &str) -> &'a Value {
    case.get(key)
        .unwrap_or_else(|| panic!("case without {key:?}"))
}

fn text<'a>(case: &'a Map, key: &str) -> &'a str {
    field(case, key)
        .as_str()
        .unwrap_or_else(|| panic!("{key:?} is not a string"))
}

/// Whether a case needs `pyre` to compile a pattern.
fn needs_regex(case: &Map) -> bool {
    if case.get("content").and_then(Value::as_str) == Some("xml-inline") {
        return true;
    }
    // Marker lists in `string_delims` other than single characters.
    let args = case
        .get("content_args")
        .map(|a| a.to_json_string())
        .unwrap_or_default();
    args.contains("\"string_delims\": [[[\".\"")
        || args.contains("[[[\"<<\"]")
        || args.contains("[[[\" \"]")
}

fn run(case: &Map) -> Outcome {
    match text(case, "kind") {
        "strip" => Ok(Value::Str(py::strip(text(case, "input")).to_owned())),
        "int" => py::parse_int(text(case, "input")).map_err(|e| ("ValueError".into(), e.message)),
        "float" => py::parse_float(text(case, "input"))
            .map(Value::Float)
            .map_err(|e| ("ValueError".into(), e.message)),
        "json" => {
            let depth = match field(case, "max_depth") {
                Value::Int(d) => *d as usize,
                _ => panic!("max_depth"),
            };
            py::json_loads_with_depth(text(case, "input"), depth)
                .map_err(|e| (e.python_type().to_owned(), e.to_string()))
        }
        "validate" => validate_transform("Field 'f'", field(case, "transform"))
            .map(|()| Value::Null)
            .map_err(|m| ("ValueError".into(), m)),
        "field" => run_field(case),
        other => panic!("unknown kind {other}"),
    }
}

fn run_field(case: &Map) -> Outcome {
    let empty = Value::Map(Map::default());
    let content = ContentSpec::new(
        text(case, "content"),
        case.get("content_args").unwrap_or(&empty),
    );
    let transform = case
        .get("transform")
        .filter(|t| !matches!(t, Value::Null))
        .map(Transform::new);
    let each = matches!(case.get("transform_each"), Some(Value::Bool(true)));
    let captures: Vec<(String, String)> = match case.get("captures") {
        Some(Value::Map(m)) => m
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_owned()))
            .collect(),
        _ => Vec::new(),
    };
    let tools = match case.get("tools") {
        None => None,
        Some(t) => Some(ToolSchemas::from_tools(t).map_err(err)?),
    };
    finish_region(
        &content,
        transform.as_ref(),
        each,
        text(case, "text"),
        &captures,
        "f",
        tools.as_ref(),
    )
    .map_err(err)
}

fn describe(o: &Outcome) -> String {
    match o {
        Ok(v) => {
            let s = v.to_json_string();
            if s.len() > 300 {
                format!("ok {}...", &s[..s.floor_char_boundary(300)])
            } else {
                format!("ok {s}")
            }
        }
        Err((t, m)) => format!(
            "{t}: {}",
            if m.len() > 300 {
                &m[..m.floor_char_boundary(300)]
            } else {
                m
            }
        ),
    }
}

fn check_all() {
    let regex_ready = Regex::new("a").is_ok();
    let (mut passed, mut skipped, mut failures) = (0, 0, Vec::new());
    for (n, line) in CASES.lines().enumerate() {
        let Value::Map(case) = read_line(line) else {
            panic!("line {} is not an object", n + 1)
        };
        if !regex_ready && needs_regex(&case) {
            skipped += 1;
            continue;
        }
        let expect = match field(&case, "expect") {
            Value::Map(e) => match (e.get("ok"), e.get("err")) {
                (Some(v), _) => Ok(untag(v)),
                (_, Some(Value::Map(x))) => {
                    Err((text(x, "type").to_owned(), text(x, "message").to_owned()))
                }
                _ => panic!("line {}: bad expect", n + 1),
            },
            _ => panic!("line {}: bad expect", n + 1),
        };
        let got = run(&case);
        let ok = match (&got, &expect) {
            (Ok(a), Ok(b)) => same(a, b),
            (Err(a), Err(b)) => {
                // JSONDecodeError is what json.loads raises; the reference's
                // callers never let it escape under that name.
                a == b
            }
            _ => false,
        };
        if ok {
            passed += 1;
        } else {
            let input = line.chars().take(200).collect::<String>();
            failures.push(format!(
                "line {}: {input}\n  expected {}\n  got      {}",
                n + 1,
                describe(&expect),
                describe(&got)
            ));
        }
    }
    for f in failures.iter().take(40) {
        eprintln!("{f}");
    }
    eprintln!(
        "{passed} passed, {} failed, {skipped} skipped",
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} of the reference's results differ",
        failures.len()
    );
}

#[test]
fn matches_the_reference() {
    // Deep values (the nesting-limit cases) are converted recursively: give
    // the walk room, independent of the test harness's thread stack size.
    std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(check_all)
        .expect("spawn the checker")
        .join()
        .expect("the checker passed");
}
