//! The command line of the built binary: subcommands, bad options, exit
//! statuses, `check-plan`, and task commands that do not parse.

use std::process::{Command, Output};

fn guest(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wbsim-guest"))
        .args(args)
        .output()
        .expect("run wbsim-guest")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn help_prints_usage() {
    for h in ["help", "--help", "-h"] {
        let o = guest(&[h]);
        assert!(o.status.success());
        assert!(text(&o.stdout).contains("wbsim-guest task [--name NAME]"));
    }
}

#[test]
fn unknown_subcommands_and_options_exit_2() {
    for args in [
        &[][..],
        &["frobnicate"][..],
        &["init", "--bogus"][..],
        &["task", "--name"][..],
        &["check-plan"][..],
    ] {
        let o = guest(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(text(&o.stderr).contains("--help for usage"), "{args:?}");
    }
}

#[test]
fn a_task_that_does_not_parse_exits_2_with_the_parsers_message() {
    let o = guest(&["task", "--name", "w", "--", "dd if=/dev/zero of=f bs=1M"]);
    assert_eq!(o.status.code(), Some(2));
    let e = text(&o.stderr);
    assert!(
        e.contains("w: missing count=; give the number of blocks"),
        "{e}"
    );
    let o = guest(&["task", "--", "cp", "a", "b"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("unknown program `cp`"));
    let o = guest(&["task", "--", "fs_mark -d x -n 1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("add -S0"));
}

const GOOD: &str = r#"{
  "version": 1, "fs_type": "xfs", "mount_options": "", "workdir": "/work",
  "mount": "disk", "sysctls": [["vm/dirty_ratio", "10"]],
  "tasks": [
    {"name": "a", "command": "dd if=/dev/zero of=disk/f bs=1M count=4", "after": null},
    {"name": "b", "command": "iozone -i 0 -r 4k -s 1m -f disk/io", "after": "a"},
    {"name": "m", "command": "memtouch -s 8M -H 4M -r 1000 -w 10", "after": null}
  ],
  "sample_ms": 250, "trace_events": ["writeback/writeback_start"],
  "trace_buffer_kb": 4096, "time_limit_s": 600, "modules": []
}"#;

#[test]
fn check_plan_good_and_bad() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.json");
    std::fs::write(&good, GOOD).unwrap();
    let o = guest(&["check-plan", good.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stdout));
    assert_eq!(text(&o.stdout), "ok\n");

    let bad = dir.path().join("bad.json");
    let text_bad = GOOD
        .replace("\"version\": 1", "\"version\": 2")
        .replace("count=4", "count=four")
        .replace("\"after\": \"a\"", "\"after\": \"z\"");
    std::fs::write(&bad, text_bad).unwrap();
    let o = guest(&["check-plan", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let out = text(&o.stdout);
    assert!(out.contains("plan version 2"), "{out}");
    assert!(out.contains("task a: count=four: malformed size"), "{out}");
    assert!(
        out.contains("task b: after = \"z\" is not the name of an earlier task"),
        "{out}"
    );

    let junk = dir.path().join("junk.json");
    std::fs::write(&junk, "{ not json").unwrap();
    let o = guest(&["check-plan", junk.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let o = guest(&["check-plan", "/nonexistent/plan.json"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stdout).contains("No such file or directory"));
}

#[test]
fn init_without_a_plan_fails_cleanly_and_does_not_power_off() {
    let o = guest(&["init", "--plan", "/nonexistent/plan.json"]);
    // Not PID 1: it cannot mount proc as a user, or finds no plan.
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stdout).contains("WBSIM-LAB error "),
        "{}",
        text(&o.stdout)
    );
}
