//! CPU cost of kernel operations, so that user time, system time and the
//! time kswapd is awake are outputs of the run rather than guesses.
//!
//! Every number is an input. They are order-of-magnitude figures for a
//! 2011-era x86-64 desktop (2–3 GHz, DDR3): memcpy at ~4 GB/s, a page
//! allocation through the buddy per-cpu lists in ~0.2 µs, a system call round
//! trip in ~0.3 µs, an IO request submission through the SCSI/USB stack in a
//! few µs. None is fitted to a published result.

use serde::Serialize;

use super::Ns;

#[derive(Debug, Clone, Serialize)]
pub struct CostTable {
    /// User-space work of one dd read+write loop iteration (dd's own code).
    pub dd_user_per_call_ns: Ns,
    /// Kernel entry/exit of one system call.
    pub syscall_ns: Ns,
    /// Copying one KiB between user and kernel (copy_from_user / clear_user),
    /// ~4 GB/s.
    pub copy_per_kib_ns: Ns,
    /// Allocating one page from the buddy allocator (fast path).
    pub page_alloc_ns: Ns,
    /// Freeing one page (including removal from the page cache).
    pub page_free_ns: Ns,
    /// Adding one page to the page cache radix tree and an LRU pagevec.
    pub page_cache_add_ns: Ns,
    /// Reclaim looking at one page (isolation plus shrink_page_list checks).
    pub scan_page_ns: Ns,
    /// `isolate_lru_folios` (4.8+ node LRU) moving one page of a zone above
    /// the reclaim's `reclaim_idx` to its skip list: a list move and a
    /// counter, none of the page-state checks. 9 ns: a traced 1-vCPU 6.1
    /// guest under TCG walked 41,577 such pages in at most 4.4 ms (from
    /// `mm_vmscan_kswapd_wake` to the `mm_vmscan_lru_shrink_inactive` that
    /// counted them), at most 106 ns each, over the 12 the lab scenarios
    /// multiply every built-in cost by for that guest.
    pub lru_skip_page_ns: Ns,
    /// Writeback walking one dirty page (write_cache_pages, ->writepage, bio add).
    pub writeback_page_ns: Ns,
    /// Building and submitting one block request.
    pub request_submit_ns: Ns,
    /// Completing one request (interrupt, end_page_writeback per page is
    /// charged with `writeback_page_ns`).
    pub request_complete_ns: Ns,
    /// A context switch to or from a FUSE daemon, per request.
    pub fuse_request_ns: Ns,
    /// A page fault: exception entry/exit, page-table walk, PTE update.
    pub page_fault_ns: Ns,
    /// fs_mark's work between files outside its timed calls: the `mkdir`
    /// of the target directory (EEXIST), building a 40-character name with
    /// `random()`, two `gettimeofday` calls per timed call (fs_mark 3.3
    /// `setup_file_name`).
    pub fsmark_app_per_file_ns: Ns,
    /// Creating a file (`open(O_CREAT|O_TRUNC)` of a new name: path lookup,
    /// inode allocation and directory insert, log item).
    pub file_create_ns: Ns,
    /// Evicting one unused inode from the inode cache (`prune_icache`).
    pub inode_evict_ns: Ns,
    /// Handing one request to the device driver (`__blk_run_queue` →
    /// `request_fn`: elevator dispatch, SCSI/virtio command set-up and the
    /// doorbell), charged to the task that runs the queue.
    pub request_dispatch_ns: Ns,
}

impl Default for CostTable {
    fn default() -> Self {
        CostTable {
            dd_user_per_call_ns: 400,
            syscall_ns: 300,
            copy_per_kib_ns: 250,
            page_alloc_ns: 200,
            page_free_ns: 150,
            page_cache_add_ns: 150,
            scan_page_ns: 120,
            lru_skip_page_ns: 9,
            writeback_page_ns: 250,
            request_submit_ns: 3_000,
            request_complete_ns: 4_000,
            fuse_request_ns: 5_000,
            page_fault_ns: 1_000,
            fsmark_app_per_file_ns: 20_000,
            file_create_ns: 30_000,
            inode_evict_ns: 2_000,
            request_dispatch_ns: 0,
        }
    }
}

/// The names a scenario's `[cpu_cost]` table may set, in field order.
pub const COST_NAMES: &[&str] = &[
    "dd_user_per_call_ns",
    "syscall_ns",
    "copy_per_kib_ns",
    "page_alloc_ns",
    "page_free_ns",
    "page_cache_add_ns",
    "scan_page_ns",
    "lru_skip_page_ns",
    "writeback_page_ns",
    "request_submit_ns",
    "request_complete_ns",
    "fuse_request_ns",
    "page_fault_ns",
    "fsmark_app_per_file_ns",
    "file_create_ns",
    "inode_evict_ns",
    "request_dispatch_ns",
];

impl CostTable {
    /// Charge each per-page cost once for every 4 KiB page of a simulated
    /// page of `base_pages` of them (`[machine] unit_kib`): a coarse unit
    /// stands for that many pages of a 4 KiB kernel, and does their work.
    /// Per-call and per-request costs stay as they are; copying is charged
    /// by the byte already.
    pub fn scale_per_page(&mut self, base_pages: u64) {
        for ns in [
            &mut self.page_alloc_ns,
            &mut self.page_free_ns,
            &mut self.page_cache_add_ns,
            &mut self.scan_page_ns,
            &mut self.lru_skip_page_ns,
            &mut self.writeback_page_ns,
            &mut self.page_fault_ns,
        ] {
            *ns *= base_pages;
        }
    }

    /// The cost named `name` (one of [`COST_NAMES`]).
    pub fn field_mut(&mut self, name: &str) -> Option<&mut Ns> {
        Some(match name {
            "dd_user_per_call_ns" => &mut self.dd_user_per_call_ns,
            "syscall_ns" => &mut self.syscall_ns,
            "copy_per_kib_ns" => &mut self.copy_per_kib_ns,
            "page_alloc_ns" => &mut self.page_alloc_ns,
            "page_free_ns" => &mut self.page_free_ns,
            "page_cache_add_ns" => &mut self.page_cache_add_ns,
            "scan_page_ns" => &mut self.scan_page_ns,
            "lru_skip_page_ns" => &mut self.lru_skip_page_ns,
            "writeback_page_ns" => &mut self.writeback_page_ns,
            "request_submit_ns" => &mut self.request_submit_ns,
            "request_complete_ns" => &mut self.request_complete_ns,
            "fuse_request_ns" => &mut self.fuse_request_ns,
            "page_fault_ns" => &mut self.page_fault_ns,
            "fsmark_app_per_file_ns" => &mut self.fsmark_app_per_file_ns,
            "file_create_ns" => &mut self.file_create_ns,
            "inode_evict_ns" => &mut self.inode_evict_ns,
            "request_dispatch_ns" => &mut self.request_dispatch_ns,
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_cost_name_sets_a_field() {
        let mut c = CostTable::default();
        for (i, name) in COST_NAMES.iter().enumerate() {
            *c.field_mut(name).unwrap() = 1_000_000 + i as Ns;
        }
        let json = serde_json::to_value(&c).unwrap();
        for (i, name) in COST_NAMES.iter().enumerate() {
            assert_eq!(json[name], 1_000_000 + i as u64, "{name}");
        }
        assert_eq!(json.as_object().unwrap().len(), COST_NAMES.len());
        assert!(c.field_mut("nope").is_none());
    }

    #[test]
    fn a_coarse_unit_pays_per_page_costs_for_each_4_kib_page() {
        let mut c = CostTable::default();
        c.scale_per_page(16);
        let base = CostTable::default();
        assert_eq!(c.page_alloc_ns, 16 * base.page_alloc_ns);
        assert_eq!(c.writeback_page_ns, 16 * base.writeback_page_ns);
        assert_eq!(c.scan_page_ns, 16 * base.scan_page_ns);
        assert_eq!(c.syscall_ns, base.syscall_ns);
        assert_eq!(c.request_submit_ns, base.request_submit_ns);
        assert_eq!(c.copy_per_kib_ns, base.copy_per_kib_ns);
    }
}
