//! Streams the shared benchmark workloads (`../shared/bench/workloads.py`)
//! through parsers compiled by `response_template!` and through the same
//! templates loaded at run time, in the reference's chunk sizes (whole,
//! 16, 4 and 1 characters). Throughput is in bytes of model output.
//!
//! `cargo bench -p retort-benches` (needs `python3` and `../shared/bench`).

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use retort::{Template, Value};
use std::hint::black_box;
use std::path::{Path, PathBuf};

retort::response_template!("../templates/smollm3.json");
retort::response_template!("../templates/qwen3.json");
retort::response_template!("../templates/gpt-oss.json");
retort::response_template!("../templates/qwen3-coder.json");

/// A workload: the template's name, the prompt and the generation.
struct Workload {
    name: String,
    template: String,
    prefix: String,
    text: String,
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Writes the workloads with the shared generator (deterministic) and reads
/// them back.
fn workloads() -> Vec<Workload> {
    let script = root().join("../shared/bench/workloads.py");
    let out = root().join("target/bench-workloads");
    if !script.exists() {
        eprintln!("{} is missing: no workloads to run", script.display());
        return Vec::new();
    }
    let status = std::process::Command::new("python3")
        .arg(&script)
        .arg(&out)
        .stdout(std::process::Stdio::null())
        .status();
    if !status.is_ok_and(|s| s.success()) {
        eprintln!("could not run {}", script.display());
        return Vec::new();
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(&out)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.sort();
    files
        .into_iter()
        .filter_map(|path| {
            let text = std::fs::read_to_string(&path).ok()?;
            let Value::Map(w) = retort::py::json_loads(&text).ok()? else {
                return None;
            };
            let get = |k: &str| w.get(k).and_then(Value::as_str).map(str::to_owned);
            Some(Workload {
                name: path.file_stem()?.to_str()?.to_owned(),
                template: get("template")?,
                prefix: get("prefix")?,
                text: get("text")?,
            })
        })
        .collect()
}

/// Pieces of `step` characters (the whole text for `None`).
fn chunks(text: &str, step: Option<usize>) -> Vec<&str> {
    let Some(step) = step else {
        return vec![text];
    };
    let mut out = Vec::new();
    let mut start = 0;
    for (n, (i, _)) in text.char_indices().enumerate() {
        if n > 0 && n % step == 0 {
            out.push(&text[start..i]);
            start = i;
        }
    }
    out.push(&text[start..]);
    out
}

/// Streams `pieces` through a compiled parser; returns the events seen.
macro_rules! compiled {
    ($module:ident, $prefix:expr, $pieces:expr) => {{
        let mut p = $module::Parser::new($prefix).expect("the prompt parses");
        let mut events = 0;
        for piece in $pieces {
            events += p.feed(piece).expect("the workload parses").len();
        }
        let (message, last) = p.finalize().expect("the workload parses");
        black_box(&message);
        events + last.len()
    }};
}

fn run_compiled(template: &str, prefix: &str, pieces: &[&str]) -> usize {
    match template {
        "smollm3" => compiled!(smollm3, prefix, pieces),
        "qwen3" => compiled!(qwen3, prefix, pieces),
        "gpt-oss" => compiled!(gpt_oss, prefix, pieces),
        "qwen3-coder" => compiled!(qwen3_coder, prefix, pieces),
        _ => 0,
    }
}

fn run_dynamic(t: &Template, prefix: &str, pieces: &[&str]) -> usize {
    let mut p = t.parser(prefix).expect("the prompt parses");
    let mut events = 0;
    for piece in pieces {
        events += p.feed(piece).expect("the workload parses").len();
    }
    let (message, last) = p.finalize().expect("the workload parses");
    black_box(&message);
    events + last.len()
}

fn bench(c: &mut Criterion) {
    for w in workloads() {
        let path = root()
            .join("templates")
            .join(format!("{}.json", w.template));
        let Ok(json) = std::fs::read_to_string(&path) else {
            eprintln!("{}: no template {}", w.name, path.display());
            continue;
        };
        let template = Template::from_json(&json).expect("the template loads");
        let mut group = c.benchmark_group(&w.name);
        group.throughput(Throughput::Bytes(w.text.len() as u64));
        group.sample_size(10);
        group.warm_up_time(std::time::Duration::from_millis(300));
        group.measurement_time(std::time::Duration::from_secs(1));
        for (label, step) in [
            ("whole", None),
            ("stream16", Some(16)),
            ("stream1", Some(1)),
        ] {
            let pieces = chunks(&w.text, step);
            // Both parsers must agree before they are timed.
            assert_eq!(
                run_compiled(&w.template, &w.prefix, &pieces),
                run_dynamic(&template, &w.prefix, &pieces),
                "{}: compiled and run-time parsers disagree",
                w.name
            );
            group.bench_function(format!("compiled/{label}"), |b| {
                b.iter(|| run_compiled(&w.template, &w.prefix, &pieces))
            });
            group.bench_function(format!("runtime/{label}"), |b| {
                b.iter(|| run_dynamic(&template, &w.prefix, &pieces))
            });
        }
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
