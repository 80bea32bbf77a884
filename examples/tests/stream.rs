//! The demo, run in-process and as the built binary: its output shows the
//! reasoning, the content and each tool call (named when it opens), and the
//! final message is the reference's (`examples/data/*.expected.json`, made
//! by `examples/data/reference.py` with transformers 5.23.0).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use clap::Parser as _;
use retort_example::{Options, Summary, run};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("data")
        .join(name)
}

#[cfg(feature = "dynamic")]
fn template(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../templates")
        .join(name)
}

/// The reference's message for a bundled generation.
fn expected(name: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(data(&format!("{name}.expected.json"))).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Runs the demo in-process with `args` (after the program name).
fn demo(args: &[&OsStr], color: bool) -> (String, Summary) {
    // A fixed width, whatever COLUMNS says.
    let mut argv: Vec<&OsStr> = ["stream", "--width", "100"].map(OsStr::new).to_vec();
    argv.extend_from_slice(args);
    let options = Options::try_parse_from(argv).unwrap();
    let mut out = Vec::new();
    let summary = run(&options, &mut out, color).unwrap();
    (String::from_utf8(out).unwrap(), summary)
}

/// The pretty JSON the demo prints after its "final message" header.
fn printed_message(output: &str) -> serde_json::Value {
    let mut lines = output
        .lines()
        .skip_while(|l| !l.starts_with("final message ("))
        .skip(1);
    let mut json = String::new();
    for line in lines.by_ref() {
        json.push_str(line);
        json.push('\n');
        if line == "}" {
            break;
        }
    }
    serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e} in:\n{output}"))
}

fn json(value: &retort::Value) -> serde_json::Value {
    serde_json::to_value(value).unwrap()
}

/// Position of `needle` in `hay`, which must hold it.
fn at(hay: &str, needle: &str) -> usize {
    hay.find(needle)
        .unwrap_or_else(|| panic!("{needle:?} not in:\n{hay}"))
}

const PLAIN: [&str; 2] = ["--no-delay", "--no-color"];

#[test]
fn the_bundled_demo_shows_each_part_and_ends_with_the_reference_message() {
    let args: Vec<&OsStr> = PLAIN.iter().map(OsStr::new).collect();
    let (out, summary) = demo(&args, false);
    let reference = expected("kimi-k2");
    assert_eq!(json(&summary.message), reference);
    assert_eq!(printed_message(&out), reference);
    assert!(!out.contains('\x1b'), "colours without a terminal:\n{out}");

    // Reasoning, then content, then the two calls, each named in its header
    // before any of its arguments (the name comes with the opener)...
    let reasoning = at(&out, "▸ reasoning_content\n  Two questions:");
    let content = at(&out, "▸ content\n  Let me check the forecast");
    let first = at(
        &out,
        "▸ tool call 1  get_weather  id functions.get_weather:0\n  {\"location\":",
    );
    let second = at(
        &out,
        "▸ tool call 2  get_local_time  id functions.get_local_time:1\n  {\"timezone\":",
    );
    assert!(reasoning < content && content < first && first < second);
    // ...and followed by the arguments as parsed.
    at(
        &out,
        "✓ get_weather {\"location\": \"Lisbon, Portugal\", \"date\": \"2026-11-25\"",
    );
    at(&out, "✓ get_local_time {\"timezone\": \"Europe/Lisbon\"}");

    // The typed message, read through the model-agnostic accessors.
    let names: Vec<&str> = summary.tool_calls.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["get_weather", "get_local_time"]);
    assert_eq!(
        summary.tool_calls[1].id.as_deref(),
        Some("functions.get_local_time:1")
    );
    let generation = std::fs::read_to_string(data("kimi-k2.txt")).unwrap();
    assert_eq!(summary.bytes, generation.len());
    assert!(summary.pieces > 100, "{} pieces", summary.pieces);
    assert!(summary.parse_time + summary.setup_time <= summary.wall_time);
    let timing = out.lines().last().unwrap();
    assert!(
        timing.starts_with("parse ")
            && timing.contains(" in feed + finalize (+ ")
            && timing.contains(" new) · wall ")
            && timing.ends_with(&format!(
                "· {} bytes, {} pieces",
                summary.bytes, summary.pieces
            )),
        "{timing}"
    );
}

#[test]
fn every_chunking_gives_the_same_message_and_colours_are_asked_for() {
    let reference = expected("kimi-k2");
    for n in ["1", "2", "5", "64"] {
        let args: Vec<&OsStr> = ["--no-delay", "--chunk", n].map(OsStr::new).to_vec();
        let (out, summary) = demo(&args, false);
        assert_eq!(json(&summary.message), reference, "--chunk {n}");
        at(&out, "▸ tool call 2  get_local_time");
    }
    // Coloured: reasoning dimmed, tool names highlighted.
    let (out, _) = demo(&[OsStr::new("--no-delay")], true);
    at(&out, "\x1b[2;3mTwo\x1b[0m");
    at(&out, "\x1b[1;33m  get_weather\x1b[0m");
    // Colours only on a terminal, without --no-color, with NO_COLOR unset
    // or empty.
    let plain = Options::try_parse_from(["stream"]).unwrap();
    let no_color = Options::try_parse_from(["stream", "--no-color"]).unwrap();
    assert!(plain.color_when(true, None));
    assert!(plain.color_when(true, Some(OsStr::new(""))));
    assert!(!plain.color_when(true, Some(OsStr::new("1"))));
    assert!(!plain.color_when(false, None));
    assert!(!no_color.color_when(true, None));
}

/// Needs the demo's `dynamic` feature (`cargo test -p retort-example --features dynamic`).
#[cfg(feature = "dynamic")]
#[test]
fn a_template_loaded_at_run_time_gives_the_reference_message() {
    // Another model: GLM-4.5 names its calls in the opener too.
    let (template_path, input, prefix) = (
        template("glm-4.5.json"),
        data("glm-4.5.txt"),
        data("glm-4.5.prompt.txt"),
    );
    let args = [
        OsStr::new("--no-delay"),
        OsStr::new("--no-color"),
        OsStr::new("--template"),
        template_path.as_os_str(),
        OsStr::new("--input"),
        input.as_os_str(),
        OsStr::new("--prefix-file"),
        prefix.as_os_str(),
    ];
    let (out, summary) = demo(&args, false);
    let reference = expected("glm-4.5");
    assert_eq!(json(&summary.message), reference);
    assert_eq!(printed_message(&out), reference);
    at(&out, "loaded at run time by Template::from_json");
    let first = at(&out, "▸ tool call 1  convert_currency\n  <arg_key>amount");
    let second = at(&out, "▸ tool call 2  book_table\n  <arg_key>restaurant");
    assert!(first < second);
    at(
        &out,
        // GLM's values are text; the demo passes no tool definitions to type them.
        "✓ convert_currency {\"amount\": \"250\", \"from\": \"EUR\", \"to\": \"JPY\"}",
    );

    // The bundled template at run time agrees with its compiled form.
    let (kimi, input, prefix) = (
        template("kimi-k2.json"),
        data("kimi-k2.txt"),
        data("kimi-k2.prompt.txt"),
    );
    let args = [
        OsStr::new("--no-delay"),
        OsStr::new("--template"),
        kimi.as_os_str(),
        OsStr::new("--input"),
        input.as_os_str(),
        OsStr::new("--prefix-file"),
        prefix.as_os_str(),
    ];
    let (out, summary) = demo(&args, false);
    assert_eq!(json(&summary.message), expected("kimi-k2"));
    at(
        &out,
        "▸ tool call 1  get_weather  id functions.get_weather:0\n",
    );
}

fn binary(args: &[&OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_retort-example"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap()
}

#[test]
fn the_binary_runs_the_demo_and_reports_bad_input() {
    // Piped: no colours even without --no-color.
    let out = binary(&[OsStr::new("--no-delay")]);
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(!stdout.contains('\x1b'));
    assert_eq!(printed_message(&stdout), expected("kimi-k2"));
    at(&stdout, "▸ tool call 2  get_local_time");

    // --template needs --input: a usage error (status 2).
    let out = binary(&["--template", "../templates/glm-4.5.json"].map(OsStr::new));
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--input"));

    // A file that is not there.
    let out = binary(&["--no-delay", "--input", "no/such/file.txt"].map(OsStr::new));
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("error: cannot read no/such/file.txt"),
        "{stderr}"
    );

    // A broken template: where and why.
    let dir = std::env::temp_dir().join(format!("retort-example-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let broken = dir.join("broken.json");
    std::fs::write(
        &broken,
        r#"{"fields": {"content": {"open": "<a>", "close": 3}}}"#,
    )
    .unwrap();
    let out = binary(&[
        OsStr::new("--template"),
        broken.as_os_str(),
        OsStr::new("--input"),
        data("kimi-k2.txt").as_os_str(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("error: template: ") && stderr.contains("broken.json"),
        "{stderr}"
    );

    // Arguments that are not JSON: the parser's error names the field.
    let bad = dir.join("bad.txt");
    std::fs::write(
        &bad,
        "<|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{oops<|tool_call_end|>",
    )
    .unwrap();
    let out = binary(&[
        OsStr::new("--no-delay"),
        OsStr::new("--input"),
        bad.as_os_str(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("error: parse error: field 'tool_calls' at byte"),
        "{stderr}"
    );
    // What was shown before the error stays on stdout.
    at(
        &String::from_utf8_lossy(&out.stdout),
        "▸ tool call 1  f  id functions.f:0",
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
