// The `join-without-repeats` rule: one error, on the path, and nothing else.
// trybuild compiles these in target/tests/trybuild/retort-macros, so paths
// lead back to the workspace from there.
retort::response_template!("../../../../macros/tests/ui/join-without-repeats.json");

fn main() {
    let _ = join_without_repeats::Parser::new("");
}
