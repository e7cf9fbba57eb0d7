//! Running an IOzone command (`write_perf_test`, `read_perf_test`,
//! `random_perf_test` of `iozone.c`; 3.222 and 3.469 read from a public
//! mirror of the release tarballs, with the change log between them). Each
//! test is two passes; each pass:
//!
//! 1. opens the file (the write pass first unlinks the old file and
//!    creates a new, sparse one: the old pages are truncated), maps it
//!    with `-B` (`initfile`, MAP_SHARED, per pass), and, except for the
//!    random tests, calls `fsync` (untimed);
//! 2. starts the timer and copies `numrecs` records to or from the file:
//!    with `-B` a `bcopy` into or out of the mapping (a write fault on a
//!    page not mapped writable dirties it through `set_page_dirty_balance`,
//!    a read fault maps it), otherwise `write(2)` / `read(2)`;
//! 3. stops the timer (with `-e` after a timed `fsync` / `msync(MS_SYNC)`);
//!    with `-B` and no `-e`, an untimed whole-file `msync(MS_SYNC)` follows
//!    ("Clean up before read starts", in both versions); then unmaps and
//!    closes. A `-B` random-write pass therefore starts on a clean file.
//!
//! The random tests draw each record as `lrand48() % numrecs` when it
//! starts (nothing is prepared up front, whatever `-s`), with
//! replacement, reseeding the generator before each pass so that the
//! random-read and random-write passes visit the same sequence (3.222;
//! the change log dates the switch to a shuffled table of unique offsets
//! to 3.292, after the 2007 runs of seed 002). About 63 % of the records
//! are visited, the rest more than once. Throughput is IOzone's: bytes /
//! elapsed seconds, truncated to KiB/s.
//!
//! Not modelled: `initfile` writing the last record to extend the file
//! (one record), the first `read(2)` of record 0 in the read test, `-c`
//! (close in the timing, which also drops the untimed msync).

use rand::Rng;
use rand_pcg::Pcg64Mcg;
use serde::Serialize;

use super::iozone::{IozoneCommand, IozoneTest};
use crate::fs::daemon::FsDaemons;
use crate::fs::space::SpaceReservation;
use crate::mm::filemap::Filemap;
use crate::mm::filemap::ReadKind;
use crate::mm::page::{flags, NIL};
use crate::sched::Step;
use crate::sim::Ns;
use crate::workload::enospc::Enospc;
use crate::workload::fsmark_run::FsMarkRunner;
use crate::workload::mapwrite::MapWriter;
use crate::workload::Process;
use crate::workload::WorkloadHost;
use crate::writeback::sync::Fsync;
use crate::writeback::throttle::balance_dirty_pages;

/// One test's result, as IOzone prints it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IozoneResult {
    /// The task (IOzone invocation) that ran it.
    pub task: String,
    pub test: IozoneTest,
    pub kib_per_second: u64,
    pub elapsed_seconds: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Open (unlink and create for the write pass), map.
    Open,
    /// `fsync` before the timer.
    PreSync,
    Timed,
    /// The timed flush of `-e`.
    Flush,
    /// Unlink at the end (`begin()`, unless `-w`).
    Unlink,
}

#[derive(Debug)]
pub struct IozoneState {
    pub cmd: IozoneCommand,
    pub fs: usize,
    pub bdi: usize,
    /// The file's inode (`NIL` before the first write pass creates it).
    pub inode: u32,
    test: usize,
    phase: Phase,
    /// Records done in this pass, and the page within the current record.
    record: u64,
    page_in_record: u32,
    /// The random tests' generator as it was before the first draw: each
    /// random pass restarts from it, so both passes visit the same records.
    rng_start: Pcg64Mcg,
    /// This pass's generator, and the random record in progress (drawn,
    /// with replacement, when the record starts: nothing is drawn up front).
    rng: Pcg64Mcg,
    rand_record: Option<u64>,
    start_ns: Ns,
    elapsed_ns: Option<Ns>,
    sync_cursor: u32,
    /// A FUSE WRITE request is in flight (write-through, as dd's).
    awaiting_reply: bool,
}

impl IozoneState {
    /// `rng` draws the random tests' records (`lrand48() % numrecs`).
    pub fn new(cmd: IozoneCommand, fs: usize, bdi: usize, rng: &mut Pcg64Mcg) -> Self {
        IozoneState {
            cmd,
            fs,
            bdi,
            inode: NIL,
            test: 0,
            phase: Phase::Open,
            record: 0,
            page_in_record: 0,
            rng_start: rng.clone(),
            rng: rng.clone(),
            rand_record: None,
            start_ns: 0,
            elapsed_ns: None,
            sync_cursor: 0,
            awaiting_reply: false,
        }
    }
}

/// Running IOzone's tests.
pub trait IozoneRunner: WorkloadHost {
    fn iozone_state(&mut self, tid: u32) -> &mut IozoneState {
        match self.workload_mut().process_mut(tid) {
            Process::Iozone(s) => s,
            _ => unreachable!("task {tid} is not iozone"),
        }
    }

    /// IOzone's steps that the engine runs back to back, in one call
    /// (`HasCore::steps_in_place`).
    #[inline(never)]
    fn iozone_step(&mut self, tid: u32) -> Step {
        self.steps_in_place(tid, |s| s.iozone_one_step(tid))
    }

    /// One step of an IOzone run.
    #[inline(always)]
    fn iozone_one_step(&mut self, tid: u32) -> Step {
        if let Some(step) = balance_dirty_pages(self, tid) {
            return step;
        }
        let st = self.iozone_state(tid);
        let (phase, ino) = (st.phase, st.inode);
        match phase {
            Phase::Open => self.iozone_open(tid),
            Phase::PreSync => {
                let mut cursor = self.iozone_state(tid).sync_cursor;
                let step = self.filemap_write_and_wait(tid, ino, &mut cursor);
                let now = self.now() + self.step_cost_ns();
                let st = self.iozone_state(tid);
                st.sync_cursor = cursor;
                if let Some(step) = step {
                    return step;
                }
                st.phase = Phase::Timed;
                st.start_ns = now;
                Step::Continue
            }
            Phase::Timed => self.iozone_timed(tid),
            Phase::Flush => {
                // Timed with -e; with -B, IOzone msyncs the whole file after
                // the timer anyway.
                let cmd = &self.iozone_state(tid).cmd;
                if cmd.include_flush || cmd.mmap {
                    let mut cursor = self.iozone_state(tid).sync_cursor;
                    let step = self.filemap_write_and_wait(tid, ino, &mut cursor);
                    self.iozone_state(tid).sync_cursor = cursor;
                    if let Some(step) = step {
                        return step;
                    }
                }
                self.iozone_end_pass(tid);
                Step::Continue
            }
            Phase::Unlink => {
                if self.iozone_state(tid).cmd.keep_file {
                    return Step::Exit;
                }
                if !self.truncate_inode_pages(tid, ino) {
                    return Step::SleepUntil(self.now() + 1_000_000);
                }
                self.fs_release_blocks(ino);
                Step::Exit
            }
        }
    }

    /// Start a pass: a write pass replaces the file; the pass maps it.
    fn iozone_open(&mut self, tid: u32) -> Step {
        let st = self.iozone_state(tid);
        let test = st.cmd.tests[st.test];
        let (fs, size, old) = (st.fs, st.cmd.file_bytes, st.inode);
        if test == IozoneTest::Write {
            if old != NIL && !self.truncate_inode_pages(tid, old) {
                return Step::SleepUntil(self.now() + 1_000_000);
            }
            if old != NIL {
                self.fs_release_blocks(old);
            }
            let ino = self.create_file(fs, size);
            self.mm_mut().inode_mut(ino).size_pages = size.div_ceil(4096) as u32;
            self.iozone_state(tid).inode = ino;
        } else if old == NIL {
            unreachable!("read tests run after the write test creates the file");
        }
        // Each test opens the file anew (iozone's per-test `open`).
        self.mm_mut().open_for_read(tid);
        let now = self.now() + self.step_cost_ns();
        let st = self.iozone_state(tid);
        st.record = 0;
        st.page_in_record = 0;
        st.sync_cursor = 0;
        st.elapsed_ns = None;
        st.rand_record = None;
        if test.random() {
            st.rng = st.rng_start.clone();
            st.phase = Phase::Timed;
            st.start_ns = now;
        } else {
            st.phase = Phase::PreSync;
        }
        Step::Continue
    }

    /// One page of the current record.
    fn iozone_timed(&mut self, tid: u32) -> Step {
        let st = self.iozone_state(tid);
        let test = st.cmd.tests[st.test];
        let record = match (test.random(), st.rand_record) {
            (true, Some(r)) => r,
            (true, None) => {
                // Parsing bounds the file to 2^32 - 1 pages.
                let n = u32::try_from(st.cmd.records()).unwrap_or(u32::MAX);
                let r = st.rng.gen_range(0..n) as u64;
                st.rand_record = Some(r);
                r
            }
            (false, _) => st.record,
        };
        let pages_per_record = (st.cmd.record_bytes / 4096) as u32;
        let idx = (record * pages_per_record as u64) as u32 + st.page_in_record;
        let (ino, bdi, mmap) = (st.inode, st.bdi, st.cmd.mmap);
        if !mmap && st.page_in_record == 0 {
            self.charge_sys(tid, self.cost().syscall_ns);
        }
        let done = if mmap {
            self.iozone_mmap_access(tid, ino, bdi, idx, test.writes())
        } else {
            self.iozone_syscall_access(tid, ino, bdi, idx, test.writes())
        };
        if let Err(step) = done {
            return step;
        }
        let now = self.now() + self.step_cost_ns();
        let st = self.iozone_state(tid);
        st.page_in_record += 1;
        if st.page_in_record == pages_per_record {
            st.page_in_record = 0;
            st.record += 1;
            st.rand_record = None;
            if st.record == st.cmd.records() {
                if !st.cmd.include_flush {
                    st.elapsed_ns = Some(now - st.start_ns);
                }
                st.phase = Phase::Flush;
                st.sync_cursor = 0;
            }
        }
        Step::Continue
    }

    /// A `bcopy` of one page into or out of the mapping: a fault if the
    /// page is not mapped (or, for a write, not mapped writable).
    fn iozone_mmap_access(
        &mut self,
        tid: u32,
        ino: u32,
        bdi: usize,
        idx: u32,
        write: bool,
    ) -> Result<(), Step> {
        let pfn = self.mm().inode(ino).page(idx);
        let mapped = pfn != NIL && self.mm().pages()[pfn as usize].has(flags::PTE_MAPPED);
        let writable = mapped && self.mm().pages()[pfn as usize].has(flags::PTE_WRITE);
        if !mapped || (write && !writable) {
            if write && !self.write_begin_reserve(ino, idx) {
                return Err(self.fault_sigbus(tid));
            }
            self.shared_mapping_fault(tid, ino, bdi, idx, write)?;
        } else {
            self.mm_mut().pages_mut()[pfn as usize].flags |= flags::PTE_YOUNG;
        }
        self.charge_user(tid, 4 * self.cost().copy_per_kib_ns);
        Ok(())
    }

    /// `write(2)` or `read(2)` of one page.
    fn iozone_syscall_access(
        &mut self,
        tid: u32,
        ino: u32,
        bdi: usize,
        idx: u32,
        write: bool,
    ) -> Result<(), Step> {
        if write {
            if self.is_fuse_file(ino) {
                return self.iozone_fuse_write(tid, ino, idx);
            }
            if !self.write_reserve_or_retry(tid, ino, idx) {
                return Err(self.iozone_enospc(tid));
            }
            if self.write_page_cached(tid, ino, idx, 4096, true)? {
                self.balance_dirty_pages_ratelimited(tid, bdi, 1);
            }
        } else {
            let pfn = self.filemap_get_page(tid, ino, idx, ReadKind::Syscall)?;
            self.charge_sys(tid, 4 * self.cost().copy_per_kib_ns);
            self.mark_page_accessed_by(tid, pfn);
        }
        Ok(())
    }

    /// `write(2)` of one page on FUSE: write-through, one WRITE request
    /// to the daemon, the task sleeping until the reply (as dd's).
    fn iozone_fuse_write(&mut self, tid: u32, ino: u32, idx: u32) -> Result<(), Step> {
        if std::mem::take(&mut self.iozone_state(tid).awaiting_reply) {
            if self.fs_mut().take_fuse_enospc(tid) {
                return Err(self.iozone_enospc(tid));
            }
            return Ok(());
        }
        let fs = self.mm().inode(ino).fs();
        let Some(daemon) = self.fs().get(fs).fuse_daemon else {
            return Err(self.iozone_enospc(tid));
        };
        self.write_page_cached(tid, ino, idx, 4096, false)?;
        self.charge_sys(tid, self.cost().fuse_request_ns);
        self.iozone_state(tid).awaiting_reply = true;
        let kind = crate::fs::daemon::FuseRequestKind::Write { writer: tid };
        let req = crate::fs::daemon::FuseRequest {
            kind,
            ino,
            file_index: idx,
        };
        self.fuse_send(daemon, req);
        Err(Step::Wait(None))
    }

    /// `write(2)` failed with ENOSPC: IOzone prints the error and its
    /// `signal_handler` unlinks the file (unless `-w`) and exits 0.
    fn iozone_enospc(&mut self, tid: u32) -> Step {
        self.task_mut(tid).message = "write: No space left on device".to_string();
        self.iozone_state(tid).phase = Phase::Unlink;
        Step::Continue
    }

    /// The pass is flushed: record its throughput, unmap, go on.
    fn iozone_end_pass(&mut self, tid: u32) {
        let now = self.now() + self.step_cost_ns();
        let st = self.iozone_state(tid);
        let elapsed = st.elapsed_ns.unwrap_or(now - st.start_ns).max(1);
        let test = st.cmd.tests[st.test];
        let bytes = st.cmd.records() * st.cmd.record_bytes;
        let (ino, mmap) = (st.inode, st.cmd.mmap);
        st.test += 1;
        let finished = st.test == st.cmd.tests.len();
        st.phase = if finished { Phase::Unlink } else { Phase::Open };
        if mmap {
            self.munmap_file(tid, ino);
        }
        let result = IozoneResult {
            task: self.task(tid).name.clone(),
            test,
            kib_per_second: ((bytes as f64 / (elapsed as f64 / 1e9)) as u64) >> 10,
            elapsed_seconds: elapsed as f64 / 1e9,
        };
        self.workload_mut().iozone_results.push(result);
    }
}

impl<T: WorkloadHost + ?Sized> IozoneRunner for T {}
