// The `unknown-content-parser` rule: one error, on the path, and nothing else.
// trybuild compiles these in target/tests/trybuild/retort-macros, so paths
// lead back to the workspace from there.
retort::response_template!("../../../../macros/tests/ui/unknown-content-parser.json");

fn main() {
    let _ = unknown_content_parser::Parser::new("");
}
