//! The /proc and /sys parsers against real kernels' text (3.2.4, 3.3.8
//! guests of the kernel lab; this build host's 6.18).

mod common;

use common::fixture;
use wbsim_lab::procfs::{parse_diskstat, parse_proc_stat, parse_vmstat, parse_zoneinfo};

#[test]
fn vmstat_3_2_4() {
    let before = parse_vmstat(&fixture("3.2.4-vmstat.before"));
    let after = parse_vmstat(&fixture("3.2.4-vmstat.after"));
    assert_eq!(before.len(), 84);
    assert_eq!(after.len(), 84);
    assert_eq!(after["pgscan_kswapd_dma32"], 715738);
    assert_eq!(after["pgsteal_normal"], 123592);
    assert_eq!(after["nr_vmscan_immediate_reclaim"], 39860);
    assert_eq!(after["pgalloc_movable"], 0);
    assert!(!after.contains_key("pgscan_kswapd"));
}

#[test]
fn vmstat_3_3_8_and_6_18() {
    let v = parse_vmstat(&fixture("3.3.8-vmstat.after"));
    assert!(v.contains_key("pgsteal_dma32"));
    assert!(!v.contains_key("pgsteal_kswapd"));
    let v = parse_vmstat(&fixture("6.18-vmstat"));
    assert_eq!(v.len(), 192);
    for k in [
        "pgscan_kswapd",
        "pgscan_direct",
        "pgsteal_kswapd",
        "pgsteal_direct",
        "allocstall_normal",
        "pgalloc_dma32",
        "nr_vmscan_write",
    ] {
        assert!(v.contains_key(k), "{k}");
    }
    assert!(!v.contains_key("pgscan_kswapd_normal"));
    assert_eq!(v["pgalloc_normal"], 189433950);
}

#[test]
fn vmstat_skips_lines_that_are_not_name_and_integer() {
    let v = parse_vmstat("a 1\nb\nc x\nd 2 3\n\ne -4\nf 99999999999999999999\n");
    assert_eq!(v.len(), 3);
    assert_eq!(v["a"], 1);
    assert_eq!(v["e"], -4);
    assert_eq!(v["f"], i64::MAX);
}

#[test]
fn zoneinfo_3_2_4() {
    let n = parse_zoneinfo(&fixture("3.2.4-zoneinfo.before")).unwrap();
    assert!(n.node_stats.is_empty());
    let names: Vec<&str> = n.zones.iter().map(|z| z.name.as_str()).collect();
    assert_eq!(names, ["DMA", "DMA32", "Normal"]);
    let dma = &n.zones[0];
    assert_eq!(
        (dma.spanned_pages, dma.present_pages, dma.managed_pages),
        (4080, 3917, 0)
    );
    assert_eq!(dma.start_pfn, Some(16));
    assert_eq!(dma.free_pages, 3981);
    assert_eq!((dma.min_pages, dma.low_pages, dma.high_pages), (10, 12, 15));
    let dma32 = n.zone("DMA32").unwrap();
    // The pagesets' `high: 186` must not replace the watermark.
    assert_eq!(
        (dma32.min_pages, dma32.low_pages, dma32.high_pages),
        (1230, 1537, 1845)
    );
    assert_eq!(dma32.start_pfn, Some(4096));
    assert_eq!(dma32.stat("nr_mapped"), 1);
    assert!(!dma32.stats.contains_key("count"));
    assert!(!dma32.stats.contains_key("batch"));
    let normal = n.zone("Normal").unwrap();
    assert_eq!(normal.free_pages, 49871);
    assert_eq!(normal.stat("nr_inactive_file"), 615);
    assert_eq!(normal.stat("nr_active_file"), 151);
    assert_eq!(normal.stat("nr_vmscan_write"), 0);
    assert_eq!(normal.stat("all_unreclaimable"), 0);
    assert_eq!(normal.stat("inactive_ratio"), 1);
    assert_eq!(normal.start_pfn, Some(1048576));
    assert_eq!(normal.spanned_pages, 65536);
    assert!(normal.contains_pfn(1048576) && normal.contains_pfn(1114111));
    assert!(!normal.contains_pfn(1114112) && !normal.contains_pfn(1048575));
    assert_eq!(normal.suffix(), "normal");
    // Held before dd (the real-3x scenario's kernel_mib of 54 for Normal
    // comes from this): 64,512 present − 49,871 free − 766 file pages.
    assert_eq!(normal.held_pages(), 64512 - 49871 - 615 - 151);
}

#[test]
fn zoneinfo_3_2_4_after_and_3_3_8() {
    let n = parse_zoneinfo(&fixture("3.2.4-zoneinfo.after")).unwrap();
    let b = parse_zoneinfo(&fixture("3.2.4-zoneinfo.before")).unwrap();
    // The run's per-zone deltas (kernel-lab analysis.txt of 3.2.4-ext4-r1).
    let delta = |z: &str, k: &str| n.zone(z).unwrap().stat(k) - b.zone(z).unwrap().stat(k);
    let imm: i64 = ["DMA", "DMA32", "Normal"]
        .iter()
        .map(|z| delta(z, "nr_vmscan_immediate_reclaim"))
        .sum();
    assert_eq!(imm, 39860);
    let n = parse_zoneinfo(&fixture("3.3.8-zoneinfo.before")).unwrap();
    assert_eq!(n.zones.len(), 3);
    assert_eq!(n.zone("Normal").unwrap().stat("nr_inactive_file"), 613);
    assert_eq!(n.zone("DMA32").unwrap().free_pages, 436733);
}

#[test]
fn zoneinfo_6_18() {
    let n = parse_zoneinfo(&fixture("6.18-zoneinfo")).unwrap();
    let names: Vec<&str> = n.zones.iter().map(|z| z.name.as_str()).collect();
    assert_eq!(names, ["DMA", "DMA32", "Normal", "Movable", "Device"]);
    assert_eq!(n.node_stats["nr_dirty"], 18816);
    assert_eq!(n.node_stats["nr_writeback"], 0);
    assert_eq!(n.node_stats["nr_inactive_file"], 856807);
    assert!(n.node_stats.contains_key("nr_vmscan_write"));
    let dma = &n.zones[0];
    assert_eq!(dma.start_pfn, Some(1));
    assert_eq!(
        (dma.spanned_pages, dma.present_pages, dma.managed_pages),
        (4095, 3998, 3840)
    );
    assert_eq!((dma.min_pages, dma.low_pages, dma.high_pages), (16, 20, 24));
    // Node stats are not the zone's.
    assert!(!dma.stats.contains_key("nr_dirty"));
    assert_eq!(dma.stat("boost"), 0);
    assert!(dma.stats.contains_key("nr_zone_inactive_file"));
    let normal = n.zone("Normal").unwrap();
    assert_eq!(normal.high_pages, 20196);
    assert_eq!(normal.managed_pages, 3047424);
    // 4.8+ names the zone's file LRU counters nr_zone_*_file.
    assert_eq!(normal.held_pages(), 5505024 - 1402455 - 856807 - 587436);
    assert_eq!(normal.stat("nr_zone_inactive_file"), 856807);
    assert_eq!(normal.stat("nr_zone_write_pending"), 18816);
    assert_eq!(normal.stat("node_unreclaimable"), 0);
    assert_eq!(normal.start_pfn, Some(1048576));
    let movable = n.zone("Movable").unwrap();
    assert_eq!((movable.present_pages, movable.spanned_pages), (0, 0));
    assert_eq!(movable.start_pfn, None);
    assert!(!movable.contains_pfn(0));
}

#[test]
fn zoneinfo_node_0_only_and_errors() {
    let text = "Node 1, zone   Normal\n  pages free 5\n        present 9\n\
                Node 0, zone      DMA\n  pages free 3\n        present 7\n";
    let n = parse_zoneinfo(text).unwrap();
    assert_eq!(n.zones.len(), 1);
    assert_eq!((n.zones[0].free_pages, n.zones[0].present_pages), (3, 7));
    assert!(parse_zoneinfo("").is_err());
    assert!(parse_zoneinfo("Node 1, zone DMA\n").is_err());
}

#[test]
fn zone_pfn_ranges_without_start_pfn() {
    let text = "Node 0, zone      DMA\n        spanned  4096\n\
                Node 0, zone    DMA32\n        spanned  1044480\n";
    let n = parse_zoneinfo(text).unwrap();
    assert!(n.zones[0].contains_pfn(0) && n.zones[0].contains_pfn(4095));
    assert!(n.zones[1].contains_pfn(4096) && !n.zones[1].contains_pfn(1 << 20));
}

#[test]
fn diskstat_11_15_17_fields() {
    let d = parse_diskstat(&fixture("6.18-vda.stat")).unwrap();
    assert_eq!(d.fields, 17);
    assert_eq!(d.reads, 752301);
    assert_eq!(d.writes, 60825);
    assert_eq!(d.write_merges, 237609);
    assert_eq!(d.write_sectors, 44763696);
    assert_eq!(d.write_ticks_ms, 197010);
    assert_eq!(d.in_flight, 0);
    assert_eq!(d.io_ticks_ms, 85492);
    assert_eq!(d.flush_ticks_ms, 92);
    // 3.2.4-ext4-r1's run totals, as an 11-field (3.x) line.
    let d = parse_diskstat("  337 0 674 10 10268 5 10486896 39570920 0 300000 39571000\n").unwrap();
    assert_eq!(d.fields, 11);
    assert_eq!((d.writes, d.write_sectors), (10268, 10486896));
    assert_eq!(d.discards, 0);
    let d = parse_diskstat(&"1 ".repeat(15)).unwrap();
    assert_eq!((d.fields, d.discard_ticks_ms, d.flushes), (15, 1, 0));
    assert!(parse_diskstat("1 2 3").is_err());
    assert!(parse_diskstat("1 2 3 4 5 6 7 8 9 10 x").is_err());
}

#[test]
fn proc_stat() {
    let p = parse_proc_stat(&fixture("6.18-kswapd0.stat")).unwrap();
    assert_eq!((p.pid, p.comm.as_str(), p.state), (45, "kswapd0", 'S'));
    let p =
        parse_proc_stat("292 (kswapd0) R 2 0 0 0 -1 2149632 0 0 0 0 0 2190 0 0 20 0 1 0 38 0 0\n")
            .unwrap();
    assert_eq!((p.utime_ticks, p.stime_ticks), (0, 2190));
    // A comm with spaces and parentheses.
    let p = parse_proc_stat("7 (a (b) c) D 1 0 0 0 -1 0 0 0 0 0 12 34 0 0 20 0").unwrap();
    assert_eq!((p.comm.as_str(), p.state), ("a (b) c", 'D'));
    assert_eq!((p.utime_ticks, p.stime_ticks), (12, 34));
    assert!(parse_proc_stat("7 (x) S 1 2").is_err());
    assert!(parse_proc_stat("garbage").is_err());
}

/// A 4.8+ zoneinfo counts dirty pages per node: its series says so and
/// puts the node's on the zone with the most file pages (Normal here);
/// 3.2.4's counts them per zone.
#[test]
fn a_series_from_a_per_node_zoneinfo_says_so() {
    use wbsim_lab::guest_report::{series::build_series, trace::kswapd_awake};
    let series = |name: &str, zones: &[&str]| {
        let node = parse_zoneinfo(&fixture(name)).unwrap();
        let names: Vec<String> = zones.iter().map(|z| z.to_string()).collect();
        build_series(&[(0, node)], &names, 1, 0, None, &kswapd_awake(&[], 0, 0))
    };
    let new = series("6.18-zoneinfo", &["DMA", "DMA32", "Normal"]);
    assert!(new.dirty_per_node);
    let dirty: Vec<u64> = new.samples[0].zones.iter().map(|z| z.dirty_pages).collect();
    assert_eq!(dirty, [0, 0, 18816]);
    assert!(!series("3.2.4-zoneinfo.before", &["DMA", "DMA32", "Normal"]).dirty_per_node);
}
