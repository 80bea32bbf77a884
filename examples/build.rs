//! Compiles the demo's bundled template (Kimi-K2) into a typed module with
//! `retort_codegen::Builder`: the build.rs way to use retort, and the one
//! that keeps the template loader out of the demo's dependencies (a
//! build-dependency does not ship; `response_template!` would bring the code
//! generator in as a proc-macro).

fn main() -> Result<(), retort_codegen::Error> {
    retort_codegen::Builder::new()
        .template("../templates/kimi-k2.json")
        .out_file(
            std::path::Path::new(&std::env::var("OUT_DIR").unwrap_or_default())
                .join("templates.rs"),
        )
        .compile()?;
    Ok(())
}
