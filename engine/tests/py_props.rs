//! Property tests: the Python value layer never panics, whatever the text,
//! the `content_args`, the transform or the tools, and a few invariants hold.

use proptest::prelude::*;
use retort_engine::content::ContentSpec;
use retort_engine::py;
use retort_engine::transform::{ToolSchemas, Transform, finish_region, validate_transform};
use retort_engine::{Map, Value};

/// Text drawn from the characters the parsers treat specially.
fn text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just(" ".to_owned()),
        Just("\x1c".to_owned()),
        Just("\u{85}".to_owned()),
        Just("\u{3000}".to_owned()),
        Just("\u{663}".to_owned()),
        Just("\u{ff15}".to_owned()),
        Just("_".to_owned()),
        Just("\\u".to_owned()),
        Just("\\ud83d".to_owned()),
        Just("\"".to_owned()),
        Just("\x01".to_owned()),
        Just("\0".to_owned()),
        "[-+.eE0-9{}\\[\\]:,a-z<>=|\n]{0,3}",
        any::<char>().prop_map(String::from),
    ];
    prop::collection::vec(piece, 0..12).prop_map(|v| v.concat())
}

/// Arbitrary JSON-shaped values, biased to the keys the parsers read.
fn value() -> impl Strategy<Value = Value> {
    let key = prop_oneof![
        Just("strip"),
        Just("string_delims"),
        Just("unquoted_keys"),
        Just("allow_non_json"),
        Just("tag_pattern"),
        Just("value_parser"),
        Just("merge_duplicates"),
        Just("line_sep"),
        Just("kv_sep"),
        Just("name"),
        Just("args"),
        Just("function"),
        Just("arguments"),
        Just("parameters"),
        Just("properties"),
        Just("type"),
        Just("anyOf"),
        Just("nullable"),
        Just("content"),
        Just("i"),
    ];
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::Int),
        any::<f64>().prop_map(Value::Float),
        prop_oneof![
            Just("json"),
            Just("int"),
            Just("integer"),
            Just("array"),
            Just("{content}"),
            Just("{content.i}"),
            Just("<<"),
            Just(">>"),
            Just(""),
            Just("x"),
            Just("f")
        ]
        .prop_map(|s| Value::Str(s.to_owned())),
    ];
    leaf.prop_recursive(4, 32, 4, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::List),
            prop::collection::vec((key.clone(), inner), 0..4).prop_map(|kv| Value::Map(
                kv.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
            )),
        ]
    })
}

const PARSERS: [&str; 8] = [
    "text",
    "int",
    "float",
    "bool",
    "json",
    "xml-inline",
    "kv-lines",
    "nope",
];

proptest! {
    #[test]
    fn numbers_and_json_never_panic(s in text()) {
        let _ = py::parse_int(&s);
        let _ = py::parse_float(&s);
        let _ = py::json_loads(&s);
        let stripped = py::strip(&s);
        prop_assert_eq!(py::strip(stripped), stripped);
    }

    #[test]
    fn json_round_trips_strings(s in text()) {
        let dumped = py::json_dumps_ascii(&s);
        prop_assert!(dumped.is_ascii());
        let back = py::json_loads(&dumped).unwrap();
        prop_assert_eq!(back, Value::Str(s.clone()));
    }

    #[test]
    fn content_parsers_never_panic(p in 0..PARSERS.len(), args in value(), s in text()) {
        let spec = ContentSpec::new(PARSERS[p], &args);
        let _ = spec.parse(&s);
    }

    #[test]
    fn regions_never_panic(p in 0..PARSERS.len(), args in value(), t in value(), tools in value(), each: bool, s in text()) {
        let spec = ContentSpec::new(PARSERS[p], &args);
        let _ = validate_transform("Field 'f'", &t);
        let transform = Transform::new(&t);
        let tools = ToolSchemas::from_tools(&Value::List(vec![tools])).ok();
        let caps = [("name".to_owned(), "f".to_owned())];
        let _ = finish_region(&spec, Some(&transform), each, &s, &caps, "f", tools.as_ref());
        let _ = finish_region(&spec, None, false, &s, &[], "f", tools.as_ref());
        let _ = transform.apply(&Map::default());
    }
}

/// Compiled templates can be shared across threads: the value layer's
/// compiled pieces are `Send + Sync`.
#[test]
fn compiled_pieces_are_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<ContentSpec>();
    check::<Transform>();
    check::<ToolSchemas>();
    check::<py::PyErr>();
}
