//! Where the renderer knowingly differs from the reference (transformers
//! 5.23.0 on jinja2 3.1.6). Each test pins what the renderer does; the
//! comment says what the reference does. `docs/divergences.md` lists them.

use retort_chat::{ChatTemplate, Limit, RenderErrorKind, RenderInput};
use serde_json::json;

fn render(source: &str, input: &RenderInput) -> Result<String, (String, String)> {
    let t = ChatTemplate::new(source)
        .map_err(|e| (e.python_type().to_owned(), e.message().to_owned()))?;
    t.render(input)
        .map(|r| r.text)
        .map_err(|e| (e.python_type().to_owned(), e.message().to_owned()))
}

fn empty() -> RenderInput {
    RenderInput::new(Vec::new())
}

#[test]
fn integers_past_64_bits_arrive_as_floats() {
    // Reference: json.loads keeps 10**20 an int and prints
    // 100000000000000000000; serde_json makes it an f64.
    let mut input = empty();
    input.kwargs.insert(
        "n".into(),
        serde_json::from_str("100000000000000000000").expect("JSON"),
    );
    assert_eq!(render("{{ n }}", &input), Ok("1e+20".to_owned()));
}

#[test]
fn unicode_name_escapes_are_kept_as_written() {
    // Reference: '\N{BULLET}' is "•" (Python's unicode-escape knows the
    // names); there is no Unicode name table here.
    assert_eq!(
        render(r"{{ '\N{BULLET}' }}", &empty()),
        Ok(r"\N{BULLET}".to_owned())
    );
}

#[test]
fn macro_defaults_do_not_see_earlier_arguments() {
    // Reference: "Hi AHi!" (a default is evaluated with the earlier
    // arguments bound); minijinja evaluates it in the caller's scope.
    assert_eq!(
        render(
            "{% macro greet(name, greeting='Hi', punct=greeting ~ '!') %}{{ greeting }} {{ name }}{{ punct }}{% endmacro %}{{ greet('A') }}",
            &empty()
        ),
        Ok("Hi A!".to_owned())
    );
}

#[test]
fn macros_have_no_varargs_or_kwargs() {
    // Reference: a macro whose body names `varargs` / `kwargs` takes extra
    // arguments into them ("1-(2,)"); minijinja refuses the call.
    let r = render(
        "{% macro m(a) %}{{ a }}-{{ varargs }}{% endmacro %}{{ m(1, 2) }}",
        &empty(),
    );
    assert_eq!(r.map_err(|(t, _)| t), Err("TypeError".to_owned()));
}

#[test]
fn macro_argument_errors_have_minijinjas_messages() {
    // Reference: "macro 'm' takes not more than 1 argument(s)" (same class).
    let r = render(
        "{% macro m(x) %}{{ x }}{% endmacro %}{{ m(1, 2) }}",
        &empty(),
    );
    assert_eq!(r.map_err(|(t, _)| t), Err("TypeError".to_owned()));
}

#[test]
fn chained_comparisons_are_minijinjas() {
    // Reference: `1 < 'a' < 2` is a TypeError ('<' between int and str);
    // a chain is left to minijinja, which orders unlike types.
    assert_eq!(
        render("{{ 1 < 'a' < 2 }}", &empty()),
        Ok("False".to_owned())
    );
    // a single comparison is Python's
    assert_eq!(
        render("{{ 1 < 'a' }}", &empty()).map_err(|(t, _)| t),
        Err("TypeError".to_owned())
    );
}

#[test]
fn addresses_in_printed_objects_are_fixed() {
    // Reference: CPython prints the object's address, which differs from
    // run to run ("<generator object sync_do_map at 0x7f...>").
    assert_eq!(
        render("{{ ['a']|map('upper') }}", &empty()),
        Ok("<generator object sync_do_map at 0x7f0000000000>".to_owned())
    );
}

#[test]
fn uncommon_syntax_errors_keep_minijinjas_wording() {
    // Reference: "Unexpected end of template. Jinja was looking for the
    // following tags: 'elif' or 'else' or 'endif'. ..." (same class).
    let e = ChatTemplate::new("{% if x %}").expect_err("unclosed");
    assert_eq!(e.python_type(), "TemplateSyntaxError");
    assert_eq!(
        e.message(),
        "unexpected end of input, expected end of block"
    );
}

#[test]
fn big_results_are_refused_at_the_bounds() {
    // Reference: renders the 200 MB string (its runner caps memory at
    // 4 GiB). The default output bound is 64 MiB.
    let r = ChatTemplate::new("{{ 'x' * 200000000 }}")
        .expect("compiles")
        .render(&empty());
    let e = r.expect_err("refused");
    assert_eq!(
        e.kind(),
        &RenderErrorKind::Limit {
            which: Limit::Output
        }
    );
    assert_eq!(e.python_type(), "MemoryError");
}

#[test]
fn huge_int_conversions_saturate() {
    // Reference: 1e100|int is the exact integer (Python's ints are
    // unbounded); here the largest 128-bit integer.
    assert_eq!(
        render("{{ 1e100|int }}", &empty()),
        Ok("170141183460469231731687303715884105727".to_owned())
    );
}

#[test]
fn markup_methods_do_not_escape_their_arguments() {
    // Reference: Markup.replace escapes the replacement ("&amp;"); the
    // crate's str methods keep a safe string safe but do not escape.
    assert_eq!(
        render("{{ ('<'|safe).replace('<', '&') }}", &empty()),
        Ok("&".to_owned())
    );
}

#[test]
fn underscore_attributes_of_namespaces_in_block_sets_are_allowed() {
    // Reference: `{% set ns._x %}...{% endset %}` is transformers'
    // SecurityError, like `{% set ns._x = 1 %}` (which is refused here too).
    assert_eq!(
        render(
            "{% set ns = namespace() %}{% set ns._x %}v{% endset %}{{ ns._x }}",
            &empty()
        ),
        Ok("v".to_owned())
    );
    assert_eq!(
        render("{% set ns = namespace() %}{% set ns._x = 1 %}", &empty()).map_err(|(t, _)| t),
        Err("SecurityError".to_owned())
    );
}

#[test]
fn undefined_messages_name_the_last_missed_lookup() {
    // Reference: the undefined value carries its own message. Here the
    // message is that of the last lookup that found nothing, which is the
    // same unless another lookup missed before the value is used.
    let input = RenderInput::new(vec![json!({"role": "user"})]);
    assert_eq!(
        render(
            "{% set c = messages[0].content %}{% set r = messages[0].name %}{{ c + 'x' }}",
            &input
        ),
        Err((
            "UndefinedError".to_owned(),
            // reference: "'dict object' has no attribute 'content'"
            "'dict object' has no attribute 'name'".to_owned()
        ))
    );
}
