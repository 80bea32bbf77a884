//! `retort render`: one conversation for people, case files for
//! conformance runs; errors say which exception the reference raises.

mod common;
use common::retort;

const TEMPLATE: &str = "{{ bos_token }}{% for m in messages %}<|{{ m.role }}|>{{ m.content }}\n{% endfor %}\
    {% if add_generation_prompt %}<|assistant|>{% if enable_thinking is false %}<think></think>{% endif %}{% endif %}";

#[test]
fn a_conversation_renders_from_a_template_a_config_or_a_directory() {
    let dir = tempfile::tempdir().expect("a scratch directory");
    let jinja = dir.path().join("chat_template.jinja");
    std::fs::write(&jinja, TEMPLATE).unwrap();
    let chat = dir.path().join("chat.json");
    std::fs::write(&chat, r#"[{"role": "user", "content": "Hi!"}]"#).unwrap();
    let chat_arg = chat.display().to_string();
    let (out, err, code) = retort(
        &[
            "render",
            &jinja.display().to_string(),
            "--conversation",
            &chat_arg,
            "--add-generation-prompt",
            "--set",
            "enable_thinking=false",
            "--set",
            "bos_token=<s>",
        ],
        "",
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "<s><|user|>Hi!\n<|assistant|><think></think>");
    // A tokenizer_config.json: its special tokens are variables.
    let config = dir.path().join("tokenizer_config.json");
    std::fs::write(
        &config,
        serde_json::json!({"chat_template": TEMPLATE, "bos_token": "<B>"}).to_string(),
    )
    .unwrap();
    let (out, err, code) = retort(
        &[
            "render",
            &config.display().to_string(),
            "--conversation",
            &chat_arg,
        ],
        "",
    );
    assert_eq!((code, out.as_str()), (0, "<B><|user|>Hi!\n"), "{err}");
}

#[test]
fn a_failing_template_exits_1_with_the_references_exception() {
    let dir = tempfile::tempdir().expect("a scratch directory");
    let jinja = dir.path().join("t.jinja");
    std::fs::write(&jinja, "{{ raise_exception('roles must alternate') }}").unwrap();
    let chat = dir.path().join("chat.json");
    std::fs::write(&chat, r#"[{"role": "user", "content": "Hi!"}]"#).unwrap();
    let (_, err, code) = retort(
        &[
            "render",
            &jinja.display().to_string(),
            "--conversation",
            &chat.display().to_string(),
        ],
        "",
    );
    assert_eq!(code, 1);
    assert!(
        err.contains("TemplateError") && err.contains("roles must alternate"),
        "{err}"
    );
}

#[test]
fn cases_give_one_result_line_each_in_order() {
    let case = |id: &str, template: &str| {
        serde_json::json!({"id": id, "chat_template": template,
            "messages": [{"role": "user", "content": "Hi!"}], "tools": null, "documents": null,
            "add_generation_prompt": true, "continue_final_message": false, "kwargs": {}})
        .to_string()
    };
    let input = format!(
        "{}\n{}\n",
        case("a", TEMPLATE),
        case("b", "{{ raise_exception('no') }}")
    );
    let (out, err, code) = retort(&["render", "--cases", "-"], &input);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["id"], "a");
    assert_eq!(lines[0]["rendered"], "<|user|>Hi!\n<|assistant|>");
    assert_eq!(lines[1]["error"]["type"], "TemplateError");
    assert_eq!(lines[1]["error"]["message"], "no");
}
