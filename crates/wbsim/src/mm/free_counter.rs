//! NR_FREE_PAGES as the kernel counts it: a zone counter fed through
//! per-CPU deltas (`mm/vmstat.c`: `__mod_zone_page_state`,
//! `refresh_cpu_vm_stats`, `calculate_normal_threshold`,
//! `calculate_pressure_threshold`, `refresh_zone_stat_thresholds`,
//! `set_pgdat_percpu_threshold`; `mm/page_alloc.c`:
//! `zone_watermark_ok_safe`), read in 3.2.4.
//!
//! Why it matters: every watermark check reads `zone_page_state(zone,
//! NR_FREE_PAGES)`, which lags the buddy lists by what each CPU has not
//! folded in yet, up to its `stat_threshold`, until the per-second
//! `vmstat_update` folds it. Moves between the buddy lists and a per-CPU
//! list larger than the threshold fold at once. Where the lag could hide
//! a breach of the min watermark (`ncpus * threshold > low - min`, a
//! zone with a `percpu_drift_mark`; 2.6.36+), kswapd reads the exact sum
//! below the mark (`zone_watermark_ok_safe`), and (2.6.38+) lowers such a
//! zone's thresholds to `(low - min) / ncpus` while it is awake.

/// `calculate_normal_threshold`: `2 * fls(ncpus) * (1 + fls(present /
/// 128 MiB))`, at most 125.
pub fn normal_threshold(present_pages: u64, ncpus: usize) -> i64 {
    let fls = |x: u64| 64 - x.leading_zeros() as i64;
    let mem = present_pages >> (27 - 12);
    (2 * fls(ncpus as u64) * (1 + fls(mem))).min(125)
}

/// `calculate_pressure_threshold`: `(low - min) / ncpus`, 1 to 125.
pub fn pressure_threshold(wmark_min: u64, wmark_low: u64, ncpus: usize) -> i64 {
    (((wmark_low - wmark_min) / ncpus as u64) as i64).clamp(1, 125)
}

/// A zone's NR_FREE_PAGES counter and its CPUs' unfolded deltas.
#[derive(Debug, Clone, Default)]
pub struct FreePagesCounter {
    /// Per CPU: `vm_stat_diff[NR_FREE_PAGES]`, not yet in the counter.
    diff: Vec<i64>,
    /// Σ `diff`: the buddy lists hold this many pages more than the
    /// counter says.
    pending: i64,
    /// The CPUs' `stat_threshold` now.
    threshold: i64,
    normal_threshold: i64,
    pressure_threshold: i64,
    /// `percpu_drift_mark` (0: the zone has none).
    drift_mark: u64,
}

impl FreePagesCounter {
    /// The counter of a zone whose watermarks are set, on `profile`'s
    /// kernel: with a drift mark from 2.6.36 (`percpu_drift_mark`). At
    /// pages of `unit`, the thresholds are the 4 KiB kernel's and hold as
    /// many bytes in whole pages of the unit (at least one), so that the
    /// counter lags the buddy lists by what it would on the machine the
    /// run stands for ([`crate::mm::unit`]).
    pub fn for_zone(
        z: &super::zone::Zone,
        ncpus: usize,
        profile: &crate::kernel::KernelProfile,
        unit: super::unit::PageUnit,
    ) -> Self {
        let base = unit.base_pages();
        let marks = (z.wmark_min * base, z.wmark_low * base, z.wmark_high * base);
        let mut c = FreePagesCounter::new(
            z.present_pages * base,
            ncpus,
            marks,
            profile.percpu_drift_mark,
        );
        let to_unit = |t: i64| unit.from_base_pages(t as u64) as i64;
        c.normal_threshold = to_unit(c.normal_threshold);
        c.pressure_threshold = to_unit(c.pressure_threshold);
        c.threshold = c.normal_threshold;
        c.drift_mark = c.drift_mark.div_ceil(base);
        c
    }

    /// `refresh_zone_stat_thresholds` for a zone; `drift_safety`: the
    /// kernel has `percpu_drift_mark` (2.6.36+).
    pub fn new(
        present_pages: u64,
        ncpus: usize,
        (wmark_min, wmark_low, wmark_high): (u64, u64, u64),
        drift_safety: bool,
    ) -> Self {
        let normal = normal_threshold(present_pages, ncpus);
        let max_drift = ncpus as u64 * normal as u64;
        let drift_mark = if drift_safety && max_drift > wmark_low - wmark_min {
            wmark_high + max_drift
        } else {
            0
        };
        FreePagesCounter {
            diff: vec![0; ncpus],
            pending: 0,
            threshold: normal,
            normal_threshold: normal,
            pressure_threshold: pressure_threshold(wmark_min, wmark_low, ncpus),
            drift_mark,
        }
    }

    /// `__mod_zone_page_state(zone, NR_FREE_PAGES, delta)` on `cpu`: the
    /// CPU's delta is folded into the counter once it passes the threshold.
    #[inline]
    pub fn modify(&mut self, cpu: usize, delta: i64) {
        let Some(d) = self.diff.get_mut(cpu) else {
            return;
        };
        let x = *d + delta;
        if x > self.threshold || x < -self.threshold {
            self.pending -= *d;
            *d = 0;
        } else {
            self.pending += delta;
            *d = x;
        }
    }

    /// `refresh_cpu_vm_stats` on every CPU: all deltas folded.
    pub fn refresh(&mut self) {
        self.diff.iter_mut().for_each(|d| *d = 0);
        self.pending = 0;
    }

    /// `set_pgdat_percpu_threshold`: the pressure threshold while kswapd
    /// is awake, the normal one when it sleeps; only zones with a drift
    /// mark change.
    pub fn set_pressure(&mut self, pressure: bool) {
        if self.drift_mark > 0 {
            self.threshold = if pressure {
                self.pressure_threshold
            } else {
                self.normal_threshold
            };
        }
    }

    /// Pages the buddy lists hold beyond the counter.
    #[inline]
    pub fn pending(&self) -> i64 {
        self.pending
    }

    #[inline]
    pub fn drift_mark(&self) -> u64 {
        self.drift_mark
    }

    pub fn threshold(&self) -> i64 {
        self.threshold
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_follow_the_kernels_table() {
        // Rows of the table in calculate_normal_threshold's comment (its
        // "2-4 GB, 4 CPUs: 30" row does not follow its own formula: 3000
        // MiB is 23 units of 128 MiB, 2 * fls(4) * (1 + fls(23)) = 36).
        let mib = |m: u64| m * 256;
        assert_eq!(normal_threshold(mib(1500), 2), 20);
        assert_eq!(normal_threshold(mib(3000), 4), 36);
        assert_eq!(normal_threshold(mib(100), 16), 10);
        assert_eq!(normal_threshold(mib(12000), 1024), 125);
        // The real-3x guest: Normal 64512 pages, DMA32 438301, 2 CPUs.
        assert_eq!(normal_threshold(64512, 2), 8);
        assert_eq!(normal_threshold(438301, 2), 20);
        assert_eq!(pressure_threshold(181, 226, 2), 22);
        assert_eq!(pressure_threshold(10, 12, 4), 1);
    }

    #[test]
    fn deltas_within_the_threshold_lag_and_larger_ones_fold_at_once() {
        // 2 CPUs, threshold 8; min/low/high 181/226/271: no drift mark.
        let mut c = FreePagesCounter::new(64512, 2, (181, 226, 271), true);
        assert_eq!((c.threshold(), c.drift_mark()), (8, 0));
        c.modify(0, 5);
        c.modify(1, -3);
        assert_eq!(c.pending(), 2);
        // CPU 0 reaches 5 + 4 = 9 > 8: its whole delta is folded.
        c.modify(0, 4);
        assert_eq!(c.pending(), -3);
        // A batch of 15 folds at once (rmqueue_bulk / free_pcppages_bulk).
        c.modify(0, -15);
        assert_eq!(c.pending(), -3);
        c.refresh();
        assert_eq!(c.pending(), 0);
    }

    #[test]
    fn a_zone_whose_drift_could_hide_min_gets_a_mark_and_pressure_thresholds() {
        // DMA with 4 CPUs: threshold 4 * ... = 2 * 3 * 1 = 6, max drift 24
        // > low - min = 2: the mark is high + 24.
        let mut c = FreePagesCounter::new(3917, 4, (10, 12, 15), true);
        assert_eq!((c.threshold(), c.drift_mark()), (6, 15 + 24));
        c.set_pressure(true);
        assert_eq!(c.threshold(), 1);
        c.set_pressure(false);
        assert_eq!(c.threshold(), 6);
        // Before 2.6.36 there is no mark, and no pressure threshold.
        let mut old = FreePagesCounter::new(3917, 4, (10, 12, 15), false);
        old.set_pressure(true);
        assert_eq!((old.threshold(), old.drift_mark()), (6, 0));
    }

    #[test]
    fn the_allocator_reads_the_lagging_counter_and_kswapd_the_exact_count_below_the_mark() {
        use crate::mm::page::{list_add_tail, test_frames};
        use crate::mm::zone::Zone;
        let mut pages = test_frames(40);
        let mut z = Zone::new("DMA", "dma", 0, 3917);
        z.lowmem_reserve = vec![0];
        (z.wmark_min, z.wmark_low, z.wmark_high) = (10, 12, 15);
        z.free_counter = FreePagesCounter::new(3917, 4, (10, 12, 15), true);
        for pfn in 0..20 {
            list_add_tail(&mut pages, &mut z.free, pfn);
        }
        // CPU 3 freed 5 pages one by one (threshold 6): not yet counted.
        z.free_counter.modify(3, 5);
        assert_eq!((z.nr_free(), z.nr_free_snapshot()), (15, 20));
        // free - 2 must exceed the mark: 13 > 15 fails, 18 > 15 holds.
        assert!(!z.watermark_ok(z.wmark_high, 0));
        assert!(z.watermark_ok_safe(z.wmark_high, 0));
        // Without a drift mark kswapd reads the counter as well.
        z.free_counter = FreePagesCounter::new(3917, 4, (10, 12, 15), false);
        z.free_counter.modify(3, 5);
        assert!(!z.watermark_ok_safe(z.wmark_high, 0));
    }
}
