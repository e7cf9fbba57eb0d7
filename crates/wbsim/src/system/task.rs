//! What each task runs: the resumable state machine the engine steps.

use crate::workload::WriterState;

pub use crate::sched::{PendingWait, Step, Task};

#[derive(Debug)]
pub enum TaskKind {
    /// A workload process (dd).
    Writer(Box<WriterState>),
    /// One fs_mark thread.
    FsMark(Box<crate::workload::fsmark_run::FsMarkState>),
    /// A process with anonymous memory (`memtouch`).
    MemTouch(Box<crate::workload::memtouch::MemTouchState>),
    /// A process writing through a shared file mapping (`mapwrite`).
    MapWrite(Box<crate::workload::mapwrite::MapWriteState>),
    /// An IOzone run.
    Iozone(Box<crate::workload::iozone_run::IozoneState>),
    /// The flusher thread of a bdi (`bdi_writeback_thread`, 2.6.32 – 3.x);
    /// its state is writeback's.
    Flusher(usize),
    /// kswapd0.
    Kswapd,
    /// A filesystem's own thread: the FUSE daemon, jbd2, xfssyncd,
    /// btrfs-transaction.
    FsDaemon,
}
