//! The simulated machine: all subsystem state in one struct, and the engine
//! loop that runs tasks and device completions in time order.
//!
//! Subsystem modules (`mm`, `writeback`, `reclaim`, `block`, `fs`,
//! `workload`) add `impl System` blocks for their kernel functions; the data
//! each owns sits in its own field here.

pub mod build;
pub mod check;
pub mod sched;
pub mod task;

use crate::block::RequestQueue;
use crate::device::Device;
use crate::fs::inode::Inode;
use crate::fs::FsInstance;
use crate::kernel::KernelProfile;
use crate::mm::page::Frames;
use crate::mm::vmstat::Vmstat;
use crate::mm::zone::Zone;
use crate::mm::Pagevec;
use crate::scenario::SysctlConfig;
use crate::sim::{CostTable, EventKind, EventQueue, Ns};
use crate::writeback::bdi::Bdi;
use crate::writeback::proportions::PropGlobal;
use task::{Step, Task};

pub use build::build_system;

/// A test's corruption of the state between two events.
#[cfg(test)]
pub(crate) type TestHook = fn(&mut System);

/// Why a run stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    Completed,
    /// Cut at the scenario's `run.time_limit_s` with workload tasks still
    /// running.
    TimeLimit,
    /// Cut after `RunOptions::max_events` engine events (fuzzing and other
    /// bounded runs); not a kernel outcome.
    EventBudget,
}

pub struct System {
    pub now: Ns,
    pub hz: u64,
    pub time_limit_ns: Ns,
    pub events: EventQueue,
    pub cost: CostTable,
    pub profile: KernelProfile,
    pub sysctl: SysctlConfig,
    /// Check the conservation invariants after every event
    /// ([`check::Checker`]); set before [`System::run`].
    pub check_every_event: bool,
    /// The invariant checker of a checked run, created by `run`.
    pub checker: Option<check::Checker>,
    /// Tests: run this on the system after event number `.0` (and its
    /// check), before the next event.
    #[cfg(test)]
    pub(crate) test_hook: Option<(u64, TestHook)>,
    /// Stop with [`Outcome::EventBudget`] after this many events.
    pub max_events: u64,

    // mm
    pub pages: Frames,
    pub zones: Vec<Zone>,
    pub vmstat: Vmstat,
    pub pagevecs: Vec<Pagevec>,
    pub min_free_kbytes: u64,
    pub nr_dirty: u64,
    pub nr_writeback: u64,
    pub nr_writeback_temp: u64,
    /// Reusable buffer for pages isolated by reclaim (no allocation per batch).
    pub isolate_buf: Vec<u32>,
    /// The swap area, if the scenario has one.
    pub swap: Option<crate::mm::swap::SwapArea>,
    /// Anonymous memory of the processes that have some.
    pub anon_regions: Vec<crate::mm::swap::AnonRegion>,
    /// `page->private` of swap-cache pages: the slot (`NO_SLOT` otherwise).
    pub page_swap_slot: Vec<u32>,
    /// Tasks waiting for a page's read to complete (`lock_page`).
    pub read_waiters: Vec<(u32, u32)>,
    /// Dentry and inode caches (slab reclaim).
    pub vfs: crate::mm::slab::VfsCaches,
    /// fs_mark commands being run (shared by their threads).
    pub fsmark_runs: Vec<crate::workload::fsmark_run::FsMarkRun>,
    /// Results of the IOzone tests run so far.
    pub iozone_results: Vec<crate::workload::iozone_run::IozoneResult>,

    // writeback
    pub bdis: Vec<Bdi>,
    pub prop_completions: PropGlobal,
    pub prop_dirties: PropGlobal,
    /// Flexible proportions of completions (3.7+ profiles).
    pub flex_completions: crate::writeback::flex_proportions::FlexGlobal,
    pub ratelimit_pages: u64,
    /// Per-CPU `bdp_ratelimits` counters (3.0 `ratelimits`).
    pub bdp_ratelimits: Vec<u64>,
    /// `global_dirty_limit`, the smoothed hard limit (3.2+).
    pub global_dirty_limit: crate::writeback::ioless::GlobalDirtyLimit,

    // block and devices
    pub queues: Vec<RequestQueue>,
    pub devices: Vec<Device>,
    /// Per device: its RAID0 striping if it is an md array.
    pub raid: Vec<Option<crate::device::raid0::Raid0>>,
    /// Tasks sleeping in `get_request_wait`, per device (FIFO, exclusive).
    pub request_waiters: Vec<std::collections::VecDeque<u32>>,
    /// Tasks in `congestion_wait` (woken by any queue leaving congestion).
    pub congestion_waiters: Vec<u32>,

    // filesystems
    pub inodes: Vec<Inode>,
    pub filesystems: Vec<FsInstance>,

    // tasks
    pub tasks: Vec<Task>,
    /// What each task runs (indexed like `tasks`).
    pub task_kind: Vec<task::TaskKind>,
    /// Per-task allocation state (direct reclaim in progress).
    pub task_alloc: Vec<crate::mm::page_alloc::AllocState>,
    /// Per-task `balance_dirty_pages` state.
    pub task_bdp: Vec<crate::writeback::throttle::BdpState>,
    /// `current->backing_dev_info` while in a write(2) (3.0
    /// `__generic_file_aio_write`), which lets direct reclaim write to a
    /// congested queue the task is itself writing to.
    pub task_backing_dev: Vec<Option<usize>>,
    /// Floating-proportion state of each task's dirtying (`task_dirty_inc`).
    pub task_dirties: Vec<crate::writeback::proportions::PropLocal>,
    /// `current->plug` (explicit block plugging).
    pub task_plug: Vec<crate::block::plug::Plug>,
    /// The FUSE daemon answered the task's last WRITE request with ENOSPC.
    pub task_fuse_enospc: Vec<bool>,
    /// xfs: `xfs_file_buffered_aio_write` has flushed once after ENOSPC.
    pub task_enospc_flushed: Vec<bool>,
    /// Per-CPU run queues (CFS).
    pub runqueues: Vec<sched::RunQueue>,
    pub sched_tunables: sched::SchedTunables,
    /// Which CPU takes device interrupts, and for round-robin delivery the
    /// CPU that takes the next one.
    pub irq_delivery: crate::scenario::IrqDelivery,
    pub irq_next_cpu: usize,
    /// CPU time charged by the step being run.
    pub step_cost_ns: Ns,
    pub kswapd_task: u32,
    pub kswapd_awake_ns: Ns,
    pub events_processed: u64,
    pub workload_left: usize,

    /// Per-zone time series, when asked for (`RunOptions::series_interval_ns`).
    pub series: Option<crate::report::series::Series>,
    pub next_sample_ns: Ns,
    /// vmscan/writeback tracepoints: totals always, text on request.
    pub tracer: crate::trace::Tracer,
}

impl System {
    /// Add a task (at boot) with the per-task state of every subsystem;
    /// returns its id.
    pub fn spawn_task(
        &mut self,
        name: &str,
        cpu: usize,
        kind: task::TaskKind,
        is_workload: bool,
    ) -> u32 {
        let tid = self.tasks.len() as u32;
        self.tasks.push(Task::new(name, cpu, is_workload));
        self.task_kind.push(kind);
        self.task_alloc.push(Default::default());
        self.task_bdp.push(Default::default());
        self.task_backing_dev.push(None);
        self.task_dirties.push(Default::default());
        self.task_plug.push(Default::default());
        self.task_fuse_enospc.push(false);
        self.task_enospc_flushed.push(false);
        tid
    }

    /// Charge kernel CPU time to the running task. The step's effects are
    /// applied at its start; its CPU keeps it busy for the charged time.
    #[inline]
    pub fn charge_sys(&mut self, tid: u32, ns: Ns) {
        self.tasks[tid as usize].sys_ns += ns;
        self.step_cost_ns += ns;
    }

    /// CPU time of a device interrupt and its softirq, on the CPU that
    /// `irq_delivery` picks: CPU 0 (physical destination mode; nothing such
    /// as irqbalance is assumed to move it — UNVERIFIED for the seeds'
    /// machines), or each CPU in turn (lowest-priority delivery as KVM
    /// emulates it). Without CONFIG_IRQ_TIME_ACCOUNTING the time is charged
    /// as system time to the task running there, which it also delays; an
    /// idle CPU absorbs it.
    pub fn charge_irq(&mut self, ns: Ns) {
        if ns == 0 {
            return;
        }
        let cpu = match self.irq_delivery {
            crate::scenario::IrqDelivery::FirstCpu => 0,
            crate::scenario::IrqDelivery::RoundRobin => {
                let c = self.irq_next_cpu;
                self.irq_next_cpu = (c + 1) % self.runqueues.len();
                c
            }
        };
        let rq = &mut self.runqueues[cpu];
        if let Some(t) = rq.curr.filter(|_| rq.busy_until > self.now) {
            rq.busy_until += ns;
            self.tasks[t as usize].sys_ns += ns;
        }
    }

    #[inline]
    pub fn charge_user(&mut self, tid: u32, ns: Ns) {
        self.tasks[tid as usize].user_ns += ns;
        self.step_cost_ns += ns;
    }

    /// Jiffies to nanoseconds (`HZ` from the scenario).
    pub fn jiffies_ns(&self, jiffies: u64) -> Ns {
        jiffies * 1_000_000_000 / self.hz
    }

    /// Where the running step's work has got to: its effects apply at its
    /// start, but the CPU time it has charged so far has run up to here.
    pub fn step_now(&self) -> Ns {
        self.now + self.step_cost_ns
    }

    /// Emit a tracepoint from task `tid` at the current time.
    pub fn trace(&mut self, tid: u32, ev: crate::trace::TraceEvent) {
        // Stamp the event where the work it ends has got to.
        let ts_ns = self.step_now();
        let task = &self.tasks[tid as usize];
        let is_kswapd = tid == self.kswapd_task;
        self.tracer
            .record(tid, &task.name, task.cpu as u32, is_kswapd, ts_ns, &ev);
    }

    /// Make a task runnable now, unless it already has a fresher wake-up.
    pub fn wake_task(&mut self, tid: u32) {
        let token = self.tasks[tid as usize].token;
        self.events
            .push(self.now, EventKind::RunTask { task: tid, token });
    }

    /// Wake every task in `congestion_wait` (`clear_bdi_congested`).
    pub fn wake_congestion_waiters(&mut self) {
        for i in 0..self.congestion_waiters.len() {
            let tid = self.congestion_waiters[i];
            self.wake_task(tid);
        }
        self.congestion_waiters.clear();
    }

    /// `congestion_wait(BLK_RW_ASYNC, timeout)`: register and ask to sleep.
    pub fn congestion_wait(&mut self, tid: u32, timeout_ns: Ns) -> Step {
        self.congestion_sleep(tid, timeout_ns, false)
    }

    /// Sleep on the congestion wait queue until a device uncongests or the
    /// timeout; `iff_congested` names the caller's tracepoint
    /// (`wait_iff_congested` rather than `congestion_wait`).
    pub fn congestion_sleep(&mut self, tid: u32, timeout_ns: Ns, iff_congested: bool) -> Step {
        self.congestion_waiters.push(tid);
        self.tasks[tid as usize].pending_wait = Some(task::PendingWait {
            iff_congested,
            since_ns: self.now,
            timeout_ns,
        });
        Step::Wait(Some(self.now + timeout_ns))
    }

    /// The task woke from a congestion wait: `writeback_congestion_wait`
    /// or `writeback_wait_iff_congested` with the time it slept.
    fn trace_wait_end(&mut self, tid: u32, w: task::PendingWait) {
        let usec_timeout = (w.timeout_ns / 1000) as u32;
        let usec_delayed = ((self.now - w.since_ns) / 1000) as u32;
        let ev = if w.iff_congested {
            crate::trace::TraceEvent::WaitIffCongested {
                usec_timeout,
                usec_delayed,
            }
        } else {
            crate::trace::TraceEvent::CongestionWait {
                usec_timeout,
                usec_delayed,
            }
        };
        self.trace(tid, ev);
    }

    /// Run until every workload task has exited or the time limit passes.
    /// With `check_every_event`, the invariants are checked before the
    /// first event, after every event and at the end (see
    /// [`check::Checker`]); what they find is in [`System::check_summary`].
    pub fn run(&mut self) -> Outcome {
        if self.check_every_event {
            self.start_checking();
        }
        let outcome = self.run_events();
        if self.checker.is_some() {
            self.check_end();
        }
        outcome
    }

    fn run_events(&mut self) -> Outcome {
        while let Some((t, ev)) = self.events.pop() {
            if t > self.time_limit_ns {
                self.now = self.time_limit_ns;
                return Outcome::TimeLimit;
            }
            if t >= self.next_sample_ns {
                // State only changes at events: sample what held until `t`.
                self.take_samples_until(t);
            }
            if t > self.now {
                self.now = t;
            }
            if self.events_processed >= self.max_events {
                return Outcome::EventBudget;
            }
            self.events_processed += 1;
            match ev {
                EventKind::RunTask { task, token } => {
                    if self.tasks[task as usize].token == token {
                        self.wake_up_task(task, t);
                    }
                }
                EventKind::CpuFree { cpu } => self.cpu_free(cpu as usize, t),
                EventKind::DeviceComplete { device, slot } => {
                    self.device_complete(device as usize, slot as usize, t)
                }
            }
            if self.checker.is_some() {
                self.check_event();
            }
            #[cfg(test)]
            if let Some((after, hook)) = self.test_hook {
                if self.events_processed == after {
                    hook(self);
                }
            }
            if self.workload_left == 0 {
                return Outcome::Completed;
            }
        }
        Outcome::Completed
    }

    fn step_task(&mut self, tid: u32) -> Step {
        use task::TaskKind;
        match &self.task_kind[tid as usize] {
            TaskKind::Writer(_) => self.writer_step(tid),
            TaskKind::FsMark(_) => self.fsmark_step(tid),
            TaskKind::MemTouch(_) => self.memtouch_step(tid),
            TaskKind::MapWrite(_) => self.mapwrite_step(tid),
            TaskKind::Iozone(_) => self.iozone_step(tid),
            TaskKind::Flusher(_) => self.flusher_step(tid),
            TaskKind::Kswapd(_) => self.kswapd_step(tid),
            TaskKind::FsDaemon(_) => self.fs_daemon_step(tid),
        }
    }

    /// Record one sample per interval boundary up to and including `t`.
    fn take_samples_until(&mut self, t: Ns) {
        let Some(mut series) = self.series.take() else {
            self.next_sample_ns = Ns::MAX;
            return;
        };
        while self.next_sample_ns <= t {
            let sample = self.sample_at(self.next_sample_ns);
            series.samples.push(sample);
            self.next_sample_ns += series.interval_ns;
        }
        self.series = Some(series);
    }

    fn sample_at(&self, time_ns: Ns) -> crate::report::series::Sample {
        use crate::mm::page::{LRU_ACTIVE_FILE, LRU_INACTIVE_FILE};
        let zones = (0..self.zones.len())
            .map(|i| {
                let z = &self.zones[i];
                crate::report::series::ZoneSample {
                    free_pages: z.nr_free(),
                    inactive_file_pages: z.lruvec.lists[LRU_INACTIVE_FILE].len,
                    active_file_pages: z.lruvec.lists[LRU_ACTIVE_FILE].len,
                    dirty_pages: z.nr_dirty,
                    writeback_pages: z.nr_writeback,
                    dirty_limit_pages: if z.present_pages > 0 {
                        self.zone_dirty_limit(i)
                    } else {
                        0
                    },
                }
            })
            .collect();
        let thresh = self.global_dirty_limits().thresh;
        let sum_min: u32 = self.bdis.iter().map(|b| b.min_ratio).sum();
        let bdis = (0..self.bdis.len())
            .map(|i| {
                let b = &self.bdis[i];
                let (num, den) = self.bdi_writeout_fraction_now(i);
                crate::report::series::BdiSample {
                    share: if den > 0 {
                        num as f64 / den as f64
                    } else {
                        0.0
                    },
                    thresh_pages: crate::writeback::limits::bdi_share(
                        thresh,
                        num,
                        den,
                        b.min_ratio,
                        b.max_ratio,
                        sum_min,
                    ),
                    reclaimable_pages: b.reclaimable,
                    writeback_pages: b.writeback,
                    written_pages: b.written_pages,
                }
            })
            .collect();
        crate::report::series::Sample {
            time_ns,
            kswapd_awake: self.kswapd_awake(),
            zones,
            bdis,
        }
    }

    pub fn zone_suffixes(&self) -> Vec<&'static str> {
        self.zones.iter().map(|z| z.suffix).collect()
    }
}

#[cfg(test)]
mod tests {
    use crate::kernel::preset;
    use crate::scenario::IrqDelivery;
    use crate::system::build_system;
    use crate::test_support::usb_stick_scenario;

    /// Four dd tasks on a four-CPU machine (one per CPU), every CPU busy;
    /// returns how much interrupt time each task was charged after eight
    /// 1 µs interrupts.
    fn irq_time_per_task(delivery: IrqDelivery) -> Vec<u64> {
        let mut sc = usb_stick_scenario("3.10", "xfs", 4, &["0", "1", "2", "3"]);
        sc.machine.irq_delivery = delivery;
        let mut sys = build_system(&sc, &preset("3.10").unwrap(), 1);
        for cpu in 0..4 {
            assert_eq!(sys.tasks[cpu].cpu, cpu);
            sys.runqueues[cpu].curr = Some(cpu as u32);
            sys.runqueues[cpu].busy_until = sys.now + 1_000_000;
        }
        for _ in 0..8 {
            sys.charge_irq(1_000);
        }
        sys.tasks[..4].iter().map(|t| t.sys_ns).collect()
    }

    #[test]
    fn first_cpu_delivery_charges_every_interrupt_to_cpu_0() {
        assert_eq!(
            irq_time_per_task(IrqDelivery::FirstCpu),
            vec![8_000, 0, 0, 0]
        );
    }

    #[test]
    fn round_robin_delivery_spreads_interrupts_over_the_cpus() {
        assert_eq!(irq_time_per_task(IrqDelivery::RoundRobin), vec![2_000; 4]);
    }
}
