//! The round trip's one table: every chat template, the bundled template
//! that parses its renders, how to render it, and why a turn cannot round
//! trip where it cannot.

/// One of the four last assistant turns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Turn {
    /// (a) content only.
    Content,
    /// (b) reasoning and content.
    Reasoning,
    /// (c) one tool call.
    OneCall,
    /// (d) two tool calls.
    TwoCalls,
}

pub(crate) const TURNS: [Turn; 4] = [
    Turn::Content,
    Turn::Reasoning,
    Turn::OneCall,
    Turn::TwoCalls,
];

/// How a family's tool-call ids look in the chat template's history.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Ids {
    /// `call_1`, `call_2`.
    Plain,
    /// Nine alphanumerics (Mistral's tokenizer requires them).
    NineChars,
    /// `functions.<name>:<index>` (Kimi-K2 renders the id as the call's header).
    Kimi,
}

/// A chat template and what to parse its renders with.
pub(crate) struct Family {
    /// The chat template's file name, in the directory `source` names.
    pub(crate) chat_template: &'static str,
    /// Where the chat template lives.
    pub(crate) source: Source,
    /// The bundled template (`templates/<name>.json`); `None` when retort
    /// bundles nothing for it (then `known` says why).
    pub(crate) template: Option<&'static str>,
    /// `bos_token` / `eos_token` as the model's tokenizer config sets them.
    pub(crate) bos: &'static str,
    pub(crate) eos: &'static str,
    /// The end-of-turn markers a generation stops at; the text is cut after
    /// the first of them.
    pub(crate) stops: &'static [&'static str],
    /// Tool-call arguments as a JSON string (what some templates expect)
    /// instead of a dict.
    pub(crate) string_arguments: bool,
    /// Tools as `{name, description, parameters}` rather than the OpenAI
    /// `{type: function, function: {…}}` wrapper (what the template reads).
    pub(crate) flat_tools: bool,
    /// `enable_thinking`: on for most families; off where the chat template
    /// renders history the way a thinking-off prompt continues.
    pub(crate) thinking: bool,
    /// A system message, where the template takes its switches from one
    /// (`/no_think`).
    pub(crate) system: Option<&'static str>,
    pub(crate) ids: Ids,
    /// Turns that cannot round trip, and why.
    pub(crate) known: &'static [(Turn, &'static str)],
}

/// The shared directory a chat template comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Source {
    /// `../shared/chat-templates`: every file there must be in the table.
    ChatTemplates,
    /// `../shared/llamacpp/templates`, for families whose only chat
    /// template is there (the files there without a row are covered by
    /// `tests/llamacpp.rs` and `tests/prompt_variants.rs`).
    LlamaCpp,
}

// Why a turn cannot round trip, one reason per cause.
pub(crate) const NO_REASONING: &str = "the family does not reason: the chat template renders no reasoning_content (nor does the bundled template parse any)";
pub(crate) const DROPS_REASONING: &str =
    "the chat template drops reasoning_content from the assistant turn it renders";
pub(crate) const FORCED_OPEN: &str = "the generation prompt opens the reasoning (`<think>\\n`) but the chat template renders the assistant turn without it and without its reasoning, so the rendered turn is not what the model writes after that prompt (it would close `</think>` first)";
pub(crate) const CALLS_NOT_RENDERED: &str =
    "the chat template does not render an assistant turn's tool_calls";
pub(crate) const ONE_CALL_PER_TURN: &str = "the model makes one call per generation: it stops at the first `<|call|>`, which is also where the rendered turn is cut";
pub(crate) const LLAMA_ONE_CALL: &str =
    "the chat template raises \"This model only supports single tool-calls at once!\"";
pub(crate) const KIMI_APPEND: &str = "the template calls `list.append`, which transformers' sandbox (ImmutableSandboxedEnvironment) refuses with a SecurityError";
pub(crate) const PHI_LLAMACPP: &str = "llama.cpp's edited template renders calls as `<|tool_call|>{…}<|/tool_call|>`; Phi-4-mini writes `functools[…]`, which the bundled template parses";
pub(crate) const LFM2_CALLS: &str = "llama.cpp's template renders calls as a JSON list; LFM2 writes Python calls (`[get_weather(city=\"Paris\")]`), which the bundled template parses";
pub(crate) const GEMMA3_COMMAS: &str = "the vLLM template renders a call's arguments without commas (`city=\"Paris\"unit=…`): its `set first = false` inside the loop does not outlive the iteration (jinja2 renders it the same)";
pub(crate) const APRIEL_15: &str = "Apriel writes its reasoning first and its answer inside `[BEGIN FINAL RESPONSE]`…`[END FINAL RESPONSE]`; this chat template renders a history answer without those markers (and drops the reasoning), so the answer reads as reasoning";
pub(crate) const APRIEL_16: &str = "the generation prompt opens the reasoning (`Here are my reasoning steps:\\n`) but history turns render without it";
pub(crate) const APERTUS_REASONING: &str = "the chat template renders reasoning only from Apertus's own `content.blocks` (type `thoughts`), not from reasoning_content";
pub(crate) const KIMI_THINKING: &str = "the chat template keeps reasoning_content only for turns after the last assistant turn without tool calls; a final answer renders `<think></think>`";
pub(crate) const NEMOTRON_CALLS: &str = "thinking off (`/no_think`), the generation prompt closes an empty `<think></think>`, but turns with tool calls render without it (thinking on, every turn renders after an open `<think>` without its reasoning)";
pub(crate) const DEEPSEEK_LLAMACPP: &str = "the generation prompt opens the reasoning (`<think>\\n`) but history turns render without it; besides, jinja2 (transformers) cannot render this template with tools at all (`tojson` of a generator)";

pub(crate) const COHERE_TOOL_USE: &str = "the chat template reads each tool parameter's `description` (the round trip's `unit` has none: it does not render) and writes its closing \"Write 'Action:'…\" system turn after the whole history, so the generation prompt is not a prefix of the conversation";
pub(crate) const SOLAR_REASONING: &str =
    "the chat template renders reasoning from `message.reasoning`, not from reasoning_content";
pub(crate) const THINKING_OFF_HISTORY: &str = "thinking off, the generation prompt closes an empty reasoning block, but a history turn with reasoning renders the block with its reasoning in that place, so the prompt is not a prefix of the conversation";

pub(crate) const QWEN_STOPS: &[&str] = &["<|im_end|>"];
pub(crate) const LLAMA_STOPS: &[&str] = &["<|eot_id|>", "<|eom_id|>"];
pub(crate) const DEEPSEEK_BOS: &str = "<｜begin▁of▁sentence｜>";
pub(crate) const DEEPSEEK_EOS: &str = "<｜end▁of▁sentence｜>";

/// A family whose only chat template is llama.cpp's copy.
pub(crate) const fn llamacpp(chat_template: &'static str, template: &'static str) -> Family {
    Family {
        source: Source::LlamaCpp,
        ..family(chat_template, template)
    }
}

pub(crate) const LAGUNA_STOPS: &[&str] = &["</assistant>", "〈|EOS|〉"];

pub(crate) const fn family(chat_template: &'static str, template: &'static str) -> Family {
    Family {
        chat_template,
        source: Source::ChatTemplates,
        template: Some(template),
        bos: "",
        eos: "",
        stops: QWEN_STOPS,
        string_arguments: false,
        flat_tools: false,
        thinking: true,
        system: None,
        ids: Ids::Plain,
        known: &[],
    }
}

/// The one table: chat template → bundled template, and the reasons.
pub(crate) const FAMILIES: &[Family] = &[
    Family {
        flat_tools: true,
        known: &[(Turn::Reasoning, APERTUS_REASONING)],
        ..family("apertus.jinja", "apertus")
    },
    Family {
        string_arguments: true,
        known: &[(Turn::Content, APRIEL_15), (Turn::Reasoning, APRIEL_15)],
        ..family("apriel-1.5-unsloth.jinja", "apriel")
    },
    Family {
        known: &[
            (Turn::Content, APRIEL_16),
            (Turn::Reasoning, APRIEL_16),
            (Turn::OneCall, APRIEL_16),
            (Turn::TwoCalls, APRIEL_16),
        ],
        ..family("apriel-1.6-thinker-llamacpp-fixed.jinja", "apriel")
    },
    Family {
        stops: &["<|END_OF_TURN_TOKEN|>"],
        known: &[(Turn::Reasoning, DROPS_REASONING)],
        ..family("command-r7b.jinja", "command-r7b")
    },
    Family {
        bos: DEEPSEEK_BOS,
        eos: DEEPSEEK_EOS,
        stops: &[DEEPSEEK_EOS],
        string_arguments: true,
        known: &[
            (Turn::Content, FORCED_OPEN),
            (Turn::Reasoning, FORCED_OPEN),
            (Turn::OneCall, FORCED_OPEN),
            (Turn::TwoCalls, FORCED_OPEN),
        ],
        ..family("deepseek-r1-distill-llama.jinja", "deepseek-r1")
    },
    Family {
        bos: DEEPSEEK_BOS,
        eos: DEEPSEEK_EOS,
        stops: &[DEEPSEEK_EOS],
        string_arguments: true,
        known: &[
            (Turn::Content, FORCED_OPEN),
            (Turn::Reasoning, FORCED_OPEN),
            (Turn::OneCall, FORCED_OPEN),
            (Turn::TwoCalls, FORCED_OPEN),
        ],
        ..family("deepseek-r1-distill-qwen.jinja", "deepseek-r1")
    },
    Family {
        bos: DEEPSEEK_BOS,
        eos: DEEPSEEK_EOS,
        stops: &[DEEPSEEK_EOS],
        string_arguments: true,
        known: &[
            (Turn::Content, DEEPSEEK_LLAMACPP),
            (Turn::Reasoning, DEEPSEEK_LLAMACPP),
            (Turn::OneCall, DEEPSEEK_LLAMACPP),
            (Turn::TwoCalls, DEEPSEEK_LLAMACPP),
        ],
        ..family("deepseek-r1-llamacpp.jinja", "deepseek-r1")
    },
    Family {
        bos: DEEPSEEK_BOS,
        eos: DEEPSEEK_EOS,
        stops: &[DEEPSEEK_EOS],
        string_arguments: true,
        thinking: false,
        known: &[(Turn::Reasoning, DROPS_REASONING)],
        ..family("deepseek-v3.1.jinja", "deepseek-v3.1")
    },
    Family {
        bos: "<|begin_of_text|>",
        stops: LLAMA_STOPS,
        string_arguments: true,
        known: &[(Turn::Reasoning, NO_REASONING)],
        ..family("functionary-v3.1.jinja", "functionary-v3.1")
    },
    Family {
        bos: "<|begin_of_text|>",
        stops: LLAMA_STOPS,
        string_arguments: true,
        known: &[(Turn::Reasoning, NO_REASONING)],
        ..family("functionary-v3.2.jinja", "functionary-v3.2")
    },
    Family {
        bos: "<bos>",
        eos: "<eos>",
        stops: &["<end_of_turn>"],
        known: &[
            (Turn::Reasoning, NO_REASONING),
            (Turn::OneCall, GEMMA3_COMMAS),
            (Turn::TwoCalls, GEMMA3_COMMAS),
        ],
        ..family("gemma-3-vllm-pythonic.jinja", "gemma-3")
    },
    Family {
        bos: "<bos>",
        eos: "<eos>",
        stops: &["<turn|>"],
        known: &[(Turn::Reasoning, DROPS_REASONING)],
        ..family("gemma-4-31b-it.jinja", "gemma4")
    },
    Family {
        bos: "<bos>",
        eos: "<eos>",
        stops: &["<turn|>"],
        known: &[(Turn::Reasoning, DROPS_REASONING)],
        ..family("gemma4.jinja", "gemma4")
    },
    Family {
        stops: &["<|user|>", "<|observation|>", "<|endoftext|>"],
        ..family("glm-4.5-llamacpp.jinja", "glm-4.5")
    },
    Family {
        stops: &["<|user|>", "<|observation|>", "<|endoftext|>"],
        ..family("glm-4.6.jinja", "glm-4.5")
    },
    Family {
        stops: &["<|return|>", "<|call|>"],
        known: &[(Turn::TwoCalls, ONE_CALL_PER_TURN)],
        ..family("gpt-oss.jinja", "gpt-oss")
    },
    Family {
        stops: &["<|end_of_text|>"],
        known: &[
            (Turn::Reasoning, DROPS_REASONING),
            (Turn::OneCall, CALLS_NOT_RENDERED),
            (Turn::TwoCalls, CALLS_NOT_RENDERED),
        ],
        ..family("granite-3.3.jinja", "granite-3.3")
    },
    Family {
        known: &[(Turn::Reasoning, NO_REASONING)],
        ..family("hermes-2-pro-vllm.jinja", "hermes-2-pro")
    },
    Family {
        known: &[(Turn::Reasoning, NO_REASONING)],
        ..family("hermes-2-pro.jinja", "hermes-2-pro")
    },
    Family {
        known: &[(Turn::Reasoning, NO_REASONING)],
        ..family("hermes-3.jinja", "hermes-2-pro")
    },
    Family {
        ids: Ids::Kimi,
        known: &[
            (Turn::Reasoning, DROPS_REASONING),
            (Turn::OneCall, CALLS_NOT_RENDERED),
            (Turn::TwoCalls, CALLS_NOT_RENDERED),
        ],
        ..family("kimi-k2-early.jinja", "kimi-k2")
    },
    Family {
        ids: Ids::Kimi,
        known: &[
            (Turn::Reasoning, DROPS_REASONING),
            (Turn::OneCall, KIMI_APPEND),
            (Turn::TwoCalls, KIMI_APPEND),
        ],
        ..family("kimi-k2-instruct.jinja", "kimi-k2")
    },
    Family {
        ids: Ids::Kimi,
        known: &[(Turn::Reasoning, KIMI_THINKING)],
        ..family("kimi-k2-thinking.jinja", "kimi-k2-thinking")
    },
    Family {
        known: &[
            (Turn::Reasoning, DROPS_REASONING),
            (Turn::OneCall, LFM2_CALLS),
            (Turn::TwoCalls, LFM2_CALLS),
        ],
        ..family("lfm2-llamacpp.jinja", "lfm2")
    },
    Family {
        known: &[
            (Turn::Reasoning, DROPS_REASONING),
            (Turn::OneCall, CALLS_NOT_RENDERED),
            (Turn::TwoCalls, CALLS_NOT_RENDERED),
        ],
        ..family("lfm2.jinja", "lfm2")
    },
    Family {
        bos: "<|begin_of_text|>",
        stops: LLAMA_STOPS,
        known: &[
            (Turn::Reasoning, NO_REASONING),
            (Turn::TwoCalls, LLAMA_ONE_CALL),
        ],
        ..family("llama-3.1.jinja", "llama-3.1")
    },
    Family {
        bos: "<|begin_of_text|>",
        stops: LLAMA_STOPS,
        known: &[
            (Turn::Reasoning, NO_REASONING),
            (Turn::TwoCalls, LLAMA_ONE_CALL),
        ],
        ..family("llama-3.2.jinja", "llama-3.1")
    },
    Family {
        bos: "<|begin_of_text|>",
        stops: LLAMA_STOPS,
        known: &[
            (Turn::Reasoning, NO_REASONING),
            (Turn::TwoCalls, LLAMA_ONE_CALL),
        ],
        ..family("llama-3.3.jinja", "llama-3.1")
    },
    Family {
        stops: &["[e~["],
        known: &[
            (Turn::Content, FORCED_OPEN),
            (Turn::OneCall, FORCED_OPEN),
            (Turn::TwoCalls, FORCED_OPEN),
        ],
        ..family("minimax-m2.jinja", "minimax-m2")
    },
    Family {
        bos: "<s>",
        eos: "</s>",
        stops: &["</s>"],
        ids: Ids::NineChars,
        known: &[(Turn::Reasoning, NO_REASONING)],
        ..family("mistral-nemo.jinja", "mistral-nemo")
    },
    Family {
        bos: "<s>",
        eos: "</s>",
        stops: &["</s>"],
        ids: Ids::NineChars,
        known: &[(Turn::Reasoning, NO_REASONING)],
        ..family("mistral-small-3.1.jinja", "mistral-nemo")
    },
    Family {
        bos: "<s>",
        eos: "</s>",
        stops: &["</s>"],
        ids: Ids::NineChars,
        known: &[(Turn::Reasoning, NO_REASONING)],
        ..family("mistral-small-3.2.jinja", "mistral-small-3.2")
    },
    Family {
        stops: &["<SPECIAL_12>"],
        known: &[
            (Turn::Reasoning, DROPS_REASONING),
            (Turn::OneCall, NEMOTRON_CALLS),
            (Turn::TwoCalls, NEMOTRON_CALLS),
        ],
        system: Some("/no_think"),
        ..family("nemotron-nano-v2.jinja", "nemotron-nano-v2")
    },
    Family {
        stops: &["<|end|>"],
        known: &[
            (Turn::Reasoning, NO_REASONING),
            (Turn::OneCall, PHI_LLAMACPP),
            (Turn::TwoCalls, PHI_LLAMACPP),
        ],
        ..family("phi-4-mini-llamacpp.jinja", "phi-4-mini")
    },
    Family {
        known: &[(Turn::Reasoning, NO_REASONING)],
        ..family("qwen2.5-instruct.jinja", "qwen2.5")
    },
    Family {
        known: &[(Turn::Reasoning, NO_REASONING)],
        ..family("qwen3-coder-llamacpp.jinja", "qwen3-coder")
    },
    Family {
        known: &[(Turn::Reasoning, NO_REASONING)],
        ..family("qwen3-coder.jinja", "qwen3-coder")
    },
    Family {
        known: &[
            (Turn::Content, FORCED_OPEN),
            (Turn::OneCall, FORCED_OPEN),
            (Turn::TwoCalls, FORCED_OPEN),
        ],
        ..family("qwen3.5.jinja", "qwen3.5")
    },
    Family {
        ..family("qwen3.jinja", "qwen3")
    },
    Family {
        known: &[
            (Turn::Content, FORCED_OPEN),
            (Turn::Reasoning, FORCED_OPEN),
            (Turn::OneCall, FORCED_OPEN),
            (Turn::TwoCalls, FORCED_OPEN),
        ],
        ..family("qwq-32b.jinja", "qwq")
    },
    Family {
        stops: &["<seed:eos>"],
        ..family("seed-oss.jinja", "seed-oss")
    },
    Family {
        known: &[
            (Turn::Reasoning, DROPS_REASONING),
            (Turn::OneCall, CALLS_NOT_RENDERED),
            (Turn::TwoCalls, CALLS_NOT_RENDERED),
        ],
        ..family("smollm3-llamacpp-unsloth.jinja", "smollm3")
    },
    Family {
        known: &[
            (Turn::Reasoning, DROPS_REASONING),
            (Turn::OneCall, CALLS_NOT_RENDERED),
            (Turn::TwoCalls, CALLS_NOT_RENDERED),
        ],
        ..family("smollm3.jinja", "smollm3")
    },
    // Families whose only chat template is llama.cpp's copy.
    Family {
        stops: &["<|end_of_msg|>"],
        ..llamacpp("Kimi-K3.jinja", "kimi-k3")
    },
    Family {
        stops: &["[e~["],
        ..llamacpp("MiniMax-M3.jinja", "minimax-m3")
    },
    Family {
        bos: "<begin_of_document>",
        eos: "<end_of_sentence>",
        stops: &["<end_of_sentence>"],
        known: &[(Turn::Reasoning, DROPS_REASONING)],
        ..llamacpp("MiniMax-M1.jinja", "minimax-m1")
    },
    Family {
        stops: &["<｜hy_eos:opensource｜>"],
        // (Thinking follows `reasoning_effort`, which the table leaves at
        // the template's default, no thinking.)
        known: &[(Turn::Reasoning, THINKING_OFF_HISTORY)],
        ..llamacpp("tencent-Hy3.jinja", "hunyuan-3")
    },
    Family {
        bos: "<s>",
        eos: "<|endoftext|>",
        stops: &["<|end|>"],
        known: &[
            (Turn::Reasoning, NO_REASONING),
            (Turn::OneCall, CALLS_NOT_RENDERED),
            (Turn::TwoCalls, CALLS_NOT_RENDERED),
        ],
        ..llamacpp("microsoft-Phi-3.5-mini-instruct.jinja", "phi-3.5")
    },
    Family {
        bos: DEEPSEEK_BOS,
        eos: DEEPSEEK_EOS,
        stops: &[DEEPSEEK_EOS],
        ..llamacpp("deepseek-ai-DeepSeek-V4.jinja", "deepseek-v4")
    },
    Family {
        bos: DEEPSEEK_BOS,
        eos: DEEPSEEK_EOS,
        stops: &[DEEPSEEK_EOS],
        ..llamacpp("deepseek-ai-DeepSeek-V4-Flash-0731.jinja", "deepseek-v4")
    },
    Family {
        bos: "<BOS_TOKEN>",
        stops: &["<|END_OF_TURN_TOKEN|>"],
        known: &[
            (Turn::Content, COHERE_TOOL_USE),
            (Turn::Reasoning, COHERE_TOOL_USE),
            (Turn::OneCall, COHERE_TOOL_USE),
            (Turn::TwoCalls, COHERE_TOOL_USE),
        ],
        ..llamacpp(
            "CohereForAI-c4ai-command-r-plus-tool_use.jinja",
            "command-r-plus",
        )
    },
    Family {
        stops: &["<|eot|>"],
        ..llamacpp("muse-glimmer.jinja", "muse-glimmer")
    },
    Family {
        stops: LAGUNA_STOPS,
        ..llamacpp("poolside-Laguna-S-2.1.jinja", "laguna")
    },
    Family {
        stops: LAGUNA_STOPS,
        thinking: false,
        known: &[(Turn::Reasoning, THINKING_OFF_HISTORY)],
        ..llamacpp("poolside-Laguna-XS-2.1.jinja", "laguna")
    },
    Family {
        stops: LAGUNA_STOPS,
        thinking: false,
        known: &[(Turn::Reasoning, THINKING_OFF_HISTORY)],
        ..llamacpp("poolside-Laguna-XS.2.jinja", "laguna")
    },
    Family {
        stops: &["<|calls|>"],
        known: &[(Turn::Reasoning, SOLAR_REASONING)],
        ..llamacpp("upstage-Solar-Open-100B.jinja", "solar-open")
    },
    Family {
        bos: "<s>",
        thinking: false,
        ..llamacpp("Bielik-11B-v3.0-Instruct.jinja", "bielik")
    },
];
