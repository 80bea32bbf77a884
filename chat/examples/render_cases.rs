//! Renders cases: JSON lines (the case format of `retort_chat::render_cases`)
//! from the files named on the command line, or stdin; results on stdout.
//!
//!     cargo run --release -p retort-chat --example render_cases -- cases.jsonl > results.jsonl

use std::io::{BufReader, BufWriter};

fn main() -> std::io::Result<()> {
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let files: Vec<String> = std::env::args().skip(1).collect();
    if files.is_empty() || files == ["-"] {
        return retort_chat::render_cases(std::io::stdin().lock(), &mut out);
    }
    for f in files {
        retort_chat::render_cases(BufReader::new(std::fs::File::open(f)?), &mut out)?;
    }
    Ok(())
}
