//! What the CLI test files share: running the binary.

use std::io::Write;
use std::process::{Command, Output, Stdio};

/// Runs `retort ARGS` from a directory that holds no templates, with
/// `stdin` as its input. (Each test file compiles this module and uses one
/// of the two runners.)
#[allow(dead_code)]
pub fn run(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_retort"))
        .args(args)
        .current_dir(std::env::temp_dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    // A command may exit before reading its input; that is its business.
    let _ = child.stdin.take().expect("piped").write_all(stdin);
    child.wait_with_output().expect("the binary finishes")
}

/// [`run`] with text input: (stdout, stderr, exit code).
#[allow(dead_code)]
pub fn retort(args: &[&str], stdin: &str) -> (String, String, i32) {
    let o = run(args, stdin.as_bytes());
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
        o.status.code().unwrap_or(-1),
    )
}
