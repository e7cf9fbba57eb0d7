//! The dirty-throttling tracepoints: `global_dirty_state`,
//! `bdi_dirty_ratelimit` and `balance_dirty_pages`
//! (include/trace/events/writeback.h, read in 3.3 and 6.1), emitted from
//! the IO-less `balance_dirty_pages` ([`super::ioless_throttle`]). They are
//! built only when a trace file is being written (`wbsim run --trace`):
//! the trace statistics do not read them.

use super::ioless::{dirty_freerun_ceiling, DirtySnapshot, RatelimitSample};
use super::limits::DirtyLimits;
use super::WritebackHost;
use crate::mm::vmstat::Ev;
use crate::trace::{
    pages_to_kib, BalanceDirtyPages, BdiDirtyRatelimit, BdiName, GlobalDirtyState, TraceEvent,
    WritebackLayout,
};

/// One `balance_dirty_pages` pass at the point it sleeps or leaves, in
/// jiffies and pages as the kernel has them before converting.
#[derive(Debug, Clone, Copy)]
pub struct BdpPass {
    pub bdi: usize,
    pub snap: DirtySnapshot,
    pub task_ratelimit_pps: u64,
    pub pages_dirtied: u64,
    pub period_jiffies: u64,
    /// The pause about to be slept, or `min(pause, 0)` when none is.
    pub pause_jiffies: i64,
    /// When this `balance_dirty_pages` call began (`start_time`).
    pub start_jiffies: u64,
    pub now_jiffies: u64,
}

/// Milliseconds of `jiffies` as the tracepoints print them
/// (`x * 1000 / HZ`, truncating towards zero).
fn jiffies_ms(jiffies: i64, hz: u64) -> i64 {
    jiffies * 1000 / hz as i64
}

pub trait ThrottleTrace: WritebackHost {
    /// Whether a trace file is being written.
    fn tracing_writeback(&self) -> bool {
        self.core().tracer().is_writing()
    }

    /// 6.1's field lists or 3.3's, as for every era-dependent tracepoint
    /// (`Core::trace_layout`).
    fn writeback_layout(&self) -> WritebackLayout {
        self.core().trace_layout()
    }

    /// `global_dirty_state`, where the kernel computes the global limits.
    fn trace_global_dirty_state(&mut self, tid: u32, limits: DirtyLimits) {
        if !self.tracing_writeback() {
            return;
        }
        let g = self.mm().gauges();
        let vm = self.mm().vmstat();
        let ev = GlobalDirtyState {
            layout: self.writeback_layout(),
            nr_dirty: g.nr_dirty,
            nr_writeback: g.nr_writeback,
            bg_thresh: limits.background,
            thresh: limits.thresh,
            limit: self.wb().global_dirty_limit.dirty_limit_pages,
            nr_dirtied: vm.get(Ev::NrDirtied),
            nr_written: vm.get(Ev::NrWritten),
        };
        self.trace(tid, TraceEvent::GlobalDirtyState(ev));
    }

    /// `bdi_dirty_ratelimit`, after a rate-limit update of device `bdi`.
    fn trace_bdi_dirty_ratelimit(&mut self, tid: u32, bdi: usize, r: RatelimitSample) {
        if !self.tracing_writeback() {
            return;
        }
        let bw = self.wb().bdis[bdi].bandwidth;
        let ev = BdiDirtyRatelimit {
            layout: self.writeback_layout(),
            bdi: BdiName::scsi_disk(bdi),
            write_bw: pages_to_kib(bw.write_bandwidth_pps),
            avg_write_bw: pages_to_kib(bw.avg_write_bandwidth_pps),
            dirty_rate: pages_to_kib(r.dirty_rate_pps),
            dirty_ratelimit: pages_to_kib(bw.dirty_ratelimit_pps),
            task_ratelimit: pages_to_kib(r.task_ratelimit_pps),
            balanced_dirty_ratelimit: pages_to_kib(bw.balanced_dirty_ratelimit_pps),
        };
        self.trace(tid, TraceEvent::BdiDirtyRatelimit(ev));
    }

    /// `balance_dirty_pages`, before the task's pause state is updated.
    fn trace_balance_dirty_pages(&mut self, tid: u32, p: &BdpPass) {
        if !self.tracing_writeback() {
            return;
        }
        let hz = self.hz();
        let st = &self.wb().task_bdp[tid as usize];
        let think_ms = match st.dirty_paused_when_jiffies {
            0 => 0,
            when => jiffies_ms(p.now_jiffies as i64 - when as i64, hz),
        };
        let s = &p.snap;
        // The tracepoint's own setpoint: from the smoothed limit, not
        // `hard_dirty_limit`.
        let limit = s.global_dirty_limit_pages;
        let setpoint = (limit + dirty_freerun_ceiling(s.thresh_pages, s.bg_thresh_pages)) / 2;
        let ev = BalanceDirtyPages {
            layout: self.writeback_layout(),
            bdi: BdiName::scsi_disk(p.bdi),
            limit,
            setpoint,
            dirty: s.dirty_pages,
            bdi_setpoint: setpoint * s.bdi_thresh_pages / (s.thresh_pages + 1),
            bdi_dirty: s.bdi_dirty_pages,
            dirty_ratelimit: pages_to_kib(self.wb().bdis[p.bdi].bandwidth.dirty_ratelimit_pps),
            task_ratelimit: pages_to_kib(p.task_ratelimit_pps),
            dirtied: p.pages_dirtied,
            dirtied_pause: st.nr_dirtied_pause,
            paused_ms: jiffies_ms((p.now_jiffies - p.start_jiffies) as i64, hz) as u64,
            pause_ms: jiffies_ms(p.pause_jiffies, hz),
            period_ms: jiffies_ms(p.period_jiffies as i64, hz) as u64,
            think_ms,
        };
        self.trace(tid, TraceEvent::BalanceDirtyPages(ev));
    }
}

impl<T: WritebackHost + ?Sized> ThrottleTrace for T {}
