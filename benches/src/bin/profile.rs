//! Runs one workload in a loop, for a profiler to watch:
//!
//! ```text
//! cargo build --release -p retort-benches --bin profile
//! perf record -g target/release/profile tools-qwen3-coder stream4 compiled 5
//! ```
//!
//! Arguments: workload name, mode (`whole`, `streamN`), parser (`compiled`
//! or `runtime`), seconds (default 3).

use retort_benches::{Kind, Mode, Parsers, workloads};
use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: profile WORKLOAD whole|streamN compiled|runtime|openai [SECONDS]";
    let [name, mode, kind, rest @ ..] = args.as_slice() else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let Some(w) = workloads().into_iter().find(|w| &w.name == name) else {
        eprintln!("no workload {name:?}");
        std::process::exit(2);
    };
    let mode = match mode.strip_prefix("stream").map(str::parse) {
        None if mode == "whole" => Mode::Whole,
        Some(Ok(n)) if n > 0 => Mode::Stream(n),
        _ => {
            eprintln!("{usage}");
            std::process::exit(2);
        }
    };
    if kind == "openai" {
        // The run-time parser through `ChunkStream::feed_chunks`, chunks
        // serialised: what a server does.
        let text = std::fs::read_to_string(
            retort_benches::templates_dir().join(format!("{}.json", w.template)),
        )
        .expect("the template file");
        let t = retort::Template::from_json(&text).expect("the template loads");
        let pieces = mode.pieces(&w.text);
        let seconds: f64 = rest.first().and_then(|s| s.parse().ok()).unwrap_or(3.0);
        let start = Instant::now();
        let mut runs = 0u64;
        let mut out = Vec::new();
        while start.elapsed() < Duration::from_secs_f64(seconds) {
            let mut s = retort::openai::ChunkStream::new(
                &t,
                &w.prefix,
                retort::openai::Options::deterministic(),
            )
            .expect("the prompt parses");
            for p in &pieces {
                for c in s.feed_chunks(p).expect("the workload streams").iter() {
                    out.clear();
                    serde_json::to_writer(&mut out, &c).expect("a chunk serialises");
                }
            }
            s.finalize_chunks(false).expect("the workload streams");
            runs += 1;
        }
        let per = start.elapsed().as_secs_f64() / runs as f64;
        println!("{runs} runs, {:.1} us per run", per * 1e6);
        return;
    }
    let kind = match kind.as_str() {
        "compiled" => Kind::Compiled,
        "runtime" => Kind::Runtime,
        _ => {
            eprintln!("{usage}");
            std::process::exit(2);
        }
    };
    let seconds: f64 = rest.first().and_then(|s| s.parse().ok()).unwrap_or(3.0);
    let parsers = Parsers::new(w.template).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2);
    });
    let pieces = mode.pieces(&w.text);
    let start = Instant::now();
    let mut runs = 0u64;
    while start.elapsed() < Duration::from_secs_f64(seconds) {
        parsers.run(kind, &w.prefix, &pieces);
        runs += 1;
    }
    let per = start.elapsed().as_secs_f64() / runs as f64;
    println!(
        "{runs} runs, {:.1} us per run, {:.1} MB/s",
        per * 1e6,
        w.text.len() as f64 / per / 1e6
    );
}
