//! The simulated page: 4 KiB, or a coarser unit (`[machine] unit_kib`)
//! that stands for several 4 KiB pages, so that a machine of terabytes
//! runs in a few GiB of host memory.
//!
//! At a coarse unit the model is a kernel whose `PAGE_SIZE` is the unit
//! (as arm64 and ppc64 kernels build with 64 KiB pages): a frame, an LRU
//! entry, a page-cache entry, a bio segment are one unit. What the kernel
//! states in bytes or KiB (`dirty_bytes`, `min_free_kbytes`, the
//! `zone_batchsize` cap, `MIN_WRITEBACK_PAGES`, `max_sectors_kb`) keeps
//! its size in bytes; what it counts in pages (`SWAP_CLUSTER_MAX`,
//! `PAGEVEC_SIZE`, the ratelimit floors) stays that many frames, as in such
//! a kernel. Two things make it stand for a 4 KiB machine instead:
//! - the CPU cost of per-page work is charged once per 4 KiB page of the
//!   unit ([`PageUnit::base_pages`]), so that CPU time per byte is that of
//!   the 4 KiB kernel;
//! - reports count pages in 4 KiB pages: a counter of pages is multiplied
//!   by [`PageUnit::base_pages`], one of events (`allocstall`,
//!   `pageoutrun`) is not.

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
        assert_eq!(u.pages_of_mib(3), 48);
        assert_eq!(u.pages_of_bytes(65_537), 2);
        assert_eq!(u.page_and_offset(65_536 * 3 + 5), (3, 5));
        assert_eq!(u.pages_of_base_pages(17), 2);
        assert!(!u.is_base());
    }

    #[test]
    fn the_base_unit_is_the_x86_page() {
        let u = PageUnit::from_kib(4);
        assert_eq!(u, PageUnit::BASE);
        assert_eq!((u.bytes(), u.sectors(), u.base_pages()), (4096, 8, 1));
        assert_eq!(u.pages_of_mib(1), crate::mm::page::PAGES_PER_MIB);
        assert_eq!(u.pages_of_base_pages(17), 17);
        assert_eq!(PageUnit::from_kib(MAX_UNIT_KIB).bytes(), 1 << 20);
    }
}
