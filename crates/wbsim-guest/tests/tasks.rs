//! The init's task runner with the real binary: `after` chains,
//! background memtouch ended with SIGTERM, the time limit, and the
//! records it leaves (read back with `protocol::decode_records`).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use wbsim_guest::protocol::{
    decode_header, decode_records, PlanTask, Record, TaskEnd, RECORDS_OFFSET,
};
use wbsim_guest::records::RecordWriter;
use wbsim_guest::tasks::run_tasks;

fn t(name: &str, command: &str, after: Option<&str>) -> PlanTask {
    PlanTask {
        name: name.into(),
        command: command.into(),
        after: after.map(String::from),
    }
}

/// Run `tasks` in a temporary workdir; the ends and the records.
fn run(tasks: &[PlanTask], limit: Duration) -> (Vec<TaskEnd>, Vec<Record>) {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&results)
        .unwrap();
    let w = Arc::new(RecordWriter::new(file, 64 << 20));
    let exe = Path::new(env!("CARGO_BIN_EXE_wbsim-guest"));
    let ends = run_tasks(tasks, exe, dir.path(), limit, &w);
    w.finish().unwrap();
    let bytes = std::fs::read(&results).unwrap();
    let (len, complete) = decode_header(&bytes).unwrap();
    assert!(complete);
    let start = RECORDS_OFFSET as usize;
    let records = decode_records(&bytes[start..start + len as usize]).unwrap();
    (ends, records)
}

fn end<'a>(ends: &'a [TaskEnd], name: &str) -> &'a TaskEnd {
    ends.iter()
        .find(|e| e.name == name)
        .unwrap_or_else(|| panic!("no end of {name}"))
}

fn time_of(records: &[Record], kind: &str, pred: impl Fn(&Record) -> bool) -> u64 {
    records
        .iter()
        .find(|r| r.kind == kind && pred(r))
        .map(|r| r.t_ns)
        .expect(kind)
}

#[test]
fn after_chains_and_background_tasks() {
    let tasks = [
        t("a", "dd if=/dev/zero of=f bs=64k count=16", None),
        t("b", "iozone -i 0 -r 4k -s 64k -f io", Some("a")),
        t("m", "memtouch -s 1M -H 1M -r 1000 -w 10", None),
    ];
    let (ends, records) = run(&tasks, Duration::from_secs(60));
    let names: Vec<&str> = ends.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["a", "b", "m"]);
    assert_eq!(
        (end(&ends, "a").exit_status, end(&ends, "b").exit_status),
        (0, 0)
    );
    assert!(end(&ends, "a").message.contains("16+0 records out"));
    let m = end(&ends, "m");
    assert_eq!((m.exit_status, m.cut), (128 + libc::SIGTERM, false));

    let starts: Vec<String> = records
        .iter()
        .filter(|r| r.kind == "task-start")
        .map(|r| r.text())
        .collect();
    assert_eq!(starts.len(), 3);
    let a_end = time_of(&records, "task-end", |r| {
        r.text().contains("\"name\":\"a\"")
    });
    let b_start = time_of(&records, "task-start", |r| r.text() == "b");
    assert!(b_start >= a_end);
    let json: Vec<TaskEnd> = records
        .iter()
        .filter(|r| r.kind == "task-end")
        .map(|r| serde_json::from_slice(&r.payload).unwrap())
        .collect();
    assert_eq!(json, ends);
    assert!(records
        .iter()
        .any(|r| r.kind == "task-output" && r.text().starts_with("b\tiozone: write ")));
}

#[test]
fn a_task_after_memtouch_without_a_hot_set_starts_once_it_is_filled() {
    let tasks = [
        t("fill", "memtouch -s 2M", None),
        t("x", "dd if=/dev/zero of=f bs=4k count=1", Some("fill")),
    ];
    let (ends, _) = run(&tasks, Duration::from_secs(60));
    assert_eq!(end(&ends, "x").exit_status, 0);
    let fill = end(&ends, "fill");
    assert_eq!((fill.exit_status, fill.cut), (128 + libc::SIGTERM, false));
}

#[test]
fn the_time_limit_kills_and_marks_cut() {
    let tasks = [
        t(
            "slow",
            "dd if=/dev/zero of=/dev/null bs=1 count=1000000000",
            None,
        ),
        t("never", "dd if=/dev/zero of=f bs=1 count=1", Some("slow")),
        t("m", "memtouch -s 1M -H 1M -r 100", None),
    ];
    let (ends, records) = run(&tasks, Duration::from_millis(500));
    assert_eq!(ends.len(), 2);
    for e in &ends {
        assert!(e.cut, "{e:?}");
        assert_eq!(e.exit_status, 128 + libc::SIGKILL);
    }
    assert!(records
        .iter()
        .any(|r| r.kind == "log" && r.text().starts_with("task never never started")));
}

#[test]
fn a_failing_task_keeps_its_message() {
    let (ends, _) = run(
        &[t("bad", "dd if=/dev/zero of=missing/f bs=1 count=1", None)],
        Duration::from_secs(60),
    );
    assert_eq!(ends[0].exit_status, 1);
    assert_eq!(
        ends[0].message,
        "dd: failed to open 'missing/f': No such file or directory"
    );
    assert!(ends[0].user_seconds >= 0.0 && ends[0].system_seconds >= 0.0);
}
