//! Hostile templates stop with a typed error, quickly and in bounded memory:
//! a loop that runs (almost) forever, recursion without end, a huge string,
//! deeply nested data — each under the default [`Limits`].

use std::time::{Duration, Instant};

use retort_chat::{ChatTemplate, Limit, Limits, RenderError, RenderErrorKind, RenderInput};
use serde_json::{Value, json};

fn render(source: &str, input: &RenderInput) -> (Result<String, RenderError>, Duration) {
    let t = ChatTemplate::new(source).expect("the template compiles");
    let start = Instant::now();
    let r = t.render(input).map(|r| r.text);
    (r, start.elapsed())
}

fn user() -> RenderInput {
    RenderInput::new(vec![json!({"role": "user", "content": "hi"})])
}

fn limit_of(r: &Result<String, RenderError>) -> Option<Limit> {
    match r {
        Err(e) => match e.kind() {
            RenderErrorKind::Limit { which } => Some(*which),
            _ => None,
        },
        Ok(_) => None,
    }
}

/// Debug builds are several times slower; the bound is for release-like
/// speed with headroom.
const FAST: Duration = Duration::from_secs(1);

#[test]
fn a_loop_without_end_runs_out_of_fuel() {
    // 10^10 iterations: every range is within jinja2's MAX_RANGE.
    let (r, took) = render(
        "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
        &user(),
    );
    assert_eq!(limit_of(&r), Some(Limit::Fuel), "{r:?}");
    assert!(took < FAST, "took {took:?}");
    let e = r.unwrap_err();
    assert_eq!(e.python_type(), "TimeoutError");
}

#[test]
fn a_range_over_the_sandbox_maximum_is_jinja2s_overflow_error() {
    let (r, took) = render("{% for i in range(10**9) %}{{ i }}{% endfor %}", &user());
    let e = r.unwrap_err();
    assert_eq!(e.python_type(), "OverflowError");
    assert_eq!(
        e.message(),
        "Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000)."
    );
    assert!(took < FAST, "took {took:?}");
}

#[test]
fn recursion_without_end_stops_at_the_recursion_limit() {
    let (r, took) = render(
        "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}",
        &user(),
    );
    assert_eq!(limit_of(&r), Some(Limit::Recursion), "{r:?}");
    assert_eq!(r.unwrap_err().python_type(), "RecursionError");
    assert!(took < FAST, "took {took:?}");
}

#[test]
fn recursion_at_the_limit_fits_a_small_stack() {
    // Test threads have 2 MiB of stack; renders must not overflow it even
    // at the deepest recursion the limit allows.
    let handle = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(|| {
            render(
                "{% macro f(n) %}{% for i in [1] %}{{ f(n + 1) }}{% endfor %}{% endmacro %}{{ f(0) }}",
                &user(),
            )
            .0
        })
        .expect("a thread");
    let r = handle.join().expect("no stack overflow");
    assert_eq!(limit_of(&r), Some(Limit::Recursion), "{r:?}");
}

#[test]
fn a_huge_string_is_refused_before_it_is_built() {
    for source in [
        "{{ 'x' * 10**9 }}",
        "{% set s = 'x' * 10**9 %}{{ s|length }}",
        "{{ ('x' * 1000) * 1000000 }}",
    ] {
        let (r, took) = render(source, &user());
        assert!(
            matches!(limit_of(&r), Some(Limit::Fuel | Limit::Output)),
            "{source}: {r:?}"
        );
        assert!(took < FAST, "{source}: took {took:?}");
    }
}

#[test]
fn a_string_doubled_until_it_is_huge_runs_out_of_fuel() {
    let (r, took) = render(
        "{% set ns = namespace(s='x') %}{% for i in range(60) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s|length }}",
        &user(),
    );
    assert!(
        matches!(limit_of(&r), Some(Limit::Fuel | Limit::Output)),
        "{r:?}"
    );
    assert!(took < FAST, "took {took:?}");
}

#[test]
fn output_past_the_bound_stops_the_render() {
    let limits = Limits {
        output_bytes: 1 << 20,
        ..Limits::default()
    };
    let t = ChatTemplate::with_limits(
        "{% for i in range(100000) %}{{ 'y' * 100 }}{% endfor %}",
        limits,
    )
    .expect("compiles");
    let e = t.render(&user()).unwrap_err();
    assert_eq!(
        e.kind(),
        &RenderErrorKind::Limit {
            which: Limit::Output
        }
    );
    assert_eq!(e.python_type(), "MemoryError");
}

fn nested(depth: usize) -> Value {
    let mut v = json!("leaf");
    for _ in 0..depth {
        v = Value::Array(vec![v]);
    }
    v
}

#[test]
fn deeply_nested_data_is_refused() {
    let mut input = user();
    input.messages[0]["content"] = nested(100_000);
    let (r, took) = render("{{ messages[0].content }}", &input);
    assert_eq!(limit_of(&r), Some(Limit::Depth), "{r:?}");
    assert!(took < FAST, "took {took:?}");
    // serde_json's own drop of such a value recurses; take it apart here
    let mut v = input.messages.pop();
    while let Some(Value::Object(mut m)) = v {
        v = m.remove("content");
        while let Some(Value::Array(mut a)) = v {
            v = a.pop();
        }
    }
}

#[test]
fn nesting_built_by_the_template_is_refused_when_printed() {
    let (r, took) = render(
        "{% set ns = namespace(x=[]) %}{% for i in range(5000) %}{% set ns.x = [ns.x] %}{% endfor %}{{ ns.x }}",
        &user(),
    );
    assert!(r.is_err(), "{r:?}");
    assert!(took < FAST, "took {took:?}");
}

#[test]
fn limits_are_configurable() {
    let limits = Limits {
        fuel: Some(1000),
        ..Limits::default()
    };
    let t = ChatTemplate::with_limits("{% for i in range(10000) %}{{ i }}{% endfor %}", limits)
        .expect("compiles");
    assert_eq!(
        t.render(&user()).unwrap_err().kind(),
        &RenderErrorKind::Limit { which: Limit::Fuel }
    );
    let unbounded = Limits {
        fuel: None,
        ..Limits::default()
    };
    let t = ChatTemplate::with_limits("{% for i in range(10000) %}{{ i }}{% endfor %}", unbounded)
        .expect("compiles");
    assert!(t.render(&user()).is_ok());
}

#[test]
fn nesting_built_by_a_loop_is_refused_when_stored() {
    // Each iteration wraps the value once more; unchecked, the chain would
    // be 100,000 deep and dropping it would overflow the stack.
    let handle = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(|| {
            render(
                "{% set ns = namespace(x=[]) %}{% for i in range(100000) %}{% set ns.x = [ns.x] %}{% endfor %}{{ ns.x|length }}",
                &user(),
            )
            .0
        })
        .expect("a thread");
    let r = handle.join().expect("no stack overflow");
    assert_eq!(limit_of(&r), Some(Limit::Depth), "{r:?}");
}
