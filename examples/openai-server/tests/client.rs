//! Starts the server on 127.0.0.1 (a free port) and streams from it with the
//! official `openai` Python client (`tools/openai/server_check.py`, in the
//! venv `tools/openai/setup.sh` makes — PyPI is needed once), which checks
//! that the accumulated message equals the non-streaming answer.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Kills the server however the test ends.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn the_official_client_streams_what_the_server_answers_whole() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut child = Command::new(env!("CARGO_BIN_EXE_retort-openai-server"))
        .arg("--template")
        .arg(root.join("templates/qwen3.json"))
        .arg("--generation")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("generations/qwen3-weather.txt"))
        .args(["--piece", "2", "--addr", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .spawn()
        .expect("the server starts");
    let stdout = child.stdout.take().expect("stdout");
    let server = Server(child);
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("the address line");
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .expect("`listening on URL`")
        .to_owned();
    let setup = Command::new("bash")
        .arg(root.join("tools/openai/setup.sh"))
        .output()
        .expect("bash runs");
    assert!(
        setup.status.success(),
        "tools/openai/setup.sh: {}",
        String::from_utf8_lossy(&setup.stderr)
    );
    let python = String::from_utf8(setup.stdout)
        .expect("a path")
        .trim()
        .to_owned();
    let started = Instant::now();
    let mut check = Command::new(python)
        .arg(root.join("tools/openai/server_check.py"))
        .arg(format!("{url}/v1"))
        .spawn()
        .expect("the check runs");
    // Bounded: the client's own timeout is 30 s per request.
    let status = loop {
        if let Some(s) = check.try_wait().expect("waits") {
            break s;
        }
        if started.elapsed() > Duration::from_secs(120) {
            let _ = check.kill();
            panic!("the client check took more than 120 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    drop(server);
    assert!(status.success(), "the client check failed");
}
