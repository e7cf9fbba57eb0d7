//! [`Reclaim`]: the state page reclaim owns (kswapd's, and the buffer
//! of isolated pages). Fields are private to `reclaim/`.

use super::kswapd::KswapdState;
use crate::sim::Ns;

pub struct Reclaim {
    /// kswapd0's balancing state.
    pub(super) kswapd: KswapdState,
    /// Time kswapd spent awake in finished awake periods.
    pub(super) kswapd_awake_ns: Ns,
    /// Reusable buffer for pages isolated by reclaim (no allocation per
    /// batch).
    pub(super) isolate_buf: Vec<u32>,
}

impl Reclaim {
    pub fn new() -> Reclaim {
        Reclaim {
            kswapd: KswapdState::default(),
            kswapd_awake_ns: 0,
            isolate_buf: Vec::with_capacity(64),
        }
    }
}

impl Default for Reclaim {
    fn default() -> Self {
        Self::new()
    }
}
