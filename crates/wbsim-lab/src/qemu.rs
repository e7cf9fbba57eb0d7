//! Booting QEMU: the command line for a [`LabMachine`], the accelerator
//! (KVM when /dev/kvm is usable, TCG otherwise), and a watched boot: the
//! serial console read line by line (progress, kernel panics, the guest's
//! own error line), a wall-clock limit, and QEMU killed whatever happens
//! (PR_SET_PDEATHSIG covers this process dying too).

use std::io::BufRead;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::machine::LabMachine;
use wbsim_guest::protocol::{parse_console_line, ConsoleLine};

/// The QEMU binary.
pub const QEMU: &str = "qemu-system-x86_64";

/// How the guest's CPUs are run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Accel {
    Kvm,
    Tcg,
}

impl Accel {
    pub fn as_str(self) -> &'static str {
        match self {
            Accel::Kvm => "kvm",
            Accel::Tcg => "tcg",
        }
    }
}

/// KVM when /dev/kvm opens read-write and is not `kvm_pvm` (a nested
/// paravirtual KVM on which stock kernels never got past the
/// decompressor, kernel-lab/debian-6.1 README); else TCG. Returns why.
pub fn auto_accel() -> (Accel, String) {
    let opens = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/kvm")
        .is_ok();
    if !opens {
        return (Accel::Tcg, "/dev/kvm is not usable".into());
    }
    if Path::new("/sys/module/kvm_pvm").exists() {
        return (
            Accel::Tcg,
            "/dev/kvm is kvm_pvm, on which stock kernels do not boot".into(),
        );
    }
    (Accel::Kvm, "/dev/kvm is usable".into())
}

/// Files of one boot.
pub struct BootFiles<'a> {
    pub kernel: &'a Path,
    pub initrd: &'a Path,
    pub data_disk: &'a Path,
    pub results_disk: &'a Path,
    /// The swap image, when the machine has swap.
    pub swap_disk: Option<&'a Path>,
}

/// QEMU throttle group of a data disk and a swap disk on the same device.
const SHARED_THROTTLE_GROUP: &str = "disk0";

/// The QEMU command line, one argument per element.
pub fn qemu_command(m: &LabMachine, accel: Accel, files: &BootFiles) -> Vec<String> {
    let mut machine = m.machine_type.clone();
    if let Some(b) = m.below_4g_mib {
        machine += &format!(",max-ram-below-4g={b}M");
    }
    let cpu = match (accel, m.machine_type.as_str()) {
        (Accel::Kvm, _) => "host",
        // The old machine type's compat properties hide long mode from
        // `-cpu max` alone (kernel-lab README).
        (Accel::Tcg, "pc-i440fx-1.7") => "max,xlevel=0x80000008",
        (Accel::Tcg, _) => "max",
    };
    let accel_arg = match accel {
        Accel::Kvm => "kvm".to_string(),
        Accel::Tcg => "tcg,thread=multi".to_string(),
    };
    let mut data = format!(
        "file={},if=none,id=data,format=raw,cache=writeback",
        files.data_disk.display()
    );
    let shared = m.swap.as_ref().is_some_and(|sw| sw.shares_data_throttle);
    if m.write_bytes_per_second > 0 {
        data += &format!(",throttling.bps-write={}", m.write_bytes_per_second);
        if shared {
            data += &format!(",throttling.group={SHARED_THROTTLE_GROUP}");
        }
    }
    let results = format!(
        "file={},if=none,id=results,format=raw,cache=writeback",
        files.results_disk.display()
    );
    let s = |x: &str| x.to_string();
    let mut cmd = vec![
        s(QEMU),
        s("-machine"),
        machine,
        s("-accel"),
        accel_arg,
        s("-cpu"),
        s(cpu),
        s("-m"),
        m.memory_mib.to_string(),
        s("-smp"),
        m.cpus.to_string(),
        s("-kernel"),
        files.kernel.display().to_string(),
        s("-initrd"),
        files.initrd.display().to_string(),
        s("-append"),
        s("console=ttyS0 panic=-1 loglevel=4 rdinit=/init"),
        s("-drive"),
        data,
        s("-device"),
        s("virtio-blk-pci,drive=data"),
        s("-drive"),
        results,
        s("-device"),
        s("virtio-blk-pci,drive=results"),
        s("-display"),
        s("none"),
        s("-serial"),
        s("stdio"),
        s("-monitor"),
        s("none"),
        s("-no-reboot"),
        s("-nodefaults"),
        s("-net"),
        s("none"),
    ];
    // After the results disk, so the data and results disks keep their
    // names (vda, vdb); the guest finds the swap disk by its header.
    if let (Some(sw), Some(path)) = (&m.swap, files.swap_disk) {
        let mut drive = format!(
            "file={},if=none,id=swap,format=raw,cache=writeback",
            path.display()
        );
        // One throttle group: QEMU meters the two images' writes together
        // (on one device the swap disk's rate is the data disk's).
        if sw.write_bytes_per_second > 0 {
            drive += &format!(",throttling.bps-write={}", sw.write_bytes_per_second);
            if shared {
                drive += &format!(",throttling.group={SHARED_THROTTLE_GROUP}");
            }
        }
        let at = cmd
            .iter()
            .position(|a| a == "-display")
            .unwrap_or(cmd.len());
        cmd.splice(
            at..at,
            [
                s("-drive"),
                drive,
                s("-device"),
                s("virtio-blk-pci,drive=swap"),
            ],
        );
    }
    cmd
}

/// Process groups of the QEMUs running now, for [`kill_running`].
static RUNNING: std::sync::Mutex<Vec<i32>> = std::sync::Mutex::new(Vec::new());

/// Kill every QEMU this process started and still runs, with whatever
/// it started (for a signal handler; PR_SET_PDEATHSIG reaches only QEMU
/// itself, and only once this process is gone).
pub fn kill_running() {
    if let Ok(r) = RUNNING.lock() {
        for pgid in r.iter() {
            // SAFETY: kill(2) on a process group this process created.
            unsafe {
                libc::kill(-pgid, libc::SIGKILL);
            }
        }
    }
}

/// What a finished boot left.
#[derive(Debug)]
pub struct BootOutcome {
    /// Everything the guest printed on its serial console.
    pub console: String,
    pub wall_seconds: f64,
}

/// The last `n` lines of a console log, for error messages.
pub fn tail(console: &str, n: usize) -> String {
    let lines: Vec<&str> = console.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// What a panic line means for the lab, when it is a known one.
fn panic_hint(line: &str) -> &'static str {
    if line.contains("Unable to mount root fs") || line.contains("No working init found") {
        " (the kernel did not run the initramfs: it needs CONFIG_BLK_DEV_INITRD, and an \
         initramfs in the newc format)"
    } else if line.contains("Attempted to kill init") {
        " (the guest's /init exited or crashed; see the console lines below)"
    } else {
        ""
    }
}

/// Watches the guest's progress lines for writeback that stopped: pages
/// dirty or under writeback (`pending_bytes`), and `written_bytes`
/// unchanged for `limit_s` seconds of guest time. The flusher writes any dirty page within
/// `dirty_expire` + `dirty_writeback` of guest time, so that is a hung
/// kernel (a filesystem stuck with pages under writeback, an RCU stall),
/// not a slow device: stop it rather than wait out the wall-clock limit.
#[derive(Debug, Clone, Copy)]
pub struct WritebackStall {
    pub limit_s: f64,
    last_written: u64,
    since_s: f64,
}

impl WritebackStall {
    pub fn new(limit_s: f64) -> Self {
        WritebackStall {
            limit_s,
            last_written: 0,
            since_s: 0.0,
        }
    }

    /// Feed one progress line; `Some(message)` once writeback has stalled.
    pub fn check(&mut self, t_s: f64, written_bytes: u64, pending_bytes: u64) -> Option<String> {
        if written_bytes != self.last_written || pending_bytes == 0 {
            self.last_written = written_bytes;
            self.since_s = t_s;
            return None;
        }
        (t_s - self.since_s >= self.limit_s).then(|| {
            format!(
                "the guest's writeback stopped: nothing written for {:.0} s of guest time \
                 (from {:.0} s) with {} MiB dirty or under writeback; the guest kernel hung \
                 (see the console lines below); QEMU was killed",
                t_s - self.since_s,
                self.since_s,
                pending_bytes >> 20
            )
        })
    }
}

/// Boot QEMU with `cmd` and watch it until it exits, `wall_limit`
/// passes or (with `stall`) its writeback stops. `on_line` sees every
/// console line as it arrives.
pub fn boot(
    cmd: &[String],
    wall_limit: Duration,
    mut stall: Option<WritebackStall>,
    on_line: &mut dyn FnMut(&str),
) -> Result<BootOutcome, String> {
    use std::os::unix::process::CommandExt;
    let mut command = Command::new(&cmd[0]);
    command
        .args(&cmd[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own process group, so that killing it kills anything it started.
        .process_group(0);
    // SAFETY: prctl is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        command.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
    let start = Instant::now();
    let mut child = command.spawn().map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            format!("{QEMU} not found: install it with `apt-get install qemu-system-x86` (or run `wbsim lab setup`)")
        } else {
            format!("cannot start {QEMU}: {e}")
        }
    })?;
    let pgid = child.id() as i32;
    if let Ok(mut r) = RUNNING.lock() {
        r.push(pgid);
    }
    let stdout = child.stdout.take().expect("piped");
    let stderr = child.stderr.take().expect("piped");
    let (tx, rx) = mpsc::channel::<String>();
    let reader = std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).split(b'\n') {
            let Ok(line) = line else { break };
            // The serial line carries the odd NUL or escape byte; keep text.
            let text: String = String::from_utf8_lossy(&line)
                .chars()
                .filter(|c| !c.is_control() || *c == '\t')
                .collect();
            if tx.send(text).is_err() {
                break;
            }
        }
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut std::io::BufReader::new(stderr), &mut s);
        s
    });
    let mut console = String::new();
    let mut failure: Option<String> = None;
    loop {
        let left = wall_limit.saturating_sub(start.elapsed());
        match rx.recv_timeout(left.min(Duration::from_millis(500))) {
            Ok(line) => {
                console.push_str(&line);
                console.push('\n');
                on_line(&line);
                if line.contains("Kernel panic") {
                    failure = Some(format!(
                        "the guest kernel panicked: {}{}",
                        line.trim(),
                        panic_hint(&line)
                    ));
                    break;
                }
                match parse_console_line(&line) {
                    Some(ConsoleLine::Error(msg)) => {
                        // The guest powers off by itself; keep reading briefly.
                        failure = Some(format!("the guest failed: {msg}"));
                    }
                    Some(ConsoleLine::Progress {
                        t_s,
                        written_bytes,
                        pending_bytes,
                        ..
                    }) => {
                        if let Some(f) = stall
                            .as_mut()
                            .and_then(|w| w.check(t_s, written_bytes, pending_bytes))
                        {
                            failure = Some(f);
                            break;
                        }
                    }
                    _ => {}
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if start.elapsed() >= wall_limit {
                    failure = Some(format!(
                        "the guest did not finish within the wall-clock limit of {} s \
                         (--wall-limit-s); QEMU was killed",
                        wall_limit.as_secs()
                    ));
                    break;
                }
            }
        }
    }
    // SAFETY: kill(2) on the child's own process group.
    unsafe {
        libc::kill(-pgid, libc::SIGKILL);
    }
    let status = child.wait();
    if let Ok(mut r) = RUNNING.lock() {
        r.retain(|p| *p != pgid);
    }
    let status = status.map_err(|e| format!("waiting for {QEMU}: {e}"))?;
    let _ = reader.join();
    let qemu_err = err_reader.join().unwrap_or_default();
    let wall_seconds = start.elapsed().as_secs_f64();
    let done = console
        .lines()
        .any(|l| parse_console_line(l) == Some(ConsoleLine::Done));
    if failure.is_none() && !done {
        failure = Some(format!(
            "QEMU exited ({status}) before the guest reported its results{}",
            if qemu_err.trim().is_empty() {
                String::new()
            } else {
                format!("; QEMU said: {}", qemu_err.trim())
            }
        ));
    }
    match failure {
        Some(f) => Err(format!("{f}\nlast console lines:\n{}", tail(&console, 15))),
        None => Ok(BootOutcome {
            console,
            wall_seconds,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn machine(below: Option<u64>, ty: &str) -> LabMachine {
        LabMachine {
            memory_mib: 256,
            below_4g_mib: below,
            machine_type: ty.into(),
            cpus: 2,
            write_bytes_per_second: 20_000_000,
            disk_bytes: 1 << 30,
            fs_type: wbsim::scenario::FsType::Ext4,
            mount: "disk".into(),
            sysctls: vec![],
            expected_zone_pages: vec![],
            notes: vec![],
            swap: None,
            data_queue: vec![],
        }
    }

    fn files() -> BootFiles<'static> {
        BootFiles {
            kernel: Path::new("/k"),
            initrd: Path::new("/i"),
            data_disk: Path::new("/d.img"),
            results_disk: Path::new("/r.img"),
            swap_disk: None,
        }
    }

    #[test]
    fn swap_on_the_data_device_shares_its_throttle_group() {
        let mut m = machine(None, "pc");
        m.swap = Some(crate::machine::LabSwap {
            bytes: 1 << 30,
            write_bytes_per_second: 20_000_000,
            shares_data_throttle: true,
        });
        let f = BootFiles {
            swap_disk: Some(Path::new("/s.img")),
            ..files()
        };
        let c = qemu_command(&m, Accel::Tcg, &f);
        let drives: Vec<&String> = c.iter().filter(|a| a.starts_with("file=")).collect();
        assert_eq!(drives.len(), 3, "{c:?}");
        let group = format!("throttling.group={SHARED_THROTTLE_GROUP}");
        assert!(drives[0].contains("/d.img") && drives[0].contains(&group));
        assert!(drives[1].contains("/r.img") && !drives[1].contains("throttling"));
        assert!(drives[2].contains("/s.img") && drives[2].contains(&group));
        assert!(drives[2].contains("throttling.bps-write=20000000"));
        // vda, vdb stay the data and results disks; swap comes third.
        let j = c.join(" ");
        assert!(j.find("drive=results").unwrap() < j.find("drive=swap").unwrap());
        // A swap device of its own is throttled at its own rate, alone.
        m.swap.as_mut().unwrap().shares_data_throttle = false;
        m.swap.as_mut().unwrap().write_bytes_per_second = 5_000_000;
        let c = qemu_command(&m, Accel::Tcg, &f);
        let j = c.join(" ");
        assert!(!j.contains("throttling.group"), "{j}");
        assert!(j.contains(
            "file=/s.img,if=none,id=swap,format=raw,cache=writeback,throttling.bps-write=5000000"
        ));
    }

    #[test]
    fn command_line_carries_memory_layout_throttle_and_both_disks() {
        let c = qemu_command(&machine(Some(1792), "pc"), Accel::Tcg, &files());
        let joined = c.join(" ");
        assert!(joined.contains("-machine pc,max-ram-below-4g=1792M"));
        assert!(joined.contains("-m 256 -smp 2"));
        assert!(
            joined.contains("file=/d.img,") && joined.contains("throttling.bps-write=20000000")
        );
        assert!(joined.contains("file=/r.img,"));
        assert!(joined.contains("-accel tcg,thread=multi -cpu max "));
        // The data disk is the first virtio disk (vda).
        assert!(joined.find("drive=data").unwrap() < joined.find("drive=results").unwrap());
    }

    #[test]
    fn the_old_machine_type_gets_long_mode_explicitly() {
        let c = qemu_command(&machine(Some(3326), "pc-i440fx-1.7"), Accel::Tcg, &files());
        assert!(c.contains(&"max,xlevel=0x80000008".to_string()));
        let k = qemu_command(&machine(None, "pc"), Accel::Kvm, &files());
        assert!(k.contains(&"host".to_string()) && k.contains(&"pc".to_string()));
    }

    #[test]
    fn a_missing_qemu_is_a_clear_error() {
        let e = boot(
            &["/nonexistent/qemu-system-x86_64".to_string()],
            Duration::from_secs(1),
            None,
            &mut |_| {},
        )
        .unwrap_err();
        assert!(
            e.contains("not found") && e.contains("apt-get install qemu-system-x86"),
            "{e}"
        );
    }

    #[test]
    fn writeback_that_stops_is_caught_and_progress_or_idleness_is_not() {
        let mut w = WritebackStall::new(300.0);
        // Writing: fine, whatever the pace.
        assert_eq!(w.check(5.0, 10 << 20, 89 << 20), None);
        assert_eq!(w.check(200.0, 11 << 20, 89 << 20), None);
        // Nothing dirty or under writeback (all written, a read phase,
        // even with nr_dirtied above nr_written after redirtying): idle.
        let mut idle = WritebackStall::new(300.0);
        assert_eq!(idle.check(0.0, 1 << 20, 0), None);
        assert_eq!(idle.check(1000.0, 1 << 20, 0), None);
        // Pending and nothing written for the limit: stalled.
        assert_eq!(w.check(499.0, 11 << 20, 89 << 20), None);
        let e = w.check(500.0, 11 << 20, 89 << 20).expect("a stall");
        assert!(
            e.contains("writeback stopped") && e.contains("89 MiB"),
            "{e}"
        );
    }

    #[test]
    fn a_guest_whose_writeback_stops_is_killed_without_waiting_for_the_wall_limit() {
        let t = Instant::now();
        let script = "echo booting; \
            for s in 0 100 200 300 400; do \
              echo \"WBSIM-LAB progress t_s=$s.0 dirtied_bytes=4096000 written_bytes=1024 pending_bytes=4000000\"; done; \
            echo 'INFO: rcu_sched_state detected stall on CPU 2'; sleep 30";
        let e = boot(
            &["sh".to_string(), "-c".to_string(), script.to_string()],
            Duration::from_secs(20),
            Some(WritebackStall::new(300.0)),
            &mut |_| {},
        )
        .unwrap_err();
        assert!(e.contains("writeback stopped"), "{e}");
        assert!(t.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn a_hanging_guest_is_killed_at_the_wall_clock_limit() {
        let t = Instant::now();
        let e = boot(
            &["sleep".to_string(), "30".to_string()],
            Duration::from_millis(700),
            None,
            &mut |_| {},
        )
        .unwrap_err();
        assert!(e.contains("wall-clock limit"), "{e}");
        assert!(t.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn a_panic_line_ends_the_boot_with_the_panic_and_a_hint() {
        let script = "echo booting; echo 'Kernel panic - not syncing: VFS: Unable to mount root fs on unknown-block(0,0)'; sleep 30";
        let e = boot(
            &["sh".to_string(), "-c".to_string(), script.to_string()],
            Duration::from_secs(20),
            None,
            &mut |_| {},
        )
        .unwrap_err();
        assert!(
            e.contains("panicked") && e.contains("CONFIG_BLK_DEV_INITRD"),
            "{e}"
        );
        assert!(e.contains("booting"), "the console tail is shown: {e}");
    }

    #[test]
    fn exit_without_results_is_an_error_and_done_is_success() {
        let e = boot(
            &["true".to_string()],
            Duration::from_secs(5),
            None,
            &mut |_| {},
        )
        .unwrap_err();
        assert!(e.contains("before the guest reported"), "{e}");
        let mut seen = Vec::new();
        let ok = boot(
            &[
                "sh".to_string(),
                "-c".to_string(),
                "echo hi; echo 'WBSIM-LAB done'".to_string(),
            ],
            Duration::from_secs(5),
            None,
            &mut |l| seen.push(l.to_string()),
        )
        .unwrap();
        assert_eq!(seen, ["hi", "WBSIM-LAB done"]);
        assert!(ok.console.contains("hi\n"));
    }
}
