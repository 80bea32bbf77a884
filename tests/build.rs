//! Compiles templates for the compiled-parser tests with retort-codegen's
//! `Builder`:
//!
//! - `conformance_templates.rs`: every template of the directory named by
//!   `RETORT_CONFORMANCE_TEMPLATES` (default `tests/conformance/templates`),
//!   for the `conformance-compiled` binary;
//! - `vector_templates.rs`: every template the repository's own vectors use
//!   (`templates/*.json` and each valid inline template of
//!   `tests/conformance/cases/*.jsonl`), for `cargo test`.

use retort_engine::py::json_loads;
use retort_engine::{Template, Value};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let out = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default());
    if let Err(e) = run(&manifest, &out) {
        // A build script reports problems by failing with a message.
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

/// FNV-1a: a stable name for an inline template.
fn fnv(text: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

fn run(manifest: &Path, out: &Path) -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-env-changed=RETORT_CONFORMANCE_TEMPLATES");
    let dir = match std::env::var_os("RETORT_CONFORMANCE_TEMPLATES") {
        Some(d) => PathBuf::from(d),
        None => manifest.join("conformance/templates"),
    };
    // The binary's templates: the directory, as the runner wants.
    retort_codegen::Builder::new()
        .templates_in(&dir)
        .enum_name("Model")
        .out_file(out.join("conformance_templates.rs"))
        .compile()?;

    // The vectors' templates: named ones, then inline ones by content.
    let root = manifest.parent().ok_or("tests/ sits in the workspace")?;
    let mut builder = retort_codegen::Builder::new()
        .templates_in(root.join("templates"))
        .enum_name("Vector")
        .out_file(out.join("vector_templates.rs"));
    let inline_dir = out.join("inline");
    std::fs::create_dir_all(&inline_dir)?;
    let cases = manifest.join("conformance/cases");
    println!("cargo:rerun-if-changed={}", cases.display());
    let mut files: Vec<PathBuf> = std::fs::read_dir(&cases)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    let mut inline: BTreeMap<String, String> = BTreeMap::new();
    for file in files {
        println!("cargo:rerun-if-changed={}", file.display());
        let text = std::fs::read_to_string(&file)?;
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let case = json_loads(line).map_err(|e| format!("{}: {e}", file.display()))?;
            let Some(template @ Value::Map(_)) = case.as_map().and_then(|m| m.get("template"))
            else {
                continue;
            };
            // Broken templates stay with the run-time loader: the compiled
            // path reports the same loader's errors at build time instead.
            if Template::from_value(template).is_err() {
                continue;
            }
            let key = template.to_json_string();
            let name = format!("inline_{:016x}", fnv(&key));
            inline.entry(key).or_insert(name);
        }
    }
    let mut table = String::from(
        "/// Inline templates of the vectors (canonical JSON) and their modules.\n\
         pub const INLINE: &[(&str, Vector)] = &[\n",
    );
    for (key, name) in &inline {
        let path = inline_dir.join(format!("{name}.json"));
        let unchanged = std::fs::read_to_string(&path).is_ok_and(|old| &old == key);
        if !unchanged {
            std::fs::write(&path, key)?;
        }
        builder = builder.template_as(name, path);
        let variant = retort_codegen::types::camel_ident(name);
        let _ = writeln!(table, "    ({key:?}, Vector::{variant}),");
    }
    table.push_str("];\n");
    builder.compile()?;
    let table_path = out.join("vector_inline.rs");
    if std::fs::read_to_string(&table_path).ok().as_deref() != Some(table.as_str()) {
        std::fs::write(&table_path, table)?;
    }
    Ok(())
}
