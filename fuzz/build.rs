//! Compiles every bundled template (`../templates/*.json`) into the
//! `compiled` target's `Model` enum with retort-codegen's `Builder`.

fn main() -> Result<(), retort_codegen::Error> {
    retort_codegen::Builder::new()
        .templates_in("../templates")
        .enum_name("Model")
        .compile()?;
    Ok(())
}
