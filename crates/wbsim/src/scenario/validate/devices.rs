//! `[[device]]` and `[[fs]]` tables: unique device names, raid0 members,
//! filesystems on defined devices at unique mounts.

use super::{Cx, Table};
use crate::scenario::error::echo;
use crate::scenario::{DeviceConfig, DeviceModel, FsConfig, FsType};

/// At most this many `[[device]]` tables, and as many `[[fs]]`: far more
/// than any machine the model describes, and it keeps every backing
/// device's number within an inode's `u16` (devices plus a FUSE bdi per
/// filesystem).
pub const MAX_DEVICES: usize = 256;
pub const MAX_FILESYSTEMS: usize = 256;

/// Report, at key `key` of the first table past `max`, that the file has
/// more `[[what]]` tables than allowed (the extra ones are not read).
fn refuse_tables_beyond(cx: &Cx, tables: &[Table], max: usize, what: &str, key: &str) {
    if let Some(t) = tables.get(max) {
        let message = format!("{} [[{what}]] tables; allowed: at most {max}", tables.len());
        t.report(cx, key, message);
    }
}

/// The devices whose name is valid and unique, in file order (the others
/// are reported). Devices with other problems are kept, with defaults, so
/// that references to them are not reported again.
pub(super) fn device_list(cx: &Cx, tables: &[Table]) -> Vec<DeviceConfig> {
    let mut devices: Vec<DeviceConfig> = Vec::new();
    refuse_tables_beyond(cx, tables, MAX_DEVICES, "device", "name");
    for t in tables.iter().take(MAX_DEVICES) {
        let Some((name, f)) = t.str("name") else {
            continue;
        };
        if let Some(first) = devices.iter().position(|o| o.name == name) {
            cx.report(
                f.span,
                &f.key,
                format!(
                    "duplicate device name `{}` (also used by device[{first}]); \
                     allowed: a name no other device has",
                    echo(name)
                ),
            );
            continue;
        }
        let d = device(cx, t, name, &devices);
        devices.push(d);
    }
    devices
}

fn device(cx: &Cx, t: &Table, name: &str, earlier: &[DeviceConfig]) -> DeviceConfig {
    let model = match t.str("model").map(|(m, _)| m) {
        Some("disk") => DeviceModel::Disk,
        Some("ssd") => DeviceModel::Ssd,
        Some("raid0") => DeviceModel::Raid0,
        _ => DeviceModel::UsbStick,
    };
    if model == DeviceModel::Raid0 {
        return raid0(cx, t, name, earlier);
    }
    DeviceConfig {
        name: name.to_string(),
        model,
        capacity_gib: t.int_or_default("capacity_gib") as u64,
        seq_write_mib_per_s: t.float_or_default("seq_write_mib_per_s"),
        max_request_kib: t.int_or_default("max_request_kib") as u32,
        command_overhead_us: t.float_or_default("command_overhead_us"),
        small_write_penalty_us: t.float_or_default("small_write_penalty_us"),
        nr_requests: t.int_or_default("nr_requests") as u32,
        boot_nr_requests: t
            .int("boot_nr_requests")
            .unwrap_or(t.int_or_default("nr_requests")) as u32,
        hw_queues: t.int_or_default("hw_queues") as u32,
        registered_before_start_ms: t.int_or_default("registered_before_start_ms") as u64,
        queue_depth: t.int_or_default("queue_depth") as u32,
        channels: t.int_or_default("channels") as u32,
        members: Vec::new(),
        chunk_kib: 0,
    }
}

/// A `model = "raid0"` device: `members` names distinct earlier devices
/// that are not raid0; capacity and speed are summed over them.
fn raid0(cx: &Cx, t: &Table, name: &str, earlier: &[DeviceConfig]) -> DeviceConfig {
    let mut members: Vec<&DeviceConfig> = Vec::new();
    if let Some((names, f)) = t.names("members") {
        for m in names {
            let Some(d) = earlier.iter().find(|d| d.name == m) else {
                let defined: Vec<&str> = earlier.iter().map(|d| d.name.as_str()).collect();
                cx.report(
                    f.span,
                    &f.key,
                    format!(
                        "no earlier [[device]] named `{}` (members must be defined before \
                         the array); allowed: {}",
                        echo(m),
                        defined.join(", ")
                    ),
                );
                continue;
            };
            if d.model == DeviceModel::Raid0 || members.iter().any(|o| o.name == m) {
                cx.report(
                    f.span,
                    &f.key,
                    format!(
                        "member `{}` is a raid0 array or listed twice; allowed: distinct \
                         ssd, disk or usb-stick devices",
                        echo(m)
                    ),
                );
                continue;
            }
            members.push(d);
        }
    }
    let n = members.len() as u64;
    let first = members.first();
    DeviceConfig {
        name: name.to_string(),
        model: DeviceModel::Raid0,
        capacity_gib: first.map_or(0, |d| d.capacity_gib * n),
        seq_write_mib_per_s: first.map_or(0.0, |d| d.seq_write_mib_per_s * n as f64),
        max_request_kib: first.map_or(0, |d| d.max_request_kib),
        command_overhead_us: 0.0,
        small_write_penalty_us: 0.0,
        nr_requests: first.map_or(0, |d| d.nr_requests),
        boot_nr_requests: first.map_or(0, |d| d.boot_nr_requests),
        hw_queues: first.map_or(1, |d| d.hw_queues),
        registered_before_start_ms: first.map_or(0, |d| d.registered_before_start_ms),
        queue_depth: 0,
        channels: 0,
        members: members.iter().map(|d| d.name.clone()).collect(),
        chunk_kib: t.int_or_default("chunk_kib") as u32,
    }
}

/// The filesystems whose mount is valid and unique; filesystems with other
/// problems are kept with defaults so that tasks' files are not reported
/// again.
pub(super) fn filesystems(cx: &Cx, tables: &[Table], devices: &[DeviceConfig]) -> Vec<FsConfig> {
    let mut out: Vec<FsConfig> = Vec::new();
    let mut paths: Vec<&str> = Vec::new();
    refuse_tables_beyond(cx, tables, MAX_FILESYSTEMS, "fs", "mount");
    for t in tables.iter().take(MAX_FILESYSTEMS) {
        let fs_type = match t.str("type").map(|(s, _)| s) {
            Some("ext4") => FsType::Ext4,
            Some("btrfs") => FsType::Btrfs,
            Some("fuse-ntfs") => FsType::FuseNtfs,
            _ => FsType::Xfs,
        };
        let device = match t.str("device") {
            Some((d, f)) if !devices.iter().any(|x| x.name == d) => {
                let names: Vec<&str> = devices.iter().map(|x| x.name.as_str()).collect();
                cx.report(
                    f.span,
                    &f.key,
                    format!(
                        "no [[device]] named `{}`; allowed: {}",
                        echo(d),
                        names.join(", ")
                    ),
                );
                String::new()
            }
            Some((d, _)) => d.to_string(),
            None => String::new(),
        };
        let Some((mount, f)) = t.str("mount") else {
            continue;
        };
        if mount.starts_with('/') || mount.ends_with('/') {
            cx.report(
                f.span,
                &f.key,
                format!(
                    "{:?} is not a relative path; allowed: a path without leading or \
                     trailing '/', e.g. mount = \"disk\"",
                    echo(mount)
                ),
            );
            continue;
        }
        if let Some(other) = out.iter().position(|e| e.mount == mount).map(|i| paths[i]) {
            cx.report(
                f.span,
                &f.key,
                format!(
                    "mount `{}` is already used by {other}; allowed: a mount no other \
                     filesystem has",
                    echo(mount)
                ),
            );
            continue;
        }
        paths.push(&t.path);
        out.push(FsConfig {
            fs_type,
            device,
            mount: mount.to_string(),
            ag_count: t.int_or_default("ag_count") as u32,
            inode_size: t.int_or_default("inode_size") as u32,
        });
    }
    out
}
