//! Shared helpers of retort's workspace tests: where the vectors and
//! templates live, and how to run a case file.

pub mod chat_fuzz;
pub mod fuzz_checks;

use retort::Value;
use retort_conformance::{compare, run_case};
use std::path::{Path, PathBuf};

/// The workspace root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ sits in the workspace")
        .to_path_buf()
}

/// The rows of the table under the heading `## {heading}` of
/// `templates/README.md` (the lists of known failures), each row's cells
/// trimmed; only rows whose first cell starts with a backtick.
pub fn readme_rows(heading: &str) -> Vec<Vec<String>> {
    let text =
        std::fs::read_to_string(root().join("templates/README.md")).expect("templates/README.md");
    let mut inside = false;
    let mut rows = Vec::new();
    for line in text.lines() {
        if let Some(h) = line.strip_prefix("## ") {
            inside = h.trim() == heading;
            continue;
        }
        if inside && line.starts_with("| `") {
            rows.push(
                line.trim()
                    .trim_matches('|')
                    .split('|')
                    .map(|c| c.trim().to_owned())
                    .collect(),
            );
        }
    }
    rows
}

/// Reads a JSON-lines case file with Python's JSON semantics.
pub fn read_cases(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.split('\n')
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, l)| {
            retort::py::json_loads_with_depth(l, usize::MAX)
                .unwrap_or_else(|e| panic!("{}:{}: {e}", path.display(), i + 1))
        })
        .collect()
}

/// Runs every case of `path` through the run-time parser (templates named by
/// cases come from `templates`) and returns `(passed, failures)`.
pub fn run_file(path: &Path, templates: &Path) -> (usize, Vec<String>) {
    let load = |name: &str| {
        std::fs::read_to_string(templates.join(format!("{name}.json")))
            .map_err(|e| format!("{name}: {e}"))
    };
    let mut passed = 0;
    let mut failures = Vec::new();
    for case in read_cases(path) {
        let id = retort_conformance::field(&case, "id")
            .map(retort_conformance::to_line)
            .unwrap_or_default();
        match run_case(&case, &load) {
            Ok(result) => {
                let problems = compare(&case, &result);
                if problems.is_empty() {
                    passed += 1;
                } else {
                    failures.push(format!("{id}: {}", problems.join("\n  ")));
                }
            }
            Err(e) => failures.push(format!("{id}: {e}")),
        }
    }
    (passed, failures)
}

/// Runs generations through compiled parsers (the enums that
/// `retort_codegen::Builder` generates) in the conformance result format,
/// through the same driver as the run-time parser. The message goes through
/// its typed form (`to_value`), so the typed conversion is checked on every
/// case too.
#[macro_export]
macro_rules! compiled_runner {
    ($runner:ident, $model:ty, $parser:ty) => {
        /// A compiled template as a conformance runner.
        pub struct $runner(pub $model);

        impl retort_conformance::Session for $parser {
            fn initial(&self) -> Vec<retort::OwnedEvent> {
                self.initial_events().to_vec()
            }
            fn feed_into(
                &mut self,
                piece: &str,
                out: &mut Vec<retort::OwnedEvent>,
            ) -> Result<(), retort::ParseError> {
                out.extend(self.feed(piece)?.iter().map(|e| e.to_owned_event()));
                Ok(())
            }
            fn finish_into(
                &mut self,
                out: &mut Vec<retort::OwnedEvent>,
            ) -> Result<retort::Map, retort::ParseError> {
                #[allow(unused_imports)]
                use retort::AssistantMessage as _;
                let (message, events) = self.finalize()?;
                out.extend(events.iter().map(|e| e.to_owned_event()));
                match message.to_value() {
                    retort::Value::Map(m) => Ok(m),
                    other => Err(retort::ParseError {
                        kind: retort::ParseErrorKind::Internal,
                        field: None,
                        offset: 0,
                        raw: other.to_json_string(),
                        message: "a typed message is not a dict".into(),
                    }),
                }
            }
        }

        impl retort_conformance::Runner for $runner {
            fn run(
                &self,
                prefix: &str,
                tools: Option<&retort::Value>,
                chunks: &[&str],
            ) -> retort::Value {
                let parser = match tools {
                    Some(tools) => self.0.parser_with_tools(prefix, tools),
                    None => self.0.parser(prefix),
                };
                retort_conformance::run_session(parser, chunks)
            }
        }
    };
}

/// xorshift64: deterministic test texts without a dependency.
pub struct Rng(pub u64);

impl Rng {
    /// The next number.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number below `n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// `text` cut into pieces of `step` characters (the last may be shorter).
pub fn char_pieces(text: &str, step: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    for (n, (i, _)) in text.char_indices().enumerate() {
        if n > 0 && n % step == 0 {
            out.push(&text[start..i]);
            start = i;
        }
    }
    out.push(&text[start..]);
    out
}
