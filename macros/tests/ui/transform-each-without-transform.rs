// The `transform-each-without-transform` rule: one error, on the path, and nothing else.
// trybuild compiles these in target/tests/trybuild/retort-macros, so paths
// lead back to the workspace from there.
retort::response_template!("../../../../macros/tests/ui/transform-each-without-transform.json");

fn main() {
    let _ = transform_each_without_transform::Parser::new("");
}
