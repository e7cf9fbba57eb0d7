//! Per-node figures: what `/sys/devices/system/node/nodeN/{meminfo,vmstat}`
//! and the node's sections of /proc/zoneinfo show, with the node's
//! kswapd. Every node of a NUMA machine (`[[machine.node]]`), and the one
//! node of a machine whose kernel keeps its LRU lists per node (4.8+,
//! whose /proc/zoneinfo prints "per-node stats" under each node's first
//! zone); a zone-LRU kernel's one-node machine has none (its figures are
//! the machine's). The text summary shows the table on NUMA machines.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use crate::mm::vmstat::ZoneEv;
use crate::mm::MmHost;
use crate::reclaim::kswapd::Kswapd;
use crate::system::System;

use super::secs;

/// One node at the end of a run.
#[derive(Debug, Clone, Serialize)]
pub struct NodeReport {
    pub nid: usize,
    /// The node's CPUs, first and last.
    pub cpus: [usize; 2],
    /// The node's zones, as the run report's `zoneinfo` names them.
    pub zones: Vec<String>,
    pub present_pages: u64,
    /// Pages free at the end (`nr_free_pages`).
    pub nr_free_pages: u64,
    /// Page-cache pages on the node's file LRU lists at the end.
    pub nr_file_pages: u64,
    pub nr_dirty: u64,
    pub nr_writeback: u64,
    /// The buffer_head slab's pages on the node (`nr_slab_reclaimable`).
    pub nr_slab_reclaimable: u64,
    /// Event counters summed over the node's zones (`pgalloc`,
    /// `pgscan_kswapd`, `pgsteal_kswapd`, `pgscan_direct`,
    /// `pgsteal_direct`, `nr_vmscan_write`, `nr_vmscan_immediate_reclaim`).
    pub vmstat: BTreeMap<String, u64>,
    /// Seconds the node's kswapd was awake.
    pub kswapd_awake_seconds: f64,
    /// The multi-generational LRU's generations at the end, as
    /// `/sys/kernel/debug/lru_gen` lists them (MGLRU kernels only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lru_gen: Option<LruGenReport>,
}

/// A node's MGLRU generations (`lru_gen_seq_show`): the sequence numbers
/// and each live generation's pages.
#[derive(Debug, Clone, Serialize)]
pub struct LruGenReport {
    pub max_seq: u64,
    /// `min_seq[]` of anon and file pages.
    pub min_seq: [u64; 2],
    /// Each generation from the oldest live one: its sequence number and
    /// its anon and file pages.
    pub generations: Vec<[u64; 3]>,
}

/// Node `nid`'s generations, if its pages are kept in them.
fn lru_gen_report(sys: &System, nid: usize) -> Option<LruGenReport> {
    if !sys.mm().lru_gen_enabled() {
        return None;
    }
    let g = sys.mm().gen_seq(nid);
    let oldest = g.min_seq[0].min(g.min_seq[1]);
    let generations = (oldest..=g.max_seq)
        .map(|seq| {
            let pages = |kind: usize| {
                if seq >= g.min_seq[kind] {
                    sys.mm().gen_pages(nid, kind, seq)
                } else {
                    0
                }
            };
            [seq, pages(0), pages(1)]
        })
        .collect();
    Some(LruGenReport {
        max_seq: g.max_seq,
        min_seq: g.min_seq,
        generations,
    })
}

/// The node counters summed from each zone's.
const NODE_EVENTS: [(ZoneEv, &str); 7] = [
    (ZoneEv::PgAlloc, "pgalloc"),
    (ZoneEv::PgScanKswapd, "pgscan_kswapd"),
    (ZoneEv::PgStealKswapd, "pgsteal_kswapd"),
    (ZoneEv::PgScanDirect, "pgscan_direct"),
    (ZoneEv::PgStealDirect, "pgsteal_direct"),
    (ZoneEv::NrVmscanWrite, "nr_vmscan_write"),
    (
        ZoneEv::NrVmscanImmediateReclaim,
        "nr_vmscan_immediate_reclaim",
    ),
];

/// The name of zone `z` in a run report: its suffix on a one-node
/// machine (`normal`), with its node's on several (`node1_normal`).
pub fn zone_key(sys: &System, z: usize) -> String {
    let suffix = sys.mm().zone(z).suffix;
    if sys.mm().nr_nodes() == 1 {
        suffix.to_string()
    } else {
        format!("node{}_{suffix}", sys.mm().zone_node(z))
    }
}

/// Each node's report; empty for a one-node machine of a zone-LRU kernel.
pub fn node_reports(sys: &System) -> Vec<NodeReport> {
    if sys.mm().nr_nodes() == 1 && sys.mm().lru_scope() == crate::kernel::LruScope::Zone {
        return Vec::new();
    }
    (0..sys.mm().nr_nodes())
        .map(|nid| {
            let node = &sys.mm().nodes()[nid];
            let zones = node.zones.clone();
            let sum = |f: &dyn Fn(usize) -> u64| zones.clone().map(f).sum::<u64>();
            let vmstat = NODE_EVENTS
                .iter()
                .map(|&(e, name)| {
                    let total = sum(&|z| sys.mm().vmstat().zone_stat(z, e));
                    (name.to_string(), total)
                })
                .collect();
            NodeReport {
                nid,
                cpus: [node.cpus.start, node.cpus.end - 1],
                zones: zones.clone().map(|z| zone_key(sys, z)).collect(),
                present_pages: sum(&|z| sys.mm().zone(z).present_pages),
                nr_free_pages: sum(&|z| sys.mm().zone(z).nr_free()),
                nr_file_pages: sum(&|z| sys.mm().zone(z).nr_file_lru()),
                nr_dirty: sum(&|z| sys.mm().zone(z).nr_dirty),
                nr_writeback: sum(&|z| sys.mm().zone(z).nr_writeback),
                nr_slab_reclaimable: sum(&|z| sys.mm().zone(z).nr_slab_reclaimable),
                vmstat,
                kswapd_awake_seconds: secs(sys.kswapd_awake_node_ns(nid)),
                lru_gen: lru_gen_report(sys, nid),
            }
        })
        .collect()
}

/// The text summary's table of nodes (nothing on a one-node machine).
pub fn format_nodes(s: &mut String, seed: u64, nodes: &[NodeReport]) {
    if nodes.len() < 2 {
        return;
    }
    let _ = writeln!(
        s,
        "\nnodes (seed {seed}; pages; kswapd_s: seconds its kswapd was awake):\n  {:<5} {:>6} \
         {:>10} {:>10} {:>10} {:>14} {:>14} {:>10}",
        "node", "cpus", "present", "free", "file", "pgalloc", "pgsteal_kswapd", "kswapd_s"
    );
    for n in nodes {
        let v = |k: &str| n.vmstat.get(k).copied().unwrap_or(0);
        let _ = writeln!(
            s,
            "  {:<5} {:>6} {:>10} {:>10} {:>10} {:>14} {:>14} {:>10.3}",
            n.nid,
            format!("{}-{}", n.cpus[0], n.cpus[1]),
            n.present_pages,
            n.nr_free_pages,
            n.nr_file_pages,
            v("pgalloc"),
            v("pgsteal_kswapd"),
            n.kswapd_awake_seconds
        );
    }
}
