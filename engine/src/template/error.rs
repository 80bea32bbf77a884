//! Template errors: which rule a template breaks, and where.

use crate::template::locate::Location;

/// The rule a template breaks. Each corresponds to a check of the reference's
/// loader (`load_response_template`), which rejects the same templates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Rule {
    /// The text is not valid JSON (Python's `json.loads` rejects it).
    Json,
    /// The template (or a field) is not a JSON object.
    NotAnObject,
    /// `version` is present and not 1.
    Version,
    /// A key the format does not define.
    UnknownKey,
    /// `defaults` is not an object.
    DefaultsNotAnObject,
    /// `fields` is missing, not an object, or empty.
    NoFields,
    /// `content` names no known content parser.
    UnknownContentParser,
    /// Both the literal and the pattern form of one delimiter are given.
    LiteralAndPattern,
    /// A literal delimiter is not a string or a list of strings.
    LiteralType,
    /// A literal list is empty.
    EmptyLiteralList,
    /// A literal is the empty string.
    EmptyLiteral,
    /// A pattern is not a string.
    PatternType,
    /// A pattern is not a valid regex.
    InvalidPattern,
    /// `join` is not a string.
    JoinType,
    /// `join` without `repeats`.
    JoinWithoutRepeats,
    /// `transform_each` is not a boolean.
    TransformEachType,
    /// `transform_each` without `transform`.
    TransformEachWithoutTransform,
    /// A transform string mixes a placeholder with literal text.
    MixedPlaceholder,
    /// Named groups in a pattern of a field without `transform`.
    NamedGroupsWithoutTransform,
    /// More than one field without `open`/`open_pattern`.
    SeveralImplicitFields,
    /// Neither `start_anchor` nor `start_anchor_pattern`.
    NoStartAnchor,
    /// The file holding the template could not be read, it holds a
    /// `tokenizer_config.json` without a `response_template`, or the text
    /// is larger than the loader's size limit
    /// ([`MAX_TEMPLATE_BYTES`](crate::template::MAX_TEMPLATE_BYTES)).
    Source,
}

impl Rule {
    /// Every rule, in the order the loader checks them (roughly).
    pub const ALL: [Rule; 22] = [
        Rule::Json,
        Rule::NotAnObject,
        Rule::Version,
        Rule::UnknownKey,
        Rule::DefaultsNotAnObject,
        Rule::NoFields,
        Rule::UnknownContentParser,
        Rule::LiteralAndPattern,
        Rule::LiteralType,
        Rule::EmptyLiteralList,
        Rule::EmptyLiteral,
        Rule::PatternType,
        Rule::InvalidPattern,
        Rule::JoinType,
        Rule::JoinWithoutRepeats,
        Rule::TransformEachType,
        Rule::TransformEachWithoutTransform,
        Rule::MixedPlaceholder,
        Rule::NamedGroupsWithoutTransform,
        Rule::SeveralImplicitFields,
        Rule::NoStartAnchor,
        Rule::Source,
    ];

    /// The rule's stable name, as diagnostics print it (`no-start-anchor`).
    pub fn name(self) -> &'static str {
        match self {
            Rule::Json => "json",
            Rule::NotAnObject => "not-an-object",
            Rule::Version => "version",
            Rule::UnknownKey => "unknown-key",
            Rule::DefaultsNotAnObject => "defaults-not-an-object",
            Rule::NoFields => "no-fields",
            Rule::UnknownContentParser => "unknown-content-parser",
            Rule::LiteralAndPattern => "literal-and-pattern",
            Rule::LiteralType => "literal-type",
            Rule::EmptyLiteralList => "empty-literal-list",
            Rule::EmptyLiteral => "empty-literal",
            Rule::PatternType => "pattern-type",
            Rule::InvalidPattern => "invalid-pattern",
            Rule::JoinType => "join-type",
            Rule::JoinWithoutRepeats => "join-without-repeats",
            Rule::TransformEachType => "transform-each-type",
            Rule::TransformEachWithoutTransform => "transform-each-without-transform",
            Rule::MixedPlaceholder => "mixed-placeholder",
            Rule::NamedGroupsWithoutTransform => "named-groups-without-transform",
            Rule::SeveralImplicitFields => "several-implicit-fields",
            Rule::NoStartAnchor => "no-start-anchor",
            Rule::Source => "source",
        }
    }

    /// A short description of the rule.
    pub fn describe(self) -> &'static str {
        match self {
            Rule::Json => "the template must be valid JSON",
            Rule::NotAnObject => "must be a JSON object",
            Rule::Version => "`version` must be 1",
            Rule::UnknownKey => "only the keys of the format are allowed",
            Rule::DefaultsNotAnObject => "`defaults` must be an object",
            Rule::NoFields => "`fields` must be a non-empty object",
            Rule::UnknownContentParser => {
                "`content` must be one of text, int, float, bool, json, xml-inline, kv-lines"
            }
            Rule::LiteralAndPattern => "a delimiter is either literal or a pattern, not both",
            Rule::LiteralType => "a literal delimiter is a string or a list of strings",
            Rule::EmptyLiteralList => "a literal list needs at least one literal",
            Rule::EmptyLiteral => "literals cannot be empty",
            Rule::PatternType => "a pattern must be a string",
            Rule::InvalidPattern => "a pattern must be a valid regex",
            Rule::JoinType => "`join` must be a string",
            Rule::JoinWithoutRepeats => "`join` requires `repeats: true`",
            Rule::TransformEachType => "`transform_each` must be a boolean",
            Rule::TransformEachWithoutTransform => "`transform_each` requires `transform`",
            Rule::MixedPlaceholder => {
                "a transform string is either one whole placeholder or plain text"
            }
            Rule::NamedGroupsWithoutTransform => {
                "named groups are only surfaced through a `transform`"
            }
            Rule::SeveralImplicitFields => "at most one field may omit `open`/`open_pattern`",
            Rule::NoStartAnchor => "`start_anchor` or `start_anchor_pattern` is required",
            Rule::Source => "the template source must be readable",
        }
    }
}

/// A rejected template: the rule broken, the JSON path of the offending
/// value, and (when the template was loaded from text) its line and column.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TemplateError {
    /// The rule broken.
    pub rule: Rule,
    /// Dotted JSON path of the offending value (`fields.tool_calls.open_pattern`);
    /// empty for the document itself.
    pub path: String,
    /// Where the offending value is written, when loaded from text.
    pub location: Option<Location>,
    /// What is wrong, in the reference's words where it has them.
    pub message: String,
}

impl std::fmt::Display for TemplateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(loc) = &self.location {
            write!(f, "{loc}: ")?;
        }
        if !self.path.is_empty() {
            write!(f, "{}: ", self.path)?;
        }
        write!(f, "{} ({})", self.message, self.rule.describe())
    }
}

impl std::error::Error for TemplateError {}
