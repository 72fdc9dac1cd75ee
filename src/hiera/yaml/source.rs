//! The YAML text with saphyr's character positions made addressable, for
//! the few places that must look at the source itself (alias names, flow
//! collections, error positions).

use super::libyaml::Block;
use saphyr_parser::Marker;
use std::cell::Cell;

pub(super) struct Source<'a> {
    text: &'a str,
    /// Spaces inserted at line starts for saphyr: (0-based line, count).
    pads: &'a [(usize, usize)],
    /// libyaml's block scalar values, by indicator position, and the next
    /// one to hand out.
    blocks: &'a [Block],
    next_block: Cell<usize>,
    ascii: bool,
    /// The last (character index, byte offset) resolved: positions are
    /// mostly asked for in increasing order, so walking on from here keeps
    /// the conversion linear overall.
    cursor: Cell<(usize, usize)>,
}

impl<'a> Source<'a> {
    pub(super) fn new(
        text: &'a str,
        pads: &'a [(usize, usize)],
        blocks: &'a [Block],
    ) -> Source<'a> {
        Source {
            text,
            pads,
            blocks,
            next_block: Cell::new(0),
            ascii: text.is_ascii(),
            cursor: Cell::new((0, 0)),
        }
    }

    pub(super) fn text(&self) -> &'a str {
        self.text
    }

    /// The same text up to a character index (for a second look).
    pub(super) fn prefix(&self, end: usize) -> Source<'a> {
        Source::new(&self.text[..self.byte(end)], self.pads, self.blocks)
    }

    /// libyaml's value of the next block scalar, which ends at `end`.
    /// Both scanners meet block scalars in the same order; the indicator
    /// must come before the end, or the two disagree and saphyr's stands.
    pub(super) fn next_block(&self, end: Marker) -> Option<&'a str> {
        let next = self.next_block.get();
        let block = self.blocks.get(next)?;
        if block.indicator >= end.index() {
            return None;
        }
        self.next_block.set(next + 1);
        Some(&block.value)
    }

    /// Where libyaml ends the next block scalar.
    pub(super) fn next_block_end(&self) -> Option<usize> {
        self.blocks.get(self.next_block.get()).map(|b| b.end)
    }

    /// libyaml's mark for a saphyr marker: 0-based line and column in the
    /// original text (without the padding).
    pub(super) fn mark(&self, at: Marker) -> (usize, usize) {
        let line = at.line().saturating_sub(1);
        let pad = self
            .pads
            .iter()
            .find(|(l, _)| *l == line)
            .map_or(0, |(_, count)| *count);
        (line, at.col().saturating_sub(pad))
    }

    /// The byte offset of a character index (clamped to the end).
    pub(super) fn byte(&self, char_index: usize) -> usize {
        if self.ascii {
            return char_index.min(self.text.len());
        }
        let (mut ci, mut bi) = self.cursor.get();
        if char_index < ci {
            (ci, bi) = (0, 0);
        }
        for c in self.text[bi..].chars() {
            if ci == char_index {
                break;
            }
            ci += 1;
            bi += c.len_utf8();
        }
        self.cursor.set((ci, bi));
        bi
    }

    /// The text from a marker on.
    pub(super) fn from(&self, at: Marker) -> &'a str {
        &self.text[self.byte(at.index())..]
    }

    /// The text before a marker.
    pub(super) fn before(&self, at: Marker) -> &'a str {
        &self.text[..self.byte(at.index())]
    }

    /// The name of the alias whose `*` is at `at`, read as libyaml reads
    /// it: `[0-9A-Za-z_-]+` (saphyr may take more, such as a `:` after it).
    pub(super) fn alias_name(&self, at: Marker) -> String {
        self.from(at)
            .chars()
            .skip(1)
            .take_while(|&c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            .collect()
    }

    /// Whether the token ending at `end` is `[` or `{` (saphyr's span may
    /// take the blanks after it): a collection that starts there is a flow
    /// collection. A block collection's span ends at its first key or `-`,
    /// which never follows either.
    pub(super) fn opens_flow(&self, end: Marker) -> bool {
        let before = self.before(end).trim_end_matches([' ', '\t', '\r', '\n']);
        matches!(before.chars().next_back(), Some('[' | '{'))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_offsets_follow_characters() {
        let src = Source::new("é: *ä b", &[], &[]);
        let cases = [(0, 0), (1, 2), (3, 4), (4, 5), (6, 8), (2, 3), (99, 9)];
        for (ci, want) in cases {
            assert_eq!(src.byte(ci), want, "char {ci}");
        }
        assert_eq!(src.alias_name(Marker::new(3, 1, 3)), "");
        let src = Source::new("a: *x-1: b", &[], &[]);
        assert_eq!(src.alias_name(Marker::new(3, 1, 3)), "x-1");
    }
}
