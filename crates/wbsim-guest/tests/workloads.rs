//! Each workload for real, through `wbsim-guest task`, in a temporary
//! directory with tiny sizes.

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn task(dir: &Path, command: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wbsim-guest"))
        .args(["task", "--name", "t", "--", command])
        .current_dir(dir)
        .output()
        .expect("run wbsim-guest task")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn dd_writes_bs_times_count_and_reports_like_gnu_dd() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("disk")).unwrap();
    let o = task(
        dir.path(),
        "dd if=/dev/zero of=disk/f bs=4k count=$((3 * 5)) conv=fsync",
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let data = std::fs::read(dir.path().join("disk/f")).unwrap();
    assert_eq!(data.len(), 4096 * 15);
    assert!(data.iter().all(|&b| b == 0));
    let e = text(&o.stderr);
    assert!(
        e.starts_with("15+0 records in\n15+0 records out\n61440 bytes (61 kB) copied, "),
        "{e}"
    );
    assert!(e.trim_end().ends_with("B/s"), "{e}");
    // O_TRUNC: a second, smaller run leaves a smaller file.
    let o = task(dir.path(), "dd if=/dev/zero of=disk/f bs=1000 count=1");
    assert!(o.status.success());
    assert_eq!(
        std::fs::metadata(dir.path().join("disk/f")).unwrap().len(),
        1000
    );
}

#[test]
fn dd_into_a_missing_directory_fails_with_dds_message() {
    let dir = tempfile::tempdir().unwrap();
    let o = task(dir.path(), "dd if=/dev/zero of=nodir/f bs=1 count=1");
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("dd: failed to open 'nodir/f': No such file or directory"));
}

fn files_under(p: &Path) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(p).unwrap().flatten() {
        let m = e.metadata().unwrap();
        if m.is_dir() {
            out.extend(files_under(&e.path()));
        } else {
            out.push((e.file_name().to_string_lossy().into_owned(), m.len()));
        }
    }
    out
}

#[test]
fn fs_mark_creates_threads_times_files_times_loops_files() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("disk")).unwrap();
    let o = task(
        dir.path(),
        "fs_mark -d /disk/a -d disk/b -t 4 -n 3 -s 10000 -w 4096 -L 2 -S0",
    );
    assert!(o.status.success(), "{}{}", text(&o.stdout), text(&o.stderr));
    for d in ["disk/a", "disk/b"] {
        let files = files_under(&dir.path().join(d));
        // Two threads per directory, three files each, two loops.
        assert_eq!(files.len(), 12, "{d}: {files:?}");
        assert!(files.iter().all(|(n, len)| n.len() == 40 && *len == 10000));
    }
    let out = text(&o.stdout);
    assert!(
        out.contains("FSUse%        Count         Size    Files/sec     App Overhead"),
        "{out}"
    );
    let rows: Vec<Vec<&str>> = out
        .lines()
        .skip_while(|l| !l.starts_with("FSUse%"))
        .skip(1)
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows.len(), 2, "{out}");
    assert_eq!((rows[0][1], rows[0][2]), ("12", "10000"));
    assert_eq!(rows[1][1], "24");
}

#[test]
fn fs_mark_subdirectories_round_robin() {
    let dir = tempfile::tempdir().unwrap();
    let o = task(dir.path(), "fs_mark -d d -D 3 -N 2 -n 6 -s 0 -k -S 0");
    assert!(o.status.success(), "{}", text(&o.stderr));
    let mut subdirs: Vec<(String, usize)> = std::fs::read_dir(dir.path().join("d"))
        .unwrap()
        .flatten()
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                files_under(&e.path()).len(),
            )
        })
        .collect();
    subdirs.sort();
    assert_eq!(
        subdirs,
        vec![("00".into(), 2), ("01".into(), 2), ("02".into(), 2)]
    );
}

#[test]
fn iozone_write_rewrite_read_random_and_keep() {
    let dir = tempfile::tempdir().unwrap();
    for mmap in ["", "-B "] {
        let o = task(
            dir.path(),
            &format!("iozone {mmap}-e -w -i 0 -i 1 -i 2 -r 8k -s 256k -f io.tmp"),
        );
        assert!(o.status.success(), "{}", text(&o.stderr));
        let out = text(&o.stdout);
        for t in [
            "write",
            "rewrite",
            "read",
            "reread",
            "randread",
            "randwrite",
        ] {
            assert!(out.contains(&format!("iozone: {t} ")), "{t}: {out}");
        }
        let row = out.lines().last().unwrap();
        assert!(row.starts_with("             256       8"), "{row:?}");
        assert_eq!(
            std::fs::metadata(dir.path().join("io.tmp")).unwrap().len(),
            256 << 10
        );
    }
    // Without -w the file goes at the end.
    let o = task(dir.path(), "iozone -i 0 -r 4k -s 16k -f gone.tmp");
    assert!(o.status.success());
    assert!(!dir.path().join("gone.tmp").exists());
}

#[test]
fn mapwrite_fills_every_page_of_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let o = task(dir.path(), "mapwrite -s 64K m");
    assert!(o.status.success(), "{}", text(&o.stderr));
    let data = std::fs::read(dir.path().join("m")).unwrap();
    assert_eq!(data.len(), 64 << 10);
    assert!(data.iter().all(|&b| b == 0xa5));
}

fn spawn(dir: &Path, command: &str) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_wbsim-guest"))
        .args(["task", "--", command])
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn memtouch_runs_until_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = spawn(dir.path(), "memtouch -s 1M -H 512K -r 10000 -w 50");
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        child.try_wait().unwrap().is_none(),
        "memtouch ended by itself"
    );
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let status = child.wait().unwrap();
    assert_eq!(status.signal(), Some(libc::SIGTERM));
}

#[test]
fn memtouch_without_a_hot_set_closes_stderr_once_filled_and_stays() {
    use std::io::Read;
    let dir = tempfile::tempdir().unwrap();
    let mut child = spawn(dir.path(), "memtouch -s 2M");
    let mut err = child.stderr.take().unwrap();
    let start = Instant::now();
    let mut sink = Vec::new();
    err.read_to_end(&mut sink).unwrap();
    assert!(start.elapsed() < Duration::from_secs(10));
    assert!(
        child.try_wait().unwrap().is_none(),
        "memtouch left after filling"
    );
    child.kill().unwrap();
    child.wait().unwrap();
}
