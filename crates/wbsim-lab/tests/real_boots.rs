//! The records of real boots run with `wbsim lab run` here (QEMU TCG,
//! 256 MiB guest, 2 vCPUs, `scenarios/lab/ci-dd-96m-ext4.toml`: dd of
//! 96 MiB to ext4 on a disk throttled to 20 MB/s), checked in as the
//! guest wrote them: Debian's 6.1.0-56 and a 3.2.4 built from source.
//! They pin the whole path from results disk to report on real kernel text.

use wbsim_guest::protocol::decode_records;
use wbsim_lab::guest_report::guest_run;

const DD_PAGES: i64 = 96 * 256;

fn run(name: &str) -> wbsim_lab::guest_report::GuestRun {
    run_scenario(name, "ci-dd-96m-ext4.toml")
}

fn run_scenario(name: &str, scenario: &str) -> wbsim_lab::guest_report::GuestRun {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/");
    let bytes = std::fs::read(format!("{dir}{name}")).unwrap();
    let records = decode_records(&bytes).unwrap();
    let sc = wbsim::scenario::load_scenario(
        &std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/lab/"))
            .join(scenario),
    )
    .unwrap();
    guest_run(&sc, &records, 0, 1000).unwrap()
}

fn check_dd_accounting(g: &wbsim_lab::guest_report::GuestRun) {
    let v = &g.report.vmstat;
    let dirtied = v["nr_dirtied"];
    // dd's pages, plus a few of ext4's journal and metadata, give or take
    // the per-CPU counter deltas /proc/vmstat has not folded in yet.
    assert!(
        (DD_PAGES - 64..DD_PAGES + DD_PAGES / 50).contains(&dirtied),
        "nr_dirtied {dirtied}"
    );
    // Dirtied = written back + still dirty or under writeback at dd's end.
    let pending = v["nr_dirty"] + v["nr_writeback"];
    assert!(
        (v["nr_written"] + pending - dirtied).abs() < DD_PAGES / 50,
        "{v:?}"
    );
    assert_eq!(g.report.tasks.len(), 1);
    assert_eq!(g.report.tasks[0].exit_status, 0);
    assert!(!g.report.cut);
    // 96 MiB, of which all but the dirty limit's worth must pass the 20 MB/s throttle.
    assert!(
        (1.5..6.0).contains(&g.report.elapsed_seconds),
        "{}",
        g.report.elapsed_seconds
    );
    let dev = &g.report.devices[0];
    assert_eq!(dev.name, "vda");
    assert!(dev.write_bytes >= v["nr_written"] as u64 * 4096 * 9 / 10);
    let series = g.report.series.as_ref().unwrap();
    assert!(
        series.samples.len() >= 2,
        "{} samples",
        series.samples.len()
    );
    // Some samples catch dd's pages dirty or under writeback.
    assert!(series.samples.iter().any(|s| s
        .zones
        .iter()
        .any(|z| z.dirty_pages + z.writeback_pages > 5000)));
}

#[test]
fn debian_6_1_boot_reads_back_as_a_report() {
    let g = run("boot-6.1.0-56-ci-dd-96m-ext4.records");
    assert_eq!(g.kernel_release, "6.1.0-56-cloud-amd64");
    check_dd_accounting(&g);
    // 6.1 prints present (with the struct-page array) and managed pages.
    let dma32 = g.zones.iter().find(|z| z.name == "DMA32").unwrap();
    assert_eq!((dma32.present_pages, dma32.managed_pages), (61402, 51748));
}

#[test]
fn linux_3_2_4_boot_reads_back_as_a_report() {
    let g = run("boot-3.2.4-ci-dd-96m-ext4.records");
    assert_eq!(g.kernel_release, "3.2.4");
    check_dd_accounting(&g);
    // The lab's zone arithmetic: 60416 pages asked, 60442 present.
    let dma32 = g.zones.iter().find(|z| z.name == "DMA32").unwrap();
    assert_eq!(dma32.present_pages, 60442);
    let dma = g.zones.iter().find(|z| z.name == "DMA").unwrap();
    assert_eq!(dma.present_pages, wbsim_lab::machine::DMA_PRESENT_PAGES);
}

#[test]
fn debian_6_1_fs_mark_boot_gives_fs_marks_table_and_the_background_task() {
    // scenarios/lab/fsmark-256m-xfs.toml: fs_mark -n 20 -L 3 -s 4 MiB on
    // xfs beside memtouch, which the guest stops with SIGTERM at the end.
    let g = run_scenario(
        "boot-6.1.0-56-fsmark-256m-xfs.records",
        "fsmark-256m-xfs.toml",
    );
    let loops = &g.report.fsmark;
    assert_eq!(loops.len(), 3, "one row per loop");
    assert!(loops
        .iter()
        .all(|l| l.files_per_second > 0.5 && l.files_per_second < 100.0));
    let status: Vec<(&str, i32)> = g
        .report
        .tasks
        .iter()
        .map(|t| (t.name.as_str(), t.exit_status))
        .collect();
    assert_eq!(status, [("fs_mark", 0), ("monitors", 128 + 15)]);
    // 60 files of 4 MiB (61440 pages) and xfs metadata.
    let dirtied = g.report.vmstat["nr_dirtied"];
    assert!(
        (60 * 1024 - 64..60 * 1024 + 1200).contains(&dirtied),
        "{dirtied}"
    );
}

/// A 5-minute boot of `scenarios/lab/zone-dirty-2g-ext4.toml` (2 GiB
/// guest with a 252 MiB Normal zone, 5 GiB dd, 18 MB/s), gzipped.
fn run_2g(kernel: &str) -> wbsim_lab::guest_report::GuestRun {
    use std::io::Read;
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/");
    let gz = std::fs::read(format!("{dir}boot-{kernel}-zone-dirty-2g-ext4.records.gz")).unwrap();
    let mut bytes = Vec::new();
    flate2::read::GzDecoder::new(&gz[..])
        .read_to_end(&mut bytes)
        .unwrap();
    let records = decode_records(&bytes).unwrap();
    let sc = wbsim::scenario::load_scenario(std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/lab/zone-dirty-2g-ext4.toml"
    )))
    .unwrap();
    guest_run(&sc, &records, 0, 2000).unwrap()
}

#[test]
fn real_3_2_and_3_3_boots_show_what_per_zone_dirty_limits_change() {
    let old = run_2g("3.2.4");
    let new = run_2g("3.3.8");
    assert_eq!(
        (old.kernel_release.as_str(), new.kernel_release.as_str()),
        ("3.2.4", "3.3.8")
    );
    // The lab's zone arithmetic gives the scenario's Normal zone exactly.
    for g in [&old, &new] {
        let normal = g.zones.iter().find(|z| z.name == "Normal").unwrap();
        assert_eq!(
            (normal.present_pages, normal.scenario_pages),
            (64512, 64512)
        );
        assert!((263.0..266.0).contains(&g.report.elapsed_seconds));
    }
    // Without per-zone limits (3.2) reclaim meets dirty pages and marks
    // them for immediate reclaim; with them (3.3) it hardly does.
    let imm =
        |g: &wbsim_lab::guest_report::GuestRun| g.report.vmstat["nr_vmscan_immediate_reclaim"];
    assert!(
        imm(&old) > 10_000 && imm(&new) < 100,
        "{} / {}",
        imm(&old),
        imm(&new)
    );
    // And the Normal zone takes more than its size's share of allocations.
    let normal_share = |g: &wbsim_lab::guest_report::GuestRun| {
        let v = &g.report.vmstat;
        v["pgalloc_normal"] as f64
            / (v["pgalloc_dma"] + v["pgalloc_dma32"] + v["pgalloc_normal"]) as f64
    };
    assert!(normal_share(&old) > 0.15 && normal_share(&new) < 0.13);
    // The median dirty share of Normal's inactive file pages falls too.
    let dirty = |g: &wbsim_lab::guest_report::GuestRun| {
        let figs = wbsim_lab::compare::figures(std::slice::from_ref(&g.report), &[]);
        figs.iter()
            .find(|f| f.name.starts_with("Normal dirty"))
            .unwrap()
            .real[0]
    };
    assert!(
        dirty(&old) > 45.0 && dirty(&new) < 40.0,
        "{} / {}",
        dirty(&old),
        dirty(&new)
    );
}
