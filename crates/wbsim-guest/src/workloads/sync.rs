//! sync: one sync(2), as busybox's and coreutils' (before 8.24) sync(1)
//! do with no operands. sync(2) cannot fail; the kernel writes every
//! dirty page and waits for it (`sys_sync`, see `wbsim::workload::sync`
//! for what the simulator models of it).

use wbsim::workload::sync::SyncCommand;

use super::Failure;

pub fn run(_cmd: &SyncCommand) -> Result<(), Failure> {
    // SAFETY: sync(2) takes no arguments and always succeeds.
    unsafe { libc::sync() };
    Ok(())
}
