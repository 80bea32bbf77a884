//! Bounded work on delimiters off the DFA plan: the backtracking path's
//! steps are counted across all attempts and capped linearly in the input.

use retort_engine::{ParseErrorKind, Template};

fn backref_template() -> Template {
    Template::from_json(
        r#"{"start_anchor": "<s>", "fields": {
            "content": {},
            "kv": {"open_pattern": "(\\w+)=\\1", "close": ";"}}}"#,
    )
    .expect("valid template")
}

/// Feeds `text` in pieces of `chunk` bytes, then finalizes; returns the
/// outcome and the backtracking steps taken.
fn run(t: &Template, text: &str, chunk: usize) -> (Result<(), ParseErrorKind>, u64) {
    let mut p = t.parser("").expect("parser");
    for piece in text.as_bytes().chunks(chunk) {
        let piece = std::str::from_utf8(piece).expect("ASCII input");
        if let Err(e) = p.feed(piece) {
            return (Err(e.kind), p.backtrack_steps());
        }
    }
    let out = p.finalize().map(|_| ()).map_err(|e| e.kind);
    (out, p.backtrack_steps())
}

#[test]
fn a_backreference_open_on_a_megabyte_of_word_characters_is_bounded() {
    let t = backref_template();
    let text = "a".repeat(1 << 20);
    let started = std::time::Instant::now();
    let (out, steps) = run(&t, &text, 16);
    let took = started.elapsed();
    // Either the pattern is settled (no match: all text is content) or the
    // budget answers with a typed error; never a hang.
    assert!(
        matches!(out, Ok(()) | Err(ParseErrorKind::MatcherBudget)),
        "{out:?}"
    );
    let allowed = retort_engine::WorkBudget::default().allowed(text.len());
    assert!(steps <= allowed, "{steps} steps, {allowed} allowed");
    eprintln!("{out:?} after {steps} steps in {took:?}");
    assert!(took.as_secs_f64() < 2.0, "took {took:?}");
}

#[test]
fn streaming_a_pending_backtracking_start_costs_linear_work() {
    // While the text is still arriving, the one pending start (0) is tried
    // again only as the text grows geometrically: the steps per byte stay
    // flat as the input grows, for small and large pieces alike.
    // A negative lookahead keeps the pattern off the DFA plan.
    let t = Template::from_json(
        r#"{"start_anchor": "<s>", "fields": {
            "content": {},
            "kv": {"open_pattern": "\\w+(?!x)=", "close": ";"}}}"#,
    )
    .expect("valid template");
    for chunk in [1, 16, 256] {
        let mut per_byte = Vec::new();
        for n in [1usize << 12, 1 << 14, 1 << 16] {
            let text = "b".repeat(n);
            let mut p = t.parser("").expect("parser");
            for piece in text.as_bytes().chunks(chunk) {
                p.feed(std::str::from_utf8(piece).expect("ASCII"))
                    .expect("no error before the end");
            }
            per_byte.push(p.backtrack_steps() as f64 / n as f64);
        }
        // Quadratic work would grow sixteen-fold from the first size to
        // the last; linear work stays within a small factor.
        assert!(
            per_byte[2] < per_byte[0] * 2.0 + 1.0,
            "chunk {chunk}: steps per byte {per_byte:?}"
        );
        let allowed = retort_engine::WorkBudget::default().per_byte as f64;
        assert!(per_byte[2] < allowed, "chunk {chunk}: {per_byte:?}");
    }
}

#[test]
fn the_budget_is_linear_in_the_input_and_answers_with_a_typed_error() {
    // At the end of input every start is tried against the rest of the
    // text: quadratic for this pattern on a run of word characters. The
    // budget stops it at `per_byte * bytes + base` steps.
    let t = backref_template();
    for n in [1usize << 14, 1 << 16] {
        let text = "c".repeat(n);
        let (out, steps) = run(&t, &text, 1 << 20);
        let allowed = retort_engine::WorkBudget::default().allowed(n);
        assert!(steps <= allowed, "{n}: {steps} > {allowed}");
        if n == 1 << 16 {
            assert_eq!(out, Err(ParseErrorKind::MatcherBudget));
        }
    }
}

#[test]
fn a_backreference_still_matches_when_it_should() {
    // Streamed in pieces that split the delimiter, the match is the one
    // the whole text gives.
    let t = backref_template();
    let whole = t.parse("xy abc=abc1;tail", "").expect("parse");
    let mut p = t.parser("").expect("parser");
    for piece in ["xy ab", "c=ab", "c1", ";tail"] {
        p.feed(piece).expect("feed");
    }
    let (msg, _) = p.finalize().expect("finalize");
    assert_eq!(msg, whole);
    assert_eq!(msg.get("kv"), Some(&retort_engine::Value::Str("1".into())));
}

fn json_template() -> Template {
    Template::from_json(
        r#"{"start_anchor": "<s>", "fields": {
            "content": {},
            "tool_calls": {"open": "<tool_call>", "close": "</tool_call>",
                           "content": "json", "repeats": true},
            "answer": {"open": "<a>", "close": "</a>", "optional": false}}}"#,
    )
    .expect("valid template")
}

fn lenient() -> retort_engine::ParserOptions {
    retort_engine::ParserOptions::new().lenient(true)
}

#[test]
fn lenient_mode_reports_a_bad_region_and_goes_on() {
    let t = json_template();
    let text = "Hi <tool_call>{\"a\": 1,</tool_call> then <tool_call>{\"b\": 2}</tool_call> end";
    assert_eq!(
        t.parse(text, "").map_err(|e| e.kind),
        Err(ParseErrorKind::Field),
        "strict mode fails on the bad region"
    );
    let mut p = t.parser_with("", lenient(), None).expect("parser");
    let mut events = p.feed(text).expect("feed").to_vec();
    let (msg, last) = p.finalize().expect("lenient finalize");
    events.extend(last.to_vec());
    let bad: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            retort_engine::OwnedEvent::RegionMalformed { field, raw, .. } => {
                Some((field.as_str(), raw.as_str()))
            }
            _ => None,
        })
        .collect();
    // The broken call, and the required field never written.
    assert_eq!(bad, [("tool_calls", "{\"a\": 1,"), ("answer", "")]);
    assert_eq!(p.malformed().len(), 2);
    // The good call after the bad one is parsed.
    let calls = match msg.get("tool_calls") {
        Some(retort_engine::Value::List(items)) => items.len(),
        other => panic!("tool_calls: {other:?}"),
    };
    assert_eq!(calls, 1);
    assert_eq!(
        msg.get("content"),
        Some(&retort_engine::Value::Str("end".into()))
    );
}

#[test]
fn lenient_mode_turns_the_rest_into_text_past_the_budget() {
    let t = backref_template();
    let text = "d".repeat(1 << 16);
    let mut p = t.parser_with("", lenient(), None).expect("parser");
    let mut got = String::new();
    for piece in text.as_bytes().chunks(4096) {
        for e in p
            .feed(std::str::from_utf8(piece).expect("ASCII"))
            .expect("feed")
        {
            if let retort_engine::Event::RegionChunk { text, .. } = e {
                got.push_str(text);
            }
        }
    }
    let (_, last) = p.finalize().expect("lenient finalize");
    for e in last {
        if let retort_engine::Event::RegionChunk { text, .. } = e {
            got.push_str(text);
        }
    }
    assert!(p.gave_up_scanning());
    assert_eq!(got, text, "every byte reaches the open region");
}

#[test]
fn limits_answer_with_a_typed_error_that_keeps_the_text() {
    let t = json_template();
    let limits = retort_engine::Limits::default().with_max_region(1000);
    let mut p = t
        .parser_with("", retort_engine::ParserOptions::new().limits(limits), None)
        .expect("parser");
    let body = "x".repeat(2000);
    let err = p
        .feed(&format!("<tool_call>{body}"))
        .map(|_| ())
        .expect_err("region over the limit");
    assert_eq!(
        err.kind,
        ParseErrorKind::Limit {
            name: "max_region",
            limit: 1000
        }
    );
    assert_eq!(err.raw, body);
}

/// A region that grows in pieces the quick path takes (no byte of them can
/// begin the close) still stops at `max_region`, with all its text in the
/// error and in `region_text`.
#[test]
fn the_region_limit_holds_on_the_quick_path() {
    let t = json_template();
    let limits = retort_engine::Limits::default().with_max_region(1000);
    let mut p = t
        .parser_with("", retort_engine::ParserOptions::new().limits(limits), None)
        .expect("parser");
    p.feed("<tool_call>").expect("the open delimiter");
    let mut fed = String::new();
    let err = loop {
        match p.feed("xyzw") {
            Ok(_) => fed.push_str("xyzw"),
            Err(e) => break e,
        }
        assert!(fed.len() <= 1000, "the region passed its limit");
    };
    fed.push_str("xyzw");
    assert_eq!(
        err.kind,
        ParseErrorKind::Limit {
            name: "max_region",
            limit: 1000
        }
    );
    assert_eq!(err.raw, fed);
    // The text moved into the error; later calls repeat the error without it.
    assert_eq!(p.region_text(), Some(("tool_calls", "")));
    let again = p
        .feed("more")
        .map(|_| ())
        .expect_err("the parser has failed");
    assert_eq!((again.kind, again.raw.as_str()), (err.kind, ""));
}

/// `max_message` refuses the piece that would pass it and leaves the parser
/// as it was: the message so far can still be finalized.
#[test]
fn the_message_limit_refuses_a_piece_and_keeps_the_parser() {
    let t = Template::from_json(
        r#"{"start_anchor": "<s>", "fields": {"content": {},
            "tool_calls": {"open": "<tool_call>", "close": "</tool_call>", "content": "json"}}}"#,
    )
    .expect("valid template");
    let limits = retort_engine::Limits::default().with_max_message(100);
    for chunk in [1, 7, 100] {
        let mut p = t
            .parser_with(
                "the prompt<s>",
                retort_engine::ParserOptions::new().limits(limits),
                None,
            )
            .expect("parser");
        let text = "a".repeat(100);
        for piece in text.as_bytes().chunks(chunk) {
            p.feed(std::str::from_utf8(piece).expect("ASCII"))
                .expect("within the limit");
        }
        let err = p.feed("bc").map(|_| ()).expect_err("over the limit");
        assert_eq!(
            err.kind,
            ParseErrorKind::Limit {
                name: "max_message",
                limit: 100
            }
        );
        assert_eq!(err.raw, "bc");
        let err = p.feed_bytes(b"d").map(|_| ()).expect_err("over the limit");
        assert_eq!(err.raw, "d");
        let (message, _) = p.finalize().expect("the parser still finalizes");
        assert_eq!(
            message.get("content"),
            Some(&retort_engine::Value::Str(text.clone()))
        );
    }
}

/// JSON nested far past the reference's depth limit in a tool call: a typed
/// error at the limit (the reference's `RecursionError`), no stack overflow,
/// in one piece and streamed; lenient mode reports the region and goes on.
/// (`tests/conformance/cases/hand.jsonl` pins the limit itself against the
/// reference: depths 985 to 987.)
#[test]
fn json_nested_a_hundred_thousand_deep_is_a_typed_error() {
    let t = Template::from_json(
        r#"{"start_anchor": "<s>", "fields": {"content": {},
            "tool_calls": {"open": "<tool_call>", "close": "</tool_call>", "content": "json", "repeats": true}}}"#,
    )
    .expect("valid template");
    let depth = 100_000;
    for (open, close) in [("[", "]"), ("{\"a\": ", "}")] {
        let body = format!("{}1{}", open.repeat(depth), close.repeat(depth));
        let text = format!("<tool_call>{body}</tool_call> after");
        for chunk in [text.len(), 4096, 7] {
            let mut p = t.parser("").expect("parser");
            let mut err = None;
            for piece in text.as_bytes().chunks(chunk) {
                if let Err(e) = p.feed(std::str::from_utf8(piece).expect("ASCII")) {
                    err = Some(e);
                    break;
                }
            }
            let err = match err {
                Some(e) => e,
                None => p.finalize().map(|_| ()).expect_err("too deep"),
            };
            assert_eq!(err.kind, ParseErrorKind::Field);
            assert!(
                err.message.contains("maximum recursion depth exceeded"),
                "{}",
                err.message
            );
            assert_eq!(err.raw, body, "the region's text is kept");
        }
        let mut p = t.parser_with("", lenient(), None).expect("parser");
        p.feed(&text).expect("lenient mode goes on");
        let (message, _) = p.finalize().expect("lenient mode goes on");
        assert_eq!(
            message.get("content"),
            Some(&retort_engine::Value::Str("after".into()))
        );
        assert_eq!(p.malformed().len(), 1);
        assert_eq!(p.malformed()[0].raw, body);
    }
}
