//! The contract between the host (`wbsim lab`) and the guest (this crate's
//! `/init`): the plan the host puts into the initramfs, the records the
//! guest writes to the results disk, and the lines it prints on the serial
//! console. One owner for both sides, so they cannot drift apart.
//!
//! Results disk layout (a raw virtio disk the host creates, sparse):
//! - bytes `0..HEADER_BYTES`: a header. The host writes it with
//!   `complete = 0` (which also tells the guest which disk is the results
//!   disk); the guest rewrites it with the records' length and
//!   `complete = 1` after its last record.
//! - from `RECORDS_OFFSET`: records, back to back, each
//!   `@@ <kind> <tag> <t_ns> <len>\n` followed by `len` payload bytes and
//!   `\n`. `t_ns` is the guest's CLOCK_MONOTONIC; `tag` is `before`,
//!   `after`, `sample` or `-`.

use serde::{Deserialize, Serialize};

/// Where the plan sits in the initramfs.
pub const PLAN_PATH: &str = "/wbsim-lab/plan.json";
/// Directory of kernel modules in the initramfs, loaded in `Plan::modules` order.
pub const MODULES_DIR: &str = "/wbsim-lab/modules";
/// The FUSE daemon of a `fuse-ntfs` plan (a static ntfs-3g the host put
/// in the initramfs).
pub const NTFS3G_PATH: &str = "/wbsim-lab/ntfs-3g";
/// Magic at the start of the results disk.
pub const RESULTS_MAGIC: &[u8; 16] = b"WBSIM-LAB-RES-01";
/// Size of the header block.
pub const HEADER_BYTES: usize = 4096;
/// Offset of the first record.
pub const RECORDS_OFFSET: u64 = HEADER_BYTES as u64;
/// What the guest writes to `trace_marker` right after tracing starts,
/// followed by its CLOCK_MONOTONIC in ns: the host moves trace times onto
/// the records' clock with it.
pub const TRACE_CLOCK_MARKER: &str = "wbsim_mono_ns=";
/// Prefix of every line the guest prints for the host on the console.
pub const CONSOLE_PREFIX: &str = "WBSIM-LAB";

/// What the host asks the guest to do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// Format version; the guest refuses a plan of another version.
    pub version: u32,
    /// Filesystem type to mount (`ext4`, `xfs`, `btrfs`), made on the host.
    pub fs_type: String,
    /// Mount options (`-o`), empty for the filesystem's defaults.
    pub mount_options: String,
    /// The guest's working directory; tasks' relative paths resolve here.
    pub workdir: String,
    /// Mount point of the data disk, relative to `workdir` (the scenario's
    /// `[[fs]] mount`).
    pub mount: String,
    /// `/proc/sys` settings, as (path below /proc/sys, value), e.g.
    /// (`vm/dirty_ratio`, `40`), written in order before the workload.
    pub sysctls: Vec<(String, String)>,
    /// The workload: the scenario's tasks, command lines as written.
    pub tasks: Vec<PlanTask>,
    /// Interval of the /proc/vmstat, /proc/zoneinfo and kswapd samples.
    pub sample_ms: u64,
    /// Tracepoints to enable, as `system/event` (events the kernel lacks
    /// are skipped and logged).
    pub trace_events: Vec<String>,
    /// Per-CPU ftrace ring buffer size.
    pub trace_buffer_kb: u32,
    /// Kill the workload after this many guest seconds.
    pub time_limit_s: u64,
    /// Module files in `MODULES_DIR`, in load order (dependencies first).
    pub modules: Vec<String>,
    /// A third disk made by the host's `mkswap` is attached: `swapon` it
    /// before the workload (the scenario's `[swap]`).
    #[serde(default)]
    pub swap: bool,
    /// Settings of the data disk's request queue, as (file under
    /// `/sys/block/DISK/queue/`, value), written before the workload: the
    /// device's largest request (`max_sectors_kb`) and queue length
    /// (`nr_requests`). A value the kernel refuses is logged and left.
    #[serde(default)]
    pub data_queue: Vec<(String, String)>,
    /// The multi-generational LRU (6.1+): `Some(true)` writes `y` to
    /// `/sys/kernel/mm/lru_gen/enabled` before the workload (a kernel
    /// without it fails the boot), `Some(false)` writes `n` where the file
    /// exists, `None` leaves the kernel's default.
    #[serde(default)]
    pub lru_gen: Option<bool>,
    /// Dynamic probes to trace (`kprobe_events` lines, each optionally
    /// followed by ` if FILTER` for its `filter` file), e.g. `r:tfb_ret
    /// try_to_free_buffers ret=$retval:u8 if ret == 0`; a probe the
    /// kernel refuses is logged and skipped. Left out of the plan when
    /// empty, so plans without probes read as before.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kprobes: Vec<String>,
}

/// Version of [`Plan`] this build speaks.
pub const PLAN_VERSION: u32 = 1;

/// One workload task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanTask {
    pub name: String,
    /// The command line, as the simulator accepts it.
    pub command: String,
    /// Start when this task exits, instead of at the start.
    pub after: Option<String>,
}

/// How a task ended (the payload of a `task-end` record, JSON).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskEnd {
    pub name: String,
    /// Exit status; 128 + signal number when killed by a signal.
    pub exit_status: i32,
    /// From `wait4`'s rusage.
    pub user_seconds: f64,
    pub system_seconds: f64,
    pub voluntary_context_switches: u64,
    /// What the task printed on stderr (at most 4 KiB).
    pub message: String,
    /// Killed at the plan's time limit.
    pub cut: bool,
}

/// Record kinds.
pub mod kind {
    /// `uname -r` of the guest kernel.
    pub const UNAME: &str = "uname";
    /// `/proc/cmdline`.
    pub const CMDLINE: &str = "cmdline";
    /// `/proc/vmstat` text.
    pub const VMSTAT: &str = "vmstat";
    /// `/proc/zoneinfo` text.
    pub const ZONEINFO: &str = "zoneinfo";
    /// `/proc/meminfo` text.
    pub const MEMINFO: &str = "meminfo";
    /// `/sys/block/<data disk>/stat` text.
    pub const DISKSTAT: &str = "diskstat";
    /// `/proc/<kswapd0>/stat` text.
    pub const KSWAPD: &str = "kswapd";
    /// A task started; payload: its name.
    pub const TASK_START: &str = "task-start";
    /// A task ended; payload: [`super::TaskEnd`] as JSON.
    pub const TASK_END: &str = "task-end";
    /// A line a task printed on stdout; payload: `NAME\tLINE` (fs_mark's
    /// and IOzone's result lines are read back from these).
    pub const TASK_OUTPUT: &str = "task-output";
    /// A chunk of `trace_pipe` text (whole lines).
    pub const TRACE: &str = "trace";
    /// A line of the guest's own log (what it did, what it skipped).
    pub const LOG: &str = "log";
    /// A fatal error; payload: the message.
    pub const ERROR: &str = "error";
}

/// Record tags.
pub mod tag {
    pub const BEFORE: &str = "before";
    pub const AFTER: &str = "after";
    pub const SAMPLE: &str = "sample";
    pub const NONE: &str = "-";
}

/// One record read back from the results disk.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    pub kind: String,
    pub tag: String,
    pub t_ns: u64,
    pub payload: Vec<u8>,
}

impl Record {
    /// The payload as text (lossy).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.payload).into_owned()
    }
}

/// Encode the header block.
pub fn encode_header(records_len: u64, complete: bool) -> Vec<u8> {
    let mut h = vec![0u8; HEADER_BYTES];
    h[..16].copy_from_slice(RESULTS_MAGIC);
    h[16..24].copy_from_slice(&records_len.to_le_bytes());
    h[24..32].copy_from_slice(&u64::from(complete).to_le_bytes());
    h
}

/// Decode the header block: (records length, complete).
pub fn decode_header(h: &[u8]) -> Result<(u64, bool), String> {
    if h.len() < 32 || &h[..16] != RESULTS_MAGIC {
        return Err("the results disk has no wbsim lab header".into());
    }
    let len = u64::from_le_bytes(h[16..24].try_into().expect("8 bytes"));
    let complete = u64::from_le_bytes(h[24..32].try_into().expect("8 bytes")) == 1;
    Ok((len, complete))
}

/// Encode one record's header line.
pub fn encode_record_head(kind: &str, tag: &str, t_ns: u64, len: usize) -> String {
    format!("@@ {kind} {tag} {t_ns} {len}\n")
}

/// Split the records area into records. A truncated last record (the guest
/// died while writing it) ends the list with an error naming its offset.
pub fn decode_records(mut bytes: &[u8]) -> Result<Vec<Record>, String> {
    let mut out = Vec::new();
    let mut offset = 0usize;
    while !bytes.is_empty() {
        // A header without its newline is a record cut short too.
        let nl = bytes
            .iter()
            .position(|&b| b == b'\n')
            .ok_or_else(|| format!("record at byte {offset}: truncated"))?;
        let head = std::str::from_utf8(&bytes[..nl])
            .map_err(|_| format!("record at byte {offset}: header is not text"))?;
        let f: Vec<&str> = head.split(' ').collect();
        if f.len() != 5 || f[0] != "@@" {
            return Err(format!("record at byte {offset}: bad header {head:?}"));
        }
        let t_ns: u64 = f[3]
            .parse()
            .map_err(|_| format!("record at byte {offset}: bad time {:?}", f[3]))?;
        let len: usize = f[4]
            .parse()
            .map_err(|_| format!("record at byte {offset}: bad length {:?}", f[4]))?;
        let body = nl + 1;
        if bytes.len() < body + len + 1 {
            return Err(format!("record at byte {offset}: truncated"));
        }
        out.push(Record {
            kind: f[1].to_string(),
            tag: f[2].to_string(),
            t_ns,
            payload: bytes[body..body + len].to_vec(),
        });
        let used = body + len + 1;
        bytes = &bytes[used..];
        offset += used;
    }
    Ok(out)
}

/// Console line: progress, `WBSIM-LAB progress t_s=12.5 dirtied_bytes=N
/// written_bytes=N pending_bytes=N` (pending: nr_dirty + nr_writeback now).
pub fn progress_line(
    t_s: f64,
    dirtied_bytes: u64,
    written_bytes: u64,
    pending_bytes: u64,
) -> String {
    format!(
        "{CONSOLE_PREFIX} progress t_s={t_s:.1} dirtied_bytes={dirtied_bytes} \
         written_bytes={written_bytes} pending_bytes={pending_bytes}"
    )
}

/// Console line printed after the results disk is complete.
pub fn done_line() -> String {
    format!("{CONSOLE_PREFIX} done")
}

/// Console line for a fatal guest error.
pub fn error_line(message: &str) -> String {
    format!("{CONSOLE_PREFIX} error {}", message.replace('\n', " "))
}

/// A console line the guest printed for the host, read back.
#[derive(Debug, Clone, PartialEq)]
pub enum ConsoleLine {
    /// [`progress_line`].
    Progress {
        t_s: f64,
        dirtied_bytes: u64,
        written_bytes: u64,
        /// Dirty or under writeback now; 0 from a guest that does not say.
        pending_bytes: u64,
    },
    /// [`done_line`].
    Done,
    /// [`error_line`], with its message.
    Error(String),
}

/// Read a line of [`progress_line`], [`done_line`] or [`error_line`];
/// `None` for any other console line (the kernel's, the tools'). A
/// progress figure that does not parse reads as 0.
pub fn parse_console_line(line: &str) -> Option<ConsoleLine> {
    let rest = line.strip_prefix(CONSOLE_PREFIX)?.strip_prefix(' ')?;
    if rest == "done" {
        return Some(ConsoleLine::Done);
    }
    if let Some(msg) = rest.strip_prefix("error ") {
        return Some(ConsoleLine::Error(msg.to_string()));
    }
    let fields = rest.strip_prefix("progress ")?;
    let (mut t_s, mut dirtied_bytes, mut written_bytes, mut pending_bytes) = (0.0, 0, 0, 0);
    for kv in fields.split_whitespace() {
        match kv.split_once('=') {
            Some(("t_s", x)) => t_s = x.parse().unwrap_or(0.0),
            Some(("dirtied_bytes", x)) => dirtied_bytes = x.parse().unwrap_or(0),
            Some(("written_bytes", x)) => written_bytes = x.parse().unwrap_or(0),
            Some(("pending_bytes", x)) => pending_bytes = x.parse().unwrap_or(0),
            _ => {}
        }
    }
    Some(ConsoleLine::Progress {
        t_s,
        dirtied_bytes,
        written_bytes,
        pending_bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip() {
        let mut buf = Vec::new();
        for (k, t, p) in [("vmstat", "before", "nr_dirty 3\n"), ("log", "-", "")] {
            buf.extend(encode_record_head(k, t, 42, p.len()).as_bytes());
            buf.extend(p.as_bytes());
            buf.push(b'\n');
        }
        let r = decode_records(&buf).unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].kind, "vmstat");
        assert_eq!(r[0].tag, "before");
        assert_eq!(r[0].text(), "nr_dirty 3\n");
        assert_eq!(r[1].payload, b"");
        let cut = &buf[..buf.len() - 3];
        assert!(decode_records(cut).unwrap_err().contains("truncated"));
    }

    #[test]
    fn console_lines_read_back_as_written() {
        assert_eq!(
            parse_console_line(&progress_line(12.5, 4096, 8192, 512)),
            Some(ConsoleLine::Progress {
                t_s: 12.5,
                dirtied_bytes: 4096,
                written_bytes: 8192,
                pending_bytes: 512,
            })
        );
        assert_eq!(parse_console_line(&done_line()), Some(ConsoleLine::Done));
        assert_eq!(
            parse_console_line(&error_line("no disk\nat all")),
            Some(ConsoleLine::Error("no disk at all".into()))
        );
        assert_eq!(parse_console_line("[    1.2] Power down."), None);
        assert_eq!(parse_console_line("WBSIM-LABdone"), None);
    }

    #[test]
    fn header_round_trip() {
        let h = encode_header(1234, true);
        assert_eq!(decode_header(&h).unwrap(), (1234, true));
        assert!(decode_header(&[0u8; 64]).is_err());
    }
}

/// The forms [`kprobe_parts`] accepts, for the messages that refuse one.
pub const KPROBE_FORMS: &str =
    "`p:NAME SYMBOL [ARGS]` or `r:NAME SYMBOL [ARGS]`, optionally followed by ` if FILTER`";

/// A plan's dynamic probe split into its event name (in the `kprobes`
/// group), its `kprobe_events` line and its filter (empty for none).
/// None unless it reads `p:NAME SYMBOL [ARGS]` or `rN:NAME SYMBOL [ARGS]`
/// (N, the kretprobe's maxactive, optional), with an optional
/// ` if FILTER`, all on one line: an explicit name, so the event can be
/// enabled under `events/kprobes/NAME`.
pub fn kprobe_parts(probe: &str) -> Option<(&str, &str, &str)> {
    if probe.contains(['\n', '\r', '\0']) {
        return None;
    }
    let (definition, filter) = match probe.split_once(" if ") {
        Some((d, f)) => (d.trim(), f.trim()),
        None => (probe.trim(), ""),
    };
    let (kind, rest) = definition.split_once(':')?;
    let kind_ok = match kind.as_bytes() {
        [b'p'] => true,
        [b'r', maxactive @ ..] => maxactive.iter().all(u8::is_ascii_digit),
        _ => false,
    };
    if !kind_ok {
        return None;
    }
    let (name, target) = rest.split_once(' ')?;
    let name_ok = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !name_ok || target.trim().is_empty() {
        return None;
    }
    Some((name, definition, filter))
}

#[cfg(test)]
mod kprobe_tests {
    use super::kprobe_parts;

    #[test]
    fn a_probe_names_its_event_and_may_carry_a_filter() {
        assert_eq!(
            kprobe_parts("r:tfb_ret try_to_free_buffers ret=$retval:u8 if ret == 0"),
            Some((
                "tfb_ret",
                "r:tfb_ret try_to_free_buffers ret=$retval:u8",
                "ret == 0"
            ))
        );
        assert_eq!(
            kprobe_parts("p:tfb try_to_free_buffers index=+32(%di):u64"),
            Some(("tfb", "p:tfb try_to_free_buffers index=+32(%di):u64", ""))
        );
        assert!(kprobe_parts("r16:x f").is_some());
    }

    #[test]
    fn a_probe_without_name_or_target_or_on_two_lines_is_refused() {
        for bad in [
            "p try_to_free_buffers",
            "p:tfb",
            "x:tfb f",
            "p:kprobes/tfb f",
            "p:1x f",
            "r1a:x f",
            "p:x f\np:y g",
            ":x f",
        ] {
            assert_eq!(kprobe_parts(bad), None, "{bad}");
        }
    }
}
