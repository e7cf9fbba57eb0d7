//! How many pages of each inode a flusher's writeback pass may write, the
//! dispatch point of the profile's `writeback_chunk` (chosen once, at
//! build, in [`ChunkScheme::from_profile`]):
//!
//! - [`ChunkScheme::Shared`], 2.6.32 – 3.0 (`wb_writeback` →
//!   `writeback_inodes_wb` with `nr_to_write = MAX_WRITEBACK_PAGES`): one
//!   budget of 1024 pages for all the inodes of a pass;
//! - [`ChunkScheme::PerInode`], 3.1+ (`wb_writeback` →
//!   `__writeback_inodes_wb` → `writeback_sb_inodes`): each inode gets
//!   `writeback_chunk_size(wb, work)`, half a second of the device's
//!   estimated bandwidth at most, and the pass ends after HZ/10 or when
//!   the work's `nr_pages` is used up ([`super::pass::SbInodes`]).
//!
//! The model has one superblock per device, so `__writeback_inodes_wb`'s
//! own HZ/10 check (around its per-superblock calls) is the same as
//! `writeback_sb_inodes`'.

use super::ioless::writeback_chunk_size;
use super::pass::{SbInodes, WbPass};
use crate::kernel::{KernelProfile, WritebackChunk};
use crate::sim::Ns;
use crate::writeback::WritebackHost;

/// The pass structure of a kernel profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChunkScheme {
    /// 3.0: `MAX_WRITEBACK_PAGES` shared by the pass's inodes.
    Shared,
    /// 3.1+: a `writeback_chunk_size` chunk per inode, time-limited pass.
    PerInode,
}

impl ChunkScheme {
    pub fn from_profile(profile: &KernelProfile) -> ChunkScheme {
        match profile.writeback_chunk {
            WritebackChunk::Fixed => ChunkScheme::Shared,
            WritebackChunk::Bandwidth => ChunkScheme::PerInode,
        }
    }
}

/// The flusher's writeback passes, as the profile shapes them.
pub trait WritebackChunks: WritebackHost {
    /// A pass of `wb_writeback` over `bdi` for a work item with
    /// `work_nr_pages` pages left, writing inodes dirtied before
    /// `older_than_this` (kupdate) or any (`None`).
    fn flusher_pass(&self, bdi: usize, work_nr_pages: i64, older_than_this: Option<Ns>) -> WbPass {
        match self.wb().chunk {
            ChunkScheme::Shared => WbPass::new(bdi, self.max_writeback_pages(), older_than_this),
            ChunkScheme::PerInode => {
                let start = self.jiffies_at(self.step_now());
                WbPass::per_inode(bdi, SbInodes::new(work_nr_pages, start), older_than_this)
            }
        }
    }

    /// `writeback_chunk_size(wb, work)` for WB_SYNC_NONE work on `bdi`
    /// with `work_nr_pages` left: from the device's `avg_write_bandwidth`
    /// and the smoothed `global_dirty_limit` as they are now.
    fn write_chunk(&self, bdi: usize, work_nr_pages: i64) -> i64 {
        let bw = self.wb().bdis[bdi].bandwidth.avg_write_bandwidth_pps;
        let limit = self.wb().global_dirty_limit.dirty_limit_pages;
        let page_shift = self.mm().unit().shift();
        let pages = writeback_chunk_size(bw, limit, work_nr_pages.max(0) as u64, page_shift);
        pages.min(i64::MAX as u64) as i64
    }

    /// `jiffies` at simulated time `ns`.
    fn jiffies_at(&self, ns: Ns) -> u64 {
        (ns as u128 * self.hz() as u128 / 1_000_000_000) as u64
    }
}

impl<T: WritebackHost + ?Sized> WritebackChunks for T {}

#[cfg(test)]
mod tests {
    use super::{ChunkScheme, WritebackChunks};
    use crate::mm::MmHost;
    use crate::sched::HasCore;
    use crate::test_support::{dirty_file_pages, usb_stick_files};
    use crate::writeback::pass::{PassResult, WbPass, WritebackCaller, WritebackPasses};
    use crate::writeback::WritebackHost;

    /// One flusher pass of `kernel` for a work item of `work_nr_pages` over
    /// files of `sizes` dirty pages (written oldest first: `a`, `b`, ...),
    /// on a device whose estimated bandwidth is 400 MiB/s with a global
    /// dirty limit of 200 000 pages: `writeback_chunk_size` is then
    /// min(51 200, 25 000, `work_nr_pages`) + 1024 rounded down to 1024s.
    /// Each step after the first starts `late_ns` after the pass began.
    /// Returns the pass and each file's dirty pages left.
    fn one_pass(
        kernel: &str,
        sizes: &[u32],
        work_nr_pages: i64,
        late_ns: u64,
    ) -> (WbPass, Vec<u32>) {
        let names = ["a", "b", "c"];
        let (mut sys, files) = usb_stick_files(kernel, "xfs", &names[..sizes.len()]);
        for (&ino, &n) in files.iter().zip(sizes) {
            dirty_file_pages(&mut sys, ino, n);
        }
        let bdi = sys.mm().inode(files[0]).bdi();
        sys.wb_mut().bdis[bdi].bandwidth.avg_write_bandwidth_pps = 102_400;
        sys.wb_mut().global_dirty_limit.dirty_limit_pages = 200_000;
        // The pass alone, not wbt's cap on requests (6.1), sizes what it writes.
        let dev = crate::block::BlockHost::bdi_device(&sys, bdi).expect("a block device");
        crate::block::BlockHost::block_mut(&mut sys)
            .queue_mut(dev)
            .wbt = None;
        assert_eq!(sys.write_chunk(bdi, i64::MAX), 25_600);
        let mut pass = sys.flusher_pass(bdi, work_nr_pages, None);
        // A pass yields every 20 us of CPU with per-task plugs: resume it
        // as the next step would (the requests fit in the queue).
        loop {
            match sys.writeback_pass(0, &mut pass, WritebackCaller::Writeback) {
                PassResult::Done => break,
                PassResult::Yield => {
                    sys.core_mut().begin_step();
                    sys.charge_sys(0, late_ns);
                }
                PassResult::Blocked => panic!("{kernel}: the request queue filled"),
            }
        }
        let left = files.iter().map(|&i| sys.mm().inode(i).nr_dirty).collect();
        (pass, left)
    }

    #[test]
    fn the_bandwidth_chunk_lets_one_inode_take_more_than_1024_pages() {
        let (pass, left) = one_pass("3.10", &[3000], i64::MAX, 0);
        assert!(pass.per_inode.is_none());
        assert_eq!((pass.written, left), (1024, vec![1976]));
        let (pass, left) = one_pass("6.1", &[3000], i64::MAX, 0);
        assert!(pass.per_inode.is_some());
        assert_eq!((pass.written, left), (3000, vec![0]));
        for (kernel, scheme) in [
            ("3.10", ChunkScheme::Shared),
            ("6.1", ChunkScheme::PerInode),
        ] {
            let (sys, _) = usb_stick_files(kernel, "xfs", &["a"]);
            assert_eq!(sys.wb().chunk, scheme, "{kernel}");
        }
    }

    /// `writeback_sb_inodes`: what each inode's walk used comes off
    /// `work->nr_pages`, which sizes the next chunk and ends the pass.
    #[test]
    fn the_work_budget_sizes_the_next_chunk_and_ends_the_pass() {
        // a: chunk 1500 + 1024 -> 2048, all 1200 written; 300 left.
        // b: chunk 300 + 1024 -> 1024 of its 1200; -724 left: done.
        let (pass, left) = one_pass("6.1", &[1200, 1200, 100], 1500, 0);
        let sb = pass.per_inode.unwrap();
        assert_eq!((pass.written, sb.work_nr_pages), (2224, -724));
        assert_eq!(sb.wrote, 2224 + 1); // a was cleaned
        assert_eq!(left, vec![0, 176, 100]);
    }

    /// `writeback_sb_inodes` bails out once it wrote something and HZ/10
    /// has passed since it began.
    #[test]
    fn the_pass_ends_after_hz_over_10() {
        let (pass, left) = one_pass("6.1", &[1200, 1200], i64::MAX, 0);
        assert_eq!((pass.written, left), (2400, vec![0, 0]));
        let (pass, left) = one_pass("6.1", &[1200, 1200], i64::MAX, 150_000_000);
        assert_eq!((pass.written, left), (1200, vec![0, 1200]));
    }
}
