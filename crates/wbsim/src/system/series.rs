//! Time series of per-zone page state, sampled over simulated time: what a
//! developer would get by reading `/proc/zoneinfo` every few hundred
//! milliseconds during the run (`nr_free_pages`, `nr_inactive_file`,
//! `nr_active_file`, `nr_dirty`, `nr_writeback`, `nr_slab_reclaimable`),
//! plus whether kswapd was
//! awake and each zone's per-zone dirty limit (`zone_dirty_limit`, 3.3+)
//! at that instant.

use std::collections::BTreeMap;

use serde::Serialize;

/// One zone's page counts at one sample instant.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq)]
pub struct ZoneSample {
    pub free_pages: u64,
    pub inactive_file_pages: u64,
    pub active_file_pages: u64,
    pub dirty_pages: u64,
    pub writeback_pages: u64,
    /// The zone's share of the global dirty limit (`zone_dirty_limit`),
    /// computed whatever the kernel's dirty-limit scope, so that vanilla
    /// runs can be judged against the share they would have had.
    pub dirty_limit_pages: u64,
    /// `nr_slab_reclaimable`: the zone's pages in reclaimable slab caches
    /// (the model has the buffer_head cache).
    pub slab_reclaimable_pages: u64,
}

/// One device's dirty-limit share at one sample instant
/// (`bdi_writeout_fraction`, `bdi_dirty_limit`; what
/// `/sys/kernel/debug/bdi/*/stats` shows as BdiDirtyThresh).
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq)]
pub struct BdiSample {
    /// Fraction of recent writeback completions (0..1).
    pub share: f64,
    /// The device's dirty threshold (no task limit applied).
    pub thresh_pages: u64,
    pub reclaimable_pages: u64,
    pub writeback_pages: u64,
    /// Pages whose writeback completed since boot.
    pub written_pages: u64,
}

/// The machine at one instant.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Sample {
    pub time_ns: u64,
    /// kswapd was awake (balancing, or napping between balancing runs).
    pub kswapd_awake: bool,
    /// One entry per zone, in `Series::zone_names` order.
    pub zones: Vec<ZoneSample>,
    /// One entry per device, in `Series::bdi_names` order.
    pub bdis: Vec<BdiSample>,
}

/// The zone a 4.8+ kernel's per-node dirty and writeback pages are shown
/// on in a sample: the one holding the most file pages (inactive and
/// active), the highest such zone on a tie.
pub fn node_dirty_zone(zones: &[ZoneSample]) -> Option<usize> {
    let file = |z: &ZoneSample| z.inactive_file_pages + z.active_file_pages;
    (0..zones.len()).max_by_key(|&i| (file(&zones[i]), i))
}

/// Samples of one run, in time order, every `interval_ns`.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Series {
    /// Zone names, lowest first (`DMA`, `DMA32`, `Normal`).
    pub zone_names: Vec<String>,
    /// Backing devices (flusher names without `flush-`).
    pub bdi_names: Vec<String>,
    pub interval_ns: u64,
    pub samples: Vec<Sample>,
    /// When the first workload task exited (the run waits for every
    /// workload task; memtouch is not one), on the samples' clock; `None`
    /// if none did. Ends the steady window of `stats`.
    pub first_workload_exit_ns: Option<u64>,
    /// The kernel counts dirty and writeback pages per node only (4.8+
    /// zoneinfo): each sample puts the node's on the zone holding the
    /// most file pages, the others 0 (a real guest's series;
    /// [`Series::dirty_per_node`] makes the model's look the same).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub dirty_per_node: bool,
}

impl Series {
    /// Page counts in 4 KiB pages, for a run at a unit of `base_pages` of
    /// them ([`crate::mm::unit`]); shares and times as they are.
    pub fn to_base_pages(&mut self, base_pages: u64) {
        for sample in self.samples.iter_mut() {
            for z in sample.zones.iter_mut() {
                for v in [
                    &mut z.free_pages,
                    &mut z.inactive_file_pages,
                    &mut z.active_file_pages,
                    &mut z.dirty_pages,
                    &mut z.writeback_pages,
                    &mut z.dirty_limit_pages,
                    &mut z.slab_reclaimable_pages,
                ] {
                    *v *= base_pages;
                }
            }
            for b in sample.bdis.iter_mut() {
                for v in [
                    &mut b.thresh_pages,
                    &mut b.reclaimable_pages,
                    &mut b.writeback_pages,
                    &mut b.written_pages,
                ] {
                    *v *= base_pages;
                }
            }
        }
    }

    /// This series as a 4.8+ kernel's zoneinfo would show it: in each
    /// sample, the zones' dirty and writeback pages summed onto the zone
    /// with the most file pages (inactive and active; the highest such
    /// zone on a tie), the other zones 0; and `stats` read from that.
    pub fn dirty_per_node(&self) -> Series {
        let mut folded = self.clone();
        folded.dirty_per_node = true;
        for sample in &mut folded.samples {
            let zones = &mut sample.zones;
            let Some(biggest) = node_dirty_zone(zones) else {
                continue;
            };
            let dirty = zones.iter().map(|z| z.dirty_pages).sum();
            let writeback = zones.iter().map(|z| z.writeback_pages).sum();
            for z in zones.iter_mut() {
                (z.dirty_pages, z.writeback_pages) = (0, 0);
            }
            (zones[biggest].dirty_pages, zones[biggest].writeback_pages) = (dirty, writeback);
        }
        folded
    }

    /// CSV, one row per sample and zone, with a `kernel` column so that
    /// runs of several kernels can share one file. Header:
    /// `kernel,seed,time_s,zone,free_pages,inactive_file_pages,
    /// active_file_pages,dirty_pages,writeback_pages,dirty_limit_pages,
    /// slab_reclaimable_pages,kswapd_awake`.
    pub fn write_csv_rows(&self, kernel: &str, seed: u64, out: &mut String) {
        use std::fmt::Write as _;
        for s in &self.samples {
            for (name, z) in self.zone_names.iter().zip(&s.zones) {
                let _ = writeln!(
                    out,
                    "{kernel},{seed},{:.3},{name},{},{},{},{},{},{},{},{}",
                    s.time_ns as f64 / 1e9,
                    z.free_pages,
                    z.inactive_file_pages,
                    z.active_file_pages,
                    z.dirty_pages,
                    z.writeback_pages,
                    z.dirty_limit_pages,
                    z.slab_reclaimable_pages,
                    u8::from(s.kswapd_awake)
                );
            }
        }
    }

    /// CSV rows of the per-device shares. Header: `BDI_CSV_HEADER`.
    pub fn write_bdi_csv_rows(&self, kernel: &str, seed: u64, out: &mut String) {
        use std::fmt::Write as _;
        for s in &self.samples {
            for (name, b) in self.bdi_names.iter().zip(&s.bdis) {
                let _ = writeln!(
                    out,
                    "{kernel},{seed},{:.3},{name},{:.6},{},{},{},{}",
                    s.time_ns as f64 / 1e9,
                    b.share,
                    b.thresh_pages,
                    b.reclaimable_pages,
                    b.writeback_pages,
                    b.written_pages
                );
            }
        }
    }

    pub const BDI_CSV_HEADER: &'static str =
        "kernel,seed,time_s,bdi,share,thresh_pages,reclaimable_pages,writeback_pages,written_pages";

    /// How long a device took to earn its share: from the last sample
    /// before its first completion to the first sample at which its share
    /// is at least 90 % of its share at the end of the run, in seconds and
    /// in pages the device wrote meanwhile. `None` if it never wrote.
    pub fn share_ramp(&self, bdi: usize) -> Option<(f64, u64)> {
        let written = |i: usize| self.samples[i].bdis[bdi].written_pages;
        self.samples.first()?;
        let start = (1..self.samples.len()).find(|&i| written(i) > written(0))? - 1;
        let target = 0.9 * self.samples.last()?.bdis[bdi].share;
        let reach =
            (start..self.samples.len()).find(|&i| self.samples[i].bdis[bdi].share >= target)?;
        let secs = (self.samples[reach].time_ns - self.samples[start].time_ns) as f64 / 1e9;
        Some((secs, written(reach) - written(start)))
    }

    /// Summary figures of the series, by name:
    /// * `<zone>.dirty_of_inactive_kswapd`, `all.dirty_of_inactive_kswapd`:
    ///   median, over the samples taken while kswapd was awake, of dirty
    ///   pages as a fraction of inactive file pages (the zone's, or the
    ///   machine's) — the figures of seed 003's `reclaim:` trace lines (a sample-based stand-in for them);
    /// * `<zone>.max_dirty_over_limit`: the largest ratio of the zone's
    ///   dirty and writeback pages to its per-zone dirty limit, and
    ///   `all.max_dirty_over_limit` the largest of those;
    /// * `<zone>.dirty_of_inactive_steady`: median of the zone's dirty
    ///   pages over its inactive file pages in the steady state, the samples
    ///   from the first one that finds kswapd awake up to the exit of the
    ///   first workload task (`first_workload_exit_ns`; the last sample
    ///   if none exited), kswapd awake or not — the window the real
    ///   runs' analysis takes (kernel-lab `analyze.py`: from the first
    ///   `mm_vmscan_kswapd_wake` to the end of dd);
    /// * `kswapd_samples`: how many samples found kswapd awake;
    /// * `<bdi>.share_90_seconds`, `<bdi>.share_90_pages`: see `share_ramp`.
    pub fn stats(&self) -> BTreeMap<String, f64> {
        let mut out = BTreeMap::new();
        for (b, name) in self.bdi_names.iter().enumerate() {
            if let Some((secs, pages)) = self.share_ramp(b) {
                out.insert(format!("{name}.share_90_seconds"), secs);
                out.insert(format!("{name}.share_90_pages"), pages as f64);
            }
        }
        let awake: Vec<&Sample> = self.samples.iter().filter(|s| s.kswapd_awake).collect();
        out.insert("kswapd_samples".to_string(), awake.len() as f64);
        let fraction =
            |dirty: u64, inactive: u64| (inactive > 0).then(|| dirty as f64 / inactive as f64);
        let steady = self.steady_samples();
        for (i, name) in self.zone_names.iter().enumerate() {
            let fractions = awake
                .iter()
                .filter_map(|s| fraction(s.zones[i].dirty_pages, s.zones[i].inactive_file_pages));
            if let Some(m) = median(fractions.collect()) {
                out.insert(format!("{name}.dirty_of_inactive_kswapd"), m);
            }
            let fractions = steady
                .iter()
                .filter_map(|s| fraction(s.zones[i].dirty_pages, s.zones[i].inactive_file_pages));
            if let Some(m) = median(fractions.collect()) {
                out.insert(format!("{name}.dirty_of_inactive_steady"), m);
            }
            let over = self
                .samples
                .iter()
                .map(|s| &s.zones[i])
                .filter(|z| z.dirty_limit_pages > 0)
                .map(|z| (z.dirty_pages + z.writeback_pages) as f64 / z.dirty_limit_pages as f64)
                .reduce(f64::max);
            if let Some(m) = over {
                out.insert(format!("{name}.max_dirty_over_limit"), m);
            }
        }
        let worst = self
            .zone_names
            .iter()
            .filter_map(|n| out.get(&format!("{n}.max_dirty_over_limit")).copied())
            .reduce(f64::max);
        if let Some(m) = worst {
            out.insert("all.max_dirty_over_limit".to_string(), m);
        }
        let global = awake.iter().filter_map(|s| {
            let dirty = s.zones.iter().map(|z| z.dirty_pages).sum();
            fraction(dirty, s.zones.iter().map(|z| z.inactive_file_pages).sum())
        });
        if let Some(m) = median(global.collect()) {
            out.insert("all.dirty_of_inactive_kswapd".to_string(), m);
        }
        out
    }

    /// The steady state: from the first sample with kswapd awake to the
    /// last one at or before `first_workload_exit_ns`.
    pub fn steady_samples(&self) -> &[Sample] {
        let Some(start) = self.samples.iter().position(|s| s.kswapd_awake) else {
            return &[];
        };
        let end = self.first_workload_exit_ns.unwrap_or(u64::MAX);
        let n = self.samples[start..]
            .iter()
            .take_while(|s| s.time_ns <= end)
            .count();
        &self.samples[start..start + n]
    }

    pub const CSV_HEADER: &'static str = "kernel,seed,time_s,zone,free_pages,inactive_file_pages,active_file_pages,dirty_pages,writeback_pages,dirty_limit_pages,slab_reclaimable_pages,kswapd_awake";
}

/// The median of `xs` (mean of the middle two for an even count).
pub fn median(mut xs: Vec<f64>) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    xs.sort_by(|a, b| a.total_cmp(b));
    let n = xs.len();
    Some(if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zone(inactive: u64, dirty: u64, limit: u64) -> ZoneSample {
        ZoneSample {
            inactive_file_pages: inactive,
            dirty_pages: dirty,
            dirty_limit_pages: limit,
            ..ZoneSample::default()
        }
    }

    #[test]
    fn stats_use_only_kswapd_samples_for_fractions() {
        let series = Series {
            zone_names: vec!["DMA32".into(), "Normal".into()],
            bdi_names: vec![],
            interval_ns: 1,
            first_workload_exit_ns: None,
            dirty_per_node: false,
            samples: vec![
                Sample {
                    time_ns: 0,
                    kswapd_awake: false,
                    zones: vec![zone(100, 100, 10), zone(10, 10, 5)],
                    bdis: vec![],
                },
                Sample {
                    time_ns: 1,
                    kswapd_awake: true,
                    zones: vec![zone(100, 10, 20), zone(10, 6, 5)],
                    bdis: vec![],
                },
                Sample {
                    time_ns: 2,
                    kswapd_awake: true,
                    zones: vec![zone(100, 20, 20), zone(10, 8, 5)],
                    bdis: vec![],
                },
            ],
        };
        let st = series.stats();
        assert_eq!(st["kswapd_samples"], 2.0);
        assert!((st["Normal.dirty_of_inactive_kswapd"] - 0.7).abs() < 1e-12);
        assert!((st["DMA32.dirty_of_inactive_kswapd"] - 0.15).abs() < 1e-12);
        assert!(
            (st["all.dirty_of_inactive_kswapd"] - (16.0 / 110.0 + 28.0 / 110.0) / 2.0).abs()
                < 1e-12
        );
        assert_eq!(st["DMA32.max_dirty_over_limit"], 10.0);
        assert_eq!(st["Normal.max_dirty_over_limit"], 2.0);
        assert_eq!(st["all.max_dirty_over_limit"], 10.0);
    }

    /// The steady window starts at the first sample with kswapd awake and
    /// ends at the first workload exit; samples inside it count whether
    /// kswapd is awake or not.
    #[test]
    fn steady_fraction_from_first_kswapd_sample_to_first_exit() {
        // (time, kswapd awake, Normal inactive, Normal dirty)
        let rows = [
            (0, false, 100, 90),
            (1, true, 100, 10),
            (2, false, 100, 30),
            (3, true, 100, 20),
            (4, true, 100, 80),
            (5, false, 0, 5),
            (6, true, 100, 70),
        ];
        let mut series = Series {
            zone_names: vec!["Normal".into()],
            samples: rows
                .iter()
                .map(|&(t, awake, inactive, dirty)| Sample {
                    time_ns: t,
                    kswapd_awake: awake,
                    zones: vec![zone(inactive, dirty, 0)],
                    bdis: vec![],
                })
                .collect(),
            first_workload_exit_ns: Some(4),
            dirty_per_node: false,
            ..Series::default()
        };
        // Samples 1..=4: 0.1, 0.3, 0.2, 0.8.
        assert_eq!(series.steady_samples().len(), 4);
        let st = series.stats();
        assert!((st["Normal.dirty_of_inactive_steady"] - 0.25).abs() < 1e-12);
        // No exit: to the last sample (0.7 joins; the empty zone is skipped).
        series.first_workload_exit_ns = None;
        let st = series.stats();
        assert!((st["Normal.dirty_of_inactive_steady"] - 0.3).abs() < 1e-12);
        // kswapd never awake: no steady state, no figure.
        for s in &mut series.samples {
            s.kswapd_awake = false;
        }
        assert!(series.steady_samples().is_empty());
        assert!(!series
            .stats()
            .contains_key("Normal.dirty_of_inactive_steady"));
    }

    #[test]
    fn median_of_odd_even_and_empty() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(vec![]), None);
    }

    /// The ramp runs from the last sample before the device's first
    /// completion to the first at 90 % of its final share.
    #[test]
    fn share_ramp_from_first_completion_to_ninety_percent() {
        let b = |share: f64, written: u64| BdiSample {
            share,
            written_pages: written,
            ..BdiSample::default()
        };
        let shares = [
            (0.0, 0),
            (0.0, 0),
            (0.2, 100),
            (0.5, 300),
            (0.91, 700),
            (1.0, 900),
        ];
        let series = Series {
            bdi_names: vec!["sdb".into()],
            interval_ns: 1_000_000_000,
            samples: shares
                .iter()
                .enumerate()
                .map(|(i, &(sh, w))| Sample {
                    time_ns: i as u64 * 1_000_000_000,
                    bdis: vec![b(sh, w)],
                    ..Sample::default()
                })
                .collect(),
            ..Series::default()
        };
        assert_eq!(series.share_ramp(0), Some((3.0, 700)));
        let st = series.stats();
        assert_eq!(st["sdb.share_90_seconds"], 3.0);
        assert_eq!(st["sdb.share_90_pages"], 700.0);
    }
}
