//! /proc/vmstat names the kernel lacks but the simulator reports.

use std::collections::BTreeMap;

/// Zone suffixes of per-zone /proc/vmstat counters (`TEXTS_FOR_ZONES`:
/// `dma`, `dma32`, `normal`, `high` (HIGHMEM), `movable`; 4.x adds
/// `device`).
pub const ZONE_SUFFIXES: [&str; 6] = ["dma", "dma32", "normal", "high", "movable", "device"];

/// Σ `<prefix>_<zone>` over the zones the map has; `None` if it has none.
fn zone_sum(vm: &BTreeMap<String, i64>, prefix: &str) -> Option<i64> {
    let vals: Vec<i64> = ZONE_SUFFIXES
        .iter()
        .filter_map(|z| vm.get(&format!("{prefix}_{z}")).copied())
        .collect();
    (!vals.is_empty()).then(|| vals.iter().sum())
}

/// Add the names the simulator reports where this kernel's /proc/vmstat
/// lacks them; a name the kernel prints is never replaced. Derived names:
///
/// * `pgscan_kswapd`, `pgscan_direct` (3.x prints them only per zone):
///   Σ `pgscan_kswapd_<zone>`, Σ `pgscan_direct_<zone>`;
/// * `pgsteal_<zone>` (3.4-4.7 split it into `pgsteal_kswapd_<zone>` and
///   `pgsteal_direct_<zone>`): their sum, as 3.0-3.3 counted it;
/// * `pgsteal_kswapd`, `pgsteal_direct` (3.4-4.7): Σ over the zones;
/// * `pgsteal`: Σ `pgsteal_<zone>` (3.x, with the previous rule), or on
///   4.8+ (no zone suffixes) `pgsteal_kswapd` + `pgsteal_direct` +
///   `pgsteal_khugepaged` (6.2+ counts khugepaged's reclaim apart; it was
///   direct reclaim before, and 3.x's `pgsteal` included it);
/// * `allocstall` (4.10+ prints only `allocstall_<zone>`): Σ over the
///   zones.
///
/// Per-zone names are only those the kernel prints (`pgalloc_<zone>` on
/// every version, the scan and steal counters on 3.x); 4.8+ counts scans
/// and steals per node, so they have no per-zone breakdown here.
pub fn derive_vmstat(vm: &mut BTreeMap<String, i64>) {
    fn add(vm: &mut BTreeMap<String, i64>, name: &str, value: Option<i64>) {
        if let (false, Some(v)) = (vm.contains_key(name), value) {
            vm.insert(name.to_string(), v);
        }
    }
    for name in ["pgscan_kswapd", "pgscan_direct"] {
        let v = zone_sum(vm, name);
        add(vm, name, v);
    }
    for z in ZONE_SUFFIXES {
        let k = vm.get(&format!("pgsteal_kswapd_{z}")).copied();
        let d = vm.get(&format!("pgsteal_direct_{z}")).copied();
        if k.is_some() || d.is_some() {
            add(
                vm,
                &format!("pgsteal_{z}"),
                Some(k.unwrap_or(0) + d.unwrap_or(0)),
            );
        }
    }
    for name in ["pgsteal_kswapd", "pgsteal_direct"] {
        let v = zone_sum(vm, name);
        add(vm, name, v);
    }
    let per_zone = zone_sum(vm, "pgsteal");
    let split = ["pgsteal_kswapd", "pgsteal_direct", "pgsteal_khugepaged"]
        .iter()
        .filter_map(|k| vm.get(*k).copied())
        .reduce(|a, b| a + b);
    add(vm, "pgsteal", per_zone.or(split));
    let v = zone_sum(vm, "allocstall");
    add(vm, "allocstall", v);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, i64)]) -> BTreeMap<String, i64> {
        pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    #[test]
    fn three_x_sums_zones() {
        let mut vm = map(&[
            ("pgscan_kswapd_dma", 1),
            ("pgscan_kswapd_dma32", 10),
            ("pgscan_kswapd_normal", 100),
            ("pgscan_direct_normal", 7),
            ("pgsteal_dma32", 9),
            ("pgsteal_normal", 90),
            ("allocstall", 3),
        ]);
        derive_vmstat(&mut vm);
        assert_eq!(vm["pgscan_kswapd"], 111);
        assert_eq!(vm["pgscan_direct"], 7);
        assert_eq!(vm["pgsteal"], 99);
        assert_eq!(vm["allocstall"], 3);
    }

    #[test]
    fn split_steals_of_3_4_to_4_7_are_summed_per_zone() {
        let mut vm = map(&[
            ("pgsteal_kswapd_dma32", 5),
            ("pgsteal_direct_dma32", 1),
            ("pgsteal_kswapd_normal", 50),
        ]);
        derive_vmstat(&mut vm);
        assert_eq!(vm["pgsteal_dma32"], 6);
        assert_eq!(vm["pgsteal_normal"], 50);
        assert_eq!(vm["pgsteal_kswapd"], 55);
        assert_eq!(vm["pgsteal_direct"], 1);
        assert_eq!(vm["pgsteal"], 56);
    }

    #[test]
    fn six_x_keeps_totals_and_sums_allocstall() {
        let mut vm = map(&[
            ("pgscan_kswapd", 40),
            ("pgsteal_kswapd", 30),
            ("pgsteal_direct", 2),
            ("pgsteal_khugepaged", 1),
            ("allocstall_dma32", 1),
            ("allocstall_normal", 4),
            ("allocstall_movable", 2),
        ]);
        derive_vmstat(&mut vm);
        assert_eq!(vm["pgscan_kswapd"], 40);
        assert!(!vm.contains_key("pgscan_direct"));
        assert_eq!(vm["pgsteal"], 33);
        assert_eq!(vm["allocstall"], 7);
        assert!(!vm.contains_key("pgsteal_normal"));
    }
}
