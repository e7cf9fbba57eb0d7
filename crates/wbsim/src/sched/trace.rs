//! The scheduler's tracepoints: `sched_switch` where a CPU changes task
//! (`__schedule`), `sched_wakeup` where a sleeping task becomes runnable
//! (`ttwu_do_wakeup`), printed only when a trace file is written.
//!
//! The model's switches happen at step boundaries: a task that sleeps
//! leaves its CPU at the end of its step, a woken task enters when its
//! CPU's `CpuFree` picks it. A sleeping workload task is shown in `D`
//! (the model's workload waits are all uninterruptible or killable:
//! `balance_dirty_pages` pauses, page and buffer locks, request and
//! writeback waits), a kernel thread in `S` (kswapd's and the fs threads'
//! interruptible sleeps; 6.1's idle kworkers, `I`, are not told apart).
//! A wake-up from an interrupt or a timer prints as `<idle>-0` on the
//! target CPU.

use super::Core;
use crate::kernel::{DirtyLimitScope, KernelProfile};
use crate::sched::{Step, Task};
use crate::sim::Ns;
use crate::trace::sched::{write_sched_switch, write_sched_wakeup};
use crate::trace::{task_pid, SchedTask, SwitchState, WritebackLayout};

/// The field layout of the tracepoints that changed between 3.x and 6.1
/// (`sched_wakeup`'s `success=1`, the dirty-throttling events' fields):
/// 6.1's for the node-scoped (4.8+) profiles, the model's node-scoped
/// presets being all 6.1; 3.x's for the rest.
pub(super) fn trace_layout(profile: &KernelProfile) -> WritebackLayout {
    match profile.dirty_limit_scope {
        DirtyLimitScope::PerNode => WritebackLayout::Linux6,
        _ => WritebackLayout::Linux3,
    }
}

/// Task `tid` (None: the idle task) as the tracepoints name it.
fn sched_task(tasks: &[Task], tid: Option<u32>) -> SchedTask<'_> {
    match tid {
        Some(t) => SchedTask {
            comm: &tasks[t as usize].name,
            pid: task_pid(t),
        },
        None => SchedTask { comm: "", pid: 0 },
    }
}

impl Core {
    /// The state `tid` leaves `cpu` in.
    fn switch_state(&self, cpu: usize, tid: u32) -> SwitchState {
        let task = &self.tasks[tid as usize];
        if task.exited_ns.is_some() {
            SwitchState::Zombie
        } else if self.is_runnable(cpu, tid) {
            SwitchState::Preempted
        } else if task.is_workload {
            SwitchState::DiskSleep
        } else {
            SwitchState::Sleeping
        }
    }

    /// `sched_switch` to `next` (None: idle) on `cpu` at `at`, from the
    /// task the trace last showed there.
    ///
    /// Inline for the test alone: a run without a trace file (most runs)
    /// pays no call (the function used to save and restore registers
    /// around the test: 0.65 G instructions in the writeback-plug fs_mark).
    #[inline(always)]
    pub(super) fn trace_switch(&mut self, cpu: usize, next: Option<u32>, at: Ns) {
        if self.tracer.is_writing() {
            self.write_switch(cpu, next, at);
        }
    }

    #[inline(never)]
    fn write_switch(&mut self, cpu: usize, next: Option<u32>, at: Ns) {
        let prev = self.runqueues[cpu].traced_task;
        if prev == next {
            return;
        }
        self.runqueues[cpu].traced_task = next;
        let state = match prev {
            Some(p) => self.switch_state(cpu, p),
            None => SwitchState::Running,
        };
        let Core { tasks, tracer, .. } = self;
        let (prev, next) = (sched_task(tasks, prev), sched_task(tasks, next));
        tracer.record_text(|s| write_sched_switch(s, cpu as u32, at, prev, state, next));
    }

    /// A step of `tid` on `cpu` ended in a sleep or exit at `end`: if
    /// nothing else is runnable there, the CPU goes idle then.
    pub(super) fn trace_switch_out(&mut self, tid: u32, cpu: usize, step: Step, end: Ns) {
        let rq = &self.runqueues[cpu];
        if step == Step::Continue || rq.curr.is_some() || !rq.queued.is_empty() {
            return;
        }
        debug_assert_eq!(rq.traced_task.unwrap_or(tid), tid);
        self.trace_switch(cpu, None, end);
    }

    /// `sched_wakeup` of `tid`, made runnable on `target_cpu` at `at`.
    #[inline(always)]
    pub(super) fn trace_wakeup(&mut self, tid: u32, target_cpu: usize, at: Ns) {
        if self.tracer.is_writing() {
            self.write_wakeup(tid, target_cpu, at);
        }
    }

    #[inline(never)]
    fn write_wakeup(&mut self, tid: u32, target_cpu: usize, at: Ns) {
        let waker = self.tasks[tid as usize].waker;
        let cpu = waker.map_or(target_cpu, |w| self.tasks[w as usize].cpu);
        let layout = self.trace_layout;
        let Core { tasks, tracer, .. } = self;
        let (waker, woken) = (sched_task(tasks, waker), sched_task(tasks, Some(tid)));
        let (cpu, target) = (cpu as u32, target_cpu as u32);
        tracer.record_text(|s| write_sched_wakeup(s, waker, cpu, at, woken, target, layout));
    }
}
