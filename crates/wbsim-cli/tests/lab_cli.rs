//! `wbsim lab` failing the way a user meets it: a file that is not a
//! kernel, QEMU missing, a guest that panics or hangs, a scenario a real
//! machine cannot run. Each ends with a clear message and a non-zero
//! status, leaves nothing running and no disk image behind. A stand-in
//! `qemu-system-x86_64` script plays the guest, so no kernel boots here.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A file with an x86 boot header and version string, as QEMU -kernel
/// and the lab's check want; not bootable.
fn fake_bzimage(dir: &Path) -> PathBuf {
    let mut b = vec![0u8; 0x2000];
    b[0x1FE] = 0x55;
    b[0x1FF] = 0xAA;
    b[0x202..0x206].copy_from_slice(b"HdrS");
    b[0x206..0x208].copy_from_slice(&0x020Au16.to_le_bytes());
    b[0x20E..0x210].copy_from_slice(&0x0800u16.to_le_bytes());
    let v = b"6.1.0-test (lab) #1 SMP";
    b[0xA00..0xA00 + v.len()].copy_from_slice(v);
    let p = dir.join("bzImage");
    std::fs::write(&p, b).unwrap();
    p
}

/// A `qemu-system-x86_64` stand-in running `body` (sh), first on PATH.
fn fake_qemu(dir: &Path, body: &str) -> PathBuf {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let q = bin.join("qemu-system-x86_64");
    std::fs::write(&q, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&q, std::fs::Permissions::from_mode(0o755)).unwrap();
    bin
}

fn lab(dir: &Path, path_env: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wbsim"))
        .arg("lab")
        .args(args)
        .args(["--lab-dir", dir.join("lab").to_str().unwrap()])
        .args(["--guest", "/bin/true"])
        .env("PATH", path_env)
        .current_dir(root())
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// No boot directory (disk images, initramfs) is left in the lab dir.
fn assert_no_boot_left(dir: &Path) {
    let tmp = dir.join("lab/tmp");
    let left: Vec<_> = std::fs::read_dir(&tmp)
        .map(|r| r.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// Whether `pid` runs: it exists and is not a zombie left for init to
/// reap (a container's init may never reap it).
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit_once(") ").map(|(_, rest)| !rest.starts_with('Z')))
        .unwrap_or(false)
}

const SMALL: &str = "scenarios/lab/ci-dd-96m-ext4.toml";

fn system_path_with(bin: &Path) -> String {
    format!("{}:/usr/bin:/bin:/usr/sbin:/sbin", bin.display())
}

#[test]
fn a_file_that_is_not_a_kernel_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let o = lab(
        d.path(),
        "/usr/bin:/bin",
        &["run", SMALL, "--kernel-image", env!("CARGO_BIN_EXE_wbsim")],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("not an x86 bzImage"), "{}", stderr(&o));
}

/// `lab run SMALL OPTION VALUE`, with `--trace` or without; nothing can
/// boot (no QEMU on PATH). Returns the output and whether the trace file
/// was written.
fn lab_run_with(option: &str, value: &str, traced: bool) -> (Output, bool) {
    let d = tempfile::tempdir().unwrap();
    let k = fake_bzimage(d.path());
    let t = d.path().join("t.txt");
    let mut args = vec!["run", SMALL, "--kernel-image", k.to_str().unwrap()];
    if traced {
        args.extend(["--trace", t.to_str().unwrap()]);
    }
    args.extend([option, value]);
    let o = lab(d.path(), "/nonexistent", &args);
    (o, t.exists())
}

/// `wbsim lab run OPTION BAD --trace` fails with a usage error naming
/// `bad_says` and writes no trace; `OPTION LONE` without `--trace` fails
/// saying `lone_says`. Both before anything boots.
fn assert_refused(option: &str, bad: &str, bad_says: &str, lone: &str, lone_says: &str) {
    let (refused, written) = lab_run_with(option, bad, true);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(stderr(&refused).contains(bad_says), "{}", stderr(&refused));
    assert!(!written);
    let (alone, _) = lab_run_with(option, lone, false);
    assert_ne!(alone.status.code(), Some(0));
    assert!(stderr(&alone).contains(lone_says), "{}", stderr(&alone));
}

#[test]
fn a_bad_or_lone_trace_event_is_refused_before_anything_boots() {
    assert_refused(
        "--trace-event",
        "../x",
        "expected SYSTEM/EVENT",
        "sched/sched_switch",
        "needs --trace",
    );
}

/// A dynamic probe must name its event and needs `--trace`; both are
/// refused before anything boots, with the form that is allowed.
#[test]
fn a_kprobe_without_a_name_or_without_trace_is_refused() {
    assert_refused(
        "--kprobe",
        "r try_to_free_buffers ret=$retval",
        "`r:NAME SYMBOL [ARGS]`",
        "r:tfb try_to_free_buffers ret=$retval:u8",
        "--kprobe needs --trace",
    );
}

#[test]
fn a_missing_qemu_names_the_package() {
    let d = tempfile::tempdir().unwrap();
    let k = fake_bzimage(d.path());
    let o = lab(
        d.path(),
        "/nonexistent",
        &["run", SMALL, "--kernel-image", k.to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("apt-get install qemu-system-x86"),
        "{}",
        stderr(&o)
    );
    assert_no_boot_left(d.path());
}

#[test]
fn a_panicking_guest_is_reported_with_the_panic_and_cleaned_up() {
    let d = tempfile::tempdir().unwrap();
    let k = fake_bzimage(d.path());
    let bin = fake_qemu(
        d.path(),
        "echo 'Linux version 6.1.0-test'\necho 'Kernel panic - not syncing: VFS: Unable to mount root fs'\nsleep 60",
    );
    let o = lab(
        d.path(),
        &system_path_with(&bin),
        &["run", SMALL, "--kernel-image", k.to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("panicked") && e.contains("CONFIG_BLK_DEV_INITRD"),
        "{e}"
    );
    assert_no_boot_left(d.path());
}

#[test]
fn a_hanging_guest_is_killed_at_the_wall_clock_limit() {
    let d = tempfile::tempdir().unwrap();
    let k = fake_bzimage(d.path());
    let marker = d.path().join("still-running");
    // The stand-in records its pid; it must be gone after wbsim returns.
    let bin = fake_qemu(
        d.path(),
        &format!("echo $$ > {}\nsleep 60", marker.display()),
    );
    let t = std::time::Instant::now();
    let o = lab(
        d.path(),
        &system_path_with(&bin),
        &[
            "run",
            SMALL,
            "--kernel-image",
            k.to_str().unwrap(),
            "--wall-limit-s",
            "2",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("wall-clock limit of 2 s"),
        "{}",
        stderr(&o)
    );
    assert!(t.elapsed().as_secs() < 30);
    let pid: i32 = std::fs::read_to_string(&marker)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(!alive(pid), "the QEMU stand-in {pid} is still running");
    assert_no_boot_left(d.path());
}

#[test]
fn raid0_and_fuse_without_a_static_ntfs3g_are_refused_before_anything_boots() {
    let d = tempfile::tempdir().unwrap();
    let k = fake_bzimage(d.path());
    let bin = fake_qemu(d.path(), "echo booted > /dev/null");
    for (scenario, extra, why) in [
        (
            "scenarios/writeback-plug/fsmark-xfs-raid0.toml",
            None,
            "cannot run this scenario on a real kernel: device \"md0\" is a RAID0",
        ),
        (
            "scenarios/zone-dirty-v2/fuse-ntfs.toml",
            None,
            "fuse-ntfs: the guest needs ntfs-3g, pass --ntfs-3g PATH",
        ),
        (
            "scenarios/zone-dirty-v2/fuse-ntfs.toml",
            Some("/bin/sh"),
            "dynamically linked",
        ),
    ] {
        let mut args = vec!["run", scenario, "--kernel-image", k.to_str().unwrap()];
        if let Some(x) = extra {
            args.extend(["--ntfs-3g", x]);
        }
        let o = lab(d.path(), &system_path_with(&bin), &args);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(stderr(&o).contains(why), "{}", stderr(&o));
    }
    assert_no_boot_left(d.path());
}

#[test]
fn the_debian_kernel_before_setup_says_to_run_setup() {
    let d = tempfile::tempdir().unwrap();
    let o = lab(
        d.path(),
        "/usr/bin:/bin",
        &["run", SMALL, "--kernel-image", "debian"],
    );
    assert_ne!(o.status.code(), Some(0));
    assert!(stderr(&o).contains("wbsim lab setup"), "{}", stderr(&o));
}

#[test]
fn an_interrupt_kills_the_guest_and_removes_its_disks() {
    let d = tempfile::tempdir().unwrap();
    let k = fake_bzimage(d.path());
    let marker = d.path().join("qemu-pid");
    let bin = fake_qemu(
        d.path(),
        &format!("echo $$ > {}\nsleep 60", marker.display()),
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_wbsim"))
        .args(["lab", "run", SMALL, "--kernel-image", k.to_str().unwrap()])
        .args(["--lab-dir", d.path().join("lab").to_str().unwrap()])
        .args(["--guest", "/bin/true"])
        .env("PATH", system_path_with(&bin))
        .current_dir(root())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let t = std::time::Instant::now();
    while !marker.exists() {
        assert!(
            t.elapsed().as_secs() < 30,
            "the QEMU stand-in never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_millis(200));
    // SAFETY: sending SIGINT to our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let pid: i32 = std::fs::read_to_string(&marker)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert!(!alive(pid), "the QEMU stand-in {pid} survived");
    assert_no_boot_left(d.path());
}
