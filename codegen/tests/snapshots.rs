//! Snapshots of the generated code: a change to the generator shows up as
//! a reviewable change to the modules of real templates.

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
fn mistral_small() {
    insta::assert_snapshot!(generate("mistral-small-3.2.json"));
}

#[test]
fn generation_is_deterministic() {
    assert_eq!(generate("qwen3-coder.json"), generate("qwen3-coder.json"));
}
