//! [`Workloads`]: the programs' state. Fields are private to
//! `workload/`; the machine and the reports use the accessors.

use super::fsmark_run::{FsMarkRun, FsMarkState};
use super::iozone_run::{IozoneResult, IozoneState};
use super::mapwrite::MapWriteState;
use super::memtouch::MemTouchState;
use super::sync::SyncState;
use super::WriterState;

/// The program a workload task runs, with its state.
#[derive(Debug)]
pub enum Process {
    /// dd.
    Writer(Box<WriterState>),
    /// One fs_mark thread.
    FsMark(Box<FsMarkState>),
    /// A process with anonymous memory (`memtouch`).
    MemTouch(Box<MemTouchState>),
    /// A process writing through a shared file mapping (`mapwrite`).
    MapWrite(Box<MapWriteState>),
    /// An IOzone run.
    Iozone(Box<IozoneState>),
    /// `sync`: one sync(2).
    Sync(Box<SyncState>),
}

pub struct Workloads {
    /// Per task: the program it runs (`None` for kernel threads).
    pub(super) processes: Vec<Option<Process>>,
    /// fs_mark commands being run (shared by their threads).
    pub(super) fsmark_runs: Vec<FsMarkRun>,
    /// Results of the IOzone tests run so far.
    pub(super) iozone_results: Vec<IozoneResult>,
    /// Program files whose text tasks map, and what each task maps.
    pub(super) texts: Vec<super::text::ProgramText>,
    pub(super) text_use: Vec<Option<super::text::TextUse>>,
}

impl Workloads {
    pub fn new() -> Workloads {
        Workloads {
            processes: Vec::new(),
            fsmark_runs: Vec::new(),
            iozone_results: Vec::new(),
            texts: Vec::new(),
            text_use: Vec::new(),
        }
    }

    /// Task `tid` maps `pages` of program text `text` while it runs.
    pub fn set_text_use(&mut self, tid: u32, text: usize, pages: u32) {
        self.text_use[tid as usize] = Some(super::text::TextUse { text, pages });
    }

    /// A new task: no program (a kernel thread) until one is attached.
    pub fn add_task(&mut self) {
        self.processes.push(None);
        self.text_use.push(None);
    }

    /// Task `tid` runs `process`.
    pub fn attach(&mut self, tid: u32, process: Process) {
        self.processes[tid as usize] = Some(process);
    }

    /// An fs_mark command (at boot); returns its index.
    pub fn add_fsmark_run(&mut self, run: FsMarkRun) -> usize {
        self.fsmark_runs.push(run);
        self.fsmark_runs.len() - 1
    }

    /// What task `tid` runs, if it is a workload process.
    pub fn process_of(&self, tid: u32) -> Option<&Process> {
        self.processes[tid as usize].as_ref()
    }

    #[inline]
    pub fn process(&self, tid: u32) -> &Process {
        self.processes[tid as usize]
            .as_ref()
            .expect("task runs a program")
    }

    #[inline]
    pub(super) fn process_mut(&mut self, tid: u32) -> &mut Process {
        self.processes[tid as usize]
            .as_mut()
            .expect("task runs a program")
    }

    /// fs_mark thread `tid`'s state, and whether its run has failed (one
    /// look for both: every step of the thread asks).
    #[inline]
    pub(super) fn fsmark_thread(&mut self, tid: u32) -> (&mut FsMarkState, bool) {
        match self.processes[tid as usize].as_mut() {
            Some(Process::FsMark(f)) => {
                let failed = self.fsmark_runs[f.run].failed;
                (f, failed)
            }
            _ => unreachable!("task {tid} is not fs_mark"),
        }
    }

    pub fn fsmark_runs(&self) -> &[FsMarkRun] {
        &self.fsmark_runs
    }

    pub fn iozone_results(&self) -> &[IozoneResult] {
        &self.iozone_results
    }
}

impl Default for Workloads {
    fn default() -> Self {
        Self::new()
    }
}
