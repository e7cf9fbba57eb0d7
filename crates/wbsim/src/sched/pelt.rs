//! Per-entity load tracking and the wake-up placement that reads it
//! (`kernel/sched/pelt.c`, `kernel/sched/fair.c` 4.x – 6.1: `wake_affine`,
//! `wake_affine_idle`, `wake_affine_weight`, `select_idle_sibling`; read
//! in Debian's 6.1 source).
//!
//! Why it matters: when no CPU is idle, 6.1 queues a woken task on the
//! CPU that woke it or on the one it last ran on, whichever carries less
//! load. A writer that sleeps most of the time in `balance_dirty_pages`
//! carries little, so the kswapd it wakes while the flusher runs on the
//! other CPU lands on the writer's CPU and preempts it before its next
//! allocation (traced 6.1 guests, docs/lab-results.md); a writer that never
//! sleeps (an unthrottled disk) carries a full CPU's load, and kswapd
//! queues behind the flusher instead.
//!
//! Load (PELT): a task's `load_avg` is its nice-0 weight (1024) times the
//! geometric average of the time it was runnable, halving every 32 ms
//! (`LOAD_AVG_PERIOD` periods of 1024 us; computed here continuously
//! rather than per period). A CPU's load (`cpu_load`, `cfs_rq_load_avg`)
//! is the sum over the tasks that last ran there, runnable or blocked.
//! New workload tasks start at full weight (`init_entity_runnable_average`),
//! kernel threads, asleep since boot, at 0.
//!
//! Placement, with `wake_affine_weight` on in the profile, for a wake-up
//! from a task on another CPU than the woken one's previous CPU when
//! neither is idle: the waker's CPU if `(load(this) + load(p)) * 100 <
//! (load(prev) - load(p)) * 108` (`WA_BIAS`: half of the MC domain's
//! `imbalance_pct` 117), else the previous CPU; an idle CPU of the cache
//! domain still comes first (`select_idle_sibling`). Not modelled:
//! `wake_wide` (taken as false: a waker and its wakee here do not flip
//! between many partners), sync wake-ups, task groups.

use super::Core;
use crate::sim::Ns;

/// Nice 0's weight, `scale_load_down(NICE_0_LOAD)`.
pub const NICE_0_LOAD: f64 = 1024.0;
/// The load average halves in 32 periods of 1024 us.
const LOAD_HALF_LIFE_NS: f64 = 32.0 * 1_024_000.0;
/// `100 + (imbalance_pct - 100) / 2` for the MC domain (117).
const WA_BIAS_PREV: f64 = 108.0;

/// A task's load average and when it was last brought up to date.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LoadAvg {
    pub load_avg: f64,
    pub updated_ns: Ns,
}

impl LoadAvg {
    /// A new task's: full weight for a forked program, 0 for a kernel
    /// thread that has slept since boot.
    pub fn initial(is_workload: bool) -> LoadAvg {
        LoadAvg {
            load_avg: if is_workload { NICE_0_LOAD } else { 0.0 },
            updated_ns: 0,
        }
    }

    /// The average at `at`, the task runnable (or not) since the update.
    pub fn at(&self, at: Ns, runnable: bool) -> f64 {
        let dt = at.saturating_sub(self.updated_ns) as f64;
        let decay = (-dt / LOAD_HALF_LIFE_NS).exp2();
        let target = if runnable { NICE_0_LOAD } else { 0.0 };
        self.load_avg * decay + target * (1.0 - decay)
    }

    /// Bring the average up to `at`.
    pub fn update(&mut self, at: Ns, runnable: bool) {
        if at > self.updated_ns {
            self.load_avg = self.at(at, runnable);
            self.updated_ns = at;
        }
    }
}

impl Core {
    /// Whether wake-ups weigh loads, so tasks' loads are tracked.
    #[inline]
    pub(super) fn weighs_loads(&self) -> bool {
        self.profile.wake_affine_weight
    }

    /// `task_h_load` (no task groups): the task's load at `at`.
    fn task_load(&self, tid: u32, at: Ns) -> f64 {
        let t = &self.tasks[tid as usize];
        t.load.at(at, !t.sleeping)
    }

    /// `cpu_load`: the load of every task that last ran on `cpu`.
    fn cpu_load(&self, cpu: usize, at: Ns) -> f64 {
        (0..self.tasks.len() as u32)
            .filter(|&t| self.tasks[t as usize].cpu == cpu)
            .filter(|&t| self.tasks[t as usize].exited_ns.is_none())
            .map(|t| self.task_load(t, at))
            .sum()
    }

    /// `wake_affine` when neither the waker's CPU nor `prev` is idle:
    /// the waker's CPU if it carries less load (with the woken task's own
    /// load moved there), else `prev` (`wake_affine_weight`).
    pub(super) fn wake_affine_target(&self, tid: u32, prev: usize, at: Ns) -> usize {
        let Some(waker) = self.tasks[tid as usize].waker else {
            return prev;
        };
        let this = self.tasks[waker as usize].cpu;
        if !self.weighs_loads() || this == prev {
            return prev;
        }
        if let Some((first, end)) = self.tasks[tid as usize].cpus_allowed {
            if !(first..end).contains(&this) {
                return prev;
            }
        }
        let task_load = self.task_load(tid, at);
        let this_eff = (self.cpu_load(this, at) + task_load) * 100.0;
        let prev_eff = (self.cpu_load(prev, at) - task_load) * WA_BIAS_PREV;
        if this_eff < prev_eff {
            this
        } else {
            prev
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::{preset, SysctlConfig};
    use crate::sched::{CoreConfig, IrqDelivery, Task, TaskStart};
    use crate::sim::CostTable;

    /// Two busy CPUs at 100 ms: "writer" (task 0) runs on CPU 0, "flusher"
    /// (task 1) on CPU 1; "kswapd" (task 2) sleeps, last ran on CPU 1, and
    /// is woken by the writer. Each load is given as a fraction of a CPU.
    fn two_busy_cpus(weigh: bool, writer_load: f64, flusher_load: f64) -> Core {
        let mut profile = preset("6.1").unwrap();
        profile.wake_affine_weight = weigh;
        let mut core = Core::new(CoreConfig {
            hz: 250,
            time_limit_ns: Ns::MAX,
            cost: CostTable::default(),
            profile,
            sysctl: SysctlConfig::default(),
            cpus: 2,
            irq_delivery: IrqDelivery::FirstCpu,
            idle_wakeup_ns: 0,
        });
        let now = 100_000_000;
        for (i, (name, load)) in [
            ("writer", writer_load),
            ("flusher", flusher_load),
            ("kswapd", 0.02),
        ]
        .into_iter()
        .enumerate()
        {
            let cpu = if i == 0 { 0 } else { 1 };
            let tid = core.add_task(Task::new(name, cpu, false), TaskStart::OnWakeUp);
            let t = &mut core.tasks[tid as usize];
            t.load = LoadAvg {
                load_avg: load * NICE_0_LOAD,
                updated_ns: now,
            };
            t.sleeping = i == 2;
            if i < 2 {
                core.runqueues[cpu].curr = Some(tid);
                core.runqueues[cpu].busy_until = now + 1_000_000;
            }
        }
        core.tasks[2].waker = Some(0);
        core.advance_to(now);
        core
    }

    #[test]
    fn with_no_idle_cpu_a_wakeup_follows_the_lighter_load() {
        let now = 100_000_000;
        // A writer that mostly sleeps: kswapd queues on its CPU, not
        // behind the flusher (the throttled 512 MiB guest).
        let mut core = two_busy_cpus(true, 0.2, 0.6);
        assert_eq!(core.wake_up_task(2, now), None);
        assert_eq!(core.tasks[2].cpu, 0);
        assert!(core.runqueues[0].queued.contains(&2));
        // A writer that never sleeps: behind the flusher on CPU 1.
        let mut core = two_busy_cpus(true, 1.0, 0.6);
        core.wake_up_task(2, now);
        assert_eq!(core.tasks[2].cpu, 1);
        // The 8% bias keeps the task where it was on a near tie, its own
        // blocked load counting on CPU 1: (0.53 + 0.02) * 100 = 55 is not
        // under (0.5 + 0.02 - 0.02) * 108 = 54.
        let mut core = two_busy_cpus(true, 0.53, 0.5);
        core.wake_up_task(2, now);
        assert_eq!(core.tasks[2].cpu, 1);
        // Without the profile key: always the previous CPU.
        let mut core = two_busy_cpus(false, 0.2, 0.6);
        core.wake_up_task(2, now);
        assert_eq!(core.tasks[2].cpu, 1);
    }

    #[test]
    fn load_halves_in_32_ms_asleep_and_climbs_while_runnable() {
        let full = LoadAvg::initial(true);
        assert_eq!(full.load_avg, NICE_0_LOAD);
        let half = full.at(32_768_000, false);
        assert!((half - 512.0).abs() < 1e-9, "{half}");
        let idle = LoadAvg::initial(false);
        assert_eq!(idle.load_avg, 0.0);
        let climbed = idle.at(32_768_000, true);
        assert!((climbed - 512.0).abs() < 1e-9, "{climbed}");
        // An update never goes back in time.
        let mut l = LoadAvg {
            load_avg: 100.0,
            updated_ns: 1_000,
        };
        l.update(500, true);
        assert_eq!(l.load_avg, 100.0);
        assert_eq!(l.updated_ns, 1_000);
    }
}
