//! The demo as the package's binary: `cargo run -p retort-example`, the
//! same program as `cargo run --release --example stream` (see the
//! library's documentation for the flags).

fn main() -> std::process::ExitCode {
    retort_example::main()
}
