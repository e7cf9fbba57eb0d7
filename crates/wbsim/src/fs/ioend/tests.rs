use super::IoendCompletion;
use crate::block::BlockHost;
use crate::fs::FsHost;
use crate::mm::filemap::Filemap;
use crate::mm::page::flags;
use crate::mm::{Gfp, MmHost};
use crate::sched::Step;
use crate::test_support::usb_stick_files;
use crate::writeback::pass::WritebackCaller;
use crate::writeback::WritebackHost;

/// Dirty and submit pages `0..n` of file `ino` as `->writepages` does.
fn submit(sys: &mut crate::system::System, ino: u32, n: u32) -> Vec<u32> {
    submit_from(sys, ino, 0, n)
}

/// `submit` for pages `first..first + n`.
fn submit_from(sys: &mut crate::system::System, ino: u32, first: u32, n: u32) -> Vec<u32> {
    (first..first + n)
        .map(|i| {
            let pfn = sys
                .find_or_create_page(0, ino, i, Gfp::movable(true))
                .unwrap();
            sys.set_page_dirty(pfn, Some(0));
            sys.clear_page_dirty_for_io(pfn);
            assert!(crate::fs::fs_writepage_writeback(
                sys,
                0,
                pfn,
                WritebackCaller::Writeback
            ));
            pfn
        })
        .collect()
}

/// One file on a `fs_type` filesystem of `kernel`: the system, the
/// file's inode and its filesystem.
fn one_file(kernel: &str, fs_type: &str) -> (crate::system::System, u32, usize) {
    let (sys, files) = usb_stick_files(kernel, fs_type, &["a"]);
    let fs = sys.mm().inode(files[0]).fs;
    (sys, files[0], fs)
}

fn under_writeback(sys: &crate::system::System, pfns: &[u32]) -> usize {
    pfns.iter()
        .filter(|&&p| sys.mm().pages()[p as usize].has(flags::WRITEBACK))
        .count()
}

/// 6.1 ext4: a page written by the device stays under writeback until the
/// last page of its io_end is written and the worker has run; then all
/// its pages end together. 3.3 ends each page as its request completes.
#[test]
fn ext4_io_end_pages_end_writeback_together_in_the_worker() {
    let (mut sys, ino, fs) = one_file("6.1", "ext4");
    assert_eq!(sys.ioend_limit_pages(fs), 2048);
    let pfns = submit(&mut sys, ino, 8);
    let written0 = sys.wb().bdi(sys.mm().inode(ino).bdi).written_pages;
    for &p in &pfns[..7] {
        sys.end_page_writeback(p);
    }
    assert_eq!(under_writeback(&sys, &pfns), 8, "held by the io_end");
    sys.fs_writepages_done(0, ino);
    sys.end_page_writeback(pfns[7]);
    assert_eq!(under_writeback(&sys, &pfns), 8, "queued for the worker");
    let worker = sys.fs().ioends.worker[fs].unwrap();
    assert!(matches!(sys.ioend_worker_step(worker, fs), Step::Continue));
    assert_eq!(under_writeback(&sys, &pfns), 0);
    let bdi = sys.mm().inode(ino).bdi;
    assert_eq!(sys.wb().bdi(bdi).written_pages - written0, 8);
    assert!(matches!(
        sys.ioend_worker_step(worker, fs),
        Step::Wait(None)
    ));

    let (mut sys, ino, _) = one_file("3.3", "ext4");
    let pfns = submit(&mut sys, ino, 2);
    sys.end_page_writeback(pfns[0]);
    assert_eq!(under_writeback(&sys, &pfns), 1, "3.3: at once");
}

/// An ioend takes a contiguous run of at most the profile's pages: a gap
/// or a full ioend closes it and starts the next one.
#[test]
fn ioends_split_at_the_limit_and_at_gaps() {
    let (mut sys, ino, fs) = one_file("6.1", "xfs");
    assert_eq!(sys.ioend_limit_pages(fs), 4096);
    sys.ioend_add_page(fs, ino, 10);
    sys.ioend_add_page(fs, ino, 11);
    sys.ioend_add_page(fs, ino, 20);
    let io = &sys.fs().ioends;
    assert_eq!(io.by_inode[ino as usize].len(), 2);
    let first = io.slots[io.by_inode[ino as usize][0] as usize];
    assert_eq!(
        (first.first_index, first.nr_pages, first.closed),
        (10, 2, true)
    );
    let sc = crate::test_support::usb_stick_scenario("6.1", "xfs", 1, &["a"]);
    let mut profile = crate::kernel::preset("6.1").unwrap();
    profile.xfs_ioend_pages = 3;
    let mut sys = crate::system::build_system(&sc, &profile, 1);
    for i in 0..7 {
        sys.ioend_add_page(fs, ino, i);
    }
    let io = &sys.fs().ioends;
    let sizes: Vec<u32> = io.by_inode[ino as usize]
        .iter()
        .map(|&id| io.slots[id as usize].nr_pages)
        .collect();
    assert_eq!(sizes, [3, 3, 1]);
}

/// 6.1 ext4's submission loop has a preemption point only between bios:
/// the task writing pages is not preemptible while a bio is partly
/// filled, is again at each 256th page of the io_end, and when its
/// `->writepages` call ends. xfs (a folio lock per page) and 3.3's ext4
/// never set it.
#[test]
fn ext4_writeback_is_preemptible_only_between_bios() {
    use crate::sched::HasCore;
    let (mut sys, ino, _) = one_file("6.1", "ext4");
    submit(&mut sys, ino, 1);
    assert!(sys.task(0).no_preempt, "one page into a bio");
    submit_from(&mut sys, ino, 1, 255);
    assert!(!sys.task(0).no_preempt, "the bio is full at 256 pages");
    submit_from(&mut sys, ino, 256, 10);
    assert!(sys.task(0).no_preempt, "into the next bio");
    sys.fs_writepages_done(0, ino);
    assert!(!sys.task(0).no_preempt, "->writepages submitted the rest");
    for (kernel, fs_type) in [("6.1", "xfs"), ("3.3", "ext4")] {
        let (mut sys, ino, _) = one_file(kernel, fs_type);
        submit(&mut sys, ino, 10);
        assert!(!sys.task(0).no_preempt, "{kernel} {fs_type}");
    }
}

/// While a 6.1 commit's log write holds the metadata shadowed, the
/// flusher waits before it maps the next extent (a page that would start
/// an io_end), not inside the one it is submitting, and the io_end worker
/// waits before it converts one; both are woken when the log write is on
/// disk. xfs never waits on the journal.
#[test]
fn ext4_writeback_and_conversion_wait_for_the_commits_log_write() {
    use crate::fs::jbd2::Jbd2;
    let (mut sys, ino, fs) = one_file("6.1", "ext4");
    let pfns = submit(&mut sys, ino, 4);
    sys.fs_mut().filesystems[fs].metadata.log_shadowed = true;
    assert!(
        !crate::fs::writepages_map_waits(&mut sys, 0, ino, 4),
        "same extent"
    );
    assert!(
        crate::fs::writepages_map_waits(&mut sys, 0, ino, 100),
        "a new one"
    );
    sys.fs_writepages_done(0, ino);
    assert!(
        crate::fs::writepages_map_waits(&mut sys, 0, ino, 4),
        "next call"
    );
    for &p in &pfns {
        sys.end_page_writeback(p);
    }
    let worker = sys.fs().ioends.worker[fs].unwrap();
    assert_eq!(sys.ioend_worker_step(worker, fs), Step::Wait(None));
    assert_eq!(under_writeback(&sys, &pfns), 4, "not converted");
    assert_eq!(
        sys.fs().filesystems[fs].metadata.shadow_waiters,
        [0, worker]
    );

    sys.jbd2_commit_written(fs);
    assert!(!crate::fs::writepages_map_waits(&mut sys, 0, ino, 4));
    assert_eq!(sys.ioend_worker_step(worker, fs), Step::Continue);
    assert_eq!(under_writeback(&sys, &pfns), 0);

    let (mut sys, ino, fs) = one_file("6.1", "xfs");
    sys.fs_mut().filesystems[fs].metadata.log_shadowed = true;
    assert!(!crate::fs::writepages_map_waits(&mut sys, 0, ino, 0));
}
