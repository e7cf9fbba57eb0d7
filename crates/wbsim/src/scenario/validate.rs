//! Conversion of the spanned TOML tree into a validated [`Scenario`].
//!
//! Keys, types, ranges and defaults come from [`super::schema`] (checked in
//! `table.rs`); this module and its children add the checks that involve
//! several keys. Every problem is recorded and validation goes on, so that
//! a file's problems are reported all at once.

use super::error::Problem;
use super::schema::MAX_FRAMES;
use super::tree::{Node, Value};
use super::{
    IrqDelivery, MachineConfig, NodeConfig, RunConfig, Scenario, ScenarioError, SysctlConfig,
    ZoneConfig, ZoneKind,
};
pub(super) mod devices;
mod table;
pub(super) mod tasks;

use devices::{device_list, filesystems};
use table::{Cx, Table};
use tasks::{swap, tasks};

/// Validate the whole document.
pub(super) fn scenario(
    root: &Node,
    text: &str,
    file: &str,
    name: String,
) -> Result<Scenario, ScenarioError> {
    let cx = Cx::new(text, file);
    let sc = build(&cx, root, name);
    let mut problems = cx.into_problems();
    match sc {
        Some(sc) if problems.is_empty() => Ok(sc),
        _ => {
            if problems.is_empty() {
                problems.push(Problem {
                    file: file.to_string(),
                    line: None,
                    column: None,
                    key: None,
                    message: "not a scenario; allowed: a TOML table".to_string(),
                });
            }
            Err(ScenarioError::new(problems))
        }
    }
}

/// The scenario, with every problem recorded in `cx` (the value is only
/// meaningful when there are none).
fn build(cx: &Cx, root: &Node, name: String) -> Option<Scenario> {
    let root = Table::new(cx, root, String::new(), "")?;
    let kernel = root.str("kernel").map(|(k, _)| k.to_string());
    let machine = root.table(cx, "machine").map(|t| machine(cx, &t));
    let devices = device_list(cx, &root.array_of_tables(cx, "device"));
    let filesystems = filesystems(cx, &root.array_of_tables(cx, "fs"), &devices);
    // Files of tasks are checked against the mounts only when every [[fs]]
    // is valid, so that a bad mount is not reported again at each task.
    let all_fs = matches!(root.field("fs").map(|f| f.value),
        Some(Value::Array(items)) if items.len() == filesystems.len());
    let sysctl = root
        .table(cx, "sysctl")
        .map_or_else(SysctlConfig::default, |t| sysctl(cx, &t));
    let swap = root.table(cx, "swap").and_then(|t| swap(cx, &t, &devices));
    let nr_nodes = machine.as_ref().map(|m| m.node_layout().len());
    let task_tables = root.array_of_tables(cx, "task");
    let unit_kib = machine.as_ref().map_or(4, |m| m.unit_kib);
    let tasks = tasks(cx, &task_tables, &filesystems, all_fs, nr_nodes, unit_kib);
    let run = root
        .table(cx, "run")
        .map_or_else(RunConfig::default, |t| run(&t));
    let cpu_cost = root.table(cx, "cpu_cost").map_or_else(Vec::new, |t| {
        t.entries
            .iter()
            .filter_map(|e| Some((e.key.clone(), t.int(&e.key)? as u64)))
            .collect()
    });
    Some(Scenario {
        name,
        kernel: kernel?,
        machine: machine?,
        devices,
        filesystems,
        sysctl,
        swap,
        tasks,
        run,
        cpu_cost,
    })
}

fn machine(cx: &Cx, t: &Table) -> MachineConfig {
    let irq_delivery = match t.str_or_default("irq_delivery") {
        Some("round-robin") => IrqDelivery::RoundRobin,
        _ => IrqDelivery::FirstCpu,
    };
    let unit_kib = t.int_or_default("unit_kib") as u64;
    let (zones, zone_tables, nodes, zones_ok) = machine_zones(cx, t, unit_kib);
    let mem_mib: u64 = zones.iter().map(|z| z.size_mib).sum();
    let total_mib = t.int("total_mib").map(|n| n as u64);
    let frames = mem_mib * 1024 / unit_kib;
    if zones_ok && !zones.is_empty() && t.ok("unit_kib") && frames > MAX_FRAMES {
        t.report(
            cx,
            "zone",
            format!(
                "the zones add up to {mem_mib} MiB, {frames} page frames of {unit_kib} KiB; \
                 allowed: at most {MAX_FRAMES} frames ({} MiB at unit_kib = {unit_kib}; a \
                 larger unit_kib allows more)",
                MAX_FRAMES * unit_kib / 1024
            ),
        );
    }
    let min_free_kbytes = t.int("min_free_kbytes").map(|n| n as u64);
    let mem_kib = mem_mib * 1024;
    if let Some(kb) = min_free_kbytes.filter(|&kb| zones_ok && mem_kib > 0 && kb * 3 / 2 >= mem_kib)
    {
        t.report(
            cx,
            "min_free_kbytes",
            format!(
                "{kb} KiB leaves nothing to allocate: the high watermark (1.5 x min) must \
                 stay below the zones' {mem_kib} KiB; allowed: 128 to {}",
                (mem_kib * 2).div_ceil(3).saturating_sub(1).max(128)
            ),
        );
    }
    if let Some(total) = total_mib.filter(|_| zones_ok) {
        for (zt, z) in zone_tables.iter().zip(&zones) {
            if z.size_mib > total {
                zt.report(
                    cx,
                    "size_mib",
                    format!(
                        "zone {} is {} MiB, larger than total_mib = {total}; allowed: at \
                         most total_mib",
                        z.kind.as_str(),
                        z.size_mib
                    ),
                );
            }
        }
        if mem_mib != total && !zones.is_empty() {
            let sizes: Vec<String> = zones
                .iter()
                .map(|z| format!("{} {}", z.kind.as_str(), z.size_mib))
                .collect();
            t.report(
                cx,
                "total_mib",
                format!(
                    "zone sizes sum to {mem_mib} MiB ({}) but total_mib = {total}; \
                     allowed: the sum of the zone sizes",
                    sizes.join(" + ")
                ),
            );
        }
    }
    let node_cpus: u32 = nodes.iter().map(|n| n.cpus).sum();
    let cpus = t.int_or_default("cpus") as u32;
    if !nodes.is_empty() && t.field("cpus").is_some() && t.ok("cpus") && cpus != node_cpus {
        t.report(
            cx,
            "cpus",
            format!(
                "{cpus} CPUs, but the [[machine.node]] tables have {node_cpus}; allowed: \
                 {node_cpus} (their sum), or leave cpus out"
            ),
        );
    }
    MachineConfig {
        cpus: if nodes.is_empty() { cpus } else { node_cpus },
        zones,
        nodes,
        min_free_kbytes,
        hz: t.int_or_default("hz") as u32,
        irq_delivery,
        idle_wakeup_ns: t.int_or_default("idle_wakeup_us") as u64 * 1_000,
        boot_dirty_limit_pages: t.int("boot_dirty_limit_pages").map(|n| n as u64),
        unit_kib,
    }
}

/// The machine's zones: `[[machine.zone]]`, or every node's
/// `[[machine.node.zone]]` in node order (with the nodes); whether all
/// of them are valid, so that sums over them mean something.
fn machine_zones<'a>(
    cx: &Cx,
    t: &Table<'a>,
    unit_kib: u64,
) -> (Vec<ZoneConfig>, Vec<Table<'a>>, Vec<NodeConfig>, bool) {
    let node_tables = t.array_of_tables(cx, "node");
    if t.field("node").is_none() {
        let zone_tables = t.array_of_tables(cx, "zone");
        if t.field("zone").is_none() {
            t.report(
                cx,
                "zone",
                "missing required table; allowed: one or more [[machine.zone]] tables, \
                 or [[machine.node]] tables each with [[machine.node.zone]] tables"
                    .to_string(),
            );
        }
        let (zones, ok) = zone_list(cx, t, "zone", &zone_tables, unit_kib);
        return (zones, zone_tables, Vec::new(), ok);
    }
    if t.field("zone").is_some() {
        t.report(
            cx,
            "zone",
            "[[machine.zone]] together with [[machine.node]]; allowed: one of them (a \
             node's zones are [[machine.node.zone]] tables)"
                .to_string(),
        );
    }
    let mut ok = matches!(t.field("node").map(|f| f.value),
        Some(Value::Array(items)) if items.len() == node_tables.len());
    let (mut zones, mut all_tables, mut nodes) = (Vec::new(), Vec::new(), Vec::new());
    for (nid, nt) in node_tables.into_iter().enumerate() {
        let tables = nt.array_of_tables(cx, "zone");
        let (node_zones, node_ok) = zone_list(cx, &nt, "zone", &tables, unit_kib);
        ok &= node_ok;
        // Nodes hold consecutive physical memory, node 0 the lowest: a
        // node's zones start no lower than where the previous node's end
        // (both may have DMA32 below 4 GiB), and DMA (the first 16 MiB)
        // is node 0's.
        let floor = zones.last().map(|z: &ZoneConfig| z.kind);
        for (zt, z) in tables.iter().zip(&node_zones).take(1) {
            let below = floor.is_some_and(|f| z.kind < f) || (nid > 0 && z.kind == ZoneKind::Dma);
            if below {
                let allowed = match floor {
                    Some(ZoneKind::Dma) | None => "DMA32 or Normal".to_string(),
                    Some(f) => format!("{} or above", f.as_str()),
                };
                zt.report(
                    cx,
                    "name",
                    format!(
                        "zone `{}` on node {nid} lies below node {}'s memory; allowed: \
                         {allowed} (nodes hold memory in node order, DMA is node 0's)",
                        z.kind.as_str(),
                        nid - 1
                    ),
                );
                ok = false;
            }
        }
        let cpus = nt.int("cpus");
        ok &= cpus.is_some();
        nodes.push(NodeConfig {
            cpus: cpus.unwrap_or(1) as u32,
            zones: node_zones.len(),
        });
        zones.extend(node_zones);
        all_tables.extend(tables);
    }
    (zones, all_tables, nodes, ok)
}

/// The zones of one `[[...zone]]` array, in ascending order, each at most
/// once; whether every table is valid.
/// The zones of `t`'s `name` tables; `kernel_kib` must be whole pages of
/// the machine's `unit_kib` (4 unless the scenario sets a valid one).
fn zone_list(
    cx: &Cx,
    t: &Table,
    name: &str,
    zone_tables: &[Table],
    unit_kib: u64,
) -> (Vec<ZoneConfig>, bool) {
    let mut zones: Vec<ZoneConfig> = Vec::new();
    let items = match t.field(name).map(|f| f.value) {
        Some(Value::Array(items)) => items.len(),
        _ => 0,
    };
    let mut zones_ok = items == zone_tables.len();
    let mut prev: Option<ZoneKind> = None;
    for zt in zone_tables {
        let kind = zt.str("name").map(|(s, f)| {
            let kind = match s {
                "DMA" => ZoneKind::Dma,
                "DMA32" => ZoneKind::Dma32,
                _ => ZoneKind::Normal,
            };
            if let Some(p) = prev.filter(|&p| kind <= p) {
                let problem = if kind == p {
                    format!("duplicate zone `{}`", kind.as_str())
                } else {
                    format!("zone `{}` listed after `{}`", kind.as_str(), p.as_str())
                };
                cx.report(
                    f.span,
                    &f.key,
                    format!(
                        "{problem}; allowed: zones in ascending order DMA, DMA32, Normal, \
                         each at most once"
                    ),
                );
            }
            kind
        });
        prev = kind.or(prev);
        let size_mib = zt.int("size_mib").map(|n| n as u64);
        let kernel_mib = zt.int_or_default("kernel_mib") as u64;
        if let Some(size) = size_mib.filter(|&s| zt.ok("kernel_mib") && kernel_mib >= s) {
            zt.report(
                cx,
                "kernel_mib",
                format!(
                    "{kernel_mib} MiB held by the kernel leaves nothing of the {size} MiB \
                     zone; allowed: 0 to {} (less than size_mib)",
                    size - 1
                ),
            );
        }
        let kernel_kib = zt.int_or_default("kernel_kib") as u64;
        if zt.ok("kernel_kib") && !kernel_kib.is_multiple_of(unit_kib) {
            let unit_note = if unit_kib > 4 {
                format!(" (machine.unit_kib = {unit_kib})")
            } else {
                String::new()
            };
            zt.report(
                cx,
                "kernel_kib",
                format!(
                    "{kernel_kib} is not a multiple of {unit_kib}; allowed: whole {unit_kib} KiB \
                     pages{unit_note}"
                ),
            );
        } else if let Some(size) = size_mib.filter(|&s| {
            zt.ok("kernel_kib") && kernel_mib < s && kernel_mib * 1024 + kernel_kib >= s * 1024
        }) {
            zt.report(
                cx,
                "kernel_kib",
                format!(
                    "{kernel_mib} MiB and {kernel_kib} KiB held by the kernel leave nothing of \
                     the {size} MiB zone; allowed: 0 to {} KiB",
                    (size - kernel_mib) * 1024 - unit_kib
                ),
            );
        }
        let managed_mib = zt.int("managed_mib").map(|n| n as u64);
        if let (Some(size), Some(m)) = (size_mib, managed_mib.filter(|&m| size_mib < Some(m))) {
            zt.report(
                cx,
                "managed_mib",
                format!(
                    "{m} MiB managed is more than the {size} MiB zone; allowed: 1 to {size} \
                     (at most size_mib)"
                ),
            );
        }
        match (kind, size_mib) {
            (Some(kind), Some(size_mib))
                if zt.ok("kernel_mib") && zt.ok("kernel_kib") && zt.ok("managed_mib") =>
            {
                zones.push(ZoneConfig {
                    kind,
                    size_mib,
                    kernel_mib,
                    kernel_kib,
                    managed_mib,
                })
            }
            _ => zones_ok = false,
        }
    }
    (zones, zones_ok)
}

fn sysctl(cx: &Cx, t: &Table) -> SysctlConfig {
    let int = |name: &str| t.int_or_default(name);
    let s = SysctlConfig {
        dirty_ratio: int("dirty_ratio") as u32,
        dirty_background_ratio: int("dirty_background_ratio") as u32,
        dirty_bytes: int("dirty_bytes") as u64,
        dirty_background_bytes: int("dirty_background_bytes") as u64,
        dirty_expire_centisecs: int("dirty_expire_centisecs") as u32,
        dirty_writeback_centisecs: int("dirty_writeback_centisecs") as u32,
        swappiness: int("swappiness") as u32,
        laptop_mode: t.bool_or_default("laptop_mode"),
        watermark_scale_factor: int("watermark_scale_factor") as u32,
        watermark_boost_factor: int("watermark_boost_factor") as u32,
    };
    if s.dirty_bytes != 0 && s.dirty_bytes < 8192 {
        t.report(
            cx,
            "dirty_bytes",
            format!(
                "{} is below the kernel's minimum; allowed: 0 (use dirty_ratio) or \
                 8192 (2 pages) to {}",
                s.dirty_bytes,
                1u64 << 40
            ),
        );
    }
    if s.dirty_ratio == 0 && s.dirty_bytes == 0 && t.ok("dirty_ratio") && t.ok("dirty_bytes") {
        t.report(
            cx,
            "dirty_ratio",
            "dirty_ratio = 0 together with dirty_bytes = 0 leaves no dirty limit; \
             allowed: dirty_ratio 1 to 100, or dirty_bytes of at least 8192"
                .to_string(),
        );
    }
    s
}

fn run(t: &Table) -> RunConfig {
    RunConfig {
        seed: t.int_or_default("seed") as u64,
        runs: t.int_or_default("runs") as u32,
        time_limit_s: t.int_or_default("time_limit_s") as u64,
    }
}
