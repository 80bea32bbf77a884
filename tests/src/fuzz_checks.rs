//! The checks behind the cargo-fuzz targets in `fuzz/`, shared with the
//! stable replay test (`tests/fuzz_corpus.rs`) so that every committed
//! corpus file is checked on the stable toolchain exactly as the fuzzer
//! checked it.
//!
//! Each check takes the fuzzer's raw bytes and panics when an invariant
//! breaks (that is how libFuzzer learns of a failure); errors the parser
//! reports as values are fine.
//!
//! # Input layout of the parser targets
//!
//! The layout is plain bytes rather than `arbitrary`'s encoding so that
//! `fuzz/seed.py` can write conformance vectors as corpus files directly,
//! and so that committed files keep their meaning whatever version of
//! `arbitrary` is in use:
//!
//! | bytes | meaning |
//! |---|---|
//! | 0 | template: index into [`templates`] (modulo its length) |
//! | 1 | longest piece in bytes (0: the whole text in one piece) |
//! | 2 | seed of the piece lengths |
//! | 3.. | `prefix 0xFF text`, or just `text` when no `0xFF` occurs |
//!
//! `0xFF` never occurs in UTF-8, so it cannot clash with a real prompt.

use retort::{OwnedEvent, ParseError, ParserOptions, Template, Value};
use retort_conformance::{Runner, normalise, run_error, run_ok, strict_equal, to_line};
use std::sync::OnceLock;

/// Inputs longer than this are skipped: the parser is linear, so long
/// inputs find nothing short ones do not, and they slow the fuzzer down.
pub const MAX_INPUT: usize = 64 * 1024;

/// Templates of the parser targets that lean on the regex paths (patterns
/// with lookarounds, alternations, lazy and greedy quantifiers, anchors,
/// captures used by transforms) more than the bundled ones do.
pub const REGEX_TEMPLATES: &[(&str, &str)] = &[
    (
        "regex-lookahead",
        r#"{
  "defaults": {"role": "assistant"},
  "start_anchor": "<|im_start|>assistant\n",
  "fields": {
    "reasoning_content": {"open_pattern": "\\s*<think(?:ing)?>\\s*", "close_pattern": "\\s*</think(?:ing)?>\\s*"},
    "tool_calls": {
      "open_pattern": "\\s*(?:<tool_call>|\\[TOOL_CALLS\\])\\s*(?=\\{)",
      "close_pattern": "\\s*(?:</tool_call>|(?=\\[TOOL_CALLS\\])|\\Z)",
      "repeats": true,
      "content": "json",
      "transform": {"type": "function", "function": "{content}"}
    },
    "content": {"close_pattern": "\\s*(?:<\\|im_end\\|>|</s>)"}
  }
}"#,
    ),
    (
        "regex-named-captures",
        r#"{
  "defaults": {"role": "assistant"},
  "start_anchor_pattern": "<\\|(?:assistant|start)\\|>\\n?",
  "fields": {
    "tool_calls": {
      "open_pattern": "<call name=\"(?P<name>[\\w.-]+)\"(?: id=\"(?P<id>[^\"]*)\")?>\\n?",
      "close_pattern": "\\n?</call>",
      "repeats": true,
      "content": "kv-lines",
      "transform": {"type": "function", "id": "{id}", "function": {"name": "{name}", "arguments": "{content}"}}
    },
    "content": {"close_pattern": "(?:<\\|end\\|>|<\\|eot\\|>)\\s*$"}
  }
}"#,
    ),
    (
        "regex-lazy-xml",
        r#"{
  "defaults": {"role": "assistant"},
  "start_anchor": "<|im_start|>assistant\n",
  "fields": {
    "reasoning_content": {"open": "<think>", "close": "</think>", "repeats": true, "join": "\n"},
    "tool_calls": {
      "open_pattern": "\\s*<function=(?P<name>[^>\\n]+)>",
      "close_pattern": "</function>(?:\\s*</tool_call>)?",
      "repeats": true,
      "content": "xml-inline",
      "content_args": {"tag_pattern": "<parameter=(?P<key>[^>\\n]+)>\\n?(?P<value>.*?)\\n?</parameter>"},
      "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}
    },
    "content": {"close_pattern": "\\s*<\\|im_end\\|>"}
  }
}"#,
    ),
];

/// A template of the parser targets.
pub struct Entry {
    /// The bundled family's name, or the regex template's.
    pub name: &'static str,
    /// Whether `retort::registry` bundles it (so a compiled parser exists).
    pub bundled: bool,
    json: &'static str,
    loaded: OnceLock<Template>,
}

impl Entry {
    /// The template, loaded on first use: a fuzzing process that runs one
    /// input (libFuzzer's fork mode starts many) loads only the template
    /// that input picks.
    pub fn template(&self) -> &Template {
        self.loaded.get_or_init(|| {
            Template::from_json(self.json)
                .unwrap_or_else(|e| panic!("fuzz template {}: {e}", self.name))
        })
    }
}

/// The parser targets' templates: every bundled family, sorted by name (as
/// `fuzz/seed.py` numbers them: the byte order of the file stems), then
/// [`REGEX_TEMPLATES`].
pub fn templates() -> &'static [Entry] {
    static ALL: OnceLock<Vec<Entry>> = OnceLock::new();
    ALL.get_or_init(|| {
        let mut families: Vec<_> = retort::registry::families().iter().collect();
        families.sort_by_key(|f| f.name());
        let bundled = families.into_iter().map(|f| Entry {
            name: f.name(),
            bundled: true,
            json: f.json(),
            loaded: OnceLock::new(),
        });
        let regex = REGEX_TEMPLATES.iter().map(|&(name, json)| Entry {
            name,
            bundled: false,
            json,
            loaded: OnceLock::new(),
        });
        bundled.chain(regex).collect()
    })
}

/// One decoded input of the parser targets.
#[derive(Clone, Debug)]
pub struct StreamInput<'a> {
    /// Index into [`templates`].
    pub template: usize,
    /// The prompt (lossily decoded: a prompt is always a string).
    pub prefix: String,
    /// The generation's bytes (not necessarily UTF-8).
    pub text: &'a [u8],
    /// Byte lengths of the pieces (summing to `text.len()`).
    pub pieces: Vec<usize>,
}

/// Decodes the layout described in the module documentation; `None` for
/// inputs too short or too long to use. `count` is the number of templates
/// to choose from.
pub fn decode(data: &[u8], count: usize) -> Option<StreamInput<'_>> {
    if data.len() < 3 || data.len() > MAX_INPUT || count == 0 {
        return None;
    }
    let template = usize::from(data[0]) % count;
    let longest = usize::from(data[1]);
    let mut seed = u32::from(data[2]) | 0x100;
    let rest = &data[3..];
    let (prefix, text) = match memchr_ff(rest) {
        Some(at) => (
            String::from_utf8_lossy(&rest[..at]).into_owned(),
            &rest[at + 1..],
        ),
        None => (String::new(), rest),
    };
    let mut pieces = Vec::new();
    let mut left = text.len();
    while left > 0 {
        let len = if longest == 0 {
            left
        } else {
            // xorshift32: cheap, deterministic piece lengths in 1..=longest.
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            1 + (seed as usize) % longest
        };
        let len = len.min(left);
        pieces.push(len);
        left -= len;
    }
    Some(StreamInput {
        template,
        prefix,
        text,
        pieces,
    })
}

fn memchr_ff(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == 0xFF)
}

/// Encodes an input in the layout [`decode`] reads (the seed script writes
/// the same bytes).
pub fn encode(template: u8, longest: u8, seed: u8, prefix: &str, text: &[u8]) -> Vec<u8> {
    let mut out = vec![template, longest, seed];
    if !prefix.is_empty() {
        out.extend_from_slice(prefix.as_bytes());
        out.push(0xFF);
    }
    out.extend_from_slice(text);
    out
}

/// Splits `text` where `pieces` says, moving each cut down to a character
/// boundary (pieces may come out empty, which `feed` must accept too).
pub fn str_pieces<'a>(text: &'a str, pieces: &[usize]) -> Vec<&'a str> {
    let mut out = Vec::with_capacity(pieces.len());
    let (mut start, mut end) = (0, 0);
    for len in pieces {
        end += len;
        let mut cut = end.min(text.len());
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        let cut = cut.max(start);
        out.push(&text[start..cut]);
        start = cut;
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

/// Splits `bytes` exactly where `pieces` says (UTF-8 sequences may be cut).
pub fn byte_pieces<'a>(bytes: &'a [u8], pieces: &[usize]) -> Vec<&'a [u8]> {
    let mut out = Vec::with_capacity(pieces.len());
    let mut start = 0;
    for len in pieces {
        out.push(&bytes[start..start + len]);
        start += len;
    }
    out
}

/// Runs a generation through `feed_bytes` in the conformance result format
/// (merged events, the message or the error).
pub fn run_bytes(template: &Template, prefix: &str, pieces: &[&[u8]]) -> Value {
    let mut p = match template.parser(prefix) {
        Ok(p) => p,
        Err(e) => return run_error(&e, "init", None),
    };
    let initial = p.initial_events().to_vec();
    let mut events: Vec<OwnedEvent> = Vec::new();
    for piece in pieces {
        match p.feed_bytes(piece) {
            Ok(evs) => events.extend(evs.iter().map(|e| e.to_owned_event())),
            Err(e) => return refuse_after_error(&mut p, &e, "feed", &initial),
        }
    }
    match p.finalize() {
        Ok((message, evs)) => {
            events.extend(evs.iter().map(|e| e.to_owned_event()));
            run_ok(&initial, &events, message)
        }
        Err(e) => refuse_after_error(&mut p, &e, "finalize", &initial),
    }
}

/// After an error the parser must refuse further input with an error (not
/// panic, not accept it).
fn refuse_after_error(
    p: &mut retort::Parser<'_>,
    e: &ParseError,
    at: &str,
    initial: &[OwnedEvent],
) -> Value {
    assert!(p.feed("x").is_err(), "a failed parser accepted more text");
    assert!(
        p.feed_bytes(b"x").is_err(),
        "a failed parser accepted more bytes"
    );
    assert!(p.finalize().is_err(), "a failed parser finalized");
    run_error(e, at, Some(initial))
}

fn same(a: &Value, b: &Value) -> bool {
    strict_equal(&normalise(a), &normalise(b))
}

/// Whether a run ended in an error.
pub fn is_error(result: &Value) -> bool {
    retort_conformance::field(result, "error").is_some()
}

/// The `parse_stream` target: for a template of [`templates`], a prompt, a
/// generation and a chunking, feeding the generation in pieces (as `&str`
/// cut at character boundaries, and as bytes cut anywhere) gives the
/// one-shot result: the same message and merged events, or the same error.
/// Invalid UTF-8 must be reported as an error, whatever the chunking.
pub fn check_parse_stream(data: &[u8]) {
    let all = templates();
    let Some(input) = decode(data, all.len()) else {
        return;
    };
    let entry = &all[input.template];
    let t = entry.template();
    let bytes = byte_pieces(input.text, &input.pieces);
    let streamed_bytes = run_bytes(t, &input.prefix, &bytes);
    match std::str::from_utf8(input.text) {
        Ok(text) => {
            let whole = t.run(&input.prefix, None, &[text]);
            let pieces = str_pieces(text, &input.pieces);
            let streamed = t.run(&input.prefix, None, &pieces);
            assert!(
                same(&whole, &streamed),
                "{}: feed in {} pieces differs from one shot\nwhole    {}\nstreamed {}",
                entry.name,
                pieces.len(),
                to_line(&whole),
                to_line(&streamed)
            );
            assert!(
                same(&whole, &streamed_bytes),
                "{}: feed_bytes in {} pieces differs from one shot\nwhole    {}\nstreamed {}",
                entry.name,
                bytes.len(),
                to_line(&whole),
                to_line(&streamed_bytes)
            );
        }
        Err(_) => {
            assert!(
                is_error(&streamed_bytes),
                "{}: invalid UTF-8 was accepted: {}",
                entry.name,
                to_line(&streamed_bytes)
            );
        }
    }
}

/// The `compiled` target: for a bundled template, the compiled parser
/// (driven by `compiled`, which maps a family name to a [`Runner`]) gives
/// what the run-time parser gives, fed the same pieces, and what the
/// run-time parser gives in one shot. The generation is decoded lossily: the
/// compiled parsers are fed `&str`.
pub fn check_compiled(data: &[u8], compiled: &dyn Fn(&str) -> Option<Box<dyn Runner>>) {
    let all = templates();
    let bundled = all.iter().filter(|e| e.bundled).count();
    let Some(input) = decode(data, bundled) else {
        return;
    };
    let entry = &all[input.template];
    let Some(runner) = compiled(entry.name) else {
        panic!("no compiled parser for bundled template {}", entry.name);
    };
    let text = String::from_utf8_lossy(input.text);
    let pieces = str_pieces(&text, &input.pieces);
    let runtime = entry.template().run(&input.prefix, None, &pieces);
    let compiled_run = runner.run(&input.prefix, None, &pieces);
    assert!(
        same(&runtime, &compiled_run),
        "{}: compiled differs from run-time on {} pieces\nrun-time {}\ncompiled {}",
        entry.name,
        pieces.len(),
        to_line(&runtime),
        to_line(&compiled_run)
    );
    let whole = runner.run(&input.prefix, None, &[&text]);
    assert!(
        same(&whole, &compiled_run),
        "{}: compiled in {} pieces differs from compiled in one shot\nwhole    {}\nstreamed {}",
        entry.name,
        pieces.len(),
        to_line(&whole),
        to_line(&compiled_run)
    );
}

/// Runs a generation through a lenient parser: the run in the result
/// format, and every event (merged or not, with the initial ones first).
fn run_lenient(template: &Template, prefix: &str, pieces: &[&str]) -> (Value, Vec<OwnedEvent>) {
    let options = ParserOptions::new().lenient(true);
    let mut p = match template.parser_with(prefix, options, None) {
        Ok(p) => p,
        Err(e) => return (run_error(&e, "init", None), Vec::new()),
    };
    let initial = p.initial_events().to_vec();
    let mut events = Vec::new();
    for piece in pieces {
        match p.feed(piece) {
            Ok(evs) => events.extend(evs.iter().map(|e| e.to_owned_event())),
            Err(e) => return (run_error(&e, "feed", Some(&initial)), Vec::new()),
        }
    }
    let result = match p.finalize() {
        Ok((message, evs)) => {
            events.extend(evs.iter().map(|e| e.to_owned_event()));
            run_ok(&initial, &events, message)
        }
        Err(e) => return (run_error(&e, "finalize", Some(&initial)), Vec::new()),
    };
    let mut all = initial;
    all.extend(events);
    (result, all)
}

/// The accounting invariant as far as events show it: region text arrives
/// in order, each chunk a piece of the prompt and generation after the
/// previous one (the gaps are the delimiters, which events do not name), and
/// a malformed region's `raw` is exactly the text its chunks streamed.
fn check_accounting(name: &str, haystack: &str, events: &[OwnedEvent]) {
    let mut at = 0;
    let mut open: Option<(String, String)> = None;
    for event in events {
        match event {
            OwnedEvent::RegionOpen { field } => open = Some((field.clone(), String::new())),
            OwnedEvent::RegionChunk { field, text, .. } => {
                let Some(found) = haystack[at..].find(text.as_str()) else {
                    panic!(
                        "{name}: lenient chunk {text:?} of {field} is not in the text after byte {at}"
                    );
                };
                at += found + text.len();
                match &mut open {
                    Some((f, body)) if f == field => body.push_str(text),
                    _ => panic!("{name}: a chunk of {field} outside its region"),
                }
            }
            OwnedEvent::RegionMalformed { field, raw, .. } if !raw.is_empty() => {
                let streamed = match &open {
                    Some((f, body)) if f == field => body.as_str(),
                    _ => "",
                };
                assert_eq!(
                    raw, streamed,
                    "{name}: the malformed {field} region's raw text is not what it streamed"
                );
            }
            OwnedEvent::RegionClose { .. } => open = None,
            _ => {}
        }
    }
}

/// The `lenient` target, for a template of [`templates`], a prompt, a
/// generation (decoded lossily) and a chunking:
///
/// - a lenient parser never fails on text (a bad region is reported, not
///   raised);
/// - streaming gives the one-shot result, `region_malformed` events
///   included;
/// - where the strict parser succeeds, the lenient one gives the same
///   events and message;
/// - the accounting invariant, as `check_accounting` can see it.
pub fn check_lenient(data: &[u8]) {
    let all = templates();
    let Some(input) = decode(data, all.len()) else {
        return;
    };
    let entry = &all[input.template];
    let t = entry.template();
    let text = String::from_utf8_lossy(input.text);
    let pieces = str_pieces(&text, &input.pieces);
    let (whole, events) = run_lenient(t, &input.prefix, &[&text]);
    assert!(
        !is_error(&whole),
        "{}: the lenient parser failed: {}",
        entry.name,
        to_line(&whole)
    );
    let (streamed, _) = run_lenient(t, &input.prefix, &pieces);
    assert!(
        same(&whole, &streamed),
        "{}: lenient in {} pieces differs from one shot\nwhole    {}\nstreamed {}",
        entry.name,
        pieces.len(),
        to_line(&whole),
        to_line(&streamed)
    );
    let strict = t.run(&input.prefix, None, &[&text]);
    if !is_error(&strict) {
        assert!(
            same(&whole, &strict),
            "{}: lenient differs from strict on valid output\nstrict  {}\nlenient {}",
            entry.name,
            to_line(&strict),
            to_line(&whole)
        );
    }
    let haystack = format!("{}{}", input.prefix, text);
    check_accounting(entry.name, &haystack, &events);
}

/// Text a loaded template is run on by [`check_template_load`]: pieces of
/// many formats' delimiters and near misses.
const PROBE: &str = "<think>a</think>b<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": 1}}</tool_call>\
    <|channel|>final<|message|>x<|end|>[TOOL_CALLS]f[ARGS]{}<function=g>\n<parameter=p>\n1\n</parameter>\n\
    </function></s><|im_end|> é🙂 <|</";

/// The `template_load` target: arbitrary bytes as a template's JSON load
/// or fail with a [`retort::TemplateError`] (never panic, never hang), and a
/// template that loads parses a probe text the same in one piece and in
/// pieces of one character.
pub fn check_template_load(data: &[u8]) {
    if data.len() > MAX_INPUT {
        return;
    }
    let json = String::from_utf8_lossy(data);
    let template = match Template::from_json(&json) {
        Ok(t) => t,
        Err(e) => {
            // The error's text is what users see: it must render.
            let _ = e.to_string();
            return;
        }
    };
    for prefix in ["", "<|im_start|>assistant\n<think>"] {
        let whole = template.run(prefix, None, &[PROBE]);
        let chars: Vec<&str> = PROBE
            .char_indices()
            .map(|(i, c)| &PROBE[i..i + c.len_utf8()])
            .collect();
        let streamed = template.run(prefix, None, &chars);
        assert!(
            same(&whole, &streamed),
            "template from the input: one character at a time differs from one shot\nwhole    {}\nstreamed {}",
            to_line(&whole),
            to_line(&streamed)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_fuzz_template_loads() {
        for entry in templates() {
            let _ = entry.template();
        }
        assert_eq!(
            templates().iter().filter(|e| !e.bundled).count(),
            REGEX_TEMPLATES.len()
        );
    }

    #[test]
    fn decode_reads_what_encode_writes() {
        let data = encode(3, 5, 9, "<p>", "héllo".as_bytes());
        let input = decode(&data, 10).expect("a valid input");
        assert_eq!((input.template, input.prefix.as_str()), (3, "<p>"));
        assert_eq!(input.text, "héllo".as_bytes());
        assert_eq!(input.pieces.iter().sum::<usize>(), input.text.len());
        assert!(input.pieces.iter().all(|&n| (1..=5).contains(&n)));
        let pieces = str_pieces("héllo", &[2, 4]);
        assert_eq!(pieces.concat(), "héllo");
        assert_eq!(pieces[0], "h");
    }
}
