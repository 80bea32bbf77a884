// The `unknown-key` rule: one error, on the path, and nothing else.
// trybuild compiles these in target/tests/trybuild/retort-macros, so paths
// lead back to the workspace from there.
retort::response_template!("../../../../macros/tests/ui/unknown-key.json");

fn main() {
    let _ = unknown_key::Parser::new("");
}
