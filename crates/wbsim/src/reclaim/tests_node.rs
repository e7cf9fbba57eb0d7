//! Node-based reclaim (preset 6.1, read in v6.1 `mm/vmscan.c`) and MGLRU
//! (6.1+mglru): each test names the kernel decision it checks, on the
//! reclaim tests' one-zone machine (`tests::Machine`, high watermark 192).

use super::kswapd::{Kswapd, KswapdState};
use super::kswapd_node::KswapdNode;
use super::node::{NodeReclaim, MAX_RECLAIM_RETRIES};
use super::tests::{Machine, ZONE};
use super::ReclaimHost;
use crate::mm::filemap::Filemap;
use crate::mm::lru_gen::gen_list;
use crate::mm::page::{flags, Holder, LRU_INACTIVE_FILE};
use crate::mm::vmstat::{Ev, ZoneEv};
use crate::mm::MmHost;
use crate::reclaim::lru_gen::LruGenReclaim;
use crate::sched::HasCore;
use crate::writeback::account::end_page_writeback;
use crate::writeback::WritebackHost;

/// `shrink_folio_list` (6.1): a dirty file page direct reclaim may not
/// write is counted in nr_vmscan_immediate_reclaim, gets PG_reclaim and is
/// activated (`pgactivate`), "out of the way until it's flushed".
#[test]
fn a_dirty_page_reclaim_may_not_write_is_activated_with_pg_reclaim() {
    let mut m = Machine::new("6.1");
    let pfn = m.dirty_file_page(m.file, 0);
    let sc = m.shrink(LRU_INACTIVE_FILE, m.direct(12));
    assert_eq!((sc.nr_scanned, sc.nr_reclaimed), (1, 0));
    assert_eq!(m.place(pfn).0, Holder::ActiveFile);
    assert!(m.has(pfn, flags::RECLAIM) && !m.has(pfn, flags::WRITEBACK));
    assert_eq!(m.zone_stat(ZoneEv::NrVmscanImmediateReclaim), 1);
    assert_eq!(m.sys.mm().vmstat().get(Ev::PgActivate), 1);
    assert_eq!(
        (sc.nr.dirty, sc.nr.unqueued_dirty, sc.nr.file_taken),
        (1, 1, 1)
    );
    m.check();
}

/// Cases 1 and 2 of `shrink_folio_list` for a page under writeback: the
/// first meeting sets PG_reclaim and activates it (nr.writeback); kswapd
/// meeting it again on a node flagged PGDAT_WRITEBACK counts nr.immediate,
/// which makes `shrink_node` throttle kswapd.
#[test]
fn kswapd_counts_a_writeback_page_it_meets_twice_as_immediate() {
    let mut m = Machine::new("6.1");
    m.congested_writeback_tail(1, 1);
    let pfn = m.sys.mm().lruvec(ZONE).lists[LRU_INACTIVE_FILE].tail;
    let sc = m.shrink(LRU_INACTIVE_FILE, m.kswapd(12));
    assert_eq!((sc.nr.writeback, sc.nr.immediate), (1, 0));
    assert!(m.has(pfn, flags::RECLAIM));
    assert_eq!(m.place(pfn).0, Holder::ActiveFile);
    // shrink_node's flag: every page taken was under writeback.
    let mut sc = sc;
    m.sys.shrink_node_flags(&mut sc, 0);
    assert!(m.sys.reclaim().node[0].writeback);
    // Back at the inactive tail, met again.
    m.sys.mm_mut().lru_unlink(pfn);
    m.sys.mm_mut().pages_mut()[pfn as usize].flags &= !flags::ACTIVE;
    m.sys.mm_mut().lru_link_head(pfn, LRU_INACTIVE_FILE);
    let mut sc = m.shrink(LRU_INACTIVE_FILE, m.kswapd(12));
    assert_eq!(sc.nr.immediate, 1);
    sc.stall = None;
    m.sys.shrink_node_flags(&mut sc, 0);
    assert!(sc.stall.is_some(), "kswapd throttles on nr.immediate");
}

/// `folio_end_writeback` → `folio_rotate_reclaimable`: 4.11+ takes an
/// active PG_reclaim page to the inactive tail, clearing PG_active
/// (`pgrotated`); 3.x rotated inactive pages only.
#[test]
fn the_end_of_writeback_takes_an_active_reclaim_page_to_the_inactive_tail_from_4_11() {
    for (kernel, rotated) in [("6.1", true), ("3.10", false)] {
        let mut m = Machine::new(kernel);
        let pfn = m.file_page(m.file, 0);
        m.file_page(m.file, 1);
        m.sys.mm_mut().lru_unlink(pfn);
        let p = &mut m.sys.mm_mut().pages_mut()[pfn as usize];
        p.flags |= flags::ACTIVE | flags::RECLAIM;
        m.sys
            .mm_mut()
            .lru_link_head(pfn, crate::mm::page::LRU_ACTIVE_FILE);
        // Under writeback, counted as the writeback path counts it.
        m.sys.mm_mut().pages_mut()[pfn as usize].flags |= flags::WRITEBACK;
        m.sys.mm_mut().zone_mut(ZONE).nr_writeback += 1;
        m.sys.mm_mut().gauges_mut().nr_writeback += 1;
        let bdi = m.sys.mm().inode(m.file).bdi();
        m.sys.mm_mut().inode_mut(m.file).nr_writeback += 1;
        m.sys.wb_mut().bdi_mut(bdi).writeback += 1;
        end_page_writeback(&mut m.sys, pfn);
        let tail = m.sys.mm().lruvec(ZONE).lists[LRU_INACTIVE_FILE].tail == pfn;
        assert_eq!(
            (m.place(pfn).0 == Holder::InactiveFile, tail),
            (rotated, rotated),
            "{kernel}"
        );
        assert_eq!(
            m.sys.mm().vmstat().get(Ev::PgRotated),
            rotated as u64,
            "{kernel}"
        );
        m.check();
    }
}

/// `pgdat_balanced`: the node is balanced while a zone meets its high
/// watermark (192 here), with no pass needed.
#[test]
fn the_node_is_balanced_while_a_zone_meets_its_high_watermark() {
    let mut m = Machine::new("6.1");
    m.leave_free(300);
    assert!(m.sys.pgdat_balanced(ZONE));
    m.leave_free(150);
    assert!(!m.sys.pgdat_balanced(ZONE));
}

/// `balance_pgdat` (4.12+): the priority drops after every pass that
/// scans less than the target (the zone's high watermark, 192 pages), and
/// the node is tested for balance before each pass: a 2,000-page list is
/// due `len >> p` pages at priority p, 0 + 0 + 1 + 3 + 7 + 15 + 30 = 56
/// from 12 down to 6, which lift 150 free pages over the high watermark
/// (the call began as kswapd's does: ZONE_RECLAIM_ACTIVE keeps the
/// per-CPU lists at 4 x batch, so the freed pages reach the free count).
#[test]
fn kswapd_lowers_the_priority_until_a_pass_scans_its_target() {
    let mut m = Machine::new("6.1");
    m.file_pages(m.file, 2000, false);
    m.leave_free(150);
    let tid = m.sys.kswapd_task();
    let mut k = KswapdState::default();
    m.sys.loop_again(&mut k);
    m.sys.balance_node_begin(&mut k);
    let mut priorities = Vec::new();
    for _ in 0..20 {
        if m.sys.pgdat_balanced(ZONE) {
            break;
        }
        priorities.push(k.priority);
        m.sys.balance_node_step(tid, &mut k);
    }
    assert_eq!(priorities, [12, 11, 10, 9, 8, 7, 6]);
    assert!(m.sys.pgdat_balanced(ZONE));
    assert_eq!(m.sys.mm().vmstat().get(Ev::KswapdSteal), 56);
    m.check();
}

/// `kswapd_failures`: a `balance_pgdat` call that reclaims nothing counts
/// one; kswapd then goes straight back to balancing (no sleep on an
/// unbalanced node) until MAX_RECLAIM_RETRIES, when it may sleep.
#[test]
fn kswapd_gives_up_on_a_node_after_sixteen_fruitless_calls() {
    let mut m = Machine::new("6.1");
    m.leave_free(100);
    let tid = m.sys.kswapd_task();
    let mut k = KswapdState::default();
    m.sys.loop_again(&mut k);
    for _ in 0..12 * MAX_RECLAIM_RETRIES as usize {
        m.sys.balance_node_step(tid, &mut k);
    }
    assert_eq!(m.sys.reclaim().node[0].kswapd_failures, MAX_RECLAIM_RETRIES);
    assert!(m.sys.prepare_kswapd_sleep(&m.sys.reclaim().kswapd_state(0)));
}

/// MGLRU's `lru_gen_add_folio` (Debian 6.1.192): a new page-cache page
/// goes to the second-oldest generation while more than `MIN_NR_GENS`
/// exist; `sort_folio` moves a dirty page at the oldest generation's
/// tail on with PG_reclaim (`pgrefill`) instead of isolating it, and the
/// clean pages behind it are evicted (`pgscan_*` counts only those).
#[test]
fn mglru_moves_a_dirty_tail_page_on_and_evicts_the_clean_ones() {
    let mut m = Machine::new("6.1+mglru");
    let cpu = 0;
    let dirty = crate::test_support::dirty_file_pages(&mut m.sys, m.file, 1)[0];
    for idx in 1..4 {
        let gfp = crate::mm::Gfp::movable(true);
        m.sys.find_or_create_page(0, m.file, idx, gfp).unwrap();
    }
    m.sys.mm_mut().lru_add_drain(cpu);
    let g = m.sys.mm().gen_seq(0);
    assert_eq!((g.min_seq[1], g.max_seq), (0, 3));
    assert_eq!(m.place(dirty).0, Holder::from_lru(gen_list(1, 1, ZONE)));
    // The oldest generation empties (`try_to_inc_min_seq`): the page's
    // is now the oldest of three.
    m.sys.mm_mut().try_to_inc_min_seq(0, 1..=1);
    assert_eq!(m.sys.mm().gen_seq(0).min_seq[1], 1);
    let mut sc = m.kswapd(12);
    let looked = m.sys.evict_folios(&mut sc);
    assert_eq!(looked, 4);
    assert!(m.has(dirty, flags::RECLAIM));
    assert_eq!(m.place(dirty).0, Holder::from_lru(gen_list(1, 2, ZONE)));
    assert_eq!(m.sys.mm().gen_pages(0, 1, 2), 1);
    assert_eq!(m.zone_stat(ZoneEv::PgRefill), 1);
    assert_eq!(m.zone_stat(ZoneEv::PgScanKswapd), 3);
    assert_eq!(sc.nr_reclaimed, 3);
    m.check();
}

/// `isolate_lru_folios` (4.8+): reclaim for DMA alone walks past the
/// node list's DMA32 pages, counting them as scanned, and pays each a list
/// move (`lru_skip_page_ns`), not a page's scan (`scan_page_ns`).
#[test]
fn reclaim_for_a_low_zone_walks_past_higher_pages_at_a_list_moves_cost() {
    use crate::reclaim::pageout::ShrinkList;
    use crate::reclaim::ScanControl;
    let mut sc = crate::test_support::usb_stick_scenario("6.1", "xfs", 1, &["f"]);
    let mut dma = sc.machine.zones[0].clone();
    dma.kind = crate::scenario::ZoneKind::Dma;
    dma.size_mib = 16;
    sc.machine.zones.insert(0, dma);
    let profile = crate::kernel::preset("6.1").unwrap();
    let mut sys = crate::system::build_system(&sc, &profile, 1);
    let file = (0..sys.mm().nr_inodes() as u32)
        .find(|&i| sys.mm().inode(i).kind == crate::mm::inode::MappingKind::Regular)
        .unwrap();
    // Clean pages from the top of the zonelist: DMA32 (zone 1).
    let gfp = crate::mm::Gfp::movable(false);
    for idx in 0..40 {
        let pfn = sys.find_or_create_page(0, file, idx, gfp).unwrap();
        assert_eq!(sys.mm().pages().zone_of(pfn), 1);
    }
    sys.mm_mut().lru_add_drain(0);
    let tid = sys.kswapd_task();
    let mut control = ScanControl {
        tid,
        nid: 0,
        is_kswapd: true,
        may_writepage: true,
        nr_to_reclaim: u64::MAX,
        nr_scanned: 0,
        nr_reclaimed: 0,
        priority: 12,
        stall: None,
        nr: Default::default(),
        reclaim_idx: Some(0),
    };
    // Outside a step: the charges are the step's cost so far.
    sys.core_mut().begin_step();
    sys.shrink_inactive_list(1, LRU_INACTIVE_FILE, 32, &mut control);
    let cost = sys.cost();
    assert_eq!((control.nr_scanned, control.nr_reclaimed), (40, 0));
    assert_eq!(sys.step_cost_ns(), 40 * cost.lru_skip_page_ns);
    assert!(cost.lru_skip_page_ns * 10 < cost.scan_page_ns);
}
