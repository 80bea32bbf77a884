//! The project's own conformance vectors (tests/conformance/cases), whose
//! expected results were computed by the reference oracle, through the
//! run-time parser.

use retort_tests::{root, run_file};

#[test]
fn own_vectors_match_the_reference() {
    let dir = root().join("tests/conformance/cases");
    let templates = root().join("templates");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/conformance/cases exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no vector files in {}", dir.display());
    let mut total = 0;
    let mut failures = Vec::new();
    for f in &files {
        let (passed, fails) = run_file(f, &templates);
        total += passed + fails.len();
        failures.extend(fails);
    }
    for f in failures.iter().take(10) {
        eprintln!("FAIL {f}");
    }
    assert!(
        failures.is_empty(),
        "{} of {total} cases failed",
        failures.len()
    );
    eprintln!("{total} cases passed");
}
