//! From a model to its bundled response template, at run time.
//!
//! Every template in the repository's `templates/` is bundled as JSON (a few
//! KiB each, whatever cargo features are on), so an application that learns
//! which model it talks to only at run time can still get the right parser:
//!
//! - by family name: [`resolve`]`("qwen3")`;
//! - by Hugging Face repo id: [`resolve`]`("Qwen/Qwen3-8B")`, also
//!   quantised copies (`"unsloth/Qwen3-8B-GGUF"`) and `https://huggingface.co/…`
//!   addresses — each family has a table of repo-id patterns
//!   ([`Family::repo_patterns`]);
//! - from a model's `tokenizer_config.json`: [`from_tokenizer_config`] uses
//!   its own `response_template` when it has one, and otherwise recognises
//!   the family from the special tokens its `chat_template` renders
//!   ([`Family::chat_template_markers`]).
//!
//! ```
//! use retort::registry;
//!
//! let family = registry::resolve("Qwen/Qwen3-8B")?;
//! assert_eq!(family.name(), "qwen3");
//! let template = family.template()?;
//! let mut parser = template.parser("<|im_start|>assistant\n")?;
//! parser.feed("<think>Short.</think>Hi!<|im_end|>")?;
//! let (message, _) = parser.finalize()?;
//! assert_eq!(retort::AssistantMessage::content(&message), Some("Hi!"));
//!
//! // Nothing matches: the error lists what would.
//! let err = registry::resolve("Qwen/Qwen9-1B").unwrap_err();
//! assert!(err.to_string().contains("qwen3"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The compiled counterparts of the same templates are in
//! [`crate::models`], behind cargo features.

use crate::models::BUNDLED;
use crate::{Template, TemplateError, Value};
use std::fmt;
use std::sync::LazyLock;

/// What the registry knows of a family beyond its template: how its
/// Hugging Face repos are named and which tokens its chat template renders.
struct Known {
    name: &'static str,
    repos: &'static [&'static str],
    markers: &'static [&'static [&'static str]],
}

/// Repo-id patterns (`*` is any run of characters; case is ignored) and
/// chat-template markers per family. A family without an entry (or without
/// markers) is still found by its name. Markers are literal substrings of
/// the family's chat template (special tokens, mostly), all of a set at
/// once; the set with the most markers wins, then the longest in total, so
/// a family whose format extends another's lists more of them (`qwen3.5`
/// over `qwen3-coder`, `devstral` over `mistral-small-3.2`). Families with
/// a chat template in the project's shared corpus are checked against it
/// by `retort-tests`' round trip; the others' markers come from their
/// response templates' delimiters, and families whose chat templates differ
/// from a sibling's in no token this table can name (ERNIE 4.5, GLM-4.7,
/// Nemotron-3, Step-3.5, Reka-Edge, Firefunction v2) have none.
const KNOWN: &[Known] = &[
    Known {
        name: "apertus",
        repos: &["*/Apertus-*"],
        markers: &[&["<|assistant_start|>", "<|tools_prefix|>"]],
    },
    Known {
        name: "apriel",
        repos: &["*/Apriel-*"],
        markers: &[
            &["<|begin_assistant|>", "<tool_calls>"],
            &["<|assistant|>", "<tool_calls>", "<|end|>"],
        ],
    },
    Known {
        name: "bielik",
        repos: &["*/Bielik-*"],
        markers: &[&["<|im_start|>", "<|function_output|>"]],
    },
    Known {
        name: "command-a",
        repos: &["*/c4ai-command-a-*", "*/command-a-*"],
        markers: &[&[
            "<|START_OF_TURN_TOKEN|>",
            "<|START_THINKING|>",
            "<|START_ACTION|>",
            "<|START_TEXT|>",
        ]],
    },
    Known {
        name: "command-r-plus",
        repos: &["*/c4ai-command-r-plus*", "*/command-r-plus*"],
        markers: &[&[
            "<|START_OF_TURN_TOKEN|>",
            "<|CHATBOT_TOKEN|>",
            "directly-answer",
        ]],
    },
    Known {
        name: "command-r7b",
        repos: &["*/c4ai-command-r7b-*", "*/command-r7b-*"],
        markers: &[&[
            "<|START_OF_TURN_TOKEN|>",
            "<|START_THINKING|>",
            "<|START_ACTION|>",
        ]],
    },
    Known {
        name: "deepseek-r1",
        repos: &["*/DeepSeek-R1*"],
        markers: &[&["<｜Assistant｜>", "<｜tool▁call▁begin｜>", "<think>"]],
    },
    Known {
        name: "deepseek-v3",
        repos: &["*/DeepSeek-V3", "*/DeepSeek-V3-Base", "*/DeepSeek-V3-0324*"],
        markers: &[&["<｜Assistant｜>", "<｜tool▁call▁begin｜>"]],
    },
    Known {
        name: "deepseek-v3.1",
        repos: &["*/DeepSeek-V3.1*"],
        markers: &[&[
            "<｜Assistant｜>",
            "<｜tool▁call▁begin｜>",
            "</think>",
            "thinking is defined",
        ]],
    },
    Known {
        name: "deepseek-v3.2",
        repos: &["*/DeepSeek-V3.2*"],
        markers: &[&["｜DSML｜"]],
    },
    Known {
        name: "deepseek-v4",
        repos: &["*/DeepSeek-V4*"],
        markers: &[&["｜DSML｜", "tool_calls>", "<tool_result>"]],
    },
    Known {
        name: "devstral",
        repos: &["*/Devstral-*"],
        markers: &[&[
            "[INST]",
            "[TOOL_CALLS]",
            "[AVAILABLE_TOOLS]",
            "[ARGS]",
            "Devstral",
        ]],
    },
    Known {
        name: "ernie-4.5",
        repos: &["*/ERNIE-4.5-*"],
        markers: &[],
    },
    Known {
        name: "firefunction-v2",
        repos: &["*/firefunction-v2*"],
        markers: &[],
    },
    Known {
        name: "functionary-v3.1",
        repos: &["*/functionary-*v3.1*"],
        markers: &[&[
            "<|start_header_id|>",
            "<|eot_id|>",
            "<function=",
            "<|python_tag|>",
        ]],
    },
    Known {
        name: "functionary-v3.2",
        repos: &["*/functionary-*v3.2*"],
        markers: &[&["<|start_header_id|>", "<|eot_id|>", ">>>all"]],
    },
    Known {
        name: "gemma-3",
        repos: &["*/gemma-3-*", "*/gemma-3n-*"],
        markers: &[&["<start_of_turn>", "<end_of_turn>"]],
    },
    Known {
        name: "gemma4",
        repos: &["*/gemma-4-*"],
        markers: &[&["<|turn>", "<|tool_call>", "<|channel>"]],
    },
    Known {
        name: "gigachat3",
        repos: &["*/GigaChat3*"],
        markers: &[&["<|role_sep|>", "<|message_sep|>"]],
    },
    Known {
        name: "glm-4.5",
        repos: &["*/GLM-4.5*", "*/GLM-4.6*"],
        markers: &[&["<|assistant|>", "<arg_key>", "<arg_value>"]],
    },
    Known {
        name: "glm-4.7",
        repos: &["*/GLM-4.7*"],
        markers: &[],
    },
    Known {
        name: "gpt-oss",
        repos: &["*/gpt-oss-*"],
        markers: &[&["<|start|>", "<|channel|>", "<|message|>"]],
    },
    Known {
        name: "granite-3.3",
        repos: &["*/granite-3.2-*", "*/granite-3.3-*"],
        markers: &[&["<|start_of_role|>", "<|tool_call|>"]],
    },
    Known {
        name: "granite-4",
        repos: &["*/granite-4.*"],
        markers: &[&["<|start_of_role|>", "<tool_call>"]],
    },
    Known {
        name: "hermes-2-pro",
        repos: &["*/Hermes-2-Pro-*", "*/Hermes-3-*"],
        markers: &[&["<|im_start|>", "<tool_call>", "<args-dict>"]],
    },
    Known {
        name: "hunyuan-3",
        repos: &["*/Hy3", "*/Hy3-*"],
        markers: &[&["<｜hy_User", "<｜hy_Assistant", "<arg_key"]],
    },
    Known {
        name: "kimi-k2",
        repos: &["*/Kimi-K2-*", "*/Kimi-K2"],
        markers: &[&["<|im_assistant|>", "<|im_middle|>"]],
    },
    Known {
        name: "kimi-k2-thinking",
        repos: &["*/Kimi-K2-Thinking*"],
        markers: &[&["<|im_assistant|>", "<|im_middle|>", "<think>"]],
    },
    Known {
        name: "kimi-k3",
        repos: &["*/Kimi-K3-*", "*/Kimi-K3"],
        markers: &[&["<|open|>", "<|close|>", "<|sep|>", "<|end_of_msg|>"]],
    },
    Known {
        name: "laguna",
        repos: &["*/Laguna-*"],
        markers: &[&["〈|EOS|〉", "<assistant>", "<arg_key>"]],
    },
    Known {
        name: "lfm2",
        repos: &["*/LFM2-*", "*/LFM2.5-*"],
        markers: &[&["<|im_start|>", "<|tool_list_start|>"]],
    },
    Known {
        name: "ling",
        repos: &["*/Ling-*"],
        markers: &[&["<role>ASSISTANT</role>", "<tool_call>"]],
    },
    Known {
        name: "llama-3.1",
        repos: &[
            "*/Llama-3.1-*",
            "*/Meta-Llama-3.1-*",
            "*/Llama-3.2-*",
            "*/Llama-3.3-*",
        ],
        markers: &[&["<|start_header_id|>", "<|eot_id|>", "Environment: ipython"]],
    },
    Known {
        name: "magistral",
        repos: &["*/Magistral-*"],
        markers: &[&["[INST]", "[TOOL_CALLS]", "[ARGS]", "[THINK]", "[/THINK]"]],
    },
    Known {
        name: "minicpm5",
        repos: &["*/MiniCPM5*"],
        markers: &[&["<|im_start|>", "<function name="]],
    },
    Known {
        name: "minimax-m1",
        repos: &["*/MiniMax-M1*"],
        markers: &[&[
            "<beginning_of_sentence>",
            "<end_of_sentence>",
            "<tool_calls>",
        ]],
    },
    Known {
        name: "minimax-m2",
        repos: &["*/MiniMax-M2*"],
        markers: &[&["]~b]", "<minimax:tool_call>"]],
    },
    Known {
        name: "minimax-m3",
        repos: &["*/MiniMax-M3*"],
        markers: &[&["]~b]", "]<]minimax[>[", "<mm:think>"]],
    },
    Known {
        name: "mistral-nemo",
        repos: &["*/Mistral-Nemo-*", "*/Mistral-Small-3.1-*"],
        markers: &[&["[INST]", "[TOOL_CALLS]", "[AVAILABLE_TOOLS]"]],
    },
    Known {
        name: "mistral-small-3.2",
        repos: &["*/Mistral-Small-3.2-*"],
        markers: &[&["[INST]", "[TOOL_CALLS]", "[AVAILABLE_TOOLS]", "[ARGS]"]],
    },
    Known {
        name: "muse-glimmer",
        repos: &["*/muse-glimmer*"],
        markers: &[&["<|start|>", "<|message|>", "<atem:function_calls>"]],
    },
    Known {
        name: "nemotron-3",
        repos: &["*/*Nemotron-3-*"],
        markers: &[],
    },
    Known {
        name: "nemotron-nano-v2",
        repos: &["*/*Nemotron-Nano-*v2*"],
        markers: &[&["<SPECIAL_11>", "<TOOLCALL>"]],
    },
    Known {
        name: "phi-3.5",
        repos: &["*/Phi-3.5-mini-*"],
        markers: &[&["<|user|>", "<|assistant|>", "<|end|>"]],
    },
    Known {
        name: "phi-4-mini",
        repos: &["*/Phi-4-mini-*"],
        markers: &[&["<|assistant|>", "<|tool_call|>", "<|end|>"]],
    },
    Known {
        name: "qwen2.5",
        repos: &["*/Qwen2.5-*"],
        markers: &[&["<|im_start|>", "<tool_call>", "<args-json-object>"]],
    },
    Known {
        name: "qwen3",
        repos: &["*/Qwen3-*"],
        markers: &[&[
            "<|im_start|>",
            "<tool_call>",
            "<args-json-object>",
            "<think>",
            "enable_thinking",
        ]],
    },
    Known {
        name: "qwen3-coder",
        repos: &["*/Qwen3-Coder-*"],
        markers: &[&["<|im_start|>", "<tool_call>", "<function=", "<parameter="]],
    },
    Known {
        name: "qwen3.5",
        repos: &["*/Qwen3.5-*"],
        markers: &[&[
            "<|im_start|>",
            "<tool_call>",
            "<function=",
            "<parameter=",
            "<think>",
            "<|vision_start|>",
        ]],
    },
    Known {
        name: "qwq",
        repos: &["*/QwQ-*"],
        markers: &[&[
            "<|im_start|>",
            "<tool_call>",
            "<args-json-object>",
            "<think>",
        ]],
    },
    Known {
        name: "reka-edge",
        repos: &["*/reka-edge*"],
        markers: &[],
    },
    Known {
        name: "seed-oss",
        repos: &["*/Seed-OSS-*"],
        markers: &[&["<seed:bos>", "<seed:tool_call>"]],
    },
    Known {
        name: "smollm3",
        repos: &["*/SmolLM3-*"],
        markers: &[&[
            "<|im_start|>",
            "<|im_end|>",
            "<think>",
            "/no_think",
            "/think",
            "SmolLM",
        ]],
    },
    Known {
        name: "solar-open",
        repos: &["*/Solar-Open-*"],
        markers: &[&["<|begin|>", "<|tool_call:begin|>"]],
    },
    Known {
        name: "step-3.5",
        repos: &["*/Step-3.5-*"],
        markers: &[],
    },
    Known {
        name: "step3",
        repos: &["*/step3", "*/step3-*"],
        markers: &[&["<steptml:invoke"]],
    },
];

/// A bundled model family: its response template and how to recognise it.
#[derive(Debug)]
pub struct Family {
    name: &'static str,
    json: &'static str,
    repos: &'static [&'static str],
    markers: &'static [&'static [&'static str]],
}

impl Family {
    /// The family's name: its template's file stem (`"qwen3"`, `"glm-4.5"`).
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The bundled response template, as JSON.
    pub fn json(&self) -> &'static str {
        self.json
    }

    /// The cargo feature that compiles this family into [`crate::models`]
    /// (`"model-qwen3"`).
    pub fn feature(&self) -> String {
        format!("model-{}", self.name)
    }

    /// The Hugging Face repo-id patterns that name this family (`*` is any
    /// run of characters, case is ignored).
    pub fn repo_patterns(&self) -> &'static [&'static str] {
        self.repos
    }

    /// The marker sets that recognise this family's chat template: each a
    /// list of literals that all occur in it.
    pub fn chat_template_markers(&self) -> &'static [&'static [&'static str]] {
        self.markers
    }

    /// Loads the bundled template into a run-time [`Template`].
    pub fn template(&self) -> Result<Template, TemplateError> {
        Template::from_json(self.json)
    }
}

static FAMILIES: LazyLock<Vec<Family>> = LazyLock::new(|| {
    BUNDLED
        .iter()
        .map(|&(name, json)| {
            let known = KNOWN.iter().find(|k| k.name == name);
            Family {
                name,
                json,
                repos: known.map_or(&[], |k| k.repos),
                markers: known.map_or(&[], |k| k.markers),
            }
        })
        .collect()
});

/// Every bundled family, sorted by name.
pub fn families() -> &'static [Family] {
    &FAMILIES
}

/// Names of the families the registry has repo patterns or markers for but
/// whose template is not bundled (a stale table; the crate's tests keep it
/// empty).
#[doc(hidden)]
pub fn unbundled_entries() -> Vec<&'static str> {
    KNOWN
        .iter()
        .filter(|k| !BUNDLED.iter().any(|(n, _)| *n == k.name))
        .map(|k| k.name)
        .collect()
}

/// Why the registry could not name a template.
#[derive(Debug)]
#[non_exhaustive]
pub enum RegistryError {
    /// No family has this name and no repo-id pattern matches it.
    Unknown {
        /// What was looked up.
        query: String,
        /// The families it may have meant (all of them when nothing is
        /// close).
        candidates: Vec<&'static str>,
    },
    /// Several families match equally well.
    Ambiguous {
        /// What was looked up (a repo id, or `chat_template`).
        query: String,
        /// The families that match.
        candidates: Vec<&'static str>,
    },
    /// A chat template has none of the families' marker sets.
    Unrecognised {
        /// Families whose markers partly occur in it, best first (all
        /// families when none do).
        candidates: Vec<&'static str>,
    },
    /// The `tokenizer_config.json` is not JSON, not an object, or has
    /// neither a `response_template` nor a `chat_template`.
    Config {
        /// What is wrong with it.
        message: String,
    },
    /// The config's own `response_template` is broken.
    Template(TemplateError),
}

impl fmt::Display for RegistryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegistryError::Unknown { query, candidates } => write!(
                f,
                "no bundled model family is named or matches `{query}`; candidates: {}",
                candidates.join(", ")
            ),
            RegistryError::Ambiguous { query, candidates } => write!(
                f,
                "`{query}` matches several model families equally well: {}",
                candidates.join(", ")
            ),
            RegistryError::Unrecognised { candidates } => write!(
                f,
                "the chat template has the markers of no bundled model family; candidates: {}",
                candidates.join(", ")
            ),
            RegistryError::Config { message } => write!(f, "tokenizer_config.json: {message}"),
            RegistryError::Template(e) => {
                write!(f, "tokenizer_config.json: its response_template: {e}")
            }
        }
    }
}

impl std::error::Error for RegistryError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RegistryError::Template(e) => Some(e),
            _ => None,
        }
    }
}

/// Names compare with case and punctuation ignored: `glm_4_5` (a module
/// name) finds `glm-4.5`.
fn normalise(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect()
}

/// The family of this name (see [`Family::name`]), with case and
/// punctuation ignored.
pub fn family(name: &str) -> Result<&'static Family, RegistryError> {
    let wanted = normalise(name.trim());
    families()
        .iter()
        .find(|f| normalise(f.name) == wanted)
        .ok_or_else(|| unknown(name))
}

/// A family name ([`family`]) or else a Hugging Face repo id
/// ([`from_repo_id`]).
pub fn resolve(query: &str) -> Result<&'static Family, RegistryError> {
    family(query).or_else(|_| from_repo_id(query))
}

/// The family of a Hugging Face repo id (`"Qwen/Qwen3-8B"`,
/// `"https://huggingface.co/openai/gpt-oss-20b"`, or the bare name
/// `"Qwen3-8B"`): the family with the pattern that matches with the most
/// literal characters.
pub fn from_repo_id(repo: &str) -> Result<&'static Family, RegistryError> {
    let id = repo_id(repo);
    // A bare model name (`Qwen3-8B`) matches the patterns' `*/` part as an
    // empty organisation.
    let owned;
    let id = if id.contains('/') {
        id
    } else {
        owned = format!("/{id}");
        owned.as_str()
    };
    let mut best: Vec<(&'static Family, usize)> = Vec::new();
    for family in families() {
        let score = family
            .repos
            .iter()
            .filter(|p| glob_match(p.as_bytes(), id.as_bytes()))
            .map(|p| p.len() - p.matches('*').count())
            .max();
        if let Some(score) = score {
            match best.first() {
                Some(&(_, s)) if s > score => {}
                Some(&(_, s)) if s == score => best.push((family, score)),
                _ => best = vec![(family, score)],
            }
        }
    }
    match best.len() {
        0 => Err(unknown(repo)),
        1 => Ok(best[0].0),
        _ => Err(RegistryError::Ambiguous {
            query: repo.to_owned(),
            candidates: best.iter().map(|(f, _)| f.name).collect(),
        }),
    }
}

/// The repo id in a Hugging Face address, without the host, a trailing
/// slash or a `tree/<revision>` tail.
fn repo_id(text: &str) -> &str {
    let mut id = text.trim().trim_end_matches('/');
    for host in [
        "https://huggingface.co/",
        "http://huggingface.co/",
        "hf.co/",
    ] {
        if let Some(rest) = id.strip_prefix(host) {
            id = rest;
        }
    }
    match id.find("/tree/").or_else(|| id.find("/blob/")) {
        Some(i) => &id[..i],
        None => id,
    }
}

/// `*` matches any run of bytes; ASCII case is ignored.
fn glob_match(pattern: &[u8], text: &[u8]) -> bool {
    // Iterative matching with one backtrack point: linear enough for
    // repo ids, and no recursion on hostile input.
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        if p < pattern.len() && pattern[p] == b'*' {
            star = Some((p, t));
            p += 1;
        } else if p < pattern.len() && pattern[p].eq_ignore_ascii_case(&text[t]) {
            p += 1;
            t += 1;
        } else if let Some((sp, st)) = star {
            p = sp + 1;
            t = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|&b| b == b'*')
}

fn unknown(query: &str) -> RegistryError {
    let q = normalise(query);
    // A family is a likely meaning when the query names its leading word
    // (`qwen` in `Qwen/Qwen9-1B`).
    let mut candidates: Vec<&'static str> = families()
        .iter()
        .filter(|f| {
            let word: String = normalise(f.name)
                .chars()
                .take_while(char::is_ascii_alphabetic)
                .collect();
            word.len() >= 3 && q.contains(&word)
        })
        .map(|f| f.name)
        .collect();
    if candidates.is_empty() {
        candidates = families().iter().map(|f| f.name).collect();
    }
    RegistryError::Unknown {
        query: query.to_owned(),
        candidates,
    }
}

/// The family whose chat template this is, from the special tokens it
/// renders: the family with a marker set wholly present and the most
/// markers (then the longest), an error naming the near misses otherwise.
pub fn from_chat_template(chat_template: &str) -> Result<&'static Family, RegistryError> {
    let mut best: Vec<&'static Family> = Vec::new();
    let mut best_score = (0, 0);
    let mut partial: Vec<(&'static Family, usize)> = Vec::new();
    for family in families() {
        let mut family_score = None;
        let mut seen = 0;
        for set in family.markers {
            let present = set.iter().filter(|m| chat_template.contains(**m)).count();
            seen = seen.max(present * 100 / set.len().max(1));
            if present == set.len() && !set.is_empty() {
                let score = (set.len(), set.iter().map(|m| m.len()).sum::<usize>());
                family_score = family_score.max(Some(score));
            }
        }
        match family_score {
            Some(score) if score > best_score => {
                best = vec![family];
                best_score = score;
            }
            Some(score) if score == best_score => best.push(family),
            _ => {}
        }
        if seen > 0 {
            partial.push((family, seen));
        }
    }
    match best.len() {
        1 => Ok(best[0]),
        0 => {
            partial.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.name.cmp(b.0.name)));
            let mut candidates: Vec<&'static str> = partial.iter().map(|(f, _)| f.name).collect();
            if candidates.is_empty() {
                candidates = families().iter().map(|f| f.name).collect();
            }
            Err(RegistryError::Unrecognised { candidates })
        }
        _ => Err(RegistryError::Ambiguous {
            query: "chat_template".to_owned(),
            candidates: best.iter().map(|f| f.name).collect(),
        }),
    }
}

/// A template found for a `tokenizer_config.json`.
#[derive(Debug)]
pub struct Resolved {
    /// The template to parse the model's output with.
    pub template: Template,
    /// The bundled family it was recognised as; `None` when the config
    /// brought its own `response_template`.
    pub family: Option<&'static Family>,
}

/// The template for a model's `tokenizer_config.json` (its text): its own
/// `response_template` when it has one, otherwise the bundled family its
/// `chat_template` is recognised as ([`from_chat_template`]). A
/// `chat_template` may be a string or a list of named templates (all are
/// searched).
pub fn from_tokenizer_config(json: &str) -> Result<Resolved, RegistryError> {
    let value = crate::py::json_loads(json).map_err(|e| RegistryError::Config {
        message: format!("not JSON: {e}"),
    })?;
    let Value::Map(config) = &value else {
        return Err(RegistryError::Config {
            message: "not a JSON object".to_owned(),
        });
    };
    if config.contains_key("response_template") {
        // Loading the text (not the value) keeps line:column in errors.
        let template = Template::from_json(json).map_err(RegistryError::Template)?;
        return Ok(Resolved {
            template,
            family: None,
        });
    }
    let chat_template = match config.get("chat_template") {
        Some(Value::Str(text)) => text.clone(),
        Some(Value::List(items)) => {
            let mut all = String::new();
            for item in items {
                if let Value::Map(named) = item
                    && let Some(Value::Str(text)) = named.get("template")
                {
                    all.push_str(text);
                    all.push('\n');
                }
            }
            if all.is_empty() {
                return Err(RegistryError::Config {
                    message: "`chat_template` is a list without {\"name\", \"template\"} entries"
                        .to_owned(),
                });
            }
            all
        }
        Some(_) => {
            return Err(RegistryError::Config {
                message: "`chat_template` is neither a string nor a list".to_owned(),
            });
        }
        None => {
            return Err(RegistryError::Config {
                message: "has neither `response_template` nor `chat_template`".to_owned(),
            });
        }
    };
    let family = from_chat_template(&chat_template)?;
    let template = family.template().map_err(RegistryError::Template)?;
    Ok(Resolved {
        template,
        family: Some(family),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob_match(b"*/Qwen3-*", b"qwen/qwen3-8b"));
        assert!(glob_match(b"*/Qwen3-*", b"/Qwen3-"));
        assert!(!glob_match(b"*/Qwen3-*", b"Qwen/Qwen2.5-7B"));
        assert!(glob_match(b"a*b*c", b"axxbyybc"));
        assert!(!glob_match(b"a*b*c", b"axxbyyb"));
    }

    #[test]
    fn repo_ids_from_addresses() {
        assert_eq!(
            repo_id("https://huggingface.co/Qwen/Qwen3-8B/"),
            "Qwen/Qwen3-8B"
        );
        assert_eq!(
            repo_id("hf.co/openai/gpt-oss-20b/tree/main"),
            "openai/gpt-oss-20b"
        );
    }
}
