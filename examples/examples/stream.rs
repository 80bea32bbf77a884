//! The retort demo: a Kimi-K2 generation replayed token by token through a
//! parser that `retort::response_template!` compiled from
//! `templates/kimi-k2.json`; reasoning, content and two tool calls appear as
//! they stream, then the final message and the time spent parsing.
//!
//! ```sh
//! cargo run --release --example stream
//! cargo run --release --example stream -- --help
//! ```
//!
//! The code is in the `retort-example` library (`examples/src/`): `lib.rs`
//! drives the compiled and the run-time parsers, `screen.rs` shows the
//! events, `pieces.rs` cuts the text into token-like pieces.

fn main() -> std::process::ExitCode {
    retort_example::main()
}
