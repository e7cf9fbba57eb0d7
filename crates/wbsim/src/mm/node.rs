//! NUMA nodes (`pg_data_t`): which zones and CPUs each node has, the
//! node's LRU lists (4.8+) and reclaim wait queue (5.16+), and the
//! zonelist an allocation on the node walks (`build_zonelists`, node
//! order: the node's own zones from the highest down, then each other
//! node's in turn, from the next node on, as `find_next_best_node` picks
//! them when every distance is the same). A one-node machine has node 0
//! with every zone and CPU.

use std::ops::Range;

use super::lruvec::Lruvec;
use super::reclaim_wait::ReclaimWait;

/// One node's memory.
#[derive(Debug, Clone)]
pub struct MemNode {
    /// The node's zones (indexes into the machine's zones, ascending).
    pub zones: Range<usize>,
    /// The node's CPUs.
    pub cpus: Range<usize>,
    /// The node's LRU lists when the node owns them (4.8+).
    pub lruvec: Lruvec,
    /// Reclaimers throttled until writeback completes (5.16+).
    pub reclaim_wait: ReclaimWait,
    /// The zones an allocation on this node tries, in order.
    pub zonelist: Vec<usize>,
}

/// The nodes of a machine: `(cpus, zones)` of each, in order.
pub fn build_nodes(layout: &[(usize, usize)]) -> Vec<MemNode> {
    let (mut cpu, mut zone) = (0, 0);
    let mut nodes: Vec<MemNode> = layout
        .iter()
        .map(|&(cpus, zones)| {
            let n = MemNode {
                zones: zone..zone + zones,
                cpus: cpu..cpu + cpus,
                lruvec: Lruvec::default(),
                reclaim_wait: ReclaimWait::default(),
                zonelist: Vec::new(),
            };
            cpu += cpus;
            zone += zones;
            n
        })
        .collect();
    let nr = nodes.len();
    for nid in 0..nr {
        let zonelist = (0..nr)
            .map(|i| (nid + i) % nr)
            .flat_map(|n| nodes[n].zones.clone().rev())
            .collect();
        nodes[nid].zonelist = zonelist;
    }
    nodes
}

/// The node of each zone.
pub fn zone_nodes(nodes: &[MemNode]) -> Vec<usize> {
    nodes
        .iter()
        .enumerate()
        .flat_map(|(nid, n)| n.zones.clone().map(move |_| nid))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two nodes: node 0 with DMA, DMA32 and Normal, node 1 with Normal.
    /// Node 1's allocations try its Normal first, then node 0's zones
    /// from the top; node 0's fall back to node 1 last.
    #[test]
    fn zonelists_take_the_local_node_first() {
        let nodes = build_nodes(&[(2, 3), (2, 1)]);
        assert_eq!(nodes[0].zonelist, vec![2, 1, 0, 3]);
        assert_eq!(nodes[1].zonelist, vec![3, 2, 1, 0]);
        assert_eq!(
            (nodes[1].cpus.clone(), nodes[1].zones.clone()),
            (2..4, 3..4)
        );
        assert_eq!(zone_nodes(&nodes), vec![0, 0, 0, 1]);
    }

    /// Three nodes: each falls back to the next node first.
    #[test]
    fn zonelists_go_round_the_other_nodes() {
        let nodes = build_nodes(&[(1, 1), (1, 1), (1, 1)]);
        assert_eq!(nodes[1].zonelist, vec![1, 2, 0]);
        assert_eq!(nodes[2].zonelist, vec![2, 0, 1]);
    }
}
