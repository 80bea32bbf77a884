//! Shared helpers of retort's workspace tests: where the vectors and
//! templates live, and how to run a case file.

use retort::Value;
use retort::conformance::{compare, run_case};
use std::path::{Path, PathBuf};

/// The workspace root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ sits in the workspace")
        .to_path_buf()
}

/// Reads a JSON-lines case file with Python's JSON semantics.
pub fn read_cases(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.split('\n')
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, l)| {
            retort::py::json_loads(l)
                .unwrap_or_else(|e| panic!("{}:{}: {e}", path.display(), i + 1))
        })
        .collect()
}

/// Runs every case of `path` through the run-time parser (templates named by
/// cases come from `templates`) and returns `(passed, failures)`.
pub fn run_file(path: &Path, templates: &Path) -> (usize, Vec<String>) {
    let load = |name: &str| {
        std::fs::read_to_string(templates.join(format!("{name}.json")))
            .map_err(|e| format!("{name}: {e}"))
    };
    let mut passed = 0;
    let mut failures = Vec::new();
    for case in read_cases(path) {
        let id = retort::conformance::field(&case, "id")
            .map(retort::conformance::to_line)
            .unwrap_or_default();
        match run_case(&case, &load) {
            Ok(result) => {
                let problems = compare(&case, &result);
                if problems.is_empty() {
                    passed += 1;
                } else {
                    failures.push(format!("{id}: {}", problems.join("\n  ")));
                }
            }
            Err(e) => failures.push(format!("{id}: {e}")),
        }
    }
    (passed, failures)
}
