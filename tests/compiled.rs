//! Every vector of `tests/conformance/cases` through parsers compiled by
//! `retort_codegen::Builder` (see build.rs): the model templates by name,
//! inline templates as modules of their own. Messages go through their
//! typed form on the way.

use retort::Value;
use retort_conformance::{compare, field, run_case, run_case_with, to_line};
use retort_tests::{read_cases, root};

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
