//! The simulated machine: all subsystem state in one struct, and the engine
//! loop that runs tasks and device completions in time order.
//!
//! Subsystem modules (`mm`, `writeback`, `reclaim`, `block`, `fs`,
//! `workload`) add `impl System` blocks for their kernel functions; the data
//! each owns sits in its own field here.

pub mod build;
pub mod check;
pub mod series;
pub mod task;

use crate::block::{BlockHost, BlockLayer};
use crate::fs::{Filesystems, FsHost};
use crate::mm::page::Pfn;
use crate::mm::page_alloc::AllocState;
use crate::mm::{Memory, MmHost};
use crate::reclaim::{Reclaim, ReclaimHost};
use crate::sched::{Core, HasCore, TaskStart};
use crate::sim::{EventKind, Ns, NS_PER_SEC};
use crate::workload::{WorkloadHost, Workloads};
use crate::writeback::pass::WritebackCaller;
use crate::writeback::{Writeback, WritebackHost};
use task::{Step, Task};

use crate::block::plug::TaskPlugging;
use crate::block::submit::Submit;
use crate::fs::daemon::FsDaemons;
use crate::reclaim::kswapd::Kswapd;
use crate::workload::fsmark_run::FsMarkRunner;
use crate::workload::iozone_run::IozoneRunner;
use crate::workload::mapwrite::MapWriter;
use crate::workload::memtouch::MemTouch;
use crate::workload::sync::SysSync;
use crate::workload::Writer;
use crate::writeback::flusher::Flushers;
use crate::writeback::limits::Limits;
pub use build::build_system;

/// A test's corruption of the state between two events.
#[cfg(test)]
pub(crate) type TestHook = fn(&mut System);

/// Why a run stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    #[default]
    Completed,
    /// Cut at the scenario's `run.time_limit_s` with workload tasks still
    /// running.
    TimeLimit,
    /// Cut after `RunOptions::max_events` engine events (fuzzing and other
    /// bounded runs); not a kernel outcome.
    EventBudget,
}

pub struct System {
    /// Clock, CPUs, tasks, profile, sysctls and tracepoints.
    core: Core,
    /// Check the conservation invariants after every event
    /// ([`check::Checker`]); set before [`System::run`].
    check_every_event: bool,
    /// The invariant checker of a checked run, created by `run`.
    checker: Option<check::Checker>,
    /// Tests: run this on the system after event number `.0` (and its
    /// check), before the next event.
    #[cfg(test)]
    test_hook: Option<(u64, TestHook)>,

    /// Page frames, zones, LRU lists, page cache, swap, vmstat.
    mm: Memory,

    /// Backing devices, flushers, dirty limits and throttling.
    wb: Writeback,

    /// Devices, request queues, plugs.
    block: BlockLayer,

    /// The workload programs.
    workload: Workloads,
    /// kswapd and the reclaim scan.
    reclaim: Reclaim,
    /// Mounted filesystems and their threads.
    fs: Filesystems,

    // tasks
    /// What each task runs (indexed like `tasks`).
    task_kind: Vec<task::TaskKind>,

    /// Per-zone time series, when asked for (`RunOptions::series_interval_ns`).
    series: Option<series::Series>,
    /// When the CPUs' `vmstat_update` next folds their NR_FREE_PAGES
    /// deltas (every whole second: `round_jiffies_relative(HZ)`).
    next_vmstat_refresh_ns: Ns,
    next_sample_ns: Ns,
}

impl MmHost for System {
    #[inline]
    fn mm(&self) -> &Memory {
        &self.mm
    }

    #[inline]
    fn mm_mut(&mut self) -> &mut Memory {
        &mut self.mm
    }

    fn flush_plug(&mut self, bdi: usize) {
        crate::block::submit::flush_plug(self, bdi)
    }

    fn submit_page_read(&mut self, tid: u32, pfn: Pfn) {
        crate::block::submit::submit_page_read(self, tid, pfn)
    }

    fn kick_device(&mut self, dev: usize) {
        crate::block::submit::kick_device(self, dev)
    }

    #[inline(always)]
    fn set_page_dirty(&mut self, pfn: Pfn, tid: Option<u32>) -> bool {
        crate::writeback::account::set_page_dirty(self, pfn, tid)
    }

    #[inline(always)]
    fn clear_page_dirty_for_io(&mut self, pfn: Pfn) {
        crate::writeback::account::clear_page_dirty_for_io(self, pfn)
    }

    #[inline(always)]
    fn submit_page_write(&mut self, tid: u32, pfn: Pfn) {
        crate::writeback::account::submit_page_write(self, tid, pfn)
    }

    #[inline(always)]
    fn balance_dirty_pages_ratelimited(&mut self, tid: u32, bdi: usize, nr_dirtied: u64) {
        crate::writeback::throttle::balance_dirty_pages_ratelimited(self, tid, bdi, nr_dirtied)
    }

    fn bdi_start_background_writeback(&mut self, bdi: usize) {
        crate::writeback::flusher::bdi_start_background_writeback(self, bdi)
    }

    #[inline(always)]
    fn zone_dirty_ok(&self, z: usize) -> bool {
        crate::writeback::limits::zone_dirty_ok(self, z)
    }

    fn dirty_limit_scope(&self) -> crate::kernel::DirtyLimitScope {
        crate::writeback::limits::dirty_limit_scope(self)
    }

    fn nr_bdis(&self) -> usize {
        self.wb.nr_bdis()
    }

    #[inline(always)]
    fn mapping_has_buffer_heads(&self, ino: u32) -> bool {
        crate::fs::mapping_has_buffer_heads(self, ino)
    }

    fn wake_all_kswapd(&mut self, tid: u32, gfp: crate::mm::Gfp) {
        crate::reclaim::kswapd::wake_all_kswapd(self, tid, gfp.trace_alloc())
    }

    fn wakeup_kswapd_boosted(&mut self, tid: u32, z: usize) {
        crate::reclaim::kswapd::wakeup_kswapd_boosted(self, tid, z)
    }

    fn direct_reclaim_priority(&mut self, tid: u32, st: &mut AllocState) -> Option<Step> {
        crate::reclaim::direct::direct_reclaim_priority(self, tid, st)
    }

    fn wait_iff_congested(&mut self, tid: u32, zone: usize, timeout_ns: u64) -> Option<Step> {
        crate::reclaim::direct::wait_iff_congested(self, tid, zone, timeout_ns)
    }

    fn alloc_retry_wakes_kswapd(&self) -> bool {
        crate::reclaim::direct::alloc_retry_wakes_kswapd(self)
    }
}

impl BlockHost for System {
    #[inline]
    fn block(&self) -> &BlockLayer {
        &self.block
    }

    #[inline]
    fn block_mut(&mut self) -> &mut BlockLayer {
        &mut self.block
    }

    fn bdi_device(&self, bdi: usize) -> Option<usize> {
        self.wb.bdi(bdi).device
    }

    fn journal_commit_written(&mut self, fs: usize) {
        crate::fs::jbd2::Jbd2::jbd2_commit_written(self, fs)
    }

    /// A page's request completed: its writeback ends now, or with its
    /// ioend in the filesystem's worker (6.1 ext4 and xfs, `fs::ioend`).
    #[inline(always)]
    fn end_page_writeback(&mut self, pfn: Pfn) {
        if !crate::fs::ioend::IoendCompletion::ioend_page_written(self, pfn) {
            crate::writeback::account::end_page_writeback(self, pfn)
        }
    }
}

impl WritebackHost for System {
    #[inline]
    fn wb(&self) -> &Writeback {
        &self.wb
    }

    #[inline]
    fn wb_mut(&mut self) -> &mut Writeback {
        &mut self.wb
    }

    #[inline(always)]
    fn fs_writepage_writeback(&mut self, tid: u32, pfn: Pfn, caller: WritebackCaller) -> bool {
        crate::fs::fs_writepage_writeback(self, tid, pfn, caller)
    }

    fn is_fuse_file(&self, ino: u32) -> bool {
        crate::fs::fuse::is_fuse_file(self, ino)
    }

    fn fs_marks_background_writes(&self, ino: u32) -> bool {
        crate::fs::marks_background_writes(self, ino)
    }

    #[inline(always)]
    fn fs_writepages_map_waits(&mut self, tid: u32, ino: u32, index: u32) -> bool {
        crate::fs::writepages_map_waits(self, tid, ino, index)
    }

    #[inline(always)]
    fn fs_write_request_must_wait(
        &mut self,
        tid: u32,
        ino: u32,
        index: u32,
        class: crate::block::wbt::WbtClass,
    ) -> bool {
        crate::fs::ioend::IoendCompletion::bio_submission_must_wait(self, tid, ino, index, class)
    }

    fn fs_writepages_submit_must_wait(
        &mut self,
        tid: u32,
        ino: u32,
        class: crate::block::wbt::WbtClass,
    ) -> bool {
        use crate::block::bio::BioBuilding;
        if self.open_bio_must_wait(tid, class) {
            return true;
        }
        self.submit_built_bio(tid);
        crate::fs::ioend::IoendCompletion::submit_open_bio(self, tid, ino, Some(class))
    }

    #[inline(always)]
    fn fs_writepages_nr_to_write(&mut self, ino: u32, index: u32, nr_to_write: i64) -> Option<i64> {
        crate::fs::writepages_delalloc(self, ino, index, nr_to_write)
    }

    fn fs_writepages_done(&mut self, tid: u32, ino: u32) {
        crate::fs::writepages_done(self, tid, ino)
    }
}

impl FsHost for System {
    #[inline]
    fn fs(&self) -> &Filesystems {
        &self.fs
    }

    #[inline]
    fn fs_mut(&mut self) -> &mut Filesystems {
        &mut self.fs
    }

    #[inline(always)]
    fn mm_and_fs_mut(&mut self) -> (&mut crate::mm::Memory, &mut Filesystems) {
        (&mut self.mm, &mut self.fs)
    }
}

impl ReclaimHost for System {
    #[inline]
    fn reclaim(&self) -> &Reclaim {
        &self.reclaim
    }

    #[inline]
    fn reclaim_mut(&mut self) -> &mut Reclaim {
        &mut self.reclaim
    }
}

impl WorkloadHost for System {
    #[inline]
    fn workload(&self) -> &Workloads {
        &self.workload
    }

    #[inline]
    fn workload_mut(&mut self) -> &mut Workloads {
        &mut self.workload
    }
}

impl HasCore for System {
    #[inline]
    fn core(&self) -> &Core {
        &self.core
    }

    #[inline]
    fn core_mut(&mut self) -> &mut Core {
        &mut self.core
    }
}

impl System {
    /// Check the conservation invariants after every event
    /// ([`check::Checker`]); set before [`System::run`].
    pub fn set_check_every_event(&mut self, on: bool) {
        self.check_every_event = on;
    }

    /// Tests: run `hook` on the machine after event number `after`.
    #[cfg(test)]
    pub(crate) fn set_test_hook(&mut self, after: u64, hook: TestHook) {
        self.test_hook = Some((after, hook));
    }

    /// Sample the per-zone and per-bdi state every `interval_ns` from time 0.
    pub fn record_series(&mut self, interval_ns: Ns) {
        self.series = Some(series::Series {
            zone_names: (0..self.mm.nr_zones())
                .map(|z| match self.mm.nr_nodes() {
                    1 => self.mm.zone(z).name.to_string(),
                    _ => format!("node{}_{}", self.mm.zone_node(z), self.mm.zone(z).name),
                })
                .collect(),
            bdi_names: self.wb.bdis().iter().map(|b| b.name.clone()).collect(),
            interval_ns: interval_ns.max(1),
            samples: Vec::new(),
            first_workload_exit_ns: None,
            dirty_per_node: false,
        });
        self.next_sample_ns = 0;
    }

    /// The series recorded, taken out of the machine, with the time the
    /// first workload task exited.
    pub fn take_series(&mut self) -> Option<series::Series> {
        let first_exit = self
            .tasks()
            .iter()
            .filter(|t| t.is_workload)
            .filter_map(|t| t.exited_ns)
            .min();
        self.series.take().map(|mut s| {
            s.first_workload_exit_ns = first_exit;
            s
        })
    }

    /// Add a task (at boot) with the per-task state of every subsystem;
    /// returns its id.
    pub fn spawn_task(
        &mut self,
        name: &str,
        cpu: usize,
        kind: task::TaskKind,
        is_workload: bool,
        start: TaskStart,
    ) -> u32 {
        let tid = self.core.add_task(Task::new(name, cpu, is_workload), start);
        self.task_kind.push(kind);
        self.mm.add_task();
        self.wb.add_task();
        self.block.add_task();
        self.fs.add_task();
        self.workload.add_task();
        tid
    }

    /// The task woke from a congestion wait: `writeback_congestion_wait`
    /// or `writeback_wait_iff_congested` with the time it slept.
    fn trace_wait_end(&mut self, tid: u32, w: task::PendingWait) {
        let usec_timeout = (w.timeout_ns / 1000) as u32;
        let usec_delayed = ((self.now() - w.since_ns) / 1000) as u32;
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
        while let Some((t, ev)) = self.core.pop_event() {
            if t > self.core.time_limit_ns() {
                self.core.stop_at_time_limit();
                return Outcome::TimeLimit;
            }
            if t >= self.next_sample_ns {
                // State only changes at events: sample what held until `t`.
                self.take_samples_until(t);
            }
            if t >= self.next_vmstat_refresh_ns {
                self.mm.refresh_cpu_vm_stats();
                self.next_vmstat_refresh_ns = (t / NS_PER_SEC + 1) * NS_PER_SEC;
            }
            self.core.advance_to(t);
            if !self.core.take_event_budget() {
                return Outcome::EventBudget;
            }
            match ev {
                EventKind::RunTask { task, token } => {
                    if self.task(task).token == token {
                        if let Some(cpu) = self.core.wake_up_task(task, t) {
                            self.schedule(cpu, t);
                        }
                    }
                }
                EventKind::CpuFree { cpu } => {
                    self.core.cpu_free(cpu as usize);
                    self.schedule(cpu as usize, t);
                }
                EventKind::DeviceComplete { device, slot } => {
                    self.device_complete(device as usize, slot as usize, t)
                }
            }
            if self.checker.is_some() {
                self.check_event();
            }
            #[cfg(test)]
            if let Some((after, hook)) = self.test_hook {
                if self.core.events_processed() == after {
                    hook(self);
                }
            }
            if self.core.workload_left() == 0 {
                return Outcome::Completed;
            }
        }
        Outcome::Completed
    }

    /// `schedule()` on a CPU whose step has ended: run the task it picks.
    #[inline]
    fn schedule(&mut self, cpu: usize, at: Ns) {
        if let Some(tid) = self.core.pick_next(cpu, at) {
            self.run_task(tid, cpu);
        }
    }

    /// Run `tid`, the CPU's `curr`, from now. Each step's state changes
    /// happen at the step's start; the CPU time it charged keeps the CPU
    /// busy, so the next step (of this or another task) runs after it.
    /// A task's step function may run several steps itself, back to back,
    /// by the same rule as this loop (`HasCore::steps_in_place`).
    #[inline]
    fn run_task(&mut self, tid: u32, cpu: usize) {
        let (token, pending_wait) = self.core.begin_run(tid);
        if let Some(w) = pending_wait {
            self.trace_wait_end(tid, w);
        }
        loop {
            self.core.begin_step();
            let step = self.step_task(tid);
            let cost_end = self.core.end_step(tid, cpu, step);
            if step != Step::Continue {
                self.sched_submit_work(tid);
            }
            if !self.core.after_step(tid, cpu, step, token, cost_end) {
                break;
            }
        }
    }

    #[inline(always)]
    fn step_task(&mut self, tid: u32) -> Step {
        let step = self.step_task_kind(tid);
        if step == Step::Exit {
            crate::workload::text::Text::unmap_text_at_exit(self, tid);
        }
        step
    }

    #[inline(always)]
    fn step_task_kind(&mut self, tid: u32) -> Step {
        use task::TaskKind;
        match &self.task_kind[tid as usize] {
            TaskKind::Writer => self.dd_step(tid),
            TaskKind::FsMark => self.fsmark_step(tid),
            TaskKind::MemTouch => self.memtouch_step(tid),
            TaskKind::MapWrite => self.mapwrite_step(tid),
            TaskKind::Iozone => self.iozone_step(tid),
            TaskKind::Sync => self.sync_step(tid),
            &TaskKind::Flusher(bdi) => self.flusher_step(tid, bdi),
            TaskKind::Kswapd => self.kswapd_step(tid),
            TaskKind::FsDaemon => self.fs_daemon_step(tid),
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

    fn sample_at(&self, time_ns: Ns) -> series::Sample {
        use crate::mm::page::{LRU_ACTIVE_FILE, LRU_INACTIVE_FILE};
        let zones = (0..self.mm().nr_zones())
            .map(|i| {
                let z = self.mm().zone(i);
                series::ZoneSample {
                    free_pages: z.nr_free(),
                    inactive_file_pages: self.mm.zone(i).lru_pages[LRU_INACTIVE_FILE],
                    active_file_pages: self.mm.zone(i).lru_pages[LRU_ACTIVE_FILE],
                    dirty_pages: z.nr_dirty,
                    writeback_pages: z.nr_writeback,
                    dirty_limit_pages: if z.present_pages > 0 {
                        self.zone_dirty_limit(i)
                    } else {
                        0
                    },
                    slab_reclaimable_pages: z.nr_slab_reclaimable,
                }
            })
            .collect();
        let thresh = self.global_dirty_limits().thresh;
        let sum_min: u32 = self.wb().bdis().iter().map(|b| b.min_ratio).sum();
        let bdis = (0..self.wb().nr_bdis())
            .map(|i| {
                let b = self.wb().bdi(i);
                let (num, den) = self.bdi_writeout_fraction_now(i);
                series::BdiSample {
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
        series::Sample {
            time_ns,
            kswapd_awake: self.reclaim().kswapd_awake(),
            zones,
            bdis,
        }
    }

    pub fn zone_suffixes(&self) -> Vec<&'static str> {
        self.mm().zones().iter().map(|z| z.suffix).collect()
    }
}

#[cfg(test)]
mod tests;
