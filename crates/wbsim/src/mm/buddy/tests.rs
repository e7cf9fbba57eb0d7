//! The buddy lists against hand-worked layouts (pfns are the model's; the
//! physical pfn is `FIRST_PFN` more, so model pfn 256 starts a pageblock).

use super::*;
use crate::mm::page::test_frames;

/// Frames `0..n`, all free, in a zone of the whole range.
fn zone(n: u32) -> (Frames, Buddy) {
    let mut pages = test_frames(n as usize);
    let mut buddy = Buddy::new(0, n);
    for pfn in 0..n {
        let mt = buddy.block_type(pfn);
        buddy.free_one(&mut pages, pfn, mt, true);
    }
    (pages, buddy)
}

fn buddies(b: &Buddy, mt: usize) -> Vec<(usize, u64)> {
    (0..MAX_ORDER)
        .filter(|&o| b.free_area[o][mt].len > 0)
        .map(|o| (o, b.free_area[o][mt].len))
        .collect()
}

#[test]
fn free_pages_coalesce_into_aligned_buddies() {
    // Model pfns 0..2304 are physical 256..2560: an order-8 buddy
    // (256..511), an order-9 (512..1023), an order-10 (1024..2047) and an
    // order-9 (2048..2559).
    let (_, b) = zone(2304);
    assert_eq!(b.nr_free, 2304);
    assert_eq!(buddies(&b, MIGRATE_MOVABLE), vec![(8, 1), (9, 2), (10, 1)]);
}

#[test]
fn an_allocation_splits_the_smallest_buddy_and_its_free_merges_it_again() {
    let (mut pages, mut b) = zone(2304);
    let (pfn, fallback) = b.rmqueue(&mut pages, MIGRATE_MOVABLE).unwrap();
    assert_eq!((pfn, fallback), (0, None), "the order-8 buddy is split");
    assert_eq!(b.free_area[8][MIGRATE_MOVABLE].len, 0);
    assert_eq!(b.free_of_type(MIGRATE_MOVABLE), 2303);
    pages[pfn as usize].holder = Holder::Kernel;
    b.free_page(&mut pages, pfn, MIGRATE_MOVABLE);
    assert_eq!(buddies(&b, MIGRATE_MOVABLE), vec![(8, 1), (9, 2), (10, 1)]);
}

#[test]
fn a_reclaimable_fallback_takes_the_largest_buddy_and_its_blocks() {
    // 6.1's first DMA fallback in every ext4 boot: a RECLAIMABLE slab page
    // takes the order-10 MOVABLE buddy, both its pageblocks change type
    // outright and no boost follows.
    let (mut pages, mut b) = zone(2304);
    let (pfn, fallback) = b.rmqueue(&mut pages, MIGRATE_RECLAIMABLE).unwrap();
    let f = fallback.expect("a fallback");
    assert_eq!((f.from, f.to, f.order, f.fragmenting), (1, 2, 10, false));
    assert_eq!(pfn, 768, "physical 1024, the order-10 buddy's first page");
    assert_eq!((f.pfn, f.change_ownership), (768, true));
    assert_eq!(b.block_type(768), MIGRATE_RECLAIMABLE);
    assert_eq!(b.block_type(768 + 512), MIGRATE_RECLAIMABLE);
    assert_eq!(b.block_type(0), MIGRATE_MOVABLE);
    assert_eq!(b.blocks_of_type(MIGRATE_RECLAIMABLE), 2);
    assert_eq!(b.free_of_type(MIGRATE_RECLAIMABLE), 1023);
}

#[test]
fn a_movable_fallback_into_part_of_a_block_fragments_it_and_claims_it() {
    // The MOVABLE lists emptied, a RECLAIMABLE block with an order-8
    // buddy free: the page cache takes the whole block's free pages (an
    // order of 4 or more may), the block becomes MOVABLE (at least half of
    // it is free) and the fallback fragments it (a boost).
    let (mut pages, mut b) = zone(768);
    // Physical 256..1023: order 8 at 0, order 9 at 256 (one block).
    for pfn in 256..768 {
        b.set_block_type(pfn, MIGRATE_RECLAIMABLE);
    }
    let order9 = b.free_area[9][MIGRATE_MOVABLE].head;
    b.move_buddy(&mut pages, order9, 9, MIGRATE_RECLAIMABLE);
    // Use the order-8 MOVABLE buddy up.
    for _ in 0..256 {
        let (pfn, f) = b.rmqueue(&mut pages, MIGRATE_MOVABLE).unwrap();
        assert!(f.is_none());
        pages[pfn as usize].holder = Holder::Kernel;
    }
    // A reclaimable page from the order-9 buddy leaves order 8..0 buddies.
    let (pfn, f) = b.rmqueue(&mut pages, MIGRATE_RECLAIMABLE).unwrap();
    assert!(f.is_none());
    pages[pfn as usize].holder = Holder::Kernel;
    let (_, f) = b.rmqueue(&mut pages, MIGRATE_MOVABLE).unwrap();
    let f = f.expect("a fallback");
    assert_eq!((f.from, f.to, f.order, f.fragmenting), (2, 1, 8, true));
    assert_eq!(
        (f.pfn, f.change_ownership),
        (512, true),
        "the order-8 buddy"
    );
    assert_eq!(b.block_type(256), MIGRATE_MOVABLE);
    assert_eq!(b.free_of_type(MIGRATE_RECLAIMABLE), 0);
    assert_eq!(b.free_of_type(MIGRATE_MOVABLE), 510);
}

#[test]
fn only_small_buddies_left_a_movable_fallback_moves_the_smallest_alone() {
    // An order below 4: the page cache may not take the block; it takes
    // the smallest buddy of the other type alone (find_smallest), and the
    // block keeps its type.
    let (mut pages, mut b) = zone(256);
    for pfn in 0..256 {
        b.set_block_type(pfn, MIGRATE_UNMOVABLE);
    }
    // Leave free only pfns 0..3 (order 2) and 8 (order 0), on UNMOVABLE.
    let mut taken = Vec::new();
    while let Some((pfn, _)) = b.rmqueue(&mut pages, MIGRATE_MOVABLE) {
        pages[pfn as usize].holder = Holder::Kernel;
        taken.push(pfn);
    }
    for pfn in [0, 1, 2, 3, 8] {
        b.free_page(&mut pages, pfn, MIGRATE_UNMOVABLE);
    }
    assert_eq!(buddies(&b, MIGRATE_UNMOVABLE), vec![(0, 1), (2, 1)]);
    let (pfn, f) = b.rmqueue(&mut pages, MIGRATE_MOVABLE).unwrap();
    let f = f.expect("a fallback");
    assert_eq!((f.order, f.fragmenting, pfn), (0, true, 8));
    assert_eq!(
        (f.pfn, f.change_ownership),
        (8, false),
        "the block stays UNMOVABLE"
    );
    assert_eq!(b.block_type(0), MIGRATE_UNMOVABLE);
    assert_eq!(buddies(&b, MIGRATE_UNMOVABLE), vec![(2, 1)]);
}

#[test]
fn can_steal_follows_order_and_type() {
    let b = Buddy::new(0, 1024);
    assert!(b.can_steal_fallback(9, MIGRATE_MOVABLE));
    assert!(b.can_steal_fallback(4, MIGRATE_MOVABLE));
    assert!(!b.can_steal_fallback(3, MIGRATE_MOVABLE));
    assert!(b.can_steal_fallback(0, MIGRATE_RECLAIMABLE));
    assert!(b.can_steal_fallback(0, MIGRATE_UNMOVABLE));
}

/// At a 64 KiB unit a pageblock is still 2 MiB (32 pages of the unit),
/// the largest buddy 4 MiB, and the reserved first MiB 16 pages.
#[test]
fn a_coarse_unit_keeps_the_pageblock_in_bytes() {
    let b = Buddy::at_unit(0, 1024, crate::mm::unit::PageUnit::from_kib(64));
    assert_eq!(
        (b.pageblock_order(), b.pageblock_pages(), b.first_pfn()),
        (5, 32, 16)
    );
    assert!(b.can_steal_fallback(5, MIGRATE_MOVABLE));
    assert!(!b.can_steal_fallback(1, MIGRATE_MOVABLE));
}

/// Debian 6.1's DMA at dd start (`kernel_kib = 128`, a traced 512 MiB
/// boot): the kernel's 32 pages make the zone's first pageblock (physical
/// 0x100-0x1ff) UNMOVABLE, its 224 other pages free but out of the page
/// cache's reach, and the page cache has the other 3,584 in MOVABLE blocks.
#[test]
fn a_boot_holding_under_a_mib_makes_dmas_first_block_unmovable() {
    let text = "kernel = \"6.1\"\n[machine]\ncpus = 1\n\
        [[machine.zone]]\nname = \"DMA\"\nsize_mib = 15\nkernel_kib = 128\n\
        [[machine.zone]]\nname = \"DMA32\"\nsize_mib = 64\n\
        [[device]]\nname = \"sda\"\nmodel = \"ssd\"\ncapacity_gib = 1\nseq_write_mib_per_s = 100.0\nmax_request_kib = 512\n\
        [[fs]]\ntype = \"ext4\"\ndevice = \"sda\"\nmount = \"d\"\n\
        [[task]]\nname = \"dd\"\ncommand = \"dd if=/dev/zero of=d/f bs=4k count=1\"\n";
    let sc = crate::scenario::parse_scenario(text, "t.toml").unwrap();
    let profile = crate::kernel::KernelProfile {
        watermark_boosting: true,
        ..crate::kernel::preset("6.1").unwrap()
    };
    let sys = crate::system::build::build_system(&sc, &profile, 1);
    let dma = crate::mm::MmHost::mm(&sys)
        .zone(0)
        .buddy
        .as_ref()
        .expect("mobility grouping on");
    assert_eq!(dma.free_of_type(MIGRATE_UNMOVABLE), 224);
    assert_eq!(dma.free_of_type(MIGRATE_MOVABLE), 3_584);
    assert_eq!(dma.blocks_of_type(MIGRATE_UNMOVABLE), 1);
}
