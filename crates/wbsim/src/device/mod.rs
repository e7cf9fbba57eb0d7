//! Device models: how long the device takes to service a request.
//!
//! Both models are one device serving one command at a time (`SerialDevice`):
//! a sequential bandwidth, a fixed per-command overhead, and a penalty when
//! an IO does not continue where the previous one ended.
//!
//! - `disk`: a 2011 SATA disk without command queueing modelled; the penalty
//!   is an average seek plus half a rotation.
//! - `usb-stick`: USB thumb drive (usb-storage over USB 2.0, 2011): one
//!   outstanding command (the Bulk-Only Transport has no command
//!   queueing), requests of at most
//!   `max_request_kib` (usb-storage sets `max_sectors` = 240, i.e. 120 KiB),
//!   a sequential write bandwidth, a fixed per-command overhead, and a penalty
//!   when a write does not continue where the previous one ended: cheap flash
//!   translation layers then do a read-modify-write of a whole erase block.

use rand::Rng;
use rand_pcg::Pcg64Mcg;

use crate::block::SECTOR_BYTES;
use crate::scenario::DeviceConfig;
use crate::sim::{Ns, NS_PER_SEC, NS_PER_US};

#[derive(Debug, Clone)]
pub struct SerialDevice {
    /// Sequential write bandwidth in bytes per second.
    pub seq_write_bytes_per_s: f64,
    pub command_overhead_ns: Ns,
    pub small_write_penalty_ns: Ns,
    pub capacity_sectors: u64,
    /// Sector after the last written one (sequentiality detector).
    last_end_sector: u64,
    pub busy: bool,
    pub stats: DeviceStats,
    /// Service-time variation: flash controllers' write latency varies with
    /// internal garbage collection; the model draws each request's transfer
    /// time uniformly within ±`JITTER` of nominal from the device's own
    /// random stream (an order-of-magnitude input, not fitted).
    rng: Pcg64Mcg,
}

/// Relative half-width of the per-request transfer-time variation.
pub const JITTER: f64 = 0.05;

#[derive(Debug, Clone, Default)]
pub struct DeviceStats {
    pub read_requests: u64,
    pub read_bytes: u64,
    pub write_requests: u64,
    pub write_bytes: u64,
    pub sequential_requests: u64,
    pub busy_ns: Ns,
    pub max_request_bytes: u64,
}

impl SerialDevice {
    pub fn new(cfg: &DeviceConfig, rng: Pcg64Mcg) -> SerialDevice {
        SerialDevice {
            seq_write_bytes_per_s: cfg.seq_write_mib_per_s * 1024.0 * 1024.0,
            command_overhead_ns: (cfg.command_overhead_us * NS_PER_US as f64) as Ns,
            small_write_penalty_ns: (cfg.small_write_penalty_us * NS_PER_US as f64) as Ns,
            capacity_sectors: cfg.capacity_gib * (1 << 30) / SECTOR_BYTES,
            last_end_sector: 0,
            busy: false,
            stats: DeviceStats::default(),
            rng,
        }
    }

    /// Service time of a write of `nr_sectors` at `start_sector`; updates the
    /// sequentiality state and statistics.
    pub fn service_write(&mut self, start_sector: u64, nr_sectors: u64) -> Ns {
        self.service(start_sector, nr_sectors, false)
    }

    /// Service time of a request in either direction; reads run at the
    /// same bandwidth as writes (an input the scenario does not separate).
    pub fn service(&mut self, start_sector: u64, nr_sectors: u64, read: bool) -> Ns {
        let bytes = nr_sectors * SECTOR_BYTES;
        let factor = 1.0 + self.rng.gen_range(-JITTER..=JITTER);
        let transfer =
            (bytes as f64 / self.seq_write_bytes_per_s * NS_PER_SEC as f64 * factor) as Ns;
        let sequential = start_sector == self.last_end_sector;
        let penalty = if sequential {
            0
        } else {
            self.small_write_penalty_ns
        };
        self.last_end_sector = start_sector + nr_sectors;
        let t = self.command_overhead_ns + transfer + penalty;
        self.stats.busy_ns += t;
        if read {
            self.stats.read_requests += 1;
            self.stats.read_bytes += bytes;
            return t;
        }
        self.stats.write_requests += 1;
        self.stats.write_bytes += bytes;
        self.stats.max_request_bytes = self.stats.max_request_bytes.max(bytes);
        self.stats.sequential_requests += sequential as u64;
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::DeviceModel;

    fn cfg() -> DeviceConfig {
        DeviceConfig {
            name: "sdb".into(),
            model: DeviceModel::UsbStick,
            capacity_gib: 16,
            seq_write_mib_per_s: 20.0,
            max_request_kib: 120,
            command_overhead_us: 100.0,
            small_write_penalty_us: 5000.0,
            nr_requests: 128,
        }
    }

    #[test]
    fn sequential_writes_pay_no_penalty() {
        let mut d = SerialDevice::new(&cfg(), crate::sim::rng_stream(1, 0));
        let transfer = 240.0 * 512.0 / (20.0 * 1048576.0) * 1e9;
        for s in 0..2 {
            let t = d.service_write(240 * s, 240) as f64 - 100_000.0;
            assert!(
                (t - transfer).abs() <= transfer * JITTER + 1.0,
                "{t} vs {transfer}"
            );
        }
        let scattered = d.service_write(100_000, 8);
        assert!(scattered > 5_000_000);
        assert_eq!(d.stats.sequential_requests, 2);
    }
}
