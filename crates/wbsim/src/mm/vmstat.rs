//! /proc/vmstat counters (`mm/vmstat.c: vmstat_text`, 3.0 names).
//!
//! Event counters only grow; gauges (`nr_dirty`, ...) are read from the live
//! state when a snapshot is taken. Per-zone event counters carry the zone
//! suffix as /proc/vmstat prints them (`pgscan_kswapd_dma32`).

use std::collections::BTreeMap;

/// Global event counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(usize)]
pub enum Ev {
    NrDirtied,
    NrWritten,
    PgpgOut,
    PgFree,
    PgActivate,
    PgDeactivate,
    PgRotated,
    KswapdSteal,
    PageOutRun,
    AllocStall,
    KswapdLowWmarkHitQuickly,
    KswapdHighWmarkHitQuickly,
    KswapdSkipCongestionWait,
    SlabsScanned,
    /// Gorman RFC (Jul 2011) zone stats, summed: dirty file pages skipped
    /// (patches 1–3), throttled batches (3–5), orphaned pages (4–5).
    NrVmscanWriteSkip,
    NrVmscanThrottled,
    NrVmscanInvalidate,
    PgpgIn,
    PswpIn,
    PswpOut,
    PgFault,
    PgMajFault,
    /// Page-cache pages freed with inodes pruned by direct reclaim / kswapd.
    PgInodeSteal,
    KswapdInodeSteal,
}

pub const EV_NAMES: [&str; 24] = [
    "nr_dirtied",
    "nr_written",
    "pgpgout",
    "pgfree",
    "pgactivate",
    "pgdeactivate",
    "pgrotated",
    "kswapd_steal",
    "pageoutrun",
    "allocstall",
    "kswapd_low_wmark_hit_quickly",
    "kswapd_high_wmark_hit_quickly",
    "kswapd_skip_congestion_wait",
    "slabs_scanned",
    "nr_vmscan_write_skip",
    "nr_vmscan_throttled",
    "nr_vmscan_invalidate",
    "pgpgin",
    "pswpin",
    "pswpout",
    "pgfault",
    "pgmajfault",
    "pginodesteal",
    "kswapd_inodesteal",
];

/// Whether the /proc/vmstat or zoneinfo item `name` counts pages (or
/// page events: one per page scanned, written, faulted), so that a run at
/// a coarse [`crate::mm::unit::PageUnit`] reports it times the 4 KiB pages
/// of a unit. The others count events of their own (a reclaim pass, a
/// stall, a slab object, a throttled batch), or KiB (`pgpgin`,
/// `pgpgout`).
pub fn counts_pages(name: &str) -> bool {
    const NOT_PAGES: &[&str] = &[
        "pageoutrun",
        "kswapd_low_wmark_hit_quickly",
        "kswapd_high_wmark_hit_quickly",
        "kswapd_skip_congestion_wait",
        "slabs_scanned",
        "nr_vmscan_throttled",
        "pgpgin",
        "pgpgout",
    ];
    !(NOT_PAGES.contains(&name) || name.starts_with("allocstall"))
}

/// Per-zone event counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(usize)]
pub enum ZoneEv {
    PgAlloc,
    PgRefill,
    PgStealKswapd,
    PgStealDirect,
    PgScanKswapd,
    PgScanDirect,
    NrVmscanWrite,
    /// NR_VMSCAN_IMMEDIATE, dirty file pages reclaim skipped and marked
    /// PG_reclaim (3.2+): a zone stat in 3.x (`inc_zone_page_state` in
    /// `shrink_page_list`), so /proc/zoneinfo has it per zone.
    NrVmscanImmediateReclaim,
}

/// Every `ZoneEv`, in `ZONE_EV_NAMES` order.
const ZONE_EV: [ZoneEv; 8] = [
    ZoneEv::PgAlloc,
    ZoneEv::PgRefill,
    ZoneEv::PgStealKswapd,
    ZoneEv::PgStealDirect,
    ZoneEv::PgScanKswapd,
    ZoneEv::PgScanDirect,
    ZoneEv::NrVmscanWrite,
    ZoneEv::NrVmscanImmediateReclaim,
];

pub const ZONE_EV_NAMES: [&str; 8] = [
    "pgalloc",
    "pgrefill",
    "pgsteal_kswapd",
    "pgsteal_direct",
    "pgscan_kswapd",
    "pgscan_direct",
    "nr_vmscan_write",
    "nr_vmscan_immediate_reclaim",
];

/// `allocstall_<zone>` (4.8+, the node-LRU series; read in 6.1
/// `do_try_to_free_pages`: `__count_zid_vm_events(ALLOCSTALL,
/// sc->reclaim_idx, 1)`): each direct reclaim is counted under the highest
/// zone its allocation may use, `gfp_zone` of its flags. Every allocation
/// the model makes is a page-cache or anonymous page of a process
/// (GFP_HIGHUSER_MOVABLE), so every stall is `allocstall_movable`; the
/// other zones' counters are printed 0, as the kernel prints them.
pub fn allocstall_by_zone(allocstall: u64) -> [(&'static str, u64); 4] {
    [
        ("allocstall_dma", 0),
        ("allocstall_dma32", 0),
        ("allocstall_normal", 0),
        ("allocstall_movable", allocstall),
    ]
}

/// The page-state items of `global_page_state` the model keeps as live
/// gauges (the zone's own are in `Zone`).
#[derive(Debug, Clone, Copy, Default)]
pub struct PageGauges {
    /// `NR_FILE_DIRTY`.
    pub nr_dirty: u64,
    /// `NR_WRITEBACK`.
    pub nr_writeback: u64,
    /// `NR_WRITEBACK_TEMP` (FUSE's temporary pages).
    pub nr_writeback_temp: u64,
}

#[derive(Debug, Clone, Default)]
pub struct Vmstat {
    pub ev: [u64; EV_NAMES.len()],
    /// Indexed by zone number, then `ZoneEv`.
    pub zone_ev: Vec<[u64; ZONE_EV_NAMES.len()]>,
    /// Pages reclaim isolated and freed by type, [anon, file]
    /// (`pgscan_anon` / `pgscan_file`, `pgsteal_anon` / `pgsteal_file`,
    /// 5.8+ names, read in 6.1 `shrink_inactive_list` and
    /// `evict_folios`).
    pub scanned_by_type: [u64; 2],
    pub stolen_by_type: [u64; 2],
    /// `pgskip_<zone>` (4.8+, `isolate_lru_folios`): LRU pages reclaim
    /// walked past because their zone was above its `reclaim_idx`, by
    /// zone type (DMA, DMA32, Normal, Movable).
    pub skipped_by_zone_type: [u64; 4],
}

impl Vmstat {
    pub fn new(nr_zones: usize) -> Self {
        Vmstat {
            ev: [0; EV_NAMES.len()],
            zone_ev: vec![[0; ZONE_EV_NAMES.len()]; nr_zones],
            scanned_by_type: [0; 2],
            stolen_by_type: [0; 2],
            skipped_by_zone_type: [0; 4],
        }
    }

    /// `pgscan_anon`, `pgscan_file`, `pgsteal_anon`, `pgsteal_file`.
    pub fn by_type(&self) -> [(&'static str, u64); 4] {
        [
            ("pgscan_anon", self.scanned_by_type[0]),
            ("pgscan_file", self.scanned_by_type[1]),
            ("pgsteal_anon", self.stolen_by_type[0]),
            ("pgsteal_file", self.stolen_by_type[1]),
        ]
    }

    /// `pgskip_dma`, `pgskip_dma32`, `pgskip_normal`, `pgskip_movable`.
    pub fn skipped(&self) -> [(&'static str, u64); 4] {
        let s = self.skipped_by_zone_type;
        [
            ("pgskip_dma", s[0]),
            ("pgskip_dma32", s[1]),
            ("pgskip_normal", s[2]),
            ("pgskip_movable", s[3]),
        ]
    }

    #[inline]
    pub fn inc(&mut self, e: Ev, n: u64) {
        self.ev[e as usize] += n;
    }

    #[inline]
    pub fn zinc(&mut self, zone: usize, e: ZoneEv, n: u64) {
        self.zone_ev[zone][e as usize] += n;
    }

    /// Take back `n` counted by `inc` (a count the kernel undoes, as
    /// `account_page_redirty` does NR_DIRTIED).
    pub fn dec(&mut self, e: Ev, n: u64) {
        self.ev[e as usize] -= n;
    }

    pub fn get(&self, e: Ev) -> u64 {
        self.ev[e as usize]
    }

    /// Counter `e` of zone `zone` alone.
    pub fn zone_stat(&self, zone: usize, e: ZoneEv) -> u64 {
        self.zone_ev[zone][e as usize]
    }

    pub fn zone_sum(&self, e: ZoneEv) -> u64 {
        self.zone_ev.iter().map(|z| z[e as usize]).sum()
    }

    /// All event counters by /proc/vmstat name. In 3.0 `pgsteal_<zone>`
    /// counts reclaim by anyone; the kswapd/direct split (3.4+) is reported
    /// alongside because mmtests derives it anyway. `nr_vmscan_write` is a
    /// zone stat summed over zones.
    pub fn events(&self, zone_suffixes: &[&str]) -> BTreeMap<String, u64> {
        let mut m = BTreeMap::new();
        for (i, name) in EV_NAMES.iter().enumerate() {
            m.insert(name.to_string(), self.ev[i]);
        }
        for (i, name) in ZONE_EV_NAMES.iter().enumerate() {
            if ZONE_EV[i] == ZoneEv::NrVmscanWrite || ZONE_EV[i] == ZoneEv::NrVmscanImmediateReclaim
            {
                // Zone stats: /proc/vmstat prints their sum.
                m.insert(name.to_string(), self.zone_sum(ZONE_EV[i]));
                continue;
            }
            // Per zone type: every node's zone of the type summed.
            for (z, suffix) in zone_suffixes.iter().enumerate() {
                *m.entry(format!("{name}_{suffix}")).or_insert(0) += self.zone_ev[z][i];
            }
        }
        for (z, suffix) in zone_suffixes.iter().enumerate() {
            *m.entry(format!("pgsteal_{suffix}")).or_insert(0) += self.zone_ev[z]
                [ZoneEv::PgStealKswapd as usize]
                + self.zone_ev[z][ZoneEv::PgStealDirect as usize];
        }
        // Totals without zone suffix, as 4.8+ prints them and scripts expect.
        for e in [
            ZoneEv::PgScanKswapd,
            ZoneEv::PgScanDirect,
            ZoneEv::PgStealKswapd,
            ZoneEv::PgStealDirect,
            ZoneEv::PgRefill,
        ] {
            m.insert(ZONE_EV_NAMES[e as usize].to_string(), self.zone_sum(e));
        }
        m.insert(
            "pgsteal".to_string(),
            self.zone_sum(ZoneEv::PgStealKswapd) + self.zone_sum(ZoneEv::PgStealDirect),
        );
        m
    }
}
