//! Conservation invariants, checked at the end of every run in tests and
//! after every event in check mode.

use super::System;
use crate::mm::page::{flags, Holder, NIL, NR_LRU_LISTS};

impl System {
    /// Every frame is free (buddy or per-CPU list), on exactly one LRU
    /// list, in a pagevec, isolated or kernel-private, and the lists agree
    /// with the frames; dirty and writeback counts match the page flags and
    /// never exceed the file pages; no counter has wrapped below zero.
    pub fn check_invariants(&self) -> Result<(), String> {
        let nz = self.zones.len();
        let mut free = vec![0u64; nz];
        let mut per_cpu = vec![0u64; nz];
        let mut lru = vec![[0u64; NR_LRU_LISTS]; nz];
        let (mut pagevec, mut isolated, mut kernel) = (0u64, 0u64, 0u64);
        let (mut dirty, mut writeback, mut file_pages, mut both) = (0u64, 0u64, 0u64, 0u64);
        let mut writeback_anon = 0u64;
        let mut zone_dirty = vec![0u64; nz];
        for (pfn, p) in self.pages.iter().enumerate() {
            let z = p.zone as usize;
            match p.holder {
                Holder::Free | Holder::PerCpu => {
                    let count = if p.holder == Holder::Free {
                        &mut free
                    } else {
                        &mut per_cpu
                    };
                    count[z] += 1;
                    if p.flags != 0 || p.inode != NIL {
                        return Err(format!(
                            "free page {pfn} has flags {:#x} or a mapping",
                            p.flags
                        ));
                    }
                }
                Holder::Pagevec => pagevec += 1,
                Holder::Isolated => isolated += 1,
                Holder::Kernel | Holder::Orphaned => kernel += 1,
                h => {
                    let l = h.lru().unwrap();
                    lru[z][l] += 1;
                    if !p.has(flags::LRU) {
                        return Err(format!("page {pfn} on LRU list {l} without PG_lru"));
                    }
                }
            }
            if p.inode != NIL {
                file_pages += 1;
                if self.inodes[p.inode as usize].page(p.index) != pfn as u32 {
                    return Err(format!(
                        "page {pfn} not found at its index in inode {}",
                        p.inode
                    ));
                }
            }
            let anon = p.has(flags::ANON);
            if p.has(flags::DIRTY) && !anon {
                dirty += 1;
                zone_dirty[z] += 1;
            }
            if p.has(flags::WRITEBACK) {
                writeback += 1;
                if anon {
                    writeback_anon += 1;
                } else {
                    both += p.has(flags::DIRTY) as u64;
                }
            }
            if (p.has(flags::DIRTY) || p.has(flags::WRITEBACK)) && p.inode == NIL {
                return Err(format!(
                    "page {pfn} is dirty or under writeback without a mapping"
                ));
            }
        }
        for (z, zone) in self.zones.iter().enumerate() {
            if zone.free.len != free[z] {
                return Err(format!(
                    "zone {} free list {} != free frames {}",
                    zone.name, zone.free.len, free[z]
                ));
            }
            let on_lists: u64 = zone.pcp.iter().map(|p| p.list.len).sum();
            if on_lists != per_cpu[z] {
                return Err(format!(
                    "zone {} per-CPU lists {on_lists} != per-CPU frames {}",
                    zone.name, per_cpu[z]
                ));
            }
            if free[z] > zone.present_pages {
                return Err(format!(
                    "zone {} has more free pages than present",
                    zone.name
                ));
            }
            for (l, (list, frames)) in zone.lru.iter().zip(lru[z]).enumerate() {
                if list.len != frames {
                    return Err(format!(
                        "zone {} LRU {l} length {} != frames {frames}",
                        zone.name, list.len
                    ));
                }
            }
            if zone.nr_dirty != zone_dirty[z] {
                return Err(format!(
                    "zone {} nr_dirty {} != dirty frames {}",
                    zone.name, zone.nr_dirty, zone_dirty[z]
                ));
            }
        }
        let in_pagevecs: u64 = self.pagevecs.iter().map(|p| p.len as u64).sum();
        if pagevec != in_pagevecs {
            return Err(format!(
                "{pagevec} frames marked pagevec, pagevecs hold {in_pagevecs}"
            ));
        }
        let isolated_count: u64 = self
            .zones
            .iter()
            .map(|z| z.nr_isolated_file + z.nr_isolated_anon)
            .sum();
        if isolated != isolated_count {
            return Err(format!(
                "{isolated} isolated frames, zones count {isolated_count}"
            ));
        }
        let total: u64 = free.iter().sum::<u64>()
            + per_cpu.iter().sum::<u64>()
            + lru.iter().flatten().sum::<u64>()
            + pagevec
            + isolated
            + kernel;
        if total != self.pages.len() as u64 {
            return Err(format!(
                "frames by holder sum to {total}, machine has {}",
                self.pages.len()
            ));
        }
        if dirty != self.nr_dirty || writeback != self.nr_writeback {
            return Err(format!(
                "nr_dirty {} / nr_writeback {} disagree with page flags {dirty} / {writeback}",
                self.nr_dirty, self.nr_writeback
            ));
        }
        // A page may be dirty and under writeback at once (re-dirtied during
        // IO; no stable pages before 3.9): count it once.
        if dirty + writeback - both > file_pages {
            return Err(format!(
                "dirty {dirty} + writeback {writeback} - both {both} > file pages {file_pages}"
            ));
        }
        let bdi_rec: u64 = self.bdis.iter().map(|b| b.reclaimable).sum();
        let bdi_wb: u64 = self.bdis.iter().map(|b| b.writeback).sum();
        // FUSE's temporary pages are in their bdi's writeback count only.
        if bdi_rec != self.nr_dirty
            || bdi_wb + writeback_anon != self.nr_writeback + self.nr_writeback_temp
        {
            return Err(format!(
                "device counters {bdi_rec}/{bdi_wb} disagree with global {}/{}",
                self.nr_dirty, self.nr_writeback
            ));
        }
        if self.nr_writeback_temp > kernel {
            return Err(format!(
                "{} writeback-temp pages, {kernel} kernel-held frames",
                self.nr_writeback_temp
            ));
        }
        for (f, fs) in self.filesystems.iter().enumerate() {
            let held: u64 = (self.inodes.iter())
                .filter(|i| i.fs == f)
                .map(|i| i.blocks as u64)
                .sum();
            if fs.used_blocks > fs.capacity_blocks || held != fs.used_blocks {
                return Err(format!(
                    "fs {} uses {} of {} blocks, its files hold {held}",
                    fs.mount, fs.used_blocks, fs.capacity_blocks
                ));
            }
        }
        let limit = self.pages.len() as u64;
        for (name, v) in [
            ("nr_dirty", self.nr_dirty),
            ("nr_writeback", self.nr_writeback),
        ] {
            if v > limit {
                return Err(format!("{name} = {v} has wrapped below zero"));
            }
        }
        Ok(())
    }
}
