//! IOzone's tests 0-2 as the simulator reads `iozone.c` (see
//! `wbsim::workload::iozone_run`): per pass, open the file (the write
//! pass unlinks it and creates a new, sparse one), with `-B` map it
//! MAP_SHARED (ftruncate to size first), fsync untimed (not before the
//! random passes), then time `numrecs` record copies: pwrite/pread, or a
//! copy into/out of the mapping with `-B`; `-e` times the flush (fsync,
//! msync(MS_SYNC) with `-B`); `-B` without `-e` msyncs untimed. The
//! random passes draw `rand % numrecs` per record from one seed, so
//! random read and random write visit the same records. Throughput is
//! bytes / elapsed, truncated to KiB/s. The file is unlinked unless `-w`.
//! ENOSPC on write(2): IOzone's message, unlink, exit 0.

use std::fs::{File, OpenOptions};
use std::hint::black_box;
use std::io::{self, Write};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;

use wbsim::workload::iozone::{IozoneCommand, IozoneTest};

use super::{map_shared, Failure, Rng};
use crate::sys;

/// One pass's result.
pub struct PassResult {
    pub test: IozoneTest,
    pub kib_per_second: u64,
    pub elapsed_ns: u64,
}

enum PassError {
    /// write(2) failed with ENOSPC: (record, fd).
    NoSpace(u64, i32),
    Other(Failure),
}

fn os(what: String, e: io::Error) -> PassError {
    PassError::Other(Failure::os(what, &e))
}

struct Pass<'a> {
    cmd: &'a IozoneCommand,
    buf: &'a mut [u8],
    seed: u64,
}

impl Pass<'_> {
    fn open(&self, test: IozoneTest) -> Result<File, PassError> {
        let path = &self.cmd.file;
        if test == IozoneTest::Write {
            match std::fs::remove_file(path) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => {
                    return Err(os(format!("iozone: unlink {path}"), e))
                }
                _ => {}
            }
        }
        let f = OpenOptions::new()
            .read(true)
            .write(true)
            .create(test == IozoneTest::Write)
            .mode(0o640)
            .open(path)
            .map_err(|e| os(format!("iozone: open {path}"), e))?;
        if self.cmd.mmap && test == IozoneTest::Write {
            f.set_len(self.cmd.file_bytes)
                .map_err(|e| os(format!("iozone: ftruncate {path}"), e))?;
        }
        Ok(f)
    }

    fn run(&mut self, test: IozoneTest) -> Result<PassResult, PassError> {
        let cmd = self.cmd;
        let f = self.open(test)?;
        let len = cmd.file_bytes as usize;
        let map = if cmd.mmap {
            Some(map_shared(f.as_raw_fd(), len).map_err(|e| os("iozone: mmap".into(), e))?)
        } else {
            None
        };
        if !test.random() {
            f.sync_all().map_err(|e| os("iozone: fsync".into(), e))?;
        }
        let (recs, rec) = (cmd.records(), cmd.record_bytes as usize);
        let mut rng = Rng::new(self.seed);
        let start = sys::monotonic_ns();
        for r in 0..recs {
            let record = if test.random() { rng.below(recs) } else { r };
            let off = record * rec as u64;
            match (map, test.writes()) {
                // SAFETY: off + rec <= file_bytes, inside the mapping.
                (Some(m), true) => unsafe {
                    std::ptr::copy_nonoverlapping(self.buf.as_ptr(), m.add(off as usize), rec)
                },
                (Some(m), false) => {
                    // SAFETY: as above.
                    unsafe {
                        std::ptr::copy_nonoverlapping(
                            m.add(off as usize),
                            self.buf.as_mut_ptr(),
                            rec,
                        )
                    };
                    black_box(&self.buf);
                }
                (None, true) => f.write_all_at(self.buf, off).map_err(|e| {
                    if e.raw_os_error() == Some(libc::ENOSPC) {
                        PassError::NoSpace(record, f.as_raw_fd())
                    } else {
                        os("iozone: write".into(), e)
                    }
                })?,
                (None, false) => f
                    .read_exact_at(self.buf, off)
                    .map_err(|e| os("iozone: read".into(), e))?,
            }
        }
        let flush = |timed: bool| -> Result<(), PassError> {
            if let Some(m) = map {
                // SAFETY: m is the mapping of len bytes.
                if unsafe { libc::msync(m as *mut libc::c_void, len, libc::MS_SYNC) } != 0 {
                    return Err(os("iozone: msync".into(), sys::last_error()));
                }
            } else if timed {
                f.sync_all().map_err(|e| os("iozone: fsync".into(), e))?;
            }
            Ok(())
        };
        if cmd.include_flush {
            flush(true)?;
        }
        let elapsed_ns = (sys::monotonic_ns() - start).max(1);
        if !cmd.include_flush {
            flush(false)?;
        }
        if let Some(m) = map {
            // SAFETY: m is the mapping of len bytes.
            unsafe { libc::munmap(m as *mut libc::c_void, len) };
        }
        let bytes = recs * rec as u64;
        Ok(PassResult {
            test,
            kib_per_second: ((bytes as f64 / (elapsed_ns as f64 / 1e9)) as u64) >> 10,
            elapsed_ns,
        })
    }
}

/// IOzone's result table, as `wbsim::report::tools` prints the
/// simulator's.
pub fn table(cmd: &IozoneCommand, results: &[PassResult]) -> String {
    let rates: Vec<(IozoneTest, u64)> =
        results.iter().map(|r| (r.test, r.kib_per_second)).collect();
    format!(
        "{}\n{}",
        wbsim::report::tools::iozone_header(),
        wbsim::report::tools::iozone_row(cmd, &rates)
    )
}

pub fn run(cmd: &IozoneCommand) -> Result<(), Failure> {
    let mut buf = vec![0xa5u8; cmd.record_bytes as usize];
    let mut pass = Pass {
        cmd,
        buf: &mut buf,
        seed: sys::monotonic_ns(),
    };
    let names: Vec<&str> = cmd.tests.iter().map(|t| t.name()).collect();
    println!("\tIozone (wbsim-guest): {}", names.join(" "));
    println!("\tOutput is in Kbytes/sec");
    let mut results = Vec::new();
    let mut failure = None;
    for &test in &cmd.tests {
        match pass.run(test) {
            Ok(r) => {
                println!(
                    "iozone: {} {} kB/sec ({} s)",
                    test.name(),
                    r.kib_per_second,
                    sys::secs_g(r.elapsed_ns)
                );
                results.push(r);
            }
            Err(PassError::NoSpace(record, fd)) => {
                // IOzone: "Error writing block N, fd= F", perror("write"),
                // then signal_handler unlinks the file and exits 0.
                println!("\nError writing block {record}, fd= {fd}");
                eprintln!("write: No space left on device");
                break;
            }
            Err(PassError::Other(f)) => {
                failure = Some(f);
                break;
            }
        }
    }
    if !results.is_empty() {
        println!("\n{}", table(cmd, &results));
    }
    let _ = io::stdout().flush();
    if !cmd.keep_file {
        let _ = std::fs::remove_file(&cmd.file);
    }
    failure.map_or(Ok(()), Err)
}

#[cfg(test)]
mod tests {
    use super::*;
    use wbsim::workload::iozone::parse_iozone;

    #[test]
    fn the_table_has_a_column_per_test() {
        let cmd = parse_iozone("iozone -i 0 -r 4k -s 64k -f f").unwrap();
        let r = |test, k| PassResult {
            test,
            kib_per_second: k,
            elapsed_ns: 1,
        };
        let t = table(
            &cmd,
            &[r(IozoneTest::Write, 1000), r(IozoneTest::Rewrite, 2000)],
        );
        let row = t.lines().last().unwrap();
        assert_eq!(row.trim_end(), "              64       4    1000    2000");
    }
}
