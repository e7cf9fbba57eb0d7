//! The engine's tracing state: every event feeds the totals; the text goes
//! to a writer only when a trace file was asked for (`wbsim run --trace`).

use std::io::Write;

use super::event::{TraceEvent, WritebackLayout};
use super::format::{write_trace_header, write_trace_line, MAX_TRACE_LINE};
use super::stats::TraceStatsCollector;

/// A task's pid in the trace: task numbers become pids above the range of
/// boot-time threads (pid 0 is the idle task, which has no task number).
pub const fn task_pid(task: u32) -> u32 {
    1000 + task
}

/// Where trace events go.
#[derive(Default)]
pub struct Tracer {
    pub stats: TraceStatsCollector,
    out: Option<Box<dyn Write + Send>>,
    /// Reused for each line, so tracing allocates nothing per event.
    line: String,
    /// The first write error; later events are dropped.
    error: Option<std::io::Error>,
    /// Which era's field lists the vmscan events print.
    layout: WritebackLayout,
}

impl Tracer {
    /// Print the vmscan events in `layout`'s field lists.
    pub fn set_layout(&mut self, layout: WritebackLayout) {
        self.layout = layout;
    }

    /// Start writing the ftrace text (3.0 header first) to `out`.
    pub fn write_to(&mut self, out: Box<dyn Write + Send>) {
        self.line = String::with_capacity(4 * MAX_TRACE_LINE);
        write_trace_header(&mut self.line);
        self.out = Some(out);
        self.flush_line();
    }

    /// Whether a trace file is being written.
    pub fn is_writing(&self) -> bool {
        self.out.is_some()
    }

    pub fn record(
        &mut self,
        task: u32,
        comm: &str,
        cpu: u32,
        is_kswapd: bool,
        ts_ns: u64,
        ev: &TraceEvent,
    ) {
        self.stats.observe(task, is_kswapd, ts_ns, ev);
        if self.out.is_some() {
            self.line.clear();
            write_trace_line(
                &mut self.line,
                comm,
                task_pid(task),
                cpu,
                ts_ns,
                ev,
                self.layout,
            );
            self.flush_line();
        }
    }

    /// A line with no totals behind it (the sched events): `write`
    /// appends it to the reused buffer, only when a trace file is written.
    pub fn record_text(&mut self, write: impl FnOnce(&mut String)) {
        if self.out.is_some() {
            self.line.clear();
            write(&mut self.line);
            self.flush_line();
        }
    }

    fn flush_line(&mut self) {
        if self.error.is_some() {
            return;
        }
        if let Some(out) = self.out.as_mut() {
            if let Err(e) = out.write_all(self.line.as_bytes()) {
                self.error = Some(e);
            }
        }
    }

    /// Flush the writer and return the first error, if any.
    pub fn finish(&mut self) -> std::io::Result<()> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        match self.out.as_mut() {
            Some(out) => out.flush(),
            None => Ok(()),
        }
    }
}
