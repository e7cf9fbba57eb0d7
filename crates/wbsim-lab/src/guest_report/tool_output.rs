//! fs_mark's and IOzone's result lines, read back from the guest's
//! `task-output` records (what the tools printed on stdout), into the
//! simulator's own types, so that the report prints the same tables.

use wbsim::workload::fsmark_run::FsMarkLoop;
use wbsim::workload::iozone::IozoneTest;
use wbsim::workload::iozone_run::IozoneResult;
use wbsim_guest::protocol::{kind, Record};

const IOZONE_TESTS: [IozoneTest; 6] = [
    IozoneTest::Write,
    IozoneTest::Rewrite,
    IozoneTest::Read,
    IozoneTest::Reread,
    IozoneTest::RandRead,
    IozoneTest::RandWrite,
];

/// (task, line) of every `task-output` record, in order.
fn lines(records: &[Record]) -> impl Iterator<Item = (String, String)> + '_ {
    records
        .iter()
        .filter(|r| r.kind == kind::TASK_OUTPUT)
        .filter_map(|r| {
            let t = r.text();
            let (task, line) = t.split_once('\t')?;
            Some((task.to_string(), line.to_string()))
        })
}

/// fs_mark 3.3's result rows (`FSUse% Count Size Files/sec App Overhead`,
/// five numbers) of the first task that printed any, one per loop.
pub fn fsmark_loops(records: &[Record]) -> Vec<FsMarkLoop> {
    let mut first: Option<String> = None;
    let mut out = Vec::new();
    for (task, line) in lines(records) {
        let f: Vec<&str> = line.split_whitespace().collect();
        let numbers: Option<Vec<f64>> = f.iter().map(|x| x.parse().ok()).collect();
        let Some(n) = numbers.filter(|n| n.len() == 5) else {
            continue;
        };
        if first.get_or_insert_with(|| task.clone()) != &task {
            continue;
        }
        out.push(FsMarkLoop {
            files_per_second: n[3],
            overhead_us: n[4],
        });
    }
    out
}

/// The guest's IOzone lines `iozone: TEST KIB kB/sec (SECONDS s)`.
pub fn iozone_results(records: &[Record]) -> Vec<IozoneResult> {
    lines(records)
        .filter_map(|(task, line)| {
            let f: Vec<&str> = line.strip_prefix("iozone: ")?.split_whitespace().collect();
            let name = *f.first()?;
            let test = *IOZONE_TESTS.iter().find(|t| t.name() == name)?;
            let kib_per_second = f.get(1)?.parse().ok()?;
            let elapsed_seconds = f.get(3)?.trim_start_matches('(').parse().ok()?;
            Some(IozoneResult {
                task,
                test,
                kib_per_second,
                elapsed_seconds,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out(task: &str, line: &str) -> Record {
        Record {
            kind: kind::TASK_OUTPUT.into(),
            tag: "-".into(),
            t_ns: 0,
            payload: format!("{task}\t{line}").into_bytes(),
        }
    }

    #[test]
    fn fsmark_rows_of_the_first_task_only() {
        let r = [
            out(
                "a",
                "FSUse%        Count         Size    Files/sec     App Overhead",
            ),
            out(
                "a",
                "     3         1000        65536        812.5            20544",
            ),
            out(
                "b",
                "     3         1000        65536         99.0               10",
            ),
            out(
                "a",
                "     5         2000        65536        640.0            21000",
            ),
        ];
        let l = fsmark_loops(&r);
        assert_eq!(l.len(), 2);
        assert_eq!((l[0].files_per_second, l[0].overhead_us), (812.5, 20544.0));
        assert_eq!(l[1].files_per_second, 640.0);
    }

    #[test]
    fn iozone_lines_give_test_rate_and_time() {
        let r = [
            out("io", "\tOutput is in Kbytes/sec"),
            out("io", "iozone: write 20480 kB/sec (3.2 s)"),
            out("io", "iozone: rewrite 30000 kB/sec (2.1 s)"),
            out("io", "iozone: nosuch 1 kB/sec (1 s)"),
        ];
        let v = iozone_results(&r);
        assert_eq!(v.len(), 2);
        assert_eq!(
            (v[0].test, v[0].kib_per_second, v[0].elapsed_seconds),
            (IozoneTest::Write, 20480, 3.2)
        );
        assert_eq!(v[1].task, "io");
    }
}
