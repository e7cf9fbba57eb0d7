//! `mapwrite`: a streaming write through a shared file mapping (seed 004's
//! "micro" test). Each page is dirtied by a write fault, 3.0 `__do_fault`:
//! `filemap_fault` finds or allocates the page-cache page (a hole of a new
//! file reads as zeroes without IO), `->page_mkwrite` reserves the blocks,
//! the PTE is made young and dirty, `set_page_dirty_balance` dirties the
//! page and calls `balance_dirty_pages_ratelimited`. `munmap` at the end
//! (`zap_pte_range`) passes each young PTE on as `mark_page_accessed`.

use crate::fs::space::SpaceReservation;
use crate::mm::filemap::Filemap;
use crate::mm::page::{flags, NIL};
use crate::sched::Step;
use crate::workload::enospc::Enospc;
use crate::workload::Process;
use crate::workload::WorkloadHost;
use crate::writeback::sync::Fsync;
use crate::writeback::throttle::balance_dirty_pages;

#[derive(Debug)]
pub struct MapWriteState {
    pub inode: u32,
    pub bdi: usize,
    pub size_pages: u32,
    /// Next page to write.
    pub next: u32,
    /// `munmap` has zapped the PTEs; on FUSE, `fuse_vma_close` writes the
    /// file back from `close_cursor`.
    pub unmapped: bool,
    pub close_cursor: u32,
}

/// User time to fill one page of the mapping (4 KiB at ~4 GB/s).
const USER_NS_PER_PAGE: u64 = 1_000;

/// A process writing through a shared file mapping.
pub trait MapWriter: WorkloadHost {
    fn mapwrite_state(&mut self, tid: u32) -> &mut MapWriteState {
        match self.workload_mut().process_mut(tid) {
            Process::MapWrite(m) => m,
            _ => unreachable!("task {tid} is not mapwrite"),
        }
    }

    /// mapwrite's steps that the engine runs back to back, in one call
    /// (`HasCore::steps_in_place`).
    #[inline(never)]
    fn mapwrite_step(&mut self, tid: u32) -> Step {
        self.steps_in_place(tid, |s| s.mapwrite_one_step(tid))
    }

    /// One page of the mapping written (one write fault).
    #[inline(always)]
    fn mapwrite_one_step(&mut self, tid: u32) -> Step {
        if let Some(step) = balance_dirty_pages(self, tid) {
            return step;
        }
        let m = self.mapwrite_state(tid);
        let (ino, bdi, idx) = (m.inode, m.bdi, m.next);
        if idx == m.size_pages {
            if !m.unmapped {
                m.unmapped = true;
                self.munmap_file(tid, ino);
            }
            if self.is_fuse_file(ino) {
                // fuse_vma_close: filemap_write_and_wait.
                let mut cursor = self.mapwrite_state(tid).close_cursor;
                let step = self.filemap_write_and_wait(tid, ino, &mut cursor);
                self.mapwrite_state(tid).close_cursor = cursor;
                if let Some(step) = step {
                    return step;
                }
            }
            return Step::Exit;
        }
        // ->page_mkwrite reserves the block; a full filesystem: SIGBUS.
        if !self.write_begin_reserve(ino, idx) {
            return self.fault_sigbus(tid);
        }
        // A new file's page is a hole: filemap_fault allocates it (no
        // __GFP_WRITE) without IO.
        if let Err(step) = self.shared_mapping_fault(tid, ino, bdi, idx, true) {
            return step;
        }
        self.charge_user(tid, USER_NS_PER_PAGE);
        self.mapwrite_state(tid).next += 1;
        Step::Continue
    }

    /// `munmap` → `zap_pte_range`: drop every PTE; a young one marks the
    /// page accessed.
    fn munmap_file(&mut self, tid: u32, ino: u32) {
        let size = self.mm().inode(ino).size_pages;
        for idx in 0..size {
            let pfn = self.mm().inode(ino).page(idx);
            if pfn == NIL || !self.mm().pages()[pfn as usize].has(flags::PTE_MAPPED) {
                continue;
            }
            let young = self.mm().pages()[pfn as usize].has(flags::PTE_YOUNG);
            self.mm_mut().pages_mut()[pfn as usize].flags &=
                !(flags::PTE_MAPPED | flags::PTE_YOUNG | flags::PTE_WRITE);
            if young {
                self.mark_page_accessed_by(tid, pfn);
            }
            self.charge_sys(tid, self.cost().scan_page_ns);
        }
    }
}

impl<T: WorkloadHost + ?Sized> MapWriter for T {}
