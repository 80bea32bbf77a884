//! Lenient mode: never fails on text, streams like it parses in one shot,
//! equals strict mode on valid output, and accounts for the generation's
//! text. See `retort_tests::fuzz_checks::check_lenient`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    retort_tests::fuzz_checks::check_lenient(data);
});
