//! dd (GNU coreutils 8.x): open `of=` with O_WRONLY|O_CREAT|O_TRUNC
//! (0644), `count` write(2) calls of `bs` zero bytes from one buffer (a
//! short write is continued, as dd's `iwrite` does), `conv=fdatasync` /
//! `conv=fsync` before close, then dd's summary on stderr.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::io::AsRawFd;

use wbsim::workload::dd::DdCommand;
use wbsim::workload::enospc::{dd_enospc_message, human_si_exact, human_si_inexact};
use wbsim::workload::shell::split_words;

use super::Failure;
use crate::sys;

/// Which of `conv=fdatasync` and `conv=fsync` the command gives (the
/// parser folds both into one flag; dd calls each one given).
fn conv_syncs(command: &str) -> (bool, bool) {
    let words = split_words(command).unwrap_or_default();
    let items: Vec<&str> = words
        .iter()
        .filter_map(|w| w.strip_prefix("conv="))
        .flat_map(|v| v.split(','))
        .collect();
    (items.contains(&"fdatasync"), items.contains(&"fsync"))
}

/// dd's `print_stats`: records in/out and the bytes line.
pub fn summary(bs: u64, written: u64, records_in: u64, elapsed_ns: u64) -> String {
    let bs = bs.max(1);
    let (full, partial) = (written / bs, u64::from(!written.is_multiple_of(bs)));
    let secs = elapsed_ns as f64 / 1e9;
    let rate = if secs > 0.0 {
        human_si_inexact(written as f64 / secs)
    } else {
        "Infinity B".to_string()
    };
    let bytes = if written == 1 { "byte" } else { "bytes" };
    format!(
        "{records_in}+0 records in\n{full}+{partial} records out\n\
         {written} {bytes} ({}) copied, {} s, {rate}/s",
        human_si_exact(written),
        sys::secs_g(elapsed_ns)
    )
}

/// Write all of `buf`, continuing short writes; on failure the bytes of
/// `buf` that did get written.
fn write_block(f: &mut File, buf: &[u8]) -> Result<(), (u64, io::Error)> {
    let mut done = 0;
    while done < buf.len() {
        match f.write(&buf[done..]) {
            Ok(0) => return Err((done as u64, io::Error::from_raw_os_error(libc::ENOSPC))),
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err((done as u64, e)),
        }
    }
    Ok(())
}

pub fn run(cmd: &DdCommand, command: &str) -> Result<(), Failure> {
    let (fdatasync, fsync) = conv_syncs(command);
    let out = &cmd.output;
    let mut file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o644)
        .open(out)
        .map_err(|e| Failure::os(format!("dd: failed to open '{out}'"), &e))?;
    let buf = vec![0u8; cmd.bs_bytes as usize];
    let start = sys::monotonic_ns();
    let mut written = 0u64;
    for _ in 0..cmd.count {
        if let Err((n, e)) = write_block(&mut file, &buf) {
            written += n;
            let elapsed = sys::monotonic_ns() - start;
            let message = if e.raw_os_error() == Some(libc::ENOSPC) {
                dd_enospc_message(out, cmd.bs_bytes, written, elapsed)
            } else {
                let full = written / cmd.bs_bytes;
                format!(
                    "dd: error writing '{out}': {}\n{}",
                    sys::err_text(&e),
                    summary(cmd.bs_bytes, written, full + 1, elapsed)
                )
            };
            return Err(Failure::new(message));
        }
        written += cmd.bs_bytes;
    }
    let fd = file.as_raw_fd();
    // SAFETY: fd is the open output file.
    if fdatasync && unsafe { libc::fdatasync(fd) } != 0 {
        return Err(Failure::os(
            format!("dd: fdatasync failed for '{out}'"),
            &sys::last_error(),
        ));
    }
    // SAFETY: as above.
    if fsync && unsafe { libc::fsync(fd) } != 0 {
        return Err(Failure::os(
            format!("dd: fsync failed for '{out}'"),
            &sys::last_error(),
        ));
    }
    drop(file);
    let elapsed = sys::monotonic_ns() - start;
    let mut err = io::stderr().lock();
    let _ = writeln!(
        err,
        "{}",
        summary(cmd.bs_bytes, written, cmd.count, elapsed)
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gnu_dd_summary() {
        let s = summary(1 << 20, 100 << 20, 100, 2_000_000_000);
        assert_eq!(
            s,
            "100+0 records in\n100+0 records out\n\
             104857600 bytes (105 MB) copied, 2 s, 52.4 MB/s"
        );
        assert!(summary(4096, 1, 1, 1000).contains("1 byte (1 B) copied"));
    }

    #[test]
    fn conv_flags_are_told_apart() {
        assert_eq!(
            conv_syncs("dd if=/dev/zero of=f bs=1 count=1"),
            (false, false)
        );
        assert_eq!(conv_syncs("dd of=f conv=fdatasync"), (true, false));
        assert_eq!(conv_syncs("dd of=f conv=fsync,fdatasync"), (true, true));
    }
}
