//! The node's reclaim wait queue for writeback (5.16+, `mm/vmscan.c`
//! `reclaim_throttle` with VMSCAN_THROTTLE_WRITEBACK,
//! `__acct_reclaim_writeback`; read in 6.1): reclaimers sleep on it for up
//! to HZ/10, and writeback completions wake them all once more than
//! `SWAP_CLUSTER_MAX` pages per sleeper have been written since the first
//! of them went to sleep. It lives with the node's page counts (mm)
//! because `folio_end_writeback` (writeback) does the counting.

/// `pgdat->reclaim_wait[VMSCAN_THROTTLE_WRITEBACK]`,
/// `nr_writeback_throttled` and `NR_THROTTLED_WRITTEN` since
/// `nr_reclaim_start`.
#[derive(Debug, Clone, Default)]
pub struct ReclaimWait {
    /// Tasks asleep on the queue.
    waiters: Vec<u32>,
    /// Pages whose writeback ended since the first sleeper went to sleep.
    written_since_start: u64,
}

impl ReclaimWait {
    /// Task `tid` goes to sleep on the queue (`reclaim_throttle`).
    pub fn sleep(&mut self, tid: u32) {
        if self.waiters.is_empty() {
            self.written_since_start = 0;
        }
        if !self.waiters.contains(&tid) {
            self.waiters.push(tid);
        }
    }

    /// Task `tid` runs again (woken or timed out): off the queue.
    pub fn finish(&mut self, tid: u32) {
        self.waiters.retain(|&t| t != tid);
    }

    /// A page's writeback ended (`acct_reclaim_writeback`): whether the
    /// sleepers are to be woken now, more than `swap_cluster_max` pages
    /// per sleeper having been written (`SWAP_CLUSTER_MAX` in pages of the
    /// machine's unit). The caller wakes [`Self::waiters`] and then calls
    /// [`Self::clear`].
    pub fn page_written(&mut self, swap_cluster_max: u64) -> bool {
        if self.waiters.is_empty() {
            return false;
        }
        self.written_since_start += 1;
        self.written_since_start > swap_cluster_max * self.waiters.len() as u64
    }

    /// The sleepers.
    pub fn waiters(&self) -> &[u32] {
        &self.waiters
    }

    /// Everyone was woken (`wake_up_all`).
    pub fn clear(&mut self) {
        self.waiters.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sleepers_wake_after_32_pages_each() {
        let mut q = ReclaimWait::default();
        assert!(!q.page_written(32), "nobody asleep, nothing counted");
        q.sleep(7);
        q.sleep(9);
        for _ in 0..64 {
            assert!(!q.page_written(32));
        }
        assert!(
            q.page_written(32),
            "the 65th page is more than 32 per sleeper"
        );
        assert_eq!(q.waiters(), &[7, 9]);
        q.clear();
        q.sleep(9);
        q.finish(9);
        assert!(q.waiters().is_empty());
    }
}
