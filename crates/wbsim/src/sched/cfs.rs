//! Sharing a CPU between tasks: a model of the Completely Fair Scheduler
//! (`kernel/sched_fair.c`, 2.6.24 – 3.x) for tasks of equal weight.
//!
//! Why it matters here: on a one-CPU machine the writer and kswapd compete
//! for the CPU. A woken kswapd preempts the writer (wakeup preemption with
//! sleeper credit) and reclaims in its own time slice, so the writer only
//! meets an empty free list, and reclaims directly, while kswapd is blocked
//! (on a request queue, in `congestion_wait`).
//!
//! What is modelled, from 3.0's `sched_fair.c`:
//! - every task has a `vruntime`, its CPU time (all tasks are nice 0);
//!   the CPU runs the runnable task with the smallest one;
//! - `place_entity`: a waking task is placed no earlier than
//!   `min_vruntime - sysctl_sched_latency / 2` (GENTLE_FAIR_SLEEPERS);
//! - `check_preempt_wakeup` / `wakeup_preempt_entity`: a woken task preempts
//!   the running one if it is behind by more than `sysctl_sched_wakeup_granularity`;
//! - `check_preempt_tick`: the running task is switched out once it has run
//!   its slice (`sched_slice`: the period over the runnable tasks), or after
//!   the minimum granularity if it is ahead of the leftmost by more than a slice;
//! - the tunables scaled by `1 + ilog2(ncpus)` (SCHED_TUNABLESCALING_LOG).
//!
//! - wake-up placement (`select_task_rq_fair` → `select_idle_sibling`,
//!   2.6.32 – 3.x; `wake_idle` over SD_WAKE_IDLE domains before): a woken
//!   task runs on its previous CPU if that is idle, else on an idle CPU
//!   sharing its last-level cache, else it queues on its previous CPU. All
//!   the machine's CPUs are taken to share one LLC (one package, as QEMU's
//!   `-smp N` presents since 6.2, and the seeds' single-socket machines).
//!
//! - an idle CPU's wake-up latency (the machine's `idle_wakeup_us`): a
//!   task woken onto an idle CPU runs that long after its wake-up; under
//!   QEMU's TCG a halted vCPU's thread waits for the host to run it.
//!
//! Not modelled: preemption inside a step (a step is short, microseconds),
//! timer ticks (the checks run at each step's end), periodic and new-idle
//! load balancing (a queued task waits on its CPU even if another goes
//! idle), the next/last buddies. `wake_affine`'s choice between the
//! waker's CPU and the previous one when no CPU is idle is `pelt.rs`'s,
//! behind the profile's `wake_affine_weight`.
//!
//! Preemption points: a preemption asked for (`need_resched`) happens at
//! the running task's next step end, unless the task is in kernel code
//! with none (`Task::no_preempt`, set by the code it runs: 6.1 ext4's
//! bio submission loop); the request then stays until it is out.

use super::{Core, Step};
use crate::sim::{EventKind, Ns, NS_PER_US};

/// 3.0 defaults for one CPU; scaled by [`SchedTunables::for_cpus`].
const SCHED_LATENCY_NS: Ns = 6_000 * NS_PER_US;
const SCHED_MIN_GRANULARITY_NS: Ns = 750 * NS_PER_US;
const SCHED_WAKEUP_GRANULARITY_NS: Ns = 1_000 * NS_PER_US;
/// `sched_nr_latency`: beyond this many runnable tasks the period stretches.
const SCHED_NR_LATENCY: u64 = 8;

#[derive(Debug, Clone, Copy)]
pub struct SchedTunables {
    pub latency_ns: Ns,
    pub min_granularity_ns: Ns,
    pub wakeup_granularity_ns: Ns,
}

impl SchedTunables {
    /// `update_sysctl`: factor `1 + ilog2(min(ncpus, 8))`.
    pub fn for_cpus(ncpus: usize) -> Self {
        let factor = 1 + (ncpus.clamp(1, 8) as u64).ilog2() as Ns;
        SchedTunables {
            latency_ns: SCHED_LATENCY_NS * factor,
            min_granularity_ns: SCHED_MIN_GRANULARITY_NS * factor,
            wakeup_granularity_ns: SCHED_WAKEUP_GRANULARITY_NS * factor,
        }
    }

    /// `sched_slice` for equal weights: `__sched_period(nr) / nr`.
    fn slice_ns(&self, nr_running: u64) -> Ns {
        let period = if nr_running > SCHED_NR_LATENCY {
            self.min_granularity_ns * nr_running
        } else {
            self.latency_ns
        };
        period / nr_running.max(1)
    }
}

/// One CPU's run queue (`struct cfs_rq`).
#[derive(Debug, Clone, Default)]
pub struct RunQueue {
    /// When the step the CPU last ran ends.
    pub busy_until: Ns,
    /// The task that ran last and wants to go on (`cfs_rq->curr`).
    pub curr: Option<u32>,
    /// Runnable tasks waiting for the CPU (the rbtree; a handful at most).
    pub queued: Vec<u32>,
    pub min_vruntime_ns: Ns,
    /// A woken task should preempt `curr` at the end of its step.
    pub need_resched: bool,
    /// `curr`'s CPU time when it was picked (`prev_sum_exec_runtime`).
    pub curr_picked_exec_ns: Ns,
    /// A `CpuFree` event is pending at `busy_until`.
    pub free_event_pending: bool,
    /// The task the trace last switched in here (None: idle).
    pub traced_task: Option<u32>,
}

impl Core {
    #[inline]
    fn task_exec_ns(&self, tid: u32) -> Ns {
        let t = &self.tasks[tid as usize];
        t.user_ns + t.sys_ns
    }

    #[inline]
    pub(super) fn is_runnable(&self, cpu: usize, tid: u32) -> bool {
        let rq = &self.runqueues[cpu];
        rq.curr == Some(tid) || rq.queued.contains(&tid)
    }

    /// A task's wake-up (or start) event: `enqueue_task_fair` +
    /// `check_preempt_wakeup`. Returns the CPU to run `schedule()` on now,
    /// if it is idle.
    #[inline]
    pub fn wake_up_task(&mut self, tid: u32, at: Ns) -> Option<usize> {
        if self.tasks[tid as usize].exited_ns.is_some() {
            // A stale wake-up (a wait queue the task left by exiting).
            return None;
        }
        let prev_cpu = self.tasks[tid as usize].cpu;
        if self.is_runnable(prev_cpu, tid) {
            return None;
        }
        let cpu = self.select_wake_cpu(tid, prev_cpu, at);
        let tun = self.tunables;
        let min_v = self.runqueues[cpu].min_vruntime_ns;
        let weigh_loads = self.weighs_loads();
        let task = &mut self.tasks[tid as usize];
        if cpu != prev_cpu {
            // Migration keeps the task's lag behind its queue's
            // min_vruntime (`task_waking_fair` + `enqueue_entity`).
            let old_min = self.runqueues[prev_cpu].min_vruntime_ns;
            task.vruntime_ns = (task.vruntime_ns + min_v).saturating_sub(old_min);
            task.cpu = cpu;
        }
        if task.sleeping {
            if weigh_loads {
                task.load.update(at, false);
            }
            task.sleeping = false;
            // place_entity: sleeps up to half a latency period do not count.
            let floor = min_v.saturating_sub(tun.latency_ns / 2);
            task.vruntime_ns = task.vruntime_ns.max(floor);
        }
        let woken_v = task.vruntime_ns;
        self.runqueues[cpu].queued.push(tid);
        self.trace_wakeup(tid, cpu, at);
        let rq = &mut self.runqueues[cpu];
        if rq.busy_until > at {
            if let Some(c) = rq.curr {
                let curr_v = self.tasks[c as usize].vruntime_ns;
                if curr_v > woken_v + tun.wakeup_granularity_ns {
                    self.runqueues[cpu].need_resched = true;
                }
            }
            self.cpu_free_at(cpu);
            None
        } else if !self.runqueues[cpu].free_event_pending {
            if self.idle_wakeup_ns > 0 && self.runqueues[cpu].curr.is_none() {
                // The idle CPU picks the task up once it is out of idle.
                self.runqueues[cpu].busy_until = at + self.idle_wakeup_ns;
                self.cpu_free_at(cpu);
                return None;
            }
            Some(cpu)
        } else {
            None
        }
    }

    /// `idle_cpu`: nothing running (not even the end of a step whose task
    /// has gone to sleep) and nothing queued.
    #[inline]
    fn cpu_idle_at(&self, cpu: usize, at: Ns) -> bool {
        let rq = &self.runqueues[cpu];
        rq.curr.is_none() && rq.queued.is_empty() && rq.busy_until <= at
    }

    /// `select_idle_sibling`: the previous CPU if idle, else the first idle
    /// CPU of the shared cache domain, else `wake_affine`'s choice (the
    /// previous CPU unless the profile weighs loads); all within the CPUs
    /// the task is allowed (`[first, end)`).
    #[inline]
    fn select_wake_cpu(&self, tid: u32, prev_cpu: usize, at: Ns) -> usize {
        let allowed = self.tasks[tid as usize].cpus_allowed;
        let (first, end) = allowed.unwrap_or((0, self.runqueues.len()));
        let prev = if (first..end).contains(&prev_cpu) {
            prev_cpu
        } else {
            first
        };
        if self.cpu_idle_at(prev, at) {
            return prev;
        }
        (first..end)
            .find(|&c| self.cpu_idle_at(c, at))
            .unwrap_or_else(|| self.wake_affine_target(tid, prev, at))
    }

    /// Make sure the CPU looks for work when its current step ends.
    /// Inline: a run of many CPUs calls it about once per event (the
    /// writeback-plug fs_mark, 4.1 M calls in its first 4.4 M events), and
    /// out of line the call cost about as much as the body.
    #[inline]
    fn cpu_free_at(&mut self, cpu: usize) {
        let rq = &mut self.runqueues[cpu];
        if !rq.free_event_pending {
            rq.free_event_pending = true;
            self.events
                .push(rq.busy_until, EventKind::CpuFree { cpu: cpu as u32 });
        }
    }

    /// The `CpuFree` event.
    #[inline]
    pub fn cpu_free(&mut self, cpu: usize) {
        self.runqueues[cpu].free_event_pending = false;
    }

    /// `check_preempt_tick` for `curr` at a step boundary, with `leftmost`
    /// the queued task of smallest vruntime.
    #[inline]
    fn curr_should_yield(&self, cpu: usize, curr: u32, leftmost: u32) -> bool {
        if self.tasks[curr as usize].no_preempt {
            return false;
        }
        let rq = &self.runqueues[cpu];
        if rq.need_resched {
            return true;
        }
        let tun = self.tunables;
        let ideal = tun.slice_ns(rq.queued.len() as u64 + 1);
        let ran = self.task_exec_ns(curr) - rq.curr_picked_exec_ns;
        if ran > ideal {
            return true;
        }
        if ran < tun.min_granularity_ns {
            return false;
        }
        let curr_v = self.tasks[curr as usize].vruntime_ns;
        let left_v = self.tasks[leftmost as usize].vruntime_ns;
        curr_v > left_v + ideal
    }

    /// The queued task with the smallest vruntime (ties: first queued).
    #[inline]
    fn leftmost(&self, cpu: usize) -> Option<usize> {
        let q = &self.runqueues[cpu].queued;
        (0..q.len()).min_by_key(|&i| self.tasks[q[i] as usize].vruntime_ns)
    }

    /// `pick_next_entity` → `set_next_entity`: queued task `i` becomes
    /// `curr`; the previous `curr`, if still runnable, goes back in the queue.
    /// Inline: a FUSE write switches between writer and daemon at every
    /// page.
    #[inline]
    fn pick_queued(&mut self, cpu: usize, i: usize) -> u32 {
        let tid = self.runqueues[cpu].queued[i];
        let exec = self.task_exec_ns(tid);
        let rq = &mut self.runqueues[cpu];
        rq.queued.swap_remove(i);
        if let Some(c) = rq.curr.take() {
            rq.queued.push(c);
        }
        rq.curr = Some(tid);
        rq.curr_picked_exec_ns = exec;
        tid
    }

    /// `update_min_vruntime`: never goes backwards. Called at every step's
    /// end; out of line, its entry and exit cost more than its body.
    #[inline(always)]
    fn update_min_vruntime(&mut self, cpu: usize) {
        self.runqueues[cpu].min_vruntime_ns = self.updated_min_vruntime(cpu);
    }

    /// What [`Core::update_min_vruntime`] would set.
    #[inline(always)]
    fn updated_min_vruntime(&self, cpu: usize) -> Ns {
        let curr_v = self.runqueues[cpu]
            .curr
            .map(|c| self.tasks[c as usize].vruntime_ns);
        self.min_vruntime_given_curr(cpu, curr_v)
    }

    /// What [`Core::update_min_vruntime`] would set with `curr`'s
    /// vruntime `curr_v` (`None`: no `curr`), for a caller that has it.
    #[inline(always)]
    fn min_vruntime_given_curr(&self, cpu: usize, curr_v: Option<Ns>) -> Ns {
        let rq = &self.runqueues[cpu];
        let left_v = self
            .leftmost(cpu)
            .map(|i| self.tasks[rq.queued[i] as usize].vruntime_ns);
        let v = match (curr_v, left_v) {
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) | (None, Some(a)) => a,
            (None, None) => return rq.min_vruntime_ns,
        };
        rq.min_vruntime_ns.max(v)
    }

    /// `schedule()` on a CPU whose step has ended: the task to run next,
    /// whose steps the machine then runs back to back
    /// ([`Core::begin_run`] ... [`Core::after_step`]).
    #[inline]
    pub fn pick_next(&mut self, cpu: usize, at: Ns) -> Option<u32> {
        if self.runqueues[cpu].busy_until > at {
            self.cpu_free_at(cpu);
            return None;
        }
        let leftmost = self.leftmost(cpu);
        let rq = &self.runqueues[cpu];
        let prev = rq.curr;
        let tid = match (prev, leftmost) {
            (None, None) => return None,
            (Some(c), None) => c,
            (Some(c), Some(i)) if !self.curr_should_yield(cpu, c, rq.queued[i]) => c,
            (_, Some(i)) => self.pick_queued(cpu, i),
        };
        // A task going on with no preemption point keeps the request.
        if !self.tasks[tid as usize].no_preempt {
            self.runqueues[cpu].need_resched = false;
        }
        // When `curr` goes on, min_vruntime already holds for it: its
        // vruntime last changed at its step's end, which updated
        // min_vruntime, and a task queued since can only lower
        // min(curr, leftmost), which min_vruntime never follows down.
        if prev != Some(tid) {
            self.update_min_vruntime(cpu);
        } else {
            debug_assert_eq!(
                self.updated_min_vruntime(cpu),
                self.runqueues[cpu].min_vruntime_ns
            );
        }
        self.trace_switch(cpu, Some(tid), at);
        Some(tid)
    }

    /// The task starts running: a new wake-up token (older wake-ups are
    /// stale), and the congestion wait it slept in, if any, for its
    /// tracepoint.
    #[inline]
    pub fn begin_run(&mut self, tid: u32) -> (u32, Option<super::PendingWait>) {
        self.current = Some(tid);
        let task = &mut self.tasks[tid as usize];
        task.token = task.token.wrapping_add(1);
        self.step_cost_ns = 0;
        self.step_user_ns = 0;
        self.dispatch_steps = 0;
        (task.token, task.pending_wait.take())
    }

    /// A step starts: nothing charged yet.
    #[inline]
    pub fn begin_step(&mut self) {
        self.step_cost_ns = 0;
        self.step_user_ns = 0;
        self.dispatch_steps += 1;
    }

    /// The step has run: charge its CPU time to the task's vruntime and
    /// keep the CPU busy for it; a task that stops running leaves the CPU.
    /// Returns the step's cost and when it ends. Inline always: with
    /// `Core::continue_in_step` a second caller, LLVM kept it out of line,
    /// which cost the writeback-plug run 3 % more instructions.
    #[inline(always)]
    pub fn end_step(&mut self, tid: u32, cpu: usize, step: Step) -> (Ns, Ns) {
        let cost = self.step_cost_ns;
        let end = self.now + cost;
        let task = &mut self.tasks[tid as usize];
        task.vruntime_ns += cost;
        task.user_ns += self.step_user_ns;
        task.sys_ns += cost - self.step_user_ns;
        // `update_min_vruntime`, `curr` being the task whose step this
        // was: its vruntime is at hand (reading it again through
        // `rq.curr` cost writeback-plug's fs_mark 0.8 % of its
        // instructions).
        let curr_v = task.vruntime_ns;
        debug_assert_eq!(self.runqueues[cpu].curr, Some(tid));
        let min_v = self.min_vruntime_given_curr(cpu, Some(curr_v));
        let rq = &mut self.runqueues[cpu];
        rq.busy_until = end;
        rq.min_vruntime_ns = min_v;
        if step != Step::Continue {
            self.runqueues[cpu].curr = None;
            let weigh_loads = self.weighs_loads();
            let task = &mut self.tasks[tid as usize];
            if weigh_loads {
                task.load.update(end, true);
            }
            task.sleeping = step != Step::Exit;
            task.waker = None;
            task.no_preempt = false;
        }
        (cost, end)
    }

    /// After a step (and `sched_submit_work`): whether the task runs its
    /// next step at once ([`Core::goes_on_at`] the step's end); if not,
    /// its sleep, wake-up or exit is recorded and the CPU looks for work
    /// at the step's end.
    #[inline]
    pub fn after_step(
        &mut self,
        tid: u32,
        cpu: usize,
        step: Step,
        token: u32,
        (cost, end): (Ns, Ns),
    ) -> bool {
        match step {
            Step::Continue => {
                if self.goes_on_at(cpu, end) {
                    self.now = end;
                    return true;
                }
            }
            Step::SleepUntil(t) | Step::Wait(Some(t)) => {
                self.tasks[tid as usize].nr_switches += 1;
                self.events.push(
                    t.saturating_add(cost),
                    EventKind::RunTask { task: tid, token },
                );
            }
            Step::Wait(None) => self.tasks[tid as usize].nr_switches += 1,
            Step::Exit => {
                let task = &mut self.tasks[tid as usize];
                task.exited_ns = Some(end);
                if task.is_workload {
                    self.workload_left -= 1;
                }
                self.start_tasks_after(tid, end);
            }
        }
        self.current = None;
        self.trace_switch_out(tid, cpu, step, end);
        if self.runqueues[cpu].curr.is_some() || !self.runqueues[cpu].queued.is_empty() {
            self.cpu_free_at(cpu);
        }
        false
    }

    /// Start the tasks that were waiting for `tid` to exit.
    fn start_tasks_after(&mut self, tid: u32, at: Ns) {
        for t in 0..self.tasks.len() {
            if self.tasks[t].start_after == Some(tid) {
                self.tasks[t].start_after = None;
                self.tasks[t].started_ns = at;
                self.events.push(
                    at,
                    EventKind::RunTask {
                        task: t as u32,
                        token: self.tasks[t].token,
                    },
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::{preset, SysctlConfig};
    use crate::sched::{CoreConfig, IrqDelivery, Task, TaskStart};
    use crate::sim::CostTable;

    /// Two CPUs; task 0 runs on CPU 0 for the next millisecond; tasks 1
    /// and 2 sleep, last run on CPU 0.
    fn two_cpus_one_busy() -> Core {
        let mut core = Core::new(CoreConfig {
            hz: 1000,
            time_limit_ns: Ns::MAX,
            cost: CostTable::default(),
            profile: preset("3.2").unwrap(),
            sysctl: SysctlConfig::default(),
            cpus: 2,
            irq_delivery: IrqDelivery::FirstCpu,
            idle_wakeup_ns: 0,
        });
        for name in ["busy", "woken", "other"] {
            core.add_task(Task::new(name, 0, true), TaskStart::OnWakeUp);
        }
        core.runqueues[0].curr = Some(0);
        core.runqueues[0].busy_until = 1_000_000;
        core
    }

    /// As [`two_cpus_one_busy`], with task 2 running on CPU 1 for the
    /// next millisecond too: no CPU is idle, so a wake-up queues on the
    /// woken task's previous CPU, 0.
    fn two_cpus_both_busy() -> Core {
        let mut core = two_cpus_one_busy();
        core.runqueues[1].curr = Some(2);
        core.runqueues[1].busy_until = 1_000_000;
        core
    }

    #[test]
    fn a_task_woken_while_its_cpu_is_busy_runs_on_an_idle_one() {
        let mut core = two_cpus_one_busy();
        // select_idle_sibling: CPU 0 runs "busy", CPU 1 is idle.
        assert_eq!(core.wake_up_task(1, 0), Some(1));
        assert_eq!(core.tasks[1].cpu, 1);
        // Now no CPU is idle: the next one queues on its previous CPU.
        assert_eq!(core.wake_up_task(2, 0), None);
        assert_eq!(core.tasks[2].cpu, 0);
        assert!(core.runqueues[0].queued.contains(&2));
    }

    #[test]
    fn a_task_whose_cpu_is_idle_stays_there() {
        let mut core = two_cpus_one_busy();
        // At 2 ms CPU 0's step is over and nothing runs there.
        core.runqueues[0].curr = None;
        assert_eq!(core.wake_up_task(1, 2_000_000), Some(0));
        assert_eq!(core.tasks[1].cpu, 0);
        // A CPU still finishing the step of a task that went to sleep is
        // not idle.
        let mut core = two_cpus_one_busy();
        core.runqueues[0].curr = None;
        assert_eq!(core.wake_up_task(1, 500_000), Some(1));
    }

    /// `idle_wakeup_us`: a task woken onto an idle CPU runs that much
    /// later (the CPU looks busy until then, so a second wake-up queues
    /// behind it); one woken onto a busy CPU is not delayed further.
    #[test]
    fn an_idle_cpu_takes_its_wakeup_latency_to_run_the_task() {
        let mut core = two_cpus_one_busy();
        core.idle_wakeup_ns = 700_000;
        assert_eq!(core.wake_up_task(1, 0), None);
        assert_eq!(core.tasks[1].cpu, 1);
        assert_eq!(core.runqueues[1].busy_until, 700_000);
        assert_eq!(
            core.events.pop(),
            Some((700_000, EventKind::CpuFree { cpu: 1 }))
        );
        assert_eq!(core.pick_next(1, 700_000), Some(1));
        // CPU 0 is busy: the wake-up queues there with no latency added.
        assert_eq!(core.wake_up_task(2, 0), None);
        assert_eq!(core.tasks[2].cpu, 0);
        assert_eq!(core.runqueues[0].busy_until, 1_000_000);
    }

    /// A woken task that should preempt (`need_resched`) waits while the
    /// running one is in code with no preemption point, and runs at the
    /// first step end after it.
    #[test]
    fn need_resched_waits_for_a_preemption_point() {
        let mut core = two_cpus_both_busy();
        core.tasks[0].vruntime_ns = 10_000_000;
        core.tasks[0].no_preempt = true;
        assert_eq!(core.wake_up_task(1, 0), None);
        assert!(core.runqueues[0].need_resched);
        assert_eq!(
            core.pick_next(0, 1_000_000),
            Some(0),
            "no preemption point yet"
        );
        core.tasks[0].no_preempt = false;
        core.runqueues[0].busy_until = 1_010_000;
        assert_eq!(core.pick_next(0, 1_010_000), Some(1));
    }

    /// `pick_next` leaves min_vruntime alone when `curr` goes on: its
    /// step end set it, and a task woken since, even one placed behind
    /// it, cannot raise it.
    #[test]
    fn min_vruntime_holds_when_curr_goes_on_after_a_wake_up() {
        let mut core = two_cpus_both_busy();
        core.tasks[0].vruntime_ns = 50_000_000;
        core.tasks[1].vruntime_ns = 50_000_000;
        core.begin_run(0);
        core.begin_step();
        core.step_cost_ns = 1_000_000;
        core.end_step(0, 0, Step::Continue);
        assert_eq!(core.runqueues[0].min_vruntime_ns, 51_000_000);
        // Task 1 wakes onto busy CPU 0 with a smaller vruntime, by less
        // than the wake-up granularity: it does not preempt, curr has run
        // less than the minimum granularity, and min_vruntime stays.
        assert_eq!(core.wake_up_task(1, 0), None);
        assert_eq!(core.tasks[1].vruntime_ns, 50_000_000);
        assert!(!core.runqueues[0].need_resched);
        assert_eq!(core.pick_next(0, 1_000_000), Some(0));
        assert_eq!(core.runqueues[0].min_vruntime_ns, 51_000_000);
        assert_eq!(core.updated_min_vruntime(0), 51_000_000);
    }

    #[test]
    fn tunables_scale_with_log2_of_cpus() {
        let one = SchedTunables::for_cpus(1);
        assert_eq!(one.latency_ns, 6_000_000);
        assert_eq!(SchedTunables::for_cpus(2).latency_ns, 12_000_000);
        assert_eq!(SchedTunables::for_cpus(4).wakeup_granularity_ns, 3_000_000);
        assert_eq!(SchedTunables::for_cpus(64).min_granularity_ns, 3_000_000);
        // Two tasks share the 6 ms period; twenty stretch it.
        assert_eq!(one.slice_ns(2), 3_000_000);
        assert_eq!(one.slice_ns(20), 750_000);
    }
}
