//! What each task runs: the resumable state machine the engine steps.

pub use crate::sched::{PendingWait, Step, Task};

#[derive(Debug)]
pub enum TaskKind {
    /// A workload program, by kind; its state is workload's.
    Writer,
    FsMark,
    MemTouch,
    MapWrite,
    Iozone,
    /// `sync`.
    Sync,
    /// The flusher thread of a bdi (`bdi_writeback_thread`, 2.6.32 – 3.x);
    /// its state is writeback's.
    Flusher(usize),
    /// A node's kswapd (kswapd0, kswapd1, ...).
    Kswapd,
    /// A filesystem's own thread: the FUSE daemon, jbd2, xfssyncd,
    /// btrfs-transaction.
    FsDaemon,
}
