//! `memtouch`: a process's anonymous memory (see `synthetic` for the
//! command). It writes all its pages once, then touches its hot set at a
//! steady rate; touching a swapped-out page is a swap-in fault.

use rand::distributions::{Distribution, Uniform};
use rand_pcg::Pcg64Mcg;

use crate::mm::swap::Swap;
use crate::sched::Step;
use crate::sim::{Ns, NS_PER_SEC};
use crate::workload::Process;
use crate::workload::WorkloadHost;

#[derive(Debug)]
pub struct MemTouchState {
    /// Index into `System::anon_regions`.
    pub region: usize,
    pub size_pages: u32,
    pub hot_pages: u32,
    pub write_percent: u32,
    /// Next page of the initial fill (== size_pages when done).
    pub filled: u32,
    /// The touch in progress (retried after a sleep): (vpn, write).
    pub pending: Option<(u32, bool)>,
    /// Touches per batch (at most a thousand batches a second), the time
    /// between batches, and the touches left in the batch in progress.
    pub touches_per_batch: u32,
    pub batch_interval_ns: Ns,
    pub batch_left: u32,
    pub next_touch_ns: Ns,
    pub rng: Pcg64Mcg,
    /// The page a touch picks, uniform over the hot set, and the percent
    /// draw its write test compares with `write_percent`. Samplers set up
    /// once, with the exact rejection zone of their range: a hot set of
    /// 2^k pages is sampled from one draw, where `gen_range`'s one-call
    /// sampler (rand 0.8) rejects half of its draws for such a range, and
    /// the branch on each rejection mispredicts about half the time.
    hot_page: Uniform<u32>,
    percent: Uniform<u32>,
}

/// User time to write one page of memory (memset of 4 KiB at ~4 GB/s).
const USER_NS_PER_PAGE: Ns = 1_000;
/// User time of one touch of a present page: a cache and TLB miss, ~0.1 µs.
const USER_NS_PER_TOUCH: Ns = 100;
/// Touches are made in batches, at most one a millisecond (fewer events;
/// the kernel sees the same accessed bits at reclaim's time scale).
const BATCHES_PER_S: u64 = 1_000;

impl MemTouchState {
    pub fn new(
        region: usize,
        cmd: &crate::workload::synthetic::MemTouchCommand,
        rng: Pcg64Mcg,
    ) -> Self {
        let touches_per_s = cmd.touches_per_s.max(1);
        let touches_per_batch = (touches_per_s / BATCHES_PER_S).max(1);
        let hot_pages = (cmd.hot_bytes / 4096) as u32;
        MemTouchState {
            region,
            size_pages: (cmd.size_bytes / 4096) as u32,
            hot_pages,
            touches_per_batch: touches_per_batch as u32,
            batch_interval_ns: NS_PER_SEC * touches_per_batch / touches_per_s,
            batch_left: 0,
            write_percent: cmd.write_percent,
            filled: 0,
            pending: None,
            next_touch_ns: 0,
            rng,
            // `hot_pages` 0 samples nothing (the process exits when filled).
            hot_page: Uniform::new(0, hot_pages.max(1)),
            percent: Uniform::new(0, 100),
        }
    }
}

/// A process touching anonymous memory.
pub trait MemTouch: WorkloadHost {
    fn memtouch_state(&mut self, tid: u32) -> &mut MemTouchState {
        match self.workload_mut().process_mut(tid) {
            Process::MemTouch(m) => m,
            _ => unreachable!("task {tid} is not memtouch"),
        }
    }

    /// memtouch's steps that the engine runs back to back, in one call
    /// (`HasCore::steps_in_place`).
    #[inline(never)]
    fn memtouch_step(&mut self, tid: u32) -> Step {
        self.steps_in_place(tid, |s| s.memtouch_one_step(tid))
    }

    /// One page access of a `memtouch` process while it fills its memory;
    /// afterwards one batch of touches of its hot set.
    #[inline(always)]
    fn memtouch_one_step(&mut self, tid: u32) -> Step {
        let now = self.now();
        let m = self.memtouch_state(tid);
        if m.filled < m.size_pages {
            let (region, vpn) = (m.region, m.filled);
            if let Err(step) = self.touch_anon(tid, region, vpn, true) {
                return step;
            }
            self.charge_user(tid, USER_NS_PER_PAGE);
            let m = self.memtouch_state(tid);
            m.filled += 1;
            if m.filled == m.size_pages {
                m.next_touch_ns = now;
            }
            return Step::Continue;
        }
        if m.hot_pages == 0 {
            return Step::Exit;
        }
        if m.batch_left == 0 {
            if now < m.next_touch_ns {
                return Step::SleepUntil(m.next_touch_ns);
            }
            m.batch_left = m.touches_per_batch;
        }
        loop {
            let m = self.memtouch_state(tid);
            if m.batch_left == 0 {
                break;
            }
            let region = m.region;
            let (vpn, write) = match m.pending {
                Some(p) => p,
                None => {
                    let vpn = m.hot_page.sample(&mut m.rng);
                    let write = m.percent.sample(&mut m.rng) < m.write_percent;
                    (vpn, write)
                }
            };
            m.pending = Some((vpn, write));
            // A fault that must sleep (allocation, swap-in read) retries
            // this touch on waking.
            if let Err(step) = self.touch_anon(tid, region, vpn, write) {
                return step;
            }
            self.charge_user(tid, USER_NS_PER_TOUCH);
            let m = self.memtouch_state(tid);
            m.pending = None;
            m.batch_left -= 1;
        }
        let m = self.memtouch_state(tid);
        m.next_touch_ns = m.next_touch_ns.max(now) + m.batch_interval_ns;
        Step::SleepUntil(m.next_touch_ns)
    }
}

impl<T: WorkloadHost + ?Sized> MemTouch for T {}
