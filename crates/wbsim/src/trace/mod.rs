//! ftrace output of the vmscan and writeback tracepoints (3.0 layouts).
//!
//! [`event::TraceEvent`] holds the fields of the Linux 3.0 tracepoints that
//! Mel Gorman's `Documentation/trace/postprocess/trace-vmscan-postprocess.pl`
//! reads (plus the congestion-wait events mmtests reports);
//! [`format::write_trace_line`] prints them as 3.0's `trace` file does, and
//! [`stats::TraceStatsCollector`] totals them as the script would.

pub mod event;
pub mod format;
pub mod sink;
pub mod stats;
#[cfg(test)]
mod synthetic;

pub use event::{GfpMask, IsolateMode, ReclaimFlags, ReclaimLru, TraceEvent};
pub use format::{write_trace_header, write_trace_line};
pub use sink::Tracer;
pub use stats::{ReclaimTraceStats, TraceStatsCollector};
