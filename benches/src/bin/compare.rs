//! Runs the reference and retort on the same workloads, in one run, and
//! prints a table (or JSON lines with `--json`): bytes, seconds, MB/s and the
//! speed-up of retort's compiled and run-time parsers over the reference, per
//! workload and mode; then per-chunk cost against message length, parser
//! construction time, allocations per feed, and each performance target
//! (`retort_benches::targets`) with its worst row in the run.
//!
//! ```text
//! cargo run --release -p retort-benches --bin compare -- [--json] [--no-reference] [--quick] [--repeat N] [--rounds N] [--openai]
//! ```
//!
//! The reference is the repository's own: `tools/reference/setup.sh` makes
//! (once) a venv with the pinned transformers of
//! `tools/reference/requirements.txt`, and `tools/reference/bench.py` times
//! it on the workloads this crate generates, written to
//! `target/bench-workloads`, with the repository's template files. Nothing
//! outside the repository is read.

use clap::Parser as _;
use retort_benches::targets::{self, Cell, Extras};
use retort_benches::{Kind, Mode, Parsers, Workload, reasoning_qwen3, workloads};
use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

/// Counts allocations (including reallocations) so that the command can
/// report allocations per feed; only while [`allocations`] runs, so that
/// the timed runs pay for no counting (the add is a lock-prefixed
/// instruction, which the timed runs made some 30 to 300 times each).
struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);
static COUNTING: AtomicBool = AtomicBool::new(false);

// SAFETY: every call is forwarded unchanged to the system allocator; the
// counter and its switch are relaxed atomics that nothing else depends on.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: the caller upholds `alloc`'s contract.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from this allocator with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: the caller upholds `realloc`'s contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Command-line options.
#[derive(clap::Parser, Debug)]
#[command(about = "retort against the reference on the benchmark workloads")]
struct Args {
    /// Print JSON lines instead of tables.
    #[arg(long)]
    json: bool,
    /// Time retort only (no Python needed).
    #[arg(long)]
    no_reference: bool,
    /// Where the workloads are written.
    #[arg(long)]
    workloads: Option<PathBuf>,
    /// Runs per measurement for the reference, at least (the best is
    /// kept); each also runs until its runs add up to a second, except
    /// with `--quick`.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    repeat: u32,
    /// Rounds of retort's timings: every row is timed once per round, one
    /// round after another, and keeps its best. A row is timed in under a
    /// second; on a shared machine a slow spell that long moved a row by
    /// 1.7x from one run to the next (the reference's time of a row is
    /// the best of a second's worth of runs, see tools/reference/bench.py).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    rounds: u32,
    /// Shorter timing batches, and the reference timed `--repeat` times
    /// only (noisier, for a quick look).
    #[arg(long)]
    quick: bool,
    /// Only the OpenAI layer: chunks against plain events on the tool
    /// workloads (4-character pieces), and argument latency.
    #[arg(long)]
    openai: bool,
}

#[path = "compare/openai.rs"]
mod openai;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Reference timings: workload -> mode -> seconds.
type RefTimes = BTreeMap<String, BTreeMap<String, f64>>;

/// Runs the repository's reference timing script on `dir`; `Err` says why
/// not.
fn reference(args: &Args, dir: &Path) -> Result<RefTimes, String> {
    let tools = repo().join("tools/reference");
    let setup = tools.join("setup.sh");
    let script = tools.join("bench.py");
    let out = std::process::Command::new("bash")
        .arg(&setup)
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run bash {}: {e}", setup.display()))?;
    if !out.status.success() {
        return Err(format!("{} failed ({})", setup.display(), out.status));
    }
    let python = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    let min_seconds = if args.quick { "0" } else { "1" };
    eprintln!(
        "timing the reference ({python}, best of at least {} runs and {min_seconds} s per measurement) ...",
        args.repeat
    );
    let out = std::process::Command::new(&python)
        .arg(&script)
        .arg(dir)
        .arg("--templates")
        .arg(retort_benches::templates_dir())
        .arg("--repeat")
        .arg(args.repeat.to_string())
        .arg("--min-seconds")
        .arg(min_seconds)
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run {python}: {e}"))?;
    if !out.status.success() {
        return Err(format!("{} failed ({})", script.display(), out.status));
    }
    let mut times = RefTimes::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let row: serde_json::Value =
            serde_json::from_str(line).map_err(|e| format!("reference output {line:?}: {e}"))?;
        let Some(name) = row["workload"].as_str() else {
            return Err(format!("reference output {line:?} names no workload"));
        };
        let modes = times.entry(name.to_owned()).or_default();
        for mode in Mode::ALL {
            let key = format!("{}_s", mode.name());
            let seconds = row[&key]
                .as_f64()
                .ok_or_else(|| format!("reference output for {name} has no {key}"))?;
            modes.insert(mode.name(), seconds);
        }
    }
    Ok(times)
}

fn mbps(bytes: usize, s: f64) -> f64 {
    bytes as f64 / s / 1e6
}

/// Allocations made by `f`.
fn allocations(f: impl FnOnce()) -> usize {
    let before = ALLOCATIONS.load(Ordering::SeqCst);
    COUNTING.store(true, Ordering::SeqCst);
    f();
    COUNTING.store(false, Ordering::SeqCst);
    ALLOCATIONS.load(Ordering::SeqCst) - before
}

/// Allocations per feed while a compiled Qwen3 parser streams the reasoning
/// text in 4-character pieces (the first 1000 pieces are not counted: the
/// region opens there and the buffers reach their working size).
/// With `reserve`, the parser is first told how much text to expect.
fn allocations_per_feed(w: &Workload, reserve: bool) -> (usize, usize) {
    let pieces = Mode::Stream(4).pieces(&w.text);
    let steady = 1000..pieces.len().min(21_000);
    let mut p = retort_benches::qwen3::Parser::new(&w.prefix).expect("the prompt parses");
    if reserve {
        p.reserve(w.text.len());
    }
    for piece in &pieces[..steady.start] {
        p.feed(piece).expect("the workload parses");
    }
    let n = allocations(|| {
        for piece in &pieces[steady.clone()] {
            std::hint::black_box(p.feed(piece).expect("the workload parses").len());
        }
    });
    (n, steady.len())
}

fn main() {
    let args = Args::parse();
    let (batches, batch) = if args.quick {
        (3, Duration::from_millis(20))
    } else {
        (7, Duration::from_millis(60))
    };
    if args.openai {
        openai::run(batches, batch);
        return;
    }
    let all = workloads();
    let dir = args
        .workloads
        .clone()
        .unwrap_or_else(|| repo().join("target/bench-workloads"));
    if let Err(e) = retort_benches::write_workloads(&dir, &all) {
        eprintln!("cannot write the workloads to {}: {e}", dir.display());
        std::process::exit(2);
    }
    let reference = if args.no_reference {
        None
    } else {
        match reference(&args, &dir) {
            Ok(t) => Some(t),
            Err(e) => {
                eprintln!("the reference could not be timed: {e}");
                eprintln!("(--no-reference times retort alone)");
                std::process::exit(2);
            }
        }
    };

    eprintln!("timing retort ({} rounds) ...", args.rounds);
    let parsers: Vec<Parsers> = all
        .iter()
        .map(|w| {
            Parsers::new(w.template).unwrap_or_else(|e| {
                eprintln!("{}: {e}", w.name);
                std::process::exit(2);
            })
        })
        .collect();
    let mut cells: Vec<Cell> = Vec::new();
    let mut construct: BTreeMap<String, f64> = BTreeMap::new();
    for round in 0..args.rounds {
        let mut k = 0;
        for (w, parsers) in all.iter().zip(&parsers) {
            for mode in Mode::ALL {
                let pieces = mode.pieces(&w.text);
                if round == 0 {
                    let compiled = parsers.run(Kind::Compiled, &w.prefix, &pieces);
                    let runtime = parsers.run(Kind::Runtime, &w.prefix, &pieces);
                    if compiled != runtime {
                        eprintln!(
                            "{} {}: compiled and run-time parsers disagree",
                            w.name,
                            mode.name()
                        );
                        std::process::exit(1);
                    }
                }
                // The two parsers are timed in alternating batches, so that
                // the ratio between them is not the machine's mood between
                // two runs.
                let (compiled_s, runtime_s) = retort_benches::time_pair(
                    || {
                        parsers.run(Kind::Compiled, &w.prefix, &pieces);
                    },
                    || {
                        parsers.run(Kind::Runtime, &w.prefix, &pieces);
                    },
                    batches,
                    batch,
                );
                match cells.get_mut(k) {
                    Some(c) => {
                        c.compiled_s = c.compiled_s.min(compiled_s);
                        c.runtime_s = c.runtime_s.min(runtime_s);
                    }
                    None => cells.push(Cell {
                        workload: w.name.clone(),
                        mode,
                        bytes: w.text.len(),
                        compiled_s,
                        runtime_s,
                        reference_s: reference
                            .as_ref()
                            .and_then(|r| r.get(&w.name))
                            .and_then(|m| m.get(&mode.name()))
                            .copied(),
                    }),
                }
                k += 1;
            }
            for kind in [Kind::Compiled, Kind::Runtime] {
                let s = retort_benches::time_per_call(
                    || parsers.construct(kind, &w.prefix),
                    batches,
                    batch,
                );
                let best = construct
                    .entry(format!("{}/{}", kind.name(), w.name))
                    .or_insert(f64::INFINITY);
                *best = best.min(s * 1e9);
            }
        }
    }

    // Per-chunk cost against message length, 4-character pieces.
    let parsers = Parsers::new("qwen3").expect("the qwen3 template loads");
    let mut scaling = Vec::new();
    for (label, n) in [("10KB", 10_000), ("100KB", 100_000), ("1MB", 1_000_000)] {
        let w = reasoning_qwen3(label, n, 0);
        let pieces = Mode::Stream(4).pieces(&w.text);
        let s = retort_benches::time_per_call(
            || {
                parsers.run(Kind::Compiled, &w.prefix, &pieces);
            },
            batches,
            batch,
        );
        scaling.push((label, w.text.len(), s * 1e9 / pieces.len() as f64));
    }
    let flat = scaling[2].2 / scaling[0].2;

    let qwen = all
        .iter()
        .find(|w| w.name == "reasoning-qwen3")
        .expect("the qwen3 workload exists");
    let (allocs, feeds) = allocations_per_feed(qwen, false);
    let (reserved, _) = allocations_per_feed(qwen, true);

    let checks = targets::check(
        &cells,
        &Extras {
            chunk_cost_1mb_over_10kb: Some(flat),
            allocations_after_reserve: Some(reserved),
            construct_compiled_ns: construct
                .iter()
                .filter_map(|(k, ns)| Some((k.strip_prefix("compiled/")?.to_owned(), *ns)))
                .collect(),
        },
    );

    if args.json {
        for c in &cells {
            for (kind, s) in [(Kind::Compiled, c.compiled_s), (Kind::Runtime, c.runtime_s)] {
                let line = serde_json::json!({
                    "workload": c.workload,
                    "mode": c.mode.name(),
                    "parser": kind.name(),
                    "bytes": c.bytes,
                    "retort_s": s,
                    "reference_s": c.reference_s,
                    "speedup": c.reference_s.map(|x| x / s),
                });
                println!("{line}");
            }
        }
        let sizes: Vec<_> = scaling
            .iter()
            .map(|(label, bytes, ns)| serde_json::json!({"size": label, "bytes": bytes, "ns_per_chunk": ns}))
            .collect();
        println!(
            "{}",
            serde_json::json!({"scaling": {"workload": "reasoning-qwen3", "mode": "stream4", "parser": "compiled", "sizes": sizes, "ratio_1MB_10KB": flat}})
        );
        println!("{}", serde_json::json!({ "construct_ns": construct }));
        println!(
            "{}",
            serde_json::json!({"allocations": {"workload": "reasoning-qwen3", "mode": "stream4", "parser": "compiled", "feeds": feeds, "allocations": allocs, "per_feed": allocs as f64 / feeds as f64, "allocations_after_reserve": reserved}})
        );
        let checks: Vec<_> = checks
            .iter()
            .map(|c| serde_json::json!({"target": c.target, "worst": c.worst, "measured": c.measured, "met": c.met}))
            .collect();
        println!("{}", serde_json::json!({ "targets": checks }));
        return;
    }

    println!(
        "{:<18} {:<8} {:>8} {:>10} {:>10} {:>10} {:>9} {:>9} {:>9} {:>7}",
        "workload",
        "mode",
        "bytes",
        "ref s",
        "compiled s",
        "runtime s",
        "ref MB/s",
        "cmp MB/s",
        "speedup",
        "cmp/rt"
    );
    for c in &cells {
        let reference_s = c.reference_s;
        println!(
            "{:<18} {:<8} {:>8} {:>10} {:>10.6} {:>10.6} {:>9} {:>9.1} {:>9} {:>7.2}",
            c.workload,
            c.mode.name(),
            c.bytes,
            reference_s.map_or("-".into(), |s| format!("{s:.6}")),
            c.compiled_s,
            c.runtime_s,
            reference_s.map_or("-".into(), |s| format!("{:.1}", mbps(c.bytes, s))),
            mbps(c.bytes, c.compiled_s),
            c.speedup().map_or("-".into(), |x| format!("{x:.0}x")),
            c.compiled_over_runtime(),
        );
    }
    println!();
    println!("per-chunk cost, reasoning-qwen3 in 4-character pieces (compiled):");
    for (label, bytes, ns) in &scaling {
        println!("  {label:>6} ({bytes} bytes): {ns:.1} ns per chunk");
    }
    println!("  1MB / 10KB: {flat:.2}x");
    println!();
    println!("parser construction (with the workload's prompt):");
    for (k, ns) in &construct {
        println!("  {k:<32} {ns:>9.0} ns");
    }
    println!();
    println!(
        "allocations while streaming reasoning-qwen3 in 4-character pieces: {allocs} in {feeds} feeds ({:.4} per feed); {reserved} after `reserve`",
        allocs as f64 / feeds as f64
    );
    println!();
    println!("targets (docs/performance.md), each by its worst row in this run:");
    for c in &checks {
        let verdict = match c.met {
            Some(true) => "met",
            Some(false) => "NOT MET",
            None => "not measured",
        };
        println!(
            "  {:<52} {:>12}  {:<26} {verdict}",
            c.target,
            if c.measured.is_nan() {
                "-".to_owned()
            } else {
                format!("{:.2}", c.measured)
            },
            c.worst
        );
    }
}
