//! The context prefix every trace line starts with, whatever its event:
//! 3.0's `trace_print_context()` (kernel/trace/trace_output.c) prints
//! `"%16s-%-5d [%03d] %5lu.%06lu: "` (comm, pid, cpu, seconds,
//! microseconds), then `ftrace_raw_output_<event>()` the event's name and
//! `": "`.

use std::fmt::Write;

/// `TASK_COMM_LEN - 1`: the longest comm the kernel keeps.
const COMM_MAX: usize = 15;

/// The trace timestamp in microseconds: 3.0's `ns2usecs()`
/// (`(nsec + 500) / 1000`).
pub const fn trace_usecs(ts_ns: u64) -> u64 {
    ts_ns.saturating_add(500) / 1000
}

/// The longest prefix of `comm` of at most 15 bytes that ends on a char
/// boundary (the kernel stores at most `TASK_COMM_LEN - 1` bytes).
pub fn clip_comm(comm: &str) -> &str {
    if comm.len() <= COMM_MAX {
        return comm;
    }
    let mut end = COMM_MAX;
    while !comm.is_char_boundary(end) {
        end -= 1;
    }
    &comm[..end]
}

/// The context prefix and the event's name: everything before its fields.
pub fn write_context(out: &mut String, comm: &str, pid: u32, cpu: u32, ts_ns: u64, name: &str) {
    let comm = if pid == 0 { "<idle>" } else { clip_comm(comm) };
    let us = trace_usecs(ts_ns);
    let _ = write!(
        out,
        "{:>16}-{:<5} [{:03}] {:>5}.{:06}: {}: ",
        comm,
        pid,
        cpu,
        us / 1_000_000,
        us % 1_000_000,
        name
    );
}
