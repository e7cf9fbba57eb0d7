//! The workload programs, run for real with system calls. Command lines
//! are read by the simulator's own parsers (`wbsim::workload`), so a
//! task means here what it means in a scenario; each program follows the
//! simulator's reading of the real tool (see the module docs).

use std::io;

use wbsim::scenario::Program;
use wbsim::workload::dd::parse_dd;
use wbsim::workload::fsmark::parse_fsmark;
use wbsim::workload::iozone::parse_iozone;
use wbsim::workload::limits::echo;
use wbsim::workload::sync::parse_sync;
use wbsim::workload::synthetic::{parse_mapwrite, parse_memtouch};

use crate::sys;

pub mod dd;
pub mod fsmark;
pub mod iozone;
pub mod mapwrite;
pub mod memtouch;
pub mod sync;

const PROGRAMS: &[&str] = &["dd", "fs_mark", "memtouch", "mapwrite", "iozone", "sync"];

/// A program's failure: its exit status and what it says on stderr.
#[derive(Debug)]
pub struct Failure {
    pub status: i32,
    pub message: String,
}

impl Failure {
    /// Status 1 with `message`.
    pub fn new(message: impl Into<String>) -> Failure {
        Failure {
            status: 1,
            message: message.into(),
        }
    }

    /// Status 1: `what: strerror`.
    pub fn os(what: impl std::fmt::Display, e: &io::Error) -> Failure {
        Failure::new(format!("{what}: {}", sys::err_text(e)))
    }
}

/// Parse a task's command line as the scenario validator does
/// (dispatching on the last path component of the first word).
pub fn parse(command: &str) -> Result<Program, String> {
    let first = command.split_whitespace().next().unwrap_or("");
    match first.rsplit('/').next().unwrap_or(first) {
        "dd" => parse_dd(command).map(Program::Dd),
        "fs_mark" => parse_fsmark(command).map(Program::FsMark),
        "memtouch" => parse_memtouch(command).map(Program::MemTouch),
        "mapwrite" => parse_mapwrite(command).map(Program::MapWrite),
        "iozone" => parse_iozone(command).map(Program::Iozone),
        "sync" => parse_sync(command).map(Program::Sync),
        other => Err(format!(
            "unknown program `{}`; allowed: {} (the programs a task may run)",
            echo(other),
            PROGRAMS.join(", ")
        )),
    }
}

/// Whether a program runs until the workload ends rather than being part
/// of it (the simulator's `is_workload = false`: memtouch).
pub fn is_background(p: &Program) -> bool {
    matches!(p, Program::MemTouch(_))
}

/// Run a parsed program in the current directory.
pub fn run(p: &Program, command: &str) -> Result<(), Failure> {
    match p {
        Program::Dd(c) => dd::run(c, command),
        Program::FsMark(c) => fsmark::run(c, command),
        Program::Iozone(c) => iozone::run(c),
        Program::MapWrite(c) => mapwrite::run(c),
        Program::MemTouch(c) => memtouch::run(c),
        Program::Sync(c) => sync::run(c),
    }
}

/// xorshift64*: the programs' random numbers (file names, random
/// records, touched pages); no allocation, no locking.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed | 1)
    }

    /// Seeded from the clock and the pid.
    pub fn from_time() -> Rng {
        Rng::new(sys::monotonic_ns() ^ ((sys::getpid() as u64) << 32))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform enough in 0..n (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

/// A shared mapping of `len` bytes of `fd` (PROT_READ|PROT_WRITE).
pub fn map_shared(fd: i32, len: usize) -> io::Result<*mut u8> {
    // SAFETY: a fresh mapping; the kernel checks fd and len.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            fd,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        Err(sys::last_error())
    } else {
        Ok(p as *mut u8)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dispatch_on_the_program_name() {
        assert!(matches!(
            parse("/usr/bin/dd if=/dev/zero of=d/f bs=1 count=1"),
            Ok(Program::Dd(_))
        ));
        assert!(is_background(&parse("memtouch -s 1M").unwrap()));
        assert!(!is_background(&parse("mapwrite -s 1M d/m").unwrap()));
        let e = parse("cp a b").unwrap_err();
        assert!(
            e.starts_with("unknown program `cp`; allowed: dd, fs_mark"),
            "{e}"
        );
        assert!(matches!(parse("sync"), Ok(Program::Sync(_))));
        assert!(!is_background(&parse("/bin/sync").unwrap()));
        assert!(parse("sync -f x").unwrap_err().contains("no operands"));
        assert!(parse("dd of=x bs=1 count=1")
            .unwrap_err()
            .contains("if=/dev/zero"));
    }

    #[test]
    fn rng_stays_in_range() {
        let mut r = Rng::new(42);
        assert!((0..1000).all(|_| r.below(7) < 7));
    }
}
