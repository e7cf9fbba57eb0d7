//! fs_mark 3.3 (`fs_mark.c`): per loop, fork(2) one process per thread
//! (thread `i + j * dirs` works in directory `i`); each makes its
//! directory, checks the free space (statfs), then per file: mkdir of the
//! target directory (EEXIST), a 40-byte name (16 bytes of the time in
//! hex, `~`-padded, and 24 random letters and digits), timed
//! open(O_CREAT|O_RDWR|O_TRUNC), write(2) calls of `-w` bytes, close.
//! `-S 0` only (no fsync), files kept (`-k`/`-L`). `-D` subdirectories
//! `00`, `01`, ...: round robin with `-N` files each, else a new one
//! every 180 s, starting at one chosen by the clock, as fs_mark does
//! (the simulator puts every file in its `-d` directory). A leading `/`
//! of a `-d` directory is dropped, as the scenario validator drops it:
//! directories are relative to the workdir. `-l` writes no log file.
//! The parent prints fs_mark's table line per loop on stdout.

use std::ffi::CString;
use std::io::{self, Write};

use wbsim::workload::fsmark::FsMarkCommand;
use wbsim::workload::shell::split_words;

use super::{Failure, Rng};
use crate::sys;

const NAME_LEN: usize = 40;
const RAND_LEN: usize = 24;
const SECS_PER_DIR: u64 = 180;

/// A thread's loop figures: files/sec and app overhead (µs).
type Figures = (f64, u64);

/// A thread's failure: exit status and the stderr or stdout message.
struct ThreadError {
    stdout: bool,
    message: String,
}

fn err(message: String) -> ThreadError {
    ThreadError {
        stdout: false,
        message,
    }
}

fn now_us() -> u64 {
    sys::monotonic_ns() / 1000
}

fn realtime_secs() -> u64 {
    // SAFETY: time(NULL) has no preconditions.
    unsafe { libc::time(std::ptr::null_mut()) as u64 }
}

/// mkdir(path, 0777); EEXIST is fine.
fn mkdir(path: &str) -> io::Result<()> {
    let c = sys::cstring(path)?;
    // SAFETY: c is a valid path string.
    match sys::check(unsafe { libc::mkdir(c.as_ptr(), 0o777) }) {
        Err(e) if e.raw_os_error() == Some(libc::EEXIST) => Ok(()),
        r => r,
    }
}

/// statfs of `dir`: (percent used as df shows it, bytes available).
fn df(dir: &str) -> io::Result<(u32, u64)> {
    let c = sys::cstring(dir)?;
    // SAFETY: zeroed statvfs is a valid out-parameter.
    let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: c is a valid path string, s a valid buffer.
    sys::check(unsafe { libc::statvfs(c.as_ptr(), &mut s) })?;
    // fs_mark: (int)(100 * (float)(f_blocks - f_bavail) / f_blocks).
    let used = s.f_blocks.saturating_sub(s.f_bavail) as f32;
    let pct = if s.f_blocks > 0 {
        (100.0 * (used / s.f_blocks as f32)) as u32
    } else {
        0
    };
    Ok((pct, s.f_bavail as u64 * s.f_bsize as u64))
}

/// The file name: the hex time in the last 16 sequential bytes,
/// `~`-padded, then 24 random upper-case letters and digits.
fn file_name(secs: u64, rng: &mut Rng) -> String {
    const ALNUM: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    let seq_len = NAME_LEN - RAND_LEN;
    let hex = format!("{secs:x}");
    let mut name: String = hex[hex.len().saturating_sub(seq_len)..].to_string();
    while name.len() < seq_len {
        name.push('~');
    }
    for _ in 0..RAND_LEN {
        name.push(ALNUM[rng.below(ALNUM.len() as u64) as usize] as char);
    }
    name
}

/// One thread's loop (in its own process).
fn thread_work(cmd: &FsMarkCommand, dir: &str, buf: &[u8]) -> Result<Figures, ThreadError> {
    let mut rng = Rng::from_time();
    mkdir(dir).map_err(|e| {
        err(format!(
            "fill_dir:mkdir {dir} failed: {}",
            sys::err_text(&e)
        ))
    })?;
    let subdirs = u64::from(cmd.subdirs);
    let mut subdir = if subdirs > 0 {
        realtime_secs() % subdirs
    } else {
        0
    };
    let (mut in_subdir, mut subdir_since) = (0u64, 0u64);
    let (_, free) = df(dir).map_err(|e| {
        err(format!(
            "fs_mark: statfs failed on {dir} {}",
            sys::err_text(&e)
        ))
    })?;
    if free < cmd.file_size_bytes.saturating_mul(cmd.files_per_loop) {
        return Err(ThreadError {
            stdout: true,
            message: format!(
                "Insufficient free space in {dir} to create {} new files, exiting",
                cmd.files_per_loop
            ),
        });
    }
    let (mut ops_us, loop_start) = (0u64, now_us());
    for _ in 0..cmd.files_per_loop {
        let secs = realtime_secs();
        let target = if subdirs == 0 {
            dir.to_string()
        } else {
            if cmd.files_per_subdir > 0 {
                if in_subdir >= cmd.files_per_subdir {
                    subdir += 1;
                    in_subdir = 0;
                }
                subdir %= subdirs;
                in_subdir += 1;
            } else if subdir_since == 0 {
                subdir_since = secs;
            } else if secs - subdir_since > SECS_PER_DIR {
                subdir = (subdir + 1) % subdirs;
                subdir_since = secs;
            }
            format!("{dir}/{subdir:02x}")
        };
        mkdir(&target).map_err(|e| {
            err(format!(
                "fs_mark: mkdir {target} failed: {}",
                sys::err_text(&e)
            ))
        })?;
        let path = format!("{target}/{}", file_name(secs, &mut rng));
        let c = CString::new(path).map_err(|_| err("fs_mark: NUL in a path".into()))?;
        let t0 = now_us();
        // SAFETY: c is a valid path string.
        let fd = unsafe {
            libc::open(
                c.as_ptr(),
                libc::O_CREAT | libc::O_RDWR | libc::O_TRUNC,
                0o666,
            )
        };
        ops_us += now_us() - t0;
        if fd < 0 {
            return Err(err(format!(
                "Error in creat: {}",
                sys::err_text(&sys::last_error())
            )));
        }
        let mut left = cmd.file_size_bytes as usize;
        loop {
            let n = left.min(buf.len());
            let t0 = now_us();
            // SAFETY: buf holds at least n bytes; fd is open.
            let ret = unsafe { libc::write(fd, buf.as_ptr() as *const libc::c_void, n) };
            ops_us += now_us() - t0;
            if ret != n as isize {
                let why = if ret < 0 {
                    sys::err_text(&sys::last_error())
                } else {
                    "Success".into()
                };
                return Err(err(format!(
                    "fs_mark: write_file write failed: {ret} {why}"
                )));
            }
            left -= n;
            if left == 0 {
                break;
            }
        }
        let t0 = now_us();
        // SAFETY: fd is open and ours.
        unsafe { libc::close(fd) };
        ops_us += now_us() - t0;
    }
    let loop_us = (now_us() - loop_start).max(1);
    let files_per_sec = (cmd.files_per_loop as f64 / (loop_us as f64 / 1e6)) as f32;
    Ok((f64::from(files_per_sec), loop_us.saturating_sub(ops_us)))
}

/// fork one process per thread; the figures of those that succeeded,
/// and whether all did.
fn run_loop(
    cmd: &FsMarkCommand,
    dirs: &[String],
    buf: &[u8],
) -> Result<(Vec<Figures>, bool), Failure> {
    let _ = io::stdout().flush();
    let mut fds = [0i32; 2];
    // SAFETY: fds is a valid array of two ints.
    sys::check(unsafe { libc::pipe(fds.as_mut_ptr()) })
        .map_err(|e| Failure::os("fs_mark: pipe", &e))?;
    let mut children = Vec::new();
    for t in 0..cmd.threads() as usize {
        // SAFETY: the task process is single-threaded; the child only
        // runs thread_work and leaves with _exit.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(Failure::os("fs_mark: fork failed", &sys::last_error()));
        }
        if pid == 0 {
            let status = match thread_work(cmd, &dirs[t % dirs.len()], buf) {
                Ok((fps, overhead)) => {
                    let mut rec = [0u8; 16];
                    rec[..8].copy_from_slice(&fps.to_bits().to_le_bytes());
                    rec[8..].copy_from_slice(&overhead.to_le_bytes());
                    // SAFETY: rec is 16 readable bytes; fds[1] is the pipe.
                    unsafe { libc::write(fds[1], rec.as_ptr() as *const libc::c_void, 16) };
                    0
                }
                Err(e) if e.stdout => {
                    println!("{}", e.message);
                    let _ = io::stdout().flush();
                    1
                }
                Err(e) => {
                    eprintln!("{}", e.message);
                    1
                }
            };
            // SAFETY: leaving the forked child without unwinding.
            unsafe { libc::_exit(status) };
        }
        children.push(pid);
    }
    // SAFETY: the write end is the children's now.
    unsafe { libc::close(fds[1]) };
    let mut all_ok = true;
    for pid in children {
        let mut status = 0;
        // SAFETY: status is a valid int to fill.
        while unsafe { libc::waitpid(pid, &mut status, 0) } < 0
            && sys::last_error().raw_os_error() == Some(libc::EINTR)
        {}
        all_ok &= libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
    }
    let mut figures = Vec::new();
    let mut rec = [0u8; 16];
    // SAFETY: rec is 16 writable bytes; fds[0] is the pipe's read end.
    while unsafe { libc::read(fds[0], rec.as_mut_ptr() as *mut libc::c_void, 16) } == 16 {
        let fps = f64::from_bits(u64::from_le_bytes(rec[..8].try_into().expect("8")));
        figures.push((fps, u64::from_le_bytes(rec[8..].try_into().expect("8"))));
    }
    // SAFETY: closing our read end.
    unsafe { libc::close(fds[0]) };
    Ok((figures, all_ok))
}

/// `Www Mmm dd hh:mm:ss yyyy` (C's ctime, in UTC).
fn ctime(secs: u64) -> String {
    const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    // time_t is 64-bit on x86_64 (glibc and musl alike).
    let t = secs as i64;
    // SAFETY: zeroed tm is a valid out-parameter for gmtime_r.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: t and tm are valid.
    unsafe { libc::gmtime_r((&t as *const i64).cast(), &mut tm) };
    format!(
        "{} {} {:>2} {:02}:{:02}:{:02} {}",
        DAYS[tm.tm_wday.rem_euclid(7) as usize],
        MONTHS[tm.tm_mon.rem_euclid(12) as usize],
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec,
        tm.tm_year + 1900
    )
}

fn print_header(cmd: &FsMarkCommand, command: &str) {
    let words = split_words(command).unwrap_or_default();
    let mut s = String::from("\n# ");
    for w in &words {
        s.push_str(&format!(" {w} "));
    }
    s.push_str(&format!(
        "\n#\tVersion 3.3, {} thread(s) starting at {}\n",
        cmd.threads(),
        ctime(realtime_secs())
    ));
    s.push_str("#\tSync method: NO SYNC: Test does not issue sync() or fsync() calls.\n");
    if cmd.subdirs > 1 {
        let (policy, n, what) = if cmd.files_per_subdir > 0 {
            (
                "Round Robin between directories",
                cmd.files_per_subdir,
                "files per subdirectory",
            )
        } else {
            (
                "Time based hash between directories",
                SECS_PER_DIR,
                "seconds per subdirectory",
            )
        };
        s.push_str(&format!(
            "#\tDirectories:  {policy} across {} subdirectories with {n} {what}.\n",
            cmd.subdirs
        ));
    } else {
        s.push_str("#\tDirectories:  no subdirectories used\n");
    }
    s.push_str(&format!(
        "#\tFile names: {NAME_LEN} bytes long, ({} initial bytes of time stamp with {RAND_LEN} \
         random bytes at end of name)\n",
        NAME_LEN - RAND_LEN
    ));
    s.push_str(&format!(
        "#\tFiles info: size {} bytes, written with an IO size of {} bytes per write\n",
        cmd.file_size_bytes, cmd.write_bytes
    ));
    s.push_str(
        "#\tApp overhead is time in microseconds spent in the test not doing file writing \
         related system calls.\n\n",
    );
    s.push_str("FSUse%        Count         Size    Files/sec     App Overhead");
    println!("{s}");
}

pub fn run(cmd: &FsMarkCommand, command: &str) -> Result<(), Failure> {
    let dirs: Vec<String> = cmd
        .dirs
        .iter()
        .map(|d| match d.trim_start_matches('/') {
            "" => ".".to_string(),
            rel => rel.trim_end_matches('/').to_string(),
        })
        .collect();
    let buf = vec![0u8; cmd.write_bytes as usize];
    print_header(cmd, command);
    let mut files_written = 0u64;
    for _ in 0..cmd.loops {
        let (figures, all_ok) = run_loop(cmd, &dirs, &buf)?;
        if !all_ok {
            // fs_mark's parent finds a thread's log missing: cleanup_exit.
            return Err(Failure::new(""));
        }
        let fps: f64 = figures.iter().map(|f| f.0).sum();
        let overhead: u64 = figures.iter().map(|f| f.1).sum();
        files_written += cmd.files_per_loop * figures.len() as u64;
        let (pct, _) = df(&dirs[0])
            .map_err(|e| Failure::os(format!("fs_mark: statfs failed on {}", dirs[0]), &e))?;
        println!(
            "{pct:>6} {files_written:>12} {:>12} {fps:>12.1} {overhead:>16}",
            cmd.file_size_bytes
        );
    }
    let _ = io::stdout().flush();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_forty_bytes_of_time_and_random() {
        let mut rng = Rng::new(1);
        let n = file_name(0x4e8c_1a2b, &mut rng);
        assert_eq!(n.len(), NAME_LEN);
        assert!(n.starts_with("4e8c1a2b~~~~~~~~"), "{n}");
        assert!(n[16..]
            .bytes()
            .all(|b| b.is_ascii_digit() || b.is_ascii_uppercase()));
    }

    #[test]
    fn ctime_format() {
        assert_eq!(ctime(0), "Thu Jan  1 00:00:00 1970");
        assert_eq!(ctime(1_317_816_000), "Wed Oct  5 12:00:00 2011");
    }
}
