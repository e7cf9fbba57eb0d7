//! memtouch: anonymous memory that a process keeps using. An anonymous
//! private mmap(2) of `-s` bytes, every page written once, then batches
//! of touches of random pages of the first `-H` bytes, one batch per
//! millisecond at most (clock_nanosleep on an absolute schedule), each a
//! write with probability `-w` %. It runs until killed (SIGTERM when the
//! workload ends).
//!
//! Without `-H` the simulator's memtouch fills its memory and exits, but
//! its pages stay (the model never frees them). Here the process stays
//! alive to keep them, and closes stderr once filled: the init takes
//! that as the point to start tasks that run `after` it.

use std::hint::black_box;

use wbsim::workload::synthetic::MemTouchCommand;

use super::{Failure, Rng};
use crate::sys;

const PAGE: usize = 4096;
const BATCHES_PER_S: u64 = 1_000;

/// (touches per batch, nanoseconds between batches), as the simulator's
/// `MemTouchState::new` computes them.
pub fn batching(touches_per_s: u64) -> (u64, u64) {
    let rate = touches_per_s.max(1);
    let per_batch = (rate / BATCHES_PER_S).max(1);
    (per_batch, 1_000_000_000 * per_batch / rate)
}

pub fn run(cmd: &MemTouchCommand) -> Result<(), Failure> {
    let len = cmd.size_bytes as usize;
    // SAFETY: a fresh anonymous mapping.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(Failure::os(
            format!("memtouch: mmap of {len} bytes"),
            &sys::last_error(),
        ));
    }
    let mem = p as *mut u8;
    let pages = len / PAGE;
    for i in 0..pages {
        // SAFETY: page i lies inside the mapping.
        unsafe { std::ptr::write_bytes(mem.add(i * PAGE), 1, PAGE) };
    }
    let hot = (cmd.hot_bytes as usize / PAGE).min(pages) as u64;
    if hot == 0 {
        // SAFETY: closing our own stderr; nothing is written to it later.
        unsafe { libc::close(2) };
        loop {
            // SAFETY: pause only waits for a signal.
            unsafe { libc::pause() };
        }
    }
    let (per_batch, interval_ns) = batching(cmd.touches_per_s);
    let mut rng = Rng::from_time();
    let mut next = sys::monotonic_ns();
    loop {
        let batch_start = sys::monotonic_ns();
        for _ in 0..per_batch {
            let page = rng.below(hot) as usize;
            let write = rng.below(100) < u64::from(cmd.write_percent);
            // SAFETY: page < hot <= pages: inside the mapping.
            unsafe {
                let at = mem.add(page * PAGE);
                if write {
                    at.write_volatile(at.read_volatile().wrapping_add(1));
                } else {
                    black_box(at.read_volatile());
                }
            }
        }
        next = next.max(batch_start) + interval_ns;
        sys::sleep_until_ns(next);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_as_the_simulator_makes_them() {
        assert_eq!(batching(100_000), (100, 1_000_000));
        assert_eq!(batching(500), (1, 2_000_000));
        assert_eq!(batching(1), (1, 1_000_000_000));
    }
}
