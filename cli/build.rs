//! Embeds the bundled model templates (`templates/*.json` at the workspace
//! root) in the binary, so that `retort parse qwen3` works from any
//! directory. Writes `$OUT_DIR/bundled.rs`: a sorted list of
//! `(name, include_str!(path))`.

use std::fmt::Write as _;
use std::path::PathBuf;

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let dir = manifest.join("..").join("templates");
    // A directory as `rerun-if-changed` covers every file in it.
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut entries: Vec<(String, PathBuf)> = match std::fs::read_dir(&dir) {
        Ok(read) => read
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .filter_map(|p| {
                let name = p.file_stem()?.to_str()?.to_owned();
                Some((name, p))
            })
            .collect(),
        // A crate packaged without the workspace has no bundled templates;
        // the binary then says so when a name is asked for.
        Err(_) => Vec::new(),
    };
    entries.sort();
    let mut out = String::from("&[\n");
    for (name, path) in &entries {
        let path = path
            .canonicalize()
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let _ = writeln!(
            out,
            "    ({name:?}, include_str!({:?})),",
            path.display().to_string()
        );
    }
    out.push(']');
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("set by cargo"));
    std::fs::write(out_dir.join("bundled.rs"), out).expect("OUT_DIR is writable");
}
