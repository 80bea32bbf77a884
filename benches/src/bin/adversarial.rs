//! Hostile outputs, timed and measured:
//!
//! ```text
//! cargo run --release -p retort-benches --bin adversarial -- [--mb 10] [--template NAME] [--json]
//! cargo run --release -p retort-benches --bin adversarial -- --memory [--mb 100]
//! ```
//!
//! **Near misses.** For every bundled template, text made of every proper
//! prefix of every literal run in its delimiters (`<`, `<t`, … `<tool_call`
//! for `\s*<tool_call>`), repeated to `--mb` megabytes and fed one byte at a
//! time, against plain prose of the same length fed the same way. Every
//! near miss makes the scanner hold text and decide it at the next byte, so
//! this is the parser's worst ordinary case; the ratio says what it costs.
//!
//! **Memory.** An unclosed region of `--mb` megabytes (SmolLM3's `<think>`
//! never closed), fed in 64 KiB pieces, then finalized: the peak resident
//! memory above what the process used before, against the input's size.
//! Each case runs in a child process, so that peaks do not mix.

use clap::Parser as _;
use retort::{Limits, ParserOptions, Template};
use retort_benches::near_miss::{near_misses, repeat_to};
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(clap::Parser)]
struct Args {
    /// Megabytes of text per case.
    #[arg(long)]
    mb: Option<usize>,
    /// Only this bundled template (file stem).
    #[arg(long)]
    template: Option<String>,
    /// One JSON object per line instead of a table.
    #[arg(long)]
    json: bool,
    /// The memory cases instead of the near-miss timings.
    #[arg(long)]
    memory: bool,
    /// (internal) run one memory case in this process and print its peak.
    #[arg(long, hide = true)]
    memory_case: Option<String>,
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Feeds `text` a character at a time; returns seconds, events, and the
/// regions opened.
fn feed_bytewise(t: &Template, text: &str) -> (f64, usize, usize) {
    let mut p = t.parser("").expect("an empty prompt parses");
    p.reserve(text.len());
    let mut events = 0;
    let mut opened = 0;
    let start = Instant::now();
    let mut from = 0;
    for (i, _) in text.char_indices().skip(1).chain([(text.len(), ' ')]) {
        match p.feed(&text[from..i]) {
            Ok(ev) => {
                events += ev.len();
                opened += ev
                    .iter()
                    .filter(|e| matches!(e, retort::Event::RegionOpen { .. }))
                    .count();
            }
            // A template whose regions reject this text (a required JSON
            // body, say) stops here; the time so far is what it took.
            Err(_) => break,
        }
        from = i;
    }
    let _ = p.finalize();
    (start.elapsed().as_secs_f64(), events, opened)
}

const PROSE: &str = "The model thinks about the question, weighs two answers and writes \
    the one it prefers, with a short reason and an example: 12 apples, 3 pears.\n";

fn near_miss_table(args: &Args) {
    let len = args.mb.unwrap_or(10) << 20;
    let mut names: Vec<PathBuf> = std::fs::read_dir(root().join("templates"))
        .expect("templates/")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    names.sort();
    if !args.json {
        println!(
            "{:<20} {:>10} {:>9} {:>9} {:>7} {:>7}",
            "template", "bytes", "plain s", "near s", "ratio", "opened"
        );
    }
    let mut worst: f64 = 0.0;
    for path in names {
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default()
            .to_owned();
        if args.template.as_ref().is_some_and(|t| *t != name) {
            continue;
        }
        let json = std::fs::read_to_string(&path).expect("a bundled template");
        let t = Template::from_json(&json).expect("a bundled template loads");
        let unit = near_misses(&t);
        let near = repeat_to(&unit, len);
        let plain = repeat_to(PROSE, near.len());
        let (plain_s, _, _) = feed_bytewise(&t, &plain);
        let (near_s, _, opened) = feed_bytewise(&t, &near);
        let ratio = near_s / plain_s;
        worst = worst.max(ratio);
        if args.json {
            println!(
                "{}",
                serde_json::json!({"template": name, "bytes": near.len(), "plain_s": plain_s,
                    "near_miss_s": near_s, "ratio": ratio, "regions_opened": opened})
            );
        } else {
            println!(
                "{name:<20} {:>10} {plain_s:>9.3} {near_s:>9.3} {ratio:>6.2}x {opened:>7}",
                near.len()
            );
        }
    }
    if !args.json {
        println!("worst ratio: {worst:.2}x");
    }
}

/// Peak resident memory of this process so far, in bytes (Linux).
fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

fn current_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// One memory case, in this process: prints `input_bytes peak_above_start outcome`.
fn memory_case(case: &str, mb: usize) {
    let t = Template::from_json(
        &std::fs::read_to_string(root().join("templates/smollm3.json")).expect("smollm3"),
    )
    .expect("smollm3 loads");
    let before = current_rss().unwrap_or(0);
    let limits = match case {
        "limit" => Limits::default().with_max_region(64 << 20),
        _ => Limits::none(),
    };
    let mut p = t
        .parser_with("", ParserOptions::new().limits(limits), None)
        .expect("an empty prompt parses");
    let piece = repeat_to(PROSE, 64 << 10);
    let mut fed = 0usize;
    let mut outcome = String::from("ok");
    if let Err(e) = p.feed("<think>") {
        outcome = e.to_string();
    }
    while fed < mb << 20 && outcome == "ok" {
        match p.feed(&piece) {
            Ok(_) => fed += piece.len(),
            Err(e) => {
                outcome = format!("{:?} after {fed} bytes, raw {} bytes", e.kind, e.raw.len());
            }
        }
    }
    if outcome == "ok" {
        let ended = match case {
            "events" => p.finalize().map(|(m, ev)| m.len() + ev.len()),
            _ => p.finalize_message().map(|m| m.len()),
        };
        if let Err(e) = ended {
            outcome = format!("{:?}", e.kind);
        }
    }
    let peak = peak_rss().unwrap_or(0);
    println!("{fed} {} {outcome}", peak.saturating_sub(before));
}

fn memory_table(args: &Args) {
    let mb = args.mb.unwrap_or(100);
    let exe = std::env::current_exe().expect("this program");
    println!(
        "{:<44} {:>12} {:>12} {:>7}  outcome",
        "case", "input B", "peak B", "ratio"
    );
    for (case, what) in [
        ("message", "unclosed region, finalize_message"),
        ("events", "unclosed region, finalize (with events)"),
        ("limit", "unclosed region, max_region = 64 MiB"),
    ] {
        let out = std::process::Command::new(&exe)
            .args(["--memory-case", case, "--mb", &mb.to_string()])
            .output()
            .expect("the child runs");
        let line = String::from_utf8_lossy(&out.stdout);
        let mut parts = line.trim().splitn(3, ' ');
        let fed: f64 = parts.next().and_then(|x| x.parse().ok()).unwrap_or(0.0);
        let peak: f64 = parts.next().and_then(|x| x.parse().ok()).unwrap_or(0.0);
        let outcome = parts.next().unwrap_or("(no output)");
        let ratio = if fed > 0.0 { peak / fed } else { 0.0 };
        println!("{what:<44} {fed:>12} {peak:>12} {ratio:>6.2}x  {outcome}");
    }
}

fn main() {
    let args = Args::parse();
    if let Some(case) = &args.memory_case {
        memory_case(case, args.mb.unwrap_or(100));
    } else if args.memory {
        memory_table(&args);
    } else {
        near_miss_table(&args);
    }
}
