//! Every problem of a file at once, columns, echo limits, the ranges of
//! every number the schema declares, and what `load_scenario` refuses.

use super::schema::{Default, Kind, Type, SECTIONS};
use super::*;

/// A scenario with every section; each key appears at most once per section.
const SECTIONS_TEXT: &[(&str, &str)] = &[
    ("", "kernel = \"3.0-vanilla\"\n"),
    ("machine", "[machine]\ncpus = 2\n"),
    (
        "machine.zone",
        "[[machine.zone]]\nname = \"DMA32\"\nsize_mib = 64\n",
    ),
    (
        "device",
        "[[device]]\nname = \"d\"\nmodel = \"ssd\"\ncapacity_gib = 8\n\
         seq_write_mib_per_s = 100\nmax_request_kib = 512\n",
    ),
    (
        "fs",
        "[[fs]]\ntype = \"xfs\"\ndevice = \"d\"\nmount = \"m\"\n",
    ),
    ("sysctl", "[sysctl]\ndirty_ratio = 20\n"),
    ("swap", "[swap]\ndevice = \"d\"\nsize_mib = 64\n"),
    (
        "task",
        "[[task]]\nname = \"t\"\ncommand = \"dd if=/dev/zero of=m/f bs=4k count=1\"\n",
    ),
    ("run", "[run]\nseed = 1\n"),
    ("cpu_cost", "[cpu_cost]\n"),
];

/// The scenario with `line` set in section `path` (replacing the key's line
/// if the section has one).
fn with_key(path: &str, line: &str) -> String {
    let key = line.split(" = ").next().unwrap().trim();
    let mut text = String::new();
    // A key of a node's section: the machine has one node in place of
    // its [[machine.zone]].
    let sections = SECTIONS_TEXT.iter().flat_map(|&(p, body)| {
        if p == "machine.zone" && path.starts_with("machine.node") {
            vec![
                ("machine.node", "[[machine.node]]\ncpus = 2\n"),
                (
                    "machine.node.zone",
                    "[[machine.node.zone]]\nname = \"DMA32\"\nsize_mib = 64\n",
                ),
            ]
        } else {
            vec![(p, body)]
        }
    });
    for (p, body) in sections {
        let mut body: Vec<&str> = body.lines().collect();
        if p == path {
            body.retain(|l| !l.starts_with(&format!("{key} = ")));
            body.insert(usize::from(!p.is_empty()), line);
        }
        for l in body {
            text.push_str(l);
            text.push('\n');
        }
    }
    text
}

#[test]
fn the_all_sections_scenario_parses() {
    let sc = parse_scenario(&with_key("run", "runs = 2"), "all.toml").unwrap();
    assert_eq!(sc.run.runs, 2);
    assert_eq!(sc.swap.unwrap().size_mib, 64);
}

/// Each integer key of the schema just outside its range is an error that
/// names the key and the range, and the bounds themselves are accepted
/// (when no cross-key check forbids them).
#[test]
fn every_number_out_of_range_names_key_and_range() {
    for s in SECTIONS {
        let keys = s.keys.iter().copied().chain(
            s.named
                .iter()
                .flat_map(|n| n.names.iter().map(move |name| s.key(name).unwrap())),
        );
        for k in keys {
            let (below, above, allowed) = match k.ty {
                Type::Int { min, max, .. } => (
                    min.checked_sub(1).map(|n| n.to_string()),
                    max.checked_add(1).map(|n| n.to_string()),
                    format!("allowed: {min} to {max}"),
                ),
                Type::Float { min, max, .. } => (
                    Some(format!("{:?}", min - 1.0)),
                    Some(format!("{:?}", max * 2.0)),
                    "allowed: a finite number".to_string(),
                ),
                _ => continue,
            };
            // The base device is an ssd, the base filesystem xfs.
            if k.only
                .is_some_and(|(_, v)| !v.contains(&"ssd") && !v.contains(&"xfs"))
            {
                continue;
            }
            let full = match s.path {
                "" => k.name.to_string(),
                p => format!("{}.{}", indexed_path(p), k.name),
            };
            for value in [below, above].into_iter().flatten() {
                let text = with_key(s.path, &format!("{} = {value}", k.name));
                let e = parse_scenario(&text, "r.toml").unwrap_err();
                assert!(
                    e.problems
                        .iter()
                        .any(|p| p.key.as_deref() == Some(full.as_str())
                            && p.message.contains("out of range")
                            && p.message.contains(&allowed)),
                    "{full} = {value}: {e}"
                );
            }
        }
    }
}

/// A section's dotted path as problems name it: `[0]` after each array of
/// tables (`machine.node[0].zone[0]`).
fn indexed_path(path: &str) -> String {
    let mut out = String::new();
    for (i, part) in path.split('.').enumerate() {
        if i > 0 {
            out.push('.');
        }
        out.push_str(part);
        let prefix: Vec<&str> = path.split('.').take(i + 1).collect();
        let section = SECTIONS.iter().find(|s| s.path == prefix.join("."));
        if section.is_some_and(|s| s.kind == Kind::ArrayOfTables) {
            out.push_str("[0]");
        }
    }
    out
}

/// Defaults of the schema are what the validator fills in.
#[test]
fn schema_defaults_are_the_parsed_defaults() {
    let sc = parse_scenario(&with_key("run", "runs = 1"), "d.toml").unwrap();
    let d = &sc.devices[0];
    let got = |path: &str, key: &str| -> Option<f64> {
        Some(match (path, key) {
            ("machine", "cpus") => sc.machine.cpus as f64,
            ("machine", "hz") => sc.machine.hz as f64,
            ("machine.zone", "kernel_mib") => sc.machine.zones[0].kernel_mib as f64,
            ("device", "command_overhead_us") => d.command_overhead_us,
            ("device", "small_write_penalty_us") => d.small_write_penalty_us,
            ("device", "nr_requests") => d.nr_requests as f64,
            ("device", "queue_depth") => d.queue_depth as f64,
            ("device", "channels") => d.channels as f64,
            ("fs", "ag_count") => sc.filesystems[0].ag_count as f64,
            ("fs", "inode_size") => sc.filesystems[0].inode_size as f64,
            ("sysctl", "dirty_background_ratio") => sc.sysctl.dirty_background_ratio as f64,
            ("sysctl", "dirty_bytes") => sc.sysctl.dirty_bytes as f64,
            ("sysctl", "dirty_background_bytes") => sc.sysctl.dirty_background_bytes as f64,
            ("sysctl", "dirty_expire_centisecs") => sc.sysctl.dirty_expire_centisecs as f64,
            ("sysctl", "dirty_writeback_centisecs") => sc.sysctl.dirty_writeback_centisecs as f64,
            ("sysctl", "swappiness") => sc.sysctl.swappiness as f64,
            ("run", "runs") => sc.run.runs as f64,
            ("run", "time_limit_s") => sc.run.time_limit_s as f64,
            _ => return None,
        })
    };
    let mut checked = 0;
    for s in SECTIONS {
        for k in s.keys {
            let default = match k.default {
                Default::Int(n) => n as f64,
                Default::Float(x) => x,
                _ => continue,
            };
            if let Some(v) = got(s.path, k.name) {
                assert_eq!(v, default, "{}.{}", s.path, k.name);
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 18);
    assert_eq!(sc.sysctl, SysctlConfig::default());
    assert_eq!(sc.run.seed, RunConfig::default().seed);
}

#[test]
fn all_problems_of_a_file_are_reported_at_once_sorted() {
    let text = with_key("machine", "cpus = 0")
        .replace("[run]\n", "[run]\nruns = 0\nbogus = 1\n")
        .replace("capacity_gib = 8", "capacity_gib = -8")
        .replace("kernel = \"3.0-vanilla\"", "kernel = \"2.4\"");
    let e = parse_scenario(&text, "m.toml").unwrap_err();
    let lines: Vec<String> = e.to_string().lines().map(String::from).collect();
    assert_eq!(lines.len(), 5, "{e}");
    assert!(lines[0].starts_with("m.toml:1:1: kernel: unknown kernel preset \"2.4\"; allowed: "));
    assert!(lines[0].contains("3.0-vanilla") && lines[0].contains("3.10"));
    assert!(lines[1].starts_with("m.toml:3:1: machine.cpus: 0 is out of range"));
    assert!(lines[2].contains(": device[0].capacity_gib: -8 is out of range"));
    assert!(lines[3].contains(": run.runs: 0 is out of range"));
    assert!(lines[4].contains(": run.bogus: unknown key `bogus`"));
    let mut sorted = e.problems.clone();
    sorted.sort_by_key(|p| (p.line, p.column));
    assert_eq!(sorted, e.problems);
}

#[test]
fn columns_count_characters_of_the_key() {
    let text = with_key("machine", "  cpus = 0").replace("[run]\n", "[run]\n\"é\" = 1\n");
    let e = parse_scenario(&text, "c.toml").unwrap_err();
    assert_eq!(e.problems.len(), 2, "{e}");
    assert_eq!(e.problems[0].column, Some(3), "{e}");
    // A syntax error after a two-byte character: column 12, byte 13.
    let text = with_key("machine", "cpus = 1").replace("seed = 1", "seed = \"ä\" x");
    let e = parse_scenario(&text, "c.toml").unwrap_err();
    assert_eq!(e.problems.len(), 1, "{e}");
    assert_eq!(e.problems[0].column, Some(12), "{e}");
}

#[test]
fn long_values_are_echoed_at_most_80_characters() {
    let long = "x".repeat(500);
    let text = with_key("", &format!("kernel = \"{long}\""))
        .replace("model = \"ssd\"", &format!("model = \"{long}\""));
    let e = parse_scenario(&text, "l.toml").unwrap_err();
    assert_eq!(e.problems.len(), 2, "{e}");
    for p in &e.problems {
        assert!(p.message.contains(&format!("{}…", "x".repeat(80))), "{p}");
        assert!(!p.message.contains(&"x".repeat(81)), "{p}");
    }
}

/// A command line's own parser quotes what it was given: long words are
/// cut there too.
#[test]
fn long_words_of_command_errors_are_cut() {
    let long = "7".repeat(300);
    let text = with_key(
        "task",
        &format!("command = \"dd if=/dev/zero of=m/f bs={long}q count=1\""),
    );
    let e = parse_scenario(&text, "w.toml").unwrap_err();
    assert_eq!(e.problems.len(), 1, "{e}");
    assert!(e.problems[0].message.contains('…'), "{e}");
    assert!(!e.problems[0].message.contains(&"7".repeat(81)), "{e}");
}

#[test]
fn machine_memory_is_bounded() {
    // 16 TiB made the page frame number wrap at 4 KiB pages; it is the
    // bound at the coarsest unit.
    let text = with_key("machine.zone", "size_mib = 16777217");
    let e = parse_scenario(&text, "b.toml").unwrap_err().to_string();
    assert!(
        e.contains(
            "machine.zone[0].size_mib: 16777217 is out of range; allowed: 1 to 16777216 MiB"
        ),
        "{e}"
    );
    let text = with_key("machine", "total_mib = 16777217");
    let e = parse_scenario(&text, "b.toml").unwrap_err().to_string();
    assert!(
        e.contains("machine.total_mib: 16777217 is out of range"),
        "{e}"
    );
    let text = big_machine(65536);
    let e = parse_scenario(&text, "b.toml").unwrap_err().to_string();
    assert!(
        e.contains(
            "machine.zone: the zones add up to 69632 MiB, 17825792 page frames of 4 KiB; \
             allowed: at most 16777216 frames (65536 MiB at unit_kib = 4; a larger unit_kib \
             allows more)"
        ),
        "{e}"
    );
    let ok = text.replace("size_mib = 65536", "size_mib = 61440");
    assert_eq!(
        parse_scenario(&ok, "b.toml").unwrap().machine.zones.len(),
        2
    );
}

/// Zones DMA32 4 GiB and Normal `normal_mib`, at 4 KiB pages.
fn big_machine(normal_mib: u64) -> String {
    SECTIONS_TEXT
        .iter()
        .map(|(_, b)| *b)
        .collect::<String>()
        .replace(
            "[[machine.zone]]\nname = \"DMA32\"\nsize_mib = 64\n",
            &format!(
                "[[machine.zone]]\nname = \"DMA32\"\nsize_mib = 4096\n\
                 [[machine.zone]]\nname = \"Normal\"\nsize_mib = {normal_mib}\n"
            ),
        )
}

/// A coarse unit holds more memory in the same 16 Mi frames, and only
/// what works at it: whole units of kernel memory and dd blocks, no
/// per-page programs.
#[test]
fn a_coarse_unit_allows_more_memory_and_whole_units_only() {
    let at_64 = |normal_mib: u64| {
        big_machine(normal_mib).replace(
            "[machine]\ncpus = 2\n",
            "[machine]\ncpus = 2\nunit_kib = 64\n",
        )
    };
    let sc = parse_scenario(&at_64(65536).replace("bs=4k", "bs=64k"), "u.toml").unwrap();
    assert_eq!(sc.machine.unit_kib, 64);
    assert_eq!(sc.machine.unit().base_pages(), 16);
    let e = parse_scenario(&at_64(1 << 20).replace("bs=4k", "bs=64k"), "u.toml")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("16842752 page frames of 64 KiB; allowed: at most 16777216 frames (1048576 MiB at unit_kib = 64"),
        "{e}"
    );
    let e = parse_scenario(&at_64(65536), "u.toml")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("task[0].command: dd bs=4096 is not a multiple of the 64 KiB unit; allowed at unit_kib = 64: dd with bs a multiple of 64 KiB"),
        "{e}"
    );
    let fsmark = at_64(65536).replace(
        "dd if=/dev/zero of=m/f bs=4k count=1",
        "fs_mark -d /m/d -n 10 -s 65536 -S0 -k",
    );
    let e = parse_scenario(&fsmark, "u.toml").unwrap_err().to_string();
    assert!(
        e.contains("task[0].command: fs_mark at unit_kib = 64; allowed at unit_kib = 64"),
        "{e}"
    );
    let text = at_64(65536)
        .replace("bs=4k", "bs=64k")
        .replace("[[task]]\n", "[[task]]\ntext_pages = 10\n")
        .replace("size_mib = 4096\n", "size_mib = 4096\nkernel_kib = 32\n");
    let e = parse_scenario(&text, "u.toml").unwrap_err().to_string();
    assert!(
        e.contains("task[0].text_pages: 10 pages of program text at unit_kib = 64"),
        "{e}"
    );
    assert!(
        e.contains(
            "machine.zone[0].kernel_kib: 32 is not a multiple of 64; allowed: whole 64 KiB \
             pages (machine.unit_kib = 64)"
        ),
        "{e}"
    );
    let e = parse_scenario(&with_key("machine", "unit_kib = 48"), "u.toml")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(
            "machine.unit_kib: 48 is not allowed; allowed: 4, 8, 16, 32, 64, 128, 256, 512, 1024"
        ),
        "{e}"
    );
}

#[test]
fn time_limit_is_bounded() {
    let sc = parse_scenario(&with_key("run", "time_limit_s = 10000000"), "t.toml").unwrap();
    assert_eq!(sc.run.time_limit_s, 10_000_000);
    let e = parse_scenario(&with_key("run", "time_limit_s = 10000001"), "t.toml").unwrap_err();
    assert!(
        e.to_string()
            .contains("run.time_limit_s: 10000001 is out of range; allowed: 1 to 10000000 s"),
        "{e}"
    );
}

#[test]
fn swap_must_fit_its_device() {
    let e = parse_scenario(&with_key("swap", "size_mib = 5000"), "s.toml").unwrap_err();
    assert!(e.to_string().contains("swap.size_mib: 5000 MiB of swap is more than half of device `d` (8 GiB); allowed: 1 to 4096 MiB"), "{e}");
}

#[test]
fn unknown_kernel_preset_names_the_line_and_lists_presets() {
    let text = with_key("", "kernel = \"4.19\"");
    let e = parse_scenario(&text, "k.toml").unwrap_err();
    assert_eq!(e.problems.len(), 1, "{e}");
    let msg = e.to_string();
    assert!(
        msg.starts_with("k.toml:1:1: kernel: unknown kernel preset \"4.19\"; allowed: "),
        "{msg}"
    );
    for name in crate::kernel::preset_names() {
        assert!(msg.contains(name), "{name} not in {msg}");
    }
}

/// One parse error, cascades suppressed: a bad mount does not make the
/// task's file "not on any filesystem".
#[test]
fn a_bad_mount_is_reported_once() {
    let text = with_key("fs", "mount = \"/m\"");
    let e = parse_scenario(&text, "f.toml").unwrap_err();
    assert_eq!(e.problems.len(), 1, "{e}");
}

#[test]
fn every_built_in_scenario_parses() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut n = 0;
    for dir in std::fs::read_dir(&root).unwrap() {
        let dir = dir.unwrap().path();
        if !dir.is_dir() {
            continue;
        }
        for f in std::fs::read_dir(dir).unwrap() {
            let path = f.unwrap().path();
            if path.extension().is_some_and(|e| e == "toml") {
                load_scenario(&path).unwrap_or_else(|e| panic!("{e}"));
                n += 1;
            }
        }
    }
    assert!(n >= 10, "{n}");
}

fn temp_path(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("wbsim-{}-{name}", std::process::id()))
}

#[test]
fn load_refuses_a_directory() {
    let e = load_scenario(&std::env::temp_dir())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("it is a directory; allowed: a regular file"),
        "{e}"
    );
}

#[cfg(unix)]
#[test]
fn load_refuses_a_character_device_and_a_fifo_without_blocking() {
    let e = load_scenario(Path::new("/dev/zero"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("/dev/zero: cannot read file: it is a character device"),
        "{e}"
    );
    let fifo = temp_path("fifo.toml");
    let _ = std::fs::remove_file(&fifo);
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if made.is_ok_and(|s| s.success()) {
        let e = load_scenario(&fifo);
        let _ = std::fs::remove_file(&fifo);
        let e = e.unwrap_err().to_string();
        assert!(e.contains("it is a FIFO; allowed: a regular file"), "{e}");
    }
}

#[test]
fn load_refuses_a_file_over_4_mib() {
    let path = temp_path("big.toml");
    let text = format!("{}# {}\n", with_key("run", "runs = 1"), "x".repeat(4 << 20));
    std::fs::write(&path, text).unwrap();
    let e = load_scenario(&path);
    let _ = std::fs::remove_file(&path);
    let e = e.unwrap_err().to_string();
    assert!(e.contains("allowed: at most 4194304 bytes (4 MiB)"), "{e}");
}

/// Device and filesystem numbers fit an inode's `u16`: a file with more
/// tables than allowed is refused at the first one too many.
#[test]
fn devices_and_filesystems_are_bounded() {
    let base: String = SECTIONS_TEXT
        .iter()
        .filter(|(p, _)| *p != "fs")
        .map(|(_, b)| *b)
        .collect();
    // The task writes under `m`: the first filesystem is mounted there.
    let fs = |n: usize| -> String {
        (0..n)
            .map(|i| match i {
                0 => "[[fs]]\ntype = \"xfs\"\ndevice = \"d\"\nmount = \"m\"\n".to_string(),
                _ => format!("[[fs]]\ntype = \"xfs\"\ndevice = \"d\"\nmount = \"n{i}\"\n"),
            })
            .collect()
    };
    let too_many = format!("{base}{}", fs(257));
    let e = parse_scenario(&too_many, "f.toml").unwrap_err().to_string();
    assert!(
        e.contains("fs[256].mount: 257 [[fs]] tables; allowed: at most 256"),
        "{e}"
    );
    let ok = format!("{base}{}", fs(256));
    let parsed = parse_scenario(&ok, "f.toml");
    assert!(parsed.is_ok(), "{:?}", parsed.err().map(|e| e.to_string()));
    let devices: String = (0..257)
        .map(|i| {
            format!(
                "[[device]]\nname = \"x{i}\"\nmodel = \"ssd\"\ncapacity_gib = 8\n\
                 seq_write_mib_per_s = 100\nmax_request_kib = 512\n"
            )
        })
        .collect();
    let e = parse_scenario(&format!("{base}{}{devices}", fs(1)), "f.toml")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("device[256].name: 258 [[device]] tables; allowed: at most 256"),
        "{e}"
    );
}

/// A frame names its file's inode and its page index in 28 bits each:
/// a file (or memory region) of more than 2^28 pages of
/// the unit, or more files than the inode numbers leave, is refused at
/// its key; a coarser unit holds a larger file.
#[test]
fn files_fit_the_inode_numbers_and_page_indices_a_frame_holds() {
    let base = || SECTIONS_TEXT.iter().map(|(_, b)| *b).collect::<String>();
    let dd = |count: u64| base().replace("bs=4k count=1", &format!("bs=1M count={count}"));
    assert!(parse_scenario(&dd(1 << 20), "d.toml").is_ok());
    let e = parse_scenario(&dd((1 << 20) + 1), "d.toml").unwrap_err();
    assert!(
        e.to_string().contains(
            "task[0].command: dd writes 1048577 MiB, more than a file's page index holds; \
             allowed: at most 1048576 MiB at unit_kib = 4 (268435456 pages; a coarser \
             unit_kib holds more)"
        ),
        "{e}"
    );
    let at_64 = big_machine(4096)
        .replace(
            "[machine]\ncpus = 2\n",
            "[machine]\ncpus = 2\nunit_kib = 64\n",
        )
        .replace("bs=4k count=1", "bs=1M count=1048577");
    assert!(parse_scenario(&at_64, "d.toml").is_ok());
    let fsmark = |loops: u32| {
        base().replace(
            "dd if=/dev/zero of=m/f bs=4k count=1",
            &format!("fs_mark -d /m/d -t 64 -n 1000000 -L {loops} -s 4096 -S0"),
        )
    };
    assert!(parse_scenario(&fsmark(4), "f.toml").is_ok());
    let e = parse_scenario(&fsmark(5), "f.toml").unwrap_err();
    assert!(
        e.to_string().contains(
            "task[0].command: fs_mark creates 320000000 files; allowed: at most 267386879 \
             files in a run"
        ),
        "{e}"
    );
}
