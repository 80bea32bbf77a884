//! Properties of the chunks, for every chunking of the recorded samples of
//! every bundled template (`tests/conformance/cases/models.jsonl`): the
//! shape clients depend on, append-only fragments, and that what the
//! fragments add up to is the message — with the reasoning split out and
//! with it inline in the content (`ReasoningFormat::Inline`).

use proptest::prelude::*;
use retort_engine::py::json_loads;
use retort_engine::typed::AssistantMessage;
use retort_engine::{Map, ReasoningFormat, Template, Value};
use retort_openai::{
    ChatCompletionChunk, ChatCompletionMessage, ChunkStream, Error, FinishReason, Options,
    TextMode, arguments_text,
};
use std::path::Path;
use std::sync::OnceLock;

struct Sample {
    id: String,
    template: usize,
    prefix: String,
    text: String,
}

struct Fixtures {
    templates: Vec<(String, Template)>,
    samples: Vec<Sample>,
}

fn fixtures() -> &'static Fixtures {
    static F: OnceLock<Fixtures> = OnceLock::new();
    F.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let cases = std::fs::read_to_string(root.join("tests/conformance/cases/models.jsonl"))
            .expect("the model samples");
        let mut templates: Vec<(String, Template)> = Vec::new();
        let mut samples = Vec::new();
        for line in cases.lines().filter(|l| !l.trim().is_empty()) {
            let case: serde_json::Value = serde_json::from_str(line).expect("a JSON case");
            let name = case["template"]
                .as_str()
                .expect("a bundled name")
                .to_owned();
            let t = match templates.iter().position(|(n, _)| *n == name) {
                Some(i) => i,
                None => {
                    let text = std::fs::read_to_string(root.join(format!("templates/{name}.json")))
                        .expect("a bundled template");
                    templates.push((name, Template::from_json(&text).expect("a valid template")));
                    templates.len() - 1
                }
            };
            samples.push(Sample {
                id: case["id"].as_str().unwrap_or_default().to_owned(),
                template: t,
                prefix: case["prefix"].as_str().unwrap_or_default().to_owned(),
                text: case["text"].as_str().unwrap_or_default().to_owned(),
            });
        }
        Fixtures { templates, samples }
    })
}

/// The text cut after every `cuts[i]`-th character (cycled).
fn cut<'a>(text: &'a str, sizes: &[usize]) -> Vec<&'a str> {
    let bounds: Vec<usize> = text
        .char_indices()
        .map(|(i, _)| i)
        .chain([text.len()])
        .collect();
    let mut out = Vec::new();
    let (mut at, mut k) = (0, 0);
    while at + 1 < bounds.len() {
        let next = (at + sizes[k % sizes.len()]).min(bounds.len() - 1);
        out.push(&text[bounds[at]..bounds[next]]);
        at = next;
        k += 1;
    }
    out
}

fn run(
    s: &Sample,
    t: &Template,
    pieces: &[&str],
    mode: TextMode,
    format: ReasoningFormat,
) -> Result<(Vec<ChatCompletionChunk>, Map, ChatCompletionMessage, bool), Error> {
    let options = Options {
        text: mode,
        reasoning_format: format,
        ..Options::deterministic()
    };
    let mut stream = ChunkStream::new(t, &s.prefix, options)?;
    let mut chunks = Vec::new();
    for p in pieces {
        chunks.extend(stream.feed(p)?);
    }
    let (last, message) = stream.finalize(false)?;
    chunks.extend(last);
    let replaced = !stream.replaced().is_empty();
    Ok((chunks, message, stream.message(), replaced))
}

/// What a client accumulates, checking the shape on the way.
#[derive(Debug, Default, PartialEq)]
struct Accumulated {
    content: String,
    reasoning: String,
    calls: Vec<(String, String, String)>,
    finish: Option<FinishReason>,
}

fn accumulate(chunks: &[ChatCompletionChunk]) -> Result<Accumulated, String> {
    let mut acc = Accumulated::default();
    for (n, c) in chunks.iter().enumerate() {
        let [choice] = c.choices.as_slice() else {
            return Err(format!("chunk {n}: not one choice"));
        };
        if (n == 0) != (choice.delta.role.as_deref() == Some("assistant")) {
            return Err(format!(
                "chunk {n}: the role belongs to the first chunk only"
            ));
        }
        if acc.finish.is_some() {
            return Err(format!("chunk {n} after the finish"));
        }
        acc.finish = choice.finish_reason;
        acc.content += choice.delta.content.as_deref().unwrap_or("");
        acc.reasoning += choice.delta.reasoning_content.as_deref().unwrap_or("");
        let calls = choice.delta.tool_calls.as_deref().unwrap_or(&[]);
        if calls.len() > 1 {
            return Err(format!("chunk {n}: more than one call entry"));
        }
        for d in calls {
            let i = d.index as usize;
            let f = d
                .function
                .as_ref()
                .ok_or(format!("chunk {n}: no function"))?;
            if i == acc.calls.len() {
                let (Some(id), Some("function"), Some(name), Some("")) =
                    (&d.id, d.kind.as_deref(), &f.name, f.arguments.as_deref())
                else {
                    return Err(format!(
                        "chunk {n}: call {i} does not open with id, type, name, ''"
                    ));
                };
                acc.calls.push((id.clone(), name.clone(), String::new()));
            } else if i < acc.calls.len() {
                if d.id.is_some() || d.kind.is_some() || f.name.is_some() {
                    return Err(format!("chunk {n}: call {i} repeats its id, type or name"));
                }
                let a = f
                    .arguments
                    .as_deref()
                    .ok_or(format!("chunk {n}: no arguments"))?;
                if a.is_empty() {
                    return Err(format!("chunk {n}: an empty fragment"));
                }
                acc.calls[i].2 += a;
            } else {
                return Err(format!("chunk {n}: index {i} skips ahead"));
            }
        }
    }
    if acc.finish.is_none() {
        return Err("no finish_reason".into());
    }
    Ok(acc)
}

fn check(s: &Sample, sizes: &[usize]) -> Result<(), TestCaseError> {
    let (name, t) = &fixtures().templates[s.template];
    let pieces = cut(&s.text, sizes);
    let runs = [TextMode::Stream, TextMode::Exact]
        .into_iter()
        .flat_map(|m| [(m, ReasoningFormat::Split), (m, ReasoningFormat::Inline)]);
    for (mode, format) in runs {
        let whole = run(s, t, &[&s.text], mode, format);
        let parts = run(s, t, &pieces, mode, format);
        let ((wc, message, layer, replaced), (pc, ..)) = match (whole, parts) {
            (Ok(w), Ok(p)) => (w, p),
            (Err(Error::Parse(_)), Err(Error::Parse(_))) => return Ok(()),
            (w, p) => {
                return Err(TestCaseError::fail(format!(
                    "{} ({name}, {mode:?}): one piece {:?}, {} pieces {:?}",
                    s.id,
                    w.err(),
                    pieces.len(),
                    p.err()
                )));
            }
        };
        let w = accumulate(&wc).map_err(TestCaseError::fail)?;
        let p = accumulate(&pc).map_err(|e| TestCaseError::fail(format!("{}: {e}", s.id)))?;
        prop_assert_eq!(
            &p,
            &w,
            "{} ({}, {:?}, {:?}): chunkings differ",
            s.id,
            name,
            mode,
            format
        );
        if format == ReasoningFormat::Inline {
            // Inline reasoning goes out as content, never as reasoning.
            prop_assert_eq!(p.reasoning.as_str(), "", "{}: inline reasoning", s.id);
        }
        // The stream accumulates to the layer's own message, always.
        prop_assert_eq!(p.content.as_str(), layer.content.as_deref().unwrap_or(""));
        prop_assert_eq!(
            p.reasoning.as_str(),
            layer.reasoning_content.as_deref().unwrap_or("")
        );
        let layer_calls: Vec<(String, String, String)> = layer
            .tool_calls
            .iter()
            .flatten()
            .map(|c| {
                (
                    c.id.clone(),
                    c.function.name.clone(),
                    c.function.arguments.clone(),
                )
            })
            .collect();
        prop_assert_eq!(&p.calls, &layer_calls, "{}: the layer's calls", s.id);
        if replaced {
            // The reference kept the last region of a field written twice;
            // the layer has every region (`TextMode::Stream`).
            continue;
        }
        prop_assert_eq!(p.content.as_str(), message.content().unwrap_or(""));
        prop_assert_eq!(p.reasoning.as_str(), message.reasoning().unwrap_or(""));
        let finals = message.tool_calls();
        prop_assert_eq!(p.calls.len(), finals.len());
        for ((_, name, args), fin) in p.calls.iter().zip(&finals) {
            prop_assert_eq!(name, &fin.name);
            let want = arguments_text(&fin.arguments);
            let meant = match &fin.arguments {
                Value::Str(_) => args.clone(),
                _ => arguments_text(
                    &json_loads(args).map_err(|e| TestCaseError::fail(format!("{}: {e}", s.id)))?,
                ),
            };
            prop_assert_eq!(meant, want, "{}: arguments", s.id);
        }
        // Append-only: every fragment extends the text so far, so what a
        // client holds after any chunk is a prefix of the final text.
        let mut partial = Accumulated::default();
        for c in &pc {
            if let Some(t) = &c.choices[0].delta.content {
                partial.content += t;
                prop_assert!(w.content.starts_with(&partial.content));
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn every_chunking_of_every_sample(
        pick in any::<prop::sample::Index>(),
        sizes in prop::collection::vec(1usize..13, 1..8),
    ) {
        let f = fixtures();
        let s = &f.samples[pick.index(f.samples.len())];
        check(s, &sizes)?;
    }
}

/// Every sample of every bundled template, in pieces of 1 to 4 characters.
#[test]
fn every_sample_in_small_pieces() {
    let f = fixtures();
    assert_eq!(
        f.templates.len(),
        std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../templates"))
            .unwrap()
            .filter(|e| e
                .as_ref()
                .is_ok_and(|e| e.path().extension().is_some_and(|x| x == "json")))
            .count(),
        "every bundled template has samples"
    );
    for s in &f.samples {
        for n in 1..=4 {
            check(s, &[n]).unwrap_or_else(|e| panic!("{}: {e}", s.id));
        }
    }
}
