//! Templates made of random pieces of template syntax (valid or not)
//! compile to a template or a typed error, and render to a text or a typed
//! error: never a panic, never past the limits.

use retort_chat::{ChatTemplate, ContinueFinal, Limits, RenderInput};
use serde_json::json;

/// Pieces templates are made of: tags, expressions with every operator the
/// source rewrite handles, filters, tests, literals with escapes, and
/// broken syntax.
const PIECES: &[&str] = &[
    "{{ ",
    " }}",
    "{% ",
    " %}",
    "{%- ",
    " -%}",
    "{# c #}",
    "{% raw %}",
    "{% endraw %}",
    "{% if ",
    "{% elif ",
    "{% else %}",
    "{% endif %}",
    "{% for m in messages %}",
    "{% endfor %}",
    "{% for k, v in d.items() if k %}",
    "{% set ns = namespace(x=[]) %}",
    "{% set ns.x = ",
    "{% set a, b = ",
    "{% set y %}",
    "{% endset %}",
    "{% macro f(a, b=1) %}",
    "{% endmacro %}",
    "{{ f(1) }}",
    "{% call f(2) %}",
    "{% endcall %}",
    "{% filter upper %}",
    "{% endfilter %}",
    "{% generation %}",
    "{% endgeneration %}",
    "{% break %}",
    "{% continue %}",
    "{% with z = 1 %}",
    "{% endwith %}",
    "messages",
    "m",
    "m.content",
    "m['role']",
    "messages[0]",
    "messages[-1:]",
    "x.y.z",
    "d['k']",
    "ns.x",
    "loop.index",
    "tools",
    "none",
    "true",
    "1",
    "-2",
    "3.5",
    "1e300",
    "'s'",
    "\"q\\n\"",
    "'\\x41\\u00e9\\101'",
    "'%s %d'",
    "'{}'",
    " + ",
    " - ",
    " * ",
    " / ",
    " // ",
    " % ",
    " ** ",
    " ~ ",
    " == ",
    " != ",
    " < ",
    " >= ",
    " in ",
    " not in ",
    " and ",
    " or ",
    "not ",
    " if ",
    " else ",
    " is defined",
    " is none",
    " is string",
    " is mapping",
    " is divisibleby 2",
    "|length",
    "|tojson",
    "|trim",
    "|upper",
    "|join(', ')",
    "|map(attribute='a')",
    "|list",
    "|selectattr('role', 'equalto', 'user')",
    "|default('d')",
    "|items",
    "|dictsort",
    "|first",
    "|string",
    "|int",
    "|round(2)",
    "|indent(2)",
    "|replace('a', 'b')",
    "|batch(2)",
    "|e",
    "|safe",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ", ",
    ": ",
    ".",
    "|",
    "=",
    "'unterminated",
    "\\",
    "{{",
    "}}",
    "{%",
    "%}",
    ".strip()",
    ".split(',')",
    ".startswith('a')",
    ".format(1)",
    ".append(1)",
    ".get('k')",
    ".keys()",
    "raise_exception('no')",
    "strftime_now('%Y')",
    "range(3)",
    "range(10**9)",
    "dict(a=1)",
    "namespace()",
    "\n",
    "  ",
    "text",
    "é",
    "😀",
];

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % u64::try_from(n).unwrap_or(1)).unwrap_or(0)
    }
}

#[test]
fn random_templates_never_panic() {
    let limits = Limits {
        fuel: Some(200_000),
        output_bytes: 1 << 20,
        ..Limits::default()
    };
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut input = RenderInput::new(vec![
        json!({"role": "system", "content": "sys"}),
        json!({"role": "user", "content": [{"type": "text", "text": "hi"}]}),
        json!({"role": "assistant", "content": "ok", "reasoning_content": "r",
               "tool_calls": [{"function": {"name": "f", "arguments": {"a": 1}}}]}),
    ]);
    input.tools = Some(vec![json!({"type": "function", "function": {"name": "f"}})]);
    input
        .kwargs
        .insert("d".into(), json!({"k": [1, 2.5, null]}));
    let (mut compiled, mut rendered) = (0, 0);
    for case in 0..4000 {
        let n = 1 + rng.below(24);
        let source: String = (0..n).map(|_| PIECES[rng.below(PIECES.len())]).collect();
        input.add_generation_prompt = case % 2 == 0;
        input.continue_final_message = if case % 7 == 0 {
            ContinueFinal::Content
        } else {
            ContinueFinal::No
        };
        let Ok(template) = ChatTemplate::with_limits(&source, limits) else {
            continue;
        };
        compiled += 1;
        if let Ok(r) = template.render(&input) {
            rendered += 1;
            assert!(r.text.len() <= limits.output_bytes, "{source:?}");
        }
    }
    // the pieces make enough valid templates to exercise the renderer
    assert!(compiled > 400, "{compiled} compiled");
    assert!(rendered > 100, "{rendered} rendered");
}
