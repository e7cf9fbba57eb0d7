//! The simulated page: 4 KiB, or a coarser unit (`[machine] unit_kib`)
//! that stands for several 4 KiB pages, so that a machine of terabytes
//! runs in a few GiB of host memory.
//!
//! At a coarse unit a frame, an LRU entry, a page-cache entry and a bio
//! segment are one unit, and the run stands for the same machine at
//! 4 KiB pages. So every amount of memory the 4 KiB kernel sets keeps its
//! bytes, in whole pages of the unit:
//! - what the kernel states in bytes or KiB (`dirty_bytes`,
//!   `min_free_kbytes`, the `zone_batchsize` cap, `MIN_WRITEBACK_PAGES`,
//!   `max_sectors_kb`) is converted at the unit's size;
//! - what it states in pages (`SWAP_CLUSTER_MAX`, `PAGEVEC_SIZE`,
//!   `MAX_WRITEBACK_PAGES`, the per-CPU vmstat thresholds, the pcp batch,
//!   the ratelimit floors, `pageblock_order`, `BIO_MAX_VECS`, MGLRU's
//!   batches, the profile's `fs.*_pages` keys) is taken in 4 KiB pages and
//!   becomes as many bytes of the unit, at least one page of it
//!   ([`PageUnit::from_base_pages`]);
//! - a count derived from a list's size (reclaim's `size >> priority`) is
//!   computed on 4 KiB pages and the part that is not a whole unit is
//!   carried to the next pass (`Lruvec::scan_in_units`).
//!
//! The CPU cost of per-page work is charged once for each 4 KiB page of a
//! unit ([`PageUnit::base_pages`]), and reports count 4 KiB pages: a
//! counter of pages is multiplied by the unit's 4 KiB pages, one of events
//! (`allocstall`, `pageoutrun`) is not.
//!
//! What stays coarse: a file or a metadata block occupies whole units, a
//! page's state (dirty, under writeback, its LRU position) is the whole
//! unit's, and the buffer_head cache holds one object per unit. A
//! 64 GiB machine writing 80 GiB agrees with its 4 KiB run within 0.4 %
//! on elapsed time, `nr_written` and each zone's `pgscan`, from 2.6.24 to
//! 6.1 (`tests/coarse_unit.rs`).

use serde::Serialize;

/// The size of the page the model simulates, a power of two from 4 KiB.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PageUnit {
    shift: u32,
}

/// `PAGE_SHIFT` of x86-64.
pub const BASE_PAGE_SHIFT: u32 = 12;
/// The largest unit a scenario may ask for: 1 MiB.
pub const MAX_UNIT_KIB: u64 = 1024;

impl Default for PageUnit {
    fn default() -> Self {
        PageUnit::BASE
    }
}

impl PageUnit {
    /// 4 KiB pages.
    pub const BASE: PageUnit = PageUnit {
        shift: BASE_PAGE_SHIFT,
    };

    /// A unit of `kib` KiB: a power of two from 4 to [`MAX_UNIT_KIB`]
    /// (the scenario's validation refuses anything else).
    pub fn from_kib(kib: u64) -> PageUnit {
        debug_assert!(kib.is_power_of_two() && (4..=MAX_UNIT_KIB).contains(&kib));
        PageUnit {
            shift: kib.trailing_zeros() + 10,
        }
    }

    /// `PAGE_SHIFT`.
    #[inline]
    pub fn shift(self) -> u32 {
        self.shift
    }

    /// `PAGE_SIZE`.
    #[inline]
    pub fn bytes(self) -> u64 {
        1 << self.shift
    }

    /// The unit in KiB.
    pub fn kib(self) -> u64 {
        self.bytes() >> 10
    }

    /// 512-byte sectors per page.
    #[inline]
    pub fn sectors(self) -> u64 {
        self.bytes() >> 9
    }

    /// 512-byte sectors in `pages` pages.
    #[inline]
    pub fn sectors_of_pages(self, pages: u64) -> u64 {
        pages << (self.shift - 9)
    }

    /// 4 KiB pages one simulated page stands for (1 at page granularity).
    #[inline]
    pub fn base_pages(self) -> u64 {
        1 << (self.shift - BASE_PAGE_SHIFT)
    }

    /// Whether this is page granularity (4 KiB).
    pub fn is_base(self) -> bool {
        self.shift == BASE_PAGE_SHIFT
    }

    /// Pages in `mib` MiB.
    pub fn pages_of_mib(self, mib: u64) -> u64 {
        mib << (20 - self.shift)
    }

    /// Pages holding `bytes` bytes, the last one partly (`DIV_ROUND_UP`).
    #[inline]
    pub fn pages_of_bytes(self, bytes: u64) -> u64 {
        bytes.div_ceil(self.bytes())
    }

    /// The page of byte `pos` and the offset in it.
    #[inline]
    pub fn page_and_offset(self, pos: u64) -> (u64, u64) {
        (pos >> self.shift, pos & (self.bytes() - 1))
    }

    /// `n` 4 KiB pages in whole pages of the unit, rounded down, at least
    /// one: an amount of memory the 4 KiB kernel states in pages (a batch,
    /// a threshold), kept about the same in bytes.
    #[inline]
    pub fn from_base_pages(self, n: u64) -> u64 {
        (n >> (self.shift - BASE_PAGE_SHIFT)).max(1)
    }

    /// `n` 4 KiB pages in pages of the unit, to the nearest: a count the
    /// 4 KiB kernel derives from a page count (reclaim's `size >>
    /// priority` share of a list), computed on 4 KiB pages so that its
    /// truncation is the 4 KiB kernel's and not a unit's.
    #[inline]
    pub fn nearest_of_base_pages(self, n: u64) -> u64 {
        (n + self.base_pages() / 2) >> (self.shift - BASE_PAGE_SHIFT)
    }

    /// Pages in `n` 4 KiB pages, rounded up: for a figure a user gives in
    /// 4 KiB pages, as reports print them.
    pub fn pages_of_base_pages(self, n: u64) -> u64 {
        n.div_ceil(self.base_pages())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_64_kib_unit_is_sixteen_4_kib_pages() {
        let u = PageUnit::from_kib(64);
        assert_eq!((u.shift(), u.bytes(), u.sectors()), (16, 65_536, 128));
        assert_eq!(u.base_pages(), 16);
        assert_eq!(u.sectors_of_pages(3), 384);
        assert_eq!(u.pages_of_mib(3), 48);
        assert_eq!(u.pages_of_bytes(65_537), 2);
        assert_eq!(u.page_and_offset(65_536 * 3 + 5), (3, 5));
        assert_eq!(u.pages_of_base_pages(17), 2);
        assert_eq!(u.from_base_pages(32), 2);
        assert_eq!(u.from_base_pages(14), 1);
        // A DMA32 list of 65,296 pages of 64 KiB at DEF_PRIORITY: 255
        // pages of 4 KiB, nearly 16 of the unit, not the 15 of 65,296 >> 12.
        assert_eq!(u.nearest_of_base_pages((65_296 * 16) >> 12), 16);
        assert_eq!(u.nearest_of_base_pages(7), 0);
        assert!(!u.is_base());
    }

    #[test]
    fn the_base_unit_is_the_x86_page() {
        let u = PageUnit::from_kib(4);
        assert_eq!(u, PageUnit::BASE);
        assert_eq!((u.bytes(), u.sectors(), u.base_pages()), (4096, 8, 1));
        assert_eq!(u.pages_of_mib(1), crate::mm::page::PAGES_PER_MIB);
        assert_eq!(u.pages_of_base_pages(17), 17);
        assert_eq!(u.from_base_pages(14), 14);
        assert_eq!(u.nearest_of_base_pages(255), 255);
        assert_eq!(PageUnit::from_kib(MAX_UNIT_KIB).bytes(), 1 << 20);
    }
}
