//! From a scenario to a QEMU machine: guest RAM and where the 4 GiB line
//! falls (so that the guest kernel's DMA / DMA32 / Normal zones come out
//! the scenario's sizes), vCPUs, the data disk's throttle and filesystem,
//! the sysctls, and a note for everything of the scenario a real machine
//! cannot be told.
//!
//! Zone arithmetic (x86-64, `free_area_init_core()` of 3.x, and the
//! present-page counts read off real 3.1–3.3 guests, kernel-lab README):
//! DMA is pfn 16–4096 whatever the RAM (15.3 MiB present); DMA32 runs from
//! 16 MiB to the end of RAM below 4 GiB, and when RAM goes above 4 GiB it
//! spans to 4 GiB; Normal is everything above 4 GiB. A zone's present
//! pages are its spanned pages less its `struct page` array (64 bytes a
//! page, 1/64 of the span) and a few e820-reserved pages. Later kernels
//! print the array inside `present` and take it out of `managed`.

use serde::Serialize;
use wbsim::kernel::SysctlConfig;
use wbsim::mm::page::PAGES_PER_MIB;
use wbsim::scenario::{DeviceConfig, DeviceModel, FsType, Scenario, ZoneKind};

/// QEMU's `pc` machine keeps RAM below 4 GiB at or under 3 GiB when
/// `max-ram-below-4g` asks for more (its gigabyte alignment); the
/// `pc-i440fx-1.7` machine type predates that alignment.
const PC_GIGABYTE_ALIGN_MIB: u64 = 3072;
/// Highest `max-ram-below-4g` the lab uses: the PCI hole needs the rest.
const MAX_BELOW_4G_MIB: u64 = 3584;
/// Pages of the e820-reserved ranges below 4 GiB under SeaBIOS (35 pages
/// on the 3.1 guest of the kernel-lab README).
const E820_RESERVED_PAGES: f64 = 35.0;
/// DMA zone present pages on every x86-64 guest seen (pfn 16..4096 less
/// the BIOS area).
pub const DMA_PRESENT_PAGES: u64 = 3917;
const PAGES_PER_MIB_F64: f64 = PAGES_PER_MIB as f64;

/// The machine QEMU is asked for.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LabMachine {
    /// `-m`, MiB.
    pub memory_mib: u64,
    /// `-machine ...,max-ram-below-4g=`, MiB; `None` when all RAM is
    /// below 4 GiB anyway.
    pub below_4g_mib: Option<u64>,
    /// `pc`, or `pc-i440fx-1.7` when more than 3 GiB must sit below 4 GiB.
    pub machine_type: String,
    pub cpus: u32,
    /// `throttling.bps-write` of the data disk, bytes a second.
    pub write_bytes_per_second: u64,
    /// Data disk image size (sparse), bytes.
    pub disk_bytes: u64,
    pub fs_type: FsType,
    /// Mount point relative to the guest's working directory.
    pub mount: String,
    /// `/proc/sys` settings, in the order they must be written.
    pub sysctls: Vec<(String, String)>,
    /// The zone sizes asked for, in pages (present pages as 3.x counts
    /// them), DMA, DMA32, Normal.
    pub expected_zone_pages: Vec<(String, u64)>,
    /// What could not be expressed, and by how much it is off.
    pub notes: Vec<String>,
    /// A swap disk, when the scenario has `[swap]`.
    pub swap: Option<LabSwap>,
    /// The data disk's request-queue settings the guest writes (file
    /// under `/sys/block/DISK/queue/`, value): the device's largest
    /// request and queue length, in place of virtio-blk's own (512 KiB
    /// and 128 on 3.x, which at a slow throttle keep far more pages
    /// under writeback than the scenario's device would).
    pub data_queue: Vec<(String, String)>,
}

/// The guest's swap: a third virtio disk made by the host's `mkswap`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LabSwap {
    /// Image size, bytes.
    pub bytes: u64,
    /// `throttling.bps-write` of the swap disk, bytes a second (0: none).
    pub write_bytes_per_second: u64,
    /// The scenario's swap partition sits on the data disk's device: the
    /// two images share one QEMU throttle group, so swap-out and file
    /// writeback take turns at the device's bandwidth as they would on one
    /// disk.
    pub shares_data_throttle: bool,
}

/// A scenario the lab cannot run on a real machine.
#[derive(Debug, Clone, PartialEq)]
pub struct Inexpressible(pub String);

impl std::fmt::Display for Inexpressible {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the lab cannot run this scenario on a real kernel: {}",
            self.0
        )
    }
}

fn zone_mib(sc: &Scenario, kind: ZoneKind) -> u64 {
    sc.machine
        .zones
        .iter()
        .filter(|z| z.kind == kind)
        .map(|z| z.size_mib)
        .sum()
}

/// A device's sequential write bandwidth as QEMU's `throttling.bps-write`.
fn write_bytes_per_second(dev: &DeviceConfig) -> u64 {
    (dev.seq_write_mib_per_s * 1_048_576.0).round() as u64
}

/// Map a scenario to the QEMU machine that comes closest to it.
pub fn lab_machine(sc: &Scenario) -> Result<LabMachine, Inexpressible> {
    let bad = |m: String| Err(Inexpressible(m));
    if sc.machine.nodes.len() > 1 {
        return bad(format!(
            "it has {} NUMA nodes ([[machine.node]]); the lab boots one-node guests \
             (QEMU's -numa and each node's zone layout are not set up yet)",
            sc.machine.nodes.len()
        ));
    }
    if sc.filesystems.len() != 1 {
        return bad(format!(
            "it has {} filesystems; the lab gives the guest one data disk with one filesystem",
            sc.filesystems.len()
        ));
    }
    let fs = &sc.filesystems[0];
    let Some(dev) = sc.devices.iter().find(|d| d.name == fs.device) else {
        return bad(format!(
            "filesystem device {:?} is not a [[device]]",
            fs.device
        ));
    };
    if dev.model == DeviceModel::Raid0 {
        return bad(format!(
            "device {:?} is a RAID0 of {}; QEMU gives the guest plain virtio disks and the \
             guest would need md to stripe them",
            dev.name,
            dev.members.join(" and ")
        ));
    }
    let mut notes = Vec::new();
    let swap = match &sc.swap {
        None => None,
        Some(sw) => {
            let Some(sdev) = sc.devices.iter().find(|d| d.name == sw.device) else {
                return bad(format!("swap device {:?} is not a [[device]]", sw.device));
            };
            let shares = sdev.name == dev.name;
            notes.push(format!(
                "swap: {} MiB on its own virtio disk{}",
                sw.size_mib,
                if shares {
                    format!(
                        ", in one throttle group with the data disk ({} holds both)",
                        dev.name
                    )
                } else {
                    String::new()
                }
            ));
            Some(LabSwap {
                bytes: sw.size_mib << 20,
                write_bytes_per_second: write_bytes_per_second(sdev),
                shares_data_throttle: shares,
            })
        }
    };

    let dma = zone_mib(sc, ZoneKind::Dma);
    let dma32 = zone_mib(sc, ZoneKind::Dma32);
    let normal = zone_mib(sc, ZoneKind::Normal);
    let dma_mib_real = DMA_PRESENT_PAGES as f64 / PAGES_PER_MIB_F64;
    if (dma as f64 - dma_mib_real).abs() > 1.0 {
        notes.push(format!(
            "DMA: x86-64 fixes the zone at pfn 16-4096 ({DMA_PRESENT_PAGES} pages, {dma_mib_real:.1} MiB); the scenario has {dma} MiB"
        ));
    }
    let mut expected = vec![("DMA".to_string(), DMA_PRESENT_PAGES)];
    let (memory_mib, below_4g_mib) = if normal == 0 {
        // DMA32 spans 16 MiB .. end of RAM: present = span × 63/64 − reserved.
        let span_mib = (dma32 as f64 + E820_RESERVED_PAGES / PAGES_PER_MIB_F64) * 64.0 / 63.0;
        let ram = (16.0 + span_mib).ceil() as u64;
        if ram > MAX_BELOW_4G_MIB {
            return bad(format!(
                "DMA32 of {dma32} MiB with no Normal zone needs {ram} MiB below 4 GiB; \
                 at most {MAX_BELOW_4G_MIB} MiB fits below the PCI hole"
            ));
        }
        expected.push(("DMA32".into(), dma32 * PAGES_PER_MIB));
        (ram, None)
    } else {
        // DMA32 spans to 4 GiB: its struct-page array is 1/64 of that span.
        let memmap_mib = (1_048_576.0 - 4096.0) / 64.0 / PAGES_PER_MIB_F64;
        let mut below = (16.0 + dma32 as f64 + memmap_mib + E820_RESERVED_PAGES / PAGES_PER_MIB_F64)
            .ceil() as u64;
        if below > MAX_BELOW_4G_MIB {
            notes.push(format!(
                "DMA32: {dma32} MiB would need {below} MiB below 4 GiB; capped at {MAX_BELOW_4G_MIB} MiB, \
                 {} MiB short",
                below - MAX_BELOW_4G_MIB
            ));
            below = MAX_BELOW_4G_MIB;
        }
        let above = (normal as f64 * 64.0 / 63.0).ceil() as u64;
        expected.push(("DMA32".into(), dma32 * PAGES_PER_MIB));
        expected.push(("Normal".into(), normal * PAGES_PER_MIB));
        (below + above, Some(below))
    };
    let machine_type = match below_4g_mib {
        Some(b) if b > PC_GIGABYTE_ALIGN_MIB => "pc-i440fx-1.7".to_string(),
        _ => "pc".to_string(),
    };
    for z in &sc.machine.zones {
        if let Some(m) = z.managed_mib {
            notes.push(format!(
                "{}: the scenario's watermarks and reserves are sized by {} MiB managed; the \
                 guest's kernel sizes them by what it manages",
                z.kind.as_str(),
                m
            ));
        }
        if z.kernel_pages(wbsim::mm::unit::PageUnit::BASE) > 0 {
            let held = match z.kernel_kib {
                0 => format!("{} MiB", z.kernel_mib),
                kib => format!("{} MiB and {kib} KiB", z.kernel_mib),
            };
            notes.push(format!(
                "{}: the scenario holds {held} for the kernel; the guest's own kernel holds what it holds",
                z.kind.as_str(),
            ));
        }
    }
    notes.push(format!(
        "HZ: the guest kernel's own CONFIG_HZ applies (the scenario models {})",
        sc.machine.hz
    ));
    if let Some(pages) = sc.machine.boot_dirty_limit_pages {
        notes.push(format!(
            "the guest's kernel sets its own dirty limit at boot (the scenario models {pages} \
             pages)"
        ));
    }
    if sc.machine.idle_wakeup_ns > 0 {
        notes.push(format!(
            "idle vCPUs wake when the host runs them (the scenario models {} us)",
            sc.machine.idle_wakeup_ns / 1_000
        ));
    }

    let write_bytes_per_second = write_bytes_per_second(dev);
    notes.push(format!(
        "{}: sequential writes throttled to {} B/s (QEMU throttling.bps-write); largest request \
         {} KiB and {} requests queued set in the guest (queue/max_sectors_kb, queue/nr_requests); \
         not expressible: command overhead {} us, small-write penalty {} us, queue depth {}, \
         nr_requests at registration {} (virtio-blk's and the host image's apply)",
        dev.name,
        write_bytes_per_second,
        dev.max_request_kib,
        dev.nr_requests,
        dev.command_overhead_us,
        dev.small_write_penalty_us,
        dev.queue_depth,
        dev.boot_nr_requests
    ));
    let data_queue = vec![
        (
            "max_sectors_kb".to_string(),
            dev.max_request_kib.to_string(),
        ),
        ("nr_requests".to_string(), dev.nr_requests.to_string()),
    ];

    let s = &sc.sysctl;
    let mut sysctls = vec![
        ("vm/dirty_ratio".to_string(), s.dirty_ratio.to_string()),
        (
            "vm/dirty_background_ratio".into(),
            s.dirty_background_ratio.to_string(),
        ),
    ];
    // Writing a *_bytes knob clears its *_ratio twin: only when set.
    if s.dirty_bytes > 0 {
        sysctls.push(("vm/dirty_bytes".into(), s.dirty_bytes.to_string()));
    }
    if s.dirty_background_bytes > 0 {
        sysctls.push((
            "vm/dirty_background_bytes".into(),
            s.dirty_background_bytes.to_string(),
        ));
    }
    sysctls.push((
        "vm/dirty_expire_centisecs".into(),
        s.dirty_expire_centisecs.to_string(),
    ));
    sysctls.push((
        "vm/dirty_writeback_centisecs".into(),
        s.dirty_writeback_centisecs.to_string(),
    ));
    sysctls.push(("vm/swappiness".into(), s.swappiness.to_string()));
    // laptop_mode takes seconds; laptop-mode-tools' default is 5.
    sysctls.push((
        "vm/laptop_mode".into(),
        if s.laptop_mode { "5" } else { "0" }.into(),
    ));
    // 4.6+ only: written when the scenario moves it from the default, so
    // that older kernels, which lack the file, boot the rest.
    if s.watermark_scale_factor != SysctlConfig::default().watermark_scale_factor {
        sysctls.push((
            "vm/watermark_scale_factor".into(),
            s.watermark_scale_factor.to_string(),
        ));
    }
    if let Some(k) = sc.machine.min_free_kbytes {
        sysctls.push(("vm/min_free_kbytes".into(), k.to_string()));
    }

    Ok(LabMachine {
        memory_mib,
        below_4g_mib,
        machine_type,
        cpus: sc.machine.cpus,
        write_bytes_per_second,
        disk_bytes: dev.capacity_gib << 30,
        fs_type: fs.fs_type,
        mount: fs.mount.clone(),
        sysctls,
        expected_zone_pages: expected,
        notes,
        swap,
        data_queue,
    })
}

/// The host's mkfs command for the data disk image, with the on-disk
/// features the guest kernel can mount: a kernel older than 4.x gets
/// ext4 without metadata_csum/64bit/orphan_file and XFS v4 (no CRC),
/// as the kernel-lab README found 3.2 needs.
pub fn mkfs_command(fs: FsType, kernel_major: u32, image: &str) -> Vec<String> {
    let old = kernel_major < 4;
    let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let mut cmd = match (fs, old) {
        (FsType::Ext4, true) => v(&[
            "mkfs.ext4",
            "-q",
            "-F",
            "-O",
            "^metadata_csum,^metadata_csum_seed,^64bit,^orphan_file",
            "-E",
            "lazy_itable_init=0,lazy_journal_init=0",
        ]),
        (FsType::Ext4, false) => v(&[
            "mkfs.ext4",
            "-q",
            "-F",
            "-E",
            "lazy_itable_init=0,lazy_journal_init=0",
        ]),
        (FsType::Xfs, true) => v(&[
            "mkfs.xfs", "-q", "-f", "-m", "crc=0", "-n", "ftype=0", "-i", "sparse=0",
        ]),
        (FsType::Xfs, false) => v(&["mkfs.xfs", "-q", "-f"]),
        // btrfs-progs 6.2 `-O list-all` / `-R list-all`: extref needs 3.7,
        // skinny-metadata 3.10, no-holes 3.14, free-space-tree 4.5.
        (FsType::Btrfs, true) => v(&[
            "mkfs.btrfs",
            "-q",
            "-f",
            "-O",
            "^no-holes,^skinny-metadata,^extref",
            "-R",
            "^free-space-tree",
        ]),
        (FsType::Btrfs, false) => v(&["mkfs.btrfs", "-q", "-f"]),
        // ntfs-3g's mkntfs: -F for an image file, -Q quick (no zeroing).
        (FsType::FuseNtfs, _) => v(&["mkntfs", "-F", "-Q", "-q"]),
    };
    cmd.push(image.to_string());
    cmd
}

/// Kernel modules the Debian kernel needs for this filesystem (the
/// cloud flavour builds ext4 in and virtio as modules).
pub fn fs_module(fs: FsType) -> Option<&'static str> {
    match fs {
        FsType::Ext4 => Some("ext4"),
        FsType::Xfs => Some("xfs"),
        FsType::Btrfs => Some("btrfs"),
        FsType::FuseNtfs => Some("fuse"),
    }
}

#[cfg(test)]
mod tests;
