//! `xml-inline` tool calls stream their parameters as the parser decides
//! them. With tools, a parameter is coerced by its tool's schema, which
//! needs the tool's name: a region that opens and closes within one feed
//! reports its parameters before the name is known. They wait for it, so
//! the arguments' text is the same whether the call streamed or came
//! whole — also when the model wrote a parameter twice.

use retort_engine::Template;
use retort_engine::py::json_loads;
use retort_openai::{ChunkStream, Options};
use std::path::Path;

fn bundled(name: &str) -> Template {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../templates")
        .join(format!("{name}.json"));
    Template::from_json(&std::fs::read_to_string(path).expect("bundled template")).expect("valid")
}

/// The arguments text of each call the chunks carry, fed in pieces of `n`
/// characters (0: whole).
fn arguments(t: &Template, text: &str, tools: &str, n: usize) -> Vec<String> {
    let options = Options {
        tools: Some(json_loads(tools).expect("tools")),
        ..Options::deterministic()
    };
    let mut stream = ChunkStream::new(t, "", options).expect("a stream");
    let mut chunks = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let pieces: Vec<String> = match n {
        0 => vec![text.to_owned()],
        n => chars.chunks(n).map(|c| c.iter().collect()).collect(),
    };
    for p in &pieces {
        chunks.extend(stream.feed(p).expect("feed"));
    }
    chunks.extend(stream.finalize(false).expect("finalize").0);
    let mut args: Vec<String> = Vec::new();
    for c in &chunks {
        for call in c.choices[0].delta.tool_calls.iter().flatten() {
            let i = call.index as usize;
            if args.len() <= i {
                args.resize(i + 1, String::new());
            }
            args[i] += call
                .function
                .as_ref()
                .and_then(|f| f.arguments.as_deref())
                .unwrap_or("");
        }
    }
    args
}

const TOOLS: &str = r#"[{"type": "function", "function": {"name": "get_weather",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}}]"#;

#[test]
fn parameters_read_before_the_name_is_known_are_written_as_streamed() {
    let t = bundled("seed-oss");
    // The first call's close is mistyped, so its region runs into the
    // second call: two `city` parameters in one call.
    let text = "<seed:tool_call>\n<function=get_weather>\n<parameter=city>Paris</parameter>\n<parameter=days>3</parameter>\n</function>\n</seed:tool_calx>Done.<seed:tool_call>\n<function=get_weather>\n<parameter=city>Lyon</parameter>\n</function>\n</seed:tool_call>";
    let whole = arguments(&t, text, TOOLS, 0);
    assert_eq!(whole, [r#"{"city": "Paris", "days": 3, "city": "Lyon"}"#]);
    for n in [1, 2, 5, 17] {
        assert_eq!(arguments(&t, text, TOOLS, n), whole, "pieces of {n}");
    }
    // A call as the model means it: the same in every chunking, coerced.
    let text = "<seed:tool_call>\n<function=get_weather>\n<parameter=days>3</parameter>\n<parameter=city>Paris</parameter>\n</function>\n</seed:tool_call>";
    for n in [0, 1, 3] {
        assert_eq!(
            arguments(&t, text, TOOLS, n),
            [r#"{"days": 3, "city": "Paris"}"#],
            "pieces of {n}"
        );
    }
}
