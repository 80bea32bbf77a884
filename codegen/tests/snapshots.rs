//! Snapshots of the generated code: reviewing a change to the generator
//! means reviewing its effect on real templates.

use retort_codegen::{ModuleOptions, compile_module, format};
use std::path::Path;

fn generate(file: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../templates")
        .join(file);
    let json = std::fs::read_to_string(&path).expect("the template is in the repository");
    let opts = ModuleOptions {
        name: retort_codegen::module_name(file.trim_end_matches(".json")),
        crate_path: "::retort".into(),
        display_path: format!("templates/{file}"),
        track_path: None,
    };
    let tokens = compile_module(&json, &opts).expect("the template compiles");
    format(&tokens).expect("the generated code parses")
}

#[test]
fn smollm3() {
    insta::assert_snapshot!(generate("smollm3.json"));
}

#[test]
fn gpt_oss() {
    insta::assert_snapshot!(generate("gpt-oss.json"));
}
