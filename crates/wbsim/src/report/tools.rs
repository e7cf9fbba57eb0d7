//! The benchmark tools' own result tables, printed as the tools print
//! them, so a figure can be set beside a real run's log line for line:
//! fs_mark 3.3's `FSUse% Count Size Files/sec App Overhead` table and
//! IOzone 3.x's `KB reclen write rewrite read reread ...` table.

use std::fmt::Write as _;

use super::RunReport;
use crate::scenario::{Program, Scenario};
use crate::workload::iozone::IozoneTest;

/// fs_mark's table (fs_mark.c 3.3 prints `%6d %12d %12d %12.1f %16d` per
/// loop): Count is the files created so far by all threads; FSUse% is the
/// share of the filesystem's device the created files' blocks take (what
/// df shows on an otherwise empty filesystem; metadata is not counted).
pub fn format_fsmark(s: &mut String, config: &Scenario, run: &RunReport) {
    let Some((task, cmd)) = config.tasks.iter().find_map(|t| match &t.program {
        Program::FsMark(f) => Some((t, f)),
        _ => None,
    }) else {
        return;
    };
    if run.fsmark.is_empty() {
        return;
    }
    let capacity_bytes = cmd
        .dirs
        .first()
        .and_then(|d| {
            config
                .filesystems
                .iter()
                .find(|f| f.holds(d.trim_start_matches('/')))
        })
        .and_then(|f| config.devices.iter().find(|d| d.name == f.device))
        .map_or(0, |d| d.capacity_gib.saturating_mul(1 << 30));
    let per_loop = u64::from(cmd.threads()).saturating_mul(cmd.files_per_loop);
    let block_bytes = cmd.file_size_bytes.div_ceil(4096) * 4096;
    let _ = writeln!(s, "\nfs_mark (task {}, seed {}):", task.name, run.seed);
    if cmd.subdirs > 0 {
        // Accepted because the published command lines use them, but not
        // simulated: say so where the figures are read.
        let _ = writeln!(
            s,
            "(-D {} and -N are not modelled: every file of a thread goes to its -d \
             directory, in that directory's allocation group)",
            cmd.subdirs
        );
    }
    let _ = writeln!(
        s,
        "FSUse%        Count         Size    Files/sec     App Overhead"
    );
    for (i, l) in run.fsmark.iter().enumerate() {
        let count = per_loop.saturating_mul(i as u64 + 1);
        let used = count.saturating_mul(block_bytes);
        let pct = if capacity_bytes == 0 {
            0
        } else {
            (u128::from(used) * 100 / u128::from(capacity_bytes)) as u64
        };
        let _ = writeln!(
            s,
            "{pct:>6} {count:>12} {:>12} {:>12.1} {:>16.0}",
            cmd.file_size_bytes, l.files_per_second, l.overhead_us
        );
    }
}

/// IOzone's result table, one row per IOzone task (iozone.c 3.x: KB and
/// reclen `%16ld%8ld`, then write and rewrite `%8ld`, read and reread
/// `%9ld`, random read and random write `%8ld`; a test not run is blank),
/// in KiB/s as IOzone's "Output is in Kbytes/sec".
pub fn format_iozone(s: &mut String, config: &Scenario, run: &RunReport) {
    if run.iozone.is_empty() {
        return;
    }
    let _ = writeln!(s, "\niozone (seed {}; Kbytes/sec):", run.seed);
    let _ = writeln!(s, "{}", iozone_header());
    for task in &config.tasks {
        let Program::Iozone(cmd) = &task.program else {
            continue;
        };
        let mine: Vec<_> = run.iozone.iter().filter(|r| r.task == task.name).collect();
        if mine.is_empty() {
            continue;
        }
        let rates: Vec<(IozoneTest, u64)> =
            mine.iter().map(|r| (r.test, r.kib_per_second)).collect();
        let _ = writeln!(s, "{}   ({})", iozone_row(cmd, &rates), task.name);
    }
}

/// The two header lines of IOzone's result table.
pub fn iozone_header() -> String {
    format!(
        "{:58}  random  random\n              KB  reclen   write rewrite    read    reread    read   write",
        ""
    )
}

/// One row of IOzone's result table: KB and reclen, then each test's
/// KiB/s in its column (blank when not run). Shared with the lab's guest,
/// which prints the same table from a real run.
pub fn iozone_row(
    cmd: &crate::workload::iozone::IozoneCommand,
    rates: &[(IozoneTest, u64)],
) -> String {
    const COLUMNS: [(IozoneTest, usize); 6] = [
        (IozoneTest::Write, 8),
        (IozoneTest::Rewrite, 8),
        (IozoneTest::Read, 9),
        (IozoneTest::Reread, 9),
        (IozoneTest::RandRead, 8),
        (IozoneTest::RandWrite, 8),
    ];
    let mut s = format!("{:>16}{:>8}", cmd.file_bytes >> 10, cmd.record_bytes >> 10);
    for (test, width) in COLUMNS {
        match rates.iter().find(|(t, _)| *t == test) {
            Some((_, k)) => {
                let _ = write!(s, "{k:>width$}");
            }
            None => {
                let _ = write!(s, "{:width$}", "");
            }
        }
    }
    s
}
