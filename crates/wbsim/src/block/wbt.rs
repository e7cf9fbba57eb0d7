//! The multi-queue block layer's queue rules and writeback throttling
//! (`block/blk-wbt.c`, `block/blk-rq-qos.c`, 4.10+; read in Debian's
//! 6.1.192: `wbt_wait`, `get_limit`, `wb_recent_wait`, `calc_wb_limits`,
//! `rq_depth_calc_max_depth`, `rq_depth_scale_up` / `_down`,
//! `wb_timer_fn`, `latency_exceeded`, `wbt_default_latency_nsec`).
//!
//! Why it matters: blk-mq (every driver from 5.0) keeps no congestion
//! state (5.18 removed the last of it), and wbt caps the buffered-write
//! requests a queue holds: a writer over the cap sleeps until
//! completions bring the queue under it. The cap starts at 16 requests
//! (`RWB_DEF_DEPTH`), a quarter of it for background writeback; every
//! 100 ms window in which only writes completed doubles it (the step goes
//! negative) up to three quarters of the queue depth, and a window whose
//! reads took longer than the latency target (75 ms on a rotational
//! device, 2 ms on a solid-state one) halves it.
//!
//! This file is the dispatch point of the profile's `block_layer` and
//! `wbt`. Not modelled: the I/O schedulers' dispatch order (mq-deadline's
//! sector sort and expiry, the default of a single-queue device; the
//! model dispatches reads first, then in queue order, which is what
//! either does with streaming writeback), per-CPU software and hardware
//! queues, the sync-issue latency check, discards.

use crate::kernel::{BlockLayerKind, KernelProfile};
use crate::sim::Ns;

/// `RWB_DEF_DEPTH`.
const DEFAULT_DEPTH: u32 = 16;
/// `RWB_WINDOW_NSEC`.
const WINDOW_NS: Ns = 100_000_000;

/// How a profile's request queues behave (chosen at build).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueRules {
    /// The single-queue layer's congestion state (`blk_queue_congestion_threshold`).
    pub congestion: bool,
    /// Writeback throttling.
    pub wbt: bool,
}

impl QueueRules {
    pub fn from_profile(profile: &KernelProfile) -> QueueRules {
        let mq = profile.block_layer == BlockLayerKind::BlkMq;
        QueueRules {
            congestion: !mq,
            wbt: mq && profile.wbt,
        }
    }
}

/// Which of wbt's limits a write request meets (`get_limit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WbtClass {
    /// kswapd, or a device whose writers waited in `balance_dirty_pages`
    /// within the last second (`wb_recent_wait`): the whole depth.
    Max,
    /// Other writeback (sync): half of it (`wb_normal`).
    Normal,
    /// Background and periodic writeback (REQ_BACKGROUND): a quarter
    /// (`wb_background`).
    Background,
}

/// A queue's writeback throttle (`struct rq_wb` with its `rq_depth`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wbt {
    /// `rq_depth.queue_depth`: the queue's depth when wbt was set up.
    queue_depth: u32,
    scale_step: i32,
    /// `scaled_max`: the depth hit its ceiling on the last step up.
    scaled_max: bool,
    /// `rq_depth.max_depth`.
    pub max_depth: u32,
    /// `min_lat_nsec`: the read latency target.
    min_lat_ns: Ns,
    /// The window being counted: its end, and what completed in it.
    window_end_ns: Ns,
    writes_done: u32,
    reads_done: u32,
    /// The fastest read of the window.
    read_min_ns: Ns,
}

impl Wbt {
    /// `wbt_init` for a queue of `queue_depth` requests; `rotational`:
    /// the latency target is 75 ms, else 2 ms.
    pub fn new(queue_depth: u32, rotational: bool) -> Wbt {
        let mut w = Wbt {
            queue_depth,
            scale_step: 0,
            scaled_max: false,
            max_depth: 0,
            min_lat_ns: if rotational { 75_000_000 } else { 2_000_000 },
            window_end_ns: WINDOW_NS,
            writes_done: 0,
            reads_done: 0,
            read_min_ns: Ns::MAX,
        };
        w.calc_max_depth();
        w
    }

    /// `wbt_queue_depth_changed`: limits from a queue depth of `depth`.
    pub fn queue_depth_changed(&mut self, depth: u32) {
        self.queue_depth = depth;
        self.calc_max_depth();
    }

    /// `rq_depth_calc_max_depth`; whether the depth hit its ceiling.
    fn calc_max_depth(&mut self) -> bool {
        if self.queue_depth == 1 {
            self.max_depth = if self.scale_step > 0 { 1 } else { 2 };
            return false;
        }
        let mut depth = DEFAULT_DEPTH.min(self.queue_depth);
        let mut at_ceiling = false;
        if self.scale_step > 0 {
            depth = 1 + ((depth - 1) >> self.scale_step.min(31));
        } else if self.scale_step < 0 {
            let ceiling = 3 * self.queue_depth / 4;
            depth = 1u32.saturating_add(
                (depth - 1)
                    .checked_shl((-self.scale_step) as u32)
                    .unwrap_or(u32::MAX),
            );
            if depth > ceiling {
                depth = ceiling;
                at_ceiling = true;
            }
        }
        self.max_depth = depth.max(1);
        at_ceiling
    }

    /// `get_limit` for a request of `class` (`calc_wb_limits`).
    pub fn limit(&self, class: WbtClass) -> u32 {
        match class {
            WbtClass::Max => self.max_depth,
            WbtClass::Normal => self.max_depth.div_ceil(2),
            WbtClass::Background => self.max_depth.div_ceil(4),
        }
    }

    /// `rq_depth_scale_up`: a deeper queue, until the ceiling.
    fn scale_up(&mut self) {
        if self.scaled_max {
            return;
        }
        self.scale_step -= 1;
        self.scaled_max = self.calc_max_depth();
    }

    /// `rq_depth_scale_down(hard_throttle)`.
    fn scale_down(&mut self) {
        if self.max_depth == 1 {
            return;
        }
        self.scale_step = if self.scale_step < 0 {
            0
        } else {
            self.scale_step + 1
        };
        self.scaled_max = false;
        self.calc_max_depth();
    }

    /// A request completed at `now_ns` (a read, `latency_ns` after it went
    /// to the device). Windows that have ended are judged first
    /// (`wb_timer_fn`, which the kernel runs from a timer while requests
    /// are in flight): slow reads halve the depth, reads on time or writes
    /// alone raise it.
    pub fn complete(&mut self, now_ns: Ns, read: bool, latency_ns: Ns) {
        while now_ns >= self.window_end_ns {
            if self.reads_done > 0 && self.read_min_ns > self.min_lat_ns {
                self.scale_down();
            } else if self.reads_done > 0 || self.writes_done > 0 {
                self.scale_up();
            }
            self.writes_done = 0;
            self.reads_done = 0;
            self.read_min_ns = Ns::MAX;
            // One judgement per window with IO; idle windows pass (the
            // timer is not armed without requests in flight).
            self.window_end_ns = if self.window_end_ns + WINDOW_NS > now_ns {
                self.window_end_ns + WINDOW_NS
            } else {
                now_ns - now_ns % WINDOW_NS + WINDOW_NS
            };
        }
        if read {
            self.reads_done += 1;
            self.read_min_ns = self.read_min_ns.min(latency_ns);
        } else {
            self.writes_done += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_starts_at_sixteen_with_quarter_for_background() {
        let w = Wbt::new(128, true);
        assert_eq!(w.max_depth, 16);
        assert_eq!(w.limit(WbtClass::Normal), 8);
        assert_eq!(w.limit(WbtClass::Background), 4);
    }

    #[test]
    fn windows_of_writes_alone_raise_the_depth_to_three_quarters_of_the_queue() {
        let mut w = Wbt::new(128, true);
        let mut depths = Vec::new();
        for window in 0..6u64 {
            w.complete(window * WINDOW_NS + 1_000, false, 0);
            depths.push(w.max_depth);
        }
        assert_eq!(depths, [16, 31, 61, 96, 96, 96]);
    }

    /// wbt keeps the depth it was set up with: 256 (a virtio disk's
    /// registration-time nr_requests) lets it rise to 192.
    #[test]
    fn the_depth_at_registration_sets_the_ceiling() {
        let mut w = Wbt::new(128, true);
        w.queue_depth_changed(256);
        for window in 0..8u64 {
            w.complete(window * WINDOW_NS + 1_000, false, 0);
        }
        assert_eq!(w.max_depth, 192);
        assert_eq!(w.limit(WbtClass::Normal), 96);
    }

    #[test]
    fn slow_reads_halve_the_depth() {
        let mut w = Wbt::new(128, false);
        w.complete(1_000, true, 5_000_000);
        w.complete(WINDOW_NS + 1_000, false, 0);
        assert_eq!(w.max_depth, 8, "2 ms target, reads at 5 ms");
        w.complete(2 * WINDOW_NS + 1_000, true, 1_000_000);
        assert_eq!(w.max_depth, 16, "a window of writes: back up a step");
        w.complete(3 * WINDOW_NS + 1_000, false, 0);
        assert_eq!(w.max_depth, 31, "reads on time: up again");
    }
}
