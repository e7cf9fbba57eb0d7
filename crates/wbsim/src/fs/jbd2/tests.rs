//! jbd2's commits: ordered data, the log write's shadowed buffers, when a
//! transaction is due, the journal superblock.

use super::*;
use crate::mm::filemap::Filemap;
use crate::mm::vmstat::Ev;
use crate::mm::MmHost;
use crate::sched::HasCore;
use crate::test_support::usb_stick_files;
use crate::writeback::account::{end_page_writeback, submit_page_write};

/// An ext4 file of 8 dirty pages, 0..4 already written by the flusher
/// (under writeback), filed on the running transaction, which is due; the
/// journal's superblock already records the log. jbd2's tid.
fn file_on_a_transaction(kernel: &str) -> (crate::system::System, u32, Vec<u32>, u32) {
    let (mut sys, files) = usb_stick_files(kernel, "ext4", &["a"]);
    let ino = files[0];
    let pfns = crate::test_support::dirty_file_pages(&mut sys, ino, 8);
    for &pfn in &pfns[..4] {
        submit_page_write(&mut sys, 0, pfn);
    }
    let fs = sys.mm().inode(ino).fs();
    let md = &mut sys.fs_mut().filesystems[fs].metadata;
    md.ordered_inodes.push(ino);
    md.transaction_expires_ns = Some(0);
    md.journal_flushed = false;
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
    assert_eq!(step, Step::Wait(None), "no handle since: no transaction");
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
    let fs = sys.mm().inode(ino).fs();
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
    // The writer's handle started the next transaction: jbd2 sleeps until
    // its timer, the whole second after it is due.
    let interval = sys.fs_mut().daemon_mut(tid).interval_ns;
    let due = sys.fs().filesystems[fs].metadata.transaction_expires_ns;
    assert_eq!(due, Some(sys.now() + interval));
    let timer = (sys.now() + interval).div_ceil(NS_PER_SEC) * NS_PER_SEC;
    assert_eq!(sys.jbd2_step(tid), Step::Wait(Some(timer)));
    assert!(sys.fs_mut().daemon_mut(tid).commit.is_none());

    let (mut sys, ino, _, tid) = file_on_a_transaction("3.3");
    sys.jbd2_step(tid);
    assert!(!sys.jbd2_inode_update_waits(0, ino));
}

/// A transaction is due `interval` after its first handle; jbd2 sleeps
/// until its timer (the next whole second), and a handle that stops once
/// the transaction is due asks for the commit at once, once.
#[test]
fn a_transaction_commits_when_a_handle_finds_it_due() {
    let (mut sys, files) = usb_stick_files("6.1", "ext4", &["a"]);
    let fs = sys.mm().inode(files[0]).fs();
    sys.fs_mut().filesystems[fs].metadata.journal_flushed = false;
    let tid = sys.fs().jbd2_task(fs).unwrap();
    let interval = sys.fs_mut().daemon_mut(tid).interval_ns;
    assert_eq!(sys.jbd2_step(tid), Step::Wait(None), "no transaction");

    sys.core_mut().advance_to(300_000_000);
    sys.jbd2_handle_start(fs);
    sys.jbd2_handle_stop(fs);
    let md = &sys.fs().filesystems[fs].metadata;
    assert_eq!(md.transaction_expires_ns, Some(300_000_000 + interval));
    assert!(!md.commit_requested, "not due yet");
    // Due at 5.3 s; the timer fires at the next whole second.
    assert_eq!(interval, 5 * NS_PER_SEC);
    assert_eq!(sys.jbd2_step(tid), Step::Wait(Some(6 * NS_PER_SEC)));

    sys.core_mut().advance_to(300_000_000 + interval);
    sys.jbd2_handle_start(fs);
    sys.jbd2_handle_stop(fs);
    assert!(sys.fs().filesystems[fs].metadata.commit_requested);
    assert_eq!(sys.jbd2_step(tid), Step::Wait(None), "the log write");
    let md = &sys.fs().filesystems[fs].metadata;
    assert!(md.log_shadowed && md.transaction_expires_ns.is_none());
    assert!(!md.commit_requested);
}

/// The first commit on a freshly made journal writes the journal's
/// superblock and waits for it before it locks the transaction, which
/// handles keep joining meanwhile; then it commits.
#[test]
fn the_first_commit_records_the_log_in_the_journal_superblock() {
    use crate::block::BlockHost;
    let (mut sys, files) = usb_stick_files("6.1", "ext4", &["a"]);
    let fs = sys.mm().inode(files[0]).fs();
    let tid = sys.fs().jbd2_task(fs).unwrap();
    assert!(sys.fs().filesystems[fs].metadata.journal_flushed);
    sys.fs_mut().filesystems[fs].metadata.transaction_expires_ns = Some(0);
    let dev = sys.fs().filesystems[fs].device;
    let writes = sys.block().queue(dev).stats.write_sectors;

    assert_eq!(sys.jbd2_step(tid), Step::Wait(None));
    let md = &sys.fs().filesystems[fs].metadata;
    assert!(md.journal_sb_in_flight && !md.journal_flushed);
    assert_eq!(sys.block().queue(dev).stats.write_sectors - writes, 8);
    assert!(md.transaction_expires_ns.is_some(), "still running");
    assert!(
        sys.fs_mut().daemon_mut(tid).commit.is_none(),
        "not locked yet"
    );
    assert!(!sys.jbd2_inode_update_waits(0, files[0]), "writers go on");

    sys.journal_commit_written(fs);
    assert!(!sys.fs().filesystems[fs].metadata.journal_sb_in_flight);
    assert_eq!(sys.jbd2_step(tid), Step::Wait(None), "the log write");
    assert!(sys.fs().filesystems[fs].metadata.log_shadowed);
}
