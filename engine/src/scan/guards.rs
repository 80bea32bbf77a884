//! Lookbehind trackers: the automata of the lookbehinds that guard
//! delimiter branches, run over the whole text, and their results for the
//! positions the scanner may still start threads at.

use crate::scan::stream::Guards;
use crate::scan::table::{DfaTable, MATCH};

/// Lookbehind trackers over the whole text, with their results for the
/// positions the scanner may still start threads at.
#[derive(Clone, Debug, Default)]
pub(crate) struct GuardState {
    pub(crate) states: Vec<u32>,
    /// `bits[i - bits_base]`: bit `t` set when tracker `t` holds at offset `i`.
    bits: Vec<u32>,
    bits_base: usize,
    /// The bits at the end of the text, once the end is known.
    end_bits: Option<u32>,
}

impl Guards for GuardState {
    fn holds(&self, t: u16, at: usize) -> bool {
        let word = match at
            .checked_sub(self.bits_base)
            .and_then(|i| self.bits.get(i))
        {
            Some(w) => *w,
            None => self.end_bits.unwrap_or(0),
        };
        word & (1 << t) != 0
    }
}

impl GuardState {
    /// Runs the trackers over `bytes`, the text from absolute offset `from`.
    pub(crate) fn track(&mut self, tables: &[DfaTable], from: usize, bytes: &[u8]) {
        if tables.is_empty() {
            return;
        }
        if self.bits.is_empty() {
            self.bits_base = from;
        }
        for &b in bytes {
            let mut word = 0u32;
            for (t, table) in tables.iter().enumerate() {
                let q = table.next(self.states[t], b);
                self.states[t] = q;
                if table.flags(q) & MATCH != 0 {
                    word |= 1 << t;
                }
            }
            self.bits.push(word);
        }
    }

    /// Applies the end of the text: which trackers hold there.
    pub(crate) fn end(&mut self, tables: &[DfaTable]) {
        if tables.is_empty() {
            return;
        }
        let mut word = 0u32;
        for (t, table) in tables.iter().enumerate() {
            if table.flags(table.next_eoi(self.states[t])) & MATCH != 0 {
                word |= 1 << t;
            }
        }
        self.end_bits = Some(word);
    }

    /// Forgets the results before `pos` (no thread starts there any more),
    /// once they are at least half of what is kept.
    pub(crate) fn trim(&mut self, pos: usize) {
        if self.bits.is_empty() {
            return;
        }
        let drop = pos.saturating_sub(self.bits_base);
        if drop > 0 && drop * 2 >= self.bits.len() {
            self.bits.drain(..drop.min(self.bits.len()));
            self.bits_base += drop;
        }
    }
}
