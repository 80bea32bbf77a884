// A template file that does not exist.
// trybuild compiles these in target/tests/trybuild/retort-macros, so paths
// lead back to the workspace from there.
retort::response_template!("../../../../macros/tests/ui/no-such-template.json");

fn main() {
    let _ = no_such_template::Parser::new("");
}
