//! The public API: compiling, rendering, what transformers does around the
//! template, template sources, the case format. Expected texts and messages
//! are the reference's (transformers 5.23.0 through
//! `tools/reference/render.py`) for the same inputs.

use std::io::Write as _;

use retort_chat::{
    CASES_NOW, ChatErrorKind, ChatTemplate, ChatTemplates, ContinueFinal, Entry, Limits,
    RenderErrorKind, RenderInput, render_cases,
};
use serde_json::{Value, json};

fn messages(v: Value) -> Vec<Value> {
    v.as_array().cloned().unwrap_or_default()
}

fn render(template: &str, input: &RenderInput) -> Result<String, (String, String)> {
    let t = ChatTemplate::new(template)
        .map_err(|e| (e.python_type().to_owned(), e.message().to_owned()))?;
    t.render(input)
        .map(|r| r.text)
        .map_err(|e| (e.python_type().to_owned(), e.message().to_owned()))
}

fn error(template: &str, input: &RenderInput) -> (String, String) {
    render(template, input).expect_err("an error")
}

const T_GEN: &str = "{% for m in messages %}{% if m.role == 'assistant' %}A: {% generation %}{{ m.content }}{% endgeneration %}\n{% else %}{{ m.role }}: {{ m.content }}\n{% endif %}{% endfor %}";

#[test]
fn generation_spans_in_chars_and_bytes() {
    let t = ChatTemplate::new(T_GEN).expect("compiles");
    let input = RenderInput::new(messages(json!([
        {"role": "user", "content": "héllo"},
        {"role": "assistant", "content": "wörld 😀"},
        {"role": "user", "content": "x"},
        {"role": "assistant", "content": "ok"},
    ])));
    let r = t.render(&input).expect("renders");
    assert_eq!(r.text, "user: héllo\nA: wörld 😀user: x\nA: ok");
    let chars: Vec<_> = r.generation.iter().map(|g| g.chars.clone()).collect();
    assert_eq!(chars, [15..22, 33..35]);
    assert_eq!(&r.text[r.generation[0].bytes.clone()], "wörld 😀");
    assert_eq!(&r.text[r.generation[1].bytes.clone()], "ok");
}

#[test]
fn generation_spans_inside_macros_count_as_transformers_does() {
    // The span starts where the enclosing top-level output started.
    let t = ChatTemplate::new(
        "{% macro a(m) %}[{% generation %}{{ m.content }}{% endgeneration %}]{% endmacro %}{% for m in messages %}{{ m.role }}:{{ a(m) }}\n{% endfor %}",
    )
    .expect("compiles");
    let input = RenderInput::new(messages(json!([
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "yo"},
    ])));
    let r = t.render(&input).expect("renders");
    assert_eq!(r.text, "user:[hi]\nassistant:[yo]\n");
    let chars: Vec<_> = r.generation.iter().map(|g| g.chars.clone()).collect();
    assert_eq!(chars, [5..7, 20..22]);
}

const T_CONT: &str = "{% for m in messages %}<{{ m.role }}>{% if m.reasoning_content %}<think>{{ m.reasoning_content }}</think>{% endif %}{{ m.content }}</{{ m.role }}>\n{% endfor %}";

fn cont(msgs: Value, how: ContinueFinal) -> RenderInput {
    let mut input = RenderInput::new(messages(msgs));
    input.continue_final_message = how;
    input
}

#[test]
fn continue_final_message_cuts_at_the_tag() {
    let user = json!({"role": "user", "content": "hi"});
    assert_eq!(
        render(
            T_CONT,
            &cont(
                json!([user, {"role": "assistant", "content": "It is "}]),
                ContinueFinal::Content
            )
        ),
        Ok("<user>hi</user>\n<assistant>It is ".to_owned())
    );
    // the template trims the tag's space: the text is right-stripped
    assert_eq!(
        render(
            "{% for m in messages %}<{{ m.role }}>{{ m.content|trim }}</{{ m.role }}>{% endfor %}",
            &cont(
                json!([user, {"role": "assistant", "content": "It is "}]),
                ContinueFinal::Content
            )
        ),
        Ok("<user>hi</user><assistant>It is".to_owned())
    );
    for field in ["reasoning_content", "thinking"] {
        assert_eq!(
            render(
                T_CONT,
                &cont(
                    json!([user, {"role": "assistant", "content": "", field: "Let me"}]),
                    ContinueFinal::Field(field.to_owned())
                )
            ),
            Ok("<user>hi</user>\n<assistant><think>Let me".to_owned()),
            "{field}"
        );
    }
    // content blocks: the last text block is continued
    assert_eq!(
        render(
            "{% for m in messages %}{% for b in m.content %}{{ b.text }}{% endfor %}{% endfor %}",
            &cont(
                json!([{"role": "assistant", "content": [
                    {"type": "text", "text": "a"}, {"type": "image"}, {"type": "text", "text": "b"}
                ]}]),
                ContinueFinal::Content
            )
        ),
        Ok("ab".to_owned())
    );
}

#[test]
fn continue_final_message_errors_are_transformers() {
    let value = |m: &str| ("ValueError".to_owned(), m.to_owned());
    assert_eq!(
        error(T_CONT, &cont(json!([]), ContinueFinal::Content)),
        value("continue_final_message is set but the conversation is empty!")
    );
    assert_eq!(
        error(
            T_CONT,
            &cont(
                json!([{"role": "user", "content": "hi"}]),
                ContinueFinal::Field("nope".into())
            )
        ),
        value("continue_final_message is set but the final message has no \"nope\" to continue!")
    );
    assert_eq!(
        error(
            "{% for m in messages %}{{ m.role }}{% endfor %}",
            &cont(
                json!([{"role": "user", "content": "hi"}]),
                ContinueFinal::Content
            )
        ),
        value(
            "continue_final_message is set to \"content\" but this is not an accepted field in the chat_template"
        )
    );
    assert_eq!(
        error(
            "{% for m in messages %}{{ m.content[:2] }}{% endfor %}content",
            &cont(
                json!([{"role": "user", "content": "hello"}]),
                ContinueFinal::Content
            )
        ),
        value(
            "continue_final_message is set but the final message does not appear in the chat after applying the chat template! This can happen if the chat template deletes portions of the final message. Please verify the chat template and final message in your chat to ensure they are compatible.Final message to continue: hello\nRendered chat:\nhecontent"
        )
    );
    assert_eq!(
        error(
            "{{ messages[0].content }}content",
            &cont(
                json!([{"role": "user", "content": [{"type": "image"}]}]),
                ContinueFinal::Content
            )
        ),
        value(
            "continue_final_message is set but we could not find any text to continue in the final message!"
        )
    );
    assert_eq!(
        error(
            "{{ messages[0].content }}",
            &cont(
                json!([{"role": "user", "content": 5}]),
                ContinueFinal::Content
            )
        ),
        (
            "TypeError".to_owned(),
            "unsupported operand type(s) for +: 'int' and 'str'".to_owned()
        )
    );
}

#[test]
fn inputs_are_checked_as_transformers_checks_them() {
    let mut input = RenderInput::new(messages(json!([{"role": "user", "content": "hi"}])));
    input.tools = Some(vec![json!("notadict")]);
    assert_eq!(
        error("x", &input),
        (
            "ValueError".to_owned(),
            "Tools should either be a JSON schema, or a callable function with type hints and a docstring suitable for auto-conversion to a schema.".to_owned()
        )
    );
    let mut input = RenderInput::new(messages(json!([{"role": "user", "content": "hi"}])));
    input.documents = Some(vec![json!(1)]);
    assert_eq!(
        error("x", &input),
        (
            "TypeError".to_owned(),
            "Documents should be a list of dicts with 'title' and 'text' keys!".to_owned()
        )
    );
    assert_eq!(
        error("x", &RenderInput::new(vec![json!("hello")])),
        (
            "TypeError".to_owned(),
            "Chat messages should be dicts, dataclasses or pydantic models, but got 'hello'."
                .to_owned()
        )
    );
    let mut input = RenderInput::new(Vec::new());
    input.kwargs.insert("tools".into(), json!([]));
    assert_eq!(
        error("x", &input),
        (
            "TypeError".to_owned(),
            "transformers.utils.chat_template_utils.render_jinja_template() got multiple values for keyword argument 'tools'".to_owned()
        )
    );
}

#[test]
fn reasoning_is_aliased_in_transformers_key_order() {
    let input = RenderInput::new(messages(json!([
        {"role": "assistant", "content": "c", "reasoning": "r"},
        {"role": "assistant", "reasoning_content": "rc", "thinking": "t"},
        {"role": "assistant", "content": "x", "thinking": null, "reasoning": "z"},
    ])));
    assert_eq!(
        render("{% for m in messages %}{{ m }}\n{% endfor %}", &input),
        Ok("{'thinking': 'r', 'role': 'assistant', 'content': 'c', 'reasoning': 'r', 'reasoning_content': 'r'}\n{'thinking': 't', 'role': 'assistant', 'reasoning_content': 'rc'}\n{'thinking': None, 'role': 'assistant', 'content': 'x', 'reasoning': 'z', 'reasoning_content': 'z'}\n".to_owned())
    );
}

#[test]
fn errors_carry_the_python_class() {
    let empty = RenderInput::new(Vec::new());
    assert_eq!(
        error("{% set x = [] %}{{ x.append(1) }}", &empty),
        (
            "SecurityError".to_owned(),
            "access to attribute 'append' of 'list' object is unsafe.".to_owned()
        )
    );
    assert_eq!(
        error("{% set d = {} %}{% set _ = d.update({'a': 1}) %}", &empty),
        (
            "SecurityError".to_owned(),
            "access to attribute 'update' of 'dict' object is unsafe.".to_owned()
        )
    );
    assert_eq!(
        error("{{ raise_exception('Roles must alternate!') }}", &empty),
        (
            "TemplateError".to_owned(),
            "Roles must alternate!".to_owned()
        )
    );
    assert_eq!(
        error("{{ bos_token + 'x' }}", &empty),
        (
            "UndefinedError".to_owned(),
            "'bos_token' is undefined".to_owned()
        )
    );
    assert_eq!(
        error("{{ 'a' + 1 }}", &empty),
        (
            "TypeError".to_owned(),
            "can only concatenate str (not \"int\") to str".to_owned()
        )
    );
    let t = ChatTemplate::new("{{ raise_exception('x') }}").expect("compiles");
    let e = t.render(&empty).expect_err("raises");
    assert_eq!(e.kind(), &RenderErrorKind::TemplateError);
    assert_eq!(e.line(), Some(1));
}

#[test]
fn compile_errors_have_a_place() {
    let e = ChatTemplate::new("{% if x %}\n{{ y }\n").expect_err("a syntax error");
    assert_eq!(e.kind(), &ChatErrorKind::Syntax);
    assert_eq!(e.python_type(), "TemplateSyntaxError");
    assert_eq!(e.message(), "unexpected '}'");
    assert_eq!(e.line(), Some(2));
    assert!(e.column().is_some());
    let e = ChatTemplate::new("a\n{{ x|nope }}").expect_err("an unknown filter");
    assert_eq!(e.kind(), &ChatErrorKind::Assertion);
    assert_eq!(e.python_type(), "TemplateAssertionError");
    assert_eq!(e.message(), "No filter named 'nope'.");
    assert_eq!((e.line(), e.column()), (Some(2), Some(6)));
    // in an if branch jinja2 only checks when it runs
    let t = ChatTemplate::new("{% if x %}{{ x|nope }}{% endif %}ok").expect("compiles");
    assert_eq!(
        t.render(&RenderInput::new(Vec::new()))
            .expect("renders")
            .text,
        "ok"
    );
}

#[test]
fn strftime_now_reads_the_given_clock() {
    let mut input = RenderInput::new(Vec::new());
    input.now = Some(CASES_NOW);
    assert_eq!(
        render("{{ strftime_now('%d %B %Y, %A') }}", &input),
        Ok("01 January 2026, Thursday".to_owned())
    );
}

#[test]
fn batches_share_tools_and_variables() {
    let t = ChatTemplate::new("{{ bos_token }}{{ tools|length }}:{{ messages|length }}")
        .expect("compiles");
    let mut shared = RenderInput::new(Vec::new());
    shared.tools = Some(vec![json!({"type": "function", "function": {"name": "f"}})]);
    shared.kwargs.insert("bos_token".into(), json!("<s>"));
    let convs = vec![
        messages(json!([{"role": "user", "content": "a"}])),
        messages(json!([{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}])),
    ];
    let out = t.render_batch(&convs, &shared).expect("renders");
    let texts: Vec<_> = out.iter().map(|r| r.text.as_str()).collect();
    assert_eq!(texts, ["<s>1:1", "<s>1:2"]);
}

#[test]
fn apply_chat_template_entry_drops_none_and_checks_more() {
    let t = ChatTemplate::new("{% for m in messages %}{{ m }}{% endfor %}").expect("compiles");
    let mut input = RenderInput::new(messages(
        json!([{"role": "assistant", "content": null, "tool_calls": [1]}]),
    ));
    assert_eq!(
        t.render(&input).expect("renders").text,
        "{'role': 'assistant', 'content': None, 'tool_calls': [1]}"
    );
    input.entry = Entry::ApplyChatTemplate;
    assert_eq!(
        t.render(&input).expect("renders").text,
        "{'role': 'assistant', 'tool_calls': [1]}"
    );
    let mut empty = RenderInput::new(Vec::new());
    empty.entry = Entry::ApplyChatTemplate;
    assert_eq!(
        t.render(&empty).expect_err("refused").python_type(),
        "ValueError"
    );
    input.add_generation_prompt = true;
    input.continue_final_message = ContinueFinal::Content;
    assert_eq!(
        t.render(&input).expect_err("refused").message(),
        "continue_final_message and add_generation_prompt are not compatible. Use continue_final_message when you want the model to continue the final message, and add_generation_prompt when you want to add a header that will prompt it to start a new assistant message instead."
    );
}

#[test]
fn templates_render_from_several_threads() {
    let t = std::sync::Arc::new(ChatTemplate::new(T_GEN).expect("compiles"));
    let handles: Vec<_> = (0..4)
        .map(|i| {
            let t = t.clone();
            std::thread::spawn(move || {
                let input = RenderInput::new(messages(json!([
                    {"role": "assistant", "content": format!("n{i}")}
                ])));
                t.render(&input).map(|r| r.text)
            })
        })
        .collect();
    for (i, h) in handles.into_iter().enumerate() {
        // trim_blocks eats the newline after `{% endgeneration %}`
        assert_eq!(h.join().expect("joins"), Ok(format!("A: n{i}")));
    }
}

#[test]
fn tokenizer_configs_give_templates_and_special_tokens() {
    let config = json!({
        "chat_template": "{{ bos_token }}{% for m in messages %}{{ m.content }}{% endfor %}{{ eos_token }}",
        "bos_token": "<s>",
        "eos_token": {"__type": "AddedToken", "content": "</s>", "lstrip": false},
        "pad_token": null,
    });
    let set = ChatTemplates::from_tokenizer_config(&config.to_string(), Limits::default())
        .expect("loads");
    assert_eq!(set.names().collect::<Vec<_>>(), ["default"]);
    let input = RenderInput::new(messages(json!([{"role": "user", "content": "hi"}])));
    assert_eq!(set.render(&input).expect("renders").text, "<s>hi</s>");
    // a variable of the input overrides a special token
    let mut own = input.clone();
    own.kwargs.insert("bos_token".into(), json!("[BOS]"));
    assert_eq!(set.render(&own).expect("renders").text, "[BOS]hi</s>");
}

#[test]
fn named_templates_are_selected_as_transformers_selects_them() {
    let config = json!({"chat_template": [
        {"name": "default", "template": "default"},
        {"name": "tool_use", "template": "tools"},
        {"name": "rag", "template": "rag"},
    ]});
    let set = ChatTemplates::from_tokenizer_config(&config.to_string(), Limits::default())
        .expect("loads");
    let source = |name, tools| set.select(name, tools).map(|t| t.source().to_owned());
    assert_eq!(source(None, false), Ok("default".to_owned()));
    assert_eq!(source(None, true), Ok("tools".to_owned()));
    assert_eq!(source(Some("rag"), true), Ok("rag".to_owned()));
    assert!(source(Some("nope"), false).is_err());
    let mut input = RenderInput::new(Vec::new());
    input.tools = Some(Vec::new()); // given, even if empty
    assert_eq!(set.render(&input).expect("renders").text, "tools");

    let no_default = json!({"chat_template": [
        {"name": "a", "template": "a"}, {"name": "b", "template": "b"}
    ]});
    let set = ChatTemplates::from_tokenizer_config(&no_default.to_string(), Limits::default())
        .expect("loads");
    let e = set.select(None, false).expect_err("no default");
    assert_eq!(e.python_type(), "ValueError");
    assert_eq!(
        e.message(),
        "This model has multiple chat templates with no default specified! Please either pass a chat template or the name of the template you wish to use to the `chat_template` argument. Available template names are ['a', 'b']."
    );
}

#[test]
fn model_directories_prefer_the_jinja_files() {
    let dir = std::env::temp_dir().join(format!("retort-chat-dir-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("additional_chat_templates")).expect("mkdir");
    let write = |name: &str, text: &str| {
        let mut f = std::fs::File::create(dir.join(name)).expect("create");
        f.write_all(text.as_bytes()).expect("write");
    };
    write(
        "tokenizer_config.json",
        &json!({"chat_template": "from config", "eos_token": "</s>"}).to_string(),
    );
    write("chat_template.jinja", "from file {{ eos_token }}");
    write(
        "additional_chat_templates/tool_use.jinja",
        "tools {{ eos_token }}",
    );
    let set = ChatTemplates::from_dir(&dir, Limits::default()).expect("loads");
    let mut names: Vec<_> = set.names().collect();
    names.sort_unstable();
    assert_eq!(names, ["default", "tool_use"]);
    let mut input = RenderInput::new(Vec::new());
    assert_eq!(set.render(&input).expect("renders").text, "from file </s>");
    input.tools = Some(Vec::new());
    assert_eq!(set.render(&input).expect("renders").text, "tools </s>");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_case_format_round_trips() {
    let cases = [
        json!({"id": "ok", "chat_template": "{{ messages[0].content }}{% generation %}x{% endgeneration %}{{ strftime_now('%Y') }}", "messages": [{"role": "user", "content": "é"}]}),
        json!({"id": "err", "chat_template": "{{ raise_exception('no') }}"}),
        json!({"id": "syntax", "chat_template": "{% if %}"}),
    ];
    let mut input = String::new();
    for c in &cases {
        input.push_str(&c.to_string());
        input.push('\n');
    }
    input.push_str("not json\n\n");
    let mut out = Vec::new();
    render_cases(input.as_bytes(), &mut out).expect("runs");
    let lines: Vec<Value> = String::from_utf8(out)
        .expect("utf-8")
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON lines"))
        .collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(
        lines[0],
        json!({"id": "ok", "rendered": "éx2026", "generation": [[1, 2]]})
    );
    assert_eq!(
        lines[1],
        json!({"id": "err", "error": {"type": "TemplateError", "message": "no"}})
    );
    assert_eq!(lines[2]["error"]["type"], "TemplateSyntaxError");
    assert_eq!(lines[3]["id"], Value::Null);
    assert_eq!(lines[3]["error"]["type"], "JSONDecodeError");
}
