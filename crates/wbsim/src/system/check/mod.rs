//! Conservation invariants, checked at the end of every run in tests and
//! after every event in check mode.
//!
//! What is checked is split in two: per-frame conditions
//! ([`System::check_frame`]), which hold for each frame on its own, and
//! counts ([`System::check_counts`]), which compare a [`Tally`] of the
//! frames by state with the lists and counters the kernel code keeps. A
//! from-scratch check ([`System::check_invariants`]) walks every frame; the
//! per-event checker ([`Checker`]) keeps the tally up to date from the
//! frames written during the event and re-checks only those.

use crate::fs::FsHost;
use crate::kernel::LruScope;
use crate::mm::MmHost;
use crate::writeback::WritebackHost;
mod incremental;
#[cfg(test)]
mod tests;

pub use incremental::{CheckSummary, Checker};

use super::System;
use crate::mm::page::{flags, Frames, Holder, Page, Pfn, NIL, NR_LRU_LISTS};
use crate::mm::swap::Pte;

/// The invariants, one per kind of finding; [`CheckSummary::invariants`]
/// is their number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Invariant {
    /// A free frame (buddy or per-CPU list) has no flags and no mapping.
    FreeFrameClean,
    /// A frame on an LRU list has PG_lru.
    LruFrameHasPgLru,
    /// A frame with a mapping is the page at its index in that mapping.
    FrameInItsMapping,
    /// A dirty or writeback frame has a mapping (file, anonymous memory or
    /// swap cache).
    DirtyFrameMapped,
    /// A zone's free list holds its free frames.
    FreeListLength,
    /// A zone's per-CPU lists hold its per-CPU frames.
    PerCpuListLength,
    /// A zone has no more free pages than present.
    FreeWithinPresent,
    /// Each LRU list holds the frames marked as on it.
    LruListLength,
    /// A zone's `nr_dirty` counts its dirty file frames.
    ZoneDirtyCount,
    /// The pagevecs hold the frames marked as in a pagevec.
    PagevecCount,
    /// The zones' isolated counts match the isolated frames.
    IsolatedCount,
    /// Every frame has exactly one holder.
    EveryFrameHeld,
    /// Global `nr_dirty` / `nr_writeback` match the page flags (anonymous
    /// pages stay out of the dirty count).
    GlobalDirtyWriteback,
    /// Dirty plus writeback pages (a page both counts once) are file pages.
    DirtyWithinFilePages,
    /// The devices' reclaimable and writeback counters sum to the global
    /// ones.
    DeviceCounters,
    /// No counter has wrapped below zero.
    NoWrap,
    /// FUSE's writeback-temp pages are kernel-held frames (3.0
    /// `fuse_writepage_locked` copies into a page of its own).
    WritebackTempHeld,
    /// A filesystem uses no more blocks than it has, and its files hold
    /// exactly the blocks it counts as used (the file sum on full walks).
    FsBlocks,
}

impl Invariant {
    pub const ALL: [Invariant; 18] = [
        Invariant::FreeFrameClean,
        Invariant::LruFrameHasPgLru,
        Invariant::FrameInItsMapping,
        Invariant::DirtyFrameMapped,
        Invariant::FreeListLength,
        Invariant::PerCpuListLength,
        Invariant::FreeWithinPresent,
        Invariant::LruListLength,
        Invariant::ZoneDirtyCount,
        Invariant::PagevecCount,
        Invariant::IsolatedCount,
        Invariant::EveryFrameHeld,
        Invariant::GlobalDirtyWriteback,
        Invariant::DirtyWithinFilePages,
        Invariant::DeviceCounters,
        Invariant::NoWrap,
        Invariant::WritebackTempHeld,
        Invariant::FsBlocks,
    ];

    /// The invariant's name in messages.
    pub fn name(self) -> &'static str {
        match self {
            Invariant::FreeFrameClean => "free-frame-clean",
            Invariant::LruFrameHasPgLru => "lru-frame-has-pg-lru",
            Invariant::FrameInItsMapping => "frame-in-its-mapping",
            Invariant::DirtyFrameMapped => "dirty-frame-mapped",
            Invariant::FreeListLength => "free-list-length",
            Invariant::PerCpuListLength => "per-cpu-list-length",
            Invariant::FreeWithinPresent => "free-within-present",
            Invariant::LruListLength => "lru-list-length",
            Invariant::ZoneDirtyCount => "zone-dirty-count",
            Invariant::PagevecCount => "pagevec-count",
            Invariant::IsolatedCount => "isolated-count",
            Invariant::EveryFrameHeld => "every-frame-held",
            Invariant::GlobalDirtyWriteback => "global-dirty-writeback",
            Invariant::DirtyWithinFilePages => "dirty-within-file-pages",
            Invariant::DeviceCounters => "device-counters",
            Invariant::NoWrap => "no-wrap",
            Invariant::WritebackTempHeld => "writeback-temp-held",
            Invariant::FsBlocks => "fs-blocks",
        }
    }
}

/// The state of a frame that the counts depend on (8 bytes): the checker
/// keeps one per frame, as last counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Snap {
    flags: u16,
    zone: u8,
    holder: Holder,
    mapped: bool,
}

impl Snap {
    fn of(pages: &Frames, pfn: usize) -> Snap {
        let p = &pages[pfn];
        Snap {
            flags: p.flags,
            zone: pages.zone_of(pfn as Pfn) as u8,
            holder: p.holder,
            mapped: p.inode() != NIL,
        }
    }
}

/// Add a frame to a [`Tally`].
const ADD: u64 = 1;
/// Take a frame out of a [`Tally`] (wrapping add of −1).
const SUB: u64 = u64::MAX;

/// Frames counted by state: what the lists and counters must agree with.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Tally {
    free: Vec<u64>,
    per_cpu: Vec<u64>,
    lru: Vec<[u64; NR_LRU_LISTS]>,
    zone_dirty: Vec<u64>,
    pagevec: u64,
    isolated: u64,
    kernel: u64,
    /// Dirty file pages (anonymous ones are not in the dirty counts).
    dirty: u64,
    writeback: u64,
    file_pages: u64,
    /// File pages both dirty and under writeback.
    both: u64,
    writeback_anon: u64,
}

impl Tally {
    /// All counts zero for `nz` zones; reuses the vectors' buffers.
    fn reset(&mut self, nz: usize) {
        for v in [&mut self.free, &mut self.per_cpu, &mut self.zone_dirty] {
            v.clear();
            v.resize(nz, 0);
        }
        self.lru.clear();
        self.lru.resize(nz, [0; NR_LRU_LISTS]);
        self.pagevec = 0;
        self.isolated = 0;
        self.kernel = 0;
        self.dirty = 0;
        self.writeback = 0;
        self.file_pages = 0;
        self.both = 0;
        self.writeback_anon = 0;
    }

    /// Count a frame in (`d` = [`ADD`]) or out (`d` = [`SUB`]).
    fn count(&mut self, s: Snap, d: u64) {
        let z = s.zone as usize;
        let c = match s.holder {
            Holder::Free => &mut self.free[z],
            Holder::PerCpu => &mut self.per_cpu[z],
            Holder::Pagevec => &mut self.pagevec,
            Holder::Isolated => &mut self.isolated,
            Holder::Kernel | Holder::Orphaned => &mut self.kernel,
            h => &mut self.lru[z][crate::mm::page::counted_lru(h.lru().unwrap())],
        };
        *c = c.wrapping_add(d);
        if s.mapped {
            self.file_pages = self.file_pages.wrapping_add(d);
        }
        let anon = s.flags & flags::ANON != 0;
        let dirty = s.flags & flags::DIRTY != 0;
        if dirty && !anon {
            self.dirty = self.dirty.wrapping_add(d);
            self.zone_dirty[z] = self.zone_dirty[z].wrapping_add(d);
        }
        if s.flags & flags::WRITEBACK != 0 {
            self.writeback = self.writeback.wrapping_add(d);
            if anon {
                self.writeback_anon = self.writeback_anon.wrapping_add(d);
            } else if dirty {
                self.both = self.both.wrapping_add(d);
            }
        }
    }
}

/// What one check found: how many conditions failed, and the first
/// message. Messages are formatted only when asked for (`keep_message`)
/// and only for the first failure, so a passing check allocates nothing.
#[derive(Debug, Default)]
pub(crate) struct Findings {
    pub broken: u64,
    pub message: Option<String>,
    pub keep_message: bool,
}

impl Findings {
    fn fail(&mut self, inv: Invariant, msg: impl FnOnce() -> String) {
        self.broken += 1;
        if self.keep_message && self.message.is_none() {
            self.message = Some(format!("{}: {}", inv.name(), msg()));
        }
    }
}

impl System {
    /// Every frame is free (buddy or per-CPU list), on exactly one LRU
    /// list, in a pagevec, isolated or kernel-private, and the lists agree
    /// with the frames; dirty and writeback counts match the page flags and
    /// never exceed the file pages; no counter has wrapped below zero.
    /// Walks every frame; `Err` carries the first finding.
    pub fn check_invariants(&self) -> Result<(), String> {
        let mut tally = Tally::default();
        tally.reset(self.mm().nr_zones());
        let mut f = Findings {
            keep_message: true,
            ..Findings::default()
        };
        for (pfn, p) in self.mm().pages().iter().enumerate() {
            tally.count(Snap::of(self.mm().pages(), pfn), ADD);
            self.check_frame(pfn, p, &mut f);
        }
        self.check_counts(&tally, &mut f);
        self.check_fs_blocks(&mut f);
        f.message.map_or(Ok(()), Err)
    }

    /// The conditions on frame `pfn` alone.
    pub(crate) fn check_frame(&self, pfn: usize, p: &Page, f: &mut Findings) {
        match p.holder {
            Holder::Free | Holder::PerCpu => {
                if p.flags != 0 || p.inode() != NIL {
                    f.fail(Invariant::FreeFrameClean, || {
                        format!("free page {pfn} has flags {:#x} or a mapping", p.flags)
                    });
                }
            }
            Holder::Pagevec | Holder::Isolated | Holder::Kernel | Holder::Orphaned => {}
            h => {
                if !p.has(flags::LRU) {
                    f.fail(Invariant::LruFrameHasPgLru, || {
                        format!("page {pfn} on LRU list {} without PG_lru", h.lru().unwrap())
                    });
                }
            }
        }
        if p.inode() != NIL {
            let found = self.mm().inodes().page_of(p.inode(), p.index());
            if found != Some(pfn as u32) {
                f.fail(Invariant::FrameInItsMapping, || {
                    format!("page {pfn} not found at its index in inode {}", p.inode())
                });
            }
            if p.has(flags::ANON) && p.has(flags::PTE_MAPPED) {
                // The region's page table maps it where its inode does.
                let mm = self.mm();
                let pte = mm
                    .find_region_of_inode(p.inode())
                    .map(|r| mm.anon_regions()[r].pte(p.index()));
                if pte != Some(Pte::Present(pfn as u32)) {
                    f.fail(Invariant::FrameInItsMapping, || {
                        format!(
                            "mapped anonymous page {pfn} is not in its region's page table \
                             at {} ({pte:?})",
                            p.index()
                        )
                    });
                }
            }
        }
        if (p.has(flags::DIRTY) || p.has(flags::WRITEBACK)) && p.inode() == NIL {
            f.fail(Invariant::DirtyFrameMapped, || {
                format!("page {pfn} is dirty or under writeback without a mapping")
            });
        }
    }

    /// Compare the frames' tally with the lists and counters. Costs
    /// O(zones × (LRU lists + CPUs) + CPUs + devices), not O(frames).
    pub(crate) fn check_counts(&self, t: &Tally, f: &mut Findings) {
        for (z, zone) in self.mm().zones().iter().enumerate() {
            if zone.nr_free_snapshot() != t.free[z] {
                f.fail(Invariant::FreeListLength, || {
                    format!(
                        "zone {} free list {} != free frames {}",
                        zone.name,
                        zone.nr_free_snapshot(),
                        t.free[z]
                    )
                });
            }
            let on_lists: u64 = zone.pcp.iter().map(|p| p.count()).sum();
            if on_lists != t.per_cpu[z] {
                f.fail(Invariant::PerCpuListLength, || {
                    format!(
                        "zone {} per-CPU lists {on_lists} != per-CPU frames {}",
                        zone.name, t.per_cpu[z]
                    )
                });
            }
            if t.free[z] > zone.present_pages {
                f.fail(Invariant::FreeWithinPresent, || {
                    format!("zone {} has more free pages than present", zone.name)
                });
            }
            for (l, (&counted, frames)) in zone.lru_pages.iter().zip(t.lru[z]).enumerate() {
                if counted != frames {
                    f.fail(Invariant::LruListLength, || {
                        format!(
                            "zone {} LRU {l} count {counted} != frames {frames}",
                            zone.name
                        )
                    });
                }
            }
            if zone.nr_dirty != t.zone_dirty[z] {
                f.fail(Invariant::ZoneDirtyCount, || {
                    format!(
                        "zone {} nr_dirty {} != dirty frames {}",
                        zone.name, zone.nr_dirty, t.zone_dirty[z]
                    )
                });
            }
            // The lists themselves: a zone's own (zone scope), or its share
            // of its node's, counted once at the node's last zone.
            let node_zones = self.mm.node_zones(self.mm.zone_node(z));
            let owner_zones = match self.mm.lru_scope() {
                LruScope::Zone => z..=z,
                LruScope::Node if z + 1 == node_zones.end => node_zones.start..=z,
                LruScope::Node => continue,
            };
            let mut on_lists = [0u64; NR_LRU_LISTS];
            for (l, list) in self.mm.lruvec(z).lists.iter().enumerate() {
                on_lists[crate::mm::page::counted_lru(l)] += list.len;
            }
            for (l, &len) in on_lists.iter().enumerate() {
                let counted: u64 = owner_zones
                    .clone()
                    .map(|oz| self.mm.zone(oz).lru_pages[l])
                    .sum();
                if len != counted {
                    f.fail(Invariant::LruListLength, || {
                        format!(
                            "zone {} LRU {l} lists hold {len} != counted {counted}",
                            zone.name
                        )
                    });
                }
            }
        }
        let in_pagevecs: u64 = self.mm.pagevecs().iter().map(|p| p.len as u64).sum();
        if t.pagevec != in_pagevecs {
            f.fail(Invariant::PagevecCount, || {
                format!(
                    "{} frames marked pagevec, pagevecs hold {in_pagevecs}",
                    t.pagevec
                )
            });
        }
        let isolated_count: u64 = self
            .mm
            .zones()
            .iter()
            .map(|z| z.nr_isolated_file + z.nr_isolated_anon)
            .sum();
        if t.isolated != isolated_count {
            f.fail(Invariant::IsolatedCount, || {
                format!(
                    "{} isolated frames, zones count {isolated_count}",
                    t.isolated
                )
            });
        }
        let total = [&t.free, &t.per_cpu]
            .into_iter()
            .flatten()
            .chain(t.lru.iter().flatten())
            .chain([&t.pagevec, &t.isolated, &t.kernel])
            .fold(0u64, |a, &b| a.wrapping_add(b));
        if total != self.mm().pages().len() as u64 {
            f.fail(Invariant::EveryFrameHeld, || {
                format!(
                    "frames by holder sum to {total}, machine has {}",
                    self.mm().pages().len()
                )
            });
        }
        if t.dirty != self.mm().gauges().nr_dirty || t.writeback != self.mm().gauges().nr_writeback
        {
            f.fail(Invariant::GlobalDirtyWriteback, || {
                format!(
                    "nr_dirty {} / nr_writeback {} disagree with page flags {} / {}",
                    self.mm().gauges().nr_dirty,
                    self.mm().gauges().nr_writeback,
                    t.dirty,
                    t.writeback
                )
            });
        }
        // A page may be dirty and under writeback at once (re-dirtied during
        // IO; no stable pages before 3.9): count it once.
        let dirty_or_wb = t.dirty.wrapping_add(t.writeback).wrapping_sub(t.both);
        if dirty_or_wb > t.file_pages {
            f.fail(Invariant::DirtyWithinFilePages, || {
                format!(
                    "dirty {} + writeback {} - both {} > file pages {}",
                    t.dirty, t.writeback, t.both, t.file_pages
                )
            });
        }
        // Wrapping sums: a wrapped counter is a finding, not a panic.
        let sum = |v: fn(&crate::writeback::bdi::Bdi) -> u64| {
            self.wb()
                .bdis()
                .iter()
                .fold(0u64, |a, b| a.wrapping_add(v(b)))
        };
        let (bdi_rec, bdi_wb) = (sum(|b| b.reclaimable), sum(|b| b.writeback));
        // FUSE's temporary pages are in their bdi's writeback count only.
        let global_wb = self
            .mm()
            .gauges()
            .nr_writeback
            .wrapping_add(self.mm().gauges().nr_writeback_temp);
        if bdi_rec != self.mm().gauges().nr_dirty
            || bdi_wb.wrapping_add(t.writeback_anon) != global_wb
        {
            f.fail(Invariant::DeviceCounters, || {
                format!(
                    "device counters {bdi_rec}/{bdi_wb} disagree with global {}/{}",
                    self.mm().gauges().nr_dirty,
                    self.mm().gauges().nr_writeback
                )
            });
        }
        if self.mm().gauges().nr_writeback_temp > t.kernel {
            f.fail(Invariant::WritebackTempHeld, || {
                format!(
                    "{} writeback-temp pages, {} kernel-held frames",
                    self.mm().gauges().nr_writeback_temp,
                    t.kernel
                )
            });
        }
        for fs in self.fs().all() {
            if fs.used_blocks > fs.capacity_blocks {
                f.fail(Invariant::FsBlocks, || {
                    format!(
                        "fs {} uses {} of {} blocks",
                        fs.mount, fs.used_blocks, fs.capacity_blocks
                    )
                });
            }
        }
        let limit = self.mm().pages().len() as u64;
        for (name, v) in [
            ("nr_dirty", self.mm().gauges().nr_dirty),
            ("nr_writeback", self.mm().gauges().nr_writeback),
        ] {
            if v > limit {
                f.fail(Invariant::NoWrap, || {
                    format!("{name} = {v} has wrapped below zero")
                });
            }
        }
    }

    /// The blocks the files of each filesystem hold add up to what it
    /// counts as used: O(inodes), so checked on full walks only.
    pub(crate) fn check_fs_blocks(&self, f: &mut Findings) {
        for (i, fs) in self.fs().all().iter().enumerate() {
            let inodes = self.mm().inodes();
            let held = (inodes.iter())
                .filter(|inode| inode.fs() == i)
                .fold(inodes.retired_blocks(i), |a, inode| {
                    a.wrapping_add(u64::from(inode.blocks))
                });
            if held != fs.used_blocks {
                f.fail(Invariant::FsBlocks, || {
                    format!(
                        "fs {} counts {} blocks used, its files hold {held}",
                        fs.mount, fs.used_blocks
                    )
                });
            }
        }
    }
}
