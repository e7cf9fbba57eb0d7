//! `[[task]]` and `[swap]` tables: which program a command line runs, and
//! that the files it writes are on a mounted filesystem.

use super::{Cx, Result, Table, U32_MAX};
use crate::scenario::{DeviceConfig, FsConfig, Program, SwapConfig, TaskConfig};
use crate::workload::dd::parse_dd;
use crate::workload::fsmark::parse_fsmark;
use crate::workload::iozone::parse_iozone;
use crate::workload::synthetic::{parse_mapwrite, parse_memtouch};

const TASK_KEYS: &[&str] = &["after", "command", "name"];
const SWAP_KEYS: &[&str] = &["device", "size_mib"];
const PROGRAMS: &[&str] = &["dd", "fs_mark", "memtouch", "mapwrite", "iozone"];

pub(super) fn swap(cx: &Cx, t: &Table, devices: &[DeviceConfig]) -> Result<SwapConfig> {
    t.check_keys(cx, SWAP_KEYS)?;
    let (device, f) = match t.string(cx, "device")? {
        Some(d) => d,
        None => return Err(t.missing(cx, "device", "the name of a [[device]]")),
    };
    let Some(dev) = devices.iter().find(|d| d.name == device) else {
        let names: Vec<&str> = devices.iter().map(|d| d.name.as_str()).collect();
        return Err(f.not_one_of(cx, "device", &device, &names));
    };
    let size_mib = match t.int(cx, "size_mib", 1, U32_MAX)? {
        Some(n) => n as u64,
        None => return Err(t.missing(cx, "size_mib", "the swap partition size in MiB")),
    };
    if size_mib > dev.capacity_gib * 1024 / 2 {
        return Err(t.err_at(
            cx,
            "size_mib",
            format!(
                "{size_mib} MiB of swap is more than half of device `{device}` ({} GiB)",
                dev.capacity_gib
            ),
        ));
    }
    Ok(SwapConfig { device, size_mib })
}

/// The program name of a command line (last path component of word 0).
fn program_name(command: &str) -> String {
    let first = command.split_whitespace().next().unwrap_or("");
    first.rsplit('/').next().unwrap_or(first).to_string()
}

pub(super) fn task(
    cx: &Cx,
    t: &Table,
    index: usize,
    filesystems: &[FsConfig],
    earlier: &[TaskConfig],
) -> Result<TaskConfig> {
    t.check_keys(cx, TASK_KEYS)?;
    let name = t
        .string(cx, "name")?
        .map_or_else(|| format!("task{index}"), |(n, _)| n);
    let after = match t.string(cx, "after")? {
        None => None,
        Some((a, f)) => {
            if !earlier.iter().any(|e| e.name == a) {
                let names: Vec<&str> = earlier.iter().map(|e| e.name.as_str()).collect();
                let message = if names.is_empty() {
                    format!("`{a}` is not an earlier task: this is the first [[task]]")
                } else {
                    format!(
                        "`{a}` is not the name of an earlier task; earlier tasks: {}",
                        names.join(", ")
                    )
                };
                return Err(cx.err(f.span, &f.key, message));
            }
            Some(a)
        }
    };
    let Some((command, f)) = t.string(cx, "command")? else {
        return Err(t.missing(
            cx,
            "command",
            "e.g. command = \"dd if=/dev/zero of=disk/file bs=1M count=100\"",
        ));
    };
    let bad = |message: String| cx.err(f.span, &f.key, message);
    let (program, files): (Program, Vec<(&str, String)>) = match program_name(&command).as_str() {
        "dd" => {
            let dd = parse_dd(&command).map_err(bad)?;
            let out = dd.output.clone();
            (Program::Dd(dd), vec![("dd output of=", out)])
        }
        "fs_mark" => {
            let fm = parse_fsmark(&command).map_err(bad)?;
            let dirs = fm
                .dirs
                .iter()
                .map(|d| {
                    (
                        "fs_mark directory -d ",
                        d.trim_start_matches('/').to_string(),
                    )
                })
                .collect();
            (Program::FsMark(fm), dirs)
        }
        "memtouch" => (
            Program::MemTouch(parse_memtouch(&command).map_err(bad)?),
            vec![],
        ),
        "mapwrite" => {
            let mw = parse_mapwrite(&command).map_err(bad)?;
            let file = mw.file.clone();
            (Program::MapWrite(mw), vec![("mapwrite file ", file)])
        }
        "iozone" => {
            let io = parse_iozone(&command).map_err(bad)?;
            let file = io.file.clone();
            (Program::Iozone(io), vec![("iozone file -f ", file)])
        }
        other => {
            return Err(bad(format!(
                "unknown program `{other}`; allowed: {}",
                PROGRAMS.join(", ")
            )))
        }
    };
    for (what, path) in files {
        let on_fs = filesystems.iter().any(|fs| {
            path.strip_prefix(fs.mount.as_str())
                .and_then(|rest| rest.strip_prefix('/'))
                .is_some_and(|file| !file.is_empty())
        });
        if !on_fs {
            let mounts: Vec<String> = filesystems
                .iter()
                .map(|fs| format!("{}/", fs.mount))
                .collect();
            return Err(bad(format!(
                "{what}{path} is not on any filesystem; it must be a file under one of \
                 the mounts: {}",
                mounts.join(", ")
            )));
        }
    }
    Ok(TaskConfig {
        name,
        command,
        program,
        after,
    })
}
