//! Runs one workload in a loop, for a profiler to watch:
//!
//! ```text
//! cargo build --release -p retort-benches --bin profile
//! perf record -g target/release/profile tools-qwen3-coder stream4 compiled 5
//! ```
//!
//! Arguments: workload name, mode (`whole`, `streamN`), parser (`compiled`
//! or `runtime`), seconds (default 3) or, as `Nx`, a number of runs. For
//! instruction counts, whatever the machine's speed:
//!
//! ```text
//! valgrind --tool=callgrind --toggle-collect='*Parsers::run*' \
//!     target/release/profile chat-smollm3 stream4 compiled 22x
//! ```
//!
//! counts only the runs (parser construction to finalized message); the
//! difference between `22x` and `2x`, divided by 20, is one run without
//! the first runs' one-time work (thread-local buffers). Counting the whole process instead
//! includes loading the template, whose count differs from process to
//! process (its hash maps are seeded at random) by hundreds of thousands
//! of instructions: spread over a few runs, that moved a row's count by
//! up to a fifth.

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
        let limit = Limit::parse(rest.first());
        let start = Instant::now();
        let mut runs = 0u64;
        let mut out = Vec::new();
        while limit.more(start, runs) {
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
    let limit = Limit::parse(rest.first());
    let parsers = Parsers::new(w.template).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2);
    });
    let pieces = mode.pieces(&w.text);
    let start = Instant::now();
    let mut runs = 0u64;
    while limit.more(start, runs) {
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

/// How long to run: seconds of wall time, or (`Nx`) a number of runs.
enum Limit {
    Seconds(f64),
    Runs(u64),
}

impl Limit {
    fn parse(arg: Option<&String>) -> Limit {
        match arg {
            Some(a) if a.ends_with('x') => match a[..a.len() - 1].parse() {
                Ok(n) => Limit::Runs(n),
                Err(_) => usage_error(a),
            },
            Some(a) => match a.parse() {
                Ok(s) => Limit::Seconds(s),
                Err(_) => usage_error(a),
            },
            None => Limit::Seconds(3.0),
        }
    }

    /// Whether another run is due, `runs` done since `start`.
    fn more(&self, start: Instant, runs: u64) -> bool {
        match *self {
            Limit::Seconds(s) => start.elapsed() < Duration::from_secs_f64(s),
            Limit::Runs(n) => runs < n,
        }
    }
}

fn usage_error(arg: &str) -> ! {
    eprintln!("{arg:?} is neither seconds nor a number of runs (`200x`)");
    std::process::exit(2);
}
