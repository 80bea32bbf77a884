//! `compare --openai`: what turning events into OpenAI chunks costs, and how
//! late argument text reaches the client.
//!
//! On the workloads with tool calls, in 4-character pieces, it times the
//! run-time parser streaming plain events against the same parser wrapped
//! in `retort::openai::ChunkStream`: borrowed chunks (`feed_chunks`, what a
//! server uses), the same serialised to JSON, and owned chunk structs
//! (`feed`); and counts allocations per feed of each. Then it feeds each workload
//! one character at a time and measures, for every character of the
//! arguments the client receives, how many bytes of model output arrived
//! between the model writing that character and retort sending it.

use retort::Template;
use retort::openai::{ChunkStream, Delta, Options};
use retort_benches::{Mode, Workload};
use std::time::Duration;

/// Plain event streaming: what a consumer of the parser's events does,
/// reading each event (`iter` makes each `Event` from the parser's
/// buffer, which `len` alone would skip).
fn events(t: &Template, w: &Workload, pieces: &[&str]) -> usize {
    let mut p = t.parser(&w.prefix).expect("the prompt parses");
    let mut n = 0;
    for piece in pieces {
        for ev in p.feed(piece).expect("the workload parses").iter() {
            std::hint::black_box(&ev);
            n += 1;
        }
    }
    let (message, last) = p.finalize().expect("the workload parses");
    std::hint::black_box(&message);
    for ev in last.iter() {
        std::hint::black_box(&ev);
        n += 1;
    }
    n
}

fn chunks(t: &Template, w: &Workload, pieces: &[&str], json: bool) -> usize {
    let mut s =
        ChunkStream::new(t, &w.prefix, Options::deterministic()).expect("the prompt parses");
    let mut n = 0;
    let mut out = Vec::new();
    for piece in pieces {
        for c in s.feed(piece).expect("the workload streams") {
            if json {
                out.clear();
                serde_json::to_writer(&mut out, &c).expect("a chunk serialises");
            }
            n += 1;
        }
    }
    n + s.finalize(false).expect("the workload streams").0.len()
}

/// The same chunks borrowed (`feed_chunks`): what a server writing SSE lines
/// uses.
fn chunks_ref(t: &Template, w: &Workload, pieces: &[&str], json: bool) -> usize {
    let mut s =
        ChunkStream::new(t, &w.prefix, Options::deterministic()).expect("the prompt parses");
    let mut n = 0;
    let mut out = Vec::new();
    for piece in pieces {
        for c in s.feed_chunks(piece).expect("the workload streams").iter() {
            if json {
                out.clear();
                serde_json::to_writer(&mut out, &c).expect("a chunk serialises");
            }
            n += 1;
        }
    }
    n + s
        .finalize_chunks(false)
        .expect("the workload streams")
        .0
        .len()
}

/// Where each argument byte was sent: (call, byte offset of model output
/// fed when it was sent), in the order of the arguments text.
fn sent_at(t: &Template, w: &Workload) -> (Vec<(String, Vec<usize>)>, Vec<usize>) {
    let mut s =
        ChunkStream::new(t, &w.prefix, Options::deterministic()).expect("the prompt parses");
    let mut calls: Vec<(String, Vec<usize>)> = Vec::new();
    let mut opened_at = Vec::new();
    let mut fed = 0;
    let take = |deltas: Vec<Delta>,
                fed: usize,
                calls: &mut Vec<(String, Vec<usize>)>,
                opened_at: &mut Vec<usize>| {
        for d in deltas {
            match d {
                Delta::CallOpen { .. } => {
                    calls.push((String::new(), Vec::new()));
                    opened_at.push(fed);
                }
                Delta::CallArgs { index, text } => {
                    let (a, at) = &mut calls[index as usize];
                    a.push_str(&text);
                    at.extend(std::iter::repeat_n(fed, text.len()));
                }
                _ => {}
            }
        }
    };
    for piece in Mode::Stream(1).pieces(&w.text) {
        fed += piece.len();
        let d = s.feed_deltas(piece).expect("the workload streams");
        take(d, fed, &mut calls, &mut opened_at);
    }
    let (d, _, _) = s.finalize_deltas(false).expect("the workload streams");
    take(d, fed, &mut calls, &mut opened_at);
    (calls, opened_at)
}

/// Byte delays of the argument characters that appear in the model's own
/// text (JSON spelled the same way, spaces between tokens aside), and the
/// number of calls that could not be aligned.
fn delays(
    w: &Workload,
    calls: &[(String, Vec<usize>)],
    opened_at: &[usize],
) -> (Vec<usize>, usize) {
    let raw = w.text.as_bytes();
    let mut out = Vec::new();
    let mut unaligned = 0;
    for ((args, at), &open) in calls.iter().zip(opened_at) {
        let a = args.as_bytes();
        let Some(start) = raw[open.min(raw.len())..]
            .iter()
            .position(|&b| Some(&b) == a.first())
        else {
            unaligned += 1;
            continue;
        };
        let (mut r, mut in_str_a, mut in_str_r) = (open + start, false, false);
        let mut mine = Vec::new();
        let mut ok = true;
        let mut i = 0;
        while i < a.len() {
            let c = a[i];
            if !in_str_a && c == b' ' {
                i += 1;
                continue;
            }
            while r < raw.len() && !in_str_r && matches!(raw[r], b' ' | b'\n' | b'\t' | b'\r') {
                r += 1;
            }
            if r >= raw.len() || raw[r] != c {
                ok = false;
                break;
            }
            if c == b'"' && (i == 0 || a[i - 1] != b'\\') {
                in_str_a = !in_str_a;
                in_str_r = !in_str_r;
            }
            mine.push(at[i].saturating_sub(r + 1));
            i += 1;
            r += 1;
        }
        if ok {
            out.extend(mine);
        } else {
            unaligned += 1;
        }
    }
    (out, unaligned)
}

pub fn run(batches: usize, batch: Duration) {
    let all = retort_benches::workloads();
    println!(
        "{:<18} {:>8} {:>10} {:>10} {:>7} {:>10} {:>7} {:>10} {:>7} {:>8} {:>8} {:>14}",
        "workload",
        "bytes",
        "events s",
        "chunks s",
        "ratio",
        "+json s",
        "ratio",
        "owned s",
        "ratio",
        "allocs",
        "owned",
        "arg delay p50"
    );
    for w in all
        .iter()
        .filter(|w| w.text.contains("tool_call") || w.name.starts_with("tools-"))
    {
        let text = std::fs::read_to_string(
            retort_benches::templates_dir().join(format!("{}.json", w.template)),
        )
        .expect("the template file");
        let t = Template::from_json(&text).expect("the template loads");
        let pieces = Mode::Stream(4).pieces(&w.text);
        let ev = retort_benches::time_per_call(
            || {
                events(&t, w, &pieces);
            },
            batches,
            batch,
        );
        let ch = retort_benches::time_per_call(
            || {
                chunks_ref(&t, w, &pieces, false);
            },
            batches,
            batch,
        );
        let js = retort_benches::time_per_call(
            || {
                chunks_ref(&t, w, &pieces, true);
            },
            batches,
            batch,
        );
        let owned = retort_benches::time_per_call(
            || {
                chunks(&t, w, &pieces, false);
            },
            batches,
            batch,
        );
        let count = |f: &dyn Fn()| {
            let before = super::ALLOCATIONS.load(std::sync::atomic::Ordering::Relaxed);
            f();
            (super::ALLOCATIONS.load(std::sync::atomic::Ordering::Relaxed) - before) as f64
                / pieces.len() as f64
        };
        let events_allocs = count(&|| {
            events(&t, w, &pieces);
        });
        let allocs = count(&|| {
            chunks_ref(&t, w, &pieces, false);
        }) - events_allocs;
        let owned_allocs = count(&|| {
            chunks(&t, w, &pieces, false);
        }) - events_allocs;
        let (calls, opened_at) = sent_at(&t, w);
        let (mut d, unaligned) = delays(w, &calls, &opened_at);
        d.sort_unstable();
        let median = d
            .get(d.len() / 2)
            .map_or("-".to_owned(), |m| format!("{m} B"));
        println!(
            "{:<18} {:>8} {:>10.6} {:>10.6} {:>6.2}x {:>10.6} {:>6.2}x {:>10.6} {:>6.2}x {:>8.2} {:>8.2} {:>14}",
            w.name,
            w.text.len(),
            ev,
            ch,
            ch / ev,
            js,
            js / ev,
            owned,
            owned / ev,
            allocs,
            owned_allocs,
            median,
        );
        let calls_n = calls.len();
        let max = d.last().copied().unwrap_or(0);
        // Calls whose arguments the model did not write as JSON (e.g.
        // `xml-inline` parameters) cannot be aligned byte by byte: count the
        // pieces of argument text sent before the call's last piece (each
        // `xml-inline` parameter is one, sent when its closing tag arrives).
        let (mut early, mut at_close) = (0usize, 0usize);
        for (_, at) in &calls {
            let Some(&last) = at.last() else { continue };
            let mut offsets: Vec<usize> = at.clone();
            offsets.dedup();
            early += offsets.iter().filter(|&&a| a < last).count();
            at_close += 1;
        }
        println!(
            "  {calls_n} calls; {} argument bytes aligned with the model's text (max delay {max} B); \
             {unaligned} calls not written as JSON; {early} argument pieces sent before their call's close, \
             {at_close} at it",
            d.len(),
        );
    }
}
