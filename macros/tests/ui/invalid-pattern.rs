// The `invalid-pattern` rule: one error, on the path, and nothing else.
// trybuild compiles these in target/tests/trybuild/retort-macros, so paths
// lead back to the workspace from there.
retort::response_template!("../../../../macros/tests/ui/invalid-pattern.json");

fn main() {
    let _ = invalid_pattern::Parser::new("");
}
