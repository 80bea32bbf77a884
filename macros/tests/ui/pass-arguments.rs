// `name = ...` and `crate = ...` work, and the module is usable.
// trybuild compiles these in target/tests/trybuild/retort-macros, so paths
// lead back to the workspace from there.
retort::response_template!("../../../../macros/tests/ui/pass.json", name = chat, crate = ::retort);

fn main() {
    let mut p = chat::Parser::new("").unwrap();
    p.feed("<a><t>hm</t>hi").unwrap();
    let (m, _) = p.finalize().unwrap();
    assert_eq!(m.content.as_deref(), Some("hi"));
    assert_eq!(chat::Field::ALL.len(), 2);
}
