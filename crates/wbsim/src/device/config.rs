//! A block device as a scenario describes it.

use serde::Serialize;

/// A block-device performance model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum DeviceModel {
    #[serde(rename = "usb-stick")]
    UsbStick,
    /// A rotating disk (same service model, seek penalty).
    #[serde(rename = "disk")]
    Disk,
    /// An SSD with command queueing and internal parallelism.
    #[serde(rename = "ssd")]
    Ssd,
    /// md RAID0 striping over member devices.
    #[serde(rename = "raid0")]
    Raid0,
}

/// A block device.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeviceConfig {
    pub name: String,
    pub model: DeviceModel,
    pub capacity_gib: u64,
    pub seq_write_mib_per_s: f64,
    pub max_request_kib: u32,
    pub command_overhead_us: f64,
    pub small_write_penalty_us: f64,
    pub nr_requests: u32,
    /// nr_requests when the disk was registered, which wbt sizes its
    /// limits from (`boot_nr_requests`; nr_requests when not given).
    pub boot_nr_requests: u32,
    /// blk-mq hardware queues, each with nr_requests tags.
    pub hw_queues: u32,
    /// How long before the workload starts the disk was registered
    /// (`wb_init` sets `last_old_flush`), in ms.
    pub registered_before_start_ms: u64,
    /// Commands in flight at once (ssd; 1 for the serial models).
    pub queue_depth: u32,
    /// Flash channels working in parallel (ssd).
    pub channels: u32,
    /// raid0: member device names, in array order.
    pub members: Vec<String>,
    /// raid0: chunk size.
    pub chunk_kib: u32,
}
