//! Renders cases: JSON lines on stdin (the case format of
//! `retort_chat::render_cases`), results on stdout.
//!
//!     cargo run --release -p retort-chat --example render_cases < cases.jsonl > results.jsonl

fn main() -> std::io::Result<()> {
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    retort_chat::render_cases(stdin.lock(), std::io::BufWriter::new(stdout.lock()))
}
