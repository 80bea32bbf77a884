//! How a parser treats errors and how much it may hold and compute.

/// Bounds on what one parser holds (see `docs/limits.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// The most undecided text the parser may hold (text that may still
    /// begin a delimiter), in bytes.
    pub max_held: usize,
    /// The most text one region may collect before it closes, in bytes.
    pub max_region: usize,
    /// The most model output one parser reads, in bytes (what
    /// [`Parser::feed`](crate::Parser::feed) and `feed_bytes` are given, over
    /// the parser's life; the prompt does not count).
    pub max_message: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_held: 16 << 20,
            max_region: 256 << 20,
            max_message: 1 << 30,
        }
    }
}

impl Limits {
    /// The same limits with another `max_held`.
    pub fn with_max_held(mut self, bytes: usize) -> Limits {
        self.max_held = bytes;
        self
    }

    /// The same limits with another `max_region`.
    pub fn with_max_region(mut self, bytes: usize) -> Limits {
        self.max_region = bytes;
        self
    }

    /// The same limits with another `max_message`.
    pub fn with_max_message(mut self, bytes: usize) -> Limits {
        self.max_message = bytes;
        self
    }

    /// No limits (the default limits are generous; this is for callers that
    /// bound their input elsewhere).
    pub fn none() -> Limits {
        Limits {
            max_held: usize::MAX,
            max_region: usize::MAX,
            max_message: usize::MAX,
        }
    }
}

/// How a parser treats errors in the model's output and how much it may
/// hold and compute.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ParserOptions {
    /// Lenient mode: a region that gives no value is reported by an
    /// [`Event::RegionMalformed`](crate::Event::RegionMalformed) (and kept in [`Parser::malformed`](crate::Parser::malformed))
    /// instead of ending the stream, missing required fields are reported
    /// the same way at finalize, and a delimiter pattern that exceeds the
    /// work budget turns the rest of the generation into text of the open
    /// region. Valid output parses exactly as in strict mode.
    pub lenient: bool,
    /// The backtracking path's work budget.
    pub budget: crate::WorkBudget,
    /// Bounds on held text.
    pub limits: Limits,
    /// Whether a non-empty prefix without the start anchor is an error
    /// ([`ParseErrorKind::MissingAnchor`](crate::ParseErrorKind::MissingAnchor))
    /// instead of a warning ([`Parser::anchor_missing`](crate::Parser::anchor_missing)).
    /// The reference parses the whole prompt as output then; off by default.
    pub require_anchor: bool,
    /// Where the reasoning goes: split out (the default, the reference's
    /// result) or inline in the content (llama.cpp's `none`); see
    /// [`ReasoningFormat`](crate::ReasoningFormat).
    pub reasoning_format: crate::ReasoningFormat,
}

impl ParserOptions {
    /// The default options (strict, default budget and limits).
    pub fn new() -> ParserOptions {
        ParserOptions::default()
    }

    /// The same options, lenient or strict.
    pub fn lenient(mut self, on: bool) -> ParserOptions {
        self.lenient = on;
        self
    }

    /// The same options with another work budget.
    pub fn budget(mut self, budget: crate::WorkBudget) -> ParserOptions {
        self.budget = budget;
        self
    }

    /// The same options, with a missing start anchor an error or not (see
    /// [`ParserOptions::require_anchor`](ParserOptions#structfield.require_anchor)).
    pub fn require_anchor(mut self, on: bool) -> ParserOptions {
        self.require_anchor = on;
        self
    }

    /// The same options with the reasoning split out or inline (see
    /// [`ParserOptions::reasoning_format`](ParserOptions#structfield.reasoning_format)).
    pub fn reasoning_format(mut self, format: crate::ReasoningFormat) -> ParserOptions {
        self.reasoning_format = format;
        self
    }

    /// The same options with other limits.
    pub fn limits(mut self, limits: Limits) -> ParserOptions {
        self.limits = limits;
        self
    }
}

/// A region that gave no value (lenient mode), with its text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Malformed {
    /// The field.
    pub field: String,
    /// Byte offset of the region's text in the parser's text (the truncated
    /// prompt followed by the generation).
    pub offset: usize,
    /// The region's text as the model wrote it (empty for a missing
    /// required field).
    pub raw: String,
    /// The error strict mode would have raised.
    pub error: String,
}

/// A value the template's semantics replaced: a field that does not repeat
/// (no `repeats`, no `join`) received a second region, whose value took
/// the first one's place, as the reference's dict assignment does. The
/// message keeps the last value (the reference's result); this report says
/// that an earlier one was dropped, and where the region that replaced it
/// began, so that nothing is lost without a word.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Replaced {
    /// The field.
    pub field: String,
    /// Byte offset, in the parser's text (the truncated prompt followed by
    /// the generation), of the replacing region's text (its open delimiter's
    /// end; for the implicit field, its first byte).
    pub offset: usize,
}

/// Text of the generation that no region claimed. In a template without an
/// implicit field, text outside every region goes nowhere (the reference's
/// semantics, which the message keeps): a model that writes prose where the
/// format expects a header, or a template that does not fit the output,
/// loses it without a word. So does whatever follows the end of the turn,
/// in any template: an end-of-turn close that takes the rest of the output
/// (`<|im_end|>[\s\S]*`, so that a newline or a model that runs on cannot
/// reopen a field) keeps it out of the message. This report keeps both,
/// with where they were.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unclaimed {
    /// Byte offset of the text in the parser's text (the truncated prompt
    /// followed by the generation).
    pub offset: usize,
    /// The text, as the model wrote it (adjacent pieces joined).
    pub text: String,
    /// Whether the text followed the end of the turn (the end-of-turn close
    /// took it) rather than lying between regions.
    pub after_end: bool,
}

impl Unclaimed {
    /// Whether the text is more than whitespace (the formatting between
    /// regions that many formats write).
    pub fn is_significant(&self) -> bool {
        self.text.chars().any(|c| !c.is_whitespace())
    }
}
