//! `conformance-compiled CASES.jsonl`: runs a case file through parsers
//! compiled at build time (every template of `RETORT_CONFORMANCE_TEMPLATES`,
//! default `tests/conformance/templates`) and prints one result line per
//! case, exactly like `retort conformance`. Cases with an inline template
//! are skipped (`{"id": ..., "skipped": "inline template"}`).

use retort::Value;
use retort::conformance::{field, run_case_with, to_line};
use std::io::{BufRead, Write};
use std::process::ExitCode;

mod compiled {
    include!(concat!(env!("OUT_DIR"), "/conformance_templates.rs"));
}
use compiled::Model;

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
        let case = retort::py::json_loads(&line)
            .map_err(|e| format!("{}:{}: {e}", path.display(), n + 1))?;
        let id = field(&case, "id").cloned().unwrap_or(Value::Null);
        let result = match field(&case, "template") {
            Some(Value::Str(name)) => match name.parse::<Model>() {
                Ok(model) => run_case_with(&case, &Compiled(model)),
                Err(e) => return Err(format!("{}:{}: {e}", path.display(), n + 1)),
            },
            _ => {
                let mut m = retort::Map::new();
                m.insert("id".into(), id);
                m.insert("skipped".into(), Value::Str("inline template".into()));
                Value::Map(m)
            }
        };
        writeln!(out, "{}", to_line(&result)).map_err(|e| e.to_string())?;
    }
    out.flush().map_err(|e| e.to_string())
}
