//! [`Reclaim`]: the state page reclaim owns (kswapd's, and the buffer
//! of isolated pages). Fields are private to `reclaim/`.

use super::dirty_pages::DirtyPagePolicy;
use super::kswapd::KswapdState;
use super::node::{NodePolicy, NodeState};
use crate::kernel::KernelProfile;
use crate::sim::Ns;

pub struct Reclaim {
    /// kswapd0's balancing state.
    pub(super) kswapd: KswapdState,
    /// Time kswapd spent awake in finished awake periods.
    pub(super) kswapd_awake_ns: Ns,
    /// Reusable buffer for pages isolated by reclaim (no allocation per
    /// batch).
    pub(super) isolate_buf: Vec<u32>,
    /// What reclaim does with dirty file pages (chosen at build).
    pub(super) dirty_pages: DirtyPagePolicy,
    /// Node-based reclaim's rules (chosen at build) and the node's flags.
    pub(super) node_policy: NodePolicy,
    pub(super) node: NodeState,
}

impl Reclaim {
    /// Reclaim of a machine built with `profile`.
    pub fn new(profile: &KernelProfile) -> Reclaim {
        Reclaim {
            kswapd: KswapdState::default(),
            kswapd_awake_ns: 0,
            isolate_buf: Vec::with_capacity(64),
            dirty_pages: DirtyPagePolicy::from_profile(profile),
            node_policy: NodePolicy::from_profile(profile),
            node: NodeState::default(),
        }
    }
}
