// The `named-groups-without-transform` rule: one error, on the path, and nothing else.
// trybuild compiles these in target/tests/trybuild/retort-macros, so paths
// lead back to the workspace from there.
retort::response_template!("../../../../macros/tests/ui/named-groups-without-transform.json");

fn main() {
    let _ = named_groups_without_transform::Parser::new("");
}
