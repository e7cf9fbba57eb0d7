//! [`Filesystems`]: the state the filesystem models own. Fields are
//! private to `fs/`; other subsystems use the accessors.

use super::daemon::FsDaemonState;
use super::ioend::Ioends;
use super::FsInstance;

const NO_DAEMON: u32 = u32::MAX;

/// The mounted filesystems, their threads, and per-task ENOSPC state.
pub struct Filesystems {
    pub(super) filesystems: Vec<FsInstance>,
    /// The filesystems' own threads (FUSE daemon, jbd2, xfssyncd,
    /// btrfs-transaction, xfsaild).
    pub(super) daemons: Vec<FsDaemonState>,
    /// Per task: its index in `daemons`, if it is one.
    pub(super) daemon_of_task: Vec<u32>,
    /// Per task: the FUSE daemon answered its last WRITE request with ENOSPC.
    pub(super) task_fuse_enospc: Vec<bool>,
    /// Per task: xfs's `xfs_file_buffered_aio_write` has flushed once
    /// after ENOSPC.
    pub(super) task_enospc_flushed: Vec<bool>,
    /// Deferred writeback completion (6.1 ext4 and xfs).
    pub(super) ioends: Ioends,
    /// Per filesystem: its jbd2 thread (looked up on every journal handle).
    jbd2_of_fs: Vec<Option<u32>>,
    /// Some filesystem has a jbd2 thread: without one (xfs, btrfs, FUSE
    /// only) a writer's `mark_inode_dirty` needs no look at its file.
    any_jbd2: bool,
}

impl Filesystems {
    pub fn new() -> Filesystems {
        Filesystems {
            filesystems: Vec::new(),
            daemons: Vec::new(),
            daemon_of_task: Vec::new(),
            task_fuse_enospc: Vec::new(),
            task_enospc_flushed: Vec::new(),
            ioends: Ioends::default(),
            jbd2_of_fs: Vec::new(),
            any_jbd2: false,
        }
    }

    /// A mounted filesystem (at boot); returns its index.
    pub fn mount(&mut self, fs: FsInstance) -> usize {
        self.filesystems.push(fs);
        self.filesystems.len() - 1
    }

    /// A new task's per-task state.
    pub fn add_task(&mut self) {
        self.daemon_of_task.push(NO_DAEMON);
        self.task_fuse_enospc.push(false);
        self.task_enospc_flushed.push(false);
    }

    /// Task `tid` (already added) is a filesystem thread.
    pub fn attach_daemon(&mut self, tid: u32, daemon: FsDaemonState) {
        if daemon.kind == super::daemon::DaemonKind::Jbd2 {
            if self.jbd2_of_fs.len() <= daemon.fs {
                self.jbd2_of_fs.resize(daemon.fs + 1, None);
            }
            self.jbd2_of_fs[daemon.fs] = Some(tid);
            self.any_jbd2 = true;
        }
        self.daemon_of_task[tid as usize] = self.daemons.len() as u32;
        self.daemons.push(daemon);
    }

    /// Filesystem `fs`'s writeback completion worker is task `tid`
    /// (already attached as a daemon).
    pub fn attach_ioend_worker(&mut self, fs: usize, tid: u32) {
        self.ioends.attach_worker(fs, tid);
    }

    /// Filesystem `fs`'s jbd2 thread, if it has one.
    #[inline(always)]
    pub fn jbd2_task(&self, fs: usize) -> Option<u32> {
        self.jbd2_of_fs.get(fs).copied().flatten()
    }

    /// Whether any mounted filesystem has a jbd2 thread.
    #[inline(always)]
    pub fn any_jbd2(&self) -> bool {
        self.any_jbd2
    }

    /// The state of filesystem thread `tid`.
    pub(super) fn daemon_mut(&mut self, tid: u32) -> &mut FsDaemonState {
        let i = self.daemon_of_task[tid as usize];
        debug_assert_ne!(i, NO_DAEMON, "task {tid} is not a filesystem thread");
        &mut self.daemons[i as usize]
    }

    pub fn get(&self, fs: usize) -> &FsInstance {
        &self.filesystems[fs]
    }

    pub fn get_mut(&mut self, fs: usize) -> &mut FsInstance {
        &mut self.filesystems[fs]
    }

    pub fn all(&self) -> &[FsInstance] {
        &self.filesystems
    }

    pub fn len(&self) -> usize {
        self.filesystems.len()
    }

    pub fn is_empty(&self) -> bool {
        self.filesystems.is_empty()
    }

    /// Take the task's "FUSE said ENOSPC" flag.
    pub fn take_fuse_enospc(&mut self, tid: u32) -> bool {
        std::mem::take(&mut self.task_fuse_enospc[tid as usize])
    }
}

impl Default for Filesystems {
    fn default() -> Self {
        Self::new()
    }
}
