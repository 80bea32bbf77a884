// The `not-an-object` rule: one error, on the path, and nothing else.
// trybuild compiles these in target/tests/trybuild/retort-macros, so paths
// lead back to the workspace from there.
retort::response_template!("../../../../macros/tests/ui/not-an-object.json");

fn main() {
    let _ = not_an_object::Parser::new("");
}
