use super::*;
use wbsim::scenario::parse_scenario;

fn scenario(zones: &[(&str, u64)], extra: &str) -> Scenario {
    let mut t = String::from("kernel = \"3.10\"\n[machine]\ncpus = 2\n");
    for (n, s) in zones {
        t += &format!("[[machine.zone]]\nname = \"{n}\"\nsize_mib = {s}\n");
    }
    t += "[[device]]\nname = \"vda\"\nmodel = \"disk\"\ncapacity_gib = 2\nseq_write_mib_per_s = 19.073486328125\nmax_request_kib = 512\ncommand_overhead_us = 50.0\nsmall_write_penalty_us = 0.0\nnr_requests = 128\n";
    t += extra;
    if !extra.contains("[[fs]]") {
        t += "[[fs]]\ntype = \"ext4\"\ndevice = \"vda\"\nmount = \"disk\"\n";
    }
    t += "[[task]]\nname = \"dd\"\ncommand = \"dd if=/dev/zero of=disk/f bs=1M count=8\"\n";
    parse_scenario(&t, "t.toml").unwrap()
}

#[test]
fn the_2011_machine_gets_the_kernel_lab_layout() {
    // kernel-lab README: -m 3838, max-ram-below-4g=3326 on pc-i440fx-1.7
    // gave DMA32 831035 and Normal 129024 present pages (3246 / 504 MiB).
    let m = lab_machine(&scenario(
        &[("DMA", 15), ("DMA32", 3246), ("Normal", 504)],
        "",
    ))
    .unwrap();
    assert_eq!(m.memory_mib, 3838);
    assert_eq!(m.below_4g_mib, Some(3326));
    assert_eq!(m.machine_type, "pc-i440fx-1.7");
}

#[test]
fn the_2_gib_guest_of_the_real_kernel_runs_maps_back() {
    // real-kernel runs: -m 2048, max-ram-below-4g=1792M, pc: 15/1712/252 MiB.
    let m = lab_machine(&scenario(
        &[("DMA", 15), ("DMA32", 1712), ("Normal", 252)],
        "",
    ))
    .unwrap();
    assert_eq!((m.memory_mib, m.below_4g_mib), (2048, Some(1792)));
    assert_eq!(m.machine_type, "pc");
    assert_eq!(m.expected_zone_pages[2], ("Normal".to_string(), 252 * 256));
}

#[test]
fn a_small_guest_has_no_4g_line() {
    let m = lab_machine(&scenario(&[("DMA", 15), ("DMA32", 236)], "")).unwrap();
    assert_eq!((m.memory_mib, m.below_4g_mib), (256, None));
    assert_eq!(m.write_bytes_per_second, 20_000_000);
    assert_eq!(m.disk_bytes, 2 << 30);
    assert!(m.notes.iter().any(|n| n.contains("HZ")));
}

#[test]
fn an_odd_dma_zone_is_noted_with_the_difference() {
    let m = lab_machine(&scenario(&[("DMA", 64), ("DMA32", 236)], "")).unwrap();
    assert!(m
        .notes
        .iter()
        .any(|n| n.starts_with("DMA:") && n.contains("64 MiB")));
}

#[test]
fn sysctls_set_bytes_knobs_only_when_given() {
    let m = lab_machine(&scenario(
        &[("DMA", 15), ("DMA32", 236)],
        "[sysctl]\ndirty_bytes = 8388608\n",
    ))
    .unwrap();
    let keys: Vec<&str> = m.sysctls.iter().map(|(k, _)| k.as_str()).collect();
    assert!(keys.contains(&"vm/dirty_bytes"));
    assert!(!keys.contains(&"vm/dirty_background_bytes"));
    // The ratio first: writing dirty_bytes afterwards must win.
    let ratio = keys.iter().position(|k| *k == "vm/dirty_ratio").unwrap();
    let bytes = keys.iter().position(|k| *k == "vm/dirty_bytes").unwrap();
    assert!(ratio < bytes);
}

#[test]
fn raid0_is_refused_with_the_reason_and_fuse_ntfs_maps() {
    let dev = "seq_write_mib_per_s = 19.073486328125\nmax_request_kib = 512\ncommand_overhead_us = 50.0\nsmall_write_penalty_us = 0.0\nnr_requests = 128\n";
    let sc = parse_scenario(
        &format!(
            "kernel = \"3.10\"\n[machine]\ncpus = 1\n[[machine.zone]]\nname = \"DMA32\"\nsize_mib = 236\n\
             [[device]]\nname = \"vda\"\nmodel = \"disk\"\ncapacity_gib = 2\n{dev}\
             [[device]]\nname = \"vdb\"\nmodel = \"disk\"\ncapacity_gib = 2\n{dev}\
             [[device]]\nname = \"md0\"\nmodel = \"raid0\"\nmembers = [\"vda\", \"vdb\"]\nchunk_kib = 512\n\
             [[fs]]\ntype = \"xfs\"\ndevice = \"md0\"\nmount = \"disk\"\n\
             [[task]]\nname = \"dd\"\ncommand = \"dd if=/dev/zero of=disk/f bs=1M count=8\"\n"
        ),
        "r.toml",
    );
    let e = lab_machine(&sc.unwrap()).unwrap_err().to_string();
    assert!(e.contains("RAID0"), "{e}");
    let fuse = scenario(
        &[("DMA32", 236)],
        "[[fs]]\ntype = \"fuse-ntfs\"\ndevice = \"vda\"\nmount = \"disk\"\n",
    );
    // fuse-ntfs maps: an NTFS image from mkntfs, the fuse module for a
    // Debian kernel; the ntfs-3g daemon itself is checked by run_lab.
    let m = lab_machine(&fuse).unwrap();
    assert_eq!(m.fs_type, FsType::FuseNtfs);
    assert_eq!(mkfs_command(m.fs_type, 3, "d.img")[0], "mkntfs");
    assert_eq!(fs_module(m.fs_type), Some("fuse"));
}

#[test]
fn swap_becomes_a_disk_sharing_the_data_disks_throttle() {
    let none = lab_machine(&scenario(&[("DMA32", 236)], "")).unwrap();
    assert_eq!(none.swap, None);
    let sc = scenario(
        &[("DMA32", 236)],
        "[swap]\ndevice = \"vda\"\nsize_mib = 64\n",
    );
    let m = lab_machine(&sc).unwrap();
    let sw = m.swap.expect("a swap disk");
    assert_eq!(sw.bytes, 64 << 20);
    assert!(sw.shares_data_throttle);
    assert_eq!(sw.write_bytes_per_second, 20_000_000);
    assert!(m.notes.iter().any(|n| n.starts_with("swap: 64 MiB")));
}

#[test]
fn mkfs_for_an_old_kernel_drops_features_it_cannot_mount() {
    let old = mkfs_command(FsType::Ext4, 3, "d.img").join(" ");
    assert!(old.contains("^metadata_csum") && old.ends_with("d.img"));
    let new = mkfs_command(FsType::Ext4, 6, "d.img").join(" ");
    assert!(!new.contains("metadata_csum"));
    assert!(mkfs_command(FsType::Xfs, 3, "d")
        .join(" ")
        .contains("crc=0"));
    assert!(mkfs_command(FsType::Btrfs, 3, "d")
        .join(" ")
        .contains("-R ^free-space-tree"));
}

#[test]
fn the_devices_request_size_and_queue_length_go_to_the_guest() {
    let m = lab_machine(&scenario(&[("DMA", 15), ("DMA32", 236)], "")).unwrap();
    assert_eq!(
        m.data_queue,
        vec![
            ("max_sectors_kb".to_string(), "512".to_string()),
            ("nr_requests".to_string(), "128".to_string()),
        ]
    );
    let note = m.notes.iter().find(|n| n.starts_with("vda:")).unwrap();
    assert!(
        note.contains("largest request 512 KiB and 128 requests queued set in the guest"),
        "{note}"
    );
    assert!(
        !note.contains("not expressible: command overhead 50 us, small-write penalty 0 us, 512"),
        "{note}"
    );
}

#[test]
fn a_numa_machine_is_refused_and_one_node_is_not() {
    let node = |cpus: u32, zone: &str| {
        format!("[[machine.node]]\ncpus = {cpus}\n[[machine.node.zone]]\nname = \"{zone}\"\nsize_mib = 128\n")
    };
    let text = |nodes: &str| {
        format!(
            "kernel = \"6.1\"\n[machine]\n{nodes}[[device]]\nname = \"vda\"\nmodel = \"disk\"\n\
             capacity_gib = 2\nseq_write_mib_per_s = 20\nmax_request_kib = 512\n[[fs]]\n\
             type = \"ext4\"\ndevice = \"vda\"\nmount = \"disk\"\n[[task]]\n\
             command = \"dd if=/dev/zero of=disk/f bs=1M count=8\"\n"
        )
    };
    let two = parse_scenario(&text(&(node(1, "DMA32") + &node(1, "Normal"))), "n.toml").unwrap();
    let e = lab_machine(&two).unwrap_err().to_string();
    assert!(e.contains("2 NUMA nodes"), "{e}");
    let one = parse_scenario(&text(&node(2, "DMA32")), "n.toml").unwrap();
    assert!(lab_machine(&one).is_ok());
}
