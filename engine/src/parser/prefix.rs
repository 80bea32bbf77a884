//! The prompt (`prefix`): processed once, at construction, exactly as the
//! reference processes a feed.

use super::*;

impl<'t, M: Machine<'t>> Parser<'t, M> {
    /// Processes the truncated prompt exactly as the reference's `feed`
    /// does: per watched delimiter, `search(..., partial=True)`, then its
    /// commit-or-hold rule.
    pub(super) fn consume_prefix(&mut self, src: Hay<'_>) -> Result<(), ParseError> {
        let mut cache: Vec<Option<(usize, Option<PartialHit>)>> =
            vec![None; self.t.delimiters.len()];
        loop {
            let ws = self.watch_set();
            let len = src.end();
            let mut best: Option<(RefKey, usize, PartialHit)> = None;
            let mut hold = len;
            for (k, w) in ws.entries.iter().enumerate() {
                let d = &self.t.delimiters[w.delim as usize];
                let slot = &mut cache[w.delim as usize];
                let fresh = match slot {
                    Some((_, None)) => false,
                    Some((_, Some(hit))) => hit.start < self.pos,
                    None => true,
                };
                if fresh {
                    let hit = search_partial(d, src.text, self.pos)
                        .map_err(|e| self.scan_error(src, e))?;
                    *slot = Some((self.pos, hit));
                }
                let Some((_, Some(hit))) = slot.clone() else {
                    continue;
                };
                let can_grow = hit.end == len && (hit.start == hit.end || d.ref_can_grow);
                if hit.partial || can_grow {
                    hold = hold.min(hit.start);
                    continue;
                }
                let key = (
                    hit.start,
                    usize::MAX - (hit.end - hit.start),
                    w.kind,
                    w.name_rank,
                );
                if best.as_ref().is_none_or(|(b, _, _)| key < *b) {
                    best = Some((key, k, hit));
                }
            }
            match best {
                Some((_, k, hit)) if hit.start < hold => {
                    let w = ws.entries[k];
                    if !self.commit(src, w, hit.start, hit.end, hit.captures)? {
                        return Ok(());
                    }
                }
                _ => {
                    if hold > self.pos {
                        self.route(src, self.pos, hold);
                        self.pos = hold;
                    }
                    return Ok(());
                }
            }
        }
    }
}

/// The reference's order of delimiter matches: start, longest, opens
/// first, then by field name.
type RefKey = (usize, usize, Kind, u16);

#[derive(Clone, Debug)]
pub(super) struct PartialHit {
    start: usize,
    end: usize,
    partial: bool,
    captures: Vec<(String, String)>,
}

pub(super) fn search_partial(
    d: &Delimiter,
    hay: &str,
    pos: usize,
) -> Result<Option<PartialHit>, ScanError> {
    let Some(m) = d.regex.search_partial(hay, pos)? else {
        return Ok(None);
    };
    let caps = &m.captures;
    Ok(Some(PartialHit {
        start: caps.start(),
        end: caps.end(),
        partial: m.partial,
        captures: if m.partial {
            Vec::new()
        } else {
            named_groups(d, hay, caps)
        },
    }))
}

/// The prompt after the last of the non-overlapping occurrences of a
/// literal anchor, found from the left as `finditer` does; `None` when the
/// anchor does not occur.
pub(super) fn after_last_literal<'a>(
    finder: &memchr::memmem::Finder<'_>,
    prefix: &'a str,
) -> Option<&'a str> {
    let n = finder.needle().len();
    let mut at = 0;
    let mut last_end = None;
    while let Some(i) = finder.find(&prefix.as_bytes()[at..]) {
        at += i + n;
        last_end = Some(at);
    }
    // A match of a UTF-8 literal in UTF-8 text ends on a character boundary.
    last_end.and_then(|e| prefix.get(e..))
}

/// The prompt after the last match of the start anchor (`None` when the
/// anchor does not occur: the reference then uses all of it), as
/// `truncate_past_last_anchor` does with `finditer`.
pub(super) fn truncate_past_last_anchor<'a>(
    anchor: &Delimiter,
    prefix: &'a str,
) -> Result<Option<&'a str>, ParseError> {
    let mut last_end = None;
    for m in anchor.regex.find_iter(prefix) {
        let m = m.map_err(|_| ParseError {
            kind: ParseErrorKind::MatcherBudget,
            field: None,
            offset: 0,
            raw: prefix.to_owned(),
            message: "the start anchor pattern needs too many backtracking steps".into(),
        })?;
        last_end = Some(m.end());
    }
    Ok(last_end.map(|e| &prefix[e..]))
}
