//! The registry: from a model name, a Hugging Face repo id or a
//! `tokenizer_config.json` to the right bundled template, through the
//! `retort` crate's public API only.

use retort::registry::{self, RegistryError};
use retort::{AssistantMessage, Template};
use std::path::{Path, PathBuf};

fn data(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Parses `text` after `prompt` and returns (reasoning, content, tool names).
fn parse(
    template: &Template,
    prompt: &str,
    text: &str,
) -> (Option<String>, Option<String>, Vec<String>) {
    let mut parser = template.parser(prompt).expect("the prompt parses");
    parser.feed(text).expect("the text parses");
    let (message, _) = parser.finalize().expect("the message finalises");
    (
        message.reasoning().map(str::to_owned),
        message.content().map(str::to_owned),
        message.tool_calls().into_iter().map(|c| c.name).collect(),
    )
}

#[test]
fn hugging_face_repo_ids_resolve_to_their_family() {
    for (repo, family) in [
        ("Qwen/Qwen3-8B", "qwen3"),
        ("deepseek-ai/DeepSeek-R1-Distill-Qwen-7B", "deepseek-r1"),
        ("openai/gpt-oss-20b", "gpt-oss"),
        // The most specific pattern wins over the family's prefix.
        ("Qwen/Qwen3-Coder-30B-A3B-Instruct", "qwen3-coder"),
        ("moonshotai/Kimi-K2-Thinking", "kimi-k2-thinking"),
        // Quantised copies and addresses.
        ("unsloth/Qwen3-8B-GGUF", "qwen3"),
        (
            "https://huggingface.co/mistralai/Mistral-Small-3.2-24B-Instruct-2506/tree/main",
            "mistral-small-3.2",
        ),
        ("meta-llama/Llama-3.3-70B-Instruct", "llama-3.1"),
        // A bare model name.
        ("gpt-oss-120b", "gpt-oss"),
    ] {
        let found = registry::resolve(repo).unwrap_or_else(|e| panic!("{repo}: {e}"));
        assert_eq!(found.name(), family, "{repo}");
        assert!(
            found.template().is_ok(),
            "{family}: the bundled template loads"
        );
    }
}

#[test]
fn names_resolve_with_case_and_punctuation_ignored() {
    assert_eq!(registry::resolve("qwen3").unwrap().name(), "qwen3");
    assert_eq!(registry::resolve("GLM_4_5").unwrap().name(), "glm-4.5");
    assert_eq!(
        registry::family("gpt-oss").unwrap().feature(),
        "model-gpt-oss"
    );
}

#[test]
fn a_resolved_family_parses_its_models_output() {
    let template = registry::resolve("openai/gpt-oss-20b")
        .unwrap()
        .template()
        .unwrap();
    let prompt = "<|start|>user<|message|>Hi<|end|><|start|>assistant";
    let text = "<|channel|>analysis<|message|>Say hi.<|end|><|start|>assistant<|channel|>final<|message|>Hi!<|return|>";
    let (reasoning, content, calls) = parse(&template, prompt, text);
    assert_eq!(reasoning.as_deref(), Some("Say hi."));
    assert_eq!(content.as_deref(), Some("Hi!"));
    assert!(calls.is_empty());
}

#[test]
fn unknown_models_list_candidates() {
    match registry::resolve("Qwen/Qwen9-1B") {
        Err(RegistryError::Unknown { query, candidates }) => {
            assert_eq!(query, "Qwen/Qwen9-1B");
            assert!(candidates.contains(&"qwen3"), "{candidates:?}");
            assert!(!candidates.contains(&"gpt-oss"), "{candidates:?}");
        }
        other => panic!("{other:?}"),
    }
    // Nothing close: every family is a candidate.
    match registry::resolve("acme/no-such-model") {
        Err(e @ RegistryError::Unknown { .. }) => {
            let RegistryError::Unknown { candidates, .. } = &e else {
                unreachable!()
            };
            assert_eq!(candidates.len(), registry::families().len());
            assert!(e.to_string().contains("acme/no-such-model"), "{e}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_config_with_its_own_response_template_uses_it() {
    let resolved =
        registry::from_tokenizer_config(&data("own-template.tokenizer_config.json")).unwrap();
    assert!(resolved.family.is_none());
    let (reasoning, content, _) = parse(
        &resolved.template,
        "<|start|>user<|message|>Hi<|end|><|start|>assistant<|message|>",
        "[think]Greet.[/think]Hello.<|end|>",
    );
    assert_eq!(reasoning.as_deref(), Some("Greet."));
    assert_eq!(content.as_deref(), Some("Hello."));
}

#[test]
fn a_config_without_one_is_recognised_from_its_chat_template() {
    let resolved =
        registry::from_tokenizer_config(&data("chatml-thinking.tokenizer_config.json")).unwrap();
    assert_eq!(resolved.family.map(registry::Family::name), Some("qwen3"));
    let (reasoning, content, calls) = parse(
        &resolved.template,
        "<|im_start|>user\nWeather?<|im_end|>\n<|im_start|>assistant\n",
        "<think>Look it up.</think>\n\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call><|im_end|>",
    );
    assert_eq!(reasoning.as_deref(), Some("Look it up."));
    assert_eq!(content, None);
    assert_eq!(calls, ["get_weather"]);

    // Every named template of a list is searched (the markers are split
    // between them here).
    let resolved =
        registry::from_tokenizer_config(&data("named-templates.tokenizer_config.json")).unwrap();
    assert_eq!(resolved.family.map(registry::Family::name), Some("gpt-oss"));
}

#[test]
fn real_chat_templates_are_recognised() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/chat-templates");
    if !dir.is_dir() {
        eprintln!("skipped: ../shared/chat-templates is absent");
        return;
    }
    // The whole set is checked by retort-tests' round trip; here, two
    // configs as a model repository ships them.
    for (file, family) in [("qwen3.jinja", "qwen3"), ("gpt-oss.jinja", "gpt-oss")] {
        let chat_template = std::fs::read_to_string(dir.join(file)).unwrap();
        let config = serde_json_string(&chat_template);
        let resolved = registry::from_tokenizer_config(&format!("{{\"chat_template\": {config}}}"))
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(
            resolved.family.map(registry::Family::name),
            Some(family),
            "{file}"
        );
    }
}

/// A JSON string literal (the registry reads the config with Python's JSON
/// rules, so the escapes here are the standard ones).
fn serde_json_string(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[test]
fn configs_that_name_nothing_say_why() {
    let unrecognised = registry::from_tokenizer_config(
        r#"{"chat_template": "{% for m in messages %}<|im_start|>{{ m.content }}{% endfor %}"}"#,
    )
    .unwrap_err();
    match &unrecognised {
        // `<|im_start|>` alone is half of several families' markers.
        RegistryError::Unrecognised { candidates } => {
            assert!(candidates.contains(&"lfm2"), "{candidates:?}");
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        registry::from_tokenizer_config("{\"eos_token\": \"</s>\"}"),
        Err(RegistryError::Config { .. })
    ));
    let not_json = registry::from_tokenizer_config("{\"chat_template\": ").unwrap_err();
    assert!(not_json.to_string().contains("not JSON"), "{not_json}");
    let broken =
        registry::from_tokenizer_config(r#"{"response_template": {"fields": 3}}"#).unwrap_err();
    assert!(matches!(broken, RegistryError::Template(_)), "{broken:?}");
}

#[test]
fn every_family_is_found_by_its_name_and_a_repo_pattern() {
    for family in registry::families() {
        assert_eq!(
            registry::resolve(family.name()).unwrap().name(),
            family.name()
        );
        assert!(
            !family.repo_patterns().is_empty(),
            "{}: no Hugging Face repo-id pattern in the registry's table",
            family.name()
        );
        // A repo named by the pattern itself (`*` as nothing) resolves to
        // the family: no other family's pattern is as specific.
        for pattern in family.repo_patterns() {
            let repo = pattern.replace('*', "");
            let repo = if repo.starts_with('/') {
                format!("org{repo}")
            } else {
                repo
            };
            let found = registry::from_repo_id(&repo).unwrap_or_else(|e| panic!("{repo}: {e}"));
            assert_eq!(found.name(), family.name(), "{repo} (pattern {pattern})");
        }
    }
}

#[test]
fn each_marker_set_recognises_its_own_family() {
    // A chat template holding exactly a family's markers is that family's,
    // not a sibling's whose markers are a subset.
    for family in registry::families() {
        for set in family.chat_template_markers() {
            let text = set.join(" ");
            let found =
                registry::from_chat_template(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(found.name(), family.name(), "{set:?}");
        }
    }
}
