//! Tasks: resumable state machines the engine runs on simulated CPUs.

use crate::fs::FsDaemonState;
use crate::reclaim::kswapd::KswapdState;
use crate::sim::Ns;
use crate::workload::WriterState;
use crate::writeback::flusher::FlusherState;

/// What a task's step asks of the scheduler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Keep running (the engine may preempt it to deliver earlier events).
    Continue,
    /// Sleep until an absolute time.
    SleepUntil(Ns),
    /// Sleep on a wait queue the step registered on, with an optional
    /// timeout (`congestion_wait`, `get_request_wait`).
    Wait(Option<Ns>),
    /// The task has finished.
    Exit,
}

#[derive(Debug)]
pub enum TaskKind {
    /// A workload process (dd).
    Writer(Box<WriterState>),
    /// One fs_mark thread.
    FsMark(Box<crate::workload::fsmark_run::FsMarkState>),
    /// A process with anonymous memory (`memtouch`).
    MemTouch(Box<crate::workload::memtouch::MemTouchState>),
    /// A process writing through a shared file mapping (`mapwrite`).
    MapWrite(Box<crate::workload::mapwrite::MapWriteState>),
    /// An IOzone run.
    Iozone(Box<crate::workload::iozone_run::IozoneState>),
    /// Per-device flusher thread (`bdi_writeback_thread`, 2.6.32 – 3.x).
    Flusher(FlusherState),
    /// kswapd0.
    Kswapd(KswapdState),
    /// A filesystem's own thread: the FUSE daemon, jbd2, xfssyncd,
    /// btrfs-transaction.
    FsDaemon(FsDaemonState),
}

/// A `congestion_wait` or sleeping `wait_iff_congested` in progress: its
/// tracepoint is emitted when the task wakes, with the time it slept.
#[derive(Debug, Clone, Copy)]
pub struct PendingWait {
    pub iff_congested: bool,
    pub since_ns: Ns,
    pub timeout_ns: Ns,
}

#[derive(Debug)]
pub struct Task {
    pub name: String,
    pub cpu: usize,
    /// Wake-up token; an event carrying an older token is stale.
    pub token: u64,
    pub user_ns: Ns,
    pub sys_ns: Ns,
    pub started_ns: Ns,
    /// Not started until this task exits (`after` in the scenario).
    pub start_after: Option<u32>,
    pub exited_ns: Option<Ns>,
    /// Is this a workload task whose exit ends the run?
    pub is_workload: bool,
    /// Context switches (voluntary sleeps).
    pub nr_switches: u64,
    pub pending_wait: Option<PendingWait>,
    /// CFS virtual runtime: CPU time run, moved forward on wake-up.
    pub vruntime_ns: Ns,
    /// Off the run queue (sleeping, or not started yet).
    pub sleeping: bool,
    /// The scenario's command line (empty for kernel threads and extra
    /// fs_mark threads).
    pub command: String,
    /// Exit status (`128 + signal` when killed by a signal) and what the
    /// program printed on stderr before exiting.
    pub exit_status: i32,
    pub message: String,
}

impl Task {
    pub fn new(name: &str, cpu: usize, is_workload: bool) -> Task {
        Task {
            name: name.to_string(),
            cpu,
            token: 0,
            user_ns: 0,
            sys_ns: 0,
            started_ns: 0,
            start_after: None,
            exited_ns: None,
            is_workload,
            pending_wait: None,
            nr_switches: 0,
            vruntime_ns: 0,
            sleeping: true,
            command: String::new(),
            exit_status: 0,
            message: String::new(),
        }
    }
}
