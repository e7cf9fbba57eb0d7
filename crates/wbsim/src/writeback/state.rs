//! [`Writeback`]: the state writeback owns. Fields are private to
//! `writeback/`; other subsystems use the accessors.

use super::bdi::Bdi;
use super::chunk::ChunkScheme;
use super::flusher::FlusherState;
use super::ioless::GlobalDirtyLimit;
use super::proportions::{PropGlobal, PropLocal};
use super::shares::{period_shift, CompletionShares};
use super::throttle::{BdpState, ThrottleScheme};
use crate::kernel::KernelProfile;

/// Backing devices and their flushers, the proportions that share the
/// dirty limit among them, and each task's dirty-throttling state.
pub struct Writeback {
    pub(super) bdis: Vec<Bdi>,
    /// Per bdi: its flusher thread's state.
    pub(super) flushers: Vec<FlusherState>,
    /// The global half of the devices' shares of completions.
    pub(super) completions: CompletionShares,
    /// Floating proportions of the tasks' dirtying (`task_dirty_limit`).
    pub(super) prop_dirties: PropGlobal,
    /// Inodes flagged I_DIRTY_RECLAIM (Gorman RFC patch 5).
    pub(super) nr_dirty_reclaim: u64,
    /// The dirty-throttling scheme.
    pub(super) throttle: ThrottleScheme,
    /// How the flusher's passes share out pages among inodes.
    pub(super) chunk: ChunkScheme,
    /// Pages a task (2.6.24 – 3.1) or a CPU (3.2+, the per-CPU safety
    /// net) dirties between limit checks, as `writeback_set_ratelimit` set
    /// it.
    pub(super) ratelimit_pages: u64,
    /// 3.2+ `balance_dirty_pages_ratelimited`'s page counts, set with
    /// `ratelimit_pages` for the machine's unit: a task's first allowance
    /// (`nr_dirtied_pause` 0: `DIRTY_POLL_THRESH`, 128 KiB, as `fork`
    /// sets it) and the one
    /// while its device is over its limit (8 pages, 32 KiB).
    pub(super) first_pause_pages: u64,
    pub(super) exceeded_pause_pages: u64,
    /// Per-CPU `bdp_ratelimits` counters (3.0 `ratelimits`).
    pub(super) bdp_ratelimits: Vec<u64>,
    /// `global_dirty_limit`, the smoothed hard limit (3.2+).
    pub(super) global_dirty_limit: GlobalDirtyLimit,
    /// Per task: `balance_dirty_pages` state.
    pub(super) task_bdp: Vec<BdpState>,
    /// Per task: floating-proportion state of its dirtying (`task_dirty_inc`).
    pub(super) task_dirties: Vec<PropLocal>,
    /// Per task: `current->backing_dev_info` while in a write(2) (3.0
    /// `__generic_file_aio_write`), which lets direct reclaim write to a
    /// congested queue the task is itself writing to.
    pub(super) task_backing_dev: Vec<Option<usize>>,
}

impl Writeback {
    /// Writeback of a machine built with `profile` whose dirty limit at
    /// boot is `dirty_total_pages`. The era-varying mechanisms are chosen
    /// here, once; `ratelimit_pages` is set at the end of the machine's
    /// build, by `writeback_set_ratelimit`.
    pub fn new(profile: &KernelProfile, dirty_total_pages: u64, cpus: usize) -> Writeback {
        let shift = period_shift(profile, dirty_total_pages);
        Writeback {
            bdis: Vec::new(),
            flushers: Vec::new(),
            completions: CompletionShares::from_profile(profile, shift),
            prop_dirties: PropGlobal::new(shift),
            throttle: ThrottleScheme::from_profile(profile),
            chunk: ChunkScheme::from_profile(profile),
            nr_dirty_reclaim: 0,
            ratelimit_pages: 0,
            first_pause_pages: 32,
            exceeded_pause_pages: 8,
            bdp_ratelimits: vec![0; cpus],
            global_dirty_limit: GlobalDirtyLimit::new(0),
            task_bdp: Vec::new(),
            task_dirties: Vec::new(),
            task_backing_dev: Vec::new(),
        }
    }

    /// A backing device (at boot); returns its index.
    pub fn add_bdi(&mut self, mut bdi: Bdi) -> usize {
        if let super::throttle::ThrottleScheme::IoLess {
            big_shift_wraps, ..
        } = self.throttle
        {
            bdi.bandwidth.big_shift_wraps = big_shift_wraps;
        }
        self.bdis.push(bdi);
        self.bdis.len() - 1
    }

    /// `bdi`'s flusher thread is task `tid`.
    pub fn attach_flusher(&mut self, bdi: usize, tid: u32) {
        debug_assert_eq!(self.flushers.len(), bdi);
        let registered = self.bdis[bdi].registered_before_start_ns;
        self.flushers.push(FlusherState::new(bdi, registered));
        self.bdis[bdi].flusher = tid;
    }

    /// A new task's throttling state.
    pub fn add_task(&mut self) {
        self.task_bdp.push(BdpState::default());
        self.task_dirties.push(PropLocal::default());
        self.task_backing_dev.push(None);
    }

    pub fn bdi(&self, bdi: usize) -> &Bdi {
        &self.bdis[bdi]
    }

    pub fn bdi_mut(&mut self, bdi: usize) -> &mut Bdi {
        &mut self.bdis[bdi]
    }

    pub fn bdis(&self) -> &[Bdi] {
        &self.bdis
    }

    pub fn nr_bdis(&self) -> usize {
        self.bdis.len()
    }

    pub fn flusher(&self, bdi: usize) -> &FlusherState {
        &self.flushers[bdi]
    }

    pub fn task_bdp(&self, tid: u32) -> &BdpState {
        &self.task_bdp[tid as usize]
    }

    /// The bdi task `tid` is writing to, if it is in a write(2).
    pub fn task_backing_dev(&self, tid: u32) -> Option<usize> {
        self.task_backing_dev[tid as usize]
    }

    pub fn set_task_backing_dev(&mut self, tid: u32, bdi: Option<usize>) {
        self.task_backing_dev[tid as usize] = bdi;
    }
}
