//! IO-less dirty throttling arithmetic, Linux 3.2 – 4.1 (Wu Fengguang),
//! `mm/page-writeback.c`: `dirty_freerun_ceiling`, `hard_dirty_limit`,
//! `update_dirty_limit`/`global_update_bandwidth`, `bdi_position_ratio`,
//! `bdi_update_write_bandwidth`, `bdi_update_dirty_ratelimit`,
//! `__bdi_update_bandwidth`, `dirty_poll_interval`, `bdi_max_pause`,
//! `bdi_min_pause` (3.3+) and `fs/fs-writeback.c`'s `writeback_chunk_size`.
//! Spec sections 5.1 – 5.6 and 6.8; checked against 3.10 source.
//! Non-strictlimit devices only (strictlimit is FUSE, 3.12+).
//!
//! Pure functions over the per-device [`BdiBandwidth`] and the global
//! [`GlobalDirtyLimit`]; no allocation. Units: pages, pages/s (`_pps`),
//! jiffies; `hz` and `page_shift` are parameters.
//!
//! Arithmetic is a 64-bit kernel's: truncating division, arithmetic right
//! shifts, wrapping where C's `unsigned long` wraps. Deliberate
//! differences: divisors are 64-bit (`div_u64`/`div_s64` take 32-bit ones;
//! matters only past 2^32), and a zero elapsed time counts as 1 jiffy
//! instead of dividing by zero (the 200 ms gate rules it out anyway).
//! Callers must keep `bg_thresh <= thresh`, as `global_dirty_limits` does.

/// `RATELIMIT_CALC_SHIFT`: `pos_ratio` is fixed point with 1.0 = 1024.
pub const RATELIMIT_CALC_SHIFT: u32 = 10;
/// `pos_ratio` 1.0.
pub const POS_RATIO_ONE: u64 = 1 << RATELIMIT_CALC_SHIFT;
/// `DIRTY_SCOPE` (include/linux/writeback.h).
pub const DIRTY_SCOPE: u64 = 8;

/// `BANDWIDTH_INTERVAL` (estimates refresh every 200 ms) and `MAX_PAUSE`
/// (longest single throttle sleep): both `max(HZ/5, 1)`.
pub fn interval_jiffies(hz: u64) -> u64 {
    (hz / 5).max(1)
}

/// `DIRTY_POLL_THRESH` = 128 KiB in pages, at least one (a page of a
/// coarse unit of 256 KiB or more, `crate::mm::unit`).
pub fn dirty_poll_thresh_pages(page_shift: u32) -> u64 {
    (128 >> (page_shift - 10)).max(1)
}

/// `MIN_WRITEBACK_PAGES` = 4 MiB in pages.
pub fn min_writeback_pages(page_shift: u32) -> u64 {
    4096 >> (page_shift - 10)
}

/// `INIT_BW` = 100 MiB/s in pages/s (mm/backing-dev.c).
pub fn init_bw_pps(page_shift: u32) -> u64 {
    100 << (20 - page_shift)
}

/// Kernel `ilog2` of a runtime value, `fls_long(x) - 1`: -1 for 0 (an idle
/// device's `avg_write_bandwidth` can be 0 in `bdi_min_pause`).
fn ilog2(x: u64) -> i64 {
    63 - x.leading_zeros() as i64
}

/// `time_before(a, b)`, wrap-safe.
fn time_before(a: u64, b: u64) -> bool {
    (a.wrapping_sub(b) as i64) < 0
}

/// Per-device estimates (`struct backing_dev_info` fields in 3.x).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BdiBandwidth {
    /// `write_bandwidth`: writeout rate over the last ~3 s.
    pub write_bandwidth_pps: u64,
    /// `avg_write_bandwidth`: the above with spikes filtered out; the one
    /// the control formulas use.
    pub avg_write_bandwidth_pps: u64,
    /// `dirty_ratelimit`: each dirtier's rate at `pos_ratio` 1.0,
    /// ≈ write bandwidth / number of dirtiers.
    pub dirty_ratelimit_pps: u64,
    /// `balanced_dirty_ratelimit` of the previous update.
    pub balanced_dirty_ratelimit_pps: u64,
    /// `written_stamp`: BDI_WRITTEN at the last update.
    pub written_stamp_pages: u64,
    /// `dirtied_stamp`: BDI_DIRTIED at the last update.
    pub dirtied_stamp_pages: u64,
    /// `bw_time_stamp`.
    pub bw_time_stamp_jiffies: u64,
    /// A rate-limit step damped by a shift of 64 or more wraps the shift
    /// (3.2 – 4.4 on x86-64) rather than vanishing (4.5+); set from the
    /// profile ([`super::throttle::ThrottleScheme`]).
    pub big_shift_wraps: bool,
}

impl BdiBandwidth {
    /// `bdi_init`: all four rates at `INIT_BW`, stamps at 0 and now.
    pub fn new(page_shift: u32, now_jiffies: u64) -> Self {
        let init = init_bw_pps(page_shift);
        BdiBandwidth {
            write_bandwidth_pps: init,
            avg_write_bandwidth_pps: init,
            dirty_ratelimit_pps: init,
            balanced_dirty_ratelimit_pps: init,
            written_stamp_pages: 0,
            dirtied_stamp_pages: 0,
            bw_time_stamp_jiffies: now_jiffies,
            big_shift_wraps: true,
        }
    }
}

/// `global_dirty_limit` and the `update_time` static of
/// `global_update_bandwidth` (`struct wb_domain` from 4.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GlobalDirtyLimit {
    /// `global_dirty_limit`: follows `thresh` up at once, down slowly.
    pub dirty_limit_pages: u64,
    /// When [`GlobalDirtyLimit::update`] last ran.
    pub update_time_jiffies: u64,
}

impl GlobalDirtyLimit {
    /// `writeback_set_ratelimit` sets the limit to `thresh`; `update_time`
    /// is a zero-initialised static.
    pub fn new(thresh_pages: u64) -> Self {
        GlobalDirtyLimit {
            dirty_limit_pages: thresh_pages,
            update_time_jiffies: 0,
        }
    }

    /// `global_update_bandwidth`: one [`update_dirty_limit`] per
    /// `BANDWIDTH_INTERVAL` system-wide. True if it ran.
    pub fn update(
        &mut self,
        hz: u64,
        now_jiffies: u64,
        thresh_pages: u64,
        dirty_pages: u64,
    ) -> bool {
        let due = self.update_time_jiffies.wrapping_add(interval_jiffies(hz));
        if time_before(now_jiffies, due) {
            return false;
        }
        update_dirty_limit(&mut self.dirty_limit_pages, thresh_pages, dirty_pages);
        self.update_time_jiffies = now_jiffies;
        true
    }
}

/// One `balance_dirty_pages` iteration's view, all in pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DirtySnapshot {
    /// `dirty_thresh`.
    pub thresh_pages: u64,
    /// `background_thresh`.
    pub bg_thresh_pages: u64,
    /// NR_FILE_DIRTY + NR_UNSTABLE_NFS + NR_WRITEBACK.
    pub dirty_pages: u64,
    /// [`GlobalDirtyLimit::dirty_limit_pages`].
    pub global_dirty_limit_pages: u64,
    /// `bdi_thresh` (`bdi_dirty_limit`).
    pub bdi_thresh_pages: u64,
    /// BDI_RECLAIMABLE + BDI_WRITEBACK.
    pub bdi_dirty_pages: u64,
}

/// `dirty_freerun_ceiling`: nobody is throttled below it.
pub fn dirty_freerun_ceiling(thresh_pages: u64, bg_thresh_pages: u64) -> u64 {
    (thresh_pages + bg_thresh_pages) / 2
}

/// `hard_dirty_limit`: the smoothed global limit while it is above thresh.
pub fn hard_dirty_limit(global_dirty_limit_pages: u64, thresh_pages: u64) -> u64 {
    thresh_pages.max(global_dirty_limit_pages)
}

impl DirtySnapshot {
    /// `hard_dirty_limit(thresh)`.
    pub fn limit_pages(&self) -> u64 {
        hard_dirty_limit(self.global_dirty_limit_pages, self.thresh_pages)
    }

    /// Global setpoint `(freerun + limit) / 2`, where the cubic is 1.0.
    pub fn setpoint_pages(&self) -> u64 {
        (dirty_freerun_ceiling(self.thresh_pages, self.bg_thresh_pages) + self.limit_pages()) / 2
    }

    /// The global control line of [`position_ratio`] alone: 2.0 at freerun,
    /// 1.0 at the setpoint, 0 at or above the limit (1024 = 1.0).
    pub fn global_position_ratio(&self) -> u64 {
        let (dirty, limit) = (self.dirty_pages, self.limit_pages());
        if dirty >= limit {
            return 0;
        }
        global_pos_ratio(self.setpoint_pages(), dirty, limit) as u64
    }
}

/// `update_dirty_limit`: follow a rising `thresh` at once, a falling one
/// by 1/32 of the gap per interval and never below `dirty`, so a sudden
/// loss of dirtyable memory does not throw every writer into the limit.
pub fn update_dirty_limit(global_dirty_limit_pages: &mut u64, thresh_pages: u64, dirty_pages: u64) {
    let limit = *global_dirty_limit_pages;
    let target = thresh_pages.max(dirty_pages);
    if limit < thresh_pages {
        *global_dirty_limit_pages = thresh_pages;
    } else if limit > target {
        *global_dirty_limit_pages = limit - ((limit - target) >> 5);
    }
}

/// Global cubic of `bdi_position_ratio` (3.2 – 4.x), signed 64-bit:
/// `x = ((setpoint - dirty) << 10) / (limit - setpoint + 1)`, then
/// `x·x >> 10`, `·x >> 10`, `+ 1024`.
fn global_pos_ratio(setpoint: u64, dirty: u64, limit: u64) -> i64 {
    let x = ((setpoint as i64).wrapping_sub(dirty as i64) << RATELIMIT_CALC_SHIFT)
        / (limit - setpoint + 1) as i64;
    let cube = (x.wrapping_mul(x) >> RATELIMIT_CALC_SHIFT).wrapping_mul(x) >> RATELIMIT_CALC_SHIFT;
    cube + (1 << RATELIMIT_CALC_SHIFT)
}

/// `bdi_position_ratio` (3.2 – 4.1, non-strictlimit), 1024 = 1.0: the global
/// cubic times the device's linear line (slope −1/(8 × write bandwidth)
/// through its setpoint, floored at 1/4), boosted up to ×8 in the device
/// reserve area (below half its threshold) so its queue never runs dry.
/// Can exceed 2.0. Meant for dirty above the freerun ceiling, where the
/// kernel calls it; far below, the signed cubic overflows as in the kernel.
pub fn position_ratio(s: &DirtySnapshot, avg_write_bandwidth_pps: u64) -> u64 {
    let (thresh, dirty, bdi_dirty) = (s.thresh_pages, s.dirty_pages, s.bdi_dirty_pages);
    let (limit, setpoint) = (s.limit_pages(), s.setpoint_pages());
    if dirty >= limit {
        return 0;
    }
    let mut pos_ratio = global_pos_ratio(setpoint, dirty, limit);

    // An idle device's share decays to 0: give it at least 1/8 of the
    // remaining headroom so its first writes are not hard-throttled.
    let bdi_thresh = s.bdi_thresh_pages.min(thresh).max((limit - dirty) / 8);
    // Device setpoint = setpoint × bdi_thresh/thresh (16-bit fixed point).
    let xs = (bdi_thresh << 16) / (thresh + 1);
    let bdi_setpoint = setpoint.wrapping_mul(xs) >> 16;
    // span: 8 × write_bw for one device, towards bdi_thresh for JBOD.
    // `thresh - bdi_thresh` wraps, as in C, if the floor above lifted
    // bdi_thresh over thresh.
    let span = thresh
        .wrapping_sub(bdi_thresh)
        .wrapping_add(avg_write_bandwidth_pps.wrapping_mul(8))
        .wrapping_mul(xs)
        >> 16;
    let x_intercept = bdi_setpoint.wrapping_add(span);
    if bdi_dirty < x_intercept.wrapping_sub(span / 4) {
        let num = (pos_ratio as u64).wrapping_mul(x_intercept.wrapping_sub(bdi_dirty));
        pos_ratio = (num / x_intercept.wrapping_sub(bdi_setpoint).wrapping_add(1)) as i64;
    } else {
        pos_ratio /= 4;
    }
    let reserve = bdi_thresh / 2;
    if bdi_dirty < reserve {
        pos_ratio = if bdi_dirty > reserve / 8 {
            ((pos_ratio as u64).wrapping_mul(reserve) / bdi_dirty) as i64
        } else {
            pos_ratio.wrapping_mul(8)
        };
    }
    pos_ratio as u64
}

/// `bdi_update_write_bandwidth`: pages written since `written_stamp`,
/// averaged into `write_bandwidth` over `roundup_pow_of_two(3 HZ)` jiffies;
/// `avg_write_bandwidth` then moves 1/8 towards it only if the old and new
/// estimates agree on the direction (filters one-interval spikes). After
/// more than that window both jump to the raw rate.
pub fn update_write_bandwidth(
    bw: &mut BdiBandwidth,
    hz: u64,
    elapsed_jiffies: u64,
    written_pages: u64,
) {
    let period = (3 * hz).next_power_of_two();
    let (mut avg, old) = (bw.avg_write_bandwidth_pps, bw.write_bandwidth_pps);
    let mut rate = written_pages
        .wrapping_sub(bw.written_stamp_pages)
        .wrapping_mul(hz);
    if elapsed_jiffies > period {
        rate /= elapsed_jiffies;
        avg = rate;
    } else {
        rate = rate.wrapping_add(old.wrapping_mul(period - elapsed_jiffies))
            >> period.trailing_zeros();
        if avg > old && old >= rate {
            avg -= (avg - old) >> 3;
        }
        if avg < old && old <= rate {
            avg += (old - avg) >> 3;
        }
    }
    bw.write_bandwidth_pps = rate;
    bw.avg_write_bandwidth_pps = avg;
}

/// The damping of a rate-limit step: `step >>= dirty_ratelimit /
/// (2 step + 1)`, then `(step + 7) / 8`. Shifts of 64+ are undefined in C; 3.x on
/// x86-64 (`shr %cl`) shifts by the count mod 64 (`wraps`); 4.5+ gives 0
/// (`if (shift < BITS_PER_LONG) ... else step = 0`, read in 6.1
/// `wb_update_dirty_ratelimit`). Steps under roughly 4 – 8 % of the rate
/// vanish: a dead zone that leaves `dirty_ratelimit` that far off the
/// balanced rate; without the wrap, every small step vanishes.
fn damp_ratelimit_step(step: u64, dirty_ratelimit: u64, wraps: bool) -> u64 {
    let shift = dirty_ratelimit / (2 * step + 1);
    if shift >= 64 && !wraps {
        return 0;
    }
    (step >> (shift & 63)).div_ceil(8)
}

/// `bdi_update_dirty_ratelimit` (3.2 – 4.1). The balanced rate
/// `task_ratelimit × write_bw / dirty_rate` is write_bw / N for N dirtiers
/// held at `task_ratelimit`; `dirty_ratelimit` steps towards it only when
/// `task_ratelimit` (the position error) and the previous balanced rate
/// agree on the direction. `dirtied_pages` is BDI_DIRTIED now. Reads the
/// current `avg_write_bandwidth` (the kernel calls this before
/// [`update_write_bandwidth`]); leaves the stamps alone. Returns what the
/// `bdi_dirty_ratelimit` tracepoint prints besides the device's state.
pub fn update_dirty_ratelimit(
    bw: &mut BdiBandwidth,
    hz: u64,
    s: &DirtySnapshot,
    dirtied_pages: u64,
    elapsed_jiffies: u64,
) -> RatelimitSample {
    let setpoint = s.setpoint_pages();
    let (write_bw, rl) = (bw.avg_write_bandwidth_pps, bw.dirty_ratelimit_pps);
    let dirtied = dirtied_pages.wrapping_sub(bw.dirtied_stamp_pages);
    let dirty_rate = dirtied.wrapping_mul(hz) / elapsed_jiffies.max(1);
    // The +1 lets dirty_ratelimit ramp up from tiny values.
    let task_rl = (rl.wrapping_mul(position_ratio(s, write_bw)) >> RATELIMIT_CALC_SHIFT) + 1;
    let balanced = (task_rl.wrapping_mul(write_bw) / (dirty_rate | 1)).min(write_bw);
    let prev = bw.balanced_dirty_ratelimit_pps;
    let step = if s.dirty_pages < setpoint {
        prev.min(balanced).min(task_rl).saturating_sub(rl)
    } else {
        rl.saturating_sub(prev.max(balanced).max(task_rl))
    };
    let step = damp_ratelimit_step(step, rl, bw.big_shift_wraps);
    let next = if rl < balanced { rl + step } else { rl - step };
    bw.dirty_ratelimit_pps = next.max(1);
    bw.balanced_dirty_ratelimit_pps = balanced;
    RatelimitSample {
        dirty_rate_pps: dirty_rate,
        task_ratelimit_pps: task_rl,
    }
}

/// The rates of one rate-limit update that the device does not keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RatelimitSample {
    /// Pages dirtied per second since the last update.
    pub dirty_rate_pps: u64,
    /// The task rate at this update's position (`+ 1`, as computed).
    pub task_ratelimit_pps: u64,
}

/// What [`bdi_update_bandwidth`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BandwidthUpdate {
    /// Too soon, or a quiet period (only the stamps moved).
    Skipped,
    /// The estimates moved; `ratelimit` when the rate limit did too.
    Updated { ratelimit: Option<RatelimitSample> },
}

impl BandwidthUpdate {
    /// Whether the estimates were updated.
    pub fn updated(self) -> bool {
        matches!(self, BandwidthUpdate::Updated { .. })
    }
}

/// Who runs the bandwidth update; decides what is updated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BandwidthCaller {
    /// `balance_dirty_pages` → `bdi_update_bandwidth`: also the global
    /// limit and the rate limit (if thresh ≠ 0). Its lockless pre-check
    /// needs strictly more than `BANDWIDTH_INTERVAL` elapsed.
    BalanceDirtyPages(DirtySnapshot),
    /// The flusher (`wb_writeback` → `wb_update_bandwidth`): write
    /// bandwidth only, once `BANDWIDTH_INTERVAL` has elapsed.
    Flusher,
}

/// The device's monotonic event counters now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BdiCounters {
    /// BDI_DIRTIED.
    pub dirtied_pages: u64,
    /// BDI_WRITTEN.
    pub written_pages: u64,
}

/// `__bdi_update_bandwidth` (3.1 – 4.1) behind its callers' gates: at most
/// every `BANDWIDTH_INTERVAL`, update the global limit and the rate limit
/// (balance_dirty_pages only), then the write bandwidth, then re-stamp.
/// The rate limit sees the just-updated global limit (the snapshot's
/// `global_dirty_limit_pages` is replaced), as `hard_dirty_limit` does.
///
/// Quiet periods: if more than `HZ` has passed and the stamp predates
/// `start_time_jiffies` (entry of this `balance_dirty_pages` call, or start
/// of the flusher's current `wb_writeback`), the device was idle; only the
/// stamps are refreshed so idle time does not read as low bandwidth.
///
/// Whether the estimates were updated (not: too soon, or quiet period).
pub fn bdi_update_bandwidth(
    bw: &mut BdiBandwidth,
    global: &mut GlobalDirtyLimit,
    hz: u64,
    now_jiffies: u64,
    start_time_jiffies: u64,
    caller: BandwidthCaller,
    counters: BdiCounters,
) -> BandwidthUpdate {
    let interval = interval_jiffies(hz);
    let stamp = bw.bw_time_stamp_jiffies;
    let elapsed = now_jiffies.wrapping_sub(stamp);
    // bdi_update_bandwidth: `time_is_after_eq_jiffies(stamp + interval)`.
    let bdp = matches!(caller, BandwidthCaller::BalanceDirtyPages(_));
    if elapsed < interval || (bdp && !time_before(stamp.wrapping_add(interval), now_jiffies)) {
        return BandwidthUpdate::Skipped;
    }
    let quiet = elapsed > hz && time_before(stamp, start_time_jiffies);
    let mut ratelimit = None;
    if !quiet {
        if let BandwidthCaller::BalanceDirtyPages(mut s) = caller {
            if s.thresh_pages != 0 {
                global.update(hz, now_jiffies, s.thresh_pages, s.dirty_pages);
                s.global_dirty_limit_pages = global.dirty_limit_pages;
                ratelimit = Some(update_dirty_ratelimit(
                    bw,
                    hz,
                    &s,
                    counters.dirtied_pages,
                    elapsed,
                ));
            }
        }
        update_write_bandwidth(bw, hz, elapsed, counters.written_pages);
    }
    bw.dirtied_stamp_pages = counters.dirtied_pages;
    bw.written_stamp_pages = counters.written_pages;
    bw.bw_time_stamp_jiffies = now_jiffies;
    if quiet {
        BandwidthUpdate::Skipped
    } else {
        BandwidthUpdate::Updated { ratelimit }
    }
}

/// `dirty_poll_interval`: pages to dirty before the next check while in
/// freerun, ≈ √(thresh − dirty) rounded down to a power of two; 1 at or
/// above thresh.
pub fn dirty_poll_interval(dirty_pages: u64, thresh_pages: u64) -> u64 {
    if thresh_pages > dirty_pages {
        1 << (ilog2(thresh_pages - dirty_pages) >> 1)
    } else {
        1
    }
}

/// `bdi_max_pause`: ≈ time to write 1/8 of the device's dirty pages, +1,
/// capped at `MAX_PAUSE`, so a small dirty pool is not drained while its
/// writers sleep.
pub fn max_pause_jiffies(hz: u64, avg_write_bandwidth_pps: u64, bdi_dirty_pages: u64) -> u64 {
    let per_tick = avg_write_bandwidth_pps / (1 + hz / 8).next_power_of_two();
    (bdi_dirty_pages / (1 + per_tick) + 1).min(interval_jiffies(hz))
}

/// `bdi_min_pause` (3.3 – 4.1): target pause 10 ms, +10 ms per doubling of
/// the estimated dirtier count (write bw / dirty_ratelimit), at most
/// `1 + max_pause/2`. The pages to dirty before the next call follow the
/// stabler `dirty_ratelimit`, are raised towards `DIRTY_POLL_THRESH` if
/// small, and cut so the next pause at `task_ratelimit` fits `max_pause`.
/// Returns `(min_pause_jiffies, nr_dirtied_pause_pages)`: shorter computed
/// pauses are not slept; the second value is the task's next
/// `nr_dirtied_pause`.
pub fn min_pause(
    hz: u64,
    page_shift: u32,
    avg_write_bandwidth_pps: u64,
    dirty_ratelimit_pps: u64,
    task_ratelimit_pps: u64,
    max_pause_jiffies: u64,
) -> (u64, u64) {
    let poll = dirty_poll_thresh_pages(page_shift);
    let hz_pow2 = hz.next_power_of_two();
    let (hi, lo) = (ilog2(avg_write_bandwidth_pps), ilog2(dirty_ratelimit_pps));
    let mut t = (hz / 100).max(1);
    if hi > lo {
        t += (hi - lo) as u64 * (10 * hz) / 1024;
    }
    t = t.min(1 + max_pause_jiffies / 2);
    let mut pages = dirty_ratelimit_pps * t / hz_pow2;
    if pages < poll {
        t = max_pause_jiffies;
        pages = dirty_ratelimit_pps * t / hz_pow2;
        if pages > poll {
            pages = poll;
            t = hz * poll / dirty_ratelimit_pps;
        }
    }
    if hz * pages / (task_ratelimit_pps + 1) > max_pause_jiffies {
        t = max_pause_jiffies;
        pages = task_ratelimit_pps * t / hz_pow2;
    }
    (if pages >= poll { 1 + t / 2 } else { t }, pages)
}

/// `writeback_chunk_size` (3.2+) for WB_SYNC_NONE untagged work: half a
/// second of device bandwidth, at most 1/`DIRTY_SCOPE` of the global limit
/// and the work's `nr_pages`, plus one `MIN_WRITEBACK_PAGES` rounded down
/// to a multiple of it (never below 4 MiB). WB_SYNC_ALL and tagged work use
/// `LONG_MAX` instead (the caller's choice).
pub fn writeback_chunk_size(
    avg_write_bandwidth_pps: u64,
    global_dirty_limit_pages: u64,
    nr_pages: u64,
    page_shift: u32,
) -> u64 {
    let min_pages = min_writeback_pages(page_shift);
    let pages = (avg_write_bandwidth_pps / 2)
        .min(global_dirty_limit_pages / DIRTY_SCOPE)
        .min(nr_pages);
    (pages + min_pages) / min_pages * min_pages
}

pub mod first;

#[cfg(test)]
mod tests;
