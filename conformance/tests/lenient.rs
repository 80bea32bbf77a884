//! Lenient mode against strict mode: identical where the output is valid,
//! and nothing lost where it is not.

mod common;

use common::{read_cases, root, template_of};
use std::path::PathBuf;

use proptest::prelude::*;
use retort_conformance::{Runner, field, run_case_with, run_session, strict_equal};
use retort_engine::{OwnedEvent, ParserOptions, Template, Value};

/// The case files, each with the directory its named templates are in.
fn case_files() -> Vec<(PathBuf, PathBuf)> {
    let mut files = Vec::new();
    // The shared vectors (RETORT_SHARED, default ../shared) are many
    // thousands of cases: set RETORT_LENIENT_SHARED=1 to include them.
    let mut dirs = vec![(
        root().join("tests/conformance/cases"),
        root().join("templates"),
    )];
    if std::env::var_os("RETORT_LENIENT_SHARED").is_some() {
        // A relative RETORT_SHARED is relative to the workspace root, as
        // .ci/run gives it (tests run in the crate's directory).
        let shared = std::env::var_os("RETORT_SHARED")
            .map_or_else(|| root().join("../shared"), |s| root().join(s));
        let cases = shared.join("conformance/cases");
        assert!(cases.is_dir(), "no shared vectors at {}", cases.display());
        dirs.push((cases, shared.join("conformance/templates")));
    }
    for (dir, templates) in dirs {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut here: Vec<_> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
            .collect();
        here.sort();
        files.extend(here.into_iter().map(|f| (f, templates.clone())));
    }
    files
}

/// Runs cases through lenient parsers.
struct Lenient<'t>(&'t Template);

impl Runner for Lenient<'_> {
    fn run(&self, prefix: &str, tools: Option<&Value>, chunks: &[&str]) -> Value {
        let options = ParserOptions::new().lenient(true);
        run_session(self.0.parser_with(prefix, options, tools), chunks)
    }
}

/// Whether any run of a result is an error.
fn has_error(result: &Value) -> bool {
    let runs = std::iter::once(field(result, "whole")).chain(
        field(result, "streams")
            .and_then(Value::as_list)
            .unwrap_or(&[])
            .iter()
            .map(Some),
    );
    runs.flatten().any(|r| field(r, "error").is_some())
}

#[test]
fn valid_output_gives_identical_results_strict_and_lenient() {
    let mut compared = 0;
    let mut failures = Vec::new();
    for (file, templates) in case_files() {
        for case in read_cases(&file) {
            let Some(t) = template_of(&case, &templates) else {
                continue;
            };
            let strict = run_case_with(&case, &t);
            if has_error(&strict) {
                continue;
            }
            let lenient = run_case_with(&case, &Lenient(&t));
            compared += 1;
            if !strict_equal(&strict, &lenient) {
                failures.push(format!("{}: {:?}", file.display(), field(&case, "id")));
            }
        }
    }
    assert!(compared > 100, "only {compared} cases compared");
    assert!(failures.is_empty(), "{failures:#?}");
    eprintln!("{compared} valid cases identical strict and lenient");
}

/// The model samples (one template each), to corrupt; loaded once.
fn samples() -> &'static [(Template, String, String)] {
    static SAMPLES: std::sync::OnceLock<Vec<(Template, String, String)>> =
        std::sync::OnceLock::new();
    SAMPLES.get_or_init(load_samples)
}

fn load_samples() -> Vec<(Template, String, String)> {
    read_cases(&root().join("tests/conformance/cases/models.jsonl"))
        .iter()
        .filter_map(|case| {
            let t = template_of(case, &root().join("templates"))?;
            let text = field(case, "text")?.as_str()?.to_owned();
            let prefix = field(case, "prefix")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            Some((t, prefix, text))
        })
        .collect()
}

/// Feeds `text` cut at `cuts` to a lenient parser; returns the events.
fn lenient_events(t: &Template, prefix: &str, text: &str, cuts: &[usize]) -> Vec<OwnedEvent> {
    let options = ParserOptions::new().lenient(true);
    let mut p = t.parser_with(prefix, options, None).expect("parser");
    let mut events = Vec::new();
    let mut at = 0;
    let mut bounds: Vec<usize> = cuts
        .iter()
        .map(|c| c % (text.len() + 1))
        .filter(|&c| text.is_char_boundary(c))
        .collect();
    bounds.sort();
    bounds.push(text.len());
    for b in bounds {
        if b < at {
            continue;
        }
        events.extend(p.feed(&text[at..b]).expect("lenient feed").to_vec());
        at = b;
    }
    let (_, last) = p.finalize().expect("lenient finalize never fails");
    events.extend(last.to_vec());
    events
}

/// Each malformed region's raw text is exactly the text its chunks carried.
fn check_accounting(events: &[OwnedEvent]) -> Result<(), String> {
    let mut region = String::new();
    for e in events {
        match e {
            OwnedEvent::RegionOpen { .. } => region.clear(),
            OwnedEvent::RegionChunk { text, .. } => region.push_str(text),
            OwnedEvent::RegionClose { .. } => region.clear(),
            OwnedEvent::RegionMalformed { raw, .. } => {
                if !raw.is_empty() && *raw != region {
                    return Err(format!("raw {raw:?} but the chunks carried {region:?}"));
                }
                region.clear();
            }
            _ => {}
        }
    }
    Ok(())
}

fn chunk_text(events: &[OwnedEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            OwnedEvent::RegionChunk { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Corrupted model samples (bytes cut out, braces and quotes put in)
    /// never end a lenient stream, every chunking gives the same events'
    /// text, and malformed regions keep their text.
    #[test]
    fn corrupted_samples_lose_nothing(
        which in any::<prop::sample::Index>(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), 0u8..4), 1..4),
        cuts in prop::collection::vec(any::<usize>(), 0..12),
    ) {
        let all = samples();
        prop_assume!(!all.is_empty());
        let (t, prefix, text) = &all[which.index(all.len())];
        let mut bad = text.clone();
        for (at, op) in edits {
            let mut i = at.index(bad.len() + 1);
            while !bad.is_char_boundary(i) { i -= 1; }
            match op {
                0 if i < bad.len() => {
                    let n = bad[i..].chars().next().map_or(0, char::len_utf8);
                    bad.replace_range(i..i + n, "");
                }
                1 => bad.insert(i, '{'),
                2 => bad.insert(i, '"'),
                _ => bad.insert_str(i, "}]"),
            }
        }
        let whole = lenient_events(t, prefix, &bad, &[]);
        check_accounting(&whole).map_err(TestCaseError::fail)?;
        let streamed = lenient_events(t, prefix, &bad, &cuts);
        check_accounting(&streamed).map_err(TestCaseError::fail)?;
        prop_assert_eq!(chunk_text(&whole), chunk_text(&streamed));
    }
}
