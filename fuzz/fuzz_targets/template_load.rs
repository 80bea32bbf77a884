//! Arbitrary bytes as a template's JSON: `Template::from_json` returns Ok or
//! a typed error, and a template that loads streams like it parses in one
//! shot. See `retort_tests::fuzz_checks::check_template_load`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    retort_tests::fuzz_checks::check_template_load(data);
});
