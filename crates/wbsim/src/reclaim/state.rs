//! [`Reclaim`]: the state page reclaim owns (kswapd's, and the buffer
//! of isolated pages). Fields are private to `reclaim/`.

use super::dirty_pages::DirtyPagePolicy;
use super::kswapd::KswapdState;
use super::node::{NodePolicy, NodeState};
use crate::kernel::KernelProfile;
use crate::sim::Ns;

pub struct Reclaim {
    /// Each node's kswapd's balancing state.
    pub(super) kswapd: Vec<KswapdState>,
    /// Time each node's kswapd spent awake in finished awake periods.
    pub(super) kswapd_awake_ns: Vec<Ns>,
    /// Reusable buffer for pages isolated by reclaim (no allocation per
    /// batch).
    pub(super) isolate_buf: Vec<u32>,
    /// Reusable buffer for the pages `isolate_lru_folios` skips.
    pub(super) skip_buf: Vec<u32>,
    /// What reclaim does with dirty file pages (chosen at build).
    pub(super) dirty_pages: DirtyPagePolicy,
    /// Node-based reclaim's rules (chosen at build) and each node's flags.
    pub(super) node_policy: NodePolicy,
    pub(super) node: Vec<NodeState>,
}

impl Reclaim {
    /// Reclaim of a machine of `nr_nodes` nodes built with `profile`.
    pub fn new(profile: &KernelProfile, nr_nodes: usize) -> Reclaim {
        Reclaim {
            kswapd: (0..nr_nodes)
                .map(|nid| KswapdState {
                    nid,
                    // kswapd() starts at MAX_NR_ZONES - 1: the node's top.
                    highest_zone: usize::MAX,
                    ..Default::default()
                })
                .collect(),
            kswapd_awake_ns: vec![0; nr_nodes],
            isolate_buf: Vec::with_capacity(64),
            skip_buf: Vec::new(),
            dirty_pages: DirtyPagePolicy::from_profile(profile),
            node_policy: NodePolicy::from_profile(profile),
            node: vec![NodeState::default(); nr_nodes],
        }
    }

    /// `wakeup_kswapd`'s request: node `nid`'s pending
    /// `kswapd_highest_zoneidx` is raised to zone `z` (set if kswapd has
    /// read it since), never lowered.
    pub fn raise_kswapd_zone(&mut self, nid: usize, z: usize) {
        let pending = &mut self.node[nid].pending_zone;
        if pending.is_none_or(|p| p < z) {
            *pending = Some(z);
        }
    }
}
