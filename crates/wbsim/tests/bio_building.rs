//! Writeback submits bios of many pages where the filesystem builds them
//! (`wbsim::block::bio`), so /proc/diskstats' `merges` counts what a real
//! kernel's does: a streaming dd's requests are each one bio (a 6.1 guest
//! wrote 256 MiB to xfs with 0 to 65 merges in 1,060 requests), while a
//! block device's pages (`block_write_full_page`, a bio a buffer) still
//! merge in the queue a page at a time.

use wbsim::scenario::parse_scenario;
use wbsim::RunOptions;

/// A 96 MiB machine writing 64 MiB through `fs` on a disk that takes
/// requests of up to 512 KiB (128 pages).
fn device_figures(kernel: &str, fs: &str) -> (u64, u64, u64, f64) {
    let text = format!(
        "kernel = \"{kernel}\"\n[machine]\ncpus = 2\n\
         [[machine.zone]]\nname = \"DMA\"\nsize_mib = 16\n\
         [[machine.zone]]\nname = \"DMA32\"\nsize_mib = 48\n\
         [[machine.zone]]\nname = \"Normal\"\nsize_mib = 32\n\
         [[device]]\nname = \"sdb\"\nmodel = \"disk\"\ncapacity_gib = 250\n\
         seq_write_mib_per_s = 103.0\nmax_request_kib = 512\ncommand_overhead_us = 100.0\n\
         small_write_penalty_us = 4000.0\nnr_requests = 128\n\
         [[fs]]\ntype = \"{fs}\"\ndevice = \"sdb\"\nmount = \"disk\"\n\
         [[task]]\nname = \"dd\"\ncommand = \"dd if=/dev/zero of=disk/f bs=1M count=64\"\n\
         [run]\nseed = 1\ntime_limit_s = 600\n"
    );
    let sc = parse_scenario(&text, "bio.toml").unwrap();
    let profile = wbsim::resolve_profile(&sc, None).unwrap();
    let run = wbsim::simulate(&sc, &profile, 1, &RunOptions::default());
    let report = wbsim::make_report(&sc, &profile, vec![run]);
    let json = serde_json::to_value(&report).unwrap();
    let d = &json["runs"][0]["devices"][0];
    let written = json["runs"][0]["vmstat"]["nr_written"].as_u64().unwrap();
    (
        d["merges"].as_u64().unwrap(),
        d["write_requests"].as_u64().unwrap(),
        written,
        d["avg_write_request_kib"].as_f64().unwrap(),
    )
}

#[test]
fn a_streaming_writers_requests_are_whole_bios() {
    for (kernel, fs) in [
        ("3.3", "xfs"),
        ("3.3", "ext4"),
        ("3.0-vanilla", "btrfs"),
        ("6.1", "xfs"),
        ("6.1", "ext4"),
        ("6.1", "btrfs"),
    ] {
        let (merges, requests, written, avg_kib) = device_figures(kernel, fs);
        assert!(written >= 8_192, "{kernel} {fs}: {written} pages written");
        // A page a bio would merge 127 of each 128 pages of a request.
        assert!(
            merges * 10 < requests,
            "{kernel} {fs}: {merges} merges for {requests} requests"
        );
        assert!(avg_kib > 256.0, "{kernel} {fs}: requests of {avg_kib} KiB");
    }
}

#[test]
fn a_block_devices_pages_still_merge_a_page_at_a_time() {
    // ntfs-3g writes the device through its page cache: a bio a page.
    let (merges, requests, written, _) = device_figures("3.1-mmotm", "fuse-ntfs");
    assert!(written >= 8_192, "{written} pages written");
    assert!(
        merges > 50 * requests,
        "{merges} merges for {requests} requests"
    );
}
