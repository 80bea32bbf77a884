//! The OpenAI wire types this crate produces, as serde structs.
//!
//! Field names and optionality follow OpenAI's `ChatCompletionChunk` and
//! `ChatCompletion` schemas: absent optional fields are left out of the JSON
//! (never `null`), because the official client concatenates every string
//! field it receives, so a field sent twice would be doubled.

use serde::{Deserialize, Serialize};

/// One `chat.completion.chunk` object: what a streaming server sends per SSE
/// `data:` line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChatCompletionChunk {
    /// The completion's id, the same in every chunk of one stream.
    pub id: String,
    /// Always `"chat.completion.chunk"`.
    pub object: String,
    /// Unix time (seconds) the completion was created; the same in every chunk.
    pub created: u64,
    /// The model name the server reports.
    pub model: String,
    /// The choices; this crate always produces exactly one (index 0).
    pub choices: Vec<ChunkChoice>,
}

/// A choice inside a [`ChatCompletionChunk`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChunkChoice {
    /// The choice's index (0).
    pub index: u32,
    /// What this chunk adds to the message.
    pub delta: ChoiceDelta,
    /// Always `null`: retort sees text, not tokens.
    pub logprobs: Option<serde_json::Value>,
    /// Set on the last chunk only.
    pub finish_reason: Option<FinishReason>,
}

/// Why the generation ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// The model finished its message.
    Stop,
    /// The model finished and called tools.
    ToolCalls,
    /// The generation was cut off (token limit).
    Length,
}

/// The part of a message one chunk adds. Every string field is a fragment
/// that the client appends to what it has.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ChoiceDelta {
    /// `"assistant"`, in the first chunk only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// A fragment of the visible answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// A fragment of the reasoning, under the key DeepSeek, llama.cpp, SGLang
    /// and `transformers serve` use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<String>,
    /// A fragment of the reasoning, under the key vLLM and OpenRouter use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
    /// Tool-call fragments: at most one entry per call index.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<ToolCallDelta>>,
}

/// A fragment of one tool call (`ChoiceDeltaToolCall`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolCallDelta {
    /// The call's position in the message (dense, from 0).
    pub index: u32,
    /// The call's id: in the call's first fragment only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// `"function"`: in the call's first fragment only.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The function's name and argument text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function: Option<FunctionDelta>,
}

/// A fragment of a call's function.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FunctionDelta {
    /// The tool's name: in the call's first fragment only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// A fragment of the arguments' JSON text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<String>,
}

/// A complete assistant message, as a non-streaming `chat.completion`
/// carries it (`choices[0].message`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ChatCompletionMessage {
    /// `"assistant"`.
    pub role: String,
    /// The visible answer (`null` when the model wrote none).
    pub content: Option<String>,
    /// The reasoning under `reasoning_content` (see [`crate::Reasoning`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<String>,
    /// The reasoning under `reasoning` (see [`crate::Reasoning`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
    /// The tool calls, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<ChatCompletionToolCall>>,
}

/// A complete tool call in a [`ChatCompletionMessage`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ChatCompletionToolCall {
    /// The call's id.
    pub id: String,
    /// `"function"`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The function called.
    pub function: FunctionCall,
}

/// The function of a [`ChatCompletionToolCall`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FunctionCall {
    /// The tool's name.
    pub name: String,
    /// The arguments as JSON text (see the crate docs for the spelling).
    pub arguments: String,
}

/// A [`ChatCompletionChunk`] that borrows its text (from
/// [`crate::ChunkStream::feed_chunks`]): it serialises to the same JSON.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ChunkRef<'a> {
    /// See [`ChatCompletionChunk::id`].
    pub id: &'a str,
    /// `"chat.completion.chunk"`.
    pub object: &'static str,
    /// See [`ChatCompletionChunk::created`].
    pub created: u64,
    /// See [`ChatCompletionChunk::model`].
    pub model: &'a str,
    /// The one choice.
    pub choices: [ChunkChoiceRef<'a>; 1],
}

/// See [`ChunkChoice`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ChunkChoiceRef<'a> {
    /// The choice's index (0).
    pub index: u32,
    /// What this chunk adds to the message.
    pub delta: ChoiceDeltaRef<'a>,
    /// Always `null`.
    pub logprobs: Option<()>,
    /// Set on the last chunk only.
    pub finish_reason: Option<FinishReason>,
}

/// See [`ChoiceDelta`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct ChoiceDeltaRef<'a> {
    /// See [`ChoiceDelta::role`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<&'static str>,
    /// See [`ChoiceDelta::content`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<&'a str>,
    /// See [`ChoiceDelta::reasoning_content`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<&'a str>,
    /// See [`ChoiceDelta::reasoning`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<&'a str>,
    /// See [`ChoiceDelta::tool_calls`]: one entry.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<[ToolCallDeltaRef<'a>; 1]>,
}

/// See [`ToolCallDelta`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct ToolCallDeltaRef<'a> {
    /// See [`ToolCallDelta::index`].
    pub index: u32,
    /// See [`ToolCallDelta::id`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<&'a str>,
    /// See [`ToolCallDelta::kind`].
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<&'static str>,
    /// See [`ToolCallDelta::function`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub function: Option<FunctionDeltaRef<'a>>,
}

/// See [`FunctionDelta`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct FunctionDeltaRef<'a> {
    /// See [`FunctionDelta::name`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<&'a str>,
    /// See [`FunctionDelta::arguments`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arguments: Option<&'a str>,
}

impl ChunkRef<'_> {
    /// The owned chunk.
    pub fn to_owned(&self) -> ChatCompletionChunk {
        let [choice] = &self.choices;
        let d = &choice.delta;
        let own = |s: Option<&str>| s.map(str::to_owned);
        ChatCompletionChunk {
            id: self.id.to_owned(),
            object: self.object.to_owned(),
            created: self.created,
            model: self.model.to_owned(),
            choices: vec![ChunkChoice {
                index: choice.index,
                delta: ChoiceDelta {
                    role: own(d.role),
                    content: own(d.content),
                    reasoning_content: own(d.reasoning_content),
                    reasoning: own(d.reasoning),
                    tool_calls: d.tool_calls.map(|[c]| {
                        vec![ToolCallDelta {
                            index: c.index,
                            id: own(c.id),
                            kind: own(c.kind),
                            function: c.function.map(|f| FunctionDelta {
                                name: own(f.name),
                                arguments: own(f.arguments),
                            }),
                        }]
                    }),
                },
                logprobs: None,
                finish_reason: choice.finish_reason,
            }],
        }
    }
}
