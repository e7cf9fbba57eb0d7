//! Conversion of the spanned TOML tree into a validated [`Scenario`].

use super::tree::{Node, Value};
use super::{
    DeviceConfig, DeviceModel, FsConfig, FsType, IrqDelivery, MachineConfig, RunConfig, Scenario,
    ScenarioError, SysctlConfig, ZoneConfig, ZoneKind,
};
mod table;
mod tasks;

use table::{Cx, Table};
use tasks::{swap, task};

type Result<T> = std::result::Result<T, ScenarioError>;

const ROOT_KEYS: &[&str] = &[
    "cpu_cost", "device", "fs", "kernel", "machine", "run", "swap", "sysctl", "task",
];
const MACHINE_KEYS: &[&str] = &[
    "cpus",
    "hz",
    "irq_delivery",
    "min_free_kbytes",
    "total_mib",
    "zone",
];
const ZONE_KEYS: &[&str] = &["kernel_mib", "name", "size_mib"];
const DEVICE_KEYS: &[&str] = &[
    "capacity_gib",
    "channels",
    "chunk_kib",
    "command_overhead_us",
    "max_request_kib",
    "members",
    "model",
    "name",
    "nr_requests",
    "queue_depth",
    "seq_write_mib_per_s",
    "small_write_penalty_us",
];
const FS_KEYS: &[&str] = &["ag_count", "device", "inode_size", "mount", "type"];
const SYSCTL_KEYS: &[&str] = &[
    "dirty_background_bytes",
    "dirty_background_ratio",
    "dirty_bytes",
    "dirty_expire_centisecs",
    "dirty_ratio",
    "dirty_writeback_centisecs",
    "laptop_mode",
    "swappiness",
];
const RUN_KEYS: &[&str] = &["runs", "seed", "time_limit_s"];
const U32_MAX: i64 = u32::MAX as i64;

/// Validate the whole document.
pub(super) fn scenario(root: &Node, text: &str, file: &str, name: String) -> Result<Scenario> {
    let cx = Cx { text, file };
    let root = Table::new(&cx, root, String::new())?;
    root.check_keys(&cx, ROOT_KEYS)?;

    let kernel = root
        .string(&cx, "kernel")?
        .map(|(kernel, _)| kernel)
        .ok_or_else(|| root.missing(&cx, "kernel", "e.g. kernel = \"3.0-vanilla\""))?;
    let machine = match root.table(&cx, "machine")? {
        Some(t) => machine(&cx, &t)?,
        None => return Err(root.missing(&cx, "machine", "a [machine] table")),
    };
    let mut devices: Vec<DeviceConfig> = Vec::new();
    for t in &root.array_of_tables(&cx, "device")? {
        let d = device(&cx, t, &devices)?;
        if let Some(first) = devices.iter().position(|o| o.name == d.name) {
            return Err(t.err_at(
                &cx,
                "name",
                format!(
                    "duplicate device name `{}` (also used by device[{first}]); \
                     device names must be unique",
                    d.name
                ),
            ));
        }
        devices.push(d);
    }
    let mut filesystems = Vec::new();
    for t in &root.array_of_tables(&cx, "fs")? {
        filesystems.push(filesystem(&cx, t, &devices, &filesystems)?);
    }
    let sysctl = match root.table(&cx, "sysctl")? {
        Some(t) => sysctl(&cx, &t)?,
        None => SysctlConfig::default(),
    };
    let swap = match root.table(&cx, "swap")? {
        Some(t) => Some(swap(&cx, &t, &devices)?),
        None => None,
    };
    let mut tasks = Vec::new();
    for (i, t) in root.array_of_tables(&cx, "task")?.iter().enumerate() {
        let tc = task(&cx, t, i, &filesystems, &tasks)?;
        tasks.push(tc);
    }
    let run = match root.table(&cx, "run")? {
        Some(t) => run(&cx, &t)?,
        None => RunConfig::default(),
    };
    let cpu_cost = match root.table(&cx, "cpu_cost")? {
        Some(t) => cpu_cost(&cx, &t)?,
        None => Vec::new(),
    };
    Ok(Scenario {
        name,
        kernel,
        machine,
        devices,
        filesystems,
        sysctl,
        swap,
        tasks,
        run,
        cpu_cost,
    })
}

/// `[cpu_cost]`: `name = nanoseconds` for any of the built-in CPU costs.
fn cpu_cost(cx: &Cx, t: &Table) -> Result<Vec<(String, u64)>> {
    t.check_keys(cx, crate::sim::cost::COST_NAMES)?;
    let mut out = Vec::new();
    for e in t.entries {
        let ns = t.int(cx, &e.key, 0, 10_000_000_000)?.expect("present");
        out.push((e.key.clone(), ns as u64));
    }
    Ok(out)
}

fn machine(cx: &Cx, t: &Table) -> Result<MachineConfig> {
    t.check_keys(cx, MACHINE_KEYS)?;
    let cpus = t.int(cx, "cpus", 1, 256)?.unwrap_or(2) as u32;
    let hz = match t.field("hz") {
        None => 1000,
        Some(f) => match f.value {
            Value::Int(n @ (100 | 250 | 300 | 1000)) => *n as u32,
            Value::Int(n) => {
                return Err(cx.err(
                    f.span,
                    &f.key,
                    format!("must be one of 100, 250, 300, 1000 (got {n})"),
                ))
            }
            other => return Err(f.wrong_type(cx, "an integer", other)),
        },
    };
    // `vm.min_free_kbytes` takes any value: [128, 65536] bounds only the
    // boot-time default (`init_per_zone_wmark_min`), and THP's
    // `set_recommended_min_free_kbytes` (2.6.38+) sets 67,584 on a node of
    // three zones. Checked against the zones' memory below.
    let min_free_kbytes = t
        .int(cx, "min_free_kbytes", 128, 1 << 24)?
        .map(|n| n as u64);
    const DELIVERIES: &[&str] = &["first-cpu", "round-robin"];
    let irq_delivery = match t.string(cx, "irq_delivery")? {
        None => IrqDelivery::FirstCpu,
        Some((d, _)) if d == "first-cpu" => IrqDelivery::FirstCpu,
        Some((d, _)) if d == "round-robin" => IrqDelivery::RoundRobin,
        Some((d, f)) => return Err(f.not_one_of(cx, "interrupt delivery", &d, DELIVERIES)),
    };
    let total_mib = t.int(cx, "total_mib", 1, i64::MAX)?;

    let zone_tables = t.array_of_tables(cx, "zone")?;
    let mut zones: Vec<ZoneConfig> = Vec::new();
    for zt in &zone_tables {
        zt.check_keys(cx, ZONE_KEYS)?;
        let name_field = zt
            .field("name")
            .ok_or_else(|| zt.missing(cx, "name", "one of DMA, DMA32, Normal"))?;
        let kind = match name_field.value {
            Value::Str(s) => match s.as_str() {
                "DMA" => ZoneKind::Dma,
                "DMA32" => ZoneKind::Dma32,
                "Normal" => ZoneKind::Normal,
                _ => return Err(name_field.not_one_of(cx, "zone", s, &["DMA", "DMA32", "Normal"])),
            },
            other => return Err(name_field.wrong_type(cx, "a string", other)),
        };
        if let Some(prev) = zones.last().map(|z| z.kind) {
            if kind <= prev {
                let problem = if kind == prev {
                    format!("duplicate zone `{}`", kind.as_str())
                } else {
                    format!("zone `{}` listed after `{}`", kind.as_str(), prev.as_str())
                };
                return Err(cx.err(
                    name_field.span,
                    &name_field.key,
                    format!(
                        "{problem}; zones must be listed in ascending order \
                         DMA, DMA32, Normal, each at most once"
                    ),
                ));
            }
        }
        let size_mib = zt.positive(cx, "size_mib", "zone size in MiB")?;
        let kernel_mib = zt.int(cx, "kernel_mib", 0, i64::MAX)?.unwrap_or(0) as u64;
        if kernel_mib >= size_mib {
            return Err(zt.err_at(
                cx,
                "kernel_mib",
                format!(
                    "{kernel_mib} MiB held by the kernel leaves nothing of the {size_mib} MiB \
                     zone; it must be less than size_mib"
                ),
            ));
        }
        zones.push(ZoneConfig {
            kind,
            size_mib,
            kernel_mib,
        });
    }

    let mem_kib: u64 = zones.iter().map(|z| z.size_mib.saturating_mul(1024)).sum();
    if let Some(kb) = min_free_kbytes.filter(|&kb| !zones.is_empty() && kb * 3 / 2 >= mem_kib) {
        return Err(t.err_at(
            cx,
            "min_free_kbytes",
            format!(
                "{kb} KiB leaves nothing to allocate: the high watermark (1.5 x min) must \
                 stay below the zones' {mem_kib} KiB; allowed: 128 to {}",
                (mem_kib * 2).div_ceil(3).saturating_sub(1).max(128)
            ),
        ));
    }
    if let Some(total) = total_mib {
        let total = total as u64;
        for (zt, z) in zone_tables.iter().zip(&zones) {
            if z.size_mib > total {
                return Err(zt.err_at(
                    cx,
                    "size_mib",
                    format!(
                        "zone {} is {} MiB, larger than total_mib = {total}; \
                         a zone cannot be larger than total memory",
                        z.kind.as_str(),
                        z.size_mib
                    ),
                ));
            }
        }
        let sum: u128 = zones.iter().map(|z| u128::from(z.size_mib)).sum();
        if sum != u128::from(total) {
            let sizes: Vec<String> = zones
                .iter()
                .map(|z| format!("{} {}", z.kind.as_str(), z.size_mib))
                .collect();
            return Err(t.err_at(
                cx,
                "total_mib",
                format!(
                    "zone sizes sum to {sum} MiB ({}) but total_mib = {total}; \
                     the zone sizes must add up exactly to total_mib",
                    sizes.join(" + ")
                ),
            ));
        }
    }
    Ok(MachineConfig {
        cpus,
        zones,
        min_free_kbytes,
        hz,
        irq_delivery,
    })
}

fn device(cx: &Cx, t: &Table, earlier: &[DeviceConfig]) -> Result<DeviceConfig> {
    t.check_keys(cx, DEVICE_KEYS)?;
    let name = match t.string(cx, "name")? {
        Some((name, _)) => name,
        None => return Err(t.missing(cx, "name", "e.g. name = \"sdb\"")),
    };
    const MODELS: &[&str] = &["usb-stick", "disk", "ssd", "raid0"];
    let model = match t.string(cx, "model")? {
        Some((m, _)) if m == "usb-stick" => DeviceModel::UsbStick,
        Some((m, _)) if m == "disk" => DeviceModel::Disk,
        Some((m, _)) if m == "ssd" => DeviceModel::Ssd,
        Some((m, _)) if m == "raid0" => DeviceModel::Raid0,
        Some((m, f)) => return Err(f.not_one_of(cx, "device model", &m, MODELS)),
        None => return Err(t.missing(cx, "model", "allowed: usb-stick, disk, ssd, raid0")),
    };
    if model == DeviceModel::Raid0 {
        return raid0(cx, t, name, earlier);
    }
    let capacity_gib = t.positive(cx, "capacity_gib", "capacity in GiB")?;
    let seq_write_mib_per_s = match t.float(cx, "seq_write_mib_per_s", false)? {
        Some(x) => x,
        None => return Err(t.missing(cx, "seq_write_mib_per_s", "MiB/s, > 0")),
    };
    let max_request_kib = match t.int(cx, "max_request_kib", 1, U32_MAX)? {
        Some(n) if n % 4 == 0 => n as u32,
        Some(n) => {
            return Err(t.err_at(
                cx,
                "max_request_kib",
                format!("must be a multiple of 4 (one 4 KiB page) (got {n})"),
            ))
        }
        None => return Err(t.missing(cx, "max_request_kib", "KiB, a multiple of 4")),
    };
    let ssd = model == DeviceModel::Ssd;
    for key in ["queue_depth", "channels"] {
        if !ssd && t.field(key).is_some() {
            return Err(t.err_at(
                cx,
                key,
                format!("`{key}` applies to model = \"ssd\" only (this device is serial)"),
            ));
        }
    }
    let queue_depth = t.int(cx, "queue_depth", 1, 256)?.unwrap_or(1) as u32;
    let channels = t.int(cx, "channels", 1, 64)?.unwrap_or(1) as u32;
    let nr_requests = t.int(cx, "nr_requests", 4, 4096)?.unwrap_or(128) as u32;
    Ok(DeviceConfig {
        name,
        model,
        capacity_gib,
        seq_write_mib_per_s,
        max_request_kib,
        command_overhead_us: t.float(cx, "command_overhead_us", true)?.unwrap_or(0.0),
        small_write_penalty_us: t.float(cx, "small_write_penalty_us", true)?.unwrap_or(0.0),
        nr_requests,
        queue_depth,
        channels,
        members: Vec::new(),
        chunk_kib: 0,
    })
}

/// A `model = "raid0"` device: `members` names earlier devices of one
/// model and size; `chunk_kib` is the stripe chunk.
fn raid0(cx: &Cx, t: &Table, name: String, earlier: &[DeviceConfig]) -> Result<DeviceConfig> {
    const ONLY: &[&str] = &["name", "model", "members", "chunk_kib"];
    if let Some(e) = t.entries.iter().find(|e| !ONLY.contains(&e.key.as_str())) {
        return Err(t.err_at(
            cx,
            &e.key,
            format!(
                "`{}` does not apply to a raid0 device; allowed keys: {}",
                e.key,
                ONLY.join(", ")
            ),
        ));
    }
    let Some(f) = t.field("members") else {
        return Err(t.missing(
            cx,
            "members",
            "the names of two or more earlier [[device]]s",
        ));
    };
    let Value::Array(items) = f.value else {
        return Err(f.wrong_type(cx, "an array of device names", f.value));
    };
    let mut members = Vec::new();
    for item in items {
        let Value::Str(m) = &item.value else {
            return Err(f.wrong_type(cx, "an array of device names", &item.value));
        };
        let Some(d) = earlier.iter().find(|d| &d.name == m) else {
            let names: Vec<&str> = earlier.iter().map(|d| d.name.as_str()).collect();
            return Err(cx.err(
                f.span,
                &f.key,
                format!(
                    "no earlier [[device]] named `{m}` (members must be defined \
                     before the array); defined: {}",
                    names.join(", ")
                ),
            ));
        };
        if d.model == DeviceModel::Raid0 || members.contains(m) {
            return Err(cx.err(
                f.span,
                &f.key,
                format!("member `{m}` must be a distinct ssd, disk or usb-stick device"),
            ));
        }
        members.push(m.clone());
    }
    if members.len() < 2 {
        return Err(cx.err(
            f.span,
            &f.key,
            format!(
                "a raid0 array needs at least 2 members (got {})",
                members.len()
            ),
        ));
    }
    let chunk_kib = match t.int(cx, "chunk_kib", 4, 1 << 20)? {
        Some(n) if n % 4 == 0 && (n as u64).is_power_of_two() => n as u32,
        Some(n) => {
            return Err(t.err_at(
                cx,
                "chunk_kib",
                format!("must be a power of two and a multiple of 4 KiB (got {n})"),
            ))
        }
        None => return Err(t.missing(cx, "chunk_kib", "KiB, e.g. 512 (mdadm's default)")),
    };
    let first = earlier
        .iter()
        .find(|d| d.name == members[0])
        .expect("checked");
    let capacity_gib = first.capacity_gib * members.len() as u64;
    Ok(DeviceConfig {
        name,
        model: DeviceModel::Raid0,
        capacity_gib,
        seq_write_mib_per_s: first.seq_write_mib_per_s * members.len() as f64,
        max_request_kib: first.max_request_kib,
        command_overhead_us: 0.0,
        small_write_penalty_us: 0.0,
        nr_requests: first.nr_requests,
        queue_depth: 0,
        channels: 0,
        members,
        chunk_kib,
    })
}

fn filesystem(
    cx: &Cx,
    t: &Table,
    devices: &[DeviceConfig],
    earlier: &[FsConfig],
) -> Result<FsConfig> {
    t.check_keys(cx, FS_KEYS)?;
    const TYPES: &[&str] = &["xfs", "ext4", "btrfs", "fuse-ntfs"];
    let fs_type = match t.string(cx, "type")? {
        Some((s, f)) => match s.as_str() {
            "xfs" => FsType::Xfs,
            "ext4" => FsType::Ext4,
            "btrfs" => FsType::Btrfs,
            "fuse-ntfs" => FsType::FuseNtfs,
            _ => return Err(f.not_one_of(cx, "filesystem type", &s, TYPES)),
        },
        None => return Err(t.missing(cx, "type", "allowed: xfs, ext4, btrfs, fuse-ntfs")),
    };
    let device = match t.string(cx, "device")? {
        Some((d, _)) if devices.iter().any(|x| x.name == d) => d,
        Some((d, f)) => {
            let names: Vec<&str> = devices.iter().map(|x| x.name.as_str()).collect();
            return Err(cx.err(
                f.span,
                &f.key,
                format!(
                    "no [[device]] named `{d}`; defined devices: {}",
                    names.join(", ")
                ),
            ));
        }
        None => return Err(t.missing(cx, "device", "the name of a [[device]]")),
    };
    let mount = match t.string(cx, "mount")? {
        Some((m, f)) => {
            if m.starts_with('/') || m.ends_with('/') {
                return Err(cx.err(
                    f.span,
                    &f.key,
                    format!(
                        "must be a relative path without leading or trailing '/', \
                         e.g. mount = \"disk\" (got {m:?})"
                    ),
                ));
            }
            if let Some(i) = earlier.iter().position(|e| e.mount == m) {
                return Err(cx.err(
                    f.span,
                    &f.key,
                    format!("mount `{m}` is already used by fs[{i}]; mounts must be unique"),
                ));
            }
            m
        }
        None => return Err(t.missing(cx, "mount", "a relative path such as \"disk\"")),
    };
    for key in ["ag_count", "inode_size"] {
        if fs_type != FsType::Xfs && t.field(key).is_some() {
            return Err(t.err_at(cx, key, format!("`{key}` applies to type = \"xfs\" only")));
        }
    }
    let ag_count = t.int(cx, "ag_count", 1, 10_000)?.unwrap_or(4) as u32;
    let inode_size = match t.int(cx, "inode_size", 256, 2048)? {
        None => 256,
        Some(n) if (n as u64).is_power_of_two() => n as u32,
        Some(n) => {
            return Err(t.err_at(
                cx,
                "inode_size",
                format!("must be 256, 512, 1024 or 2048 bytes (got {n})"),
            ))
        }
    };
    Ok(FsConfig {
        fs_type,
        device,
        mount,
        ag_count,
        inode_size,
    })
}

fn sysctl(cx: &Cx, t: &Table) -> Result<SysctlConfig> {
    t.check_keys(cx, SYSCTL_KEYS)?;
    let d = SysctlConfig::default();
    let pct = |name: &str, default: u32| -> Result<u32> {
        Ok(t.int(cx, name, 0, 100)?.map_or(default, |n| n as u32))
    };
    let u32_field = |name: &str, default: u32| -> Result<u32> {
        Ok(t.int(cx, name, 0, U32_MAX)?.map_or(default, |n| n as u32))
    };
    let s = SysctlConfig {
        dirty_ratio: pct("dirty_ratio", d.dirty_ratio)?,
        dirty_background_ratio: pct("dirty_background_ratio", d.dirty_background_ratio)?,
        dirty_bytes: t
            .int(cx, "dirty_bytes", 0, i64::MAX)?
            .map_or(0, |n| n as u64),
        dirty_background_bytes: t
            .int(cx, "dirty_background_bytes", 0, i64::MAX)?
            .map_or(0, |n| n as u64),
        dirty_expire_centisecs: u32_field("dirty_expire_centisecs", d.dirty_expire_centisecs)?,
        dirty_writeback_centisecs: u32_field(
            "dirty_writeback_centisecs",
            d.dirty_writeback_centisecs,
        )?,
        swappiness: pct("swappiness", d.swappiness)?,
        laptop_mode: t.bool(cx, "laptop_mode")?.unwrap_or(false),
    };
    if s.dirty_bytes != 0 && s.dirty_bytes < 8192 {
        return Err(t.err_at(
            cx,
            "dirty_bytes",
            format!(
                "must be 0 (use dirty_ratio) or at least 8192 (2 pages) (got {})",
                s.dirty_bytes
            ),
        ));
    }
    if s.dirty_ratio == 0 && s.dirty_bytes == 0 {
        return Err(t.err_at(
            cx,
            "dirty_ratio",
            "dirty_ratio = 0 together with dirty_bytes = 0 leaves no dirty limit; \
             set dirty_ratio to 1..=100 or dirty_bytes to at least 8192"
                .to_string(),
        ));
    }
    Ok(s)
}

fn run(cx: &Cx, t: &Table) -> Result<RunConfig> {
    t.check_keys(cx, RUN_KEYS)?;
    let d = RunConfig::default();
    Ok(RunConfig {
        seed: t.int(cx, "seed", 0, i64::MAX)?.map_or(d.seed, |n| n as u64),
        runs: t.int(cx, "runs", 1, 1000)?.map_or(d.runs, |n| n as u32),
        time_limit_s: t
            .int(cx, "time_limit_s", 1, i64::MAX)?
            .map_or(d.time_limit_s, |n| n as u64),
    })
}
