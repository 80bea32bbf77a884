// The `several-implicit-fields` rule: one error, on the path, and nothing else.
// trybuild compiles these in target/tests/trybuild/retort-macros, so paths
// lead back to the workspace from there.
retort::response_template!("../../../../macros/tests/ui/several-implicit-fields.json");

fn main() {
    let _ = several_implicit_fields::Parser::new("");
}
