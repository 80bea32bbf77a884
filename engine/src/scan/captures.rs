//! A settled match's groups read off with leftmost-first DFAs, piece by
//! piece, instead of the backtracking matcher (see
//! [`crate::pyre::CapturePlan`] for why the two agree, and when the DFAs
//! cannot tell and the backtracker must answer).
//!
//! Compiled parsers run this as generated code (`retort-codegen` writes one
//! function per delimiter from [`CaptureTables`]); [`CaptureTables::read`]
//! is the same procedure over the tables, which the tests hold to the
//! backtracker.

use crate::scan::table::{DEAD, DfaTable, MATCH};

/// The end of the leftmost-first match of `t` anchored at `from` in
/// `bytes[..to]`, if there is one. `t` must be context free (no look
/// assertion): the text after `to` plays no part.
#[inline]
pub fn leftmost_first_end(t: &DfaTable, bytes: &[u8], from: usize, to: usize) -> Option<usize> {
    let mut s = t.start_text;
    let mut found = None;
    let text = bytes.get(from..to)?;
    for (i, &b) in text.iter().enumerate() {
        s = t.next(s, b);
        if s == DEAD {
            return found;
        }
        // Matches are reported one byte late: this one ended before `b`.
        if t.flags(s) & MATCH != 0 {
            found = Some(from + i);
        }
    }
    if t.flags(t.next_eoi(s)) & MATCH != 0 {
        found = Some(to);
    }
    found
}

/// A delimiter's [`crate::pyre::CapturePlan`] with its automata built.
#[derive(Clone, Debug)]
pub struct CaptureTables {
    /// The top-level alternatives in priority order.
    pub branches: Vec<CaptureBranchTables>,
}

/// One alternative of [`CaptureTables`].
#[derive(Clone, Debug)]
pub struct CaptureBranchTables {
    /// The whole alternative.
    pub whole: DfaTable,
    /// Its pieces in order.
    pub pieces: Vec<CapturePieceTable>,
}

/// A step of [`CaptureBranchTables`].
#[derive(Clone, Debug)]
pub enum CapturePieceTable {
    /// Exactly this text.
    Literal(String),
    /// What this leftmost-first automaton matches.
    Match(DfaTable),
    /// Group `n` opens here.
    Open(usize),
    /// Group `n` closes here.
    Close(usize),
}

impl CaptureTables {
    /// The tables for `regex`, if its pattern has a capture plan with
    /// groups and every automaton builds.
    #[cfg(feature = "dynamic")]
    pub fn build(regex: &crate::pyre::Regex) -> Option<CaptureTables> {
        use crate::pyre::CapturePiece;
        use crate::scan::table::TableKind;
        if regex.group_count() == 0 {
            return None;
        }
        let plan = regex.capture_plan()?;
        let table = |h| {
            let t = DfaTable::build(h, TableKind::Anchored).ok()?;
            t.context_free().then_some(t)
        };
        let mut branches = Vec::with_capacity(plan.branches.len());
        for b in &plan.branches {
            let mut pieces = Vec::with_capacity(b.pieces.len());
            for p in &b.pieces {
                pieces.push(match p {
                    CapturePiece::Literal(s) => CapturePieceTable::Literal(s.clone()),
                    CapturePiece::Match(h) => CapturePieceTable::Match(table(h)?),
                    CapturePiece::Open(g) => CapturePieceTable::Open(*g),
                    CapturePiece::Close(g) => CapturePieceTable::Close(*g),
                });
            }
            branches.push(CaptureBranchTables {
                whole: table(&b.whole)?,
                pieces,
            });
        }
        Some(CaptureTables { branches })
    }

    /// The named groups, as (name, text) in the order of `names` (the
    /// regex's [`crate::pyre::Regex::group_names`]), of the match
    /// `hay[start..end]` that the scanner settled; `None` when the pieces
    /// cannot tell (the backtracker must answer then).
    pub fn read(
        &self,
        names: &[(String, usize)],
        hay: &str,
        start: usize,
        end: usize,
    ) -> Option<Vec<(String, String)>> {
        let bytes = hay.as_bytes();
        let last = self.branches.len().checked_sub(1)?;
        for (k, b) in self.branches.iter().enumerate() {
            if let Some(groups) = b.read(names, hay, start, end) {
                // A path through this alternative: the backtracker's.
                return Some(groups);
            }
            // The pieces cannot tell. An alternative with any match within
            // the match is the backtracker's (which then must decide); one
            // with none passes to the next.
            if k == last || leftmost_first_end(&b.whole, bytes, start, end).is_some() {
                return None;
            }
        }
        None
    }
}

impl CaptureBranchTables {
    /// The groups of this alternative's pieces matched in turn from
    /// `start`, if they end at `end`.
    fn read(
        &self,
        names: &[(String, usize)],
        hay: &str,
        start: usize,
        end: usize,
    ) -> Option<Vec<(String, String)>> {
        let bytes = hay.as_bytes();
        let mut spans: Vec<(usize, Option<usize>, Option<usize>)> = Vec::new();
        let mut at = start;
        for p in &self.pieces {
            match p {
                CapturePieceTable::Literal(s) => {
                    if !bytes.get(at..end)?.starts_with(s.as_bytes()) {
                        return None;
                    }
                    at += s.len();
                }
                CapturePieceTable::Match(t) => at = leftmost_first_end(t, bytes, at, end)?,
                CapturePieceTable::Open(g) => spans.push((*g, Some(at), None)),
                CapturePieceTable::Close(g) => {
                    let s = spans.iter_mut().rev().find(|s| s.0 == *g)?;
                    s.2 = Some(at);
                }
            }
        }
        if at != end {
            return None;
        }
        let mut out = Vec::new();
        for (name, g) in names {
            if let Some(&(_, Some(a), Some(z))) = spans.iter().find(|s| s.0 == *g) {
                out.push((name.clone(), hay.get(a..z)?.to_owned()));
            }
        }
        Some(out)
    }
}

#[cfg(all(test, feature = "dynamic"))]
mod tests {
    use super::*;
    use crate::pyre::Regex;

    /// Patterns with groups at the top of their branches, each with a text
    /// it matches: the bundled templates' tool-call openers, then shapes
    /// where the pieces and the whole pattern read differently (lazy
    /// groups, a greedy group that must give back, alternatives sharing a
    /// prefix).
    const PATTERNS: &[(&str, &str)] = &[
        (
            r"\s*(?:<tool_call>\s*)?<function=(?P<name>[^>\n]+)>",
            " <tool_call>\n<function=get_w>",
        ),
        (
            r"\s*<tool_call>(?P<name>[^\n<]+)\s*",
            "\n<tool_call>get_w \n",
        ),
        (
            r"(?:<\|tool_calls_section_begin\|>)?\s*<\|tool_call_begin\|>\s*(?P<id>functions\.(?P<name>[\w.-]+):\d+)\s*<\|tool_call_argument_begin\|>",
            "<|tool_calls_section_begin|> <|tool_call_begin|>functions.get_w:0 <|tool_call_argument_begin|>",
        ),
        (
            r"<\|channel\|>commentary to=functions\.(?P<name>[\w.-]+)[^<]*(?:<\|constrain\|>\w+)?<\|message\|>|\s*to=functions\.(?P<name>[\w.-]+)[^<]*<\|channel\|>\w+[^<]*(?:<\|constrain\|>\w+)?<\|message\|>",
            " to=functions.get_w <|channel|>commentary <|constrain|>json<|message|>",
        ),
        (
            r"\[TOOL_CALLS\](?P<name>[^\[]+?)\[ARGS\]",
            "[TOOL_CALLS]get_w[ARGS]",
        ),
        (r"(?P<a>a+)(?P<b>a+)b", "aaab"),
        (r"(?P<a>a*)(?P<b>a|ab)c?", "aabc"),
        (r"x(?P<a>ab|a)(?P<b>bc|b)", "xabc"),
        (r"(?P<a>\w+?)(?P<b>\d*)", "ab12"),
        (r"(?P<a>[^<]*)<|(?P<b>.*)>", "ab>"),
    ];

    /// Texts around `example`: it, cut, with fragments the patterns care
    /// about put in or around it (a tiny deterministic generator).
    fn texts(example: &str, seed: u64, n: usize) -> Vec<String> {
        const FRAGS: &[&str] = &[
            "a",
            "b",
            "c",
            "x",
            "1",
            " ",
            "\n",
            "<",
            ">",
            ".",
            "-",
            "é",
            "[",
            "]",
            "|",
            "<tool_call>",
            "<function=",
            "[ARGS]",
            "functions.",
            ":0",
            "<|channel|>",
            "<|constrain|>",
            "<|message|>",
            "ab",
        ];
        let mut x = seed | 1;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        (0..n)
            .map(|_| {
                let mut t = example.to_owned();
                for _ in 0..(next() % 4) {
                    let frag = FRAGS[(next() % FRAGS.len() as u64) as usize];
                    let cut: Vec<usize> =
                        (0..=t.len()).filter(|&i| t.is_char_boundary(i)).collect();
                    let at = cut[(next() % cut.len() as u64) as usize];
                    match next() % 3 {
                        0 => t.insert_str(at, frag),
                        1 => t.truncate(at),
                        _ => {
                            let to = cut[(next() % cut.len() as u64) as usize].max(at);
                            t.replace_range(at..to, frag);
                        }
                    }
                }
                if next() % 3 == 0 {
                    t.insert_str(0, FRAGS[(next() % FRAGS.len() as u64) as usize]);
                }
                t
            })
            .collect()
    }

    #[test]
    fn pieces_give_the_backtrackers_groups_or_defer_to_it() {
        for (pi, (pattern, example)) in PATTERNS.iter().enumerate() {
            let re = Regex::new(pattern).unwrap();
            let tables = CaptureTables::build(&re)
                .unwrap_or_else(|| panic!("no capture plan for {pattern}"));
            let (mut read, mut matched) = (0, 0);
            for text in texts(example, 0x9E37 + pi as u64, 3000) {
                for start in (0..=text.len()).filter(|&i| text.is_char_boundary(i)) {
                    let m = re.match_at(&text, start, true).unwrap();
                    let Some(c) = m.captures else { continue };
                    matched += 1;
                    let want: Vec<(String, String)> = re
                        .group_names()
                        .iter()
                        .filter_map(|(n, i)| {
                            c.get(*i).map(|(a, b)| (n.clone(), text[a..b].to_owned()))
                        })
                        .collect();
                    if let Some(got) = tables.read(re.group_names(), &text, start, c.end()) {
                        read += 1;
                        assert_eq!(got, want, "{pattern} on {text:?} at {start}");
                    }
                }
            }
            assert!(matched > 100, "{pattern}: only {matched} matches generated");
            // The bundled shapes are read by the pieces nearly always.
            if pi < 4 {
                assert!(
                    read * 10 >= matched * 9,
                    "{pattern}: {read} of {matched} read"
                );
            }
        }
    }

    #[test]
    fn patterns_off_the_plan_have_none() {
        for p in [
            r"(?<=a)(?P<x>b)",
            r"(?P<x>a)\1",
            r"(?P<x>a)+",
            r"(?:(?P<x>a)|b)+",
            r"^(?P<x>a)",
            r"(?P<x>a)(?=b)",
            r"(?:(?P<a>a)|b)c",
            "ab",
        ] {
            let re = Regex::new(p).unwrap();
            assert!(CaptureTables::build(&re).is_none(), "{p}");
        }
    }
}
