//! The first form of IO-less throttling, Linux 3.2 only (read in 3.2.4
//! `mm/page-writeback.c`: `bdi_max_pause`, the pause and the
//! `nr_dirtied_pause` update at the end of `balance_dirty_pages`). 3.3
//! replaced both with `bdi_min_pause` and the think-time credit
//! (`dirty_paused_when`), and raised the longest pause of a lone writer
//! from about 20 ms to 200 ms; the model's 3.3+ form is in the parent.
//!
//! Why it matters: a 3.2 writer on a slow device sleeps about 20 ms at a
//! time, a few pages at each call, so its page allocations come almost
//! evenly; with 3.3's pauses they come in bursts a fifth of a second
//! apart, and reclaim sees memory in another state between them.

use super::{ilog2, interval_jiffies};

/// `bdi_max_pause` (3.2): 20 ms, plus 20 ms for each doubling of the
/// estimated number of dirtiers (write bandwidth over `dirty_ratelimit`),
/// at most the time to write an eighth of the device's dirty pages, kept
/// within 4 jiffies and `MAX_PAUSE`.
pub fn max_pause_jiffies(
    hz: u64,
    avg_write_bandwidth_pps: u64,
    dirty_ratelimit_pps: u64,
    bdi_dirty_pages: u64,
) -> u64 {
    let (hi, lo) = (ilog2(avg_write_bandwidth_pps), ilog2(dirty_ratelimit_pps));
    let mut t = hz / 50;
    if hi > lo {
        t += (hi - lo) as u64 * (20 * hz) / 1024;
    }
    t = t.min(bdi_dirty_pages * hz / (8 * avg_write_bandwidth_pps + 1));
    t.clamp(4, interval_jiffies(hz).max(4))
}

/// The pages a task may dirty before its next call (3.2's update after
/// the loop), from the pause it just had (a pause that rounded to 0
/// counts as 1 jiffy). After a short pause
/// (at most a quarter of `max_pause`) with at least the allowance used,
/// it grows towards `dirty_ratelimit × max_pause / 2` (by ⅛ to 4×); after
/// a pause that hit `max_pause` it shrinks towards it (to ¼ – ⅞);
/// otherwise it stays.
pub fn next_nr_dirtied_pause(
    hz: u64,
    pause_jiffies: u64,
    max_pause_jiffies: u64,
    pages_dirtied: u64,
    nr_dirtied_pause: u64,
    dirty_ratelimit_pps: u64,
) -> u64 {
    let target = dirty_ratelimit_pps * (max_pause_jiffies / 2) / hz;
    if pause_jiffies <= max_pause_jiffies / 4 && pages_dirtied >= nr_dirtied_pause {
        let lo = pages_dirtied + pages_dirtied / 8;
        target.clamp(lo, (pages_dirtied * 4).max(lo))
    } else if pause_jiffies >= max_pause_jiffies {
        let hi = pages_dirtied - pages_dirtied / 8;
        1 | target.clamp((pages_dirtied / 4).min(hi), hi)
    } else {
        nr_dirtied_pause
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lone_writer_on_a_slow_device_pauses_20_ms_at_most() {
        // HZ 1000; the 1 MiB/s stick (256 pages/s) of the quarter-size
        // fuse-ntfs lab machine, dirty_ratelimit stuck above it at 5 MB/s
        // (real 3.2.4's bdi_dirty_ratelimit events), 30,000 dirty pages.
        assert_eq!(max_pause_jiffies(1000, 256, 1221, 30_000), 20);
        // Four dirtiers sharing the device: +2 doublings, +40 ms.
        assert_eq!(max_pause_jiffies(1000, 1024, 256, 30_000), 59);
        // A nearly clean device: a tenth of a second of dirty pages over 8
        // is 12 ms, but never under 4 jiffies.
        assert_eq!(max_pause_jiffies(1000, 256, 256, 25), 12);
        assert_eq!(max_pause_jiffies(1000, 25_600, 256, 10), 4);
        // Never past MAX_PAUSE (HZ/5).
        assert_eq!(max_pause_jiffies(1000, 1 << 30, 1, 1 << 40), 200);
    }

    #[test]
    fn the_allowance_grows_after_short_pauses_and_shrinks_after_long_ones() {
        // dirty_ratelimit 1,221 pages/s × 10 ms = 12 pages target.
        // Short pause, allowance used: at least +⅛, at most 4×.
        assert_eq!(next_nr_dirtied_pause(1000, 2, 20, 8, 8, 1221), 12);
        assert_eq!(next_nr_dirtied_pause(1000, 2, 20, 64, 8, 1221), 72);
        // A pause at max_pause: back towards the target, to at most ⅞.
        assert_eq!(next_nr_dirtied_pause(1000, 20, 20, 64, 64, 1221), 17);
        assert_eq!(next_nr_dirtied_pause(1000, 20, 20, 8, 8, 1221), 7);
        // In between: unchanged.
        assert_eq!(next_nr_dirtied_pause(1000, 10, 20, 64, 64, 1221), 64);
    }
}
