//! The bundled templates' compiled parsers against the run-time parser on
//! the same input and chunking. See
//! `retort_tests::fuzz_checks::check_compiled`.
#![no_main]

mod models {
    include!(concat!(env!("OUT_DIR"), "/retort_templates.rs"));
}

retort_tests::compiled_runner!(Compiled, models::Model, models::ModelParser);

fn compiled(name: &str) -> Option<Box<dyn retort_conformance::Runner>> {
    models::Model::from_name(name)
        .map(|m| Box::new(Compiled(m)) as Box<dyn retort_conformance::Runner>)
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    retort_tests::fuzz_checks::check_compiled(data, &compiled);
});
