//! The golden-output gate: the byte-exact JSON report, per-zone series
//! and (for two runs) ftrace text of short runs that cover every kernel
//! preset, workload, device model and filesystem. A refactor must leave
//! every file byte-identical; a change that moves a figure on purpose
//! regenerates them in a commit of its own that says why:
//!
//!     WBSIM_BLESS_GOLDEN=1 cargo test --release -p wbsim --test golden
//!
//! The files are in `tests/golden/`, one per case (`NAME.json`,
//! `NAME.csv` every 500 ms, `NAME.trace.gz`).

mod common;

use std::path::PathBuf;

use wbsim::report::series::Series;
use wbsim::scenario::parse_scenario;
use wbsim::RunOptions;

use common::SharedBuf;

const USB_STICK: &str = include_str!("fixtures/usb-stick-device.toml");
const DISK: &str = "[[device]]\nname = \"sdb\"\nmodel = \"disk\"\ncapacity_gib = 250\n\
    seq_write_mib_per_s = 103.0\nmax_request_kib = 512\ncommand_overhead_us = 100.0\n\
    small_write_penalty_us = 4000.0\nnr_requests = 128\n";
const SSD: &str = "[[device]]\nname = \"sdb\"\nmodel = \"ssd\"\ncapacity_gib = 256\n\
    seq_write_mib_per_s = 480.0\nmax_request_kib = 512\nqueue_depth = 31\nchannels = 8\n\
    command_overhead_us = 20.0\nsmall_write_penalty_us = 70.0\nnr_requests = 128\n";
const RAID0: &str = "[[device]]\nname = \"ssd0\"\nmodel = \"ssd\"\ncapacity_gib = 256\n\
    seq_write_mib_per_s = 480.0\nmax_request_kib = 512\nqueue_depth = 31\nchannels = 8\n\
    command_overhead_us = 20.0\nsmall_write_penalty_us = 70.0\nnr_requests = 128\n\
    [[device]]\nname = \"ssd1\"\nmodel = \"ssd\"\ncapacity_gib = 256\n\
    seq_write_mib_per_s = 480.0\nmax_request_kib = 512\nqueue_depth = 31\nchannels = 8\n\
    command_overhead_us = 20.0\nsmall_write_penalty_us = 70.0\nnr_requests = 128\n\
    [[device]]\nname = \"sdb\"\nmodel = \"raid0\"\nmembers = [\"ssd0\", \"ssd1\"]\nchunk_kib = 512\n";

/// 160 MiB through a 96 MiB machine: reclaim runs in every case.
const DD: &str = "dd if=/dev/zero of=disk/f bs=32k count=5120";

/// One golden case: a 96 MiB machine (DMA 16, DMA32 48, Normal 32 MiB).
struct Case {
    name: String,
    kernel: &'static str,
    cpus: u32,
    device: &'static str,
    fs: &'static str,
    tasks: Vec<&'static str>,
    swap: bool,
    trace: bool,
}

impl Case {
    fn new(name: &str, kernel: &'static str, device: &'static str, fs: &'static str) -> Case {
        Case {
            name: name.to_string(),
            kernel,
            cpus: 2,
            device,
            fs,
            tasks: vec![DD],
            swap: false,
            trace: false,
        }
    }

    fn scenario_text(&self) -> String {
        let mut t = format!(
            "kernel = \"{}\"\n[machine]\ncpus = {}\n\
             [[machine.zone]]\nname = \"DMA\"\nsize_mib = 16\n\
             [[machine.zone]]\nname = \"DMA32\"\nsize_mib = 48\n\
             [[machine.zone]]\nname = \"Normal\"\nsize_mib = 32\n{}\
             [[fs]]\ntype = \"{}\"\ndevice = \"sdb\"\nmount = \"disk\"\n",
            self.kernel, self.cpus, self.device, self.fs
        );
        // Dirty pages up to 40 % of memory: reclaim meets them at the LRU
        // tail, where the presets differ.
        t += "[sysctl]\ndirty_ratio = 40\ndirty_background_ratio = 10\n";
        if self.swap {
            t += "[swap]\ndevice = \"sdb\"\nsize_mib = 64\n";
        }
        for (i, c) in self.tasks.iter().enumerate() {
            t += &format!("[[task]]\nname = \"t{i}\"\ncommand = \"{c}\"\n");
        }
        t + "[run]\nseed = 3\ntime_limit_s = 600\n"
    }
}

fn cases() -> Vec<Case> {
    let mut v: Vec<Case> = wbsim::kernel::preset_descriptions()
        .into_iter()
        .map(|(name, _)| {
            let kernel: &'static str = Box::leak(name.to_string().into_boxed_str());
            let mut c = Case::new(&format!("preset-{name}"), kernel, USB_STICK, "xfs");
            // Seed 004's micro-benchmark, scaled: a stream through a
            // mapping (dirtied by faults) beside a resident process, with
            // swap: reclaim meets dirty file pages and anonymous ones.
            c.tasks = vec![
                "mapwrite -s 480M disk/mapped",
                "memtouch -s 16M -H 16M -r 100000 -w 10",
            ];
            c.cpus = 1;
            c.swap = true;
            c
        })
        .collect();
    for fs in ["ext4", "btrfs", "fuse-ntfs"] {
        v.push(Case::new(&format!("fs-{fs}"), "3.0-vanilla", USB_STICK, fs));
    }
    v.push(Case::new("device-disk", "3.10", DISK, "xfs"));
    v.push(Case::new("device-ssd", "3.10", SSD, "ext4"));
    let mut raid = Case::new("device-raid0-fsmark", "3.10+writeback-plug", RAID0, "xfs");
    raid.tasks = vec!["fs_mark -d /disk/a -d /disk/b -S0 -n 2000 -s 65536 -L 2"];
    raid.cpus = 4;
    v.push(raid);
    let mut fsmark = Case::new("workload-fsmark", "3.0-rc6", DISK, "xfs");
    fsmark.tasks = vec!["fs_mark -d /disk/fsm -n 40 -L 4 -t 1 -S0 -s 1048576"];
    v.push(fsmark);
    let mut iozone = Case::new("workload-iozone", "2.6.24+violation", DISK, "ext4");
    iozone.tasks = vec!["iozone -B -i 0 -i 2 -r 4k -s 64M -f disk/io.tmp"];
    v.push(iozone);
    let mut map = Case::new("workload-mapwrite", "3.1-mmotm", USB_STICK, "xfs");
    map.tasks = vec!["mapwrite -s 160M disk/mapped"];
    v.push(map);
    let mut touch = Case::new("workload-memtouch-swap", "3.0-rc6+reclaim-1-5", DISK, "xfs");
    touch.tasks = vec![
        "fs_mark -d /disk/fsm -n 20 -L 4 -t 1 -S0 -s 2097152",
        "memtouch -s 24M -H 8M -r 10000 -w 10",
    ];
    touch.swap = true;
    touch.cpus = 1;
    v.push(touch);
    let mut traced = Case::new("trace-dd", "3.0-vanilla", USB_STICK, "ext4");
    traced.trace = true;
    v.push(traced);
    let mut traced = Case::new("trace-reclaim", "3.0-rc6+reclaim-1-3", DISK, "xfs");
    traced.tasks = vec![
        "fs_mark -d /disk/fsm -n 20 -L 4 -t 1 -S0 -s 2097152",
        "memtouch -s 24M -H 8M -r 10000 -w 10",
    ];
    traced.swap = true;
    traced.trace = true;
    v.push(traced);
    v
}

/// The outputs of one case: (file name, bytes).
fn outputs(case: &Case) -> Vec<(String, Vec<u8>)> {
    let sc = parse_scenario(&case.scenario_text(), &format!("{}.toml", case.name))
        .unwrap_or_else(|e| panic!("{}: {e}", case.name));
    let profile = wbsim::resolve_profile(&sc, None).unwrap();
    let opts = RunOptions {
        series_interval_ns: Some(500_000_000),
        ..Default::default()
    };
    let trace = SharedBuf::default();
    let run = if case.trace {
        wbsim::simulate_traced(&sc, &profile, sc.run.seed, &opts, Box::new(trace.clone())).unwrap()
    } else {
        wbsim::simulate(&sc, &profile, sc.run.seed, &opts)
    };
    assert!(!run.cut, "{}: cut by its time limit", case.name);
    let report = wbsim::make_report(&sc, &profile, vec![run]);
    let mut out = vec![(
        format!("{}.json", case.name),
        (serde_json::to_string_pretty(&report).unwrap() + "\n").into_bytes(),
    )];
    let mut csv = format!("{}\n", Series::CSV_HEADER);
    if let Some(s) = &report.runs[0].series {
        s.write_csv_rows(&report.kernel, report.runs[0].seed, &mut csv);
    }
    out.push((format!("{}.csv", case.name), csv.into_bytes()));
    if case.trace {
        let bytes = trace.0.lock().unwrap().clone();
        out.push((format!("{}.trace.gz", case.name), bytes));
    }
    out
}

/// Traces are kept gzipped (a megabyte of text each); the comparison is
/// on the text.
fn store(name: &str, bytes: &[u8]) -> Vec<u8> {
    if !name.ends_with(".gz") {
        return bytes.to_vec();
    }
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

fn load(name: &str, bytes: &[u8]) -> Vec<u8> {
    if !name.ends_with(".gz") {
        return bytes.to_vec();
    }
    use std::io::Read;
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(bytes)
        .read_to_end(&mut out)
        .unwrap();
    out
}

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

#[test]
fn every_case_is_byte_identical_to_its_golden_files() {
    let bless = std::env::var_os("WBSIM_BLESS_GOLDEN").is_some();
    let dir = golden_dir();
    if bless {
        std::fs::create_dir_all(&dir).unwrap();
    }
    let mut expected_files = std::collections::BTreeSet::new();
    let mut differ = Vec::new();
    for case in cases() {
        for (name, bytes) in outputs(&case) {
            let path = dir.join(&name);
            expected_files.insert(name.clone());
            if bless {
                std::fs::write(&path, store(&name, &bytes)).unwrap();
                continue;
            }
            let want = std::fs::read(&path)
                .map(|b| load(&name, &b))
                .unwrap_or_default();
            if want != bytes {
                let got = String::from_utf8_lossy(&bytes);
                let want = String::from_utf8_lossy(&want);
                let line = got
                    .lines()
                    .zip(want.lines())
                    .position(|(a, b)| a != b)
                    .unwrap_or_else(|| got.lines().count().min(want.lines().count()));
                differ.push(format!(
                    "{name}: differs from line {} (golden: {:?}, now: {:?})",
                    line + 1,
                    want.lines().nth(line).unwrap_or("<end>"),
                    got.lines().nth(line).unwrap_or("<end>")
                ));
            }
        }
    }
    if !bless {
        // A golden file no case writes any more is a case that was dropped.
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let n = e.file_name().to_string_lossy().into_owned();
            if !expected_files.contains(&n) {
                differ.push(format!("{n}: no case writes it any more"));
            }
        }
    }
    assert!(
        differ.is_empty(),
        "golden outputs changed ({} files); if on purpose, regenerate with \
         `WBSIM_BLESS_GOLDEN=1 cargo test --release -p wbsim --test golden` in a commit \
         that says why:\n{}",
        differ.len(),
        differ.join("\n")
    );
}

#[test]
fn the_cases_cover_every_preset_workload_device_and_filesystem() {
    let cases = cases();
    let texts: Vec<String> = cases.iter().map(Case::scenario_text).collect();
    let all = texts.join("\n");
    for (preset, _) in wbsim::kernel::preset_descriptions() {
        assert!(cases.iter().any(|c| c.kernel == preset), "preset {preset}");
    }
    for w in ["dd ", "fs_mark ", "iozone ", "mapwrite ", "memtouch "] {
        assert!(all.contains(&format!("command = \"{w}")), "workload {w}");
    }
    for m in ["usb-stick", "disk", "ssd", "raid0"] {
        assert!(all.contains(&format!("model = \"{m}\"")), "device {m}");
    }
    for fs in ["xfs", "ext4", "btrfs", "fuse-ntfs"] {
        assert!(all.contains(&format!("type = \"{fs}\"")), "filesystem {fs}");
    }
}
