//! The guest's periodic /proc/zoneinfo samples as a `Series`.

use wbsim::report::series::{Sample, Series, ZoneSample};

use super::trace::KswapdAwake;
use crate::procfs::{NodeInfo, ZoneInfo};

/// A zone counter under its 3.x name (`nr_inactive_file`) or, failing
/// that, its 4.8+ per-zone name (`nr_zone_inactive_file`).
fn zone_counter(z: &ZoneInfo, name: &str) -> u64 {
    let v = z
        .stats
        .get(name)
        .or_else(|| z.stats.get(&name.replacen("nr_", "nr_zone_", 1)));
    v.copied().unwrap_or(0).max(0) as u64
}

/// One sample of the zones named `zone_names` (zones the sample lacks
/// are all 0).
///
/// Per zone: `free_pages` (`pages free`), `inactive_file_pages`,
/// `active_file_pages` (3.x `nr_inactive_file`/`nr_active_file`, 4.8+
/// `nr_zone_inactive_file`/`nr_zone_active_file`), `dirty_pages`,
/// `writeback_pages` (3.x: the zone's `nr_dirty`/`nr_writeback`).
///
/// 4.8+ kernels count dirty and writeback pages only per node (the
/// `per-node stats` block; the zones print only their sum,
/// `nr_zone_write_pending`): there the node's `nr_dirty` and
/// `nr_writeback` go to the zone that holds the most file pages
/// (inactive and active) at that sample, and the other zones get 0. On a guest whose
/// page cache sits in one big zone this is close; a split between zones
/// is not visible.
///
/// `dirty_limit_pages` is 0: the kernel does not print a per-zone dirty
/// limit (3.3+ computes `zone_dirty_limit()` on the fly).
/// `slab_reclaimable_pages` is the zone's `nr_slab_reclaimable`, 0 where
/// the kernel counts slab per node only (4.14+).
pub fn zone_samples(node: &NodeInfo, zone_names: &[String]) -> Vec<ZoneSample> {
    let mut out: Vec<ZoneSample> = zone_names
        .iter()
        .map(|name| match node.zone(name) {
            Some(z) => ZoneSample {
                free_pages: z.free_pages,
                inactive_file_pages: zone_counter(z, "nr_inactive_file"),
                active_file_pages: zone_counter(z, "nr_active_file"),
                dirty_pages: z.stat("nr_dirty").max(0) as u64,
                writeback_pages: z.stat("nr_writeback").max(0) as u64,
                dirty_limit_pages: 0,
                slab_reclaimable_pages: z.stat("nr_slab_reclaimable").max(0) as u64,
            },
            None => ZoneSample::default(),
        })
        .collect();
    if dirty_per_node(node) {
        if let Some(i) = wbsim::report::series::node_dirty_zone(&out) {
            let node_stat = |k: &str| node.node_stats.get(k).copied().unwrap_or(0).max(0) as u64;
            out[i].dirty_pages = node_stat("nr_dirty");
            out[i].writeback_pages = node_stat("nr_writeback");
        }
    }
    out
}

/// Does the kernel count dirty and writeback pages per node only (4.8+:
/// no zone prints `nr_dirty`, the node does)?
fn dirty_per_node(node: &NodeInfo) -> bool {
    node.zones.iter().all(|z| !z.stats.contains_key("nr_dirty"))
        && node.node_stats.contains_key("nr_dirty")
}

/// The series of `samples` ((records' clock ns, zoneinfo) in time
/// order): samples before `start_ns` are dropped, times are from
/// `start_ns`, `kswapd_awake` is read from the trace's awake intervals;
/// `first_exit_ns` (records' clock) is when the first workload task
/// ended. No devices (`bdi_names` empty: the kernel's per-device dirty
/// limits are in debugfs, which the guest does not sample).
pub fn build_series(
    samples: &[(u64, NodeInfo)],
    zone_names: &[String],
    interval_ns: u64,
    start_ns: u64,
    first_exit_ns: Option<u64>,
    kswapd: &KswapdAwake,
) -> Series {
    Series {
        dirty_per_node: samples.iter().any(|(_, node)| dirty_per_node(node)),
        first_workload_exit_ns: first_exit_ns.map(|t| t.saturating_sub(start_ns)),
        zone_names: zone_names.to_vec(),
        bdi_names: Vec::new(),
        interval_ns,
        samples: samples
            .iter()
            .filter(|(t, _)| *t >= start_ns)
            .map(|(t, node)| Sample {
                time_ns: t - start_ns,
                kswapd_awake: kswapd.awake_at(*t),
                zones: zone_samples(node, zone_names),
                bdis: Vec::new(),
            })
            .collect(),
    }
}
