//! A task as the scheduler sees it (`struct task_struct`'s scheduling and
//! accounting part); what it runs and each subsystem's per-task state are
//! kept by their owners, indexed by the task id.

use super::pelt::LoadAvg;
use crate::sim::Ns;

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
    /// The CPUs the task may run on (`cpus_allowed`: a NUMA node's, for
    /// a task bound to it or a node's kswapd); `None`: every CPU.
    pub cpus_allowed: Option<(usize, usize)>,
    /// Wake-up token; an event carrying an older token is stale. It
    /// wraps at 2^32 runs of the task: a stale wake-up would be taken for
    /// a fresh one only if the task ran 2^32 times between its push and
    /// its time, which no run comes near (the largest makes 56 M events).
    pub token: u32,
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
    /// The task that woke it from its last sleep (None: a timer or an
    /// interrupt), for `sched_wakeup`.
    pub waker: Option<u32>,
    /// PELT load average (`se.avg.load_avg`), for wake-up placement.
    pub load: LoadAvg,
    /// Running kernel code with no preemption point (no `cond_resched`,
    /// no `might_sleep` under CONFIG_PREEMPT_VOLUNTARY): a `need_resched`
    /// set by a wake-up, or an expired slice, waits until it is out.
    /// Cleared when the task sleeps.
    pub no_preempt: bool,
    /// The scenario's command line (empty for kernel threads and extra
    /// fs_mark threads).
    pub command: String,
    /// Exit status (`128 + signal` when killed by a signal) and what the
    /// program printed on stderr before exiting.
    pub exit_status: i32,
    pub message: String,
}

impl Task {
    /// Let the task run only on CPUs `[first, end)` (`cpus_allowed`),
    /// starting on the first of them unless it is on one already.
    pub fn bind(&mut self, (first, end): (usize, usize)) {
        self.cpus_allowed = Some((first, end));
        if !(first..end).contains(&self.cpu) {
            self.cpu = first;
        }
    }

    pub fn new(name: &str, cpu: usize, is_workload: bool) -> Task {
        Task {
            name: name.to_string(),
            cpu,
            cpus_allowed: None,
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
            waker: None,
            load: LoadAvg::initial(is_workload),
            no_preempt: false,
            command: String::new(),
            exit_status: 0,
            message: String::new(),
        }
    }
}
