//! Compiles templates for the compiled-parser tests with retort-codegen's
//! `Builder`:
//!
//! - `conformance_templates.rs`: every template of the directory named by
//!   `RETORT_CONFORMANCE_TEMPLATES` (default `tests/conformance/templates`)
//!   and every valid inline template of the case files named by
//!   `RETORT_CONFORMANCE_CASES` (`:`-separated files or directories of
//!   `.jsonl`), for the `conformance-compiled` binary, with
//!   `conformance_inline.rs` mapping each inline template to its module;
//! - `vector_templates.rs`: every template the repository's own vectors use
//!   (`templates/*.json` and each valid inline template of
//!   `tests/conformance/cases/*.jsonl`), for `cargo test`; not written when
//!   `RETORT_CONFORMANCE_ONLY` is set (the differential fuzzer, which builds
//!   only the binary, sets it: these modules are more than half of what the
//!   script generates, and they do not change between its batches).

use retort_engine::py::json_loads_with_depth;
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
    println!("cargo:rerun-if-env-changed=RETORT_CONFORMANCE_CASES");
    // The binary's templates: the directory's, then the inline templates of
    // the case files it is built for.
    let conformance = retort_codegen::Builder::new()
        .templates_in(&dir)
        .enum_name("Model")
        .out_file(out.join("conformance_templates.rs"));
    let mut case_files = Vec::new();
    if let Some(list) = std::env::var_os("RETORT_CONFORMANCE_CASES") {
        for p in std::env::split_paths(&list) {
            if p.is_dir() {
                case_files.extend(jsonl_in(&p)?);
            } else {
                case_files.push(p);
            }
        }
    }
    let conformance_dir = out.join("conformance_inline");
    std::fs::create_dir_all(&conformance_dir)?;
    let inline = inline_templates(&case_files)?;
    let (conformance, table) = add_inline(conformance, &inline, &conformance_dir, "Model")?;
    conformance.compile()?;
    write_if_changed(&out.join("conformance_inline.rs"), &table)?;

    println!("cargo:rerun-if-env-changed=RETORT_CONFORMANCE_ONLY");
    if std::env::var_os("RETORT_CONFORMANCE_ONLY").is_some_and(|v| !v.is_empty()) {
        return Ok(());
    }
    // The vectors' templates: named ones, then inline ones by content.
    let root = manifest.parent().ok_or("tests/ sits in the workspace")?;
    let builder = retort_codegen::Builder::new()
        .templates_in(root.join("templates"))
        .enum_name("Vector")
        .out_file(out.join("vector_templates.rs"));
    let inline_dir = out.join("inline");
    std::fs::create_dir_all(&inline_dir)?;
    let cases = manifest.join("conformance/cases");
    println!("cargo:rerun-if-changed={}", cases.display());
    let inline = inline_templates(&jsonl_in(&cases)?)?;
    let (builder, table) = add_inline(builder, &inline, &inline_dir, "Vector")?;
    builder.compile()?;
    write_if_changed(&out.join("vector_inline.rs"), &table)?;
    Ok(())
}

/// The `.jsonl` files of a directory, sorted.
fn jsonl_in(dir: &Path) -> Result<Vec<PathBuf>, Box<dyn std::error::Error>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    Ok(files)
}

/// Every valid inline template of the case files (canonical JSON → module
/// name). Broken templates stay with the run-time loader: the compiled path
/// reports the same loader's errors at build time instead.
fn inline_templates(
    files: &[PathBuf],
) -> Result<BTreeMap<String, String>, Box<dyn std::error::Error>> {
    let mut inline = BTreeMap::new();
    for file in files {
        println!("cargo:rerun-if-changed={}", file.display());
        let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let case = json_loads_with_depth(line, usize::MAX)
                .map_err(|e| format!("{}: {e}", file.display()))?;
            let Some(template @ Value::Map(_)) = case.as_map().and_then(|m| m.get("template"))
            else {
                continue;
            };
            if Template::from_value(template).is_err() {
                continue;
            }
            let key = template.to_json_string();
            let name = format!("inline_{:016x}", fnv(&key));
            inline.entry(key).or_insert(name);
        }
    }
    Ok(inline)
}

/// Adds the inline templates to `builder` (each written to `dir` as a
/// file) and returns the table from canonical JSON to `enum_name` variant.
fn add_inline(
    mut builder: retort_codegen::Builder,
    inline: &BTreeMap<String, String>,
    dir: &Path,
    enum_name: &str,
) -> Result<(retort_codegen::Builder, String), Box<dyn std::error::Error>> {
    let mut table = format!(
        "/// Inline templates of the cases (canonical JSON) and their modules.\n\
         pub const INLINE: &[(&str, {enum_name})] = &[\n"
    );
    for (key, name) in inline {
        let path = dir.join(format!("{name}.json"));
        let unchanged = std::fs::read_to_string(&path).is_ok_and(|old| &old == key);
        if !unchanged {
            std::fs::write(&path, key)?;
        }
        builder = builder.template_as(name, path);
        let variant = retort_codegen::types::camel_ident(name);
        let _ = writeln!(table, "    ({key:?}, {enum_name}::{variant}),");
    }
    table.push_str("];\n");
    Ok((builder, table))
}

/// Writes `text` unless the file already holds it (keeps mtimes, and so
/// rebuilds, stable).
fn write_if_changed(path: &Path, text: &str) -> std::io::Result<()> {
    if std::fs::read_to_string(path).ok().as_deref() != Some(text) {
        std::fs::write(path, text)?;
    }
    Ok(())
}
