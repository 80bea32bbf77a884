//! Helpers shared by the engine's integration tests.

use retort_engine::Template;
use std::path::Path;

/// A bundled template (`templates/<name>.json`), loaded.
pub fn bundled(name: &str) -> Template {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../templates")
        .join(format!("{name}.json"));
    Template::from_json(&std::fs::read_to_string(&path).expect("a bundled template"))
        .expect("the bundled template loads")
}
