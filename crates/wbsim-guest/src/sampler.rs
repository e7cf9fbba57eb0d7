//! Snapshots of the kernel's counters (/proc/vmstat, /proc/zoneinfo,
//! /proc/meminfo, /sys/block/<disk>/stat, /proc/<kswapd0>/stat) and the
//! thread that samples them every `sample_ms`, printing a progress line
//! on the console every few seconds.

use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use crate::protocol::{self, kind, tag};
use crate::records::RecordWriter;
use crate::sys;

const PROGRESS_EVERY_NS: u64 = 5_000_000_000;
const PAGE_BYTES: u64 = 4096;

/// The pid of kswapd0 (`/proc/PID/comm`, 2.6.33+), if there is one.
pub fn find_kswapd0() -> Option<u32> {
    let entries = std::fs::read_dir("/proc").ok()?;
    entries.flatten().find_map(|e| {
        let pid: u32 = e.file_name().to_str()?.parse().ok()?;
        let comm = sys::read_text(format!("/proc/{pid}/comm")).ok()?;
        (comm.trim_end() == "kswapd0").then_some(pid)
    })
}

/// A counter of /proc/vmstat text.
pub fn vmstat_counter(text: &str, name: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(' ')?;
        (k == name).then(|| v.trim().parse().ok()).flatten()
    })
}

/// What is sampled, and from where.
#[derive(Clone)]
pub struct Sources {
    pub data_disk: String,
    pub kswapd: Option<u32>,
}

impl Sources {
    fn kswapd_stat(&self) -> Option<String> {
        self.kswapd
            .and_then(|pid| sys::read_text(format!("/proc/{pid}/stat")).ok())
    }

    /// The before/after snapshot: five records with one time; returns the
    /// vmstat text.
    pub fn snapshot(&self, w: &RecordWriter, which: &str) -> String {
        let t = sys::monotonic_ns();
        let vmstat = sys::read_text("/proc/vmstat").unwrap_or_default();
        let files = [
            (kind::ZONEINFO, "/proc/zoneinfo".to_string()),
            (kind::MEMINFO, "/proc/meminfo".to_string()),
            (
                kind::DISKSTAT,
                format!("/sys/block/{}/stat", self.data_disk),
            ),
        ];
        w.record_at(kind::VMSTAT, which, t, vmstat.as_bytes());
        for (k, path) in files {
            match sys::read_text(&path) {
                Ok(text) => {
                    w.record_at(k, which, t, text.as_bytes());
                }
                Err(e) => w.log(&format!("reading {path}: {}", sys::err_text(&e))),
            }
        }
        if let Some(stat) = self.kswapd_stat() {
            w.record_at(kind::KSWAPD, which, t, stat.as_bytes());
        }
        vmstat
    }
}

/// The sampling thread.
pub struct Sampler {
    stop: Sender<()>,
    handle: JoinHandle<()>,
}

impl Sampler {
    /// Start sampling; `before` is the before-snapshot's vmstat text and
    /// `start_ns` the workload's start (for the progress lines).
    pub fn start(
        w: Arc<RecordWriter>,
        sources: Sources,
        sample_ms: u64,
        before: &str,
        start_ns: u64,
    ) -> std::io::Result<Sampler> {
        let (stop, stopped) = mpsc::channel::<()>();
        let base = (
            vmstat_counter(before, "nr_dirtied").unwrap_or(0),
            vmstat_counter(before, "nr_written").unwrap_or(0),
        );
        let period_ns = sample_ms.max(1) * 1_000_000;
        let handle = std::thread::Builder::new()
            .name("sampler".into())
            .spawn(move || {
                let mut next_progress = start_ns + PROGRESS_EVERY_NS;
                let mut failed = false;
                // A fixed schedule: the work of a sample does not delay the next.
                let mut due = sys::monotonic_ns() + period_ns;
                loop {
                    let wait = due.saturating_sub(sys::monotonic_ns());
                    match stopped.recv_timeout(Duration::from_nanos(wait)) {
                        Err(RecvTimeoutError::Timeout) => {}
                        _ => return,
                    }
                    let t = sys::monotonic_ns();
                    due = (due + period_ns).max(t + period_ns / 2);
                    let vmstat = sys::read_text("/proc/vmstat").unwrap_or_default();
                    w.record_at(kind::VMSTAT, tag::SAMPLE, t, vmstat.as_bytes());
                    match sys::read_text("/proc/zoneinfo") {
                        Ok(z) => {
                            w.record_at(kind::ZONEINFO, tag::SAMPLE, t, z.as_bytes());
                        }
                        Err(e) if !failed => {
                            failed = true;
                            w.log(&format!("reading /proc/zoneinfo: {}", sys::err_text(&e)));
                        }
                        Err(_) => {}
                    }
                    if let Some(stat) = sources.kswapd_stat() {
                        w.record_at(kind::KSWAPD, tag::SAMPLE, t, stat.as_bytes());
                    }
                    let _ = w.checkpoint();
                    if t >= next_progress {
                        next_progress += PROGRESS_EVERY_NS;
                        let delta = |name, base| {
                            vmstat_counter(&vmstat, name).map_or(0, |v: u64| v.saturating_sub(base))
                                * PAGE_BYTES
                        };
                        let now = |name| vmstat_counter(&vmstat, name).unwrap_or(0) * PAGE_BYTES;
                        sys::console(&protocol::progress_line(
                            (t - start_ns) as f64 / 1e9,
                            delta("nr_dirtied", base.0),
                            delta("nr_written", base.1),
                            now("nr_dirty") + now("nr_writeback"),
                        ));
                    }
                }
            })?;
        Ok(Sampler { stop, handle })
    }

    pub fn stop(self) {
        let _ = self.stop.send(());
        let _ = self.handle.join();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vmstat_counters() {
        let t = "nr_free_pages 100\nnr_dirtied 12\nnr_written 7\n";
        assert_eq!(vmstat_counter(t, "nr_dirtied"), Some(12));
        assert_eq!(vmstat_counter(t, "nr_written"), Some(7));
        assert_eq!(vmstat_counter(t, "nr_dirty"), None);
    }
}
