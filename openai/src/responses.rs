//! OpenAI Responses API stream events from the same [`Delta`]s as the
//! chat-completion chunks.
//!
//! Each run of reasoning, of answer text and each tool call becomes an
//! output item: `response.output_item.added`, its deltas
//! (`response.reasoning_text.delta`, `response.output_text.delta`,
//! `response.function_call_arguments.delta`), its `.done` events, then
//! `response.output_item.done`. [`ResponseEvents::finish`] closes the open
//! item and ends with `response.completed` (or `response.incomplete` when
//! the generation was cut).

use crate::stream::Delta;
use serde::Serialize;
use serde_json::{Value as Json, json};

/// One Responses API stream event.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ResponseEvent {
    /// The event type (`response.output_text.delta`, ...).
    #[serde(rename = "type")]
    pub kind: String,
    /// Position in the stream, from 0.
    pub sequence_number: u64,
    /// The event's other fields, as OpenAI names them.
    #[serde(flatten)]
    pub fields: serde_json::Map<String, Json>,
}

#[derive(Clone, Debug, PartialEq)]
enum Item {
    Reasoning(String),
    Message(String),
    Call {
        call_id: String,
        name: String,
        arguments: String,
    },
}

/// Turns deltas into Responses events.
#[derive(Clone, Debug)]
pub struct ResponseEvents {
    response_id: String,
    seq: u64,
    started: bool,
    /// The open item and its output index.
    open: Option<(usize, Item)>,
    items: usize,
    /// Open call items by delta index, for arguments that come after a
    /// later item began (never, as calls arrive in order; kept exact).
    done: Vec<Json>,
}

impl ResponseEvents {
    /// Events for the response `response_id`.
    pub fn new(response_id: &str) -> ResponseEvents {
        ResponseEvents {
            response_id: response_id.to_owned(),
            seq: 0,
            started: false,
            open: None,
            items: 0,
            done: Vec::new(),
        }
    }

    fn push(&mut self, kind: &str, fields: Json, out: &mut Vec<ResponseEvent>) {
        let Json::Object(fields) = fields else {
            return;
        };
        out.push(ResponseEvent {
            kind: kind.to_owned(),
            sequence_number: self.seq,
            fields,
        });
        self.seq += 1;
    }

    fn item_id(&self, index: usize) -> String {
        format!("{}_item_{index}", self.response_id)
    }

    fn item_json(&self, index: usize, item: &Item, status: &str) -> Json {
        let id = self.item_id(index);
        match item {
            Item::Reasoning(t) => json!({"id": id, "type": "reasoning", "status": status,
                "summary": [], "content": [{"type": "reasoning_text", "text": t}]}),
            Item::Message(t) => {
                json!({"id": id, "type": "message", "role": "assistant", "status": status,
                "content": [{"type": "output_text", "text": t, "annotations": []}]})
            }
            Item::Call {
                call_id,
                name,
                arguments,
            } => json!({"id": id, "type": "function_call", "status": status,
                "call_id": call_id, "name": name, "arguments": arguments}),
        }
    }

    fn close(&mut self, out: &mut Vec<ResponseEvent>) {
        let Some((index, item)) = self.open.take() else {
            return;
        };
        let item_id = self.item_id(index);
        match &item {
            Item::Reasoning(t) => self.push(
                "response.reasoning_text.done",
                json!({"item_id": item_id, "output_index": index, "content_index": 0, "text": t}),
                out,
            ),
            Item::Message(t) => self.push(
                "response.output_text.done",
                json!({"item_id": item_id, "output_index": index, "content_index": 0, "text": t}),
                out,
            ),
            Item::Call { arguments, .. } => self.push(
                "response.function_call_arguments.done",
                json!({"item_id": item_id, "output_index": index, "arguments": arguments}),
                out,
            ),
        }
        let done = self.item_json(index, &item, "completed");
        self.push(
            "response.output_item.done",
            json!({"output_index": index, "item": done.clone()}),
            out,
        );
        self.done.push(done);
    }

    fn begin(&mut self, item: Item, out: &mut Vec<ResponseEvent>) {
        self.close(out);
        let index = self.items;
        self.items += 1;
        let added = self.item_json(index, &item, "in_progress");
        self.push(
            "response.output_item.added",
            json!({"output_index": index, "item": added}),
            out,
        );
        self.open = Some((index, item));
    }

    /// Appends the events for `deltas` to `out`.
    pub fn events(&mut self, deltas: &[Delta], out: &mut Vec<ResponseEvent>) {
        if !self.started {
            self.started = true;
            let r = json!({"id": self.response_id, "object": "response", "status": "in_progress", "output": []});
            self.push("response.created", json!({"response": r}), out);
        }
        for d in deltas {
            match d {
                Delta::Reasoning(t) => {
                    if !matches!(self.open, Some((_, Item::Reasoning(_)))) {
                        self.begin(Item::Reasoning(String::new()), out);
                    }
                    if let Some((i, Item::Reasoning(s))) = &mut self.open {
                        s.push_str(t);
                        let i = *i;
                        let id = self.item_id(i);
                        self.push(
                            "response.reasoning_text.delta",
                            json!({"item_id": id, "output_index": i, "content_index": 0, "delta": t}),
                            out,
                        );
                    }
                }
                Delta::Content(t) => {
                    if !matches!(self.open, Some((_, Item::Message(_)))) {
                        self.begin(Item::Message(String::new()), out);
                    }
                    if let Some((i, Item::Message(s))) = &mut self.open {
                        s.push_str(t);
                        let i = *i;
                        let id = self.item_id(i);
                        self.push(
                            "response.output_text.delta",
                            json!({"item_id": id, "output_index": i, "content_index": 0, "delta": t}),
                            out,
                        );
                    }
                }
                Delta::CallOpen { id, name, .. } => self.begin(
                    Item::Call {
                        call_id: id.clone(),
                        name: name.clone(),
                        arguments: String::new(),
                    },
                    out,
                ),
                Delta::CallArgs { text, .. } => {
                    if let Some((i, Item::Call { arguments, .. })) = &mut self.open {
                        arguments.push_str(text);
                        let i = *i;
                        let id = self.item_id(i);
                        self.push(
                            "response.function_call_arguments.delta",
                            json!({"item_id": id, "output_index": i, "delta": text}),
                            out,
                        );
                    }
                }
                Delta::CallDone { .. } => self.close(out),
            }
        }
    }

    /// Closes the open item and ends the response.
    pub fn finish(&mut self, cut: bool, out: &mut Vec<ResponseEvent>) {
        self.events(&[], out);
        self.close(out);
        let status = if cut { "incomplete" } else { "completed" };
        let r = json!({"id": self.response_id, "object": "response", "status": status, "output": self.done});
        self.push(&format!("response.{status}"), json!({"response": r}), out);
    }
}
