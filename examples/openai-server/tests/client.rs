//! Starts the server on 127.0.0.1 (a free port) and streams from it with the
//! official `openai` Python client (`tools/openai/server_check.py`, in the
//! venv `tools/openai/setup.sh` makes — PyPI is needed once), which checks
//! that the accumulated message equals the non-streaming answer.

mod common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

#[test]
fn the_official_client_streams_what_the_server_answers_whole() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    // A template file, as --template also takes.
    let template = root.join("templates/qwen3.json");
    let (server, addr) = common::start(&template.display().to_string(), 2);
    let url = format!("http://{addr}");
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
