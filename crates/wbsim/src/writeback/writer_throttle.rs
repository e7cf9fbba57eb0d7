//! Dirty throttling before IO-less throttling: Linux 3.0
//! `balance_dirty_pages_ratelimited_nr` and `balance_dirty_pages`
//! (2.6.37 – 3.1 form, read from a 3.0-era `mm/page-writeback.c`).
//!
//! The writer itself writes back `write_chunk` pages of its device when the
//! device is over its share, and otherwise sleeps in `io_schedule_timeout`
//! with a pause doubling from one jiffy to HZ/10 (or, 2.6.24 – 2.6.35, in
//! `congestion_wait(WRITE, HZ/10)`; 2.6.24's loop was read from an
//! `mm/page-writeback.c` of that era and has the same shape). Chosen by
//! [`super::throttle`].

use super::pass::{PassResult, WbPass, WritebackCaller};
use super::throttle::BdpState;
use crate::kernel::BdpWait;
use crate::sched::Step;
use crate::writeback::limits::Limits;
use crate::writeback::pass::WritebackPasses;
use crate::writeback::WritebackHost;

/// `writeback_set_ratelimit` (2.6.24 – 3.1): total pages / (cpus * 32),
/// clamped to [16, 4 MiB of pages], in 4 KiB pages.
pub fn ratelimit_pages(total_pages: u64, cpus: u64) -> u64 {
    (total_pages / (cpus * 32)).clamp(16, (4 << 20) / 4096)
}

/// The writer-writeback scheme (2.6.24 – 3.1).
pub trait WriterThrottle: WritebackHost {
    /// The wait between two rounds of the loop: `congestion_wait(WRITE,
    /// HZ/10)` (2.6.24 – 2.6.35) or `io_schedule_timeout` of a pause
    /// doubling from one jiffy to HZ/10 (2.6.36 – 3.1).
    fn bdp_wait(&mut self, tid: u32, st: &mut BdpState, wait: BdpWait) -> Step {
        let max_ns = self.jiffies_ns(self.hz() / 10);
        match wait {
            BdpWait::CongestionWait => self.congestion_wait(tid, max_ns),
            BdpWait::DoublingTimeout => {
                let step = Step::SleepUntil(self.now() + st.pause_ns);
                st.pause_ns = (st.pause_ns * 2).min(max_ns);
                step
            }
        }
    }

    fn bdp_loop(
        &mut self,
        tid: u32,
        st: &mut BdpState,
        wait: BdpWait,
        ramp_violation_allowed: bool,
    ) -> Option<Step> {
        let bdi = st.bdi;
        loop {
            if let Some(mut pass) = st.pass {
                match self.writeback_pass(tid, &mut pass, WritebackCaller::Writeback) {
                    PassResult::Done => {}
                    PassResult::Blocked => {
                        st.pass = Some(pass);
                        return Some(Step::Wait(None));
                    }
                    PassResult::Yield => {
                        st.pass = Some(pass);
                        return Some(Step::Continue);
                    }
                }
                self.writeback_pass_end(tid, bdi);
                st.pass = None;
                st.pages_written += pass.written;
                if st.pages_written >= st.write_chunk {
                    break;
                }
                return Some(self.bdp_wait(tid, st, wait));
            }
            let nr_reclaimable = self.mm().gauges().nr_dirty;
            let nr_writeback = self.mm().gauges().nr_writeback;
            st.last_reclaimable = nr_reclaimable;
            let limits = self.global_dirty_limits();
            if ramp_violation_allowed
                && nr_reclaimable + nr_writeback <= (limits.background + limits.thresh) / 2
            {
                break;
            }
            let bdi_thresh = self.bdi_thresh(bdi, limits.thresh, Some(tid));
            let (bdi_rec, bdi_wb) = (
                self.wb().bdis[bdi].reclaimable,
                self.wb().bdis[bdi].writeback,
            );
            st.dirty_exceeded =
                bdi_rec + bdi_wb > bdi_thresh || nr_reclaimable + nr_writeback > limits.thresh;
            if !st.dirty_exceeded {
                break;
            }
            self.wb_mut().bdis[bdi].dirty_exceeded = true;
            if bdi_rec > bdi_thresh {
                st.pass = Some(WbPass::new(bdi, st.write_chunk as i64, None));
                continue;
            }
            return Some(self.bdp_wait(tid, st, wait));
        }
        st.active = false;
        if !st.dirty_exceeded && self.wb().bdis[bdi].dirty_exceeded {
            self.wb_mut().bdis[bdi].dirty_exceeded = false;
        }
        if self.wb().bdis[bdi].writeback_running {
            return None;
        }
        let bg = self.global_dirty_limits().background;
        let start = if self.sysctl().laptop_mode {
            st.pages_written > 0
        } else {
            st.last_reclaimable > bg
        };
        if start {
            self.bdi_start_background_writeback(bdi);
        }
        None
    }
}

impl<T: WritebackHost + ?Sized> WriterThrottle for T {}

/// `balance_dirty_pages_ratelimited_nr`: count pages dirtied on this CPU
/// and enter `balance_dirty_pages` once the CPU's count reaches
/// `ratelimit_pages` (8 while the device is over its limit).
pub fn ratelimited<H: WritebackHost + ?Sized>(sys: &mut H, tid: u32, bdi: usize, nr_dirtied: u64) {
    let cpu = sys.task(tid).cpu;
    let limit = if sys.wb().bdis[bdi].dirty_exceeded {
        8
    } else {
        sys.wb().ratelimit_pages
    };
    sys.wb_mut().bdp_ratelimits[cpu] += nr_dirtied;
    if sys.wb().bdp_ratelimits[cpu] >= limit {
        let count = sys.wb().bdp_ratelimits[cpu];
        sys.wb_mut().bdp_ratelimits[cpu] = 0;
        let old = sys.wb().task_bdp[tid as usize];
        sys.wb_mut().task_bdp[tid as usize] = BdpState {
            active: true,
            bdi,
            write_chunk: count.max(sys.wb().ratelimit_pages) * 3 / 2,
            pages_written: 0,
            pause_ns: sys.jiffies_ns(1),
            dirty_exceeded: false,
            last_reclaimable: 0,
            pass: None,
            ..old
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writeback spec test vector 10 (2.6.24 form, unchanged to 3.1).
    #[test]
    fn ratelimit_pages_is_capped() {
        assert_eq!(ratelimit_pages(1_048_576, 4), 1024);
        assert_eq!(ratelimit_pages(100_000, 4), 781);
        assert_eq!(ratelimit_pages(100, 4), 16);
    }
}
