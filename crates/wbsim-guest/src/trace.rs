//! ftrace: setting up the plan's tracepoints (tracefs or
//! debugfs `tracing/`: `buffer_size_kb`, `trace`, `events/*/*/enable`,
//! `tracing_on`) and a thread that copies `trace_pipe` into `trace`
//! records of whole lines.

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use crate::protocol::{kind, tag};
use crate::records::RecordWriter;
use crate::sys;

const CHUNK: usize = 64 << 10;
const IDLE: Duration = Duration::from_millis(20);

/// Splits a byte stream into whole lines: what follows the last newline
/// of a chunk waits for the next chunk.
#[derive(Default)]
pub struct LineSplitter {
    buf: Vec<u8>,
}

impl LineSplitter {
    /// Add `chunk`; `emit` gets every complete line so far, at once.
    pub fn push(&mut self, chunk: &[u8], mut emit: impl FnMut(&[u8])) {
        self.buf.extend_from_slice(chunk);
        if let Some(last) = self.buf.iter().rposition(|&b| b == b'\n') {
            emit(&self.buf[..=last]);
            self.buf.drain(..=last);
        }
    }

    /// Bytes of an unfinished line held back.
    pub fn pending(&self) -> usize {
        self.buf.len()
    }
}

/// The tracing directory: tracefs at /sys/kernel/tracing (4.1+), else
/// debugfs's `tracing/`; None when the kernel has no ftrace.
pub fn tracing_dir() -> Option<PathBuf> {
    ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"]
        .iter()
        .map(PathBuf::from)
        .find(|d| d.join("trace_pipe").exists())
}

/// Size the ring buffer, clear it, enable the events and the dynamic
/// probes and turn tracing on. Events the kernel lacks and probes it
/// refuses are skipped with a log record.
pub fn setup(
    dir: &Path,
    buffer_kb: u32,
    events: &[String],
    kprobes: &[String],
    w: &RecordWriter,
) -> Result<(), String> {
    let fail = |what: &str, e: io::Error| format!("tracing: {what}: {}", sys::err_text(&e));
    sys::write_value(dir.join("buffer_size_kb"), &buffer_kb.to_string())
        .map_err(|e| fail(&format!("buffer_size_kb = {buffer_kb}"), e))?;
    OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(dir.join("trace"))
        .map_err(|e| fail("clearing trace", e))?;
    for event in events {
        let ok = event.split('/').count() == 2
            && !event
                .split('/')
                .any(|p| p.is_empty() || p == "." || p == "..");
        let enable = dir.join("events").join(event).join("enable");
        if !ok || !enable.exists() {
            w.log(&format!("tracepoint {event} not in this kernel; skipped"));
            continue;
        }
        sys::write_value(&enable, "1").map_err(|e| fail(&format!("enabling {event}"), e))?;
    }
    for probe in kprobes {
        if let Err(e) = add_kprobe(dir, probe) {
            w.log(&format!("kprobe {probe:?}: {e}; skipped"));
        }
    }
    // One clock for all CPUs (the default `local` clock is per CPU).
    if let Err(e) = sys::write_value(dir.join("trace_clock"), "global") {
        w.log(&format!("trace_clock = global: {}", sys::err_text(&e)));
    }
    sys::write_value(dir.join("tracing_on"), "1").map_err(|e| fail("tracing_on = 1", e))?;
    // Tie the trace clock to the records' CLOCK_MONOTONIC.
    let marker = format!(
        "{}{}",
        crate::protocol::TRACE_CLOCK_MARKER,
        sys::monotonic_ns()
    );
    if let Err(e) = sys::write_value(dir.join("trace_marker"), &marker) {
        w.log(&format!("trace_marker: {}", sys::err_text(&e)));
    }
    Ok(())
}

/// Define a probe (appending its line to `kprobe_events`), set its
/// filter and enable it.
fn add_kprobe(dir: &Path, probe: &str) -> Result<(), String> {
    let (name, definition, filter) =
        crate::protocol::kprobe_parts(probe).ok_or("not a probe definition")?;
    let text = |e: io::Error| sys::err_text(&e);
    let mut events = OpenOptions::new()
        .append(true)
        .open(dir.join("kprobe_events"))
        .map_err(|e| format!("kprobe_events: {}", text(e)))?;
    io::Write::write_all(&mut events, format!("{definition}\n").as_bytes())
        .map_err(|e| format!("the kernel refused it ({})", text(e)))?;
    let event = dir.join("events/kprobes").join(name);
    if !filter.is_empty() {
        sys::write_value(event.join("filter"), filter)
            .map_err(|e| format!("filter {filter:?} refused ({})", text(e)))?;
    }
    sys::write_value(event.join("enable"), "1").map_err(|e| format!("enabling: {}", text(e)))
}

/// The thread reading `trace_pipe`.
pub struct TraceReader {
    stop: Arc<AtomicBool>,
    handle: JoinHandle<()>,
}

impl TraceReader {
    /// Open `trace_pipe` (O_NONBLOCK) and start copying it.
    pub fn start(dir: &Path, w: Arc<RecordWriter>) -> io::Result<TraceReader> {
        let pipe = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(dir.join("trace_pipe"))?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let dir = dir.to_path_buf();
        let handle = std::thread::Builder::new()
            .name("trace".into())
            .spawn(move || read_loop(pipe, &dir, &flag, &w))?;
        Ok(TraceReader { stop, handle })
    }

    /// Turn tracing off, drain what the ring buffer still holds, join.
    pub fn stop(self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = self.handle.join();
    }
}

fn read_loop(mut pipe: File, dir: &Path, stop: &AtomicBool, w: &RecordWriter) {
    let mut buf = vec![0u8; CHUNK];
    let mut lines = LineSplitter::default();
    let mut draining = false;
    let mut empty_reads = 0;
    loop {
        if !draining && stop.load(Ordering::SeqCst) {
            draining = true;
            empty_reads = 0;
            if let Err(e) = sys::write_value(dir.join("tracing_on"), "0") {
                w.log(&format!("tracing_on = 0: {}", sys::err_text(&e)));
            }
        }
        match pipe.read(&mut buf) {
            Ok(n) if n > 0 => {
                empty_reads = 0;
                lines.push(&buf[..n], |whole| {
                    w.record(kind::TRACE, tag::NONE, whole);
                });
            }
            Ok(_) => empty_reads += 1,
            Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => empty_reads += 1,
            Err(e) => {
                w.log(&format!("reading trace_pipe: {}", sys::err_text(&e)));
                break;
            }
        }
        if draining && empty_reads >= 2 {
            break;
        }
        if empty_reads > 0 {
            std::thread::sleep(IDLE);
        }
    }
    if lines.pending() > 0 {
        w.log(&format!(
            "trace: dropped an unfinished last line of {} bytes",
            lines.pending()
        ));
    }
    let lost = lost_events(dir);
    if lost > 0 {
        w.log(&format!(
            "trace: the ring buffer overran; {lost} events lost (per_cpu/cpu*/stats `overrun`)"
        ));
    }
}

/// Events the ring buffer overwrote before the reader had them: the sum
/// of `overrun:` over `per_cpu/cpu*/stats` (0 where they cannot be read).
fn lost_events(dir: &Path) -> u64 {
    let Ok(cpus) = std::fs::read_dir(dir.join("per_cpu")) else {
        return 0;
    };
    cpus.flatten()
        .filter_map(|cpu| std::fs::read_to_string(cpu.path().join("stats")).ok())
        .map(|text| overrun_of(&text))
        .sum()
}

/// The `overrun: N` line of one CPU's ring-buffer stats.
fn overrun_of(stats: &str) -> u64 {
    stats
        .lines()
        .find_map(|l| l.strip_prefix("overrun:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(chunks: &[&[u8]]) -> (Vec<String>, usize) {
        let mut s = LineSplitter::default();
        let mut out = Vec::new();
        for c in chunks {
            s.push(c, |l| out.push(String::from_utf8(l.to_vec()).unwrap()));
        }
        (out, s.pending())
    }

    #[test]
    fn whole_lines_only_and_partial_lines_carried_over() {
        let (out, pending) = run(&[b"a 1\nb 2", b"2\nc", b" 3", b"\n", b"d"]);
        assert_eq!(out, vec!["a 1\n", "b 22\n", "c 3\n"]);
        assert_eq!(pending, 1);
    }

    /// A probe's line is appended to `kprobe_events`, its filter and
    /// `enable` written where the kernel would create them; a line that
    /// names no event is refused without touching the file.
    #[test]
    fn a_kprobe_is_defined_filtered_and_enabled() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let event = dir.join("events/kprobes/tfb_fail");
        std::fs::create_dir_all(&event).unwrap();
        std::fs::write(dir.join("kprobe_events"), "p:old f\n").unwrap();
        for f in ["filter", "enable"] {
            std::fs::write(event.join(f), "").unwrap();
        }
        let probe = "r:tfb_fail try_to_free_buffers ret=$retval:u8 if ret == 0";
        add_kprobe(dir, probe).unwrap();
        let read = |p: &Path| std::fs::read_to_string(p).unwrap();
        assert_eq!(
            read(&dir.join("kprobe_events")),
            "p:old f\nr:tfb_fail try_to_free_buffers ret=$retval:u8\n"
        );
        assert_eq!(read(&event.join("filter")), "ret == 0");
        assert_eq!(read(&event.join("enable")), "1");
        assert!(add_kprobe(dir, "r try_to_free_buffers").is_err());
        assert!(read(&dir.join("kprobe_events")).ends_with("u8\n"));
    }

    #[test]
    fn overrun_is_read_from_a_cpus_stats() {
        // per_cpu/cpu0/stats of a 3.2 kernel.
        let stats = "entries: 120\noverrun: 4711\ncommit overrun: 0\nbytes: 5120\n";
        assert_eq!(overrun_of(stats), 4711);
        assert_eq!(overrun_of("entries: 3\n"), 0);
    }

    #[test]
    fn several_lines_in_one_chunk_are_one_emit() {
        let (out, pending) = run(&[b"x\ny\nz\n"]);
        assert_eq!(out, vec!["x\ny\nz\n"]);
        assert_eq!(pending, 0);
        let (out, pending) = run(&[b"no newline yet", b""]);
        assert!(out.is_empty());
        assert_eq!(pending, 14);
    }
}
