//! IO-less dirty throttling in the running system (3.2+,
//! `balance_dirty_pages_ratelimited` and `balance_dirty_pages` of
//! `mm/page-writeback.c`; spec section 5.7 – 5.8; the arithmetic is in
//! [`super::ioless`]). The writer never writes pages: past the freerun
//! ceiling it sleeps `pages_dirtied / task_ratelimit`, where the task rate
//! is the device's balanced rate scaled by how far dirty memory is from the
//! set point. Not modelled: strictlimit devices, exited tasks' leaked
//! counts, the per-CPU `dirty_throttle_leaks`.

use super::ioless::{
    bdi_update_bandwidth, dirty_freerun_ceiling, dirty_poll_interval, first, max_pause_jiffies,
    min_pause, position_ratio, BandwidthCaller, BandwidthUpdate, BdiCounters, DirtySnapshot,
    GlobalDirtyLimit, RATELIMIT_CALC_SHIFT,
};
use super::throttle_trace::{BdpPass, ThrottleTrace};
use crate::sched::Step;
use crate::sim::Ns;
use crate::writeback::limits::Limits;
use crate::writeback::WritebackHost;

/// The pages a task may dirty before its next check: its
/// `nr_dirtied_pause`, or `first` (128 KiB of pages, 32 of 4 KiB) for a
/// task that has not been checked yet (0 here).
fn allowance(nr_dirtied_pause: u64, first: u64) -> u64 {
    match nr_dirtied_pause {
        0 => first,
        n => n,
    }
}

/// IO-less `balance_dirty_pages` (3.2+): the writer sleeps, paced by the bdi's write bandwidth.
pub trait IoLessThrottle: WritebackHost {
    fn now_jiffies(&self) -> u64 {
        (self.now() as u128 * self.hz() as u128 / 1_000_000_000) as u64
    }

    /// `balance_dirty_pages_ratelimited` (3.2+): per-task `nr_dirtied`
    /// against `nr_dirtied_pause` (8 pages while the device is over its
    /// limit), with the per-CPU `bdp_ratelimits` safety net of
    /// `ratelimit_pages`, which [`IoLessThrottle::writeback_set_ratelimit`]
    /// set.
    #[inline(always)]
    fn balance_dirty_pages_ratelimited_ioless(&mut self, tid: u32, bdi: usize, nr: u64) {
        let cpu = self.task(tid).cpu;
        let wb = self.wb_mut();
        let ratelimit_pages = wb.ratelimit_pages;
        let (first, exceeded_pages) = (wb.first_pause_pages, wb.exceeded_pause_pages);
        let exceeded = wb.bdis[bdi].dirty_exceeded;
        let st = &mut wb.task_bdp[tid as usize];
        st.nr_dirtied += nr;
        wb.bdp_ratelimits[cpu] += nr;
        let mut ratelimit = allowance(st.nr_dirtied_pause, first);
        if exceeded {
            ratelimit = ratelimit.min(exceeded_pages);
        }
        if st.nr_dirtied >= ratelimit {
            wb.bdp_ratelimits[cpu] = 0;
        } else if wb.bdp_ratelimits[cpu] >= ratelimit_pages {
            wb.bdp_ratelimits[cpu] = 0;
            ratelimit = 0;
        }
        if st.nr_dirtied >= ratelimit {
            st.active = true;
            st.bdi = bdi;
            st.start_jiffies = None;
        }
    }

    /// `writeback_set_ratelimit` at boot (`page_writeback_init`), the part
    /// the model keeps: `global_dirty_limit = dirty_thresh` (read in 3.3-era
    /// mm/page-writeback.c; `dom->dirty_limit` of `global_wb_domain` from
    /// 4.2). Until a throttled writer's `global_update_bandwidth` first
    /// moves it, the smoothed limit is the boot threshold, not 0. The
    /// kernel computes it when its last CPU comes online
    /// (`page_writeback_cpu_online`, read in 6.1), before the initramfs is
    /// unpacked and while deferred struct pages are still being freed, so
    /// it is not the threshold at the workload's start: `boot_limit_pages`
    /// (the machine's `boot_dirty_limit_pages`) when the scenario gives
    /// it, else the threshold now.
    ///
    /// The same call sets `ratelimit_pages`. The kernel computes it only
    /// there: at boot, on CPU or memory hotplug, and when `dirty_ratio` or
    /// `dirty_bytes` is written; not per call of
    /// `balance_dirty_pages_ratelimited`. 3.2+: `thresh / (cpus * 32)`, at
    /// least 16 (read in 3.3.8 and 6.1 mm/page-writeback.c); 2.6.24 – 3.1:
    /// from the machine's pages ([`super::writer_throttle::ratelimit_pages`]).
    fn writeback_set_ratelimit(&mut self, boot_limit_pages: Option<u64>) {
        let thresh = boot_limit_pages.unwrap_or_else(|| self.global_dirty_limits().thresh);
        let ncpus = self.core().nr_cpus() as u64;
        // At a coarse unit, the 4 KiB kernel's page counts in as many
        // bytes ([`crate::mm::unit`]).
        let unit = self.mm().unit();
        let total_base_pages = self.mm().pages().len() as u64 * unit.base_pages();
        let wb = self.wb_mut();
        wb.first_pause_pages = super::ioless::dirty_poll_thresh_pages(unit.shift());
        wb.exceeded_pause_pages = unit.from_base_pages(8);
        wb.global_dirty_limit = GlobalDirtyLimit::new(thresh);
        wb.ratelimit_pages = match wb.throttle {
            super::throttle::ThrottleScheme::IoLess { .. } => {
                (thresh / (ncpus * 32)).max(unit.from_base_pages(16))
            }
            super::throttle::ThrottleScheme::WriterWriteback { .. } => unit.from_base_pages(
                super::writer_throttle::ratelimit_pages(total_base_pages, ncpus),
            ),
        };
    }

    /// The flusher's bandwidth estimate after a writeback pass
    /// (`wb_writeback` → `bdi_update_bandwidth(bdi, 0, 0, 0, 0, 0, start)`).
    fn flusher_update_bandwidth(&mut self, bdi: usize, wb_start_ns: Ns) {
        let start_j = (wb_start_ns as u128 * self.hz() as u128 / 1_000_000_000) as u64;
        self.update_bandwidth(bdi, start_j, BandwidthCaller::Flusher);
    }

    /// `bdi_update_bandwidth` on device `bdi` with its BDI_DIRTIED and
    /// BDI_WRITTEN counts now.
    fn update_bandwidth(
        &mut self,
        bdi: usize,
        start_j: u64,
        caller: BandwidthCaller,
    ) -> BandwidthUpdate {
        let (hz, now_j) = (self.hz(), self.now_jiffies());
        let wb = self.wb_mut();
        let b = &mut wb.bdis[bdi];
        let counters = BdiCounters {
            dirtied_pages: b.dirtied_pages,
            written_pages: b.written_pages,
        };
        bdi_update_bandwidth(
            &mut b.bandwidth,
            &mut wb.global_dirty_limit,
            hz,
            now_j,
            start_j,
            caller,
            counters,
        )
    }

    /// One pass of the IO-less `balance_dirty_pages` loop; `Some(step)` to
    /// sleep (the loop resumes on waking only while the task is at the hard
    /// limit), `None` when the writer may go on.
    /// `first`: 3.2's form of the pause and of `dirty_exceeded`
    /// ([`super::ioless::first`]); else 3.3+'s.
    fn balance_dirty_pages_ioless(&mut self, tid: u32, first: bool) -> Option<Step> {
        let hz = self.hz();
        let now_j = self.now_jiffies();
        let bdi = self.wb().task_bdp[tid as usize].bdi;
        let start_j = *self.wb_mut().task_bdp[tid as usize]
            .start_jiffies
            .get_or_insert(now_j);
        let nr_reclaimable = self.mm().gauges().nr_dirty;
        let dirty = nr_reclaimable + self.mm().gauges().nr_writeback;
        let limits = self.global_dirty_limits();
        self.trace_global_dirty_state(tid, limits);
        let (thresh, bg) = (limits.thresh, limits.background);
        if dirty <= dirty_freerun_ceiling(thresh, bg) {
            let st = &mut self.wb_mut().task_bdp[tid as usize];
            st.dirty_paused_when_jiffies = now_j;
            st.nr_dirtied = 0;
            st.nr_dirtied_pause = dirty_poll_interval(dirty, thresh);
            return self.bdp_ioless_done(tid, bdi, false, nr_reclaimable, bg);
        }
        if !self.wb().bdis[bdi].writeback_running {
            self.bdi_start_background_writeback(bdi);
        }
        let bdi_thresh = self.bdi_thresh(bdi, thresh, None);
        let bdi_dirty = self.wb().bdis[bdi].reclaimable + self.wb().bdis[bdi].writeback;
        // 3.2: either over its limit; 3.3+: both.
        let dirty_exceeded = if first {
            bdi_dirty > bdi_thresh || dirty > thresh
        } else {
            bdi_dirty > bdi_thresh && dirty > thresh
        };
        if dirty_exceeded {
            self.wb_mut().bdis[bdi].dirty_exceeded = true;
        }
        let mut snap = DirtySnapshot {
            thresh_pages: thresh,
            bg_thresh_pages: bg,
            dirty_pages: dirty,
            global_dirty_limit_pages: self.wb().global_dirty_limit.dirty_limit_pages,
            bdi_thresh_pages: bdi_thresh,
            bdi_dirty_pages: bdi_dirty,
        };
        let update = self.update_bandwidth(bdi, start_j, BandwidthCaller::BalanceDirtyPages(snap));
        if let BandwidthUpdate::Updated {
            ratelimit: Some(sample),
        } = update
        {
            self.trace_bdi_dirty_ratelimit(tid, bdi, sample);
        }
        snap.global_dirty_limit_pages = self.wb().global_dirty_limit.dirty_limit_pages;
        let bw = self.wb().bdis[bdi].bandwidth;
        let pos_ratio = position_ratio(&snap, bw.avg_write_bandwidth_pps);
        let task_rl = (bw.dirty_ratelimit_pps * pos_ratio) >> RATELIMIT_CALC_SHIFT;
        if first {
            return self.bdp_pause_first(tid, bdi, &snap, task_rl, dirty_exceeded, nr_reclaimable);
        }
        let max_pause = max_pause_jiffies(hz, bw.avg_write_bandwidth_pps, bdi_dirty);
        let (min_pause_j, pause_next) = min_pause(
            hz,
            self.mm().unit().shift(),
            bw.avg_write_bandwidth_pps,
            bw.dirty_ratelimit_pps,
            task_rl,
            max_pause,
        );
        let max_pause_ns = self.jiffies_ns(max_pause);
        let pages_dirtied = self.wb().task_bdp[tid as usize].nr_dirtied;
        let mut pass = BdpPass {
            bdi,
            snap,
            task_ratelimit_pps: task_rl,
            pages_dirtied,
            period_jiffies: max_pause,
            pause_jiffies: max_pause as i64,
            start_jiffies: start_j,
            now_jiffies: now_j,
        };
        let mut pause: i64;
        // Where the task's virtual time resumes after this pause: now, or
        // later by the part of a too-long pause that was cut off.
        let mut resume_j = now_j;
        if let Some(period) = (hz * pages_dirtied).checked_div(task_rl) {
            pass.period_jiffies = period;
            let period = period as i64;
            pause = period;
            let paused_when = self.wb().task_bdp[tid as usize].dirty_paused_when_jiffies;
            if paused_when != 0 {
                pause -= now_j as i64 - paused_when as i64;
            }
            if pause < min_pause_j as i64 {
                pass.pause_jiffies = pause.min(0);
                self.trace_balance_dirty_pages(tid, &pass);
                let st = &mut self.wb_mut().task_bdp[tid as usize];
                if pause < -(hz as i64) {
                    st.dirty_paused_when_jiffies = now_j;
                    st.nr_dirtied = 0;
                } else if period > 0 {
                    st.dirty_paused_when_jiffies += period as u64;
                    st.nr_dirtied = 0;
                } else if st.nr_dirtied_pause <= pages_dirtied {
                    st.nr_dirtied_pause += pages_dirtied;
                }
                return self.bdp_ioless_done(tid, bdi, dirty_exceeded, nr_reclaimable, bg);
            }
            if pause > max_pause as i64 {
                // "For occasional dropped task_ratelimit" (3.3+): the cut
                // part, up to one more max_pause, is owed by the next pause.
                resume_j += (pause as u64 - max_pause).min(max_pause);
                pause = max_pause as i64;
            }
        } else {
            // At the hard limit (pos_ratio 0): the longest pause.
            pause = max_pause as i64;
        }
        pass.pause_jiffies = pause;
        self.trace_balance_dirty_pages(tid, &pass);
        let st = &mut self.wb_mut().task_bdp[tid as usize];
        // Sleep `pause` jiffies (io_schedule_timeout, killable).
        let pause_j = pause.max(0) as u64;
        let pause_ns = (pause_j * 1_000_000_000 / hz).min(max_pause_ns);
        st.dirty_paused_when_jiffies = resume_j + pause_j;
        st.nr_dirtied = 0;
        st.nr_dirtied_pause = pause_next;
        if task_rl > 0 || bdi_dirty <= 1 {
            self.bdp_leave_after_sleep(tid, bdi, dirty_exceeded);
        }
        self.wb_mut().bdis[bdi].dirty_sleep_ns = Some(self.now());
        Some(Step::SleepUntil(
            self.now() + pause_ns.max(1_000_000_000 / hz),
        ))
    }

    /// 3.2's pause (read in 3.2.4): `HZ × pages_dirtied / task_ratelimit`
    /// capped at 3.2's `bdi_max_pause` (no sleep when that rounds to 0),
    /// or the longest pause at the hard limit; then the next allowance
    /// ([`first::next_nr_dirtied_pause`]).
    fn bdp_pause_first(
        &mut self,
        tid: u32,
        bdi: usize,
        snap: &DirtySnapshot,
        task_rl: u64,
        dirty_exceeded: bool,
        nr_reclaimable: u64,
    ) -> Option<Step> {
        let hz = self.hz();
        let bw = self.wb().bdis[bdi].bandwidth;
        let max_pause = first::max_pause_jiffies(
            hz,
            bw.avg_write_bandwidth_pps,
            bw.dirty_ratelimit_pps,
            snap.bdi_dirty_pages,
        );
        let pause = match (hz * self.wb().task_bdp[tid as usize].nr_dirtied).checked_div(task_rl) {
            Some(p) => p.min(max_pause),
            None => max_pause,
        };
        // The loop ends after this pause unless at the hard limit; a pause
        // that rounds to 0 is not slept and counts as 1 jiffy below.
        let leaving = pause == 0 || task_rl > 0 || snap.bdi_dirty_pages <= 1;
        if leaving {
            let first = self.wb().first_pause_pages;
            let st = &mut self.wb_mut().task_bdp[tid as usize];
            st.nr_dirtied_pause = first::next_nr_dirtied_pause(
                hz,
                pause.max(1),
                max_pause,
                st.nr_dirtied,
                allowance(st.nr_dirtied_pause, first),
                bw.dirty_ratelimit_pps,
            );
            st.nr_dirtied = 0;
        }
        if pause == 0 {
            return self.bdp_ioless_done(
                tid,
                bdi,
                dirty_exceeded,
                nr_reclaimable,
                snap.bg_thresh_pages,
            );
        }
        if leaving {
            self.bdp_leave_after_sleep(tid, bdi, dirty_exceeded);
        }
        self.wb_mut().bdis[bdi].dirty_sleep_ns = Some(self.now());
        Some(Step::SleepUntil(self.now() + self.jiffies_ns(pause)))
    }

    /// The loop ends after the pause the task is about to sleep (it is not
    /// at the hard limit): it is not resumed on waking, and the device's
    /// `dirty_exceeded` is cleared unless this pass found it over.
    fn bdp_leave_after_sleep(&mut self, tid: u32, bdi: usize, dirty_exceeded: bool) {
        self.wb_mut().task_bdp[tid as usize].active = false;
        if !dirty_exceeded {
            self.wb_mut().bdis[bdi].dirty_exceeded = false;
        }
    }

    /// After the loop (3.2 – 4.x): clear the device's `dirty_exceeded`,
    /// start background writeback if it is due and not running.
    fn bdp_ioless_done(
        &mut self,
        tid: u32,
        bdi: usize,
        dirty_exceeded: bool,
        nr_reclaimable: u64,
        bg: u64,
    ) -> Option<Step> {
        self.wb_mut().task_bdp[tid as usize].active = false;
        if !dirty_exceeded && self.wb().bdis[bdi].dirty_exceeded {
            self.wb_mut().bdis[bdi].dirty_exceeded = false;
        }
        if !self.wb().bdis[bdi].writeback_running && nr_reclaimable > bg {
            self.bdi_start_background_writeback(bdi);
        }
        None
    }
}

impl<T: WritebackHost + ?Sized> IoLessThrottle for T {}

#[cfg(test)]
mod tests {
    use super::IoLessThrottle;
    use crate::mm::MmHost;
    use crate::sched::HasCore;
    use crate::test_support::usb_stick_files;
    use crate::writeback::limits::Limits;
    use crate::writeback::WritebackHost;

    /// `page_writeback_init` → `writeback_set_ratelimit`: the smoothed
    /// global limit starts at the boot threshold.
    #[test]
    fn global_dirty_limit_starts_at_the_boot_threshold() {
        let (mut sys, _) = usb_stick_files("3.3", "xfs", &["a"]);
        let thresh = sys.global_dirty_limits().thresh;
        assert!(thresh > 0);
        assert_eq!(sys.wb().global_dirty_limit.dirty_limit_pages, thresh);
        // A boot with more memory free then (`boot_dirty_limit_pages`).
        sys.writeback_set_ratelimit(Some(thresh + 1_300));
        assert_eq!(
            sys.wb().global_dirty_limit.dirty_limit_pages,
            thresh + 1_300
        );
    }

    /// `writeback_set_ratelimit` (3.2+) also sets `ratelimit_pages`, the
    /// per-CPU safety net of `balance_dirty_pages_ratelimited`, from the
    /// same threshold; it is not recomputed as memory fills.
    #[test]
    fn ratelimit_pages_is_set_with_the_boot_threshold() {
        let (mut sys, _) = usb_stick_files("3.3", "xfs", &["a"]);
        let ncpus = sys.core().nr_cpus() as u64;
        let thresh = sys.global_dirty_limits().thresh;
        assert_eq!(sys.wb().ratelimit_pages, (thresh / (ncpus * 32)).max(16));
        sys.writeback_set_ratelimit(Some(64_000 * ncpus));
        assert_eq!(sys.wb().ratelimit_pages, 2_000);
        sys.writeback_set_ratelimit(Some(100));
        assert_eq!(sys.wb().ratelimit_pages, 16);
    }

    /// Before 3.2 the same call sets it from the machine's pages, capped
    /// at 4 MiB of them, whatever the dirty threshold.
    #[test]
    fn ratelimit_pages_before_3_2_follows_the_machine_size() {
        let (mut sys, _) = usb_stick_files("3.0-vanilla", "xfs", &["a"]);
        let ncpus = sys.core().nr_cpus() as u64;
        let frames = sys.mm().pages().len() as u64;
        let expected = crate::writeback::writer_throttle::ratelimit_pages(frames, ncpus);
        assert_eq!(sys.wb().ratelimit_pages, expected);
        sys.writeback_set_ratelimit(Some(100));
        assert_eq!(sys.wb().ratelimit_pages, expected);
    }
}
