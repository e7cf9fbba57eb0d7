//! `struct backing_dev_info` (3.0): per-device dirty/writeback counters,
//! the floating-proportion share, the dirty inode lists and the flusher.

use std::collections::VecDeque;

use super::proportions::PropLocal;

#[derive(Debug, Clone)]
pub struct Bdi {
    pub name: String,
    /// Block device index, or `None` for a FUSE connection.
    pub device: Option<usize>,
    /// BDI_RECLAIMABLE: dirty pages of this device.
    pub reclaimable: u64,
    /// BDI_WRITEBACK: pages under writeback.
    pub writeback: u64,
    /// Share of recent writeback completions (`bdi->completions`).
    pub completions: PropLocal,
    pub min_ratio: u32,
    /// FUSE sets 1 (`fuse_bdi_init`).
    pub max_ratio: u32,
    pub dirty_exceeded: bool,
    /// `b_dirty` (head = newest), `b_io`, `b_more_io`; processing takes
    /// from the back (tail) as the kernel does.
    pub b_dirty: VecDeque<u32>,
    pub b_io: VecDeque<u32>,
    pub b_more_io: VecDeque<u32>,
    /// The flusher thread's task id.
    pub flusher: u32,
    /// Pages the flusher was asked to write by reclaim
    /// (`wakeup_flusher_threads`), queued work items.
    pub work: VecDeque<super::flusher::WbWork>,
    /// The flusher is running a writeback pass (`writeback_in_progress`).
    pub writeback_running: bool,
    /// BDI_DIRTIED and BDI_WRITTEN: pages dirtied and written, ever.
    pub dirtied_pages: u64,
    pub written_pages: u64,
    /// IO-less throttling's bandwidth and rate estimates (3.2+).
    pub bandwidth: super::ioless::BdiBandwidth,
    /// `wb->dirty_sleep`: when a writer last paused in
    /// `balance_dirty_pages` (IO-less, 3.2+), for wbt's `wb_recent_wait`.
    pub dirty_sleep_ns: Option<crate::sim::Ns>,
    /// How long before the run began the device was registered
    /// (`wb_init` sets `last_old_flush` then).
    pub registered_before_start_ns: crate::sim::Ns,
}

impl Bdi {
    pub fn new(name: &str, device: Option<usize>) -> Bdi {
        Bdi {
            name: name.to_string(),
            device,
            reclaimable: 0,
            writeback: 0,
            completions: PropLocal::default(),
            min_ratio: 0,
            max_ratio: 100,
            dirty_exceeded: false,
            b_dirty: VecDeque::new(),
            b_io: VecDeque::new(),
            b_more_io: VecDeque::new(),
            flusher: u32::MAX,
            work: VecDeque::new(),
            writeback_running: false,
            dirtied_pages: 0,
            written_pages: 0,
            bandwidth: super::ioless::BdiBandwidth::new(12, 0),
            dirty_sleep_ns: None,
            registered_before_start_ns: 0,
        }
    }

    pub fn has_dirty_io(&self) -> bool {
        !(self.b_dirty.is_empty() && self.b_io.is_empty() && self.b_more_io.is_empty())
    }
}
