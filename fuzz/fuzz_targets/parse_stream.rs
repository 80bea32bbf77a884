//! Streaming equals one shot, for `feed` and for `feed_bytes` with split
//! UTF-8, on the bundled templates and a few regex-heavy ones. See
//! `retort_tests::fuzz_checks::check_parse_stream` for the input layout.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    retort_tests::fuzz_checks::check_parse_stream(data);
});
