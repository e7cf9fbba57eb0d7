//! Reports at a coarse unit ([`crate::mm::unit`]): every figure that
//! counts pages is given in 4 KiB pages, as the kernel of the machine the
//! run stands for would count them; figures that count events, KiB,
//! bytes or sectors are left as they are.

use super::RunReport;
use crate::mm::vmstat::counts_pages;

/// Multiply the page counts of `r` by `base_pages`, the 4 KiB pages of
/// one simulated page.
pub fn to_base_pages(r: &mut RunReport, base_pages: u64) {
    if base_pages == 1 {
        return;
    }
    let n = base_pages as i64;
    for (name, v) in r.vmstat.iter_mut() {
        if counts_pages(name) {
            *v *= n;
        }
    }
    for stats in r.zoneinfo.values_mut() {
        for v in stats.values_mut() {
            *v *= n;
        }
    }
    for node in r.nodes.iter_mut() {
        for v in [
            &mut node.present_pages,
            &mut node.nr_free_pages,
            &mut node.nr_file_pages,
            &mut node.nr_dirty,
            &mut node.nr_writeback,
            &mut node.nr_slab_reclaimable,
        ] {
            *v *= base_pages;
        }
        for (name, v) in node.vmstat.iter_mut() {
            if counts_pages(name) {
                *v *= base_pages;
            }
        }
        if let Some(g) = node.lru_gen.as_mut() {
            for gen in g.generations.iter_mut() {
                gen[1] *= base_pages;
                gen[2] *= base_pages;
            }
        }
    }
    let t = &mut r.ftrace;
    for v in [
        &mut t.direct_pages_scanned,
        &mut t.direct_pages_reclaimed,
        &mut t.kswapd_pages_scanned,
        &mut t.kswapd_pages_reclaimed,
    ] {
        *v *= base_pages;
    }
    for w in [&mut t.direct_writes, &mut t.kswapd_writes] {
        for v in [
            &mut w.file_async,
            &mut w.anon_async,
            &mut w.file_sync,
            &mut w.anon_sync,
        ] {
            *v *= base_pages;
        }
    }
}
