//! The same machine on both sides of a comparison: the memory a guest's
//! kernel holds before the workload starts, given to the simulation as
//! each zone's `kernel_mib`.
//!
//! A real kernel does not have all of a zone for the page cache. memblock
//! places the boot-time allocations (the sparse mem_map, per-CPU areas,
//! hash tables) top-down, in the highest zone, and the buddy allocator
//! serves the lab's own ftrace ring buffer (4 MiB per vCPU) and the
//! initramfs files from the highest zone first as well. On a guest with a
//! small Normal zone that is a large part of it (30 of 48 MiB on the scaled
//! fuse-ntfs machine), and a simulation that gives the page cache the whole
//! zone turns its LRU over at a quarter of the real rate.

use wbsim::mm::page::PAGES_PER_MIB;
use wbsim::report::LabZone;
use wbsim::scenario::Scenario;

/// `sc` with each zone's `kernel_mib` set so that the simulation starts
/// with the guest's free and file LRU pages: the zone's size less them
/// (rounded to the nearest MiB, less than the zone's size), and a note
/// naming each change; zones the guest lacks keep the scenario's value.
/// That is the guest's held pages when the zone's size is its present
/// pages; 6.1's present pages also count the struct page array, which a
/// zone sized from a 3.x guest leaves out, so it is not subtracted twice.
pub fn with_guest_held(sc: &Scenario, zones: &[LabZone]) -> (Scenario, Option<String>) {
    let mut out = sc.clone();
    let mut changes = Vec::new();
    for z in &mut out.machine.zones {
        let Some(g) = zones
            .iter()
            .find(|g| g.name == z.kind.as_str() && g.present_pages > 0)
        else {
            continue;
        };
        let available = g.present_pages.saturating_sub(g.held_pages);
        let held = (z.size_mib * PAGES_PER_MIB).saturating_sub(available);
        let held_mib =
            ((held + PAGES_PER_MIB / 2) / PAGES_PER_MIB).min(z.size_mib.saturating_sub(1));
        if held_mib != z.kernel_mib {
            changes.push(format!(
                "{} {} MiB (scenario {})",
                z.kind.as_str(),
                held_mib,
                z.kernel_mib
            ));
            z.kernel_mib = held_mib;
            // The guest's holding replaces the scenario's, KiB included.
            z.kernel_kib = 0;
        }
    }
    let note = (!changes.is_empty()).then(|| {
        format!(
            "the simulation starts with the guest's free and file LRU pages (the zone \
             less them held for the kernel): {}",
            changes.join(", ")
        )
    });
    (out, note)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zone(name: &str, present: u64, held: u64) -> LabZone {
        LabZone {
            name: name.into(),
            spanned_pages: present,
            present_pages: present,
            managed_pages: 0,
            scenario_pages: present,
            held_pages: held,
        }
    }

    /// The scaled fuse-ntfs machine: DMA 15, DMA32 192, Normal 48 MiB,
    /// with 4 MiB of DMA32 held by the scenario.
    fn scenario() -> Scenario {
        let text = include_str!("../../../scenarios/lab/fuse-ntfs-seed003-slow.toml")
            .replace("size_mib = 192", "size_mib = 192\nkernel_mib = 4");
        wbsim::scenario::parse_scenario(&text, "t.toml").expect("valid scenario")
    }

    #[test]
    fn guest_holdings_replace_the_scenarios_rounded_to_mib() {
        let sc = scenario();
        // The scaled fuse-ntfs boot of 3.2.4: 7,671 Normal pages held
        // (29.96 MiB), 1,755 in DMA32 (6.86 MiB), none in DMA.
        let zones = [
            zone("DMA", 3917, 0),
            zone("DMA32", 49178, 1755),
            zone("Normal", 12348, 7671),
        ];
        let (out, note) = with_guest_held(&sc, &zones);
        let held: Vec<u64> = out.machine.zones.iter().map(|z| z.kernel_mib).collect();
        assert_eq!(held, vec![0, 7, 30]);
        let note = note.expect("a note for the changed zones");
        assert!(note.contains("DMA32 7 MiB (scenario 4)"), "{note}");
        assert!(note.contains("Normal 30 MiB (scenario 0)"), "{note}");
        assert!(!note.contains("DMA 0"), "{note}");
    }

    #[test]
    fn a_holding_never_takes_the_whole_zone_and_absent_zones_keep_theirs() {
        let sc = scenario();
        let zones = [zone("Normal", 12348, 12348), zone("DMA32", 0, 0)];
        let (out, _) = with_guest_held(&sc, &zones);
        let held: Vec<u64> = out.machine.zones.iter().map(|z| z.kernel_mib).collect();
        assert_eq!(held, vec![0, 4, 47]);
    }

    /// Debian 6.1's 256 MiB guest: 61,402 present DMA32 pages (the
    /// struct page array included), 18,345 of them held at dd start, so
    /// 43,057 free or on the file LRU; a 236 MiB zone keeps as many with
    /// 17,359 held (68 MiB), not the guest's 72.
    #[test]
    fn the_zone_keeps_the_guests_free_and_file_pages() {
        let sc = scenario();
        let zones = [zone("DMA32", 61_402, 18_345)];
        let mut six = sc.clone();
        six.machine.zones[1].size_mib = 236;
        let (out, _) = with_guest_held(&six, &zones);
        assert_eq!(out.machine.zones[1].kernel_mib, 68);
    }

    #[test]
    fn nothing_to_say_when_the_holdings_agree() {
        let sc = scenario();
        let zones = [zone("DMA32", 49178, 4 * 256)];
        let (out, note) = with_guest_held(&sc, &zones);
        assert_eq!(out, sc);
        assert!(note.is_none());
    }
}
