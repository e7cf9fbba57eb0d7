//! `[[task]]` and `[swap]` tables: which program a command line runs, and
//! that the files it writes are on a mounted filesystem.

use super::{Cx, Table};
use crate::mm::page::{MAX_INODES, MAX_PAGE_INDEX};
use crate::scenario::error::{echo, echo_words};
use crate::scenario::{DeviceConfig, FsConfig, Program, SwapConfig, TaskConfig};
use crate::workload::dd::parse_dd;
use crate::workload::fsmark::parse_fsmark;
use crate::workload::iozone::parse_iozone;
use crate::workload::sync::parse_sync;
use crate::workload::synthetic::{parse_mapwrite, parse_memtouch};

/// A task's program and the files it writes (what, path).
type ProgramAndFiles<'a> = (Program, Vec<(&'a str, String)>);

const PROGRAMS: &[&str] = &["dd", "fs_mark", "memtouch", "mapwrite", "iozone", "sync"];

/// `[swap]`: on a defined device, at most half of it. (The schema's range
/// of its size, at most 1 TiB, keeps its slots, at 4 KiB pages or more,
/// within a frame's 28-bit page index: asserted below.)
pub(super) fn swap(cx: &Cx, t: &Table, devices: &[DeviceConfig]) -> Option<SwapConfig> {
    let (device, f) = t.str("device")?;
    let Some(dev) = devices.iter().find(|d| d.name == device) else {
        let names: Vec<&str> = devices.iter().map(|d| d.name.as_str()).collect();
        cx.report(
            f.span,
            &f.key,
            format!(
                "no [[device]] named `{}`; allowed: {}",
                echo(device),
                names.join(", ")
            ),
        );
        return None;
    };
    let size_mib = t.int("size_mib")? as u64;
    let half = dev.capacity_gib * 1024 / 2;
    if dev.capacity_gib > 0 && size_mib > half {
        t.report(
            cx,
            "size_mib",
            format!(
                "{size_mib} MiB of swap is more than half of device `{}` ({} GiB); \
                 allowed: 1 to {half} MiB",
                echo(device),
                dev.capacity_gib
            ),
        );
    }
    Some(SwapConfig {
        device: device.to_string(),
        size_mib,
    })
}

const _: () = assert!((1u64 << 20) * 1024 / 4 <= MAX_PAGE_INDEX as u64 + 1);

/// The program name of a command line (last path component of word 0).
fn program_name(command: &str) -> String {
    let first = command.split_whitespace().next().unwrap_or("");
    first.rsplit('/').next().unwrap_or(first).to_string()
}

/// `[[task]]` tables; a task whose command is wrong is left out (its name
/// still counts for later tasks' `after`).
pub(super) fn tasks(
    cx: &Cx,
    tables: &[Table],
    filesystems: &[FsConfig],
    all_fs: bool,
    nr_nodes: Option<usize>,
    unit_kib: u64,
) -> Vec<TaskConfig> {
    let mut names: Vec<String> = Vec::new();
    let mut out = Vec::new();
    let mut files = 0u64;
    for (index, t) in tables.iter().enumerate() {
        let name = t
            .str("name")
            .map_or_else(|| format!("task{index}"), |(n, _)| n.to_string());
        let after = t.str("after").map(|(a, f)| {
            if !names.iter().any(|e| e == a) {
                let message = if names.is_empty() {
                    format!(
                        "`{}` is not an earlier task: this is the first [[task]]; \
                         allowed: the name of an earlier task",
                        echo(a)
                    )
                } else {
                    format!(
                        "`{}` is not the name of an earlier task; allowed: {}",
                        echo(a),
                        names.join(", ")
                    )
                };
                cx.report(f.span, &f.key, message);
            }
            a.to_string()
        });
        names.push(name.clone());
        let text_pages = t.int_or_default("text_pages") as u32;
        let node = t.int("node").map(|n| n as u32);
        if let (Some(n), Some(nodes)) = (node, nr_nodes) {
            if n as usize >= nodes {
                let allowed = if nodes == 1 {
                    "0 (the machine has one node; give it [[machine.node]] tables for more)"
                        .to_string()
                } else {
                    format!("0 to {} (the machine's [[machine.node]] tables)", nodes - 1)
                };
                t.report(cx, "node", format!("no node {n}; allowed: {allowed}"));
            }
        }
        if unit_kib > 4 && text_pages > 0 {
            t.report(
                cx,
                "text_pages",
                format!(
                    "{text_pages} pages of program text at unit_kib = {unit_kib}; allowed: 0 \
                     (program text needs page granularity, unit_kib = 4)"
                ),
            );
        }
        if let Some((program, command)) = program(cx, t, filesystems, all_fs, unit_kib) {
            files += files_created(&program);
            if files > MAX_TASK_FILES {
                t.report(
                    cx,
                    "command",
                    format!(
                        "the tasks up to this one create {files} files; allowed: at most \
                         {MAX_TASK_FILES} files in a run"
                    ),
                );
            }
            let text_file = t
                .str("text_file")
                .map_or_else(|| program_name(&command), |(f, _)| f.to_string());
            out.push(TaskConfig {
                name,
                command,
                program,
                after,
                text_pages,
                text_file,
                node,
            });
        }
    }
    out
}

/// The program of a task's command line, with the command.
fn program(
    cx: &Cx,
    t: &Table,
    filesystems: &[FsConfig],
    all_fs: bool,
    unit_kib: u64,
) -> Option<(Program, String)> {
    let (command, f) = t.str("command")?;
    let bad = |message: String| cx.report(f.span, &f.key, message);
    let parsed: Result<ProgramAndFiles, String> = match program_name(command).as_str() {
        "dd" => parse_dd(command).map(|dd| {
            let out = dd.output.clone();
            (Program::Dd(dd), vec![("dd output of=", out)])
        }),
        "fs_mark" => parse_fsmark(command).map(|fm| {
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
        }),
        "memtouch" => parse_memtouch(command).map(|m| (Program::MemTouch(m), vec![])),
        "mapwrite" => parse_mapwrite(command).map(|mw| {
            let file = mw.file.clone();
            (Program::MapWrite(mw), vec![("mapwrite file ", file)])
        }),
        "iozone" => parse_iozone(command).map(|io| {
            let file = io.file.clone();
            (Program::Iozone(io), vec![("iozone file -f ", file)])
        }),
        "sync" => parse_sync(command).map(|s| (Program::Sync(s), vec![])),
        other => Err(format!(
            "unknown program `{}`; allowed: {} (the programs a task may run)",
            echo(other),
            PROGRAMS.join(", ")
        )),
    };
    let (program, files) = match parsed {
        Ok(p) => p,
        Err(message) => {
            bad(echo_words(&message));
            return None;
        }
    };
    if unit_kib > 4 {
        if let Err(message) = coarse_unit_allows(&program, filesystems, unit_kib) {
            bad(message);
            return None;
        }
    }
    if let Err(message) = fits_in_a_frame(&program, unit_kib) {
        bad(message);
        return None;
    }
    let mut ok = true;
    for (what, path) in files {
        let on_fs = filesystems.iter().any(|fs| {
            path.strip_prefix(fs.mount.as_str())
                .and_then(|rest| rest.strip_prefix('/'))
                .is_some_and(|file| !file.is_empty())
        });
        if !on_fs && all_fs {
            let mounts: Vec<String> = filesystems
                .iter()
                .map(|fs| format!("{}/", fs.mount))
                .collect();
            bad(format!(
                "{what}{} is not on any filesystem; allowed: a file under one of the \
                 mounts: {}",
                echo(&path),
                mounts.join(", ")
            ));
            ok = false;
        }
    }
    ok.then(|| (program, command.to_string()))
}

/// Files a run's tasks may create in all: a frame names its inode in 28
/// bits ([`MAX_INODES`]), less a reserve for the inodes the machine
/// makes itself (filesystem metadata, program text, swap, directories).
pub const MAX_TASK_FILES: u64 = MAX_INODES as u64 - (1 << 20);

/// The files a program creates.
fn files_created(program: &Program) -> u64 {
    match program {
        Program::FsMark(f) => f.total_files(),
        Program::Sync(_) => 0,
        _ => 1,
    }
}

/// Every file or memory region a program writes fits in the page
/// indices a frame holds ([`MAX_PAGE_INDEX`], 28 bits: 1 TiB at 4 KiB),
/// and its files in [`MAX_TASK_FILES`].
fn fits_in_a_frame(program: &Program, unit_kib: u64) -> Result<(), String> {
    let (what, bytes) = match program {
        Program::Dd(d) => ("dd writes", d.total_bytes()),
        Program::FsMark(f) => ("fs_mark's files are", f.file_size_bytes),
        Program::MemTouch(m) => ("memtouch touches", m.size_bytes),
        Program::MapWrite(m) => ("mapwrite maps", m.size_bytes),
        Program::Iozone(i) => ("iozone's file is", i.file_bytes),
        Program::Sync(_) => return Ok(()),
    };
    let max_pages = u64::from(MAX_PAGE_INDEX) + 1;
    let max_mib = max_pages * unit_kib / 1024;
    if bytes.div_ceil(unit_kib * 1024) > max_pages {
        return Err(format!(
            "{what} {} MiB, more than a file's page index holds; allowed: at most {max_mib} \
             MiB at unit_kib = {unit_kib} ({max_pages} pages; a coarser unit_kib holds more)",
            bytes.div_ceil(1 << 20)
        ));
    }
    let files = files_created(program);
    if files > MAX_TASK_FILES {
        return Err(format!(
            "fs_mark creates {files} files; allowed: at most {MAX_TASK_FILES} files in a run"
        ));
    }
    Ok(())
}

/// At a unit coarser than 4 KiB ([`crate::mm::unit`]), a task may run
/// `dd` writing whole units (its `bs` a multiple of the unit) to a block
/// filesystem, or `sync`. The other programs work page by page (4 KiB
/// files, records and touches, FUSE's 4 KiB WRITE requests) and need page
/// granularity.
fn coarse_unit_allows(
    program: &Program,
    filesystems: &[FsConfig],
    unit_kib: u64,
) -> Result<(), String> {
    let allowed = format!(
        "allowed at unit_kib = {unit_kib}: dd with bs a multiple of {unit_kib} KiB to an \
         xfs, ext4 or btrfs file, and sync; the other programs need unit_kib = 4"
    );
    match program {
        Program::Dd(dd) => {
            let unit_bytes = unit_kib * 1024;
            if !dd.bs_bytes.is_multiple_of(unit_bytes) {
                return Err(format!(
                    "dd bs={} is not a multiple of the {unit_kib} KiB unit; {allowed}",
                    dd.bs_bytes
                ));
            }
            let fuse = filesystems
                .iter()
                .any(|fs| fs.fs_type == crate::fs::FsType::FuseNtfs && fs.holds(&dd.output));
            if fuse {
                return Err(format!(
                    "dd writes to a FUSE filesystem, whose requests are 4 KiB pages; {allowed}"
                ));
            }
            Ok(())
        }
        Program::Sync(_) => Ok(()),
        Program::FsMark(_) => Err(format!("fs_mark at unit_kib = {unit_kib}; {allowed}")),
        Program::MemTouch(_) => Err(format!("memtouch at unit_kib = {unit_kib}; {allowed}")),
        Program::MapWrite(_) => Err(format!("mapwrite at unit_kib = {unit_kib}; {allowed}")),
        Program::Iozone(_) => Err(format!("iozone at unit_kib = {unit_kib}; {allowed}")),
    }
}
