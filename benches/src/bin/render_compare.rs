//! Chat-template rendering, retort against the reference, in one run.
//!
//! For each chat template of the shared corpus (`../shared/chat-templates`
//! and `../shared/llamacpp/templates`, or `$RETORT_SHARED`; deduplicated by
//! content) it renders one typical conversation — a system message, a user
//! message, tool definitions, an assistant tool call, its result and the
//! generation prompt — with retort (the template compiled once and reused,
//! as transformers caches it) and with the reference's
//! `render_jinja_template` (`tools/reference/bench_render.py`), and prints
//! both times and their ratio per template, then the median ratio. Where a
//! template rejects that conversation, the first variant it renders is
//! used (string arguments; no tool turn; no system message).
//!
//! ```sh
//! cargo run --release -p retort-benches --bin render-compare [-- --json] [--min-seconds S]
//! ```
//!
//! A benchmark, not a test: the numbers depend on the machine; compare
//! ratios measured in one run.

use retort::chat::{ChatTemplate, RenderInput};
use serde_json::{Value as Json, json};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn shared() -> PathBuf {
    std::env::var_os("RETORT_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared"))
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn tools() -> Json {
    json!([{"type": "function", "function": {
        "name": "get_weather", "description": "The weather in a city.",
        "parameters": {"type": "object", "properties": {
            "city": {"type": "string", "description": "The city."},
            "days": {"type": "integer"}}, "required": ["city"]}}}])
}

/// A conversation to render: its name, messages and tools.
type Variant = (&'static str, Vec<Json>, Option<Vec<Json>>);

/// The typical conversation and its fallbacks, in order of preference.
fn variants() -> Vec<Variant> {
    let system = json!({"role": "system", "content": "You are a helpful assistant."});
    let user =
        json!({"role": "user", "content": "What's the weather in Paris for the next 3 days?"});
    let call = |args: Json| {
        json!({"role": "assistant", "content": "", "tool_calls": [{"id": "call_1", "type": "function",
            "function": {"name": "get_weather", "arguments": args}}]})
    };
    let result = json!({"role": "tool", "tool_call_id": "call_1", "name": "get_weather",
        "content": "{\"forecast\": [\"sun\", \"sun\", \"rain\"]}"});
    let tools = tools().as_array().cloned();
    let args = json!({"city": "Paris", "days": 3});
    vec![
        (
            "system+user+tools+call+result",
            vec![
                system.clone(),
                user.clone(),
                call(args.clone()),
                result.clone(),
            ],
            tools.clone(),
        ),
        (
            "same, string arguments",
            vec![
                system.clone(),
                user.clone(),
                call(Json::String(args.to_string())),
                result.clone(),
            ],
            tools.clone(),
        ),
        (
            "no system message",
            vec![user.clone(), call(args.clone()), result],
            tools.clone(),
        ),
        ("system+user+tools", vec![system, user.clone()], tools),
        ("user", vec![user], None),
    ]
}

fn input(messages: &[Json], tools: &Option<Vec<Json>>) -> RenderInput {
    let mut input = RenderInput::new(messages.to_vec());
    input.tools = tools.clone();
    input.add_generation_prompt = true;
    input.kwargs.insert("bos_token".into(), json!("<s>"));
    input.kwargs.insert("eos_token".into(), json!("</s>"));
    input.now = Some(retort::chat::CASES_NOW);
    input
}

/// The best single render, running for at least `min` (and 3 runs).
fn time(template: &ChatTemplate, input: &RenderInput, min: Duration) -> (Duration, u32) {
    let (mut best, mut total, mut runs) = (Duration::MAX, Duration::ZERO, 0u32);
    while runs < 3 || (total < min && runs < 100_000) {
        let t = Instant::now();
        let out = template.render(input);
        let dt = t.elapsed();
        std::hint::black_box(out.ok());
        best = best.min(dt);
        total += dt;
        runs += 1;
    }
    (best, runs)
}

fn main() {
    let mut json_out = false;
    let mut min_seconds = 0.3f64;
    let mut profile: Option<(String, u32)> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--json" => json_out = true,
            // `--profile NAME N`: render NAME's conversation N times and
            // nothing else (for a profiler; no reference).
            "--profile" => {
                let name = args.next().unwrap_or_default();
                let n = args.next().and_then(|s| s.parse().ok()).unwrap_or(1000);
                profile = Some((name, n));
            }
            "--min-seconds" => {
                min_seconds = args
                    .next()
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(min_seconds)
            }
            _ => {
                eprintln!("usage: render-compare [--json] [--min-seconds S] [--profile NAME N]");
                std::process::exit(2);
            }
        }
    }
    let min = Duration::from_secs_f64(min_seconds);
    let mut seen: HashMap<String, String> = HashMap::new();
    let mut files: Vec<PathBuf> = Vec::new();
    for dir in ["chat-templates", "llamacpp/templates"] {
        let Ok(entries) = std::fs::read_dir(shared().join(dir)) else {
            continue;
        };
        let mut here: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "jinja"))
            .collect();
        here.sort();
        files.extend(here);
    }
    if files.is_empty() {
        eprintln!(
            "render-compare: no chat templates under {} (set RETORT_SHARED)",
            shared().display()
        );
        std::process::exit(2);
    }
    // Retort's side, and the cases for the reference's.
    let mut rows: Vec<(String, &'static str, Duration)> = Vec::new();
    let mut cases = String::new();
    for path in files {
        let Ok(source) = std::fs::read_to_string(&path) else {
            continue;
        };
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        if seen.insert(source.clone(), name.clone()).is_some() {
            continue;
        }
        let Ok(template) = ChatTemplate::new(&source) else {
            eprintln!("{name}: does not compile; skipped");
            continue;
        };
        let Some((what, messages, tools)) = variants()
            .into_iter()
            .find(|(_, m, t)| template.render(&input(m, t)).is_ok())
        else {
            eprintln!("{name}: renders none of the conversations; skipped");
            continue;
        };
        if let Some((wanted, n)) = &profile {
            if *wanted == name {
                let input = input(&messages, &tools);
                for _ in 0..*n {
                    std::hint::black_box(template.render(&input).ok());
                }
                return;
            }
            continue;
        }
        let (best, _) = time(&template, &input(&messages, &tools), min);
        rows.push((name.clone(), what, best));
        let case = json!({"id": name, "chat_template": source, "messages": messages, "tools": tools,
            "documents": null, "add_generation_prompt": true, "continue_final_message": false,
            "kwargs": {"bos_token": "<s>", "eos_token": "</s>"}});
        cases.push_str(&case.to_string());
        cases.push('\n');
    }
    let dir = repo().join("target/bench-render");
    let _ = std::fs::create_dir_all(&dir);
    let case_file = dir.join("cases.jsonl");
    if let Err(e) = std::fs::write(&case_file, &cases) {
        eprintln!("render-compare: {}: {e}", case_file.display());
        std::process::exit(2);
    }
    let python = Command::new("bash")
        .arg(repo().join("tools/reference/setup.sh"))
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty());
    let Some(python) = python else {
        eprintln!("render-compare: tools/reference/setup.sh gave no python");
        std::process::exit(2);
    };
    let out = Command::new(python)
        .arg(repo().join("tools/reference/bench_render.py"))
        .arg(&case_file)
        .arg("--min-seconds")
        .arg(min_seconds.to_string())
        .output();
    let reference: HashMap<String, Json> = match out {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter_map(|l| serde_json::from_str::<Json>(l).ok())
            .filter_map(|v| Some((v["id"].as_str()?.to_owned(), v)))
            .collect(),
        Ok(o) => {
            eprintln!(
                "render-compare: the reference failed: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            std::process::exit(1);
        }
        Err(e) => {
            eprintln!("render-compare: the reference did not run: {e}");
            std::process::exit(1);
        }
    };
    let mut ratios = Vec::new();
    if !json_out {
        println!(
            "{:<48} {:<30} {:>12} {:>12} {:>8}",
            "chat template", "conversation", "retort", "reference", "ratio"
        );
    }
    for (name, what, best) in &rows {
        let r = reference.get(name);
        let ref_s = r.and_then(|r| r["seconds"].as_f64());
        let ratio = ref_s.map(|s| s / best.as_secs_f64());
        if let Some(x) = ratio {
            ratios.push(x);
        }
        if json_out {
            println!(
                "{}",
                json!({"template": name, "conversation": what, "retort_s": best.as_secs_f64(),
                    "reference_s": ref_s, "ratio": ratio,
                    "reference_error": r.and_then(|r| r.get("error")).cloned()})
            );
        } else {
            let shown = |d: f64| format!("{:.1} µs", d * 1e6);
            println!(
                "{:<48} {:<30} {:>12} {:>12} {:>8}",
                name,
                what,
                shown(best.as_secs_f64()),
                ref_s.map(shown).unwrap_or_else(|| "error".into()),
                ratio.map(|x| format!("{x:.1}x")).unwrap_or_default()
            );
        }
    }
    ratios.sort_by(f64::total_cmp);
    let median = if ratios.is_empty() {
        f64::NAN
    } else if ratios.len() % 2 == 1 {
        ratios[ratios.len() / 2]
    } else {
        (ratios[ratios.len() / 2 - 1] + ratios[ratios.len() / 2]) / 2.0
    };
    let (lo, hi) = (
        ratios.first().copied().unwrap_or(f64::NAN),
        ratios.last().copied().unwrap_or(f64::NAN),
    );
    if json_out {
        println!(
            "{}",
            json!({"templates": ratios.len(), "median_ratio": median, "min_ratio": lo, "max_ratio": hi})
        );
    } else {
        println!(
            "{} templates: median {median:.1}x the reference per render (min {lo:.1}x, max {hi:.1}x)",
            ratios.len()
        );
    }
}
