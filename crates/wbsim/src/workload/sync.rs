//! `sync`: sync(1) as busybox and coreutils before 8.24 run it (no
//! operands: one `sync(2)`), the `dd ...; sync` of the real 3.2/3.3 runs.
//!
//! `sys_sync`, Linux 3.2 – 3.4 (`fs/sync.c`): `wakeup_flusher_threads(0)`
//! starts WB_SYNC_NONE writeback of every dirty page; `sync_filesystems(0)`
//! (`iterate_supers` → `__sync_filesystem(sb, 0)` → `writeback_inodes_sb`)
//! does it again per superblock and `sync_filesystems(1)` does
//! data-integrity writeback: `sync_inodes_sb` queues WB_SYNC_ALL work to
//! the device's flusher, waits for it, then `wait_sb_inodes` runs
//! `filemap_fdatawait` on every inode with pages; then `->sync_fs` and
//! `__sync_blockdev` of the superblock's device.
//!
//! The model takes the inodes that have dirty pages or pages under
//! writeback when sync starts (regular files, and block devices, whose
//! page cache `__sync_blockdev` writes: ntfs-3g's volume) and runs the
//! data-integrity path of fsync on each ([`Fsync::filemap_write_and_wait`]),
//! in two passes: the first starts writeback of each inode's dirty pages
//! and moves on (the WB_SYNC_NONE passes), the second writes what was
//! redirtied meanwhile and waits until the inode has no dirty page and no
//! page under writeback (`sync_inodes_sb` + `wait_sb_inodes`). Simplified:
//! the syncing task writes the pages itself (the kernel hands the work to
//! the flusher and sleeps in `wait_for_completion`), so the pages' CPU
//! cost is charged to it; inodes dirtied after sync starts are not
//! written, but pages of its inodes redirtied meanwhile are (no
//! `tag_pages_for_writeback` livelock avoidance); `->sync_fs` (the
//! journal commit) and quota sync are not modelled, nor filesystem
//! metadata inodes (btrfs's btree, written by its transaction commit).

use serde::Serialize;

use super::limits::echo;
use super::shell::split_words;
use crate::mm::inode::MappingKind;
use crate::sched::Step;
use crate::workload::{Process, WorkloadHost};
use crate::writeback::sync::Fsync;

/// A parsed `sync` command (it takes no operands).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SyncCommand {}

/// `sync`, with nothing after it.
pub fn parse_sync(command: &str) -> Result<SyncCommand, String> {
    let words = split_words(command)?;
    match words.first() {
        Some(p) if p == "sync" || p.ends_with("/sync") => {}
        other => {
            return Err(format!(
                "command must start with `sync` (got `{}`)",
                echo(other.map_or("", |s| s.as_str()))
            ))
        }
    }
    if let Some(extra) = words.get(1) {
        return Err(format!(
            "sync takes no operands (got `{}`): the sync(1) of busybox and of coreutils \
             before 8.24 syncs every filesystem; coreutils 8.24's -d, -f and FILE \
             operands (fdatasync, syncfs of named files) are not modelled",
            echo(extra)
        ));
    }
    Ok(SyncCommand {})
}

/// Where a sync is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncPhase {
    /// Not started: the inodes to sync are taken at the first step.
    Start,
    /// Starting writeback of each inode's dirty pages (WB_SYNC_NONE).
    Write,
    /// Writing again and waiting, inode by inode (WB_SYNC_ALL, then
    /// `filemap_fdatawait`).
    Wait,
}

#[derive(Debug)]
pub struct SyncState {
    pub phase: SyncPhase,
    /// The inodes to sync, in inode order.
    pub inodes: Vec<u32>,
    /// The inode being synced (index into `inodes`).
    pub index: usize,
    /// Its next page index to look at.
    pub cursor: u32,
}

impl SyncState {
    pub fn new() -> SyncState {
        SyncState {
            phase: SyncPhase::Start,
            inodes: Vec::new(),
            index: 0,
            cursor: 0,
        }
    }
}

impl Default for SyncState {
    fn default() -> Self {
        Self::new()
    }
}

/// A process calling `sync(2)`.
pub trait SysSync: WorkloadHost {
    fn sync_state(&mut self, tid: u32) -> &mut SyncState {
        match self.workload_mut().process_mut(tid) {
            Process::Sync(s) => s,
            _ => unreachable!("task {tid} is not sync"),
        }
    }

    /// The inodes `sys_sync` has data to write or wait for: regular
    /// files and block devices with dirty pages or pages under writeback.
    fn sync_inodes(&self) -> Vec<u32> {
        (0..self.mm().nr_inodes() as u32)
            .filter(|&ino| {
                // Retired and frozen inodes are clean, with nothing in flight.
                self.mm().inodes().get(ino).is_some_and(|inode| {
                    matches!(inode.kind, MappingKind::Regular | MappingKind::BlockDevice)
                        && (inode.nr_dirty > 0 || inode.nr_writeback > 0)
                })
            })
            .collect()
    }

    /// One step of `sys_sync`: as much writing as one call of
    /// `filemap_write_and_wait` does, or a wait; `Exit` when every inode
    /// is clean and none of its pages is under writeback.
    #[inline(never)]
    fn sync_step(&mut self, tid: u32) -> Step {
        if self.sync_state(tid).phase == SyncPhase::Start {
            self.charge_sys(tid, self.cost().syscall_ns);
            let inodes = self.sync_inodes();
            let s = self.sync_state(tid);
            s.inodes = inodes;
            s.phase = SyncPhase::Write;
        }
        loop {
            let s = self.sync_state(tid);
            let (phase, mut cursor) = (s.phase, s.cursor);
            let Some(&ino) = s.inodes.get(s.index) else {
                if phase == SyncPhase::Wait {
                    return Step::Exit;
                }
                s.phase = SyncPhase::Wait;
                s.index = 0;
                s.cursor = 0;
                continue;
            };
            let step = self.filemap_write_and_wait(tid, ino, &mut cursor);
            let s = self.sync_state(tid);
            s.cursor = cursor;
            match (phase, step) {
                // Done with this inode; or, in the first pass, all its
                // dirty pages are under writeback: the next inode.
                (_, None) | (SyncPhase::Write, Some(Step::SleepUntil(_))) => {
                    s.index += 1;
                    s.cursor = 0;
                }
                (_, Some(step)) => return step,
            }
        }
    }
}

impl<T: WorkloadHost + ?Sized> SysSync for T {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::preset;
    use crate::mm::MmHost;
    use crate::scenario::{parse_scenario, Program};
    use crate::sched::HasCore;
    use crate::system::build_system;

    #[test]
    fn sync_takes_no_operands() {
        assert_eq!(parse_sync("sync"), Ok(SyncCommand {}));
        assert_eq!(parse_sync("  /bin/sync "), Ok(SyncCommand {}));
        for (cmd, msg) in [
            ("sync -f disk/f", "sync takes no operands (got `-f`)"),
            ("sync disk/f", "sync takes no operands (got `disk/f`)"),
            ("syncfs", "must start with `sync`"),
            ("", "must start with `sync` (got ``)"),
            ("sync; sync", "shell operator `;`"),
        ] {
            let e = parse_sync(cmd).unwrap_err();
            assert!(e.contains(msg), "{cmd}: {e}");
        }
    }

    /// A 64 MiB machine writing `mib` MiB with dd to a USB stick, then
    /// (with `sync`) running sync after it.
    fn dd_then(sync: bool, mib: u32) -> String {
        let dev = include_str!("../../tests/fixtures/usb-stick-device.toml");
        let mut text = format!(
            "kernel = \"3.2\"\n[machine]\ncpus = 2\n[[machine.zone]]\nname = \"DMA32\"\n\
             size_mib = 64\n{dev}\n[[fs]]\ntype = \"ext4\"\ndevice = \"sdb\"\nmount = \"disk\"\n\
             [sysctl]\ndirty_ratio = 40\ndirty_background_ratio = 10\n\
             [[task]]\nname = \"dd\"\ncommand = \"dd if=/dev/zero of=disk/f bs=1M count={mib}\"\n"
        );
        if sync {
            text += "[[task]]\nname = \"sync\"\ncommand = \"sync\"\nafter = \"dd\"\n";
        }
        text
    }

    /// dd leaves dirty pages behind (dirty_ratio 40 of 64 MiB); the sync
    /// after it writes every one and waits for the writes: at its exit
    /// nothing is dirty or under writeback, and it ran after dd.
    #[test]
    fn sync_after_dd_writes_and_waits_for_every_dirty_page() {
        let run = |sync: bool| {
            let sc = parse_scenario(&dd_then(sync, 16), "s.toml").unwrap();
            let mut sys = build_system(&sc, &preset("3.2").unwrap(), 1);
            sys.run();
            sys
        };
        let plain = run(false);
        assert!(
            plain.mm().gauges().nr_dirty > 0,
            "dd alone leaves dirty pages"
        );
        let synced = run(true);
        let g = synced.mm().gauges();
        assert_eq!((g.nr_dirty, g.nr_writeback), (0, 0));
        let tasks = synced.tasks();
        let dd = tasks.iter().find(|t| t.name == "dd").unwrap();
        let sync = tasks.iter().find(|t| t.name == "sync").unwrap();
        let (dd_end, sync_end) = (dd.exited_ns.unwrap(), sync.exited_ns.unwrap());
        assert_eq!(sync.started_ns, dd_end);
        assert!(sync_end > dd_end);
        assert_eq!(sync.exit_status, 0);
        // Every page dd dirtied was written: 16 MiB.
        let written = synced.mm().vmstat().events(&synced.zone_suffixes());
        assert!(written["nr_written"] >= 16 * 256, "{written:?}");
        assert!(synced.now() >= sync_end);
    }

    #[test]
    fn a_sync_task_is_a_program_of_the_scenario() {
        let sc = parse_scenario(&dd_then(true, 1), "s.toml").unwrap();
        assert!(matches!(sc.tasks[1].program, Program::Sync(_)));
        assert_eq!(sc.tasks[1].after.as_deref(), Some("dd"));
    }
}
