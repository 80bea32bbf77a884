//! Benchmark support: the workloads, the parsers under test and a timer,
//! shared by the criterion benches (`benches/stream.rs`) and the comparison
//! command (`src/bin/compare.rs`).
//!
//! The workloads follow the recipe of the shared benchmark generator (a
//! short chat, two 120 KB reasoning traces, two tool-call transcripts),
//! plus a tool call that writes a file, but are generated here,
//! deterministically, so that a fresh clone can run its benches without
//! `../shared`. The comparison command writes them to disk
//! and hands that directory to the reference's timing script, so both sides
//! parse the same bytes.

#[path = "src/near_miss.rs"]
pub mod near_miss;
#[path = "src/targets.rs"]
pub mod targets;

use retort::Template;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

retort::response_template!("../templates/smollm3.json");
retort::response_template!("../templates/qwen3.json");
retort::response_template!("../templates/gpt-oss.json");
retort::response_template!("../templates/qwen3-coder.json");

/// One benchmark input: a model's template, the prompt that preceded the
/// generation, and the generation.
#[derive(Clone, Debug)]
pub struct Workload {
    /// Name, e.g. `reasoning-qwen3`.
    pub name: String,
    /// Template name: `templates/<template>.json`.
    pub template: &'static str,
    /// The prompt (the parser's prefix).
    pub prefix: String,
    /// The model output.
    pub text: String,
}

/// A small deterministic generator (SplitMix64), so that workloads are the
/// same on every machine without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

/// Words of the prose: mostly English, some Korean, Japanese and accented
/// text (multi-byte UTF-8), and the characters that make a delimiter scanner
/// stop and look: angle brackets, markup, braces.
const WORDS: &[&str] = &[
    "so",
    "the",
    "user",
    "asks",
    "about",
    "rainfall",
    "in",
    "Lisbon",
    "and",
    "Osaka",
    "then",
    "wants",
    "a",
    "short",
    "table",
    "I",
    "should",
    "check",
    "whether",
    "a",
    "tool",
    "call",
    "helps",
    "since",
    "values",
    "like",
    "17",
    "or",
    "2.5",
    "change",
    "the",
    "answer;",
    "비가",
    "大阪",
    "naïve",
    "résumé",
    "<i>note</i>",
    "keeps",
    "showing",
    "up,",
    "as",
    "do",
    "lone",
    "<",
    "and",
    ">",
    "marks",
    "and",
    "{curly}",
    "bits.",
];

/// About `n` characters of prose, cut at exactly `n` characters.
fn prose(rng: &mut Rng, n: usize) -> String {
    let mut out = String::new();
    let mut chars = 0;
    while chars < n {
        if !out.is_empty() {
            out.push(' ');
            chars += 1;
        }
        let w = WORDS[rng.below(WORDS.len())];
        out.push_str(w);
        chars += w.chars().count();
        if rng.chance(2) {
            out.push_str(" \n\n");
            chars += 3;
        }
    }
    match out.char_indices().nth(n) {
        Some((cut, _)) => out[..cut].to_owned(),
        None => out,
    }
}

/// A tool call: (name, arguments as JSON).
fn call(rng: &mut Rng, i: usize) -> (&'static str, serde_json::Value) {
    let name = ["get_weather", "search_web", "run_sql"][rng.below(3)];
    let args = serde_json::json!({
        "query": prose(rng, 60),
        "limit": i,
        "filters": {"lang": "en", "safe": true},
    });
    (name, args)
}

/// A Qwen3-Coder style XML tool call.
fn xml_call(rng: &mut Rng, i: usize) -> String {
    let (name, args) = call(rng, i);
    let mut params = String::new();
    for (k, v) in args.as_object().into_iter().flatten() {
        let v = match v {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        params.push_str(&format!("<parameter={k}>\n{v}\n</parameter>\n"));
    }
    format!("<tool_call>\n<function={name}>\n{params}</function>\n</tool_call>")
}

const QWEN_PROMPT: &str = "<|im_start|>user\nExplain.<|im_end|>\n<|im_start|>assistant\n<think>\n";

/// A Qwen3 reasoning trace of about `reasoning` characters of thought and
/// `answer` characters of answer (the prompt opens the think block).
pub fn reasoning_qwen3(name: &str, reasoning: usize, answer: usize) -> Workload {
    let mut rng = Rng(0x5EED_0002);
    Workload {
        name: name.to_owned(),
        template: "qwen3",
        prefix: QWEN_PROMPT.to_owned(),
        text: format!(
            "{}\n</think>\n\n{}<|im_end|>",
            prose(&mut rng, reasoning),
            prose(&mut rng, answer)
        ),
    }
}

/// About `n` bytes of source code: lines with quotes, backslashes and
/// indentation, the text a `write_file` tool call carries as a JSON string
/// (where every newline, quote and backslash becomes an escape).
fn code(rng: &mut Rng, n: usize) -> String {
    let mut out = String::new();
    let mut i = 0;
    while out.len() < n {
        let a = WORDS[rng.below(21)];
        let b = WORDS[rng.below(21)];
        out.push_str(&format!(
            "/// Returns the {a} of the {b}.\nfn {a}_{i}(x: &str) -> String {{\n    let s = format!(\"{{}}: {{}}\", x, \"{b}\");\n    s.replace('\\\\', \"/\")\n}}\n\n"
        ));
        i += 1;
    }
    out
}

/// The six workloads, in a fixed order.
pub fn workloads() -> Vec<Workload> {
    let mut rng = Rng(0x5EED_0001);
    let chat = {
        let (name, args) = call(&mut rng, 1);
        let call = serde_json::json!({"name": name, "arguments": args});
        format!(
            "<think>\n{}\n</think>\n\n<tool_call>{call}</tool_call>\n{}<|im_end|>",
            prose(&mut rng, 1200),
            prose(&mut rng, 500)
        )
    };
    let gpt_oss = format!(
        "<|channel|>analysis<|message|>{}<|end|><|start|>assistant<|channel|>final<|message|>{}<|end|>",
        prose(&mut rng, 100_000),
        prose(&mut rng, 20_000)
    );
    let coder = {
        let calls: Vec<String> = (0..20).map(|i| xml_call(&mut rng, i)).collect();
        format!(
            "<think>{}</think>\n{}",
            prose(&mut rng, 800),
            calls.join("\n")
        )
    };
    let oss_tools = {
        let mut s = format!(
            "<|channel|>analysis<|message|>{}<|end|>",
            prose(&mut rng, 800)
        );
        for i in 0..20 {
            let (name, args) = call(&mut rng, i);
            s.push_str(&format!(
                "<|start|>assistant<|channel|>commentary to=functions.{name} <|constrain|>json<|message|>{args}<|call|>"
            ));
        }
        s
    };
    // One call that writes a file: an agent's most common long argument,
    // 16 KB of code as one JSON string.
    let write_file = {
        let call = serde_json::json!({
            "name": "write_file",
            "arguments": {"path": "src/lib.rs", "content": code(&mut rng, 16_000)},
        });
        format!(
            "<think>\n{}\n</think>\n\n<tool_call>\n{call}\n</tool_call><|im_end|>",
            prose(&mut rng, 300)
        )
    };
    let w = |name: &str, template, prefix: &str, text: String| Workload {
        name: name.to_owned(),
        template,
        prefix: prefix.to_owned(),
        text,
    };
    vec![
        w(
            "chat-smollm3",
            "smollm3",
            "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n",
            chat,
        ),
        reasoning_qwen3("reasoning-qwen3", 100_000, 20_000),
        w(
            "reasoning-gpt-oss",
            "gpt-oss",
            "<|start|>user<|message|>Explain.<|end|><|start|>assistant",
            gpt_oss,
        ),
        w(
            "tools-qwen3-coder",
            "qwen3-coder",
            "<|im_start|>assistant\n",
            coder,
        ),
        w("tools-gpt-oss", "gpt-oss", "<|start|>assistant", oss_tools),
        w(
            "tools-qwen3-file",
            "qwen3",
            "<|im_start|>assistant\n",
            write_file,
        ),
    ]
}

/// Writes `workloads` as `DIR/<name>.json` files of the shared format
/// (`{"template", "prefix", "text"}`), which the reference's timing script
/// reads.
pub fn write_workloads(dir: &Path, workloads: &[Workload]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    for w in workloads {
        let json = serde_json::json!({"template": w.template, "prefix": w.prefix, "text": w.text});
        std::fs::write(dir.join(format!("{}.json", w.name)), json.to_string())?;
    }
    Ok(())
}

/// The repository's `templates/` directory.
pub fn templates_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../templates")
}

/// How a generation reaches the parser: all at once, or in pieces of a
/// fixed number of characters (as the reference's timing script slices).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// One `feed` with the whole text.
    Whole,
    /// Pieces of this many characters.
    Stream(usize),
}

impl Mode {
    /// The modes of the comparison, in the reference's names.
    pub const ALL: [Mode; 4] = [
        Mode::Whole,
        Mode::Stream(1),
        Mode::Stream(4),
        Mode::Stream(16),
    ];

    /// `whole`, `stream1`, `stream4`, `stream16`.
    pub fn name(self) -> String {
        match self {
            Mode::Whole => "whole".into(),
            Mode::Stream(n) => format!("stream{n}"),
        }
    }

    /// The text cut into this mode's pieces.
    pub fn pieces(self, text: &str) -> Vec<&str> {
        let Mode::Stream(step) = self else {
            return vec![text];
        };
        let mut out = Vec::with_capacity(text.len() / step + 1);
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
}

/// Which parser of a template runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A module generated by `response_template!`.
    Compiled,
    /// `Template::from_json` of the same file.
    Runtime,
}

impl Kind {
    /// `compiled` or `runtime`.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Compiled => "compiled",
            Kind::Runtime => "runtime",
        }
    }
}

/// Streams `pieces` through a compiled parser, finalizing to the typed
/// message; returns the number of events.
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

macro_rules! construct {
    ($module:ident, $prefix:expr) => {{
        black_box($module::Parser::new($prefix).expect("the prompt parses"));
    }};
}

/// The parsers of one workload's template.
pub struct Parsers {
    template: &'static str,
    runtime: Template,
}

impl Parsers {
    /// Loads the run-time template of `template` from `templates/`.
    pub fn new(template: &'static str) -> Result<Parsers, String> {
        let path = templates_dir().join(format!("{template}.json"));
        let json =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let runtime = Template::from_json(&json).map_err(|e| format!("{template}: {e}"))?;
        if !matches!(template, "smollm3" | "qwen3" | "gpt-oss" | "qwen3-coder") {
            return Err(format!("{template}: no compiled parser in this crate"));
        }
        Ok(Parsers { template, runtime })
    }

    /// Parses `pieces` (after `prefix`) with the chosen parser, from
    /// construction to the finalized message; returns the number of events.
    pub fn run(&self, kind: Kind, prefix: &str, pieces: &[&str]) -> usize {
        match kind {
            Kind::Compiled => match self.template {
                "smollm3" => compiled!(smollm3, prefix, pieces),
                "qwen3" => compiled!(qwen3, prefix, pieces),
                "gpt-oss" => compiled!(gpt_oss, prefix, pieces),
                _ => compiled!(qwen3_coder, prefix, pieces),
            },
            Kind::Runtime => {
                let mut p = self.runtime.parser(prefix).expect("the prompt parses");
                let mut events = 0;
                for piece in pieces {
                    events += p.feed(piece).expect("the workload parses").len();
                }
                let (message, last) = p.finalize().expect("the workload parses");
                black_box(&message);
                events + last.len()
            }
        }
    }

    /// Constructs (and drops) a parser for `prefix`.
    pub fn construct(&self, kind: Kind, prefix: &str) {
        match kind {
            Kind::Compiled => match self.template {
                "smollm3" => construct!(smollm3, prefix),
                "qwen3" => construct!(qwen3, prefix),
                "gpt-oss" => construct!(gpt_oss, prefix),
                _ => construct!(qwen3_coder, prefix),
            },
            Kind::Runtime => {
                black_box(self.runtime.parser(prefix).expect("the prompt parses"));
            }
        }
    }

    /// The run-time template.
    pub fn runtime(&self) -> &Template {
        &self.runtime
    }
}

/// How many calls of `f` fill about `batch` of wall time (one call is
/// timed to find out).
fn batch_len(f: &mut impl FnMut(), batch: Duration) -> usize {
    let t = Instant::now();
    f();
    let once = t.elapsed().max(Duration::from_nanos(20));
    (batch.as_secs_f64() / once.as_secs_f64()).ceil().max(1.0) as usize
}

/// Seconds per call of `f`, as the mean over `n` calls.
fn mean_of(f: &mut impl FnMut(), n: usize) -> f64 {
    let t = Instant::now();
    for _ in 0..n {
        f();
    }
    t.elapsed().as_secs_f64() / n as f64
}

/// Seconds per call of `a` and of `b`, timed in alternating batches: the
/// best mean of each over `batches` batches, each about `batch` of wall
/// time.
///
/// For a ratio of two parsers on a shared, noisy machine: timing all of one
/// and then all of the other lets a slow spell (another process, a clock
/// change) land on one side only, which moved single-run ratios by a third
/// on the 2-core machine this was written on. Alternating makes both sides
/// see the same spells; the best batch of each is then compared.
pub fn time_pair(
    mut a: impl FnMut(),
    mut b: impl FnMut(),
    batches: usize,
    batch: Duration,
) -> (f64, f64) {
    // One untimed call each warms caches and lazily built statics.
    a();
    b();
    let (na, nb) = (batch_len(&mut a, batch), batch_len(&mut b, batch));
    let (mut best_a, mut best_b) = (f64::INFINITY, f64::INFINITY);
    for round in 0..batches.max(1) {
        // Which side goes first alternates too, so that neither always
        // runs on caches the other just left.
        if round % 2 == 0 {
            best_a = best_a.min(mean_of(&mut a, na));
            best_b = best_b.min(mean_of(&mut b, nb));
        } else {
            best_b = best_b.min(mean_of(&mut b, nb));
            best_a = best_a.min(mean_of(&mut a, na));
        }
    }
    (best_a, best_b)
}

/// Seconds per call of `f`: the best mean over `batches` batches, each
/// long enough (about `batch` of wall time) for the clock not to matter.
pub fn time_per_call(mut f: impl FnMut(), batches: usize, batch: Duration) -> f64 {
    // One untimed call warms caches and lazily built statics.
    f();
    let n = batch_len(&mut f, batch);
    (0..batches.max(1))
        .map(|_| mean_of(&mut f, n))
        .fold(f64::INFINITY, f64::min)
}
