//! Device models: when the device completes a request it was handed.
//!
//! - `disk`: a SATA disk, one command at a time (command queueing not
//!   modelled). A request that starts a short way past where the previous
//!   one ended waits while the platter turns past the gap (the gap at the
//!   media rate, Ruemmler & Wilkes's rotational-position view of a disk);
//!   any other discontiguous request pays an average seek plus half a
//!   rotation (`small_write_penalty_us`), which also caps the wait. This is
//!   what writeback of a file's scattered dirty pages in ascending index
//!   order (`write_cache_pages`) meets.
//! - `usb-stick`: USB thumb drive (usb-storage over USB 2.0, 2011): one
//!   outstanding command (the Bulk-Only Transport has no command
//!   queueing), requests of at most `max_request_kib` (usb-storage sets
//!   `max_sectors` = 240, i.e. 120 KiB), a sequential write bandwidth, a
//!   fixed per-command overhead, and a penalty when a write does not
//!   continue where the previous one ended: cheap flash translation layers
//!   then do a read-modify-write of a whole erase block.
//! - `ssd`: a 2013 SATA SSD with native command queueing: up to
//!   `queue_depth` commands in flight, served by `channels` flash channels in
//!   parallel; every command pays the controller's per-command overhead on
//!   its channel, all commands share the interface/flash bandwidth, and the
//!   drive's write cache absorbs a write that continues the previous one
//!   (adjacent writes are programmed together); a small write elsewhere pays
//!   `small_write_penalty_us` of flash-translation work on its channel.
//! - `raid0` (see [`raid0`]): md striping over member devices; it has no
//!   service model of its own.

mod config;
pub mod raid0;

pub use config::{DeviceConfig, DeviceModel};

/// Bytes per sector, the unit devices and the block layer address in.
pub const SECTOR_BYTES: u64 = 512;

use rand::Rng;
use rand_pcg::Pcg64Mcg;

use crate::sim::{Ns, NS_PER_SEC, NS_PER_US};

#[derive(Debug, Clone)]
pub struct Device {
    pub model: DeviceModel,
    /// Sequential write bandwidth in bytes per second.
    pub seq_write_bytes_per_s: f64,
    pub command_overhead_ns: Ns,
    pub small_write_penalty_ns: Ns,
    pub capacity_sectors: u64,
    /// Commands the device accepts at once (1 for disk and USB stick).
    pub queue_depth: u32,
    /// Commands handed to the device and not yet completed.
    pub in_flight: u32,
    /// Sector after the last written one (sequentiality detector).
    last_end_sector: u64,
    /// When each channel is free again (one channel for serial devices).
    channel_free_at_ns: Vec<Ns>,
    /// When the shared transfer path is free again.
    transfer_free_at_ns: Ns,
    /// Latest completion handed out (for the busy-time union).
    last_done_ns: Ns,
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

impl Device {
    pub fn new(cfg: &DeviceConfig, rng: Pcg64Mcg) -> Device {
        let (depth, channels) = match cfg.model {
            DeviceModel::Ssd => (cfg.queue_depth, cfg.channels),
            _ => (1, 1),
        };
        Device {
            model: cfg.model,
            seq_write_bytes_per_s: cfg.seq_write_mib_per_s * 1024.0 * 1024.0,
            command_overhead_ns: (cfg.command_overhead_us * NS_PER_US as f64) as Ns,
            small_write_penalty_ns: (cfg.small_write_penalty_us * NS_PER_US as f64) as Ns,
            capacity_sectors: cfg.capacity_gib * (1 << 30) / SECTOR_BYTES,
            queue_depth: depth.max(1),
            in_flight: 0,
            last_end_sector: 0,
            channel_free_at_ns: vec![0; channels.max(1) as usize],
            transfer_free_at_ns: 0,
            last_done_ns: 0,
            stats: DeviceStats::default(),
            rng,
        }
    }

    /// Can the device take another command now?
    pub fn can_accept(&self) -> bool {
        self.model != DeviceModel::Raid0 && self.in_flight < self.queue_depth
    }

    /// Service time of a write of `nr_sectors` at `start_sector` started at
    /// time 0 on an idle device (tests).
    pub fn service_write(&mut self, start_sector: u64, nr_sectors: u64) -> Ns {
        self.in_flight += 1;
        let done = self.start(0, start_sector, nr_sectors, false);
        self.in_flight -= 1;
        self.channel_free_at_ns.iter_mut().for_each(|t| *t = 0);
        self.transfer_free_at_ns = 0;
        self.last_done_ns = 0;
        done
    }

    /// Hand the device a request at `now_ns`; returns when it completes.
    /// Reads run at the same bandwidth as writes (an input the scenario
    /// does not separate).
    pub fn start(&mut self, now_ns: Ns, start_sector: u64, nr_sectors: u64, read: bool) -> Ns {
        let bytes = nr_sectors * SECTOR_BYTES;
        let factor = 1.0 + self.rng.gen_range(-JITTER..=JITTER);
        let transfer =
            (bytes as f64 / self.seq_write_bytes_per_s * NS_PER_SEC as f64 * factor) as Ns;
        let sequential = start_sector == self.last_end_sector;
        let penalty = if sequential {
            0
        } else if self.model == DeviceModel::Disk && start_sector > self.last_end_sector {
            let gap_bytes = (start_sector - self.last_end_sector) * SECTOR_BYTES;
            let pass_over =
                (gap_bytes as f64 / self.seq_write_bytes_per_s * NS_PER_SEC as f64) as Ns;
            pass_over.min(self.small_write_penalty_ns)
        } else {
            self.small_write_penalty_ns
        };
        self.last_end_sector = start_sector + nr_sectors;
        let (ch, ch_free) = self
            .channel_free_at_ns
            .iter()
            .copied()
            .enumerate()
            .min_by_key(|&(_, t)| t)
            .expect("a device has at least one channel");
        let begin = now_ns.max(ch_free);
        let done = if self.channel_free_at_ns.len() == 1 {
            // One command at a time: overhead, transfer and penalty in turn.
            begin + self.command_overhead_ns + transfer + penalty
        } else {
            let xfer_start = begin.max(self.transfer_free_at_ns);
            self.transfer_free_at_ns = xfer_start + transfer;
            (begin + self.command_overhead_ns + penalty).max(xfer_start + transfer)
        };
        self.channel_free_at_ns[ch] = done;
        self.stats.busy_ns += done - begin.max(self.last_done_ns.min(done));
        self.last_done_ns = self.last_done_ns.max(done);
        if read {
            self.stats.read_requests += 1;
            self.stats.read_bytes += bytes;
            return done;
        }
        self.stats.write_requests += 1;
        self.stats.write_bytes += bytes;
        self.stats.max_request_bytes = self.stats.max_request_bytes.max(bytes);
        self.stats.sequential_requests += sequential as u64;
        done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
            boot_nr_requests: 128,
            hw_queues: 1,
            registered_before_start_ms: 0,
            queue_depth: 1,
            channels: 1,
            members: Vec::new(),
            chunk_kib: 0,
        }
    }

    #[test]
    fn sequential_writes_pay_no_penalty() {
        let mut d = Device::new(&cfg(), crate::sim::rng_stream(1, 0));
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

    fn ssd() -> DeviceConfig {
        DeviceConfig {
            model: DeviceModel::Ssd,
            seq_write_mib_per_s: 400.0,
            max_request_kib: 512,
            command_overhead_us: 20.0,
            small_write_penalty_us: 100.0,
            queue_depth: 32,
            channels: 8,
            ..cfg()
        }
    }

    /// Scattered 4 KiB writes keep all channels busy: the SSD completes
    /// them `channels` at a time, far faster than one after another.
    #[test]
    fn ssd_serves_small_writes_in_parallel() {
        let mut d = Device::new(&ssd(), crate::sim::rng_stream(1, 0));
        let mut last = 0;
        for i in 0..800u64 {
            d.in_flight = 0;
            last = last.max(d.start(0, i * 1000, 8, false));
        }
        // 800 writes × 120 µs / 8 channels = 12 ms (transfer 10 µs each
        // overlaps); one at a time would take 96 ms.
        let ms = last as f64 / 1e6;
        assert!((11.0..14.0).contains(&ms), "{ms} ms");
    }

    /// Large sequential writes are bound by bandwidth, not channels.
    #[test]
    fn ssd_large_writes_run_at_its_bandwidth() {
        let mut d = Device::new(&ssd(), crate::sim::rng_stream(1, 0));
        let mut last = 0;
        for i in 0..100u64 {
            last = last.max(d.start(0, i * 1024, 1024, false));
        }
        let mib_per_s = 100.0 * 0.5 / (last as f64 / 1e9);
        assert!((380.0..420.0).contains(&mib_per_s), "{mib_per_s}");
        // The first starts where the (idle) device last stopped: sector 0.
        assert_eq!(d.stats.sequential_requests, 100);
    }

    /// A disk's short forward skip costs the platter's turn past the gap;
    /// a long or backward one an average seek plus half a rotation. A USB
    /// stick pays its flash penalty for any skip.
    #[test]
    fn disk_forward_skip_costs_the_gap_at_media_rate() {
        let mut c = cfg();
        c.model = DeviceModel::Disk;
        c.seq_write_mib_per_s = 64.0;
        c.small_write_penalty_us = 8000.0;
        let mut d = Device::new(&c, crate::sim::rng_stream(1, 0));
        let page = 8;
        let start = d.service_write(0, page);
        // Skip 16 pages (64 KiB): 64 KiB / 64 MiB/s ~ 0.98 ms more.
        let skip = d.service_write(page + 16 * page, page);
        let gap_ns = 16.0 * 4096.0 / (64.0 * 1048576.0) * 1e9;
        assert!(
            ((skip - start) as f64 - gap_ns).abs() < start as f64 * 2.0 * JITTER + 1.0,
            "skip {skip} start {start} gap {gap_ns}"
        );
        // 100 MiB ahead would take longer than a seek: capped at it.
        let far = d.service_write(page * 27 + (100 << 11), page);
        assert!(far >= 8_000_000 && far < 8_000_000 + 2 * start, "{far}");
        // Backwards: a seek.
        let back = d.service_write(0, page);
        assert!(back >= 8_000_000, "{back}");
        // The same skip on a USB stick pays the flash penalty.
        let mut u = Device::new(&cfg(), crate::sim::rng_stream(1, 0));
        u.service_write(0, page);
        assert!(u.service_write(page + 16 * page, page) > 5_000_000);
    }
}
