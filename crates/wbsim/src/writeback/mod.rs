//! Page-cache writeback: dirty limits, per-device proportions, dirty
//! throttling, flusher threads and the per-inode writeback walk.

pub mod account;
pub mod bdi;
pub mod flex_proportions;
pub mod flusher;
pub mod ioless;
pub mod ioless_throttle;
pub mod limits;
pub mod pass;
pub mod proportions;
pub mod sync;
pub mod throttle;
