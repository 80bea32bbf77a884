//! The minijinja environment, configured as transformers configures jinja2
//! (`_cached_compile_jinja_template`): `trim_blocks`, `lstrip_blocks`, loop
//! controls, no autoescape, the default (lenient) undefined, jinja2's
//! filters, tests and globals only, plus transformers' `tojson`,
//! `raise_exception`, `strftime_now`, `dict` and `namespace`. Sandboxed by
//! construction: no loader (no file access), no attribute access beyond the
//! data, values printed and called as Python would.

use minijinja::value::{Rest, Value, ValueOrKwargs};
use minijinja::{AutoEscape, Environment, Error, Output, State, UndefinedBehavior};

use crate::error::{PyExc, py_err};
use crate::exprs::{
    ADD_FN, ATTR_FN, CMP_FN, CONCAT_FN, IN_FN, ITEM_FN, MOD_FN, SLICE_FN, UNARY_FN,
};
use crate::limits::Limits;
use crate::repr;
use crate::rewrite::{GENERATION_FILTER, ITER_FN, SET_FN};

/// Builds the environment for templates rendered under `limits`.
pub(crate) fn environment(limits: &Limits) -> Environment<'static> {
    let mut env = Environment::empty();
    env.set_syntax(
        minijinja::syntax::SyntaxConfig::builder()
            .trim_blocks(true)
            .lstrip_blocks(true)
            .build()
            .unwrap_or_default(),
    );
    env.set_undefined_behavior(UndefinedBehavior::Lenient);
    env.set_auto_escape_callback(|_| AutoEscape::None);
    // Debug mode makes minijinja remember where undefined values came from,
    // which is what jinja2's messages name (`'bos_token' is undefined`).
    env.set_debug(true);
    env.set_fuel(limits.fuel);
    env.set_recursion_limit(limits.recursion);
    env.set_formatter(format);
    env.set_unknown_method_callback(crate::methods::unknown_method);
    crate::filters::register(&mut env);
    crate::tests::register(&mut env);
    crate::globals::register(&mut env);
    env.add_filter(GENERATION_FILTER, |state: &State, body: Value| {
        crate::limits::generation(state, body)
    });
    // The functions the source rewrite calls (`crate::rewrite`,
    // `crate::exprs`).
    // Each counts itself (`crate::attrs::tick`), for the undefined-value
    // messages.
    env.add_function(ITER_FN, |value: Value| -> Result<Value, Error> {
        use minijinja::value::ValueKind;
        crate::attrs::tick();
        let iterable = match value.kind() {
            ValueKind::None | ValueKind::Bool | ValueKind::Number => false,
            ValueKind::Plain => value
                .downcast_object_ref::<crate::value::Unsafe>()
                .is_some(),
            ValueKind::Map => repr::is_dict(&value),
            _ => true,
        };
        if iterable {
            Ok(value)
        } else {
            Err(crate::error::type_err(format!(
                "'{}' object is not iterable",
                repr::type_name(&value)
            )))
        }
    });
    env.add_function(MOD_FN, |lhs: Value, rhs: Value| {
        crate::attrs::tick();
        crate::ops::python_mod(&lhs, &rhs)
    });
    let max = limits.output_bytes;
    env.add_function(ADD_FN, move |lhs: Value, rhs: Value| {
        crate::attrs::tick();
        crate::ops::python_add(&lhs, &rhs, max)
    });
    env.add_function(CONCAT_FN, move |args: Rest<Value>| {
        crate::attrs::tick();
        crate::ops::concat(&args, max)
    });
    env.add_function(SLICE_FN, |args: Rest<ValueOrKwargs>| {
        crate::attrs::tick();
        let args = args.into_values();
        let arg = |i: usize| args.get(i).cloned().unwrap_or(Value::from(()));
        crate::ops::python_slice(&arg(0), &arg(1), &arg(2), &arg(3))
    });
    env.add_function(UNARY_FN, |op: String, v: Value| {
        crate::attrs::tick();
        crate::ops::unary(&op, &v)
    });
    env.add_function(ATTR_FN, |obj: Value, name: String| {
        crate::attrs::getattr(&obj, &name)
    });
    env.add_function(ITEM_FN, |obj: Value, key: Value| {
        crate::attrs::getitem(&obj, &key)
    });
    env.add_function(CMP_FN, |lhs: Value, op: String, rhs: Value| {
        crate::attrs::tick();
        crate::compare::py_compare(&lhs, &op, &rhs)
    });
    env.add_function(IN_FN, |lhs: Value, rhs: Value| {
        crate::attrs::tick();
        if rhs.is_undefined() && !lhs.is_undefined() {
            // `x in undefined`: iterating the undefined value is empty
            return Ok(Value::from(false));
        }
        crate::tests::py_contains(&rhs, &lhs).map(Value::from)
    });
    let depth = limits.depth;
    env.add_function(
        SET_FN,
        move |value: Value, name: Value, unpack: Option<usize>| {
            crate::attrs::tick();
            if let Some(name) = name.as_str() {
                crate::globals::check_namespace_name(name)?;
            }
            crate::value::check_stored_depth(&value, depth)?;
            match unpack {
                Some(n) => crate::ops::unpack(&value, n),
                None => Ok::<Value, Error>(value),
            }
        },
    );
    env
}

/// `{{ value }}`: Python's `str(value)`.
fn format(out: &mut Output, _state: &mut State, value: &Value) -> Result<(), Error> {
    if let Some(s) = value.as_str() {
        return out.write_str(s).map_err(Error::from);
    }
    let mut text = String::new();
    repr::write_str(value, &mut text).map_err(|_| {
        py_err(
            PyExc::RecursionError,
            "maximum recursion depth exceeded while getting the repr of an object",
        )
    })?;
    out.write_str(&text).map_err(Error::from)
}
