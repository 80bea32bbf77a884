//! Arbitrary bytes as a chat template and a conversation: compiling and
//! rendering give a result or a typed error, never a panic or a hang, within
//! the renderer's limits. See `retort_tests::chat_fuzz::check_chat_render`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    retort_tests::chat_fuzz::check_chat_render(data);
});
