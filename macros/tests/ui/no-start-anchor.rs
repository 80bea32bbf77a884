// The `no-start-anchor` rule: one error, on the path, and nothing else.
// trybuild compiles these in target/tests/trybuild/retort-macros, so paths
// lead back to the workspace from there.
retort::response_template!("../../../../macros/tests/ui/no-start-anchor.json");

fn main() {
    let _ = no_start_anchor::Parser::new("");
}
