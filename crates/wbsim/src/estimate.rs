//! The host memory one run will take, estimated from the scenario before
//! anything is built, so that a run too big for the machine is refused at
//! once instead of being killed by the OOM killer an hour in.
//!
//! The parts that grow with the input, each an upper bound of what the
//! simulator allocates:
//! - per simulated page frame: one `Page` and its links, the buffer_head cache's
//!   bookkeeping and, with a swap area, one swap-slot word;
//! - per file a workload creates: its inode number's slot and its
//!   dentry/inode-cache entries ([`BYTES_PER_FILE`]); and, for the files
//!   whose inode is held (at most one per page frame, the others retired;
//!   of one-page files only those open, dirty or under writeback, the
//!   others frozen), the inode with the inline part of its page index and
//!   the filesystem's per-file records ([`BYTES_PER_HELD_FILE`]);
//! - per page of every file, anonymous region and swap area: one word of
//!   page index, doubled for the index's geometric growth, and the dirty
//!   bitmap;
//! - the time series, when sampled: one sample per interval up to the time
//!   limit.

use std::mem::size_of;

use crate::mm::inode::Inode;
use crate::mm::page_index::INLINE_PAGES;
use crate::report::series::{BdiSample, Sample, ZoneSample};
use crate::scenario::{Program, Scenario};
use crate::RunOptions;

/// Fixed cost of a run: the binary's data, the cost table, the queues,
/// thread stacks and allocator slack.
const BASE_BYTES: u64 = 32 << 20;

/// Heap bytes of every file a run creates, held to its end: its inode
/// number's slot, its dentry and inode LRU entries (a `u32` each, the
/// inode's with its I_REFERENCED bit), doubled for the geometric growth
/// of the vectors.
pub const BYTES_PER_FILE: u64 = 2 * (4 + 4 + 4);

/// Heap bytes of a file whose [`Inode`] is held (not retired, see
/// `mm::inode_table`), beyond `size_of::<Inode>()`: the flusher's list
/// links, a filesystem's per-file records and allocator overhead.
/// Measured (peak RSS by wait4, `tests/estimate.rs`): the 120-loop
/// writeback-plug run, 9.6 M fs_mark files on a 16 GiB machine, peaked at
/// 544 MiB with 4.07 M inodes held at its end, before one-page files
/// were frozen (250 MiB since).
pub const BYTES_PER_HELD_FILE: u64 = 64;

/// Heap bytes of a page index too large to be inline, beyond its
/// entries and tags: its record (two `Vec` headers) and the allocator's
/// headers of its three allocations.
const SPILLED_INDEX_BYTES: u64 = 48 + 3 * 16;

/// The estimate, by part.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MemoryEstimate {
    pub base_bytes: u64,
    pub frames_bytes: u64,
    pub files_bytes: u64,
    pub page_index_bytes: u64,
    pub series_bytes: u64,
}

impl MemoryEstimate {
    pub fn total_bytes(&self) -> u64 {
        self.base_bytes
            .saturating_add(self.frames_bytes)
            .saturating_add(self.files_bytes)
            .saturating_add(self.page_index_bytes)
            .saturating_add(self.series_bytes)
    }

    /// `N MiB (frames A, files B, page indexes C, series D)`.
    pub fn describe(&self) -> String {
        format!(
            "{} MiB: page frames {}, files {}, page indexes {}, series {}",
            self.total_bytes() >> 20,
            self.frames_bytes >> 20,
            self.files_bytes >> 20,
            self.page_index_bytes >> 20,
            self.series_bytes >> 20
        )
    }
}

/// Bytes of page index for a mapping of `pages` pages: a `u32` frame
/// number per index, up to twice over after geometric growth, plus the
/// dirty bitmap.
fn index_bytes(pages: u64) -> u64 {
    pages.saturating_mul(2 * 4).saturating_add(pages / 4)
}

/// Estimate the host memory of one run of `sc`.
pub fn run_memory(sc: &Scenario, opts: &RunOptions) -> MemoryEstimate {
    let mem_bytes: u64 = sc
        .machine
        .zones
        .iter()
        .map(|z| z.size_mib.saturating_mul(1 << 20))
        .fold(0, u64::saturating_add);
    // Frames and page indexes count simulated pages (`unit_kib`).
    let unit = sc.machine.unit();
    let page_bytes = unit.bytes();
    let frames = mem_bytes / page_bytes;
    let per_held_file = size_of::<Inode>() as u64 + BYTES_PER_HELD_FILE;
    // One-page files held as an `Inode` are the open ones and those
    // dirty or under writeback: within the dirty limit, doubled for its
    // overshoot and for the inodes noted but not yet swept
    // (`mm::inode_table`).
    let dirty_limit_pages = match sc.sysctl.dirty_bytes {
        0 => frames.saturating_mul(u64::from(sc.sysctl.dirty_ratio)) / 100,
        bytes => bytes / page_bytes,
    };
    let unfrozen_pages = dirty_limit_pages
        .saturating_mul(2)
        .saturating_add(crate::mm::inode_table::SWEEP_BATCH as u64)
        .min(frames);
    let (mut files, mut held, mut index_pages, mut spilled_files) = (0u64, 0u64, 0u64, 0u64);
    for t in &sc.tasks {
        let (n, pages_each) = match &t.program {
            Program::Dd(d) => (1, d.total_bytes().div_ceil(page_bytes)),
            Program::FsMark(f) => (f.total_files(), f.file_size_bytes.div_ceil(page_bytes)),
            Program::MemTouch(m) => (1, m.size_bytes.div_ceil(page_bytes)),
            Program::MapWrite(m) => (1, m.size_bytes.div_ceil(page_bytes)),
            Program::Iozone(i) => (1, i.file_bytes.div_ceil(page_bytes)),
            Program::Sync(_) => (0, 0),
        };
        let open = match &t.program {
            Program::FsMark(f) => u64::from(f.threads()),
            _ => n,
        };
        // A closed file's inode is retired once it has no page left, so
        // the closed ones held are those the page cache holds: for files
        // of several pages (reclaim takes them whole, oldest first) twice
        // as many as fit in memory; of one-page files, the unfrozen ones.
        let cached = match pages_each {
            0 | 1 => unfrozen_pages,
            _ => frames.saturating_mul(2) / pages_each,
        };
        let n_held = n.min(cached.saturating_add(open));
        files = files.saturating_add(n);
        held = held.saturating_add(n_held);
        // Small files keep their page index inline (in `per_held_file`);
        // only mappings of more than `INLINE_PAGES` add index memory: a
        // heap record per file and the entries and tags.
        if pages_each > INLINE_PAGES as u64 {
            index_pages = index_pages.saturating_add(n_held.saturating_mul(pages_each));
            spilled_files = spilled_files.saturating_add(n_held);
        }
    }
    let swap_pages = sc
        .swap
        .as_ref()
        .map_or(0, |s| unit.pages_of_mib(s.size_mib));
    let series_bytes = match opts.series_interval_ns {
        Some(interval_ns) if interval_ns > 0 => {
            let samples = sc.run.time_limit_s.saturating_mul(1_000_000_000) / interval_ns + 1;
            let per_sample = size_of::<Sample>()
                + sc.machine.zones.len() * size_of::<ZoneSample>()
                + sc.devices.len() * size_of::<BdiSample>();
            // The Vec of samples doubles as it grows.
            samples.saturating_mul(per_sample as u64).saturating_mul(2)
        }
        _ => 0,
    };
    MemoryEstimate {
        base_bytes: BASE_BYTES,
        frames_bytes: frames.saturating_mul(
            crate::mm::frames::BYTES_PER_FRAME as u64
                + if sc.swap.is_some() { 4 } else { 0 }
                + crate::mm::buffer_head::HOST_BYTES_PER_FRAME,
        ),
        files_bytes: (files.saturating_mul(BYTES_PER_FILE))
            .saturating_add(held.saturating_mul(per_held_file)),
        page_index_bytes: index_bytes(index_pages.saturating_add(swap_pages))
            .saturating_add(spilled_files.saturating_mul(SPILLED_INDEX_BYTES)),
        series_bytes,
    }
}
