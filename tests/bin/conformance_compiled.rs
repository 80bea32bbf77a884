//! `conformance-compiled CASES.jsonl`: runs a case file through parsers
//! compiled at build time and prints one result line per case, exactly like
//! `retort conformance`. Compiled in: every template of
//! `RETORT_CONFORMANCE_TEMPLATES` (default `tests/conformance/templates`)
//! for cases naming a template, and every valid inline template of the case
//! files in `RETORT_CONFORMANCE_CASES` (see build.rs). An inline template
//! the loader rejects gives the loader's error, as the reference expects (the
//! code generator rejects it at build time with the same rule); a valid one
//! that was not compiled in is reported as skipped, naming the variable.

use retort::Value;
use retort_conformance::{field, run_case, run_case_with, to_line};
use std::io::{BufRead, Write};
use std::process::ExitCode;

mod compiled {
    include!(concat!(env!("OUT_DIR"), "/conformance_templates.rs"));
    include!(concat!(env!("OUT_DIR"), "/conformance_inline.rs"));
}
use compiled::{INLINE, Model};

retort_tests::compiled_runner!(Compiled, Model, compiled::ModelParser);

fn main() -> ExitCode {
    let Some(path) = std::env::args_os().nth(1) else {
        eprintln!("usage: conformance-compiled CASES.jsonl");
        return ExitCode::from(2);
    };
    match run(std::path::Path::new(&path)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("conformance-compiled: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(path: &std::path::Path) -> Result<(), String> {
    let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let out = std::io::stdout();
    let mut out = std::io::BufWriter::new(out.lock());
    for (n, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|e| format!("{}: {e}", path.display()))?;
        if line.trim().is_empty() {
            continue;
        }
        let case = retort::py::json_loads_with_depth(&line, usize::MAX)
            .map_err(|e| format!("{}:{}: {e}", path.display(), n + 1))?;
        let id = field(&case, "id").cloned().unwrap_or(Value::Null);
        let result = match field(&case, "template") {
            Some(Value::Str(name)) => match name.parse::<Model>() {
                Ok(model) => run_case_with(&case, &Compiled(model)),
                Err(e) => return Err(format!("{}:{}: {e}", path.display(), n + 1)),
            },
            Some(t @ Value::Map(_)) => {
                let key = t.to_json_string();
                match INLINE.binary_search_by(|(k, _)| (*k).cmp(key.as_str())) {
                    Ok(i) => run_case_with(&case, &Compiled(INLINE[i].1)),
                    Err(_) if retort::Template::from_value(t).is_err() => {
                        // No parser can be compiled from it: the result is
                        // the loader's error (the reference's expectation).
                        run_case(&case, &|name: &str| Err(format!("no template {name:?}")))
                            .map_err(|e| format!("{}:{}: {e}", path.display(), n + 1))?
                    }
                    Err(_) => skipped(
                        id,
                        "inline template not compiled in (build with RETORT_CONFORMANCE_CASES naming this file)",
                    ),
                }
            }
            _ => skipped(id, "no template"),
        };
        writeln!(out, "{}", to_line(&result)).map_err(|e| e.to_string())?;
    }
    out.flush().map_err(|e| e.to_string())
}

/// A result line saying why a case did not run.
fn skipped(id: Value, why: &str) -> Value {
    let mut m = retort::Map::default();
    m.insert("id".into(), id);
    m.insert("skipped".into(), Value::Str(why.into()));
    Value::Map(m)
}
