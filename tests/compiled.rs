//! Every vector of `tests/conformance/cases` through parsers compiled by
//! `retort_codegen::Builder` (see build.rs): the model templates by name,
//! inline templates as modules of their own. Messages go through their
//! typed form on the way.

use retort::Value;
use retort_conformance::{compare, field, run_case, run_case_with, to_line};
use retort_tests::{Rng, read_cases, root};

mod vectors {
    include!(concat!(env!("OUT_DIR"), "/vector_templates.rs"));
    include!(concat!(env!("OUT_DIR"), "/vector_inline.rs"));
}
use vectors::{INLINE, Vector};

retort_tests::compiled_runner!(Compiled, Vector, vectors::VectorParser);

#[test]
fn every_vector_through_compiled_parsers() {
    let dir = root().join("tests/conformance/cases");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("the vectors are in the repository")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    let (mut compiled, mut loader_errors, mut failures) = (0, 0, Vec::new());
    for file in &files {
        for case in read_cases(file) {
            let id = field(&case, "id").map(to_line).unwrap_or_default();
            let model = match field(&case, "template") {
                Some(Value::Str(name)) => Vector::from_name(name),
                Some(t @ Value::Map(_)) => {
                    let key = t.to_json_string();
                    INLINE
                        .binary_search_by(|(k, _)| (*k).cmp(key.as_str()))
                        .ok()
                        .map(|i| INLINE[i].1)
                }
                _ => None,
            };
            let result = match model {
                Some(m) => {
                    compiled += 1;
                    run_case_with(&case, &Compiled(m))
                }
                None => {
                    // Only templates the loader rejects are not compiled
                    // (their errors are the loader's; the macro's
                    // diagnostics are tested with trybuild).
                    loader_errors += 1;
                    let load = |name: &str| {
                        std::fs::read_to_string(root().join(format!("templates/{name}.json")))
                            .map_err(|e| e.to_string())
                    };
                    match run_case(&case, &load) {
                        Ok(r) => {
                            assert!(
                                retort_conformance::field(&r, "template_error").is_some(),
                                "{id}: a valid template was not compiled"
                            );
                            r
                        }
                        Err(e) => panic!("{id}: {e}"),
                    }
                }
            };
            let problems = compare(&case, &result);
            if !problems.is_empty() {
                failures.push(format!("{id}: {}", problems.join("\n  ")));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases differ:\n{}",
        failures.len(),
        compiled + loader_errors,
        failures.join("\n")
    );
    assert!(compiled >= 700, "only {compiled} cases ran compiled");
    println!("{compiled} cases through compiled parsers, {loader_errors} rejected templates");
}

/// Compiled parsers resolve pieces in the states their machine searches
/// (`Machine::searches`) without the scanner: a piece with a delimiter's
/// first byte but no delimiter, a piece ending inside a delimiter (held),
/// and the piece after such a hold (searched together with the held text).
/// Texts dense in delimiters, their prefixes and fillers, fed in pieces of
/// one to five bytes, give what the run-time parser gives on the same pieces
/// and what the compiled parser gives in one piece.
#[test]
fn pieces_around_held_delimiters_match_the_engine() {
    use retort_conformance::{Runner, normalise, strict_equal};
    use retort_engine::scan::delimiter::DelimiterSource;
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    let mut runs = 0usize;
    for &v in Vector::ALL {
        let t = v.template();
        // (With the pieces of tool-call headers that follow their first
        // literal: names, `>`, and the tokens of gpt-oss's.)
        let mut parts: Vec<String> = [
            "a",
            " ",
            "\n",
            "é",
            // (Spaces outside ASCII: a piece ending in one may begin a
            // `\s*`-led delimiter, which the state's search of starts
            // decides on the quick path.)
            "\u{a0}",
            "x\u{2003}",
            "<",
            "x y",
            "\t",
            "{\"a\": 1}",
            "get_weather",
            ">",
            "<|constrain|>json",
            "<|message|>",
            "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        for d in t.delimiters() {
            // Literal delimiters, and the literals of leading-loop patterns
            // (`\s*<tool_call>`), with every cut of them.
            // And the literals patterns begin with (`<|channel|>commentary
            // to=functions.`), whose states' searches hold a start while
            // its thread is pending.
            let lits: Vec<String> = match &d.source {
                DelimiterSource::Literals(list) => list.clone(),
                DelimiterSource::Pattern(_) => {
                    let mut lits = d
                        .regex
                        .looped_literals()
                        .map(|shape| shape.literals.clone())
                        .unwrap_or_default();
                    for s in d.regex.start_literals().unwrap_or_default() {
                        lits.push(format!("{}get_weather", s.literal));
                        lits.push(s.literal);
                    }
                    lits
                }
            };
            for l in lits {
                for (cut, _) in l.char_indices().skip(1) {
                    parts.push(l[..cut].to_owned());
                }
                parts.push(l);
            }
        }
        let compiled = Compiled(v);
        for round in 0..30 {
            let mut text = String::new();
            for _ in 0..(4 + rng.below(24)) {
                text.push_str(&parts[rng.below(parts.len())]);
            }
            let step = 1 + round % 5;
            let pieces = retort_tests::char_pieces(&text, step);
            let streamed = compiled.run("", None, &pieces);
            let runtime = t.run("", None, &pieces);
            let whole = compiled.run("", None, &[text.as_str()]);
            assert!(
                strict_equal(&normalise(&streamed), &normalise(&runtime)),
                "{v:?}: compiled and run-time differ on {text:?} in {step}-character pieces\ncompiled {}\nrun-time {}",
                streamed.to_json_string(),
                runtime.to_json_string()
            );
            assert!(
                strict_equal(&normalise(&streamed), &normalise(&whole)),
                "{v:?}: {text:?} in {step}-character pieces differs from one piece\nstreamed {}\nwhole    {}",
                streamed.to_json_string(),
                whole.to_json_string()
            );
            runs += 1;
        }
    }
    assert!(runs > 1_000, "{runs} texts");
}

/// The quick path's own holds (a partial delimiter kept without telling the
/// scanner, see `Parser::feed`) under every call that may meet one: the
/// next piece, an empty piece, raw bytes, and the end. Texts dense in `<`
/// and cut delimiters, fed one or two characters at a time with such calls
/// among them, give the run-time parser's events, errors and message.
#[test]
fn calls_during_quick_holds_match_the_engine() {
    use retort::OwnedEvent;
    use retort_engine::scan::delimiter::DelimiterSource;
    let mut rng = Rng(0x517C_C1B7_2722_0A95);
    let mut runs = 0usize;
    for &v in Vector::ALL {
        let t = v.template();
        let mut parts: Vec<String> = ["a", " ", "é", "<", "<<", "x<y", "\n", "|"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        for d in t.delimiters() {
            if let DelimiterSource::Literals(list) = &d.source {
                for l in list {
                    for (cut, _) in l.char_indices().skip(1) {
                        parts.push(l[..cut].to_owned());
                    }
                    parts.push(l.clone());
                }
            }
        }
        for _ in 0..20 {
            let mut text = String::new();
            for _ in 0..(4 + rng.below(30)) {
                text.push_str(&parts[rng.below(parts.len())]);
            }
            let mut c = v.parser("").expect("an empty prompt parses");
            let mut r = t.parser("").expect("an empty prompt parses");
            let (mut ce, mut re): (Vec<OwnedEvent>, Vec<OwnedEvent>) = (Vec::new(), Vec::new());
            let mut failed = false;
            for piece in retort_tests::char_pieces(&text, 1 + rng.below(2)) {
                let how = rng.below(6);
                if how == 0 {
                    // An empty piece first.
                    let cf = c
                        .feed("")
                        .map(|e| ce.extend(e.iter().map(|e| e.to_owned_event())));
                    let rf = r
                        .feed("")
                        .map(|e| re.extend(e.iter().map(|e| e.to_owned_event())));
                    assert_eq!(cf, rf, "{v:?} {text:?}: an empty piece");
                }
                let (cf, rf) = match how {
                    1 => (
                        c.feed_bytes(piece.as_bytes())
                            .map(|e| ce.extend(e.iter().map(|e| e.to_owned_event()))),
                        r.feed_bytes(piece.as_bytes())
                            .map(|e| re.extend(e.iter().map(|e| e.to_owned_event()))),
                    ),
                    _ => (
                        c.feed(piece)
                            .map(|e| ce.extend(e.iter().map(|e| e.to_owned_event()))),
                        r.feed(piece)
                            .map(|e| re.extend(e.iter().map(|e| e.to_owned_event()))),
                    ),
                };
                assert_eq!(cf, rf, "{v:?} {text:?}: piece {piece:?}");
                if cf.is_err() {
                    failed = true;
                    break;
                }
            }
            if !failed {
                #[allow(unused_imports)]
                use retort::AssistantMessage as _;
                use retort_conformance::{normalise, strict_equal};
                let cm = c.finalize().map(|(m, e)| {
                    ce.extend(e.iter().map(|e| e.to_owned_event()));
                    m.to_value()
                });
                let rm = r.finalize().map(|(m, e)| {
                    re.extend(e.iter().map(|e| e.to_owned_event()));
                    Value::Map(m)
                });
                // (The typed message lists its keys in the template's
                // order; the dict's keys compare as a set.)
                match (cm, rm) {
                    (Ok(cm), Ok(rm)) => assert!(
                        strict_equal(&normalise(&cm), &normalise(&rm)),
                        "{v:?} {text:?}: message\ncompiled {}\nrun-time {}",
                        cm.to_json_string(),
                        rm.to_json_string()
                    ),
                    (cm, rm) => assert_eq!(cm.err(), rm.err(), "{v:?} {text:?}: the end"),
                }
            }
            // (As text: a NaN is not equal to itself.)
            assert_eq!(
                format!("{ce:?}"),
                format!("{re:?}"),
                "{v:?} {text:?}: events"
            );
            runs += 1;
        }
    }
    assert!(runs > 500, "{runs} texts");
}

/// Parses each text, whole and in pieces, with the compiled parser of
/// template `$module` (bundled as `$file.json`) and the run-time one, in
/// each of the modes `$lenient`: the events, the message so far after each
/// piece and the message (or the error) must be the same.
macro_rules! same_as_runtime {
    ($module:ident, $file:literal, $prefix:literal, $texts:expr, $lenient:expr) => {{
        use retort::{OwnedEvent, ParserOptions};
        let runtime = retort::Template::from_json(
            &std::fs::read_to_string(root().join(concat!("templates/", $file, ".json"))).unwrap(),
        )
        .unwrap();
        for lenient in $lenient {
            let options = || ParserOptions::new().lenient(lenient);
            for text in $texts {
                for step in [0, 1, 3, 7] {
                    let pieces = match step {
                        0 => vec![text.as_ref()],
                        n => retort_tests::char_pieces(text.as_ref(), n),
                    };
                    let mut c = vectors::$module::Parser::with_options($prefix, options(), None)
                        .expect("the prompt parses");
                    let mut r = runtime
                        .parser_with($prefix, options(), None)
                        .expect("the prompt parses");
                    let (mut ce, mut re): (Vec<OwnedEvent>, Vec<OwnedEvent>) =
                        (Vec::new(), Vec::new());
                    let mut failed = None;
                    for piece in &pieces {
                        match (c.feed(piece), r.feed(piece)) {
                            (Ok(cf), Ok(rf)) => {
                                ce.extend(cf.untyped().iter().map(|e| e.to_owned_event()));
                                re.extend(rf.iter().map(|e| e.to_owned_event()));
                            }
                            (cf, rf) => {
                                let (cf, rf) = (cf.map(|_| ()), rf.map(|_| ()));
                                assert_eq!(cf, rf, "{text:?} in {step}-character pieces");
                                failed = Some(());
                                break;
                            }
                        }
                        assert_eq!(
                            Value::Map(c.engine().parsed_so_far()).to_json_string(),
                            Value::Map(r.parsed_so_far()).to_json_string(),
                            "{text:?} in {step}-character pieces: the message so far after {piece:?}"
                        );
                    }
                    if failed.is_some() {
                        continue;
                    }
                    let cm = c.finalize_map().map(|(m, last)| {
                        ce.extend(last.untyped().iter().map(|e| e.to_owned_event()));
                        Value::Map(m).to_json_string()
                    });
                    let rm = r.finalize().map(|(m, last)| {
                        re.extend(last.iter().map(|e| e.to_owned_event()));
                        Value::Map(m).to_json_string()
                    });
                    // (As text: a NaN is not equal to itself.)
                    assert_eq!(
                        format!("{ce:?}"),
                        format!("{re:?}"),
                        "{text:?} in {step}-character pieces: events"
                    );
                    assert_eq!(cm, rm, "{text:?} in {step}-character pieces: message");
                }
            }
        }
    }};
}

/// A `transform_each` field built in its generated structs (Mistral NeMo's
/// tool calls; the field does not repeat, so each region's list replaces
/// the last) against the run-time parser, in lenient mode, whole and in
/// pieces: two regions in one piece (the first event keeps its list), a
/// region whose element lacks an entry (the typed builder declines, the
/// transform's `KeyError` makes it malformed and the earlier list stays),
/// one that is not JSON, and one that is not a list. The events, the
/// message so far after each piece and the message must be the run-time
/// parser's.
#[test]
fn transform_each_regions_match_the_engine_in_lenient_mode() {
    let good = |name: &str| {
        format!(
            r#"[TOOL_CALLS][{{"name": "{name}", "arguments": {{"x": [1, 2]}}, "id": "c{name}"}}, {{"id": 7, "arguments": "s", "name": null, "extra": 1}}]</s>"#
        )
    };
    let texts = [
        format!("{}{}", good("a"), good("b")),
        format!(
            r#"{}[TOOL_CALLS][{{"name": "n", "arguments": {{}}}}]</s>"#,
            good("a")
        ),
        format!("{}[TOOL_CALLS][{{</s>", good("a")),
        format!(
            r#"{}[TOOL_CALLS]{{"name": "n"}}</s>{}"#,
            good("a"),
            good("c")
        ),
        format!("{}[TOOL_CALLS][]</s>tail", good("a")),
    ];
    same_as_runtime!(mistral_nemo, "mistral-nemo", "[/INST]", &texts, [true]);
}

/// Llama 3.1's calls read `{content.name}` and `{content.parameters}`:
/// the compiled parser builds them from those entries of the region's JSON
/// object, parsed without the object (`json_object_entries`). Whatever the
/// object holds (entries repeated, escaped, missing, nested, extra; text
/// that is no object, or no JSON), the result is the engine's, strict and
/// lenient.
#[test]
fn calls_read_from_object_entries_match_the_engine() {
    let texts = [
        r#"{"name": "f", "parameters": {"a": 1}}<|eot_id|>"#,
        r#"{"name": "f", "parameters": 1, "name": "g"}<|eot_id|>"#,
        r#"{"name": "f", "param\u0065ters": [1], "extra": [[{}], "x"]}<|eot_id|>"#,
        r#"{"name": "f"}<|eot_id|>"#,
        r#"{"name": "f", "parameters": }<|eot_id|>"#,
        r#"{"name": "a", "parameters": {}}; {"name": "b", "parameters": {"x": null}}<|eot_id|>"#,
        r#"{"name": "a", "parameters": {}}; {"name": "b"}; {"name": "c", "parameters": 2}<|eot_id|>"#,
        r#"{"name": 5, "parameters": "s", "parameters": {"deep": [1, {"k": "v"}]}} <|eom_id|>"#,
        r#"{"name": "f", "parameters": NaN}<|eot_id|>"#,
    ];
    same_as_runtime!(
        llama_3_1,
        "llama-3.1",
        "<|start_header_id|>assistant<|end_header_id|>\n\n",
        &texts,
        [false, true]
    );
}
