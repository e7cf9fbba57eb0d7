//! ftrace output of the vmscan and writeback tracepoints (3.0 layouts, or
//! 6.1's for the 6.1 presets (`vmscan6`); the dirty-throttling events,
//! which 3.0 lacks, in 3.3's or 6.1's).
//!
//! [`event::TraceEvent`] holds the fields of the Linux 3.0 tracepoints that
//! Mel Gorman's `Documentation/trace/postprocess/trace-vmscan-postprocess.pl`
//! reads (plus the congestion-wait events mmtests reports);
//! [`format::write_trace_line`] prints them as 3.0's `trace` file does, and
//! [`stats::TraceStatsCollector`] totals them as the script would.

pub mod context;
pub mod event;
pub mod format;
pub mod sched;
pub mod sink;
pub mod stats;
#[cfg(test)]
mod synthetic;
pub mod vmscan6;

pub use event::{
    pages_to_kib, BalanceDirtyPages, BdiDirtyRatelimit, BdiName, GfpMask, GlobalDirtyState,
    IsolateMode, PageAllocExtfrag, ReclaimFlags, ReclaimLru, TraceEvent, WritebackLayout,
};
pub use format::{write_trace_header, write_trace_line};
pub use sched::{SchedTask, SwitchState};
pub use sink::{task_pid, Tracer};
pub use stats::{ReclaimTraceStats, TraceStatsCollector};
pub use vmscan6::{AllocGfp, LruName, ShrinkStat};
