//! Embeds the repository's bundled templates (`../templates/*.json`) in the
//! extension module, so that `retort.templates` works without data files.

use std::fmt::Write as _;
use std::path::PathBuf;

fn main() -> std::io::Result<()> {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let dir = manifest.join("..").join("templates");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut entries: Vec<(String, PathBuf)> = Vec::new();
    for entry in std::fs::read_dir(&dir)? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "json")
            && let Some(stem) = path.file_stem().and_then(|s| s.to_str())
        {
            println!("cargo:rerun-if-changed={}", path.display());
            entries.push((stem.to_owned(), path.canonicalize()?));
        }
    }
    entries.sort();
    let mut out =
        String::from("/// `(name, JSON text)` of each bundled template, sorted by name.\n");
    out.push_str("pub static TEMPLATES: &[(&str, &str)] = &[\n");
    for (name, path) in &entries {
        let _ = writeln!(
            out,
            "    ({name:?}, include_str!({:?})),",
            path.display().to_string()
        );
    }
    out.push_str("];\n");
    let dest = PathBuf::from(std::env::var_os("OUT_DIR").expect("set by cargo"))
        .join("bundled_templates.rs");
    std::fs::write(dest, out)
}
