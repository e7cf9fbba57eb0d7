//! `memtouch`: a process's anonymous memory (see `synthetic` for the
//! command). It writes all its pages once, then touches its hot set at a
//! steady rate; touching a swapped-out page is a swap-in fault.

use rand::Rng;
use rand_pcg::Pcg64Mcg;

use crate::sim::{Ns, NS_PER_SEC};
use crate::system::task::{Step, TaskKind};
use crate::system::System;

#[derive(Debug)]
pub struct MemTouchState {
    /// Index into `System::anon_regions`.
    pub region: usize,
    pub size_pages: u32,
    pub hot_pages: u32,
    pub touch_interval_ns: Ns,
    pub write_percent: u32,
    /// Next page of the initial fill (== size_pages when done).
    pub filled: u32,
    /// The touch in progress (retried after a sleep): (vpn, write).
    pub pending: Option<(u32, bool)>,
    pub next_touch_ns: Ns,
    pub rng: Pcg64Mcg,
}

/// User time to write one page of memory (memset of 4 KiB at ~4 GB/s).
const USER_NS_PER_PAGE: Ns = 1_000;

impl MemTouchState {
    pub fn new(
        region: usize,
        cmd: &crate::workload::synthetic::MemTouchCommand,
        rng: Pcg64Mcg,
    ) -> Self {
        MemTouchState {
            region,
            size_pages: (cmd.size_bytes / 4096) as u32,
            hot_pages: (cmd.hot_bytes / 4096) as u32,
            touch_interval_ns: NS_PER_SEC / cmd.touches_per_s.max(1),
            write_percent: cmd.write_percent,
            filled: 0,
            pending: None,
            next_touch_ns: 0,
            rng,
        }
    }
}

impl System {
    fn memtouch_state(&mut self, tid: u32) -> &mut MemTouchState {
        match &mut self.tasks[tid as usize].kind {
            TaskKind::MemTouch(m) => m,
            _ => unreachable!("task {tid} is not memtouch"),
        }
    }

    /// One page access of a `memtouch` process.
    pub fn memtouch_step(&mut self, tid: u32) -> Step {
        let now = self.now;
        let m = self.memtouch_state(tid);
        let (region, vpn, write, filling) = if m.filled < m.size_pages {
            (m.region, m.filled, true, true)
        } else if m.hot_pages == 0 {
            return Step::Exit;
        } else {
            let (vpn, write) = match m.pending {
                Some(p) => p,
                None => {
                    if now < m.next_touch_ns {
                        return Step::SleepUntil(m.next_touch_ns);
                    }
                    let vpn = m.rng.gen_range(0..m.hot_pages);
                    let write = m.rng.gen_range(0..100) < m.write_percent;
                    (vpn, write)
                }
            };
            (m.region, vpn, write, false)
        };
        self.memtouch_state(tid).pending = Some((vpn, write));
        if let Err(step) = self.touch_anon(tid, region, vpn, write) {
            return step;
        }
        self.charge_user(tid, USER_NS_PER_PAGE);
        let m = self.memtouch_state(tid);
        m.pending = None;
        if filling {
            m.filled += 1;
            if m.filled == m.size_pages {
                m.next_touch_ns = now;
            }
            return Step::Continue;
        }
        m.next_touch_ns = m.next_touch_ns.max(now) + m.touch_interval_ns;
        Step::SleepUntil(m.next_touch_ns)
    }
}
