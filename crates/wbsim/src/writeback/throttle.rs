//! Dirty throttling, the dispatch point: which scheme throttles a writer
//! is chosen once, when the machine is built ([`ThrottleScheme`]), and
//! decided here only, at the scheme's three entries.
//!
//! - [`super::writer_throttle`]: the writer writes back itself (2.6.24 –
//!   3.1);
//! - [`super::ioless_throttle`]: IO-less throttling, the writer sleeps
//!   while the flusher writes (3.2+, Wu Fengguang).

use super::pass::WbPass;
use crate::kernel::{BdpWait, DirtyThrottle, KernelProfile};
use crate::sched::Step;
use crate::writeback::ioless_throttle::IoLessThrottle;
use crate::writeback::writer_throttle::{self, WriterThrottle};
use crate::writeback::WritebackHost;

/// The dirty-throttling scheme of a kernel profile, with its parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThrottleScheme {
    /// 2.6.24 – 3.1: the writer writes back; `wait` is the pause between
    /// rounds; `ramp_violation_allowed`: 2.6.37+'s exemption below the
    /// midpoint of the background and hard limits.
    WriterWriteback {
        wait: BdpWait,
        ramp_violation_allowed: bool,
    },
    /// 3.2+: IO-less; `first`: 3.2's form ([`DirtyThrottle::IoLessFirst`]);
    /// `big_shift_wraps`: a rate-limit step's damping shift of 64 or more
    /// wraps (3.2 – 4.4) instead of zeroing the step (4.5+).
    IoLess { first: bool, big_shift_wraps: bool },
}

impl ThrottleScheme {
    pub fn from_profile(profile: &KernelProfile) -> ThrottleScheme {
        match profile.dirty_throttle {
            DirtyThrottle::WriterWriteback => ThrottleScheme::WriterWriteback {
                wait: profile.bdp_wait,
                ramp_violation_allowed: profile.bdi_ramp_violation_allowed,
            },
            DirtyThrottle::IoLess => ThrottleScheme::IoLess {
                first: false,
                big_shift_wraps: profile.ratelimit_shift_wraps,
            },
            DirtyThrottle::IoLessFirst => ThrottleScheme::IoLess {
                first: true,
                big_shift_wraps: profile.ratelimit_shift_wraps,
            },
        }
    }
}

#[derive(Debug, Clone, Copy, Default)]
pub struct BdpState {
    pub active: bool,
    pub bdi: usize,
    /// IO-less (3.2+) per-task state: pages dirtied since the last check,
    /// the pages allowed before the next one (0 = the initial 32),
    /// `dirty_paused_when` and the entry time of the current call.
    pub nr_dirtied: u64,
    pub nr_dirtied_pause: u64,
    pub dirty_paused_when_jiffies: u64,
    pub start_jiffies: Option<u64>,
    pub(super) write_chunk: u64,
    pub(super) pages_written: u64,
    pub(super) pause_ns: u64,
    pub(super) dirty_exceeded: bool,
    pub(super) last_reclaimable: u64,
    pub(super) pass: Option<WbPass>,
}

/// Run `balance_dirty_pages` for `tid`, if a ratelimited check left it
/// pending, until it returns (`None`) or the task must sleep
/// (`Some(step)`); resumable. A dirtying task calls this first in each step.
#[inline(always)]
pub fn balance_dirty_pages<H: WritebackHost + ?Sized>(sys: &mut H, tid: u32) -> Option<Step> {
    if !sys.wb().task_bdp[tid as usize].active {
        return None;
    }
    balance_dirty_pages_pending(sys, tid)
}

/// [`balance_dirty_pages`] once a check left it pending (out of line: most
/// steps find nothing pending).
#[inline(never)]
fn balance_dirty_pages_pending<H: WritebackHost + ?Sized>(sys: &mut H, tid: u32) -> Option<Step> {
    match sys.wb().throttle {
        ThrottleScheme::IoLess { first, .. } => sys.balance_dirty_pages_ioless(tid, first),
        ThrottleScheme::WriterWriteback {
            wait,
            ramp_violation_allowed,
        } => {
            let mut st = sys.wb().task_bdp[tid as usize];
            let step = sys.bdp_loop(tid, &mut st, wait, ramp_violation_allowed);
            sys.wb_mut().task_bdp[tid as usize] = st;
            step
        }
    }
}

/// `balance_dirty_pages_ratelimited_nr`: called for every page a task
/// dirties.
#[inline(always)]
pub fn balance_dirty_pages_ratelimited<H: WritebackHost + ?Sized>(
    sys: &mut H,
    tid: u32,
    bdi: usize,
    nr_dirtied: u64,
) {
    if nr_dirtied == 0 {
        return;
    }
    match sys.wb().throttle {
        ThrottleScheme::IoLess { .. } => {
            sys.balance_dirty_pages_ratelimited_ioless(tid, bdi, nr_dirtied)
        }
        ThrottleScheme::WriterWriteback { .. } => {
            writer_throttle::ratelimited(sys, tid, bdi, nr_dirtied)
        }
    }
}

/// What the scheme does when a flusher finishes a writeback pass that
/// began at `wb_start_ns`: IO-less throttling updates the device's
/// bandwidth estimate (`wb_writeback` → `bdi_update_bandwidth`);
/// writer-writeback throttling keeps none.
pub fn throttle_after_writeback_pass<H: WritebackHost + ?Sized>(
    sys: &mut H,
    bdi: usize,
    wb_start_ns: crate::sim::Ns,
) {
    match sys.wb().throttle {
        ThrottleScheme::IoLess { .. } => sys.flusher_update_bandwidth(bdi, wb_start_ns),
        ThrottleScheme::WriterWriteback { .. } => {}
    }
}
