//! Running fs_mark (3.3, read in josefbacik/fs_mark `fs_mark.c` 09b074c).
//!
//! Each thread, per file: its own work outside the timed calls (a `mkdir`
//! of the target directory that fails with EEXIST, a random name, the
//! `gettimeofday` pairs), then the timed `open(O_CREAT|O_TRUNC)`, `write`
//! calls of `-w` bytes and `close` (`-S0`: no fsync). An iteration ends
//! when every thread has written its `-n` files; the next starts when all
//! have (the parent waits for its children and forks new ones).
//!
//! Per iteration and thread, `files/sec = files / loop time` and
//! `App Overhead = loop time - time in the timed calls` (µs); the
//! iteration's figures are the sums over threads, as fs_mark prints them.
//! Files are never deleted (`-L` keeps them).

use serde::Serialize;

use crate::mm::inode::{Inode, MappingKind};
use crate::sched::Step;
use crate::sim::{Ns, NS_PER_SEC};
use crate::workload::fsmark::FsMarkCommand;
use crate::workload::Process;
use crate::workload::WorkloadHost;
use crate::workload::Writer;
use crate::workload::WriterState;

/// One fs_mark output line.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct FsMarkLoop {
    pub files_per_second: f64,
    pub overhead_us: f64,
}

/// State shared by the threads of one fs_mark command.
#[derive(Debug, Clone)]
pub struct FsMarkRun {
    pub threads: u32,
    pub loops: u32,
    /// Iteration being run (0-based).
    pub loop_no: u32,
    /// Threads done with the current iteration, and their summed figures.
    pub done: u32,
    pub sum: FsMarkLoop,
    /// Threads waiting for the next iteration.
    pub waiting: Vec<u32>,
    pub results: Vec<FsMarkLoop>,
    /// A thread's write failed (ENOSPC): every thread exits.
    pub failed: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    StartLoop,
    /// Between files: fs_mark's own work, then the next create.
    AppWork,
    Create,
    Write,
    /// Waiting for the other threads to finish the iteration.
    Barrier,
}

#[derive(Debug)]
pub struct FsMarkState {
    /// Index into `System::fsmark_runs`.
    pub run: usize,
    pub fs: usize,
    /// Index of this thread's `-d` directory (thread `i + j * dirs` works
    /// in directory `i`).
    pub dir: u32,
    pub files_per_loop: u64,
    pub file_size_bytes: u64,
    pub write_bytes: u64,
    phase: Phase,
    loop_no: u32,
    file: u64,
    loop_start_ns: Ns,
    op_start_ns: Ns,
    ops_ns: Ns,
    /// The file being written.
    pub writer: WriterState,
}

impl FsMarkState {
    pub fn new(run: usize, fs: usize, bdi: usize, cmd: &FsMarkCommand, thread: u32) -> Self {
        FsMarkState {
            run,
            fs,
            dir: thread % cmd.dirs.len().max(1) as u32,
            files_per_loop: cmd.files_per_loop,
            file_size_bytes: cmd.file_size_bytes,
            write_bytes: cmd.write_bytes,
            phase: Phase::StartLoop,
            loop_no: 0,
            file: 0,
            loop_start_ns: 0,
            op_start_ns: 0,
            ops_ns: 0,
            writer: WriterState::new(0, bdi, None, cmd.write_bytes, 0, false),
        }
    }
}

impl FsMarkRun {
    pub fn new(cmd: &FsMarkCommand) -> Self {
        FsMarkRun {
            threads: cmd.threads(),
            loops: cmd.loops,
            loop_no: 0,
            done: 0,
            sum: FsMarkLoop {
                files_per_second: 0.0,
                overhead_us: 0.0,
            },
            waiting: Vec::new(),
            results: Vec::new(),
            failed: false,
        }
    }
}

/// Running fs_mark: its threads create, write, fsync and close files.
pub trait FsMarkRunner: WorkloadHost {
    fn fsmark_state(&mut self, tid: u32) -> &mut FsMarkState {
        match self.workload_mut().process_mut(tid) {
            Process::FsMark(f) => f,
            _ => unreachable!("task {tid} is not fs_mark"),
        }
    }

    /// The steps that write the file, one page each, back to back in one
    /// call while the engine would run the next at once and the next is
    /// a page of the file too (`HasCore::steps_in_place_while`): what
    /// [`FsMarkRunner::fsmark_step`] would do first (a failed run's
    /// thread exits, a written file is closed) ends the loop. Only the
    /// writing goes on in place: all of fs_mark's steps in place
    /// (`HasCore::steps_in_place` around `fsmark_step`) cost the
    /// writeback-plug run 0.6 % more instructions than this, and the
    /// reclaim-writeback one 0.4 %: its other steps (create, close, fsync)
    /// seldom could go on, and the test after each is paid for nothing.
    fn fsmark_write_steps(&mut self, tid: u32) -> Step {
        self.steps_in_place_while(
            tid,
            |s| s.writer_step(tid),
            |s| {
                let (st, failed) = s.workload_mut().fsmark_thread(tid);
                !failed && st.phase == Phase::Write && st.writer.has_bytes_to_write()
            },
        )
    }

    /// One step of an fs_mark thread.
    #[inline(never)]
    fn fsmark_step(&mut self, tid: u32) -> Step {
        let now = self.step_now();
        let (st, failed) = self.workload_mut().fsmark_thread(tid);
        if failed {
            return Step::Exit;
        }
        match st.phase {
            Phase::StartLoop => {
                st.loop_start_ns = now;
                st.ops_ns = 0;
                st.file = 0;
                st.phase = Phase::AppWork;
                Step::Continue
            }
            Phase::AppWork => {
                if st.file == st.files_per_loop {
                    return self.fsmark_loop_done(tid);
                }
                st.phase = Phase::Create;
                self.charge_user(tid, self.cost().fsmark_app_per_file_ns);
                self.charge_sys(tid, self.cost().syscall_ns);
                Step::Continue
            }
            Phase::Create => {
                st.op_start_ns = now;
                let (fs, size, bs, dir) = (st.fs, st.file_size_bytes, st.write_bytes, st.dir);
                let ino = self.create_file_in_dir(fs, size, dir);
                self.charge_sys(tid, self.cost().syscall_ns + self.cost().file_create_ns);
                let st = self.fsmark_state(tid);
                let bdi = st.writer.bdi;
                st.writer = WriterState::new(ino, bdi, None, bs, size, false);
                st.phase = Phase::Write;
                Step::Continue
            }
            Phase::Write => {
                if st.writer.has_bytes_to_write() {
                    return self.fsmark_write_steps(tid);
                }
                // close(2): the inode is unused from now on.
                let ino = st.writer.inode;
                self.charge_sys(tid, self.cost().syscall_ns);
                self.wb_mut().set_task_backing_dev(tid, None);
                self.mm_mut().icache_release(ino);
                let end = self.step_now();
                let st = self.fsmark_state(tid);
                st.ops_ns += end - st.op_start_ns;
                st.file += 1;
                st.phase = Phase::AppWork;
                Step::Continue
            }
            Phase::Barrier => {
                let run = st.run;
                let my_loop = st.loop_no;
                if self.workload().fsmark_runs[run].loop_no > my_loop {
                    return self.fsmark_next_loop(tid);
                }
                Step::Wait(None)
            }
        }
    }

    /// This thread finished its files of the iteration: add its figures;
    /// the last thread records the line and releases the others.
    fn fsmark_loop_done(&mut self, tid: u32) -> Step {
        let now = self.step_now();
        let st = self.fsmark_state(tid);
        let loop_ns = (now - st.loop_start_ns).max(1);
        let files = st.files_per_loop as f64;
        let figures = FsMarkLoop {
            files_per_second: files / (loop_ns as f64 / NS_PER_SEC as f64),
            overhead_us: (loop_ns - st.ops_ns.min(loop_ns)) as f64 / 1000.0,
        };
        st.phase = Phase::Barrier;
        let run_idx = st.run;
        let run = &mut self.workload_mut().fsmark_runs[run_idx];
        run.sum.files_per_second += figures.files_per_second;
        run.sum.overhead_us += figures.overhead_us;
        run.done += 1;
        if run.done < run.threads {
            run.waiting.push(tid);
            return Step::Wait(None);
        }
        let line = run.sum;
        run.results.push(line);
        run.sum = FsMarkLoop {
            files_per_second: 0.0,
            overhead_us: 0.0,
        };
        run.done = 0;
        run.loop_no += 1;
        let waiting = std::mem::take(&mut run.waiting);
        for t in waiting {
            self.wake_task(t);
        }
        self.fsmark_next_loop(tid)
    }

    fn fsmark_next_loop(&mut self, tid: u32) -> Step {
        let st = self.fsmark_state(tid);
        let run = st.run;
        st.loop_no += 1;
        if st.loop_no >= self.workload().fsmark_runs[run].loops {
            return Step::Exit;
        }
        self.fsmark_state(tid).phase = Phase::StartLoop;
        Step::Continue
    }

    /// A new file in fs_mark directory `dir`. On xfs, each directory lives
    /// in its own allocation group (`xfs_ialloc_ag_select` rotates new
    /// directories over the groups; files go in their directory's group)
    /// and a file's data follows the previous file's in that group: the
    /// "blocks of two consecutively written files are adjacent" of seed
    /// 001's text. The model places all of a `-d` directory's subdirectories in
    /// its group (real xfs rotates those too). Other filesystems: as
    /// `create_file`.
    fn create_file_in_dir(&mut self, fs: usize, size_bytes: u64, dir: u32) -> u32 {
        if self.fs().get(fs).fs_type != crate::fs::FsType::Xfs {
            return self.create_file(fs, size_bytes);
        }
        let f = self.fs_mut().get_mut(fs);
        let ag = dir as usize % f.ag_data_cursor.len();
        let base = f.ag_data_cursor[ag];
        f.ag_data_cursor[ag] += size_bytes.div_ceil(4096) * 8;
        let id = self.new_file_inode(fs, base);
        self.fs_mut().xfs_file_created(fs, ag);
        id
    }

    /// A new empty regular file on filesystem `fs`, its data placed after
    /// the previous file's (`size_bytes` reserved).
    fn create_file(&mut self, fs: usize, size_bytes: u64) -> u32 {
        let unit = self.mm().unit();
        let f = self.fs_mut().get_mut(fs);
        let base = f.data_cursor_sector;
        f.data_cursor_sector += unit.pages_of_bytes(size_bytes) * unit.sectors();
        self.new_file_inode(fs, base)
    }

    /// A regular file's inode on `fs`, its data from sector `base`.
    fn new_file_inode(&mut self, fs: usize, base: u64) -> u32 {
        let bdi = self.fs().get(fs).bdi;
        let id = self.mm().nr_inodes() as u32;
        self.mm_mut()
            .add_inode(Inode::new(id, fs, bdi, MappingKind::Regular, base));
        id
    }
}

impl<T: WorkloadHost + ?Sized> FsMarkRunner for T {}
