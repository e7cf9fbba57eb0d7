//! mapwrite: a streaming write through a shared file mapping. Create
//! the file, ftruncate(2) it to the size (a sparse file: each page is a
//! hole until its write fault), mmap(2) MAP_SHARED, fill every page in
//! order, munmap, close; no msync (writeback is the kernel's business).
//! A full filesystem kills the process with SIGBUS, as in the simulator.

use std::fs::OpenOptions;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::io::AsRawFd;

use wbsim::workload::synthetic::MapWriteCommand;

use super::{map_shared, Failure};
use crate::sys;

/// What every byte of the file holds afterwards.
pub const FILL_BYTE: u8 = 0xa5;
const PAGE: usize = 4096;

pub fn run(cmd: &MapWriteCommand) -> Result<(), Failure> {
    let path = &cmd.file;
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o644)
        .open(path)
        .map_err(|e| Failure::os(format!("mapwrite: creating {path}"), &e))?;
    file.set_len(cmd.size_bytes)
        .map_err(|e| Failure::os(format!("mapwrite: ftruncate {path}"), &e))?;
    let len = cmd.size_bytes as usize;
    let map = map_shared(file.as_raw_fd(), len)
        .map_err(|e| Failure::os(format!("mapwrite: mmap {path}"), &e))?;
    let page = [FILL_BYTE; PAGE];
    let mut off = 0;
    while off < len {
        let n = PAGE.min(len - off);
        // SAFETY: off + n <= len, inside the mapping.
        unsafe { std::ptr::copy_nonoverlapping(page.as_ptr(), map.add(off), n) };
        off += n;
    }
    // SAFETY: map is the mapping of len bytes made above.
    if unsafe { libc::munmap(map as *mut libc::c_void, len) } != 0 {
        return Err(Failure::os("mapwrite: munmap", &sys::last_error()));
    }
    drop(file);
    Ok(())
}
