//! A mapping's page index (the radix tree / xarray of `struct
//! address_space`): page index → entry (a page frame, a shadow entry or
//! `NIL`), with one dirty tag per index (`PAGECACHE_TAG_DIRTY`).
//!
//! Runs create millions of one-page files and keep an inode for each file
//! they hold, so the index's size is host memory per file. Up to
//! [`INLINE_PAGES`] entries and their tags live inline (24 bytes, no heap
//! allocation); a larger mapping moves them to the heap, as one dense
//! `Vec` of entries and a bitmap of tags, which is what
//! `write_cache_pages` needs: the next dirty index at or after a position
//! in O(words skipped).

use crate::mm::page::NIL;

/// Entries held inline, without a heap allocation.
pub(crate) const INLINE_PAGES: usize = 4;

#[derive(Debug, Clone)]
pub(crate) enum PageIndex {
    /// `len` is 0 (nothing inserted yet) or [`INLINE_PAGES`]; `dirty` has
    /// one tag bit per entry.
    Inline {
        len: u8,
        dirty: u8,
        entries: [u32; INLINE_PAGES],
    },
    Spilled(Box<Spilled>),
}

#[derive(Debug, Clone)]
pub(crate) struct Spilled {
    entries: Vec<u32>,
    /// One bit per entry, `entries.len().div_ceil(64)` words.
    dirty: Vec<u64>,
}

impl PageIndex {
    pub fn new() -> PageIndex {
        PageIndex::Inline {
            len: 0,
            dirty: 0,
            entries: [NIL; INLINE_PAGES],
        }
    }

    /// One past the highest index there is room for.
    #[inline]
    pub fn len(&self) -> usize {
        match self {
            PageIndex::Inline { len, .. } => usize::from(*len),
            PageIndex::Spilled(s) => s.entries.len(),
        }
    }

    /// Whether the entries are on the heap.
    #[inline]
    pub fn spilled(&self) -> bool {
        matches!(self, PageIndex::Spilled(_))
    }

    /// The entry at `i`, `None` past [`PageIndex::len`].
    #[inline]
    pub fn get(&self, i: usize) -> Option<u32> {
        match self {
            PageIndex::Inline { len, entries, .. } => (i < usize::from(*len)).then(|| entries[i]),
            PageIndex::Spilled(s) => s.entries.get(i).copied(),
        }
    }

    /// Set the entry at `i` (below [`PageIndex::len`]).
    #[inline]
    pub fn set(&mut self, i: usize, entry: u32) {
        match self {
            PageIndex::Inline { entries, .. } => entries[i] = entry,
            PageIndex::Spilled(s) => s.entries[i] = entry,
        }
    }

    /// Make room for index `i`: geometric growth (amortised O(1), no
    /// per-page allocation), to at least [`INLINE_PAGES`].
    #[inline(always)]
    pub fn grow_for(&mut self, i: usize) {
        if i >= self.len() {
            match self {
                // A new mapping's first page, without a call: fs_mark's
                // millions of one-page files each come here once.
                PageIndex::Inline { len, .. } if i < INLINE_PAGES => *len = INLINE_PAGES as u8,
                _ => self.grow(i),
            }
        }
    }

    /// [`PageIndex::grow_for`] when there is no room (out of line: a
    /// growing file comes here once each time its index doubles).
    #[inline(never)]
    fn grow(&mut self, i: usize) {
        let old_len = self.len();
        let new_len = (i + 1).max(old_len * 2).max(INLINE_PAGES);
        match self {
            PageIndex::Inline { len, .. } if new_len <= INLINE_PAGES => {
                *len = INLINE_PAGES as u8;
            }
            PageIndex::Inline {
                len,
                dirty,
                entries,
            } => {
                let mut spilled = Spilled {
                    entries: entries[..usize::from(*len)].to_vec(),
                    dirty: vec![u64::from(*dirty)],
                };
                spilled.entries.resize(new_len, NIL);
                spilled.dirty.resize(new_len.div_ceil(64), 0);
                *self = PageIndex::Spilled(Box::new(spilled));
            }
            PageIndex::Spilled(s) => {
                s.entries.resize(new_len, NIL);
                s.dirty.resize(new_len.div_ceil(64), 0);
            }
        }
    }

    /// The one entry of an inline index that holds exactly one and has no
    /// dirty tag: its position and value. `None` otherwise (a spilled
    /// index, no entry, several, or a tag set).
    pub fn sole_untagged_entry(&self) -> Option<(usize, u32)> {
        let PageIndex::Inline {
            len: _,
            dirty: 0,
            entries,
        } = self
        else {
            return None;
        };
        let mut held = entries.iter().enumerate().filter(|&(_, &e)| e != NIL);
        let first = held.next()?;
        held.next().is_none().then_some((first.0, *first.1))
    }

    /// Number of 64-bit tag words (indices below 64 × this can be tagged).
    #[inline]
    fn dirty_words(&self) -> usize {
        match self {
            PageIndex::Inline { len, .. } => usize::from(*len > 0),
            PageIndex::Spilled(s) => s.dirty.len(),
        }
    }

    #[inline]
    fn dirty_word(&self, w: usize) -> u64 {
        match self {
            PageIndex::Inline { dirty, .. } => u64::from(*dirty),
            PageIndex::Spilled(s) => s.dirty[w],
        }
    }

    /// Set or clear the tag of index `i` (below [`PageIndex::len`]).
    /// Returns whether it was set before.
    #[inline]
    pub fn tag(&mut self, i: u32, dirty: bool) -> bool {
        let (w, bit) = ((i / 64) as usize, i % 64);
        match self {
            PageIndex::Inline { dirty: tags, .. } => {
                let mask = 1u8 << bit;
                let was = *tags & mask != 0;
                *tags = if dirty { *tags | mask } else { *tags & !mask };
                was
            }
            PageIndex::Spilled(s) => {
                let mask = 1u64 << bit;
                let was = s.dirty[w] & mask != 0;
                s.dirty[w] = if dirty {
                    s.dirty[w] | mask
                } else {
                    s.dirty[w] & !mask
                };
                was
            }
        }
    }

    /// Whether index `i` is tagged dirty (false past the end).
    pub fn is_tagged(&self, i: u32) -> bool {
        let w = (i / 64) as usize;
        w < self.dirty_words() && self.dirty_word(w) & (1 << (i % 64)) != 0
    }

    /// First dirty index in `[from, end)`, like a radix-tree tag lookup.
    #[inline(always)]
    pub fn next_tagged(&self, from: u32, end: u32) -> Option<u32> {
        let end = end.min((self.dirty_words() * 64) as u32);
        if from >= end {
            return None;
        }
        let mut w = (from / 64) as usize;
        let mut word = self.dirty_word(w) & (!0u64 << (from % 64));
        loop {
            if word != 0 {
                let idx = (w as u32) * 64 + word.trailing_zeros();
                return (idx < end).then_some(idx);
            }
            w += 1;
            if (w as u32) * 64 >= end {
                return None;
            }
            word = self.dirty_word(w);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Inline and spilled indexes answer alike: entries and tags survive
    /// the move to the heap, and lookups past the end find nothing.
    #[test]
    fn spilling_keeps_entries_and_tags() {
        let mut ix = PageIndex::new();
        assert_eq!(
            (ix.len(), ix.get(0), ix.next_tagged(0, 100)),
            (0, None, None)
        );
        ix.grow_for(2);
        assert_eq!(ix.len(), INLINE_PAGES);
        ix.set(2, 77);
        assert!(!ix.tag(2, true));
        assert!(ix.tag(2, true));
        assert_eq!(ix.next_tagged(0, 100), Some(2));
        assert!(!ix.spilled());
        ix.grow_for(INLINE_PAGES);
        assert!(ix.spilled());
        assert_eq!(ix.len(), 2 * INLINE_PAGES);
        assert_eq!(
            (ix.get(2), ix.get(3), ix.get(8)),
            (Some(77), Some(NIL), None)
        );
        assert!(ix.is_tagged(2) && !ix.is_tagged(3) && !ix.is_tagged(500));
        ix.grow_for(130);
        ix.set(130, 5);
        ix.tag(130, true);
        assert_eq!(ix.next_tagged(3, 1000), Some(130));
        assert!(ix.tag(2, false));
        assert_eq!(ix.next_tagged(0, 130), None);
    }

    /// The point of the inline form: an index costs 24 bytes.
    #[test]
    fn an_index_takes_24_bytes() {
        assert!(std::mem::size_of::<PageIndex>() <= 24);
    }
}
