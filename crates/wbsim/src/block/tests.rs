//! The request queue's merging, congestion and wbt rules.

use super::*;

fn seg(i: u32) -> Segment {
    Segment {
        inode: 1,
        first_index: i,
        nr_pages: 1,
    }
}

#[test]
fn congestion_thresholds_match_the_kernel() {
    assert_eq!(congestion_thresholds(128), (113, 103));
    assert_eq!(congestion_thresholds(4), (4, 3));
}

#[test]
fn adjacent_bios_merge_up_to_max_sectors() {
    let mut q = RequestQueue::new(128, 240);
    for i in 0..30u32 {
        q.submit(1000 + 8 * i as u64, 8, seg(i));
    }
    // 30 pages = 240 sectors fit one request; the 31st starts another.
    assert_eq!(q.queued.len(), 1);
    assert_eq!(q.submit(1240, 8, seg(30)), Submitted::NewRequest);
    let r = q.request(q.queued[0]);
    assert_eq!((r.start_sector, r.nr_sectors), (1000, 240));
    assert_eq!(
        r.segs,
        vec![Segment {
            inode: 1,
            first_index: 0,
            nr_pages: 30
        }]
    );
    // Front merge.
    assert_eq!(q.submit(992, 8, seg(99)), Submitted::NewRequest); // first is full
    assert_eq!(q.submit(984, 8, seg(98)), Submitted::Merged);
    assert_eq!(q.stats.write_requests, 3);
}

#[test]
fn congestion_sets_and_clears() {
    let mut q = RequestQueue::new(8, 8);
    let (on, off) = congestion_thresholds(8);
    for i in 0..on {
        assert!(!q.congested);
        q.submit(16 * i as u64, 8, seg(i));
    }
    assert!(q.congested);
    let mut cleared = false;
    while let Some(s) = q.dispatch() {
        cleared |= q.complete(s, 0);
        if cleared {
            assert!(q.allocated() < off);
            break;
        }
    }
    assert!(cleared && !q.congested);
}

/// Reads go to the device before older writes, in their own queue order;
/// writes then leave in FIFO order; completions may come in any order.
#[test]
fn reads_dispatch_first_and_completions_come_in_any_order() {
    let mut q = RequestQueue::new(128, 8);
    for (i, read) in [false, true, false, true, false].into_iter().enumerate() {
        q.submit_dir(1000 * i as u64, 8, seg(i as u32), read, 0);
    }
    let mut order = Vec::new();
    while let Some(slot) = q.dispatch() {
        order.push(q.request(slot).start_sector);
    }
    assert_eq!(order, [1000, 3000, 0, 2000, 4000]);
    assert_eq!(q.allocated(), 5);
    let slot_at = |q: &RequestQueue, sector: u64| {
        (0..q.slots.len())
            .find(|&s| q.slots[s].in_flight && q.slots[s].start_sector == sector)
            .expect("request in flight")
    };
    for sector in [2000, 0, 4000, 1000, 3000] {
        let slot = slot_at(&q, sector);
        let _ = q.complete(slot, 0);
    }
    assert_eq!(q.allocated(), 0);
    assert!(q.dispatch().is_none());
}

#[test]
#[should_panic(expected = "not at the device")]
fn completing_a_request_not_dispatched_panics() {
    let mut q = RequestQueue::new(128, 8);
    q.submit(0, 8, seg(0));
    let slot = q.queued[0];
    let _ = q.complete(slot, 0);
}

/// blk-mq with wbt: no congestion, and a new write request waits once
/// the writes allocated reach its class's limit (16 at first: 4 for
/// background writeback, 8 for sync, 16 for kswapd or a device whose
/// writers were throttled within a second); completions free them.
#[test]
fn blk_mq_keeps_no_congestion_and_wbt_caps_writes_by_class() {
    let rules = QueueRules {
        congestion: false,
        wbt: true,
    };
    let mut q = RequestQueue::with_rules(128, 8, rules, true);
    for i in 0..4 {
        assert!(!q.write_must_wait(WbtClass::Background, 0));
        q.submit(16 * i as u64, 8, seg(i));
    }
    assert!(q.write_must_wait(WbtClass::Background, 0));
    assert!(!q.write_must_wait(WbtClass::Normal, 0));
    for i in 4..16 {
        q.submit(16 * i as u64, 8, seg(i));
    }
    assert!(q.write_must_wait(WbtClass::Max, 0) && !q.is_full(0));
    assert!(!q.congested, "blk-mq keeps no congestion state");
    let slot = q.dispatch().unwrap();
    q.complete(slot, 1_000);
    assert!(!q.write_must_wait(WbtClass::Max, 0));
}

/// Counting the requests with room never hides a merge: over a mixed
/// stream of sequential, rewritten and random bios, merges into the
/// front and the back, request insertion and dispatch, `find_merge`
/// answers what a plain scan of the queue answers.
#[test]
fn skipping_the_scan_never_hides_a_merge() {
    let scan = |q: &RequestQueue, sector: u64, nr: u64, read: bool| {
        q.queued
            .iter()
            .rev()
            .find_map(|&slot| Some((slot, q.bio_fits(slot, sector, nr, read)?)))
    };
    let mut q = RequestQueue::new(32, 64);
    let mut x: u64 = 12345;
    let (mut hits, mut skipped) = (0, 0);
    for i in 0..20_000u32 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        // Phases of streaming writeback (every request filled to
        // max_sectors) and of a mix of rewrites, random, descending
        // (front merges), unaligned and read bios.
        let streaming = (i / 1000) % 2 == 0;
        let sector = match x >> 62 {
            _ if streaming => 8 * u64::from(i),
            0 => 8 * (i as u64 % 512),
            1 => 8 * ((x >> 20) % 256),
            2 => 8 * (512 - (i as u64 % 512)),
            _ => (x >> 30) % 4096,
        };
        let read = !streaming && (x >> 10).is_multiple_of(16);
        let nr = if streaming { 8 } else { 8 * (1 + (x >> 5) % 3) };
        let found = q.find_merge(sector, nr, read);
        assert_eq!(found, scan(&q, sector, nr, read), "bio {i}");
        hits += usize::from(found.is_some());
        skipped += usize::from(q.with_room.len() < q.queued.len());
        if (x >> 40).is_multiple_of(8) {
            let slot = q.alloc_request(sector, nr, seg(i), read, 0);
            q.insert_request(slot);
        } else if !q.is_full(0) {
            q.submit_dir(sector, nr, seg(i), read, 0);
        }
        while q.queued.len() > 24 || (x >> 50).is_multiple_of(4) {
            match q.dispatch() {
                Some(slot) => {
                    q.complete(slot, 0);
                }
                None => break,
            }
        }
    }
    assert!(
        hits > 1000 && skipped > 100,
        "merges {hits}, skipped scans {skipped}"
    );
}

/// blk-mq: each hardware queue has nr_requests tags; a write needs one of
/// its own queue's, and wbt's limits come from the depth the queue had at
/// registration, not from nr_requests.
#[test]
fn blk_mq_tags_are_per_hardware_queue_and_wbt_keeps_its_boot_depth() {
    let rules = QueueRules {
        congestion: false,
        wbt: true,
    };
    let mut q = RequestQueue::with_rules(4, 8, rules, true);
    q.size_wbt_from(256);
    q.set_hw_queues(2);
    assert!(q.sync_writes_share_the_pool());
    for i in 0..4 {
        assert!(!q.is_full(0));
        q.submit_dir(16 * i as u64, 8, seg(i), false, 0);
    }
    assert!(q.is_full(0) && !q.is_full(1));
    assert!(q.write_must_wait(WbtClass::Max, 0));
    assert!(
        !q.write_must_wait(WbtClass::Normal, 1),
        "wbt counts the device: 4 of 8"
    );
    assert!(q.write_must_wait(WbtClass::Background, 1), "4 of 4");
    let slot = q.dispatch().unwrap();
    q.complete(slot, 1_000);
    assert!(!q.is_full(0));
    assert_eq!(q.wbt.unwrap().limit(WbtClass::Max), 16);

    let single = RequestQueue::new(4, 8);
    assert!(!single.sync_writes_share_the_pool());
}

/// `map_bio` on a machine with an md array: the array's bios go to its
/// members by chunk, and a member's own bios (or any plain device's)
/// stay where they are; without an array every device answers from
/// `any_raid` alone.
#[test]
fn map_bio_remaps_only_an_arrays_bios() {
    use crate::block::BlockHost;
    use crate::scenario::parse_scenario;
    let text = include_str!("../../../../scenarios/writeback-plug/fsmark-xfs-raid0.toml");
    let sc = parse_scenario(text, "fsmark-xfs-raid0.toml").unwrap();
    let kernel = crate::kernel::preset("3.10").unwrap();
    let sys = crate::system::build_system(&sc, &kernel, 1);
    let name = |n: &str| sc.devices.iter().position(|d| d.name == n).unwrap();
    let (ssd0, ssd1, md0) = (name("ssd0"), name("ssd1"), name("md0"));
    let layer = sys.block();
    assert!(layer.any_raid);
    assert_eq!(layer.map_bio(ssd1, 12_345), (ssd1, 12_345, u64::MAX));
    let (member, _, left) = layer.map_bio(md0, 0);
    assert!(member == ssd0 || member == ssd1);
    assert!(left < u64::MAX, "an array's bio is cut at its chunk's end");
    let plain = crate::test_support::usb_stick_files("3.10", "xfs", &["a"]).0;
    assert!(!plain.block().any_raid);
    assert_eq!(plain.block().map_bio(0, 8), (0, 8, u64::MAX));
}
