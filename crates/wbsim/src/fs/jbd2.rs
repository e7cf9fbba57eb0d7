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
use crate::fs::FsHost;
use crate::mm::page::{flags, NIL};
use crate::sched::Step;
use crate::sim::Ns;
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
    pub started_ns: Ns,
    /// The inodes filed on the transaction, each with its size in pages
    /// when the commit began (the `i_size` both walks stop at).
    pub inodes: Vec<(u32, u32)>,
    pub phase: CommitPhase,
}

/// jbd2's commit loop (`kjournald2`).
pub trait Jbd2: FsHost {
    /// One step of the jbd2 thread: start a commit when none runs, else
    /// carry the running one on.
    fn jbd2_step(&mut self, tid: u32) -> Step {
        let fs = self.fs_mut().daemon_mut(tid).fs;
        if self.fs_mut().daemon_mut(tid).commit.is_none() {
            let ordered =
                std::mem::take(&mut self.fs_mut().filesystems[fs].metadata.ordered_inodes);
            // Unwritten extents need no ordered data (dioread_nolock).
            let inodes: Vec<(u32, u32)> = if self.profile().ext4_io_end_pages > 0 {
                Vec::new()
            } else {
                ordered
                    .into_iter()
                    .map(|ino| (ino, self.mm().inode(ino).size_pages))
                    .collect()
            };
            let commit = Jbd2Commit {
                started_ns: self.now(),
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
            let (phase, started_ns) = (commit.phase, commit.started_ns);
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
                    return self.commit_done(tid, started_ns);
                }
                CommitPhase::Submit { inode, index } => {
                    let Some((ino, end)) = entry else {
                        self.set_commit_phase(tid, CommitPhase::Wait { inode: 0, index: 0 });
                        continue;
                    };
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
                        return self.finish_commit(tid, fs, started_ns);
                    };
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
    fn finish_commit(&mut self, tid: u32, fs: usize, started_ns: Ns) -> Step {
        let dev = self.fs().filesystems[fs].device;
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
        self.commit_done(tid, started_ns)
    }

    /// The commit is over: sleep until the next transaction's timer runs
    /// out.
    fn commit_done(&mut self, tid: u32, started_ns: Ns) -> Step {
        let d = self.fs_mut().daemon_mut(tid);
        d.commit = None;
        let next = started_ns + d.interval_ns;
        if next > self.now() {
            Step::SleepUntil(next)
        } else {
            Step::Continue
        }
    }

    /// Filesystem `fs`'s commit write is on disk: its buffers are no
    /// longer shadowed; wake their waiters and the committing thread.
    fn jbd2_commit_written(&mut self, fs: usize) {
        let md = &mut self.fs_mut().filesystems[fs].metadata;
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
    fn jbd2_inode_update_waits(&mut self, tid: u32, ino: u32) -> bool {
        if !self.profile().jbd2_shadow_wait {
            return false;
        }
        let fs = self.mm().inode(ino).fs;
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
mod tests {
    use super::*;
    use crate::mm::filemap::Filemap;
    use crate::mm::vmstat::Ev;
    use crate::mm::MmHost;
    use crate::sched::HasCore;
    use crate::test_support::usb_stick_files;
    use crate::writeback::account::{end_page_writeback, submit_page_write};

    /// An ext4 file of 8 dirty pages, 0..4 already written by the flusher
    /// (under writeback), filed on the running transaction; jbd2's tid.
    fn file_on_a_transaction(kernel: &str) -> (crate::system::System, u32, Vec<u32>, u32) {
        let (mut sys, files) = usb_stick_files(kernel, "ext4", &["a"]);
        let ino = files[0];
        let pfns = crate::test_support::dirty_file_pages(&mut sys, ino, 8);
        for &pfn in &pfns[..4] {
            submit_page_write(&mut sys, 0, pfn);
        }
        let fs = sys.mm().inode(ino).fs;
        sys.fs_mut().filesystems[fs]
            .metadata
            .ordered_inodes
            .push(ino);
        let tid = sys.fs().jbd2_task(fs).unwrap();
        (sys, ino, pfns, tid)
    }

    /// The submit walk refuses the delayed-allocation pages (3.2 counts
    /// each dirtied again), then the commit waits while a page below the
    /// size the file had at its start is under writeback, and ends (commit
    /// block, timer) when the last one completes.
    #[test]
    fn commit_redirties_delalloc_pages_then_waits_for_the_files_writeback() {
        let (mut sys, _ino, pfns, tid) = file_on_a_transaction("3.2");
        let dirtied = sys.mm().vmstat().get(Ev::NrDirtied);
        let now = sys.now();

        let step = sys.jbd2_step(tid);

        assert_eq!(sys.mm().vmstat().get(Ev::NrDirtied) - dirtied, 4);
        assert_eq!(step, Step::SleepUntil(now + FDATAWAIT_POLL_NS));
        let commit = sys.fs_mut().daemon_mut(tid).commit.clone().unwrap();
        assert_eq!(commit.phase, CommitPhase::Wait { inode: 0, index: 0 });

        for &pfn in &pfns[..3] {
            end_page_writeback(&mut sys, pfn);
        }
        sys.jbd2_step(tid);
        let commit = sys.fs_mut().daemon_mut(tid).commit.clone().unwrap();
        assert_eq!(commit.phase, CommitPhase::Wait { inode: 0, index: 3 });

        end_page_writeback(&mut sys, pfns[3]);
        let step = sys.jbd2_step(tid);
        assert!(sys.fs_mut().daemon_mut(tid).commit.is_none());
        let interval = sys.fs_mut().daemon_mut(tid).interval_ns;
        assert_eq!(step, Step::SleepUntil(commit.started_ns + interval));
    }

    /// A page written past the size the file had when the commit began
    /// does not hold the commit (`filemap_fdatawait` stops at that
    /// `i_size`).
    #[test]
    fn writeback_past_the_commits_start_size_does_not_hold_it() {
        let (mut sys, ino, pfns, tid) = file_on_a_transaction("3.3");
        sys.jbd2_step(tid);
        let gfp = crate::mm::Gfp::movable(true);
        let late = sys.find_or_create_page(0, ino, 8, gfp).unwrap();
        sys.set_page_dirty(late, Some(0));
        submit_page_write(&mut sys, 0, late);
        for &pfn in &pfns[..4] {
            end_page_writeback(&mut sys, pfn);
        }
        sys.jbd2_step(tid);
        assert!(sys.fs_mut().daemon_mut(tid).commit.is_none());
    }

    /// 6.1: no ordered data (unwritten extents); the commit's log write is
    /// in flight with the metadata shadowed, so the writer of a growing
    /// file waits until the write completes, then the commit ends. 3.3's
    /// writers never wait.
    #[test]
    fn a_6_1_writer_waits_for_the_commits_log_write() {
        use crate::block::BlockHost;
        let (mut sys, ino, pfns, tid) = file_on_a_transaction("6.1");
        let fs = sys.mm().inode(ino).fs;
        assert_eq!(sys.jbd2_step(tid), Step::Wait(None), "no data to wait for");
        assert_eq!(
            sys.fs_mut().daemon_mut(tid).commit.as_ref().unwrap().phase,
            CommitPhase::Log
        );
        for &pfn in &pfns[..4] {
            assert!(
                sys.mm().pages()[pfn as usize].has(flags::WRITEBACK),
                "not waited for"
            );
        }
        assert!(sys.jbd2_inode_update_waits(0, ino));
        assert!(sys.jbd2_inode_update_waits(0, ino));
        assert_eq!(sys.fs().filesystems[fs].metadata.shadow_waiters, [0]);
        // A spurious wake-up of jbd2 changes nothing.
        assert_eq!(sys.jbd2_step(tid), Step::Wait(None));
        sys.journal_commit_written(fs);
        assert!(!sys.jbd2_inode_update_waits(0, ino));
        assert!(sys.fs().filesystems[fs].metadata.shadow_waiters.is_empty());
        let started = sys
            .fs_mut()
            .daemon_mut(tid)
            .commit
            .as_ref()
            .unwrap()
            .started_ns;
        let interval = sys.fs_mut().daemon_mut(tid).interval_ns;
        assert_eq!(sys.jbd2_step(tid), Step::SleepUntil(started + interval));
        assert!(sys.fs_mut().daemon_mut(tid).commit.is_none());

        let (mut sys, ino, _, tid) = file_on_a_transaction("3.3");
        sys.jbd2_step(tid);
        assert!(!sys.jbd2_inode_update_waits(0, ino));
    }
}
