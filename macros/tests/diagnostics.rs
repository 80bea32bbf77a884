//! Every rule a template can break is a compile error on the macro's path
//! literal (trybuild expectations in `tests/ui/*.stderr`), with exactly one
//! error per mistake.

use std::path::Path;

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/[a-o]*.rs");
    t.compile_fail("tests/ui/pattern-type.rs");
    t.compile_fail("tests/ui/[s-z]*.rs");
    t.pass("tests/ui/pass-*.rs");
}

#[test]
fn every_rule_has_a_diagnostic_case() {
    let ui = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ui");
    for rule in retort::template::Rule::ALL {
        if rule == retort::template::Rule::Source {
            // Unreadable files: `missing-file.rs`.
            continue;
        }
        let case = ui.join(format!("{}.rs", rule.name()));
        assert!(case.exists(), "no diagnostic test for rule {}", rule.name());
    }
}
