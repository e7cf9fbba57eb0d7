use super::*;
use crate::workload::dd::DdCommand;
use proptest::prelude::*;

/// The zone-dirty-v2 example: a 3.0 kernel box writing 10 GiB of zeroes to a USB stick.
const ZONE_DIRTY_V2: &str = r#"kernel = "3.0-vanilla"

[machine]
cpus = 4
hz = 1000
min_free_kbytes = 11584
total_mib = 3765

[[machine.zone]]
name = "DMA"
size_mib = 15

[[machine.zone]]
name = "DMA32"
size_mib = 3246

[[machine.zone]]
name = "Normal"
size_mib = 504

[[device]]
name = "sdb"
model = "usb-stick"
capacity_gib = 16
seq_write_mib_per_s = 19.53
max_request_kib = 120
command_overhead_us = 250.0
small_write_penalty_us = 3000.0
nr_requests = 128

[[fs]]
type = "xfs"
device = "sdb"
mount = "disk"

[sysctl]
dirty_ratio = 20
dirty_background_ratio = 10

[[task]]
name = "dd"
command = "dd if=/dev/zero of=disk/zeroes bs=32k count=$((10 << 15))"

[run]
seed = 1
runs = 1
time_limit_s = 7200
"#;

/// Parse `ZONE_DIRTY_V2` with `from` replaced by `to` (which must occur once).
fn parse_edited(from: &str, to: &str) -> Result<Scenario, ScenarioError> {
    assert_eq!(ZONE_DIRTY_V2.matches(from).count(), 1, "{from}");
    parse_scenario(&ZONE_DIRTY_V2.replace(from, to), "scenarios/edited.toml")
}

/// Check error cases, one per line: `from | to | line:column | key | message part`.
/// Each case replaces `from` (which must occur once) with `to` (`\n` allowed)
/// and expects, among the file's problems, one at that line, column and key
/// whose message contains the part.
fn check_cases(cases: &str) {
    for case in cases.lines().filter(|l| !l.trim().is_empty()) {
        let cols: Vec<&str> = case.split(" | ").map(str::trim).collect();
        let [from, to, at, key, words] = cols[..] else {
            panic!("bad case {case:?}");
        };
        let e = parse_edited(from, &to.replace("\\n", "\n")).unwrap_err();
        let (line, column) = at.split_once(':').expect("line:column");
        let (line, column): (usize, usize) = (line.parse().unwrap(), column.parse().unwrap());
        let found = e.problems.iter().any(|p| {
            p.file == "scenarios/edited.toml"
                && (p.line, p.column, p.key.as_deref()) == (Some(line), Some(column), Some(key))
                && p.message.contains(words)
        });
        assert!(found, "{case}\nnot among:\n{e}");
    }
}

#[test]
fn zone_dirty_v2_parses_exactly() {
    let s = parse_scenario(ZONE_DIRTY_V2, "examples/zone-dirty-v2.toml").unwrap();
    let expected = Scenario {
        name: "zone-dirty-v2".into(),
        kernel: "3.0-vanilla".into(),
        machine: MachineConfig {
            cpus: 4,
            zones: vec![
                ZoneConfig {
                    kind: ZoneKind::Dma,
                    size_mib: 15,
                    kernel_mib: 0,
                    kernel_kib: 0,
                    managed_mib: None,
                },
                ZoneConfig {
                    kind: ZoneKind::Dma32,
                    size_mib: 3246,
                    kernel_mib: 0,
                    kernel_kib: 0,
                    managed_mib: None,
                },
                ZoneConfig {
                    kind: ZoneKind::Normal,
                    size_mib: 504,
                    kernel_mib: 0,
                    kernel_kib: 0,
                    managed_mib: None,
                },
            ],
            nodes: Vec::new(),
            min_free_kbytes: Some(11584),
            hz: 1000,
            irq_delivery: IrqDelivery::FirstCpu,
            idle_wakeup_ns: 0,
            boot_dirty_limit_pages: None,
            unit_kib: 4,
        },
        devices: vec![DeviceConfig {
            name: "sdb".into(),
            model: DeviceModel::UsbStick,
            capacity_gib: 16,
            seq_write_mib_per_s: 19.53,
            max_request_kib: 120,
            command_overhead_us: 250.0,
            small_write_penalty_us: 3000.0,
            nr_requests: 128,
            boot_nr_requests: 128,
            hw_queues: 1,
            registered_before_start_ms: 0,
            queue_depth: 1,
            channels: 1,
            members: Vec::new(),
            chunk_kib: 0,
        }],
        filesystems: vec![FsConfig {
            fs_type: FsType::Xfs,
            device: "sdb".into(),
            mount: "disk".into(),
            ag_count: 4,
            inode_size: 256,
        }],
        sysctl: SysctlConfig::default(),
        tasks: vec![TaskConfig {
            name: "dd".into(),
            command: "dd if=/dev/zero of=disk/zeroes bs=32k count=$((10 << 15))".into(),
            program: Program::Dd(DdCommand {
                input: "/dev/zero".into(),
                output: "disk/zeroes".into(),
                bs_bytes: 32768,
                count: 327680,
                conv_fsync: false,
                oflag_direct: false,
            }),
            after: None,
            node: None,
            text_pages: 0,
            text_file: "dd".into(),
        }],
        swap: None,
        run: RunConfig::default(),
        cpu_cost: Vec::new(),
    };
    assert_eq!(s, expected);
    assert_eq!(s.tasks[0].dd().unwrap().total_bytes(), 10 << 30);
}

#[test]
fn defaults_fill_optional_keys() {
    let text =
        "kernel = \"3.0-vanilla\"\n[machine]\n[[machine.zone]]\nname = \"Normal\"\nsize_mib = 1\n\
                [[device]]\nname = \"d\"\nmodel = \"usb-stick\"\ncapacity_gib = 1\n\
                seq_write_mib_per_s = 1\nmax_request_kib = 4\n\
                [[fs]]\ntype = \"ext4\"\ndevice = \"d\"\nmount = \"m\"\n\
                [[task]]\ncommand = \"dd if=/dev/zero of=m/f bs=1 count=1\"\n";
    let s = parse_scenario(text, "min").unwrap();
    assert_eq!(
        (s.name.as_str(), s.machine.cpus, s.machine.hz),
        ("min", 2, 1000)
    );
    assert_eq!(s.machine.min_free_kbytes, None);
    assert_eq!(s.devices[0].nr_requests, 128);
    assert_eq!(s.devices[0].command_overhead_us, 0.0);
    assert_eq!(s.sysctl, SysctlConfig::default());
    assert_eq!(s.tasks[0].name, "task0");
    assert_eq!(
        s.run,
        RunConfig {
            seed: 1,
            runs: 1,
            time_limit_s: 7200
        }
    );
}

#[test]
fn unknown_keys_name_line_and_key() {
    check_cases(
        r#"
kernel = | x = 1\nkernel = | 1:1 | x | unknown key `x`; allowed keys here: cpu_cost, device, fs, kernel, machine, run, swap, sysctl, task
cpus = 4 | cpus = 4\nfoo = 1 | 5:1 | machine.foo | unknown key `foo`; allowed keys here: boot_dirty_limit_pages, cpus, hz, idle_wakeup_us, irq_delivery, min_free_kbytes, node, total_mib, unit_kib, zone
size_mib = 3246 | size_mib = 3246\nsize = 3 | 16:1 | machine.zone[1].size | unknown key `size`; allowed keys here: kernel_kib, kernel_mib, managed_mib, name, size_mib
nr_requests = 128 | nr_requests = 128\nqueue = 4 | 30:1 | device[0].queue | unknown key `queue`; allowed keys here: boot_nr_requests, capacity_gib, channels, chunk_kib, command_overhead_us, hw_queues,
dirty_ratio = 20 | dirty_ratio = 20\ndirty = 1 | 38:1 | sysctl.dirty | allowed keys here: dirty_background_bytes,
"#,
    );
}

#[test]
fn bad_numbers_name_line_and_key() {
    check_cases(
        r#"
size_mib = 3246 | size_mib = -5 | 15:1 | machine.zone[1].size_mib | -5 is out of range; allowed: 1 to 16777216 MiB
size_mib = 504 | size_mib = 0 | 19:1 | machine.zone[2].size_mib | 0 is out of range; allowed: 1 to 16777216 MiB
size_mib = 504 | size_mib = 504\nkernel_mib = 504 | 20:1 | machine.zone[2].kernel_mib | 504 MiB held by the kernel leaves nothing of the 504 MiB zone; allowed: 0 to 503 (less than size_mib)
size_mib = 504 | size_mib = 504\nkernel_kib = 6 | 20:1 | machine.zone[2].kernel_kib | 6 is not a multiple of 4; allowed: whole 4 KiB pages
size_mib = 504 | size_mib = 504\nkernel_mib = 503\nkernel_kib = 1024 | 21:1 | machine.zone[2].kernel_kib | 503 MiB and 1024 KiB held by the kernel leave nothing of the 504 MiB zone; allowed: 0 to 1020 KiB
size_mib = 504 | size_mib = 504\nmanaged_mib = 505 | 20:1 | machine.zone[2].managed_mib | 505 MiB managed is more than the 504 MiB zone; allowed: 1 to 504 (at most size_mib)
size_mib = 504 | size_mib = 504\nmanaged_mib = 0 | 20:1 | machine.zone[2].managed_mib | 0 is out of range; allowed: 1 to 16777216 MiB
hz = 1000 | hz = 1000\nidle_wakeup_us = -1 | 6:1 | machine.idle_wakeup_us | -1 is out of range; allowed: 0 to 1000000 µs
capacity_gib = 16 | capacity_gib = -1 | 24:1 | device[0].capacity_gib | -1 is out of range; allowed: 1 to 65536 GiB
19.53 | -1.5 | 25:1 | device[0].seq_write_mib_per_s | -1.5 is out of range; allowed: a finite number > 0 and <= 1000000 MiB/s
19.53 | nan | 25:1 | device[0].seq_write_mib_per_s | NaN is out of range; allowed: a finite number > 0
19.53 | inf | 25:1 | device[0].seq_write_mib_per_s | inf is out of range; allowed: a finite number > 0
= 120 | = 122 | 26:1 | device[0].max_request_kib | 122 is not a multiple of 4; allowed: 4 to 65536 KiB, a multiple of 4
= 250.0 | = -1 | 27:1 | device[0].command_overhead_us | -1 is out of range; allowed: a finite number >= 0 and <= 10000000 µs
cpus = 4 | cpus = "4" | 4:1 | machine.cpus | expected an integer, found a string ("4"); allowed: 1 to 256 CPUs
cpus = 4 | cpus = 0 | 4:1 | machine.cpus | 0 is out of range; allowed: 1 to 256 CPUs
hz = 1000 | hz = 200 | 5:1 | machine.hz | 200 is not allowed; allowed: 100, 250, 300, 1000 Hz
hz = 1000 | hz = 1000\nirq_delivery = "random" | 6:1 | machine.irq_delivery | unknown value "random"; allowed: first-cpu, round-robin
= 11584 | = 64 | 6:1 | machine.min_free_kbytes | 64 is out of range; allowed: 128 to 16777216 KiB
= 11584 | = 2600000 | 6:1 | machine.min_free_kbytes | 2600000 KiB leaves nothing to allocate: the high watermark (1.5 x min) must stay below the zones' 3855360 KiB; allowed: 128 to 2570239
dirty_ratio = 20 | dirty_ratio = 101 | 37:1 | sysctl.dirty_ratio | 101 is out of range; allowed: 0 to 100 %
dirty_ratio = 20 | dirty_ratio = 0 | 37:1 | sysctl.dirty_ratio | leaves no dirty limit
dirty_ratio = 20 | dirty_bytes = 100 | 37:1 | sysctl.dirty_bytes | 100 is below the kernel's minimum; allowed: 0 (use dirty_ratio) or 8192
runs = 1 | runs = 0 | 46:1 | run.runs | 0 is out of range; allowed: 1 to 1000 runs
seed = 1 | seed = -1 | 45:1 | run.seed | -1 is out of range; allowed: 0 to 9223372036854775807
"#,
    );
}

#[test]
fn zone_larger_than_total_points_at_zone() {
    check_cases(
        r#"
size_mib = 3246 | size_mib = 4000 | 15:1 | machine.zone[1].size_mib | zone DMA32 is 4000 MiB, larger than total_mib = 3765
total_mib = 3765 | total_mib = 3766 | 7:1 | machine.total_mib | zone sizes sum to 3765 MiB (DMA 15 + DMA32 3246 + Normal 504) but total_mib = 3766
"#,
    );
}

#[test]
fn structural_errors() {
    check_cases(
        r#"
name = "Normal" | name = "DMA32" | 18:1 | machine.zone[2].name | duplicate zone `DMA32`; allowed: zones in ascending order
name = "Normal" | name = "HighMem" | 18:1 | machine.zone[2].name | unknown value "HighMem"; allowed: DMA, DMA32, Normal
device = "sdb" | device = "sdc" | 33:1 | fs[0].device | no [[device]] named `sdc`; allowed: sdb
mount = "disk" | mount = "/disk" | 34:1 | fs[0].mount | "/disk" is not a relative path; allowed: a path without leading or trailing '/'
model = "usb-stick" | model = "nvme" | 23:1 | device[0].model | unknown value "nvme"; allowed: usb-stick, disk, ssd, raid0
[[fs]] | [fs] | 31:2 | fs | expected an array of tables, found a table; allowed: tables written as [[fs]]
nr_requests = 128 | nr_requests = 128\n[[device]]\nname = "sdb"\nmodel = "usb-stick"\ncapacity_gib = 1\nseq_write_mib_per_s = 1\nmax_request_kib = 4 | 31:1 | device[1].name | duplicate device name `sdb` (also used by device[0])
capacity_gib = 16 | # none | 21:1 | device[0].capacity_gib | missing required key `capacity_gib`; allowed: 1 to 65536 GiB, e.g. capacity_gib = 16
"#,
    );
    let e = parse_edited("kernel = \"3.0-vanilla\"", "").unwrap_err();
    assert_eq!(e.problems.len(), 1, "{e}");
    let p = &e.problems[0];
    assert_eq!((p.line, p.key.as_deref()), (None, Some("kernel")), "{e}");
    assert!(p.message.contains("missing required key `kernel`"), "{e}");
    let e = parse_edited("[machine]", "[machine\n").unwrap_err();
    assert_eq!(e.problems.len(), 1, "{e}");
    let p = &e.problems[0];
    assert_eq!((p.line, p.key.as_deref()), (Some(3), None), "{e}");
    assert!(p.message.starts_with("invalid TOML"), "{e}");
    assert!(e.to_string().starts_with("scenarios/edited.toml:3:"), "{e}");
}

#[test]
fn bad_dd_command_reported_at_command_line() {
    check_cases(
        r#"
bs=32k | bs=32q | 42:1 | task[0].command | bs=32q: malformed size; expected a number with an optional suffix c, w, b, kB, K, MB, M, GB, G (e.g. bs=32k)
of=disk/zeroes | of=usb/zeroes | 42:1 | task[0].command | dd output of=usb/zeroes is not on any filesystem; allowed: a file under one of the mounts: disk/
"#,
    );
    let e = parse_edited("bs=32k", "bs=32q").unwrap_err().to_string();
    assert!(
        e.starts_with("scenarios/edited.toml:42:1: task[0].command: bs=32q"),
        "{e}"
    );
}

#[test]
fn missing_file_mentions_path() {
    let path = Path::new("/nonexistent/wbsim/zone-dirty-v2.toml");
    let e = load_scenario(path).unwrap_err();
    assert_eq!(e.problems.len(), 1);
    let p = &e.problems[0];
    assert_eq!((p.line, p.key.as_deref()), (None, None));
    assert_eq!(p.file, "/nonexistent/wbsim/zone-dirty-v2.toml");
    assert!(p.message.starts_with("cannot read file: "), "{e}");
    assert!(
        e.to_string()
            .contains("/nonexistent/wbsim/zone-dirty-v2.toml"),
        "{e}"
    );
}

#[test]
fn load_reads_a_real_file() {
    let path = std::env::temp_dir().join(format!("wbsim-scenario-{}.toml", std::process::id()));
    std::fs::write(&path, ZONE_DIRTY_V2).unwrap();
    let loaded = load_scenario(&path);
    let _ = std::fs::remove_file(&path);
    assert_eq!(loaded.unwrap().tasks[0].dd().unwrap().count, 327680);
}

proptest! {
    #[test]
    fn parse_scenario_never_panics(text in "\\PC*") {
        let _ = parse_scenario(&text, "fuzz.toml");
    }

    #[test]
    fn parse_scenario_never_panics_on_edited_example(
        at in 0usize..2000, junk in "[-=\\[\\]a-z0-9 \"\\n.]{0,12}"
    ) {
        let mut cut = at.min(ZONE_DIRTY_V2.len());
        while !ZONE_DIRTY_V2.is_char_boundary(cut) {
            cut -= 1;
        }
        let text = format!("{}{junk}{}", &ZONE_DIRTY_V2[..cut], &ZONE_DIRTY_V2[cut..]);
        let _ = parse_scenario(&text, "fuzz.toml");
    }
}

/// Seed 001's array: SSD members, raid0 over them, and the errors a
/// reviewer would make.
#[test]
fn ssd_and_raid0_devices() {
    let head = "kernel = \"3.10\"\n[machine]\ncpus = 2\n[[machine.zone]]\nname = \"DMA32\"\nsize_mib = 64\n";
    let ssd = |name: &str| {
        format!(
            "[[device]]\nname = \"{name}\"\nmodel = \"ssd\"\ncapacity_gib = 256\n\
             seq_write_mib_per_s = 480\nmax_request_kib = 512\nqueue_depth = 31\nchannels = 8\n"
        )
    };
    let tail = "[[fs]]\ntype = \"xfs\"\ndevice = \"md0\"\nmount = \"m\"\nag_count = 8\n\
                [[task]]\ncommand = \"fs_mark -d /m/0 -n 10 -s 4096 -S0 -k\"\n";
    let raid = |members: &str, chunk: &str| {
        format!("[[device]]\nname = \"md0\"\nmodel = \"raid0\"\nmembers = {members}\n{chunk}")
    };
    let text = format!(
        "{head}{}{}{}{tail}",
        ssd("a"),
        ssd("b"),
        raid("[\"a\", \"b\"]", "chunk_kib = 512\n")
    );
    let sc = parse_scenario(&text, "r.toml").unwrap();
    assert_eq!(sc.devices[2].members, vec!["a", "b"]);
    assert_eq!(
        (sc.devices[2].chunk_kib, sc.devices[2].capacity_gib),
        (512, 512)
    );
    assert_eq!((sc.devices[0].queue_depth, sc.devices[0].channels), (31, 8));
    assert_eq!(sc.filesystems[0].ag_count, 8);
    for (members, chunk, expect) in [
        (
            "[\"a\"]",
            "chunk_kib = 512\n",
            "1 names; allowed: an array of 2 to 64 names",
        ),
        (
            "[\"a\", \"z\"]",
            "chunk_kib = 512\n",
            "no earlier [[device]] named `z`",
        ),
        ("[\"a\", \"b\"]", "chunk_kib = 500\n", "power of two"),
        ("[\"a\", \"b\"]", "", "missing required key `chunk_kib`"),
        (
            "[\"a\", \"b\"]",
            "chunk_kib = 512\nqueue_depth = 4\n",
            "queue_depth: does not apply to model = \"raid0\"; allowed: only with model = \"ssd\"",
        ),
    ] {
        let text = format!(
            "{head}{}{}{}{tail}",
            ssd("a"),
            ssd("b"),
            raid(members, chunk)
        );
        let e = parse_scenario(&text, "r.toml").unwrap_err().to_string();
        assert!(e.contains(expect) && e.contains("r.toml:"), "{e}");
    }
    let serial = text.replace("model = \"ssd\"", "model = \"disk\"");
    let e = parse_scenario(&serial, "r.toml").unwrap_err().to_string();
    assert!(
        e.contains("does not apply to model = \"disk\"; allowed: only with model = \"ssd\""),
        "{e}"
    );
}

#[test]
fn cpu_cost_overrides_are_checked() {
    let base = "kernel = \"3.10\"\n[machine]\ncpus = 2\n[[machine.zone]]\nname = \"DMA32\"\nsize_mib = 64\n\
                [[device]]\nname = \"d\"\nmodel = \"disk\"\ncapacity_gib = 8\nseq_write_mib_per_s = 100\nmax_request_kib = 512\n\
                [[fs]]\ntype = \"xfs\"\ndevice = \"d\"\nmount = \"m\"\n\
                [[task]]\ncommand = \"dd if=/dev/zero of=m/f bs=4k count=1\"\n[cpu_cost]\n";
    let sc = parse_scenario(&format!("{base}request_dispatch_ns = 9000\n"), "c.toml").unwrap();
    assert_eq!(sc.cpu_cost, vec![("request_dispatch_ns".to_string(), 9000)]);
    let e = parse_scenario(&format!("{base}dispatch = 9000\n"), "c.toml")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("c.toml:")
            && e.contains("unknown key `dispatch`")
            && e.contains("request_dispatch_ns"),
        "{e}"
    );
    let e = parse_scenario(&format!("{base}syscall_ns = -1\n"), "c.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("cpu_cost.syscall_ns"), "{e}");
}

/// THP's `set_recommended_min_free_kbytes` value for three zones (2 MiB
/// pageblocks x 3 zones x (2 + 3 x 3) = 67,584 KiB) is above the boot-time
/// default's 65,536 cap and must be accepted.
#[test]
fn min_free_kbytes_accepts_the_thp_recommendation() {
    let s = parse_edited("min_free_kbytes = 11584", "min_free_kbytes = 67584").unwrap();
    assert_eq!(s.machine.min_free_kbytes, Some(67584));
}

/// `irq_delivery` defaults to CPU 0 and accepts KVM's rotation.
#[test]
fn irq_delivery_defaults_to_first_cpu_and_accepts_round_robin() {
    let s = parse_scenario(ZONE_DIRTY_V2, "z.toml").unwrap();
    assert_eq!(s.machine.irq_delivery, IrqDelivery::FirstCpu);
    let s = parse_edited("hz = 1000", "hz = 1000\nirq_delivery = \"round-robin\"").unwrap();
    assert_eq!(s.machine.irq_delivery, IrqDelivery::RoundRobin);
}
