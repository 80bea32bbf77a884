//! An OpenAI-compatible chat-completions server over retort: `POST
//! /v1/chat/completions` with `stream: true` (SSE chunks ending with
//! `data: [DONE]`) or `stream: false` (one `chat.completion`).
//!
//! It stands in for a model by replaying a recorded generation through a
//! bundled template, piece by piece — what a real server does with the text
//! its model writes. The template decides how the text becomes reasoning,
//! content and tool calls; `retort::openai` turns that into chunks.
//!
//! ```text
//! cargo run -p retort-openai-server -- --template qwen3 \
//!     --generation examples/openai-server/generations/qwen3-weather.txt
//! ```
//!
//! The first line on standard output is `listening on http://ADDR`. Also
//! `GET /v1/models`; invalid requests get a 400; see README.md.

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::serve::ListenerExt as _;
use clap::Parser as _;
use retort::Template;
use retort::openai::{ChunkStream, Options};
use serde_json::{Value as Json, json};
use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

#[derive(clap::Parser, Debug)]
#[command(about = "OpenAI-compatible server replaying a generation through a template")]
struct Args {
    /// The response template: a JSON file, a bundled family's name
    /// (`qwen3`) or a Hugging Face repo id (`Qwen/Qwen3-8B`).
    #[arg(long)]
    template: String,
    /// The recorded generation to replay.
    #[arg(long)]
    generation: std::path::PathBuf,
    /// The prompt that preceded the generation.
    #[arg(long, default_value = "")]
    prefix: String,
    /// Characters per piece fed to the parser (a model's token, roughly).
    #[arg(long, default_value_t = 3)]
    piece: usize,
    /// Pause between pieces, in milliseconds.
    #[arg(long, default_value_t = 0)]
    delay_ms: u64,
    /// Where the reasoning goes unless a request says otherwise (its
    /// `reasoning_format`, as llama.cpp's server takes it): `auto` splits
    /// it into `reasoning_content`, `none` keeps it inline in `content`.
    #[arg(long, default_value = "auto")]
    reasoning_format: retort::ReasoningFormat,
    /// Address to listen on (port 0: any free port).
    #[arg(long, default_value = "127.0.0.1:0")]
    addr: String,
}

struct App {
    template: &'static Template,
    generation: String,
    prefix: String,
    piece: usize,
    delay: Duration,
    reasoning_format: retort::ReasoningFormat,
    /// The model name `/v1/models` lists (the `--template` argument).
    model: String,
    served: AtomicU64,
}

/// `--template`: a file, or else a bundled family's name or a repo id.
fn load_template(arg: &str) -> Result<Template, String> {
    let path = std::path::Path::new(arg);
    if path.exists() {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{arg}: {e}"))?;
        return Template::from_json(&text).map_err(|e| format!("{arg}: {e}"));
    }
    let family = retort::registry::resolve(arg).map_err(|e| {
        format!("{arg}: not a file, a bundled family's name or a known repo id: {e}")
    })?;
    family.template().map_err(|e| format!("{arg}: {e}"))
}

/// `GET /v1/models`: the one model this server answers as.
async fn models(State(app): State<Arc<App>>) -> Response {
    axum::Json(json!({
        "object": "list",
        "data": [{"id": app.model, "object": "model", "created": 0, "owned_by": "retort"}],
    }))
    .into_response()
}

fn pieces(text: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(n.max(1)).map(|c| c.iter().collect()).collect()
}

fn error(status: StatusCode, message: String) -> Response {
    let body = json!({"error": {"message": message, "type": "invalid_request_error"}});
    (status, axum::Json(body)).into_response()
}

fn options(app: &App, request: &Json) -> Result<Options, String> {
    let n = app.served.fetch_add(1, Ordering::Relaxed);
    let tools = match request.get("tools") {
        Some(Json::Array(t)) => {
            for (i, tool) in t.iter().enumerate() {
                // OpenAI's shape: `{"type": "function", "function": {"name": …}}`.
                let name = tool.get("function").and_then(|f| f.get("name"));
                if !tool.is_object() || !name.is_some_and(Json::is_string) {
                    return Err(format!(
                        "tools[{i}]: not a tool definition ({{\"type\": \"function\", \"function\": {{\"name\": …}}}}): {tool}"
                    ));
                }
            }
            Some(
                retort::py::json_loads(&Json::Array(t.clone()).to_string())
                    .map_err(|e| format!("tools: {e}"))?,
            )
        }
        None | Some(Json::Null) => None,
        Some(other) => return Err(format!("tools: not a list of tool definitions: {other}")),
    };
    if let Some(model) = request.get("model")
        && !model.is_string()
    {
        return Err(format!("model: not a string: {model}"));
    }
    let reasoning_format = match request.get("reasoning_format") {
        None | Some(Json::Null) => app.reasoning_format,
        Some(Json::String(name)) => name.parse().map_err(|e| format!("reasoning_format: {e}"))?,
        Some(other) => return Err(format!("reasoning_format: not a string: {other}")),
    };
    Ok(Options {
        tools,
        reasoning_format,
        completion_id: format!("chatcmpl-retort-{n}"),
        model: request["model"].as_str().unwrap_or("retort").to_owned(),
        created: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        ..Options::default()
    })
}

async fn completions(State(app): State<Arc<App>>, body: String) -> Response {
    let request: Json = match serde_json::from_str(&body) {
        Ok(r) => r,
        Err(e) => return error(StatusCode::BAD_REQUEST, format!("body: {e}")),
    };
    if !request.is_object() {
        return error(
            StatusCode::BAD_REQUEST,
            "body: not a JSON object".to_owned(),
        );
    }
    let options = match options(&app, &request) {
        Ok(o) => o,
        Err(e) => return error(StatusCode::BAD_REQUEST, e),
    };
    let streamed = match request.get("stream") {
        None | Some(Json::Null) => false,
        Some(Json::Bool(b)) => *b,
        Some(other) => {
            return error(
                StatusCode::BAD_REQUEST,
                format!("stream: not a boolean: {other}"),
            );
        }
    };
    // The stream is made before answering, so that what the request got
    // wrong (tools that are not tool definitions) is a 400, not an error
    // in the middle of a 200.
    let stream = match ChunkStream::new(app.template, &app.prefix, options.clone()) {
        Ok(s) => s,
        Err(e @ retort::openai::Error::Tools(_)) => {
            return error(StatusCode::BAD_REQUEST, e.to_string());
        }
        Err(e) => return error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    };
    if !streamed {
        return whole(&app, stream, options);
    }
    let (tx, rx) = tokio::sync::mpsc::channel::<String>(64);
    let worker = app.clone();
    tokio::spawn(async move {
        let mut stream = stream;
        for piece in pieces(&worker.generation, worker.piece) {
            // Borrowed chunks, written out at once: no chunk structs.
            let chunks: Vec<String> = match stream.feed_chunks(&piece) {
                Ok(c) => c.iter().map(|c| sse(&c)).collect(),
                Err(e) => {
                    let _ = tx
                        .send(sse(&json!({"error": {"message": e.to_string()}})))
                        .await;
                    return;
                }
            };
            for line in chunks {
                if tx.send(line).await.is_err() {
                    return;
                }
            }
            if !worker.delay.is_zero() {
                tokio::time::sleep(worker.delay).await;
            }
        }
        match stream.finalize(false) {
            Ok((chunks, _)) => {
                for c in chunks {
                    if tx.send(sse(&c)).await.is_err() {
                        return;
                    }
                }
            }
            Err(e) => {
                let _ = tx
                    .send(sse(&json!({"error": {"message": e.to_string()}})))
                    .await;
            }
        }
        let _ = tx.send("data: [DONE]\n\n".to_owned()).await;
    });
    let body = futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|s| (Ok::<_, Infallible>(s), rx))
    });
    Response::builder()
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache")
        .body(Body::from_stream(body))
        .unwrap_or_else(|e| error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))
}

fn sse(v: &impl serde::Serialize) -> String {
    format!("data: {}\n\n", serde_json::to_string(v).unwrap_or_default())
}

/// `stream: false`: the generation parsed in one piece.
fn whole(app: &App, mut stream: ChunkStream<'static>, options: Options) -> Response {
    let done = stream
        .feed(&app.generation)
        .and_then(|_| stream.finalize(false));
    let (chunks, _parsed) = match done {
        Ok(d) => d,
        Err(e) => return error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    };
    let finish = chunks
        .last()
        .and_then(|c| c.choices[0].finish_reason)
        .map(|r| serde_json::to_value(r).unwrap_or(Json::Null));
    // The layer's message: what the same stream would accumulate to, so
    // that `stream: true` and `stream: false` answers agree.
    let message = stream.message();
    axum::Json(json!({
        "id": options.completion_id,
        "object": "chat.completion",
        "created": options.created,
        "model": options.model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": null}],
    }))
    .into_response()
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    let fail = |what: String| -> ! {
        eprintln!("error: {what}");
        std::process::exit(2)
    };
    let template = load_template(&args.template).unwrap_or_else(|e| fail(e));
    let generation = std::fs::read_to_string(&args.generation)
        .unwrap_or_else(|e| fail(format!("{}: {e}", args.generation.display())));
    let app = Arc::new(App {
        template: Box::leak(Box::new(template)),
        generation,
        prefix: args.prefix,
        piece: args.piece,
        delay: Duration::from_millis(args.delay_ms),
        reasoning_format: args.reasoning_format,
        model: args.template.clone(),
        served: AtomicU64::new(0),
    });
    let router = Router::new()
        .route("/v1/chat/completions", post(completions))
        .route("/v1/models", get(models))
        .with_state(app);
    let listener = tokio::net::TcpListener::bind(&args.addr)
        .await
        .unwrap_or_else(|e| fail(format!("{}: {e}", args.addr)));
    let addr = listener
        .local_addr()
        .unwrap_or_else(|e| fail(e.to_string()));
    // Chunks go out as they are written: without TCP_NODELAY, Nagle's
    // algorithm holds each small write until the client's delayed ACK
    // (tens of milliseconds per streamed response on a kept-alive
    // connection).
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    println!("listening on http://{addr}");
    use std::io::Write;
    let _ = std::io::stdout().flush();
    if let Err(e) = axum::serve(listener, router).await {
        fail(e.to_string());
    }
}
