//! Replays every committed corpus file of every cargo-fuzz target
//! (`fuzz/corpus/<target>/*`) through the fuzzer's own checks
//! (`retort_tests::fuzz_checks`) on the stable toolchain, so the corpus
//! guards against regressions in `cargo test` and CI without nightly.

use retort_tests::fuzz_checks::{
    check_compiled, check_lenient, check_parse_stream, check_template_load,
};
use retort_tests::root;
use std::path::PathBuf;

mod vectors {
    include!(concat!(env!("OUT_DIR"), "/vector_templates.rs"));
}
use vectors::Vector;

retort_tests::compiled_runner!(Compiled, Vector, vectors::VectorParser);

fn compiled(name: &str) -> Option<Box<dyn retort_conformance::Runner>> {
    Vector::from_name(name).map(|m| Box::new(Compiled(m)) as Box<dyn retort_conformance::Runner>)
}

/// The corpus files of `target`, sorted (a target with no corpus is a
/// mistake in the repository, not an empty pass). `RETORT_FUZZ_CORPUS`
/// names another directory of `<target>/` folders to replay (the seeds, or
/// a campaign's artifacts).
fn corpus(target: &str) -> Vec<PathBuf> {
    let base = std::env::var_os("RETORT_FUZZ_CORPUS")
        .map_or_else(|| root().join("fuzz/corpus"), PathBuf::from);
    let dir = base.join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "{} holds no corpus files", dir.display());
    files
}

/// Runs `check` on every file, naming the file that fails.
fn replay(target: &str, check: impl Fn(&[u8])) {
    let files = corpus(target);
    for file in &files {
        let data = std::fs::read(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(&data)));
        if let Err(panic) = outcome {
            let why = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("(no message)");
            panic!("{target}: {} fails: {why}", file.display());
        }
    }
    eprintln!("{target}: {} corpus files replayed", files.len());
}

#[test]
fn chat_render_corpus() {
    replay("chat_render", retort_tests::chat_fuzz::check_chat_render);
}

#[test]
fn template_load_corpus() {
    replay("template_load", check_template_load);
}

#[test]
fn parse_stream_corpus() {
    replay("parse_stream", check_parse_stream);
}

#[test]
fn compiled_corpus() {
    replay("compiled", |data| check_compiled(data, &compiled));
}

#[test]
fn lenient_corpus() {
    replay("lenient", check_lenient);
}
