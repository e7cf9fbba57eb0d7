//! jbd2's commit of a data=ordered transaction (ext4), as
//! `jbd2_journal_commit_transaction` runs it in 3.x (read in 3.2.4
//! fs/jbd2/commit.c, fs/ext4/inode.c and mm/filemap.c):
//!
//! 1. `journal_submit_data_buffers`: for every inode filed on the
//!    transaction (`ext4_jbd2_file_inode`, called by
//!    `mpage_da_map_and_submit` when writeback allocates blocks),
//!    `journal_submit_inode_data_buffers` → `generic_writepages` with
//!    WB_SYNC_ALL over 0..`i_size`. `write_cache_pages` tags the dirty
//!    pages TOWRITE first, so only pages dirty when the commit starts are
//!    visited; `ext4_writepage` refuses each page that still has delayed
//!    allocation buffers (`redirty_page_for_writepage`) and writes the ones
//!    whose blocks are allocated. Up to 3.2 each refusal counts the page as
//!    dirtied again (NR_DIRTIED, BDI_DIRTIED); 3.3's `account_page_redirty`
//!    takes that back (`writeback/account.rs`).
//! 2. `journal_finish_inode_data_buffers` → `filemap_fdatawait` over
//!    0..`i_size`: wait, in index order, on every page under writeback.
//!    While the flusher keeps writing the file, the waiter follows the
//!    disk's completions and ends only when the pages dirty at the start of
//!    the commit are all on disk: a streaming writer sees a commit (and its
//!    redirty walk) every "dirty pages / disk bandwidth" seconds, not every
//!    commit interval.
//! 3. The commit block; the next transaction commits when its timer
//!    (`j_commit_interval` after the previous commit began) has run out, at
//!    once if it already has.
//!
//! The model polls the page it waits on every `FDATAWAIT_POLL_NS` instead
//! of sleeping on the page's wait queue: a commit ends at most that much
//! later than the kernel's would.
//!
//! 6.1 (profile keys `fs.ext4_io_end_pages`, `fs.jbd2_shadow_wait`; read
//! in 6.1 fs/ext4/inode.c `ext4_map_blocks`, fs/jbd2/commit.c and
//! fs/jbd2/transaction.c): with dioread_nolock, writeback allocates
//! unwritten extents and files no inode for ordered data, so steps 1 and 2
//! are empty; the commit writes its metadata to the log and waits for that
//! write, and meanwhile those buffers are shadowed: a writer that marks its
//! inode dirty (`mark_inode_dirty` of a growing file, each page) waits in
//! `do_get_write_access` until the log write is done.

use super::daemon::FsDaemons;
use crate::block::submit::Submit;
use crate::fs::FsHost;
use crate::mm::page::{flags, NIL};
use crate::sched::Step;
use crate::sim::{Ns, NS_PER_SEC};
use crate::writeback::pass::{PassResult, WritebackPasses};

/// How often a commit waiting in `filemap_fdatawait` looks again.
pub const FDATAWAIT_POLL_NS: Ns = 10_000_000;

/// Where a commit is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommitPhase {
    /// `journal_submit_data_buffers` at page `index` of inode number `inode`
    /// (an index into `Jbd2Commit::inodes`).
    Submit { inode: usize, index: u32 },
    /// `filemap_fdatawait` at page `index` of inode number `inode`.
    Wait { inode: usize, index: u32 },
    /// The log write is in flight; its buffers are shadowed.
    Log,
}

/// A commit in progress.
#[derive(Debug, Clone)]
pub struct Jbd2Commit {
    /// The inodes filed on the transaction, each with its size in pages
    /// when the commit began (the `i_size` both walks stop at).
    pub inodes: Vec<(u32, u32)>,
    pub phase: CommitPhase,
}

/// When jbd2's commit timer fires for a transaction due at `expires_ns`:
/// `round_jiffies_up(t_expires)`, the next whole second (6.1 and 3.x
/// `jbd2_get_transaction`; the model's jiffies count from 0).
pub fn commit_timer_ns(expires_ns: Ns) -> Ns {
    expires_ns.div_ceil(NS_PER_SEC) * NS_PER_SEC
}

/// jbd2's commit loop (`kjournald2`).
pub trait Jbd2: FsHost {
    /// One step of the jbd2 thread: start a commit when none runs, else
    /// carry the running one on.
    fn jbd2_step(&mut self, tid: u32) -> Step {
        let fs = self.fs_mut().daemon_mut(tid).fs;
        if self.fs_mut().daemon_mut(tid).commit.is_none() {
            if let Some(step) = self.transaction_not_due(fs) {
                return step;
            }
            if let Some(step) = self.update_journal_superblock(tid, fs) {
                return step;
            }
            // The running transaction becomes the committing one; the
            // next handle starts a new one.
            let md = &mut self.fs_mut().filesystems[fs].metadata;
            md.transaction_expires_ns = None;
            md.commit_requested = false;
            let ordered =
                std::mem::take(&mut self.fs_mut().filesystems[fs].metadata.ordered_inodes);
            // Unwritten extents need no ordered data (dioread_nolock).
            let inodes: Vec<(u32, u32)> = if self.profile().ext4_io_end_pages > 0 {
                Vec::new()
            } else {
                ordered
                    .into_iter()
                    .map(|ino| {
                        // A closed file may have been frozen since it was
                        // written (`mm::inode_table`).
                        self.mm_mut().thaw_inode(ino);
                        (ino, self.mm().inode(ino).size_pages)
                    })
                    .collect()
            };
            let commit = Jbd2Commit {
                inodes,
                phase: CommitPhase::Submit { inode: 0, index: 0 },
            };
            self.fs_mut().daemon_mut(tid).commit = Some(commit);
        }
        loop {
            // What this turn needs of the commit, read without copying its
            // inode list.
            let commit = self
                .fs_mut()
                .daemon_mut(tid)
                .commit
                .as_ref()
                .expect("commit");
            let phase = commit.phase;
            let entry = match phase {
                CommitPhase::Submit { inode, .. } | CommitPhase::Wait { inode, .. } => {
                    commit.inodes.get(inode).copied()
                }
                CommitPhase::Log => None,
            };
            match phase {
                CommitPhase::Log => {
                    if self.fs().filesystems[fs].metadata.log_shadowed {
                        return Step::Wait(None);
                    }
                    return self.commit_done(tid);
                }
                CommitPhase::Submit { inode, index } => {
                    let Some((ino, end)) = entry else {
                        self.set_commit_phase(tid, CommitPhase::Wait { inode: 0, index: 0 });
                        continue;
                    };
                    self.mm_mut().thaw_inode(ino);
                    let (result, next) = self.write_inode_for_journal(tid, ino, index, end);
                    match result {
                        PassResult::Done => self.set_commit_phase(
                            tid,
                            CommitPhase::Submit {
                                inode: inode + 1,
                                index: 0,
                            },
                        ),
                        _ => {
                            self.set_commit_phase(tid, CommitPhase::Submit { inode, index: next });
                            return Step::Continue;
                        }
                    }
                }
                CommitPhase::Wait { inode, index } => {
                    let Some((ino, end)) = entry else {
                        return self.finish_commit(tid, fs);
                    };
                    self.mm_mut().thaw_inode(ino);
                    match self.next_page_under_writeback(ino, index, end) {
                        None => self.set_commit_phase(
                            tid,
                            CommitPhase::Wait {
                                inode: inode + 1,
                                index: 0,
                            },
                        ),
                        Some(at) => {
                            self.set_commit_phase(tid, CommitPhase::Wait { inode, index: at });
                            return Step::SleepUntil(self.now() + FDATAWAIT_POLL_NS);
                        }
                    }
                }
            }
        }
    }

    /// The first commit after mounting a journal that was empty records
    /// the log's tail in the journal superblock before it locks the
    /// running transaction (`jbd2_journal_commit_transaction` under
    /// JBD2_FLUSHED → `jbd2_journal_update_sb_log_tail`, a one-block
    /// REQ_SYNC write it waits for; read in 6.1 fs/jbd2/commit.c and
    /// journal.c, 3.x's `jbd2_journal_update_superblock(journal, 1)`
    /// does the same). Writers go on meanwhile; behind a throttled disk's
    /// queue the write takes seconds (a traced 6.1 guest: jbd2 asleep from
    /// 7.48 to 11.25 s, dd started at 2.35 s), and every later commit
    /// comes that much later. Some(step) while the write is to be made or
    /// in flight.
    fn update_journal_superblock(&mut self, tid: u32, fs: usize) -> Option<Step> {
        let md = &self.fs().filesystems[fs].metadata;
        if md.journal_sb_in_flight {
            return Some(Step::Wait(None));
        }
        if !md.journal_flushed {
            return None;
        }
        let dev = self.fs().filesystems[fs].device;
        if self.sync_write_must_wait(tid, dev) {
            return Some(Step::Wait(None));
        }
        let seg = crate::block::Segment::journal_commit(fs);
        if !self.log_write_as(tid, fs, dev, 1, seg) {
            return None;
        }
        let md = &mut self.fs_mut().filesystems[fs].metadata;
        md.journal_flushed = false;
        md.journal_sb_in_flight = true;
        self.kick_device(dev);
        Some(Step::Wait(None))
    }

    fn set_commit_phase(&mut self, tid: u32, phase: CommitPhase) {
        if let Some(c) = self.fs_mut().daemon_mut(tid).commit.as_mut() {
            c.phase = phase;
        }
    }

    /// `pagevec_lookup_tag(PAGECACHE_TAG_WRITEBACK)` from `from` below `end`.
    fn next_page_under_writeback(&self, ino: u32, from: u32, end: u32) -> Option<u32> {
        let inode = self.mm().inode(ino);
        if inode.nr_writeback == 0 {
            return None;
        }
        (from..end).find(|&idx| {
            let pfn = inode.page(idx);
            pfn != NIL && self.mm().pages()[pfn as usize].has(flags::WRITEBACK)
        })
    }

    /// Descriptor, metadata and commit blocks; with `jbd2_shadow_wait`,
    /// wait for them with the metadata shadowed; then sleep until the next
    /// transaction's timer runs out.
    fn finish_commit(&mut self, tid: u32, fs: usize) -> Step {
        let dev = self.fs().filesystems[fs].device;
        if self.sync_write_must_wait(tid, dev) {
            return Step::Wait(None);
        }
        let shadow = self.profile().jbd2_shadow_wait;
        let seg = match shadow {
            true => crate::block::Segment::journal_commit(fs),
            false => crate::block::Segment::RAW,
        };
        let shadowed = self.log_write_as(tid, fs, dev, 4, seg) && shadow;
        if shadowed {
            self.fs_mut().filesystems[fs].metadata.log_shadowed = true;
            self.set_commit_phase(tid, CommitPhase::Log);
        }
        self.kick_device(dev);
        if shadowed {
            return Step::Wait(None);
        }
        self.commit_done(tid)
    }

    /// The commit is over: sleep until the running transaction (if any)
    /// is due.
    fn commit_done(&mut self, tid: u32) -> Step {
        let d = self.fs_mut().daemon_mut(tid);
        d.commit = None;
        let fs = d.fs;
        self.transaction_not_due(fs).unwrap_or(Step::Continue)
    }

    /// kjournald2 with no commit in progress: None if the running
    /// transaction is due (its `t_expires` has passed, or a handle asked),
    /// else the sleep until its commit timer (`commit_timer_ns`), or no
    /// timer when there is no transaction.
    fn transaction_not_due(&self, fs: usize) -> Option<Step> {
        let md = &self.fs().filesystems[fs].metadata;
        match md.transaction_expires_ns {
            None => Some(Step::Wait(None)),
            Some(t) if self.now() < t && !md.commit_requested => {
                Some(Step::Wait(Some(commit_timer_ns(t))))
            }
            Some(_) => None,
        }
    }

    /// A handle on filesystem `fs`'s journal starts
    /// (`jbd2__journal_start`): the first one after a commit began starts
    /// the next transaction, due for commit `interval` later (`t_expires`),
    /// and arms jbd2's timer. Writers (`ext4_dirty_inode`, each page of a
    /// growing file), the flusher (each extent it maps) and the io_end
    /// worker start handles (6.1 and 3.x fs/jbd2/transaction.c).
    #[inline(always)]
    fn jbd2_handle_start(&mut self, fs: usize) {
        let Some(jbd2) = self.fs().jbd2_task(fs) else {
            return;
        };
        if self.fs().filesystems[fs]
            .metadata
            .transaction_expires_ns
            .is_some()
        {
            return;
        }
        let expires = self.now() + self.fs_mut().daemon_mut(jbd2).interval_ns;
        self.fs_mut().filesystems[fs]
            .metadata
            .transaction_expires_ns = Some(expires);
        if self.fs_mut().daemon_mut(jbd2).commit.is_none() {
            let token = self.task(jbd2).token;
            let run = crate::sim::EventKind::RunTask { task: jbd2, token };
            self.push_event(commit_timer_ns(expires), run);
        }
    }

    /// A handle stops (`jbd2_journal_stop`): if its transaction is due,
    /// ask for the commit at once (`jbd2_log_start_commit`), so while
    /// handles come and go a commit starts when its transaction is due,
    /// not at the timer.
    #[inline(always)]
    fn jbd2_handle_stop(&mut self, fs: usize) {
        let Some(jbd2) = self.fs().jbd2_task(fs) else {
            return;
        };
        let now = self.now();
        let md = &mut self.fs_mut().filesystems[fs].metadata;
        match md.transaction_expires_ns {
            Some(t) if now >= t && !md.commit_requested => {
                md.commit_requested = true;
                if self.fs_mut().daemon_mut(jbd2).commit.is_none() {
                    self.wake_task(jbd2);
                }
            }
            _ => {}
        }
    }

    /// Filesystem `fs`'s journal superblock or commit write is on disk:
    /// wake the committing thread, and after a commit write, the tasks
    /// waiting for its buffers, no longer shadowed.
    fn jbd2_commit_written(&mut self, fs: usize) {
        let md = &mut self.fs_mut().filesystems[fs].metadata;
        if std::mem::take(&mut md.journal_sb_in_flight) {
            if let Some(jbd2) = self.fs().jbd2_task(fs) {
                self.wake_task(jbd2);
            }
            return;
        }
        if !std::mem::take(&mut md.log_shadowed) {
            return;
        }
        for i in 0..md.shadow_waiters.len() {
            let t = self.fs().filesystems[fs].metadata.shadow_waiters[i];
            self.wake_task(t);
        }
        self.fs_mut().filesystems[fs]
            .metadata
            .shadow_waiters
            .clear();
        if let Some(jbd2) = self.fs().jbd2_task(fs) {
            self.wake_task(jbd2);
        }
    }

    /// `mark_inode_dirty` of ext4 file `ino` by task `tid`: true if it must
    /// wait for the commit's log write (`do_get_write_access` on a shadowed
    /// inode table block); the task is then queued and sleeps.
    #[inline(always)]
    fn jbd2_inode_update_waits(&mut self, tid: u32, ino: u32) -> bool {
        if !self.fs().any_jbd2() {
            return false;
        }
        let fs = self.mm().inode(ino).fs();
        self.jbd2_short_handle_waits(tid, fs)
    }

    /// A short handle of task `tid` on filesystem `fs` that updates shared
    /// metadata (a writer's `ext4_dirty_inode`, the io_end worker's
    /// conversion): it starts, waits if the metadata is shadowed (true: the
    /// task sleeps and retries the whole handle), else stops at once.
    #[inline(always)]
    fn jbd2_short_handle_waits(&mut self, tid: u32, fs: usize) -> bool {
        // Without a journal thread there are no handles, and nothing is
        // ever shadowed (only a commit's log write shadows metadata).
        if self.fs().jbd2_task(fs).is_none() {
            return false;
        }
        self.jbd2_handle_start(fs);
        if self.jbd2_metadata_update_waits(tid, fs) {
            return true;
        }
        self.jbd2_handle_stop(fs);
        false
    }

    /// Task `tid` is about to change metadata of filesystem `fs` that every
    /// transaction of a streaming write touches (the file's inode table
    /// block, the block bitmap and group descriptor of its allocations):
    /// true if it must wait for the commit's log write, in
    /// `do_get_write_access` on a buffer under BH_Shadow; the task is then
    /// queued and sleeps until `jbd2_commit_written`. Writers
    /// (`mark_inode_dirty`), the flusher mapping an extent
    /// (`ext4_map_blocks` → `ext4_mb_new_blocks`) and the io_end worker
    /// converting one (`ext4_convert_unwritten_io_end_vec` →
    /// `ext4_mark_inode_dirty`) all wait there (6.1 fs/jbd2/transaction.c,
    /// fs/ext4/mballoc.c, fs/ext4/extents.c).
    #[inline(always)]
    fn jbd2_metadata_update_waits(&mut self, tid: u32, fs: usize) -> bool {
        if !self.profile().jbd2_shadow_wait {
            return false;
        }
        let md = &mut self.fs_mut().filesystems[fs].metadata;
        if !md.log_shadowed {
            return false;
        }
        if !md.shadow_waiters.contains(&tid) {
            md.shadow_waiters.push(tid);
        }
        true
    }
}

impl<T: FsHost + ?Sized> Jbd2 for T {}

#[cfg(test)]
mod tests;
