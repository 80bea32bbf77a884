//! What the server's tests share: starting the binary on a free loopback
//! port, and stopping it however a test ends.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// The running server; killed when dropped.
pub struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts the server replaying the recorded Qwen3 generation through
/// `template` in pieces of `piece` characters; the server and its address
/// (`127.0.0.1:PORT`).
pub fn start(template: &str, piece: usize) -> (Server, String) {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_retort-openai-server"))
        .args(["--template", template, "--generation"])
        .arg(here.join("generations/qwen3-weather.txt"))
        .args(["--piece", &piece.to_string(), "--addr", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .spawn()
        .expect("the server starts");
    let stdout = child.stdout.take().expect("stdout");
    let server = Server(child);
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("the address line");
    let addr = line
        .trim()
        .strip_prefix("listening on http://")
        .expect("`listening on http://ADDR`")
        .to_owned();
    (server, addr)
}
