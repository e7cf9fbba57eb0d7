//! The host-memory estimate that `wbsim run` checks before simulating is
//! an upper bound of what a run really takes (peak RSS measured with
//! wait4), and not so loose that it refuses runs the machine can hold.

use std::path::Path;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_wbsim");

/// Run `wbsim run FILE --runs 1` and return the child's peak RSS in bytes.
#[allow(clippy::zombie_processes)] // reaped by wait4, which gives its rusage
fn peak_rss_bytes(scenario: &Path) -> u64 {
    let child = Command::new(BIN)
        .args(["run", scenario.to_str().unwrap(), "--runs", "1"])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut status = 0;
    // SAFETY: rusage is plain data, zeroed is a valid value; wait4 writes it.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = child.id() as libc::pid_t;
    // SAFETY: the pid is our own child, not yet waited for.
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(r, pid);
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
    usage.ru_maxrss as u64 * 1024
}

#[test]
fn the_estimate_bounds_the_peak_rss_of_a_run() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    for file in [
        "scenarios/zone-dirty-v2/xfs.toml",
        "scenarios/reclaim-writeback/fsmark.toml",
        "scenarios/reclaim-writeback/micro.toml",
        "scenarios/writeback-plug/fsmark-xfs-raid0.toml",
        // A coarse unit: frames and page indexes in pages of 64 KiB.
        "scenarios/large-machine/xfs-64gib.toml",
    ] {
        let path = root.join(file);
        let sc = wbsim::scenario::load_scenario(&path).unwrap();
        let estimate = wbsim::estimate::run_memory(&sc, &wbsim::RunOptions::default());
        let measured = peak_rss_bytes(&path);
        let est = estimate.total_bytes();
        println!(
            "{file}: measured {} MiB, estimated {}",
            measured >> 20,
            estimate.describe()
        );
        assert!(
            est >= measured,
            "{file}: estimate {est} < measured {measured}"
        );
        assert!(
            est <= measured * 3 + (64 << 20),
            "{file}: estimate {est} far above measured {measured}"
        );
    }
}
