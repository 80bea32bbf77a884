//! Bounds on what an untrusted template may do, and the per-render state the
//! template's functions share (the `strftime_now` clock, the
//! `{% generation %}` spans, the output counter).

use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use minijinja::value::{Object, ObjectRepr};
use minijinja::{Error, State, Value};

use crate::strftime::DateTime;

/// Bounds on a render. Chat templates come from model repositories and are
/// untrusted code: every render stops, with
/// [`RenderErrorKind::Limit`](crate::RenderErrorKind::Limit), before it
/// takes unbounded time, stack or memory.
///
/// The defaults leave real templates far from any bound and stop a hostile
/// one within a fraction of a second: the costliest of the shared templates
/// renders a 400-message conversation with tools (170 KB of prompt) on 3.0
/// million fuel, most on 0.5 million, while the whole budget runs out in
/// about 0.2 s (release build).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// minijinja's fuel: about one unit per instruction executed and per 64
    /// bytes of data created (strings, lists, output), checked before a
    /// large repetition is built (so `'x' * 10**9` fails without
    /// allocating). `None` turns the budget off. Default 10,000,000: the
    /// data a render creates, over its whole run, stays under about 640 MB.
    pub fuel: Option<u64>,
    /// How deep macros, blocks and loops may nest (minijinja's recursion
    /// limit; minijinja caps it at 500). Default 200, which a 2 MiB thread
    /// stack holds.
    pub recursion: usize,
    /// The largest rendered text, in bytes, and the largest string `~` and
    /// `+` may make. Default 64 MiB.
    pub output_bytes: usize,
    /// How deeply the input data (messages, tools, documents, variables)
    /// may nest, how deeply a value stored with `{% set %}` may nest, and
    /// how deep printing and `tojson` descend. Default 128.
    pub depth: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            fuel: Some(10_000_000),
            recursion: 200,
            output_bytes: 64 << 20,
            depth: 128,
        }
    }
}

/// The name of the hidden context entry holding the [`RenderCtx`]: not an
/// identifier, so templates cannot name it.
pub(crate) const CTX_KEY: &str = "retort render state";

/// Per-render state shared by the writer and the template's functions.
#[derive(Debug)]
pub(crate) struct RenderCtx {
    pub(crate) now: DateTime,
    pub(crate) depth: usize,
    pub(crate) counter: Arc<Counter>,
    /// `{% generation %}` spans: (byte start, byte end, char start, char end).
    pub(crate) spans: Mutex<Vec<[usize; 4]>>,
}

impl Object for RenderCtx {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Plain
    }
}

/// Bytes and characters written to the top-level output so far.
#[derive(Debug, Default)]
pub(crate) struct Counter {
    pub(crate) bytes: AtomicUsize,
    pub(crate) chars: AtomicUsize,
}

fn ctx(state: &State) -> Option<Value> {
    state.lookup(CTX_KEY)
}

/// The render's clock.
pub(crate) fn now_of(state: &State) -> DateTime {
    ctx(state)
        .and_then(|v| v.downcast_object_ref::<RenderCtx>().map(|c| c.now))
        .unwrap_or_else(DateTime::now_utc)
}

/// The render's depth bound.
pub(crate) fn depth_of(state: &State) -> usize {
    ctx(state)
        .and_then(|v| v.downcast_object_ref::<RenderCtx>().map(|c| c.depth))
        .unwrap_or(Limits::default().depth)
}

/// Charges fuel for `n` bytes about to be created (minijinja charges one
/// fuel per 64 bytes of a value once it exists; this pays ahead).
pub(crate) fn charge_bytes(state: &State, n: usize) -> Result<(), Error> {
    if n >= 64 {
        state.consume_fuel(u64::try_from(n / 64).unwrap_or(u64::MAX))
    } else {
        Ok(())
    }
}

/// The `{% generation %}` support filter: records where its body lands in
/// the top-level output, as transformers' `AssistantTracker` does — the
/// output written so far (not counting text captured by an enclosing macro
/// or block), plus the body's length.
pub(crate) fn generation(state: &State, body: Value) -> Result<Value, Error> {
    if let Some(v) = ctx(state)
        && let Some(c) = v.downcast_object_ref::<RenderCtx>()
    {
        let text = body
            .as_str()
            .map_or_else(|| crate::repr::str_string(&body), str::to_owned);
        let b = c.counter.bytes.load(Ordering::Relaxed);
        let ch = c.counter.chars.load(Ordering::Relaxed);
        if let Ok(mut spans) = c.spans.lock() {
            spans.push([b, b + text.len(), ch, ch + text.chars().count()]);
        }
    }
    Ok(body)
}

/// The error the writer fails with past the output bound.
#[derive(Debug)]
pub(crate) struct OutputLimit(pub(crate) usize);

impl std::fmt::Display for OutputLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the rendered text exceeds {} bytes", self.0)
    }
}

impl std::error::Error for OutputLimit {}

/// Collects the output, counting bytes and characters, and fails once it
/// would exceed `limit` bytes.
pub(crate) struct Writer {
    pub(crate) buf: Vec<u8>,
    pub(crate) limit: usize,
    pub(crate) counter: Arc<Counter>,
}

impl io::Write for Writer {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if self.buf.len() + data.len() > self.limit {
            return Err(io::Error::other(OutputLimit(self.limit)));
        }
        self.buf.extend_from_slice(data);
        // minijinja writes whole strings: counting lead bytes counts chars.
        let chars = data.iter().filter(|&&b| (b as i8) >= -0x40).count();
        self.counter.bytes.fetch_add(data.len(), Ordering::Relaxed);
        self.counter.chars.fetch_add(chars, Ordering::Relaxed);
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
