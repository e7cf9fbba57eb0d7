//! What the programs do when `write(2)` or a write fault meets a full
//! filesystem (see `fs::space` for where the filesystems fail):
//! - GNU dd (coreutils 8.x `dd.c`): `iwrite` retries a short write, gets
//!   ENOSPC, dd prints `dd: error writing 'FILE': No space left on
//!   device`, then `print_stats` (records in/out, the bytes line with
//!   `human_readable` SI figures and `%g` seconds) and exits 1;
//! - fs_mark 3.3 (`write_file`): `fs_mark: write_file write failed: RET
//!   STRERROR` (RET the short count, or -1 with ENOSPC) and
//!   `cleanup_exit()`, status 1; the other threads stop with it;
//! - IOzone (`write_perf_test`): `Error writing block N, fd= F` on stdout,
//!   `perror("write")` on stderr, then `signal_handler()` unlinks the file
//!   and exits with status 0;
//! - a write fault gets SIGBUS from `->page_mkwrite` (status 135).

use crate::sched::Step;
use crate::workload::Process;
use crate::workload::WorkloadHost;

/// Exit status of a process killed by SIGBUS (128 + 7).
pub const SIGBUS_STATUS: i32 = 135;

/// What the programs do on ENOSPC (dd and fs_mark exit, IOzone reports).
pub trait Enospc: WorkloadHost {
    /// `write(2)` of a dd or fs_mark task failed with ENOSPC: the program
    /// reports it and exits.
    fn write_enospc(&mut self, tid: u32) -> Step {
        let elapsed = self.step_now() - self.task(tid).started_ns;
        self.wb_mut().set_task_backing_dev(tid, None);
        let (status, message, run) = match self.workload().process(tid) {
            Process::Writer(w) => {
                let output = crate::workload::dd::parse_dd(&self.task(tid).command)
                    .map(|d| d.output)
                    .unwrap_or_default();
                (
                    1,
                    dd_enospc_message(&output, w.bs_bytes, w.bytes_written, elapsed),
                    None,
                )
            }
            Process::FsMark(f) => {
                let in_call = f.writer.pos_bytes % f.writer.bs_bytes.max(1);
                let msg = if in_call > 0 {
                    format!("fs_mark: write_file write failed: {in_call} Success")
                } else {
                    "fs_mark: write_file write failed: -1 No space left on device".to_string()
                };
                (1, msg, Some(f.run))
            }
            _ => (1, "No space left on device".to_string(), None),
        };
        match run {
            Some(run) => self.fsmark_fail(run, message),
            None => {
                let t = self.task_mut(tid);
                t.exit_status = status;
                t.message = message;
            }
        }
        Step::Exit
    }

    /// An fs_mark thread failed: every thread of the run exits with status
    /// 1; the message goes on the task the scenario names.
    fn fsmark_fail(&mut self, run: usize, message: String) {
        self.workload_mut().fsmark_runs[run].failed = true;
        let mut first = true;
        for t in 0..self.nr_tasks() {
            let Some(Process::FsMark(f)) = self.workload().process_of(t as u32) else {
                continue;
            };
            if f.run != run {
                continue;
            }
            let task = self.task_mut(t as u32);
            task.exit_status = 1;
            if first {
                task.message.clone_from(&message);
                first = false;
            }
            if task.exited_ns.is_none() {
                self.wake_task(t as u32);
            }
        }
    }

    /// A write fault on a full filesystem: `->page_mkwrite` returns
    /// VM_FAULT_SIGBUS and the process is killed.
    fn fault_sigbus(&mut self, tid: u32) -> Step {
        self.task_mut(tid).exit_status = SIGBUS_STATUS;
        Step::Exit
    }
}

impl<T: WorkloadHost + ?Sized> Enospc for T {}

/// dd's ENOSPC report: the error line, then `print_stats` as coreutils 8.x
/// prints it.
pub fn dd_enospc_message(output: &str, bs: u64, written: u64, elapsed_ns: u64) -> String {
    let bs = bs.max(1);
    let full = written / bs;
    let partial = u64::from(!written.is_multiple_of(bs));
    let secs = elapsed_ns as f64 / 1e9;
    let rate = if secs > 0.0 {
        human_si_inexact(written as f64 / secs)
    } else {
        "Infinity B".to_string()
    };
    format!(
        "dd: error writing '{output}': No space left on device\n\
         {}+0 records in\n{full}+{partial} records out\n\
         {written} bytes ({}) copied, {} s, {rate}/s",
        full + 1,
        human_si_exact(written),
        fmt_g(secs)
    )
}

const SI_PREFIX: [&str; 7] = ["", "k", "M", "G", "T", "P", "E"];

/// gnulib `human_readable` (autoscale, SI, round to nearest, "B") on an
/// exact integer: one decimal below 10, none above.
pub fn human_si_exact(n: u64) -> String {
    if n < 1000 {
        return format!("{n} B");
    }
    let (mut v, mut e) = (n as f64, 0);
    while v >= 1000.0 && e < SI_PREFIX.len() - 1 {
        v /= 1000.0;
        e += 1;
    }
    let tenths = (v * 10.0).round() / 10.0;
    if tenths < 10.0 {
        format!("{tenths:.1} {}B", SI_PREFIX[e])
    } else {
        format!("{:.0} {}B", v.round(), SI_PREFIX[e])
    }
}

/// gnulib `human_readable`'s floating-point path (a rate): `%.1f`, or
/// `%.0f` when that would be longer than four characters.
pub fn human_si_inexact(x: f64) -> String {
    let (mut v, mut e) = (x, 0);
    while v >= 1000.0 && e < SI_PREFIX.len() - 1 {
        v /= 1000.0;
        e += 1;
    }
    let s = format!("{v:.1}");
    let s = if s.len() > 4 { format!("{v:.0}") } else { s };
    format!("{s} {}B", SI_PREFIX[e])
}

/// C's `%g`: six significant digits, trailing zeros dropped.
pub fn fmt_g(x: f64) -> String {
    if x == 0.0 {
        return "0".to_string();
    }
    let exp = x.abs().log10().floor() as i32;
    if !(-4..6).contains(&exp) {
        let s = format!("{x:.5e}");
        let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
        let m = m.trim_end_matches('0').trim_end_matches('.');
        let e: i32 = e.parse().unwrap_or(0);
        let sign = if e < 0 { '-' } else { '+' };
        return format!("{m}e{sign}{:02}", e.abs());
    }
    let decimals = (5 - exp).max(0) as usize;
    let s = format!("{x:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coreutils_figures() {
        assert_eq!(human_si_exact(1_073_741_824), "1.1 GB");
        assert_eq!(human_si_exact(104_857_600), "105 MB");
        assert_eq!(human_si_exact(512), "512 B");
        assert_eq!(human_si_inexact(20_400_000.0), "20.4 MB");
        assert_eq!(human_si_inexact(111_000_000.0), "111 MB");
        assert_eq!(fmt_g(52.59134), "52.5913");
        assert_eq!(fmt_g(0.0309), "0.0309");
        assert_eq!(fmt_g(3.0), "3");
        let m = dd_enospc_message("disk/f", 1 << 20, (1 << 30) - 4096, 50_000_000_000);
        assert!(m.starts_with("dd: error writing 'disk/f': No space left on device\n"));
        assert!(m.contains("1024+0 records in\n1023+1 records out\n"), "{m}");
    }
}
