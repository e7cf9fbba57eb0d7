//! Thin wrappers over the libc calls every module uses: C strings, errno
//! text, CLOCK_MONOTONIC (clock_gettime, clock_nanosleep) and writing
//! /proc, /sys and tracefs files. All of them exist in Linux 3.2.

use std::ffi::CString;
use std::fs::OpenOptions;
use std::io::{self, Write};
use std::path::Path;

/// `s` as a C string; an interior NUL is an InvalidInput error.
pub fn cstring(s: &str) -> io::Result<CString> {
    CString::new(s).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in a path"))
}

/// strerror-like text of an error, without std's " (os error N)" tail.
pub fn err_text(e: &io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// strerror text of an errno value.
pub fn errno_text(code: i32) -> String {
    err_text(&io::Error::from_raw_os_error(code))
}

/// The error of the last failed libc call.
pub fn last_error() -> io::Error {
    io::Error::last_os_error()
}

/// `Ok(())` for a libc return value of 0 or more, else errno.
pub fn check(ret: libc::c_int) -> io::Result<()> {
    if ret < 0 {
        Err(last_error())
    } else {
        Ok(())
    }
}

/// CLOCK_MONOTONIC in nanoseconds (the records' `t_ns`).
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid timespec to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Sleep until CLOCK_MONOTONIC reads `t_ns` (TIMER_ABSTIME: no drift).
pub fn sleep_until_ns(t_ns: u64) {
    let ts = libc::timespec {
        tv_sec: (t_ns / 1_000_000_000) as _,
        tv_nsec: (t_ns % 1_000_000_000) as libc::c_long,
    };
    loop {
        // SAFETY: ts is a valid timespec; the remainder pointer may be null.
        let r = unsafe {
            libc::clock_nanosleep(
                libc::CLOCK_MONOTONIC,
                libc::TIMER_ABSTIME,
                &ts,
                std::ptr::null_mut(),
            )
        };
        if r != libc::EINTR {
            return;
        }
    }
}

/// Write `value` to an existing /proc, /sys or tracefs file (no O_CREAT,
/// no O_TRUNC: the kernel's handlers take the one write).
pub fn write_value(path: impl AsRef<Path>, value: &str) -> io::Result<()> {
    let mut f = OpenOptions::new().write(true).open(path)?;
    f.write_all(value.as_bytes())
}

/// The text of a /proc or /sys file.
pub fn read_text(path: impl AsRef<Path>) -> io::Result<String> {
    std::fs::read_to_string(path)
}

/// A line on the console (stdout), ignoring errors: PID 1 must not panic
/// because the console went away.
pub fn console(line: &str) {
    let mut out = io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// mount(2).
pub fn mount(source: &str, target: &str, fstype: &str, data: &str) -> io::Result<()> {
    let (s, t, f) = (cstring(source)?, cstring(target)?, cstring(fstype)?);
    let d = cstring(data)?;
    let data_ptr = if data.is_empty() {
        std::ptr::null()
    } else {
        d.as_ptr() as *const libc::c_void
    };
    // SAFETY: all pointers are valid NUL-terminated strings (or null data).
    check(unsafe { libc::mount(s.as_ptr(), t.as_ptr(), f.as_ptr(), 0, data_ptr) })
}

/// `swapon(2)` with no flags (the priority the kernel picks).
pub fn swapon(device: &str) -> io::Result<()> {
    let d = cstring(device)?;
    // SAFETY: d is a valid NUL-terminated path; the syscall takes (path, flags).
    let ret = unsafe { libc::syscall(libc::SYS_swapon, d.as_ptr(), 0 as libc::c_int) };
    check(ret as libc::c_int)
}

/// The pid of this process.
pub fn getpid() -> i32 {
    // SAFETY: getpid has no preconditions.
    unsafe { libc::getpid() }
}

/// Seconds as C's `%g` prints them, for the tools' own output.
pub fn secs_g(ns: u64) -> String {
    wbsim::workload::enospc::fmt_g(ns as f64 / 1e9)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_text_has_no_os_error_tail() {
        assert_eq!(errno_text(libc::ENOENT), "No such file or directory");
        assert!(!err_text(&io::Error::from_raw_os_error(libc::ENOSPC)).contains("os error"));
    }

    #[test]
    fn clock_moves_forward() {
        let a = monotonic_ns();
        sleep_until_ns(a + 2_000_000);
        assert!(monotonic_ns() >= a + 2_000_000);
    }
}
