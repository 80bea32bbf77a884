//! What the case-file tests share: the workspace root, reading a case file,
//! and a case's template.

use std::path::{Path, PathBuf};

use retort_conformance::field;
use retort_engine::{Template, Value};

/// The workspace root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

/// The cases of a JSON-lines file (read at any depth: some vectors nest as
/// deep as the reference's JSON limit).
pub fn read_cases(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| retort_engine::py::json_loads_with_depth(l, usize::MAX).expect("a JSON case"))
        .collect()
}

/// A case's template: named (read from `templates`) or inline; `None` when
/// the case has none or it does not load.
pub fn template_of(case: &Value, templates: &Path) -> Option<Template> {
    match field(case, "template")? {
        Value::Str(name) => {
            let json = std::fs::read_to_string(templates.join(format!("{name}.json")))
                .unwrap_or_else(|e| panic!("template {name}: {e}"));
            Template::from_json(&json).ok()
        }
        v @ Value::Map(_) => Template::from_value(v).ok(),
        _ => None,
    }
}
