//! Page-cache writeback: dirty limits, per-device proportions, dirty
//! throttling, flusher threads and the per-inode writeback walk.

pub mod account;
pub mod bdi;
pub mod chunk;
pub mod flex_proportions;
pub mod flusher;
pub mod ioless;
pub mod ioless_throttle;
pub mod limits;
pub mod pass;
pub mod proportions;
mod shares;
mod state;
pub mod sync;
pub mod throttle;
pub mod throttle_trace;
pub mod writer_throttle;

use crate::block::BlockHost;
use crate::mm::page::Pfn;
use pass::WritebackCaller;

pub use state::Writeback;

/// The machine as writeback sees it: its own state, mm and block below
/// it, and the calls it makes into the filesystems above it.
use crate::block::wbt::WbtClass;

pub trait WritebackHost: BlockHost {
    fn wb(&self) -> &Writeback;
    fn wb_mut(&mut self) -> &mut Writeback;

    /// `MAX_WRITEBACK_PAGES` in pages of the machine's unit: 4 MiB, as
    /// the 4 KiB kernel's 1024 pages ([`crate::mm::unit`]).
    #[inline]
    fn max_writeback_pages(&self) -> i64 {
        self.mm()
            .unit()
            .from_base_pages(pass::MAX_WRITEBACK_PAGES as u64) as i64
    }

    // fs/
    /// The filesystem's `->writepage` for one page of a writeback pass;
    /// false if it redirtied the page instead.
    fn fs_writepage_writeback(&mut self, tid: u32, pfn: Pfn, caller: WritebackCaller) -> bool;
    /// Is `ino` a file of a FUSE filesystem (no block device)?
    fn is_fuse_file(&self, ino: u32) -> bool;
    /// Does the filesystem of `ino` mark the bios of background and
    /// periodic writeback REQ_BACKGROUND (`wbc_to_write_flags`)?
    fn fs_marks_background_writes(&self, ino: u32) -> bool;
    /// Must task `tid` wait (queued by the filesystem, which wakes it)
    /// before it writes back page `index` of `ino`?
    fn fs_writepages_map_waits(&mut self, tid: u32, ino: u32, index: u32) -> bool;
    /// Must task `tid` wait for a request (wbt's `class`, a tag) before
    /// it writes back page `index` of `ino`? Usually that page's own; a
    /// btrfs bio's requests are made when the bio is full.
    fn fs_write_request_must_wait(
        &mut self,
        tid: u32,
        ino: u32,
        index: u32,
        class: WbtClass,
    ) -> bool;
    /// Task `tid`'s `->writepages` call on `ino` is ending: must it wait
    /// for a request of the bio it built (btrfs) before it is over?
    fn fs_writepages_submit_must_wait(&mut self, tid: u32, ino: u32, class: WbtClass) -> bool;
    /// The filesystem's own `nr_to_write` for the `->writepages` call on
    /// `ino` that writes page `index` next (btrfs's delalloc range), if
    /// it sets one.
    fn fs_writepages_nr_to_write(&mut self, ino: u32, index: u32, nr_to_write: i64) -> Option<i64>;
    /// Task `tid`'s `->writepages` call on `ino` is over (the filesystem
    /// submits what it gathered: `ext4_io_submit`, `iomap_submit_ioend`).
    fn fs_writepages_done(&mut self, tid: u32, ino: u32);

    /// wbt's limit for a buffered write to `bdi` outside kswapd
    /// (`get_limit`): the whole depth when a writer of the device paused
    /// in `balance_dirty_pages` within the last second (`wb_recent_wait`),
    /// else a quarter for `background` bios (REQ_BACKGROUND: background
    /// and periodic writeback of a filesystem that marks it, see
    /// `fs_marks_background_writes`), half for the rest.
    fn wbt_class(&self, bdi: usize, background: bool) -> WbtClass {
        let recent = self.wb().bdis[bdi]
            .dirty_sleep_ns
            .is_some_and(|t| self.now() < t + crate::sim::NS_PER_SEC);
        if recent {
            WbtClass::Max
        } else if background {
            WbtClass::Background
        } else {
            WbtClass::Normal
        }
    }
}
