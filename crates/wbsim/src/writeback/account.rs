//! Page dirty/writeback state changes and their accounting
//! (3.0 `mm/page-writeback.c`: `account_page_dirtied`,
//! `clear_page_dirty_for_io`, `test_set_page_writeback`,
//! `test_clear_page_writeback`, `redirty_page_for_writepage`;
//! `fs/fs-writeback.c: __mark_inode_dirty`).

use crate::block::bio::BioBuilding;
use crate::block::submit::Submit;
use crate::mm::page::{flags, Pfn};
use crate::mm::vmstat::Ev;
use crate::writeback::flusher::Flushers;
use crate::writeback::limits::Limits;
use crate::writeback::WritebackHost;

/// Page-state accounting as pages are dirtied, cleaned and written (`account_page_dirtied`, `test_set_page_writeback`, `end_page_writeback`).
pub trait Account: WritebackHost {
    /// `__mark_inode_dirty(I_DIRTY_PAGES)`: a clean inode goes to the head
    /// of its device's `b_dirty` with `dirtied_when = now`; the first dirty
    /// inode of a device arms the flusher's periodic wake-up. One being
    /// written (I_SYNC) only has its state updated: the writeback that holds
    /// it requeues it (`requeue_io` / `redirty_tail`) when it is done.
    ///
    /// The btrfs btree inode is left off the lists: in 3.0
    /// `btree_writepages` writes nothing for WB_SYNC_NONE until 32 MiB of
    /// metadata are dirty, which the modelled workloads never reach; its
    /// pages are written by the transaction commit.
    #[inline(always)]
    fn mark_inode_dirty(&mut self, ino: u32) {
        let now = self.now();
        let inode = self.mm_mut().inode_mut(ino);
        if inode.mark_dirty_at(now) {
            let bdi = inode.bdi();
            self.queue_dirty_inode(ino, bdi);
        }
    }

    /// The device half of `__mark_inode_dirty`: inode `ino`, just made
    /// dirty, onto the head of `bdi`'s dirty list; the first dirty inode
    /// arms the flusher's periodic wake-up.
    #[inline(always)]
    fn queue_dirty_inode(&mut self, ino: u32, bdi: usize) {
        let had_dirty = self.wb().bdis[bdi].has_dirty_io();
        self.wb_mut().bdis[bdi].b_dirty.push_front(ino);
        if !had_dirty {
            self.flusher_arm_periodic(bdi);
        }
    }

    /// `clear_page_dirty_for_io` + `set_page_writeback`: the page leaves the
    /// dirty counts and enters the writeback counts, both halves reading
    /// the frame, its zone, its inode and its device once (every page
    /// written comes here; see [`clear_dirty_for_io_and`]).
    #[inline(always)]
    fn start_page_writeback(&mut self, pfn: Pfn) {
        clear_dirty_for_io_and(self, pfn, Some(0));
    }

    /// `redirty_page_for_writepage`: the filesystem refused. Up to 3.2
    /// this is a full re-dirtying, so `nr_dirtied` counts the page again;
    /// 3.3+ `account_page_redirty` takes that count back (NR_DIRTIED and
    /// BDI_DIRTIED; the task's own count is not kept for kernel-thread
    /// callers here).
    fn redirty_page_for_writepage(&mut self, pfn: Pfn) {
        let counted = self.set_page_dirty(pfn, None);
        if counted && self.profile().redirty_accounting {
            self.mm_mut().vmstat_mut().dec(Ev::NrDirtied, 1);
            let ino = self.mm().pages()[pfn as usize].inode();
            let bdi = self.mm().inode(ino).bdi();
            self.wb_mut().bdis[bdi].dirtied_pages -= 1;
        }
    }
}

impl<T: WritebackHost + ?Sized> Account for T {}

/// `set_page_dirty` → `account_page_dirtied` → `__mark_inode_dirty`.
/// Returns true if the page was clean. `tid` is the dirtying task (for
/// the per-task dirtying proportion), `None` for kernel threads.
#[inline(always)]
pub fn set_page_dirty<H: WritebackHost + ?Sized>(sys: &mut H, pfn: Pfn, tid: Option<u32>) -> bool {
    let p = sys.mm().pages()[pfn as usize];
    if p.has(flags::DIRTY) {
        return false;
    }
    // set_page_dirty clears PG_reclaim (it shares the bit with readahead).
    sys.mm_mut().pages_mut()[pfn as usize].flags = (p.flags | flags::DIRTY) & !flags::RECLAIM;
    let z = sys.mm().pages().zone_of(pfn);
    sys.mm_mut().zone_mut(z).nr_dirty += 1;
    sys.mm_mut().gauges_mut().nr_dirty += 1;
    sys.mm_mut().vmstat_mut().inc(Ev::NrDirtied, 1);
    let now = sys.now();
    let inode = sys.mm_mut().inode_mut(p.inode());
    inode.set_dirty_tag(p.index());
    let bdi = inode.bdi();
    // `__mark_inode_dirty`, reading the inode once with the tag above.
    let newly_dirty = inode.mark_dirty_at(now);
    sys.wb_mut().bdis[bdi].reclaimable += 1;
    sys.wb_mut().bdis[bdi].dirtied_pages += 1;
    if let Some(t) = tid {
        sys.task_dirty_inc(t);
    }
    if newly_dirty {
        sys.queue_dirty_inode(p.inode(), bdi);
    }
    true
}

/// `clear_page_dirty_for_io`: dirty bit and counts cleared; a page
/// mapped writable is write-protected again (`page_mkclean`), so the
/// next write through the mapping faults and dirties it anew.
#[inline(always)]
pub fn clear_page_dirty_for_io<H: WritebackHost + ?Sized>(sys: &mut H, pfn: Pfn) {
    clear_dirty_for_io_and(sys, pfn, None);
}

/// [`clear_page_dirty_for_io`], and with `writeback` `Some(also)`,
/// `set_page_writeback` as well, setting the flags `also` with
/// PG_writeback (a page written has its blocks: `MAPPED`). The frame,
/// zone, inode and device are each read once for both halves.
#[inline(always)]
fn clear_dirty_for_io_and<H: WritebackHost + ?Sized>(
    sys: &mut H,
    pfn: Pfn,
    writeback: Option<u16>,
) {
    let z = sys.mm().pages().zone_of(pfn);
    let p = &mut sys.mm_mut().pages_mut()[pfn as usize];
    debug_assert!(p.has(flags::DIRTY));
    let set = writeback.map_or(0, |also| flags::WRITEBACK | also);
    p.flags = (p.flags & !(flags::DIRTY | flags::PTE_WRITE)) | set;
    let (ino, index) = (p.inode(), p.index());
    // Anonymous pages are never in the dirty counts.
    let file = !p.has(flags::ANON);
    let under_writeback = u64::from(writeback.is_some());
    let zone = sys.mm_mut().zone_mut(z);
    zone.nr_dirty -= u64::from(file);
    zone.nr_writeback += under_writeback;
    let gauges = sys.mm_mut().gauges_mut();
    gauges.nr_dirty -= u64::from(file);
    gauges.nr_writeback += under_writeback;
    if !file {
        return;
    }
    let inode = sys.mm_mut().inode_mut(ino);
    inode.clear_dirty_tag(index);
    if writeback.is_some() {
        inode.nr_writeback += 1;
        inode.on_disk_pages = inode.on_disk_pages.max(index + 1);
    }
    let bdi = inode.bdi();
    let b = &mut sys.wb_mut().bdis[bdi];
    b.reclaimable -= 1;
    b.writeback += under_writeback;
}

/// Put one page under writeback and hand its bio to the block layer
/// (`test_set_page_writeback`, then `submit_bio`; `pgpgout` counts it
/// as `submit_bio` does). A page being written has its blocks
/// allocated from then on (`MAPPED`).
#[inline(always)]
pub fn submit_page_write<H: WritebackHost + ?Sized>(sys: &mut H, tid: u32, pfn: Pfn) {
    prepare_page_write(sys, pfn);
    submit_prepared_page(sys, tid, pfn);
}

/// Put one page under writeback and add it to the bio task `tid` is
/// building ([`crate::block::bio`]), which is submitted when full or at
/// the end of the `->writepages` call (xfs, ext4, btrfs).
#[inline(always)]
pub fn write_page_into_bio<H: WritebackHost + ?Sized>(sys: &mut H, tid: u32, pfn: Pfn) {
    prepare_page_write(sys, pfn);
    sys.bio_add_page(tid, pfn);
}

/// The first half of [`submit_page_write`]: the page is under writeback
/// and in a bio being built, which is submitted later (a btrfs ioend's,
/// or [`write_page_into_bio`]'s).
#[inline(always)]
pub fn prepare_page_write<H: WritebackHost + ?Sized>(sys: &mut H, pfn: Pfn) {
    clear_dirty_for_io_and(sys, pfn, Some(flags::MAPPED));
}

/// The second half: the page's part of the bio goes to the block layer.
#[inline(always)]
pub fn submit_prepared_page<H: WritebackHost + ?Sized>(sys: &mut H, tid: u32, pfn: Pfn) {
    if sys.submit_page_bio(tid, pfn, false) {
        let kib = sys.mm().unit().kib();
        sys.mm_mut().vmstat_mut().inc(Ev::PgpgOut, kib);
    }
}

/// `end_page_writeback`: counts drop, the device gets a completion
/// event for its proportion, and a PG_reclaim page is rotated.
#[inline(always)]
pub fn end_page_writeback<H: WritebackHost + ?Sized>(sys: &mut H, pfn: Pfn) {
    let p = sys.mm().pages()[pfn as usize];
    debug_assert!(p.has(flags::WRITEBACK));
    sys.mm_mut().pages_mut()[pfn as usize].flags &= !flags::WRITEBACK;
    let z = sys.mm().pages().zone_of(pfn);
    sys.mm_mut().zone_mut(z).nr_writeback -= 1;
    sys.mm_mut().gauges_mut().nr_writeback -= 1;
    sys.mm_mut().vmstat_mut().inc(Ev::NrWritten, 1);
    if !p.has(flags::ANON) {
        // Swap (BDI_CAP_NO_ACCT_AND_WRITEBACK) counts no device
        // writeback and earns no writeback proportion.
        let inode = sys.mm_mut().inode_mut(p.inode());
        inode.nr_writeback -= 1;
        let (bdi, idle) = (inode.bdi(), inode.nr_writeback == 0 && inode.unused);
        if idle {
            // A closed file just written: it may be frozen (`mm::inode_table`).
            sys.mm_mut().note_idle_inode(p.inode());
        }
        let b = &mut sys.wb_mut().bdis[bdi];
        b.writeback -= 1;
        b.written_pages += 1;
        sys.bdi_writeout_inc(bdi);
    }
    if p.has(flags::RECLAIM) {
        sys.mm_mut().pages_mut()[pfn as usize].flags &= !flags::RECLAIM;
        sys.mm_mut().rotate_reclaimable_page(pfn);
    }
    // `acct_reclaim_writeback` (5.16+): wake throttled reclaimers once
    // enough pages were written (no one sleeps there before 5.16).
    let nid = sys.mm().zone_node(z);
    let cluster = sys.mm().swap_cluster_max();
    if sys.mm_mut().reclaim_wait_mut(nid).page_written(cluster) {
        for i in 0..sys.mm().reclaim_wait(nid).waiters().len() {
            let tid = sys.mm().reclaim_wait(nid).waiters()[i];
            sys.wake_task(tid);
        }
        sys.mm_mut().reclaim_wait_mut(nid).clear();
    }
}

#[cfg(test)]
mod tests {
    use crate::mm::filemap::Filemap;
    use crate::mm::vmstat::Ev;
    use crate::mm::MmHost;
    use crate::test_support::usb_stick_files;
    use crate::writeback::account::Account;
    use crate::writeback::WritebackHost;

    /// A page dirtied once, cleaned for IO and refused by the filesystem
    /// (`redirty_page_for_writepage`): 3.2 counts it dirtied twice, 3.3's
    /// `account_page_redirty` once (NR_DIRTIED and the bdi's BDI_DIRTIED).
    #[test]
    fn redirty_counts_the_page_again_until_3_3() {
        for (kernel, dirtied) in [("3.2", 2), ("3.3", 1)] {
            let (mut sys, files) = usb_stick_files(kernel, "ext4", &["a"]);
            let ino = files[0];
            let bdi = sys.mm().inode(ino).bdi();
            let (ev0, bdi0) = (
                sys.mm().vmstat().get(Ev::NrDirtied),
                sys.wb().bdi(bdi).dirtied_pages,
            );
            let pfn = sys
                .find_or_create_page(0, ino, 0, crate::mm::Gfp::movable(true))
                .unwrap();
            assert!(sys.set_page_dirty(pfn, Some(0)));
            sys.clear_page_dirty_for_io(pfn);
            sys.redirty_page_for_writepage(pfn);
            assert_eq!(
                sys.mm().vmstat().get(Ev::NrDirtied) - ev0,
                dirtied,
                "{kernel}"
            );
            assert_eq!(sys.wb().bdi(bdi).dirtied_pages - bdi0, dirtied, "{kernel}");
        }
    }

    /// `__mark_inode_dirty` of an inode being written (I_SYNC) only
    /// updates its dirty state: it stays off `b_dirty`, keeps its
    /// `dirtied_when`, and the writeback that holds it requeues it (3.0
    /// and 6.1 fs/fs-writeback.c); a clean inode goes to `b_dirty`.
    #[test]
    fn redirtying_an_inode_under_writeback_leaves_it_where_it_is() {
        use crate::mm::inode::InodeList;
        let (mut sys, files) = usb_stick_files("6.1", "ext4", &["a"]);
        let ino = files[0];
        let bdi = sys.mm().inode(ino).bdi();
        let inode = sys.mm_mut().inode_mut(ino);
        inode.in_writeback = true;
        inode.dirtied_when = 7;
        sys.mark_inode_dirty(ino);
        assert_eq!(sys.mm().inode(ino).list, InodeList::None);
        assert_eq!(sys.mm().inode(ino).dirtied_when, 7);
        assert!(sys.wb().bdi(bdi).b_dirty.is_empty());
        sys.mm_mut().inode_mut(ino).in_writeback = false;
        sys.mark_inode_dirty(ino);
        assert_eq!(sys.mm().inode(ino).list, InodeList::Dirty);
        assert_eq!(sys.wb().bdi(bdi).b_dirty.front(), Some(&ino));
    }
}
