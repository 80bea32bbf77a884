//! Round trip through the models' real chat templates.
//!
//! For each chat template in `../shared/chat-templates/*.jinja` (skipped
//! with a message when the directory is absent) and four last assistant
//! turns — (a) content, (b) reasoning and content, (c) one tool call,
//! (d) two tool calls, always with tools defined — this renders the
//! conversation the way transformers does (see [`environment`]): the
//! generation prompt (`add_generation_prompt=True`, without the last turn)
//! is the parser's prompt; the rendered full conversation minus that prompt,
//! cut after the first end-of-turn marker a generation stops at, is the
//! model's text. Parsing it with the family's bundled template must give the
//! message back: content and reasoning with outer whitespace ignored, tool
//! calls as name and arguments (compared as JSON).
//!
//! [`FAMILIES`] maps every chat template to its bundled template and lists,
//! per turn, why it cannot round trip where it cannot. The test fails on a
//! failure that is not listed, on a listed failure that now passes (so the
//! table stays true), on a chat template in the directory that the table
//! does not name, and when the registry does not recognise a chat template
//! as its family.
//!
//! `RETORT_ROUNDTRIP_DUMP=<dir>` writes each render's context and result
//! there, for `tools/roundtrip_jinja2.py`, which renders the same contexts
//! with jinja2 configured as transformers configures it and reports the
//! differences (how this environment was checked against jinja2).

use minijinja::value::{Kwargs, Serde, ValueKind};
use minijinja::{Environment, Error, ErrorKind, Value as J};
use retort::AssistantMessage;
use serde_json::{Value as Json, json};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// One of the four last assistant turns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Turn {
    /// (a) content only.
    Content,
    /// (b) reasoning and content.
    Reasoning,
    /// (c) one tool call.
    OneCall,
    /// (d) two tool calls.
    TwoCalls,
}

const TURNS: [Turn; 4] = [
    Turn::Content,
    Turn::Reasoning,
    Turn::OneCall,
    Turn::TwoCalls,
];

/// How a family's tool-call ids look in the chat template's history.
#[derive(Clone, Copy, Debug)]
enum Ids {
    /// `call_1`, `call_2`.
    Plain,
    /// Nine alphanumerics (Mistral's tokenizer requires them).
    NineChars,
    /// `functions.<name>:<index>` (Kimi-K2 renders the id as the call's header).
    Kimi,
}

/// A chat template and what to parse its renders with.
struct Family {
    /// The file in `../shared/chat-templates`.
    chat_template: &'static str,
    /// The bundled template (`templates/<name>.json`); `None` when retort
    /// bundles nothing for it (then `known` says why).
    template: Option<&'static str>,
    /// `bos_token` / `eos_token` as the model's tokenizer config sets them.
    bos: &'static str,
    eos: &'static str,
    /// The end-of-turn markers a generation stops at; the text is cut after
    /// the first of them.
    stops: &'static [&'static str],
    /// Tool-call arguments as a JSON string (what some templates expect)
    /// instead of a dict.
    string_arguments: bool,
    /// Tools as `{name, description, parameters}` rather than the OpenAI
    /// `{type: function, function: {…}}` wrapper (what the template reads).
    flat_tools: bool,
    /// `enable_thinking`: on for most families; off where the chat template
    /// renders history the way a thinking-off prompt continues.
    thinking: bool,
    /// A system message, where the template takes its switches from one
    /// (`/no_think`).
    system: Option<&'static str>,
    ids: Ids,
    /// Turns that cannot round trip, and why.
    known: &'static [(Turn, &'static str)],
}

// Why a turn cannot round trip, one reason per cause.
const NO_REASONING: &str = "the family does not reason: the chat template renders no reasoning_content (nor does the bundled template parse any)";
const DROPS_REASONING: &str =
    "the chat template drops reasoning_content from the assistant turn it renders";
const FORCED_OPEN: &str = "the generation prompt opens the reasoning (`<think>\\n`) but the chat template renders the assistant turn without it and without its reasoning, so the rendered turn is not what the model writes after that prompt (it would close `</think>` first)";
const CALLS_NOT_RENDERED: &str = "the chat template does not render an assistant turn's tool_calls";
const ONE_CALL_PER_TURN: &str = "the model makes one call per generation: it stops at the first `<|call|>`, which is also where the rendered turn is cut";
const LLAMA_ONE_CALL: &str =
    "the chat template raises \"This model only supports single tool-calls at once!\"";
const KIMI_APPEND: &str = "needs unsupported Jinja: the template calls `list.append`, which minijinja's immutable lists do not have";
const PHI_LLAMACPP: &str = "llama.cpp's edited template renders calls as `<|tool_call|>{…}<|/tool_call|>`; Phi-4-mini writes `functools[…]`, which the bundled template parses";
const LFM2_CALLS: &str = "llama.cpp's template renders calls as a JSON list; LFM2 writes Python calls (`[get_weather(city=\"Paris\")]`), which the bundled template parses";
const GEMMA3_COMMAS: &str = "the vLLM template renders a call's arguments without commas (`city=\"Paris\"unit=…`): its `set first = false` inside the loop does not outlive the iteration (jinja2 renders it the same)";
const APRIEL_15: &str = "Apriel writes its reasoning first and its answer inside `[BEGIN FINAL RESPONSE]`…`[END FINAL RESPONSE]`; this chat template renders a history answer without those markers (and drops the reasoning), so the answer reads as reasoning";
const APRIEL_16: &str = "the generation prompt opens the reasoning (`Here are my reasoning steps:\\n`) but history turns render without it";
const APERTUS_REASONING: &str = "the chat template renders reasoning only from Apertus's own `content.blocks` (type `thoughts`), not from reasoning_content";
const KIMI_THINKING: &str = "the chat template keeps reasoning_content only for turns after the last assistant turn without tool calls; a final answer renders `<think></think>`";
const NEMOTRON_CALLS: &str = "thinking off (`/no_think`), the generation prompt closes an empty `<think></think>`, but turns with tool calls render without it (thinking on, every turn renders after an open `<think>` without its reasoning)";
const DEEPSEEK_LLAMACPP: &str = "the generation prompt opens the reasoning (`<think>\\n`) but history turns render without it; besides, jinja2 (transformers) cannot render this template with tools at all (`tojson` of a generator)";

const QWEN_STOPS: &[&str] = &["<|im_end|>"];
const LLAMA_STOPS: &[&str] = &["<|eot_id|>", "<|eom_id|>"];
const DEEPSEEK_BOS: &str = "<｜begin▁of▁sentence｜>";
const DEEPSEEK_EOS: &str = "<｜end▁of▁sentence｜>";

const fn family(chat_template: &'static str, template: &'static str) -> Family {
    Family {
        chat_template,
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
const FAMILIES: &[Family] = &[
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
];

/// jinja2 as transformers configures it (`chat_template_utils.py`):
/// `trim_blocks`, `lstrip_blocks`, loop controls, `raise_exception`,
/// `strftime_now`, a `tojson` with Python's `json.dumps` arguments; plus
/// Python's str and dict methods (minijinja-contrib's `pycompat`), which
/// jinja2 gets from Python itself. `dict` and `namespace` are built in.
fn environment() -> Environment<'static> {
    let mut env = Environment::new();
    env.set_syntax(
        minijinja::syntax::SyntaxConfig::builder()
            .trim_blocks(true)
            .lstrip_blocks(true)
            .build()
            .expect("the default delimiters are valid"),
    );
    env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
    env.add_function("raise_exception", |message: String| -> Result<J, Error> {
        Err(Error::new(ErrorKind::InvalidOperation, message))
    });
    env.add_function("strftime_now", |format: String| strftime_fixed(&format));
    env.add_filter("tojson", tojson);
    env
}

/// `strftime_now` on a fixed instant (2024-07-26 12:00:00, a Friday), so
/// renders are reproducible and comparable with jinja2's.
fn strftime_fixed(format: &str) -> Result<String, Error> {
    let mut out = String::new();
    let mut chars = format.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let spec = chars.next().unwrap_or('%');
        let piece = match spec {
            'd' => "26",
            'm' => "07",
            'Y' => "2024",
            'y' => "24",
            'b' => "Jul",
            'B' => "July",
            'a' => "Fri",
            'A' => "Friday",
            'H' => "12",
            'M' | 'S' => "00",
            'j' => "208",
            '%' => "%",
            other => {
                return Err(Error::new(
                    ErrorKind::InvalidOperation,
                    format!("strftime_now: %{other} is not supported by the test environment"),
                ));
            }
        };
        out.push_str(piece);
    }
    Ok(out)
}

/// transformers' `tojson`: `json.dumps(x, ensure_ascii=False, indent=None,
/// separators=None, sort_keys=False)`, byte for byte.
fn tojson(value: J, kwargs: Kwargs) -> Result<J, Error> {
    let ensure_ascii: Option<bool> = kwargs.get("ensure_ascii")?;
    let indent: Option<J> = kwargs.get("indent")?;
    let separators: Option<Vec<String>> = kwargs.get("separators")?;
    let sort_keys: Option<bool> = kwargs.get("sort_keys")?;
    kwargs.assert_all_used()?;
    let indent = match indent {
        None => None,
        Some(v) if v.is_none() => None,
        Some(v) => match v.as_i64() {
            Some(n) => Some(" ".repeat(usize::try_from(n.max(0)).unwrap_or(0))),
            None => Some(v.as_str().map(str::to_owned).ok_or_else(|| {
                Error::new(
                    ErrorKind::InvalidOperation,
                    "tojson: indent must be an int or a str",
                )
            })?),
        },
    };
    let (item_sep, key_sep) = match separators.as_deref() {
        Some([item, key]) => (item.clone(), key.clone()),
        Some(_) => {
            return Err(Error::new(
                ErrorKind::InvalidOperation,
                "tojson: separators must be a pair",
            ));
        }
        None if indent.is_some() => (",".to_owned(), ": ".to_owned()),
        None => (", ".to_owned(), ": ".to_owned()),
    };
    let dumper = Dumper {
        ensure_ascii: ensure_ascii.unwrap_or(false),
        indent,
        item_sep,
        key_sep,
        sort_keys: sort_keys.unwrap_or(false),
    };
    let mut out = String::new();
    dumper.dump(&value, 0, &mut out)?;
    Ok(J::from_safe_string(out))
}

struct Dumper {
    ensure_ascii: bool,
    indent: Option<String>,
    item_sep: String,
    key_sep: String,
    sort_keys: bool,
}

impl Dumper {
    fn newline(&self, level: usize, out: &mut String) {
        if let Some(indent) = &self.indent {
            out.push('\n');
            for _ in 0..level {
                out.push_str(indent);
            }
        }
    }

    fn dump(&self, value: &J, level: usize, out: &mut String) -> Result<(), Error> {
        match value.kind() {
            ValueKind::None => out.push_str("null"),
            ValueKind::Bool => out.push_str(if value.is_true() { "true" } else { "false" }),
            ValueKind::Number if value.is_integer() => out.push_str(&value.to_string()),
            ValueKind::Number => {
                let f = f64::try_from(value.clone())?;
                out.push_str(&python_float(f));
            }
            ValueKind::String => self.string(value.as_str().unwrap_or_default(), out),
            ValueKind::Seq | ValueKind::Iterable => {
                let items: Vec<J> = value.try_iter()?.collect();
                if items.is_empty() {
                    out.push_str("[]");
                    return Ok(());
                }
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(self.separator());
                    }
                    self.newline(level + 1, out);
                    self.dump(item, level + 1, out)?;
                }
                self.newline(level, out);
                out.push(']');
            }
            ValueKind::Map => {
                let mut keys: Vec<J> = value.try_iter()?.collect();
                if self.sort_keys {
                    keys.sort();
                }
                if keys.is_empty() {
                    out.push_str("{}");
                    return Ok(());
                }
                out.push('{');
                for (i, key) in keys.iter().enumerate() {
                    if i > 0 {
                        out.push_str(self.separator());
                    }
                    self.newline(level + 1, out);
                    // Python turns None/bool/number keys into their JSON text.
                    match key.kind() {
                        ValueKind::String => self.string(key.as_str().unwrap_or_default(), out),
                        _ => {
                            let mut text = String::new();
                            self.dump(key, 0, &mut text)?;
                            self.string(&text, out);
                        }
                    }
                    out.push_str(&self.key_sep);
                    self.dump(&value.get_item(key)?, level + 1, out)?;
                }
                self.newline(level, out);
                out.push('}');
            }
            other => {
                return Err(Error::new(
                    ErrorKind::InvalidOperation,
                    format!("tojson: Object of type {other} is not JSON serializable"),
                ));
            }
        }
        Ok(())
    }

    /// With an indent, Python drops the trailing space of `", "` only when
    /// the caller left separators alone; the pair is already chosen.
    fn separator(&self) -> &str {
        &self.item_sep
    }

    fn string(&self, s: &str, out: &mut String) {
        out.push('"');
        for c in s.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                '\u{8}' => out.push_str("\\b"),
                '\u{c}' => out.push_str("\\f"),
                c if (c as u32) < 0x20 => {
                    let _ = write!(out, "\\u{:04x}", c as u32);
                }
                c if self.ensure_ascii && !c.is_ascii() => {
                    let mut units = [0u16; 2];
                    for unit in c.encode_utf16(&mut units) {
                        let _ = write!(out, "\\u{unit:04x}");
                    }
                }
                c => out.push(c),
            }
        }
        out.push('"');
    }
}

/// Python's `repr(float)`: the shortest digits that round trip, in fixed
/// notation for exponents -4 to 15 and `1e+16` style outside.
fn python_float(f: f64) -> String {
    if f.is_nan() {
        return "NaN".to_owned();
    }
    if f.is_infinite() {
        return if f > 0.0 { "Infinity" } else { "-Infinity" }.to_owned();
    }
    let sci = format!("{f:e}"); // shortest round-trip digits: "-1.5e-7"
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    if (-4..16).contains(&exp) {
        let point = exp + 1; // digits before the decimal point
        let s = if point <= 0 {
            format!(
                "0.{}{digits}",
                "0".repeat(usize::try_from(-point).unwrap_or(0))
            )
        } else {
            let point = usize::try_from(point).unwrap_or(0);
            if digits.len() <= point {
                format!("{digits}{}.0", "0".repeat(point - digits.len()))
            } else {
                format!("{}.{}", &digits[..point], &digits[point..])
            }
        };
        format!("{sign}{s}")
    } else {
        let rest = &digits[1..];
        let mantissa = if rest.is_empty() {
            digits[..1].to_owned()
        } else {
            format!("{}.{rest}", &digits[..1])
        };
        let esign = if exp < 0 { '-' } else { '+' };
        format!("{sign}{mantissa}e{esign}{:02}", exp.abs())
    }
}

fn tools(flat: bool) -> Json {
    let tools = json!([
        {"type": "function", "function": {
            "name": "get_weather",
            "description": "Get the current weather in a city.",
            "parameters": {"type": "object", "properties": {
                "city": {"type": "string", "description": "The city's name."},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}
            }, "required": ["city"]}
        }},
        {"type": "function", "function": {
            "name": "get_time",
            "description": "Get the local time in a city.",
            "parameters": {"type": "object", "properties": {
                "city": {"type": "string", "description": "The city's name."}
            }, "required": ["city"]}
        }}
    ]);
    if flat {
        Json::Array(
            tools
                .as_array()
                .into_iter()
                .flatten()
                .map(|t| t["function"].clone())
                .collect(),
        )
    } else {
        tools
    }
}

const REASONING: &str = "The user wants the weather in Paris. I know it: sunny, 24 degrees.";
const CONTENT: &str = "It is sunny in Paris, 24 °C.";

/// The calls of a turn: name and arguments.
fn calls(turn: Turn) -> Vec<(&'static str, Json)> {
    match turn {
        Turn::Content | Turn::Reasoning => Vec::new(),
        Turn::OneCall => vec![("get_weather", json!({"city": "Paris", "unit": "celsius"}))],
        Turn::TwoCalls => vec![
            ("get_weather", json!({"city": "Paris", "unit": "celsius"})),
            ("get_time", json!({"city": "São Paulo \"SP\""})),
        ],
    }
}

fn call_id(ids: Ids, name: &str, index: usize) -> String {
    match ids {
        Ids::Plain => format!("call_{}", index + 1),
        Ids::NineChars => format!("call0000{}", index + 1),
        Ids::Kimi => format!("functions.{name}:{index}"),
    }
}

/// The last assistant message of a turn, in transformers' message format
/// (reasoning under both names templates read: `reasoning_content` and
/// `thinking`).
fn assistant(family: &Family, turn: Turn) -> Json {
    let mut message = json!({"role": "assistant"});
    match turn {
        Turn::Content => message["content"] = json!(CONTENT),
        Turn::Reasoning => {
            message["content"] = json!(CONTENT);
            message["reasoning_content"] = json!(REASONING);
            message["thinking"] = json!(REASONING);
        }
        Turn::OneCall | Turn::TwoCalls => {
            message["content"] = json!("");
            let calls: Vec<Json> = calls(turn)
                .into_iter()
                .enumerate()
                .map(|(i, (name, arguments))| {
                    let arguments = if family.string_arguments {
                        json!(arguments.to_string())
                    } else {
                        arguments
                    };
                    json!({"id": call_id(family.ids, name, i), "type": "function",
                           "function": {"name": name, "arguments": arguments}})
                })
                .collect();
            message["tool_calls"] = json!(calls);
        }
    }
    message
}

/// No system message unless the family needs one: several templates fold
/// it into a user turn differently in the prompt and in the conversation.
fn history(family: &Family) -> Vec<Json> {
    let mut messages = Vec::new();
    if let Some(system) = family.system {
        messages.push(json!({"role": "system", "content": system}));
    }
    messages.push(json!({"role": "user", "content": "What is the weather in Paris?"}));
    messages
}

fn context(family: &Family, messages: &[Json], add_generation_prompt: bool) -> Json {
    json!({
        "messages": messages,
        "tools": tools(family.flat_tools),
        // transformers passes `documents=None`: defined, and none.
        "documents": null,
        "add_generation_prompt": add_generation_prompt,
        "enable_thinking": family.thinking,
        "bos_token": family.bos,
        "eos_token": family.eos,
    })
}

fn render(env: &Environment<'_>, name: &str, ctx: &Json) -> Result<String, String> {
    let template = env.get_template(name).map_err(|e| format!("{e:#}"))?;
    template
        .render(J::from(Serde(ctx)))
        .map_err(|e| format!("{e:#}"))
}

/// What the parse must give back.
#[derive(Debug, PartialEq)]
struct Expected {
    content: Option<String>,
    reasoning: Option<String>,
    calls: Vec<(String, Json)>,
}

fn expected(turn: Turn) -> Expected {
    Expected {
        content: matches!(turn, Turn::Content | Turn::Reasoning).then(|| CONTENT.to_owned()),
        reasoning: (turn == Turn::Reasoning).then(|| REASONING.to_owned()),
        calls: calls(turn)
            .into_iter()
            .map(|(n, a)| (n.to_owned(), a))
            .collect(),
    }
}

fn trimmed(text: Option<&str>) -> Option<String> {
    text.map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
}

/// Renders one turn, parses it back and says what differs.
fn round_trip(
    env: &Environment<'_>,
    family: &Family,
    template: &retort::Template,
    turn: Turn,
    dump: Option<&Path>,
) -> Result<(), String> {
    let mut messages = history(family);
    let prompt_ctx = context(family, &messages, true);
    messages.push(assistant(family, turn));
    let full_ctx = context(family, &messages, false);
    let prompt = render(env, family.chat_template, &prompt_ctx);
    let full = render(env, family.chat_template, &full_ctx);
    if let Some(dir) = dump {
        let record = json!({
            "chat_template": family.chat_template, "turn": format!("{turn:?}"),
            "prompt_context": prompt_ctx, "full_context": full_ctx,
            "prompt": prompt.as_ref().ok(), "full": full.as_ref().ok(),
        });
        let stem = family.chat_template.trim_end_matches(".jinja");
        std::fs::write(
            dir.join(format!("{stem}.{turn:?}.json")),
            record.to_string(),
        )
        .expect("write the dump");
    }
    let prompt = prompt.map_err(|e| format!("the generation prompt does not render: {e}"))?;
    let full = full.map_err(|e| format!("the conversation does not render: {e}"))?;
    let Some(rest) = full.strip_prefix(prompt.as_str()) else {
        let common = prompt
            .char_indices()
            .zip(full.chars())
            .find(|((_, a), b)| a != b)
            .map_or(prompt.len().min(full.len()), |((i, _), _)| i);
        return Err(format!(
            "the generation prompt is not a prefix of the conversation; they part at byte {common}: \
             prompt …{:?} / conversation …{:?}",
            tail(&prompt[common..], 60),
            tail(&full[common..], 60)
        ));
    };
    let cut = family
        .stops
        .iter()
        .filter_map(|stop| rest.find(stop).map(|i| i + stop.len()))
        .min()
        .unwrap_or(rest.len());
    let text = &rest[..cut];
    let mut parser = template
        .parser(&prompt)
        .map_err(|e| format!("the prompt does not parse: {e}"))?;
    parser
        .feed(text)
        .map_err(|e| format!("the text {text:?} does not parse: {e}"))?;
    let (message, _) = parser
        .finalize()
        .map_err(|e| format!("the text {text:?} does not parse: {e}"))?;
    let got = Expected {
        content: trimmed(message.content()),
        reasoning: trimmed(message.reasoning()),
        calls: message
            .tool_calls()
            .into_iter()
            .map(|call| {
                let arguments = serde_json::to_value(&call.arguments).unwrap_or(Json::Null);
                // Arguments written as JSON text compare as the JSON they hold.
                let arguments = match &arguments {
                    Json::String(s) => serde_json::from_str(s).unwrap_or(arguments),
                    _ => arguments,
                };
                (call.name, arguments)
            })
            .collect(),
    };
    let want = expected(turn);
    if got == want {
        Ok(())
    } else {
        Err(format!(
            "text {text:?}\n      parsed   {got:?}\n      expected {want:?}"
        ))
    }
}

fn tail(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

fn chat_templates_dir() -> Option<PathBuf> {
    let dir = retort_tests::root().join("../shared/chat-templates");
    dir.is_dir().then_some(dir)
}

#[test]
fn chat_templates_round_trip() {
    let Some(dir) = chat_templates_dir() else {
        eprintln!("skipped: ../shared/chat-templates is absent");
        return;
    };
    let dump = std::env::var_os("RETORT_ROUNDTRIP_DUMP").map(PathBuf::from);
    if let Some(d) = &dump {
        std::fs::create_dir_all(d).expect("create the dump directory");
    }
    let mut env = environment();
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .expect("list the chat templates")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".jinja"))
        .collect();
    files.sort();
    let mut problems = Vec::new();
    for file in &files {
        if !FAMILIES.iter().any(|f| f.chat_template == file) {
            problems.push(format!(
                "{file}: not in FAMILIES; map it to a template or say why not"
            ));
        }
    }
    let mut report = String::new();
    let (mut passed, mut known) = (0, 0);
    for family in FAMILIES {
        let path = dir.join(family.chat_template);
        let Ok(source) = std::fs::read_to_string(&path) else {
            problems.push(format!("{}: listed but absent", family.chat_template));
            continue;
        };
        if let Err(e) = env.add_template_owned(family.chat_template.to_owned(), source.clone()) {
            problems.push(format!(
                "{}: minijinja cannot parse it: {e:#}",
                family.chat_template
            ));
            continue;
        }
        let Some(name) = family.template else {
            for (_, why) in family.known {
                let _ = writeln!(report, "{}: not bundled: {why}", family.chat_template);
            }
            continue;
        };
        let bundled = match retort::registry::family(name).map(retort::registry::Family::template) {
            Ok(Ok(t)) => t,
            Ok(Err(e)) => {
                problems.push(format!(
                    "{}: templates/{name}.json: {e}",
                    family.chat_template
                ));
                continue;
            }
            Err(e) => {
                problems.push(format!("{}: {e}", family.chat_template));
                continue;
            }
        };
        match retort::registry::from_chat_template(&source) {
            Ok(found) if found.name() == name => {}
            Ok(found) => problems.push(format!(
                "{}: the registry recognises it as {}, not {name}",
                family.chat_template,
                found.name()
            )),
            Err(e) => problems.push(format!("{}: the registry: {e}", family.chat_template)),
        }
        let known_reasons: BTreeMap<Turn, &str> = family.known.iter().copied().collect();
        for turn in TURNS {
            let outcome = round_trip(&env, family, &bundled, turn, dump.as_deref());
            match (outcome, known_reasons.get(&turn)) {
                (Ok(()), None) => passed += 1,
                (Ok(()), Some(_)) => problems.push(format!(
                    "{} {turn:?}: listed as failing but round trips; drop the entry",
                    family.chat_template
                )),
                (Err(e), Some(why)) => {
                    known += 1;
                    let _ = writeln!(
                        report,
                        "{} {turn:?} ({name}): known: {why}\n      {e}",
                        family.chat_template
                    );
                }
                (Err(e), None) => {
                    problems.push(format!("{} {turn:?} ({name}): {e}", family.chat_template))
                }
            }
        }
    }
    eprintln!("{report}");
    eprintln!(
        "round trip: {passed} passed, {known} known failures, {} problems",
        problems.len()
    );
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

#[test]
fn tojson_is_python_json_dumps() {
    let env = environment();
    let render = |src: &str, ctx: Json| {
        env.render_str(src, J::from(Serde(ctx)))
            .unwrap_or_else(|e| panic!("{src}: {e:#}"))
    };
    let value = json!({"b": [1, 2.5, null, true], "a": "é\"\n", "c": {}});
    // Expected strings are Python's json.dumps of the same value.
    assert_eq!(
        render("{{ v|tojson }}", json!({"v": value})),
        r#"{"b": [1, 2.5, null, true], "a": "é\"\n", "c": {}}"#
    );
    assert_eq!(
        render(
            "{{ v|tojson(ensure_ascii=True, sort_keys=True) }}",
            json!({"v": value})
        ),
        r#"{"a": "\u00e9\"\n", "b": [1, 2.5, null, true], "c": {}}"#
    );
    assert_eq!(
        render(
            "{{ v|tojson(indent=2) }}",
            json!({"v": {"x": [1], "y": []}})
        ),
        "{\n  \"x\": [\n    1\n  ],\n  \"y\": []\n}"
    );
    assert_eq!(
        render(
            "{{ v|tojson(separators=(',', ':')) }}",
            json!({"v": {"x": [1, 2]}})
        ),
        r#"{"x":[1,2]}"#
    );
    assert_eq!(
        render(
            "{{ v|tojson }}",
            json!({"v": [1e16, 1e-5, 0.1, 123456.0, -0.0]})
        ),
        "[1e+16, 1e-05, 0.1, 123456.0, -0.0]"
    );
    assert_eq!(
        render("{{ v|tojson(ensure_ascii=True) }}", json!({"v": "😀"})),
        r#""\ud83d\ude00""#
    );
}
