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
            // `fs_writepage_writeback` clears the dirty bit itself.
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
    let fs = sys.mm().inode(files[0]).fs();
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
    let written0 = sys.wb().bdi(sys.mm().inode(ino).bdi()).written_pages;
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
    let bdi = sys.mm().inode(ino).bdi();
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
    sys.ioend_add_page(0, fs, ino, 10, 100);
    sys.ioend_add_page(0, fs, ino, 11, 300);
    sys.ioend_add_page(0, fs, ino, 20, 301);
    let io = &sys.fs().ioends;
    assert_eq!(io.of_inode(ino).count(), 2);
    let first = io.slots[io.of_inode(ino).next().unwrap() as usize];
    assert_eq!(
        (first.first_index, first.nr_pages, first.closed),
        (10, 2, true)
    );
    let sc = crate::test_support::usb_stick_scenario("6.1", "xfs", 1, &["a"]);
    let mut profile = crate::kernel::preset("6.1").unwrap();
    profile.xfs_ioend_pages = 3;
    let mut sys = crate::system::build_system(&sc, &profile, 1);
    for i in 0..7 {
        sys.ioend_add_page(0, fs, ino, i, 1000 + i);
    }
    let io = &sys.fs().ioends;
    let sizes: Vec<u32> = io
        .of_inode(ino)
        .map(|id| io.slots[id as usize].nr_pages)
        .collect();
    assert_eq!(sizes, [3, 3, 1]);
}

/// A 6.1 btrfs bio takes pages while their file offsets follow on and it
/// has a segment for them: physically contiguous frames share one, so a
/// bio holds up to 256 runs of any length. 3.3 has no such bio.
#[test]
fn btrfs_bios_count_segments_of_contiguous_frames() {
    let (sys, _, fs) = one_file("6.1", "btrfs");
    let bio = super::Deferral::Bio(256);
    assert_eq!(sys.ioend_deferral(fs), bio);
    let mut e = super::Ioend {
        fs: fs as u32,
        ino: 0,
        first_index: 0,
        nr_pages: 1000,
        pending_pages: 1000,
        closed: false,
        last_pfn: 5999,
        nr_segments: 1,
        nr_submitted: 0,
        next_of_inode: super::NO_IOEND,
    };
    assert!(e.takes(1000, 6000, bio), "the next frame: same segment");
    assert!(e.takes(1000, 9000, bio), "a new segment, 2 of 256");
    assert!(!e.takes(1001, 6000, bio), "a gap in the file");
    e.nr_segments = 256;
    assert!(e.takes(1000, 6000, bio), "full, but the segment grows");
    assert!(!e.takes(1000, 9000, bio), "full: no 257th segment");
    let worker = super::Deferral::Worker(1000);
    assert!(
        !e.takes(1000, 6000, worker),
        "a worker's ioend counts pages"
    );
    let (sys3, _, fs3) = one_file("3.3", "btrfs");
    assert_eq!(sys3.ioend_deferral(fs3), super::Deferral::None);
}

/// 6.1 btrfs: the pages of a bio are under writeback as they join it and
/// go to the block layer when the `->writepages` call submits it; they
/// end writeback together, at once (irq context, no worker), when the
/// last of them is written.
#[test]
fn btrfs_bio_pages_end_writeback_when_the_last_is_written() {
    use crate::mm::vmstat::Ev;
    let (mut sys, ino, _) = one_file("6.1", "btrfs");
    let pfns = submit(&mut sys, ino, 8);
    assert_eq!(under_writeback(&sys, &pfns), 8);
    assert_eq!(sys.mm().vmstat().get(Ev::PgpgOut), 0, "no bio submitted");
    let class = crate::block::wbt::WbtClass::Max;
    assert!(!sys.fs_writepages_submit_must_wait(0, ino, class));
    assert_eq!(sys.mm().vmstat().get(Ev::PgpgOut), 8 * 4, "submitted");
    sys.fs_writepages_done(0, ino);
    for &p in &pfns[..7] {
        sys.end_page_writeback(p);
    }
    assert_eq!(under_writeback(&sys, &pfns), 8, "the bio is not done");
    sys.end_page_writeback(pfns[7]);
    assert_eq!(under_writeback(&sys, &pfns), 0, "all end with the last");
}

/// 6.1 btrfs: the page that starts a delalloc range has the whole range
/// allocated and sets `nr_to_write` to it (under 2 x 8192 pages), or to
/// 8192; a page whose blocks are allocated starts none. 3.3: no rule.
#[test]
fn btrfs_writes_a_whole_delalloc_range() {
    let (mut sys, ino, _) = one_file("6.1", "btrfs");
    for i in 0..100 {
        let pfn = sys
            .find_or_create_page(0, ino, i, Gfp::movable(true))
            .unwrap();
        sys.set_page_dirty(pfn, Some(0));
    }
    assert_eq!(
        crate::fs::writepages_delalloc(&mut sys, ino, 0, 10),
        Some(100)
    );
    assert_eq!(crate::fs::writepages_delalloc(&mut sys, ino, 0, 10), None);
    assert_eq!(crate::fs::writepages_delalloc(&mut sys, ino, 50, 10), None);
    let (mut sys3, ino3, _) = one_file("3.3", "btrfs");
    let pfn = sys3
        .find_or_create_page(0, ino3, 0, Gfp::movable(true))
        .unwrap();
    sys3.set_page_dirty(pfn, Some(0));
    assert_eq!(crate::fs::writepages_delalloc(&mut sys3, ino3, 0, 0), None);
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

#[test]
fn an_inodes_ioends_leave_its_list_in_any_order_and_keep_their_age_order() {
    let sc = crate::test_support::usb_stick_scenario("6.1", "xfs", 1, &["a"]);
    let mut profile = crate::kernel::preset("6.1").unwrap();
    profile.xfs_ioend_pages = 2;
    let mut sys = crate::system::build_system(&sc, &profile, 1);
    let ino = (0..sys.mm().nr_inodes() as u32)
        .find(|&i| sys.mm().inode(i).kind == crate::mm::inode::MappingKind::Regular)
        .unwrap();
    let fs = sys.mm().inode(ino).fs();
    for i in 0..8 {
        sys.ioend_add_page(0, fs, ino, i, 1000 + i);
    }
    let io = &mut sys.fs_mut().ioends;
    let ids: Vec<u32> = io.of_inode(ino).collect();
    assert_eq!(ids.len(), 4);
    io.list_remove(ino, ids[2]);
    io.list_remove(ino, ids[0]);
    assert_eq!(io.of_inode(ino).collect::<Vec<_>>(), [ids[1], ids[3]]);
    io.list_remove(ino, ids[3]);
    io.list_remove(ino, ids[1]);
    assert_eq!(io.of_inode(ino).count(), 0);
    assert_eq!(io.first_of_inode[ino as usize], super::NO_IOEND);
}
