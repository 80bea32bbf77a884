//! Responses API events come from the same deltas as the chunks: the
//! `.delta` events add up to their `.done` events and to the message.

use retort_engine::Template;
use retort_engine::typed::AssistantMessage;
use retort_openai::responses::ResponseEvents;
use retort_openai::{ChunkStream, Options, arguments_text};

#[test]
fn deltas_add_up_to_the_done_events_and_the_message() {
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../templates/qwen3.json");
    let t = Template::from_json(&std::fs::read_to_string(file).unwrap()).unwrap();
    let text = "<think>Paris, so metric.</think>Checking.<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"n\": [1, 2.5]}}\n</tool_call><tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call><|im_end|>";
    for step in [1, 3, 1000] {
        let mut s = ChunkStream::new(&t, "", Options::deterministic()).unwrap();
        let mut r = ResponseEvents::new("resp_1");
        let mut events = Vec::new();
        let chars: Vec<char> = text.chars().collect();
        for piece in chars.chunks(step) {
            let d = s.feed_deltas(&piece.iter().collect::<String>()).unwrap();
            r.events(&d, &mut events);
        }
        let (d, _, message) = s.finalize_deltas(false).unwrap();
        r.events(&d, &mut events);
        r.finish(false, &mut events);
        for (n, e) in events.iter().enumerate() {
            assert_eq!(e.sequence_number, n as u64);
        }
        let kinds: Vec<&str> = events.iter().map(|e| e.kind.as_str()).collect();
        assert_eq!(kinds.first(), Some(&"response.created"));
        assert_eq!(kinds.last(), Some(&"response.completed"));
        let joined = |kind: &str, index: u64| -> String {
            events
                .iter()
                .filter(|e| e.kind == kind && e.fields["output_index"] == index)
                .map(|e| e.fields["delta"].as_str().unwrap().to_owned())
                .collect()
        };
        let done = |kind: &str, key: &str| -> Vec<String> {
            events
                .iter()
                .filter(|e| e.kind == kind)
                .map(|e| e.fields[key].as_str().unwrap().to_owned())
                .collect()
        };
        // Items: reasoning (0), message (1), two calls (2, 3).
        assert_eq!(
            joined("response.reasoning_text.delta", 0),
            message.reasoning().unwrap()
        );
        assert_eq!(
            done("response.reasoning_text.done", "text"),
            [message.reasoning().unwrap()]
        );
        assert_eq!(
            joined("response.output_text.delta", 1),
            message.content().unwrap()
        );
        let calls = message.tool_calls();
        let args = done("response.function_call_arguments.done", "arguments");
        assert_eq!(args.len(), 2);
        for (i, call) in calls.iter().enumerate() {
            let want = arguments_text(&call.arguments);
            assert_eq!(
                joined("response.function_call_arguments.delta", 2 + i as u64),
                want
            );
            assert_eq!(args[i], want, "step {step}");
        }
        let added = events
            .iter()
            .filter(|e| e.kind == "response.output_item.added")
            .count();
        assert_eq!(added, 4);
    }
}
