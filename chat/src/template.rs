//! [`ChatTemplate`]: a compiled chat template, and transformers'
//! `render_jinja_template` around it.

use std::sync::{Arc, Mutex};

use minijinja::Environment;
use minijinja::value::Value;
use serde_json::{Map, Value as Json};

use crate::error::{ChatError, Limit, RenderError, RenderErrorKind};
use crate::input::{ContinueFinal, Entry, GenerationSpan, RenderInput, Rendered};
use crate::limits::{CTX_KEY, Counter, Limits, RenderCtx, Writer};
use crate::strftime::DateTime;
use crate::{prepare, rewrite};

const NAME: &str = "chat_template";

/// A chat template compiled once, rendered any number of times, from any
/// number of threads at once (`render` takes `&self`).
pub struct ChatTemplate {
    source: String,
    env: Environment<'static>,
    limits: Limits,
}

impl std::fmt::Debug for ChatTemplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatTemplate")
            .field("source_len", &self.source.len())
            .field("limits", &self.limits)
            .finish()
    }
}

impl ChatTemplate {
    /// Compiles `source` with the default [`Limits`].
    pub fn new(source: &str) -> Result<ChatTemplate, ChatError> {
        ChatTemplate::with_limits(source, Limits::default())
    }

    /// Compiles `source`, to render under `limits`.
    pub fn with_limits(source: &str, limits: Limits) -> Result<ChatTemplate, ChatError> {
        let mut env = crate::env::environment(&limits);
        let rewritten = rewrite::rewrite(source)?;
        if let Err(e) = env.add_template_owned(NAME, rewritten.clone()) {
            return Err(syntax_error(&e, &rewritten));
        }
        crate::check::check(&rewrite::normalize_newlines(source))?;
        Ok(ChatTemplate {
            source: source.to_owned(),
            env,
            limits,
        })
    }

    /// The template's source, as given.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The bounds renders run under.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Renders one conversation, as transformers' `render_jinja_template`
    /// does (or `apply_chat_template`, per [`RenderInput::entry`]).
    pub fn render(&self, input: &RenderInput) -> Result<Rendered, RenderError> {
        let mut out = self.render_batch(std::slice::from_ref(&input.messages), input)?;
        Ok(out.pop().unwrap_or_default())
    }

    /// Renders several conversations with the same tools, documents and
    /// variables (`render_jinja_template`'s batch; `input.messages` is
    /// ignored). The first failure fails the batch, as in transformers.
    pub fn render_batch(
        &self,
        conversations: &[Vec<Json>],
        input: &RenderInput,
    ) -> Result<Vec<Rendered>, RenderError> {
        self.render_batch_with(conversations, input, &Map::new())
    }

    /// [`render_batch`](Self::render_batch) with default variables under
    /// the input's (a tokenizer's special tokens).
    pub(crate) fn render_batch_with(
        &self,
        conversations: &[Vec<Json>],
        input: &RenderInput,
        defaults: &Map<String, Json>,
    ) -> Result<Vec<Rendered>, RenderError> {
        // Checked before anything copies the data: a copy recurses.
        let depth = self.limits.depth;
        let deep = |v: &Json| crate::value::too_deep(v, depth);
        if conversations.iter().flatten().any(deep)
            || input.tools.iter().flatten().any(deep)
            || input.documents.iter().flatten().any(deep)
            || input.kwargs.values().any(deep)
            || defaults.values().any(deep)
        {
            return Err(depth_error());
        }
        let shared = prepare::shared(input, defaults, self.limits.depth)?;
        let mut out = Vec::with_capacity(conversations.len());
        for messages in conversations {
            out.push(self.render_one(messages, input, &shared)?);
        }
        Ok(out)
    }

    fn render_one(
        &self,
        messages: &[Json],
        input: &RenderInput,
        shared: &prepare::Shared,
    ) -> Result<Rendered, RenderError> {
        let conv = prepare::conversation(messages, input, &self.source)?;
        let chat = crate::value::from_json(&Json::Array(conv.messages), self.limits.depth)
            .map_err(|_| depth_error())?;
        let counter = Arc::new(Counter::default());
        let render_ctx = Arc::new(RenderCtx {
            now: input.now.unwrap_or_else(DateTime::now_utc),
            depth: self.limits.depth,
            counter: counter.clone(),
            spans: Mutex::new(Vec::new()),
        });
        let mut ctx: Vec<(String, Value)> = Vec::with_capacity(shared.vars.len() + 5);
        ctx.push(("messages".to_owned(), chat));
        ctx.push(("tools".to_owned(), shared.tools.clone()));
        ctx.push(("documents".to_owned(), shared.documents.clone()));
        ctx.push((
            "add_generation_prompt".to_owned(),
            Value::from(input.add_generation_prompt),
        ));
        for (k, v) in &shared.vars {
            ctx.push((k.clone(), v.clone()));
        }
        ctx.push((
            CTX_KEY.to_owned(),
            Value::from_dyn_object(render_ctx.clone()),
        ));
        let root: Value = ctx
            .into_iter()
            .collect::<std::collections::BTreeMap<String, Value>>()
            .into();
        let template = self.env.get_template(NAME).map_err(|e| {
            RenderError::new(RenderErrorKind::Other("TemplateNotFound"), e.to_string())
        })?;
        let mut writer = Writer {
            buf: Vec::new(),
            limit: self.limits.output_bytes,
            counter,
        };
        crate::attrs::clear_last_miss();
        let fuel_used = match template.render_captured_to(root, &mut writer) {
            Ok(captured) => captured.state().fuel_levels().map(|(used, _)| used),
            Err(e) => return Err(crate::errmap::map_error(&e)),
        };
        let text = String::from_utf8(writer.buf).map_err(|_| {
            RenderError::new(RenderErrorKind::Other("UnicodeError"), "invalid output")
        })?;
        let spans: Vec<[usize; 4]> = render_ctx
            .spans
            .lock()
            .map(|s| s.clone())
            .unwrap_or_default();
        let text = match &conv.continued {
            Some(final_message) => prepare::cut_continued(text, final_message)?,
            None => text,
        };
        let generation = spans_of(&text, &spans);
        Ok(Rendered {
            text,
            generation,
            fuel_used,
        })
    }
}

fn depth_error() -> RenderError {
    RenderError::limit(Limit::Depth, "the input data is nested too deeply")
}

/// Turns the recorded char ranges into byte ranges of the final text.
fn spans_of(text: &str, spans: &[[usize; 4]]) -> Vec<GenerationSpan> {
    let byte_at = |n: usize| -> usize { text.char_indices().nth(n).map_or(text.len(), |(i, _)| i) };
    spans
        .iter()
        .map(|&[_, _, cs, ce]| GenerationSpan {
            bytes: byte_at(cs)..byte_at(ce),
            chars: cs..ce,
        })
        .collect()
}

fn syntax_error(e: &minijinja::Error, source: &str) -> ChatError {
    let line = e.line().unwrap_or(1);
    let column = e
        .range()
        .map(|r| {
            let start = r.start.min(source.len());
            let line_start = source[..start].rfind('\n').map_or(0, |i| i + 1);
            source[line_start..start].chars().count() + 1
        })
        .unwrap_or(1);
    let message = e.detail().map_or_else(|| e.to_string(), str::to_owned);
    ChatError::syntax(jinja2_syntax_message(&message), line, column)
}

/// jinja2's wording of the commonest syntax errors (the class is the same
/// for all; the wording follows minijinja's elsewhere).
fn jinja2_syntax_message(m: &str) -> String {
    if let Some(tag) = m.strip_prefix("unknown statement ") {
        return format!("Encountered unknown tag '{tag}'.");
    }
    if let Some(rest) = m.strip_prefix("unexpected `")
        && let Some((token, tail)) = rest.split_once('`')
    {
        // "unexpected `}`, expected `)`" / "unexpected `}`, expected end of variable block"
        return match tail
            .strip_prefix(", expected `")
            .and_then(|t| t.strip_suffix('`'))
        {
            Some(want) => format!("unexpected '{token}', expected '{want}'"),
            None => format!("unexpected '{token}'"),
        };
    }
    m.to_owned()
}

impl ContinueFinal {
    pub(crate) fn is_set(&self) -> bool {
        !matches!(self, ContinueFinal::No)
    }
}

impl Entry {
    pub(crate) fn is_apply(self) -> bool {
        matches!(self, Entry::ApplyChatTemplate)
    }
}
