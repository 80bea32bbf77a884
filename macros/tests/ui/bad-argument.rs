// An argument the macro does not know.
// trybuild compiles these in target/tests/trybuild/retort-macros, so paths
// lead back to the workspace from there.
retort::response_template!("../../../../macros/tests/ui/pass.json", foo = bar);

fn main() {}
