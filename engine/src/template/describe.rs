//! A read-only account of a compiled template: what each field does, how
//! each delimiter is found in a stream, and how big its automata are.
//!
//! Tools that show a template to people (`retort check --verbose`,
//! `retort explain`) read it from [`Template::describe`] instead of the
//! engine's working structures, which change as the scanner evolves. The
//! description is computed on demand and owns its data.

use crate::scan::delimiter::{Delimiter, DelimiterSource, Matcher};
use crate::scan::stream::{Kind, LeadLoop, WatchSet};
use crate::scan::table::{DfaTable, EOI_MATCH, LATER};
use crate::template::Template;
use crate::transform::Node;
use crate::value::{Map, Value};

/// How a compiled template is laid out and scanned; see
/// [`Template::describe`].
#[derive(Clone, Debug, PartialEq)]
pub struct Description {
    /// The start anchor, which cuts the prompt (never the generation).
    pub start_anchor: DelimiterInfo,
    /// How the prompt is searched for the start anchor.
    pub anchor_search: AnchorSearch,
    /// The fields, in template order.
    pub fields: Vec<FieldInfo>,
    /// Index (in [`Description::fields`]) of the implicit field: the one
    /// without an open delimiter, which receives text outside explicit
    /// regions.
    pub implicit: Option<usize>,
    /// The parser's states and what each watches for: one per explicit
    /// field with a close delimiter, then the state outside explicit regions
    /// (last).
    pub states: Vec<StateInfo>,
    /// The lookbehind trackers shared by the delimiters (referred to by
    /// [`BranchInfo::guard`]).
    pub trackers: Vec<TableInfo>,
    /// Whether the parser may forget text as soon as it is decided: no
    /// delimiter looks behind its start (lookbehind, `^`, `\b`, the
    /// backtracking path).
    pub scan_in_place: bool,
    /// Whether every delimiter runs on automata, so scanning is linear in
    /// the input.
    pub linear: bool,
}

/// One field: a key of the message and the region that writes it.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldInfo {
    /// The message key.
    pub name: String,
    /// What opens the region; `None` for the implicit field.
    pub open: Option<DelimiterInfo>,
    /// What closes it; `None` when the region runs to the end of the stream.
    pub close: Option<DelimiterInfo>,
    /// The content parser (`text`, `json`, ...).
    pub content: String,
    /// The content parser's arguments as written (an empty map if none).
    pub content_args: Value,
    /// Whether the region's chunks are raw material for a structured parser
    /// (`dirty` in events) rather than part of the value.
    pub dirty: bool,
    /// Each region appends its value to a list.
    pub repeats: bool,
    /// Region values are concatenated with this separator.
    pub join: Option<String>,
    /// Whether the message may lack the field.
    pub optional: bool,
    /// The transform applied to the parsed body, if any.
    pub transform: Option<TransformInfo>,
    /// Whether the transform applies to each element of a list body.
    pub transform_each: bool,
}

/// A field as [`FieldInfo`] has it, without its delimiters: what a layer
/// that reads only the fields' content rules needs, per stream, without
/// the cost of describing the delimiters' automata
/// ([`Template::field_summaries`]).
#[derive(Clone, Debug, PartialEq)]
pub struct FieldSummary {
    /// The message key.
    pub name: String,
    /// Whether this is the implicit field (no open delimiter).
    pub implicit: bool,
    /// The content parser (`text`, `json`, ...).
    pub content: String,
    /// The content parser's arguments as written (an empty map if none).
    pub content_args: Value,
    /// Each region appends its value to a list.
    pub repeats: bool,
    /// Region values are concatenated with this separator.
    pub join: Option<String>,
    /// The transform applied to the parsed body, if any.
    pub transform: Option<TransformInfo>,
    /// Whether the transform applies to each element of a list body.
    pub transform_each: bool,
}

/// A transform, as the template wrote it.
#[derive(Clone, Debug, PartialEq)]
pub struct TransformInfo {
    /// The transform template (placeholders as `"{name.key}"` strings).
    /// Parts nested beyond the engine's depth limit, which fail when
    /// applied, are `null`.
    pub template: Value,
    /// The placeholders, in template order (`content`, `name`,
    /// `content.arguments`, ...).
    pub placeholders: Vec<String>,
    /// Whether part of the template is nested too deep to apply.
    pub too_deep: bool,
}

/// One delimiter: an open, a close or the start anchor.
#[derive(Clone, Debug, PartialEq)]
pub struct DelimiterInfo {
    /// The delimiter as written: literals or a pattern.
    pub source: DelimiterSource,
    /// The pattern the engine runs (literals escaped and joined longest
    /// first).
    pub pattern: String,
    /// Named groups of the pattern (captures a transform can use).
    pub captures: Vec<String>,
    /// How the streaming scanner finds it.
    pub path: MatchPath,
    /// Why it takes the backtracking path, when it does.
    pub fallback_reason: Option<String>,
    /// The automata of its top-level branches (empty on the backtracking
    /// path).
    pub branches: Vec<BranchInfo>,
    /// Instructions of its backtracking program (the ground truth for
    /// captures and the prompt, and the matcher on the backtracking path).
    pub program_size: usize,
    /// Whether a match that reaches the end of the text so far is held
    /// because more text could extend it (a pattern, or a literal list in
    /// which one literal extends another).
    pub can_grow: bool,
    /// Whether some complete match could be extended by more text into a
    /// longer one (from the automata; always `true` on the backtracking
    /// path, which cannot tell).
    pub extends: bool,
    /// Whether it may match the empty string.
    pub may_match_empty: bool,
    /// Whether matching looks at text before the match (lookbehind, `^`,
    /// `\b`, backtracking).
    pub needs_history: bool,
    /// Bytes at which a match can begin (all 256 on the backtracking path).
    pub first_bytes: Vec<u8>,
    /// The ASCII bytes of a leading repeated class (`\s*` in `\s*<tag>`):
    /// runs of them are skipped, and a run at the end of the text is held.
    pub lead_loop: Option<Vec<u8>>,
}

/// How the scanner finds a delimiter in a stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatchPath {
    /// Compared byte for byte where its first byte occurs: every delimiter
    /// watched together with it is a literal too.
    Literal,
    /// Run on deterministic automata, every byte read once.
    Dfa,
    /// Tried with the backtracking matcher at each candidate start (exact,
    /// but re-examines undecided text when more arrives).
    Backtrack,
}

/// How the prompt is searched for the start anchor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnchorSearch {
    /// A single literal, found with `memmem`.
    Memmem,
    /// The anchor's pattern, run by the backtracking matcher over the
    /// prompt.
    Regex,
}

/// One top-level alternative of a delimiter, as an automaton.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BranchInfo {
    /// The automaton's size.
    pub table: TableInfo,
    /// The tracker (index in [`Description::trackers`]) whose lookbehind
    /// must hold where the branch starts.
    pub guard: Option<usize>,
    /// Whether its start state ignores the text before the start.
    pub context_free: bool,
}

/// The size of one automaton.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TableInfo {
    /// States, the dead state included.
    pub states: usize,
    /// Byte equivalence classes (the width of a row of transitions).
    pub classes: usize,
    /// Bytes its tables take: the class map, transitions, end-of-input
    /// transitions, flags and start states.
    pub bytes: usize,
}

/// A state of the parser and the delimiters it watches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StateInfo {
    /// The explicit field whose region is open, or `None` outside explicit
    /// regions (in the implicit field's region, or nowhere).
    pub region: Option<usize>,
    /// What is watched, in the order the reference tries it.
    pub watched: Vec<Watched>,
    /// Whether the scanner compares literals here instead of running
    /// automata (every watched delimiter is literals).
    pub literal: bool,
    /// Bytes at which the scanner must stop and look (when nothing is
    /// pending); other bytes are passed over with `memchr`-style searches.
    pub stop_bytes: Vec<u8>,
}

/// A delimiter watched in some state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Watched {
    /// The field it opens or closes.
    pub field: usize,
    /// Whether it opens the field's region (`false`: closes it).
    pub opens: bool,
}

impl Template {
    /// The fields' content rules, in template order (see [`FieldSummary`]).
    pub fn field_summaries(&self) -> Vec<FieldSummary> {
        self.fields
            .iter()
            .map(|f| FieldSummary {
                name: f.name.clone(),
                implicit: f.open.is_none(),
                content: f.content.name().to_owned(),
                content_args: f.content.args().clone(),
                repeats: f.repeats,
                join: f.join.clone(),
                transform: f.transform.as_ref().map(|t| transform_info(t.node())),
                transform_each: f.transform_each,
            })
            .collect()
    }

    /// Describes how this template is compiled and scanned, for people:
    /// fields, delimiters, the path each delimiter takes, automaton sizes.
    pub fn describe(&self) -> Description {
        let states: Vec<StateInfo> = self
            .watch_sets
            .iter()
            .enumerate()
            .filter(|(i, ws)| *i == self.fields.len() || !ws.entries.is_empty())
            .map(|(i, ws)| state_info(i, ws, self.fields.len()))
            .collect();
        // Each delimiter is watched in exactly one state: an open and the
        // implicit field's close outside regions, an explicit close in its
        // own region.
        let literal_delim = |d: u16| {
            self.watch_sets
                .iter()
                .find(|ws| ws.entries.iter().any(|w| w.delim == d))
                .is_some_and(|ws| ws.literals.is_some())
        };
        let delim = |i: Option<u16>| {
            i.map(|i| delimiter_info(&self.delimiters[i as usize], literal_delim(i)))
        };
        let fields = self
            .fields
            .iter()
            .map(|f| FieldInfo {
                name: f.name.clone(),
                open: delim(f.open),
                close: delim(f.close),
                content: f.content.name().to_owned(),
                content_args: f.content.args().clone(),
                dirty: f.dirty,
                repeats: f.repeats,
                join: f.join.clone(),
                optional: f.optional,
                transform: f.transform.as_ref().map(|t| transform_info(t.node())),
                transform_each: f.transform_each,
            })
            .collect();
        Description {
            start_anchor: delimiter_info(&self.start_anchor, false),
            anchor_search: if self.anchor_finder.is_some() {
                AnchorSearch::Memmem
            } else {
                AnchorSearch::Regex
            },
            fields,
            implicit: self.implicit.map(usize::from),
            states,
            trackers: self.trackers.tables.iter().map(table_info).collect(),
            scan_in_place: self.scan_in_place,
            linear: self.is_linear(),
        }
    }
}

fn state_info(index: usize, ws: &WatchSet, n_fields: usize) -> StateInfo {
    StateInfo {
        region: (index < n_fields).then_some(index),
        watched: ws
            .entries
            .iter()
            .map(|w| Watched {
                field: usize::from(w.field),
                opens: w.kind == Kind::Open,
            })
            .collect(),
        literal: ws.literals.is_some(),
        stop_bytes: match &ws.literals {
            Some(set) => set.firsts.members.clone(),
            None => ws.stops.members.clone(),
        },
    }
}

fn table_info(t: &DfaTable) -> TableInfo {
    TableInfo {
        states: t.state_count(),
        classes: t.stride as usize,
        bytes: t.classes.len()
            + 4 * (t.trans.len() + t.eoi.len() + t.start_after.len() + 1)
            + t.flags.len(),
    }
}

/// Whether some state both ends a match (at the end of input) and can
/// still reach a longer one.
fn extends(t: &DfaTable) -> bool {
    (1..t.state_count()).any(|q| {
        let f = t.flags_of_index(q);
        f & EOI_MATCH != 0 && f & LATER != 0
    })
}

fn delimiter_info(d: &Delimiter, literal: bool) -> DelimiterInfo {
    let (path, branches, fallback_reason) = match &d.matcher {
        Matcher::Dfa(branches) => (
            if literal {
                MatchPath::Literal
            } else {
                MatchPath::Dfa
            },
            branches
                .iter()
                .map(|b| BranchInfo {
                    table: table_info(&b.table),
                    guard: b.guard.map(usize::from),
                    context_free: b.table.context_free(),
                })
                .collect(),
            None,
        ),
        Matcher::Backtrack => {
            let reason = match d.regex.dfa_plan() {
                Err(u) => format!(
                    "{} (at character {}) has no automaton",
                    u.construct, u.offset
                ),
                // The plan exists, so building a table failed: the size
                // limit, or too many distinct lookbehinds.
                Ok(_) => "its automaton would exceed the size limit".to_owned(),
            };
            (MatchPath::Backtrack, Vec::new(), Some(reason))
        }
    };
    let extends = match &d.matcher {
        Matcher::Dfa(branches) => branches.iter().any(|b| extends(&b.table)),
        Matcher::Backtrack => true,
    };
    let lead_loop = LeadLoop::of(d).map(|l| (0..128u8).filter(|&b| l.class[b as usize]).collect());
    DelimiterInfo {
        source: d.source.clone(),
        pattern: d.regex.pattern().to_owned(),
        captures: d
            .regex
            .group_names()
            .iter()
            .map(|(n, _)| n.clone())
            .collect(),
        path,
        fallback_reason,
        branches,
        program_size: d.regex.program().insts.len(),
        can_grow: d.ref_can_grow,
        extends,
        may_match_empty: d.may_match_empty,
        needs_history: d.needs_history,
        first_bytes: (0..=255u8).filter(|&b| d.first_bytes[b as usize]).collect(),
        lead_loop,
    }
}

fn transform_info(node: &Node) -> TransformInfo {
    fn walk(node: &Node, placeholders: &mut Vec<String>, too_deep: &mut bool) -> Value {
        match node {
            Node::Map(entries) => {
                let mut m = Map::default();
                for (k, v) in entries {
                    m.insert(k.clone(), walk(v, placeholders, too_deep));
                }
                Value::Map(m)
            }
            Node::List(items) => Value::List(
                items
                    .iter()
                    .map(|v| walk(v, placeholders, too_deep))
                    .collect(),
            ),
            Node::Placeholder { path, .. } => {
                placeholders.push(path.clone());
                Value::Str(format!("{{{path}}}"))
            }
            Node::Literal(v) => v.clone(),
            Node::TooDeep => {
                *too_deep = true;
                Value::Null
            }
        }
    }
    let mut placeholders = Vec::new();
    let mut too_deep = false;
    let template = walk(node, &mut placeholders, &mut too_deep);
    TransformInfo {
        template,
        placeholders,
        too_deep,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn describe(json: &str) -> Description {
        Template::from_json(json)
            .expect("a valid template")
            .describe()
    }

    #[test]
    fn literal_closes_pattern_opens_and_the_implicit_field() {
        let d = describe(
            r#"{"start_anchor": "<a>", "fields": {
                "think": {"open": "<think>", "close": "</think>"},
                "calls": {"open_pattern": "\\s*<call>", "close": "</call>", "repeats": true,
                          "content": "json", "transform": {"f": "{content}"}},
                "content": {"close": "<end>"}}}"#,
        );
        assert_eq!(d.anchor_search, AnchorSearch::Memmem);
        assert_eq!(d.implicit, Some(2));
        let think = &d.fields[0];
        let close = think.close.as_ref().unwrap();
        // Alone in its region, the literal close is compared, not scanned.
        assert_eq!(close.path, MatchPath::Literal);
        assert_eq!(close.first_bytes, vec![b'<']);
        assert!(!close.can_grow && !close.extends);
        // Outside regions a pattern is watched, so the literals there run
        // on automata too.
        assert_eq!(think.open.as_ref().unwrap().path, MatchPath::Dfa);
        let calls = d.fields[1].open.as_ref().unwrap();
        assert_eq!(calls.path, MatchPath::Dfa);
        assert!(calls.lead_loop.as_ref().is_some_and(|l| l.contains(&b' ')));
        assert!(calls.branches[0].table.states > 2);
        assert!(calls.branches[0].table.bytes > 256);
        let t = d.fields[1].transform.as_ref().unwrap();
        assert_eq!(t.placeholders, vec!["content".to_owned()]);
        assert_eq!(t.template.to_json_string(), r#"{"f": "{content}"}"#);
        // States: think's region, calls' region, outside regions.
        assert_eq!(
            d.states.iter().map(|s| s.region).collect::<Vec<_>>(),
            vec![Some(0), Some(1), None]
        );
        let top = d.states.last().unwrap();
        assert!(!top.literal);
        assert_eq!(top.watched.len(), 3);
        assert!(top.watched[0].opens && !top.watched[2].opens);
        assert!(d.linear && d.trackers.is_empty());
    }

    #[test]
    fn growth_guards_and_the_backtracking_path() {
        let d = describe(
            r#"{"start_anchor_pattern": "<a>\\n?", "fields": {
                "x": {"open": ["[T]", "[T]2"], "close_pattern": "</x>\\s*(?:</y>)?"},
                "y": {"open_pattern": "(?<=\\n)<y>", "close_pattern": "(a)\\1"}}}"#,
        );
        assert_eq!(d.anchor_search, AnchorSearch::Regex);
        let x = &d.fields[0];
        assert!(
            x.open.as_ref().unwrap().can_grow,
            "one literal extends the other"
        );
        let close = x.close.as_ref().unwrap();
        assert!(close.extends, "an optional tail can follow a match");
        let y = &d.fields[1];
        assert_eq!(y.open.as_ref().unwrap().branches[0].guard, Some(0));
        assert_eq!(d.trackers.len(), 1);
        let yc = y.close.as_ref().unwrap();
        assert_eq!(yc.path, MatchPath::Backtrack);
        assert!(yc.fallback_reason.is_some() && yc.branches.is_empty());
        assert!(!d.linear && !d.scan_in_place);
        assert_eq!(d.implicit, None);
    }
}
