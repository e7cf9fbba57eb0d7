//! The clock, the CPUs and the tasks: what every subsystem charges its
//! work to, wakes and traces through (`kernel/sched/`, `kernel/time/`).
//!
//! [`Core`] owns the simulated clock and event queue, the kernel profile and
//! sysctls the run was built with, the tasks and their CPUs' run queues, and
//! the tracepoint sink. Every subsystem reaches it through [`HasCore`],
//! which the machine (`system::System`) implements.

mod cfs;
mod pelt;
mod task;
mod trace;

use serde::Serialize;

use crate::kernel::{KernelProfile, SysctlConfig};
use crate::sim::{CostTable, EventKind, EventQueue, Ns};
use crate::trace::{TraceEvent, Tracer, WritebackLayout};

pub use cfs::{RunQueue, SchedTunables};
pub use task::{PendingWait, Step, Task};

/// How device interrupts reach the CPUs; the interrupt's time is charged to
/// whatever task runs on the CPU that takes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum IrqDelivery {
    /// Physical destination mode: an interrupt whose affinity is all CPUs
    /// goes to the first of them (x86 `physflat`, chosen for more than 8
    /// CPUs without x2apic; the default).
    FirstCpu,
    /// Lowest-priority delivery as KVM emulates it (x2apic cluster mode in
    /// the guest): `__apic_accept_irq` bumps the accepting vCPU's
    /// `apic_arb_prio`, so the next interrupt goes to another vCPU of the
    /// cluster and interrupts rotate over the CPUs (KVM before the vector
    /// hashing of Linux 4.7).
    RoundRobin,
}

impl IrqDelivery {
    /// The name used in scenario files.
    pub fn as_str(self) -> &'static str {
        match self {
            IrqDelivery::FirstCpu => "first-cpu",
            IrqDelivery::RoundRobin => "round-robin",
        }
    }
}

/// The clock, CPUs and tasks of one run.
pub struct Core {
    now: Ns,
    hz: u64,
    time_limit_ns: Ns,
    events: EventQueue,
    cost: CostTable,
    profile: KernelProfile,
    sysctl: SysctlConfig,
    tasks: Vec<Task>,
    /// Per-CPU run queues (CFS).
    runqueues: Vec<RunQueue>,
    tunables: SchedTunables,
    /// Which CPU takes device interrupts, and for round-robin delivery the
    /// CPU that takes the next one.
    irq_delivery: IrqDelivery,
    irq_next_cpu: usize,
    /// From a wake-up to the task running on an idle CPU (the machine's
    /// `idle_wakeup_us`).
    idle_wakeup_ns: Ns,
    /// CPU time charged by the step being run, system and user.
    step_cost_ns: Ns,
    /// The user CPU time among `step_cost_ns`.
    step_user_ns: Ns,
    /// Steps begun in the current dispatch ([`Core::begin_run`]).
    dispatch_steps: u32,
    /// Tasks in `congestion_wait` (woken by any queue leaving congestion).
    congestion_waiters: Vec<u32>,
    /// vmscan/writeback tracepoints: totals always, text on request.
    tracer: Tracer,
    /// Each node's kswapd's task id: their tracepoints are told apart
    /// from direct reclaim's.
    kswapd_tasks: Vec<u32>,
    events_processed: u64,
    /// Stop after this many events (`RunOptions::max_events`).
    max_events: u64,
    /// Workload tasks that have not exited yet.
    workload_left: usize,
    /// The task whose steps are being run (None: the engine, an interrupt).
    current: Option<u32>,
    /// The era of the tracepoints' field layouts (`trace::trace_layout`).
    trace_layout: WritebackLayout,
}

/// When a task added at boot first runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskStart {
    /// At this time (0 for a workload task; a kernel thread's first timer).
    At(Ns),
    /// When that task exits (a shell's `a; b`).
    After(u32),
    /// When something wakes it (a daemon waiting for requests).
    OnWakeUp,
}

/// What a run is built with, for [`Core::new`].
pub struct CoreConfig {
    pub hz: u64,
    pub time_limit_ns: Ns,
    pub cost: CostTable,
    pub profile: KernelProfile,
    pub sysctl: SysctlConfig,
    pub cpus: usize,
    pub irq_delivery: IrqDelivery,
    pub idle_wakeup_ns: Ns,
}

impl Core {
    pub fn new(c: CoreConfig) -> Core {
        let trace_layout = trace::trace_layout(&c.profile);
        Core {
            now: 0,
            hz: c.hz,
            time_limit_ns: c.time_limit_ns,
            events: EventQueue::with_capacity(1024),
            cost: c.cost,
            profile: c.profile,
            sysctl: c.sysctl,
            tasks: Vec::new(),
            runqueues: vec![RunQueue::default(); c.cpus],
            tunables: SchedTunables::for_cpus(c.cpus),
            irq_delivery: c.irq_delivery,
            irq_next_cpu: 0,
            idle_wakeup_ns: c.idle_wakeup_ns,
            step_cost_ns: 0,
            step_user_ns: 0,
            dispatch_steps: 0,
            congestion_waiters: Vec::new(),
            tracer: {
                let mut t = Tracer::default();
                t.set_layout(trace_layout);
                t
            },
            kswapd_tasks: Vec::new(),
            events_processed: 0,
            max_events: u64::MAX,
            workload_left: 0,
            current: None,
            trace_layout,
        }
    }

    /// Add a task (at boot); returns its id.
    pub fn add_task(&mut self, mut task: Task, start: TaskStart) -> u32 {
        let tid = self.tasks.len() as u32;
        self.workload_left += task.is_workload as usize;
        match start {
            TaskStart::At(t) => self.events.push(
                t,
                EventKind::RunTask {
                    task: tid,
                    token: 0,
                },
            ),
            TaskStart::After(other) => task.start_after = Some(other),
            TaskStart::OnWakeUp => {}
        }
        self.tasks.push(task);
        tid
    }

    /// The next node's kswapd is task `tid`.
    pub fn add_kswapd_task(&mut self, tid: u32) {
        self.kswapd_tasks.push(tid);
    }

    pub fn set_max_events(&mut self, n: u64) {
        self.max_events = n;
    }

    /// Tests: change the sysctls of a built machine.
    #[cfg(test)]
    pub(crate) fn sysctl_mut(&mut self) -> &mut SysctlConfig {
        &mut self.sysctl
    }

    pub fn tracer(&self) -> &Tracer {
        &self.tracer
    }

    pub fn tracer_mut(&mut self) -> &mut Tracer {
        &mut self.tracer
    }

    /// Which era's field layouts the tracepoints print (3.x or 6.1).
    pub fn trace_layout(&self) -> WritebackLayout {
        self.trace_layout
    }

    #[inline]
    pub fn events_processed(&self) -> u64 {
        self.events_processed
    }

    #[inline]
    pub fn workload_left(&self) -> usize {
        self.workload_left
    }

    pub fn nr_cpus(&self) -> usize {
        self.runqueues.len()
    }

    #[cfg(test)]
    pub(crate) fn runqueue_mut(&mut self, cpu: usize) -> &mut RunQueue {
        &mut self.runqueues[cpu]
    }

    pub fn congestion_waiters(&self) -> &[u32] {
        &self.congestion_waiters
    }

    /// The engine's next event, in time order.
    #[inline]
    pub fn pop_event(&mut self) -> Option<(Ns, EventKind)> {
        self.events.pop()
    }

    #[inline]
    pub fn time_limit_ns(&self) -> Ns {
        self.time_limit_ns
    }

    /// The run is cut at its time limit: the clock stops there.
    pub fn stop_at_time_limit(&mut self) {
        self.now = self.time_limit_ns;
    }

    /// Move the clock to an event's time (never backwards).
    #[inline]
    pub fn advance_to(&mut self, t: Ns) {
        if t > self.now {
            self.now = t;
        }
    }

    /// Interrupt context runs on its device's own time: a completion sets
    /// the clock to its time while it runs and then back.
    pub fn set_interrupt_clock(&mut self, t: Ns) {
        self.now = t;
    }

    /// Count one event against the budget; false once it is spent.
    #[inline]
    pub fn take_event_budget(&mut self) -> bool {
        if self.events_processed >= self.max_events {
            return false;
        }
        self.events_processed += 1;
        true
    }

    /// Whether the task running on `cpu` goes on with its next step at
    /// `end`, when this one ends, in the same dispatch: nothing else is
    /// queued on the CPU or due before then, the time limit is not
    /// passed, and the dispatch has not run [`MAX_STEPS_PER_DISPATCH`].
    #[inline(always)]
    fn goes_on_at(&self, cpu: usize, end: Ns) -> bool {
        let next = self.events.peek_time().unwrap_or(Ns::MAX);
        self.runqueues[cpu].queued.is_empty()
            && end < next
            && end <= self.time_limit_ns
            && self.dispatch_steps < MAX_STEPS_PER_DISPATCH
    }

    /// A step of `tid` that would end `Continue` ends here and its next
    /// step starts, without leaving the step function, when the engine
    /// would run that next step at once anyway ([`Core::after_step`]);
    /// false (nothing changed) when it would not, and the step must
    /// return. The same charges, clock and count as a step returned to
    /// the engine's loop (`System::run_task`), without the way out and
    /// back in: dd's `write(2)` takes a step a page.
    #[inline(always)]
    pub fn continue_in_step(&mut self, tid: u32) -> bool {
        let cpu = self.tasks[tid as usize].cpu;
        let end = self.now + self.step_cost_ns;
        if !self.goes_on_at(cpu, end) {
            return false;
        }
        self.end_step(tid, cpu, Step::Continue);
        self.now = end;
        self.begin_step();
        true
    }
}

/// Steps run back to back in one dispatch only up to this many; then the
/// CPU goes through a `CpuFree` event at the step's end, which changes
/// nothing (the queue is empty, so the same task goes on) but hands
/// control back to the engine loop, so the time limit and an event budget
/// apply even to steps that cost 0 ns (`[cpu_cost]` all 0: found by
/// fuzzing).
const MAX_STEPS_PER_DISPATCH: u32 = 1 << 16;

/// Access to the run's [`Core`], and the services every subsystem uses.
pub trait HasCore {
    fn core(&self) -> &Core;
    fn core_mut(&mut self) -> &mut Core;

    /// For a task whose every step is `step` (dd, IOzone, mapwrite,
    /// memtouch): run it again in place, each run ended and the next begun
    /// by [`Core::continue_in_step`], while it ends `Continue` and the
    /// engine would run the task's next step at once. What the engine's
    /// loop (`System::run_task`) would do, step for step, without going
    /// out of the task's step function and back in between pages.
    #[inline(always)]
    fn steps_in_place(&mut self, tid: u32, step: impl FnMut(&mut Self) -> Step) -> Step {
        self.steps_in_place_while(tid, step, |_| true)
    }

    /// [`HasCore::steps_in_place`] for a task whose next step is `step`
    /// only while `next_is_step` says so (fs_mark writing a file); when
    /// it does not, the step returns to the engine, which calls the
    /// task's own step function.
    #[inline(always)]
    fn steps_in_place_while(
        &mut self,
        tid: u32,
        mut step: impl FnMut(&mut Self) -> Step,
        mut next_is_step: impl FnMut(&mut Self) -> bool,
    ) -> Step {
        loop {
            let s = step(self);
            if s != Step::Continue || !next_is_step(self) || !self.core_mut().continue_in_step(tid)
            {
                return s;
            }
        }
    }

    #[inline]
    fn now(&self) -> Ns {
        self.core().now
    }

    /// `HZ`, from the scenario.
    #[inline]
    fn hz(&self) -> u64 {
        self.core().hz
    }

    /// Jiffies to nanoseconds.
    #[inline]
    fn jiffies_ns(&self, jiffies: u64) -> Ns {
        jiffies * 1_000_000_000 / self.core().hz
    }

    #[inline]
    fn cost(&self) -> &CostTable {
        &self.core().cost
    }

    /// The kernel profile: read only where an era-varying mechanism is
    /// dispatched (see ARCHITECTURE.md).
    #[inline]
    fn profile(&self) -> &KernelProfile {
        &self.core().profile
    }

    #[inline]
    fn sysctl(&self) -> &SysctlConfig {
        &self.core().sysctl
    }

    #[inline]
    fn task(&self, tid: u32) -> &Task {
        &self.core().tasks[tid as usize]
    }

    #[inline]
    fn task_mut(&mut self, tid: u32) -> &mut Task {
        &mut self.core_mut().tasks[tid as usize]
    }

    fn tasks(&self) -> &[Task] {
        &self.core().tasks
    }

    fn nr_tasks(&self) -> usize {
        self.core().tasks.len()
    }

    /// Node 0's kswapd.
    fn kswapd_task(&self) -> u32 {
        self.kswapd_task_of(0)
    }

    /// Node `nid`'s kswapd.
    fn kswapd_task_of(&self, nid: usize) -> u32 {
        self.core().kswapd_tasks[nid]
    }

    /// CPU time charged so far by the step being run.
    #[inline]
    fn step_cost_ns(&self) -> Ns {
        self.core().step_cost_ns
    }

    /// Where the running step's work has got to: its effects apply at its
    /// start, but the CPU time it has charged so far has run up to here.
    #[inline]
    fn step_now(&self) -> Ns {
        let c = self.core();
        c.now + c.step_cost_ns
    }

    /// Charge kernel CPU time to the running task `tid`. The step's effects
    /// are applied at its start; its CPU keeps it busy for the charged
    /// time. The step's total goes to the task's `sys_ns` when the step
    /// ends ([`Core::end_step`]): a page write charges several costs, and
    /// adding each to the task as well was a bounds-checked store apiece.
    #[inline(always)]
    fn charge_sys(&mut self, tid: u32, ns: Ns) {
        let c = self.core_mut();
        debug_assert!(
            c.current.is_none_or(|t| t == tid),
            "charge to a task not running"
        );
        c.step_cost_ns += ns;
    }

    /// Charge user CPU time to the running task `tid` (see `charge_sys`).
    #[inline(always)]
    fn charge_user(&mut self, tid: u32, ns: Ns) {
        let c = self.core_mut();
        debug_assert!(
            c.current.is_none_or(|t| t == tid),
            "charge to a task not running"
        );
        c.step_user_ns += ns;
        c.step_cost_ns += ns;
    }

    /// CPU time of a device interrupt and its softirq, on the CPU that
    /// `irq_delivery` picks: CPU 0 (physical destination mode; nothing such
    /// as irqbalance is assumed to move it — UNVERIFIED for the seeds'
    /// machines), or each CPU in turn (lowest-priority delivery as KVM
    /// emulates it). Without CONFIG_IRQ_TIME_ACCOUNTING the time is charged
    /// as system time to the task running there, which it also delays; an
    /// idle CPU absorbs it.
    fn charge_irq(&mut self, ns: Ns) {
        if ns == 0 {
            return;
        }
        let c = self.core_mut();
        let cpu = match c.irq_delivery {
            IrqDelivery::FirstCpu => 0,
            IrqDelivery::RoundRobin => {
                let cpu = c.irq_next_cpu;
                c.irq_next_cpu = (cpu + 1) % c.runqueues.len();
                cpu
            }
        };
        let now = c.now;
        let rq = &mut c.runqueues[cpu];
        if let Some(t) = rq.curr.filter(|_| rq.busy_until > now) {
            rq.busy_until += ns;
            c.tasks[t as usize].sys_ns += ns;
        }
    }

    /// Queue an engine event.
    #[inline]
    fn push_event(&mut self, at: Ns, ev: EventKind) {
        self.core_mut().events.push(at, ev);
    }

    /// Make a task runnable now, unless it already has a fresher wake-up.
    fn wake_task(&mut self, tid: u32) {
        let c = self.core_mut();
        c.tasks[tid as usize].waker = c.current;
        let token = c.tasks[tid as usize].token;
        c.events
            .push(c.now, EventKind::RunTask { task: tid, token });
    }

    /// Emit a tracepoint from task `tid` at the current time.
    fn trace(&mut self, tid: u32, ev: TraceEvent) {
        // Stamp the event where the work it ends has got to.
        let ts_ns = self.step_now();
        let c = self.core_mut();
        let task = &c.tasks[tid as usize];
        let is_kswapd = c.kswapd_tasks.contains(&tid);
        c.tracer
            .record(tid, &task.name, task.cpu as u32, is_kswapd, ts_ns, &ev);
    }

    /// Wake every task in `congestion_wait` (`clear_bdi_congested`).
    fn wake_congestion_waiters(&mut self) {
        let c = self.core_mut();
        for i in 0..c.congestion_waiters.len() {
            let tid = c.congestion_waiters[i];
            c.tasks[tid as usize].waker = c.current;
            let token = c.tasks[tid as usize].token;
            c.events
                .push(c.now, EventKind::RunTask { task: tid, token });
        }
        c.congestion_waiters.clear();
    }

    /// `congestion_wait(BLK_RW_ASYNC, timeout)`: register and ask to sleep.
    fn congestion_wait(&mut self, tid: u32, timeout_ns: Ns) -> Step {
        self.congestion_sleep(tid, timeout_ns, false)
    }

    /// Sleep on the congestion wait queue until a device uncongests or the
    /// timeout; `iff_congested` names the caller's tracepoint
    /// (`wait_iff_congested` rather than `congestion_wait`).
    fn congestion_sleep(&mut self, tid: u32, timeout_ns: Ns, iff_congested: bool) -> Step {
        let c = self.core_mut();
        c.congestion_waiters.push(tid);
        c.tasks[tid as usize].pending_wait = Some(PendingWait {
            iff_congested,
            since_ns: c.now,
            timeout_ns,
        });
        Step::Wait(Some(c.now + timeout_ns))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::preset;

    /// One CPU, whose `curr` is task 0 (task 1 sleeps), in the first step
    /// of a dispatch that has charged 100 ns so far.
    fn running_a_step(time_limit_ns: Ns) -> Core {
        let mut core = Core::new(CoreConfig {
            hz: 1000,
            time_limit_ns,
            cost: CostTable::default(),
            profile: preset("3.3").unwrap(),
            sysctl: SysctlConfig::default(),
            cpus: 1,
            irq_delivery: IrqDelivery::FirstCpu,
            idle_wakeup_ns: 0,
        });
        for name in ["dd", "other"] {
            core.add_task(Task::new(name, 0, true), TaskStart::OnWakeUp);
        }
        core.runqueues[0].curr = Some(0);
        core.begin_run(0);
        core.begin_step();
        core.step_cost_ns = 100;
        core
    }

    #[test]
    fn a_step_goes_on_in_place_as_the_engine_would_run_the_next() {
        let mut core = running_a_step(Ns::MAX);
        assert!(core.continue_in_step(0));
        // Charged and ended as `end_step` would; the next step starts at
        // its end with nothing charged.
        assert_eq!(core.now, 100);
        assert_eq!(core.tasks[0].vruntime_ns, 100);
        assert_eq!(core.tasks[0].sys_ns, 100);
        assert_eq!(core.runqueues[0].busy_until, 100);
        assert_eq!((core.step_cost_ns, core.dispatch_steps), (0, 2));
    }

    #[test]
    fn a_step_returns_when_the_engine_has_something_else_first() {
        let unchanged = |core: &Core| {
            assert_eq!((core.now, core.tasks[0].vruntime_ns), (0, 0));
            assert_eq!((core.step_cost_ns, core.dispatch_steps), (100, 1));
        };
        // An event due when the step ends (an equal time goes first).
        let mut core = running_a_step(Ns::MAX);
        core.events.push(100, EventKind::CpuFree { cpu: 0 });
        assert!(!core.continue_in_step(0));
        unchanged(&core);
        // Another task waiting for the CPU.
        let mut core = running_a_step(Ns::MAX);
        core.runqueues[0].queued.push(1);
        assert!(!core.continue_in_step(0));
        unchanged(&core);
        // The step ends past the time limit.
        let mut core = running_a_step(99);
        assert!(!core.continue_in_step(0));
        unchanged(&core);
        // But an event after the step's end lets it go on.
        let mut core = running_a_step(Ns::MAX);
        core.events.push(101, EventKind::CpuFree { cpu: 0 });
        assert!(core.continue_in_step(0));
    }

    /// Steps that cost nothing still hand control back to the engine
    /// after `MAX_STEPS_PER_DISPATCH` of them, counted from the first.
    #[test]
    fn a_dispatch_runs_at_most_max_steps_in_place() {
        let mut core = running_a_step(Ns::MAX);
        core.step_cost_ns = 0;
        let mut went_on = 0;
        while core.continue_in_step(0) {
            went_on += 1;
        }
        assert_eq!(went_on, MAX_STEPS_PER_DISPATCH - 1);
    }
}
