//! A bounded load test on loopback: one kept-alive connection, then 20
//! concurrent ones, each sending streaming (and some non-streaming)
//! requests; every answer must be a 200 that ends as an OpenAI stream ends
//! (`data: [DONE]`, a `finish_reason`). It prints requests per second and
//! the latency percentiles (run with `--nocapture`, `--release` for numbers
//! worth quoting), and checks the server's answers to bad requests (400)
//! and `GET /v1/models`.
//!
//! The client is a few lines of HTTP/1.1 over `TcpStream` (keep-alive,
//! `Content-Length` and chunked bodies): what the test needs, and nothing
//! that could hide a stall, such as a client-side pool.

mod common;

use common::start;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// One kept-alive connection.
struct Client {
    reader: BufReader<TcpStream>,
}

impl Client {
    fn connect(addr: &str) -> Client {
        let stream = TcpStream::connect(addr).expect("connects");
        stream.set_nodelay(true).expect("nodelay");
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .expect("a timeout");
        Client {
            reader: BufReader::new(stream),
        }
    }

    /// Sends a request; the status and the whole body.
    fn request(&mut self, method: &str, path: &str, body: &str) -> (u16, String) {
        let head = format!(
            "{method} {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        let stream = self.reader.get_mut();
        stream.write_all(head.as_bytes()).expect("write");
        stream.write_all(body.as_bytes()).expect("write");
        let mut line = String::new();
        self.reader.read_line(&mut line).expect("a status line");
        let status: u16 = line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("a status line: {line:?}"));
        let (mut length, mut chunked) = (None, false);
        loop {
            line.clear();
            self.reader.read_line(&mut line).expect("a header");
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            let (name, value) = header.split_once(':').expect("a header");
            let value = value.trim();
            match name.to_ascii_lowercase().as_str() {
                "content-length" => length = value.parse::<usize>().ok(),
                "transfer-encoding" => chunked = value.eq_ignore_ascii_case("chunked"),
                _ => {}
            }
        }
        let mut body = Vec::new();
        if chunked {
            loop {
                line.clear();
                self.reader.read_line(&mut line).expect("a chunk size");
                let size = usize::from_str_radix(line.trim(), 16).expect("a hex size");
                let mut chunk = vec![0; size + 2];
                self.reader.read_exact(&mut chunk).expect("a chunk");
                if size == 0 {
                    break;
                }
                body.extend_from_slice(&chunk[..size]);
            }
        } else {
            let mut chunk = vec![0; length.expect("a length")];
            self.reader.read_exact(&mut chunk).expect("a body");
            body = chunk;
        }
        (status, String::from_utf8(body).expect("UTF-8"))
    }
}

const STREAMED: &str =
    r#"{"model": "qwen3", "stream": true, "messages": [{"role": "user", "content": "Weather?"}]}"#;
const WHOLE: &str = r#"{"model": "qwen3", "messages": [{"role": "user", "content": "Weather?"}]}"#;

/// Checks one answer; `None` when it is right, else what is wrong.
fn wrong(status: u16, body: &str, streamed: bool) -> Option<String> {
    if status != 200 {
        return Some(format!("status {status}: {body}"));
    }
    if streamed {
        let ok = body.trim_end().ends_with("data: [DONE]")
            && body.contains("\"finish_reason\":\"tool_calls\"")
            && !body.contains("\"error\"");
        return (!ok).then(|| format!("stream: …{}", &body[body.len().saturating_sub(200)..]));
    }
    let v: serde_json::Value = serde_json::from_str(body).ok()?;
    (v["choices"][0]["finish_reason"] != "tool_calls").then(|| format!("answer: {body}"))
}

/// `connections` clients, `requests` each (every fifth not streamed): the
/// latencies, in order of completion, and what went wrong.
fn load(addr: &str, connections: usize, requests: usize) -> (Vec<Duration>, Vec<String>, Duration) {
    let started = Instant::now();
    let workers: Vec<_> = (0..connections)
        .map(|_| {
            let addr = addr.to_owned();
            std::thread::spawn(move || {
                let mut client = Client::connect(&addr);
                let mut times = Vec::new();
                let mut errors = Vec::new();
                for i in 0..requests {
                    let streamed = i % 5 != 4;
                    let t = Instant::now();
                    let (status, body) = client.request(
                        "POST",
                        "/v1/chat/completions",
                        if streamed { STREAMED } else { WHOLE },
                    );
                    times.push(t.elapsed());
                    errors.extend(wrong(status, &body, streamed));
                }
                (times, errors)
            })
        })
        .collect();
    let (mut times, mut errors) = (Vec::new(), Vec::new());
    for w in workers {
        let (t, e) = w.join().expect("a client thread");
        times.extend(t);
        errors.extend(e);
    }
    (times, errors, started.elapsed())
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

#[test]
fn the_server_answers_a_loaded_loopback_without_errors() {
    let (server, addr) = start("qwen3", 3);
    for (connections, requests) in [(1, 200), (20, 50)] {
        let (mut times, errors, wall) = load(&addr, connections, requests);
        assert!(
            errors.is_empty(),
            "{} of {} requests failed; the first: {}",
            errors.len(),
            times.len(),
            errors[0]
        );
        times.sort();
        eprintln!(
            "{connections} connection(s) × {requests} requests: {:.0} requests/s, p50 {:.2} ms, p99 {:.2} ms",
            times.len() as f64 / wall.as_secs_f64(),
            percentile(&times, 0.50).as_secs_f64() * 1e3,
            percentile(&times, 0.99).as_secs_f64() * 1e3,
        );
    }
    drop(server);
}

#[test]
fn bad_requests_are_400_and_the_model_is_listed() {
    let (server, addr) = start("qwen3", 3);
    let mut client = Client::connect(&addr);
    for (body, why) in [
        (r#"{"tools": 5}"#, "tools"),
        (
            r#"{"tools": [{"type": "function", "function": 7}]}"#,
            "tools",
        ),
        (r#"{"stream": "yes"}"#, "stream"),
        (r#"{"model": 3}"#, "model"),
        (r#"{"reasoning_format": "sideways"}"#, "reasoning_format"),
        ("[1, 2]", "object"),
        ("not json", "body"),
    ] {
        let (status, answer) = client.request("POST", "/v1/chat/completions", body);
        assert_eq!(status, 400, "{body}: {answer}");
        let v: serde_json::Value = serde_json::from_str(&answer).expect("a JSON error");
        let message = v["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(why), "{body}: {message}");
    }
    let (status, answer) = client.request("GET", "/v1/models", "");
    assert_eq!(status, 200, "{answer}");
    let v: serde_json::Value = serde_json::from_str(&answer).expect("JSON");
    assert_eq!(v["object"], "list");
    assert_eq!(v["data"][0]["id"], "qwen3");
    // The connection is still good for a real request.
    let (status, body) = client.request("POST", "/v1/chat/completions", STREAMED);
    assert_eq!(wrong(status, &body, true), None);
    drop(server);
}
