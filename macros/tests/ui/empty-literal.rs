// The `empty-literal` rule: one error, on the path, and nothing else.
// trybuild compiles these in target/tests/trybuild/retort-macros, so paths
// lead back to the workspace from there.
retort::response_template!("../../../../macros/tests/ui/empty-literal.json");

fn main() {
    let _ = empty_literal::Parser::new("");
}
