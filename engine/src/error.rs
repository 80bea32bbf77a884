//! Errors in model output.

/// What went wrong while parsing model output.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ParseErrorKind {
    /// A region's text did not parse with its content parser, its transform
    /// failed, or `join` met a value that is not a string.
    Field,
    /// The tool definitions given to the parser are not a list of tools.
    Tools,
    /// Fields marked `optional: false` were never written.
    MissingFields(Vec<String>),
    /// `feed` or `finalize` after `finalize`.
    Finalized,
    /// (With [`ParserOptions::require_anchor`](crate::ParserOptions::require_anchor))
    /// the prompt given as the prefix does not contain the template's start
    /// anchor: the template does not fit the prompt (a prompt variant it
    /// does not know, or another model's template). `raw` holds the prompt.
    MissingAnchor,
    /// The bytes fed are not valid UTF-8.
    InvalidUtf8,
    /// Delimiters that match the empty string keep matching at one place
    /// (the reference would loop forever here).
    NoProgress,
    /// The backtracking matcher gave up on a delimiter: one attempt took
    /// too many steps, or all attempts together exceeded the parser's
    /// [`WorkBudget`](crate::WorkBudget).
    MatcherBudget,
    /// A configured [`Limits`](crate::Limits) bound was exceeded; `raw` holds the text
    /// concerned, so nothing is lost.
    Limit {
        /// Which limit (the name of the [`Limits`](crate::Limits) field).
        name: &'static str,
        /// Its value.
        limit: usize,
    },
    /// The message does not fit the types generated for the template (a bug
    /// in retort's type derivation); `raw` holds the whole message as JSON.
    Type(Box<crate::typed::Mismatch>),
    /// An internal inconsistency (a bug in retort), reported rather than hidden.
    Internal,
}

/// An error in model output, with everything needed to recover the text.
#[derive(Clone, Debug, PartialEq)]
pub struct ParseError {
    /// What kind of error.
    pub kind: ParseErrorKind,
    /// The field whose region failed, if the error is about one.
    pub field: Option<String>,
    /// Byte offset, in the parser's text (the truncated prompt followed by
    /// the generation), where the failing region's body starts, or where the
    /// problem was found.
    pub offset: usize,
    /// The raw text of the failing region (or the offending bytes), so that
    /// nothing the model wrote is lost.
    pub raw: String,
    /// What went wrong.
    pub message: String,
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.field {
            Some(field) => write!(
                f,
                "field '{field}' at byte {}: {}",
                self.offset, self.message
            ),
            None => write!(f, "at byte {}: {}", self.offset, self.message),
        }
    }
}

impl std::error::Error for ParseError {}
