//! Parsers of the kernel's own text: /proc/vmstat, /proc/zoneinfo,
//! /sys/block/*/stat, /proc/PID/stat and ftrace's trace_pipe lines.
//!
//! Two generations of layouts are read: Linux 3.x (every counter per zone,
//! `pgscan_kswapd_<zone>`-style per-zone names in /proc/vmstat) and Linux
//! 4.8+ (node-based LRUs: a `per-node stats` block in /proc/zoneinfo,
//! `nr_zone_*` counters per zone, totals without zone suffix in
//! /proc/vmstat). Unknown lines are skipped, so other versions parse as far
//! as they share these layouts.

mod trace;

use std::collections::BTreeMap;

pub use trace::{parse_trace_line, parse_trace_marker, parse_trace_record, TraceEvent, TraceLine};

/// /proc/vmstat: one `name value` pair per line. Lines that are not a name
/// and an integer are skipped; values beyond `i64` saturate.
pub fn parse_vmstat(text: &str) -> BTreeMap<String, i64> {
    text.lines()
        .filter_map(|line| {
            let mut f = line.split_whitespace();
            let (name, value, rest) = (f.next()?, f.next()?, f.next());
            if rest.is_some() {
                return None;
            }
            Some((name.to_string(), parse_int(value)?))
        })
        .collect()
}

/// An integer of /proc text, saturated to `i64`.
fn parse_int(s: &str) -> Option<i64> {
    let v: i128 = s.parse().ok()?;
    Some(v.clamp(i64::MIN.into(), i64::MAX.into()) as i64)
}

/// One zone of /proc/zoneinfo.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ZoneInfo {
    /// As the kernel names it: `DMA`, `DMA32`, `Normal`, `Movable`, ...
    pub name: String,
    pub spanned_pages: u64,
    pub present_pages: u64,
    /// `managed` (3.14+); 0 where the kernel does not print it.
    pub managed_pages: u64,
    /// `pages free`.
    pub free_pages: u64,
    pub min_pages: u64,
    pub low_pages: u64,
    pub high_pages: u64,
    /// `start_pfn:` (printed by 2.6.3x and later, also 6.x, for populated
    /// zones); `None` where the zone block lacks it (an empty zone).
    pub start_pfn: Option<u64>,
    /// The zone's own counters, by the name the kernel prints:
    /// `nr_inactive_file`, `nr_dirty`, `nr_vmscan_write`, ... on 3.x;
    /// `nr_zone_inactive_file`, `nr_zone_write_pending`, ... on 4.8+. Also
    /// the zone's other `name value` lines (`scanned`, `boost`, `promo`,
    /// `cma`) and the `name: value` lines after the pagesets
    /// (`all_unreclaimable`, `node_unreclaimable`, `inactive_ratio`). The
    /// per-CPU pageset lines (`count`, `high`, `batch`, ...) are left out.
    pub stats: BTreeMap<String, i64>,
}

impl ZoneInfo {
    /// Lower-case zone name, as /proc/vmstat suffixes it (`dma32`).
    pub fn suffix(&self) -> String {
        self.name.to_ascii_lowercase()
    }

    /// A counter of the zone, 0 if the zone does not print it.
    pub fn stat(&self, name: &str) -> i64 {
        self.stats.get(name).copied().unwrap_or(0)
    }

    /// The first pfn of the zone: `start_pfn` when printed, else the
    /// x86-64 zone boundaries (DMA from pfn 0, DMA32 from 4096 (16 MiB),
    /// Normal from 1048576 (4 GiB)); `None` for other zones without
    /// `start_pfn`.
    pub fn first_pfn(&self) -> Option<u64> {
        self.start_pfn.or(match self.name.as_str() {
            "DMA" => Some(0),
            "DMA32" => Some(4096),
            "Normal" => Some(1 << 20),
            _ => None,
        })
    }

    /// Pages of the zone that are neither free nor on a file LRU list:
    /// `present` − `pages free` − inactive and active file pages (3.x
    /// `nr_inactive_file`; 4.8+ `nr_zone_inactive_file`), never below 0.
    pub fn held_pages(&self) -> u64 {
        let file: i64 = [
            "nr_inactive_file",
            "nr_active_file",
            "nr_zone_inactive_file",
            "nr_zone_active_file",
        ]
        .iter()
        .map(|k| self.stat(k).max(0))
        .sum();
        self.present_pages
            .saturating_sub(self.free_pages)
            .saturating_sub(file as u64)
    }

    /// Whether `pfn` lies in `[first_pfn, first_pfn + spanned_pages)`.
    pub fn contains_pfn(&self, pfn: u64) -> bool {
        self.first_pfn()
            .is_some_and(|s| pfn >= s && pfn - s < self.spanned_pages)
    }
}

/// Node 0 of /proc/zoneinfo.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NodeInfo {
    /// Every zone the kernel prints for node 0, in its order (lowest
    /// first), empty zones (present 0) included.
    pub zones: Vec<ZoneInfo>,
    /// The `per-node stats` block (4.8+: `nr_inactive_file`, `nr_dirty`,
    /// `nr_writeback`, `nr_vmscan_write`, ... per node); empty on 3.x.
    pub node_stats: BTreeMap<String, i64>,
}

impl NodeInfo {
    /// The zone named `name` (`Normal`).
    pub fn zone(&self, name: &str) -> Option<&ZoneInfo> {
        self.zones.iter().find(|z| z.name == name)
    }
}

/// Where in a zone block the parser is.
#[derive(Clone, Copy, PartialEq)]
enum Section {
    /// The zone's own lines.
    Zone,
    /// After `per-node stats`, until `pages free`.
    NodeStats,
    /// After `pagesets`: per-CPU lines, skipped.
    Pagesets,
}

/// Lines of the per-CPU pageset listing (`cpu: 0`, `count: 12`, ...).
const PAGESET_KEYS: &[&str] = &[
    "cpu",
    "count",
    "high",
    "batch",
    "vm stats threshold",
    "high_min",
    "high_max",
];

/// /proc/zoneinfo, node 0. Layouts read: 3.x (zone blocks with
/// `pages free`, `min`/`low`/`high`, `scanned`, `spanned`, `present`, the
/// zone's `nr_*` counters, `protection:`, `pagesets`, `all_unreclaimable:`,
/// `start_pfn:`, `inactive_ratio:`) and 4.8+ (the first zone of each node
/// opens with a `per-node stats` block; zones add `managed`, `boost`,
/// `promo`, `cma`, `nr_zone_*`, `node_unreclaimable:`). An error if no
/// zone of node 0 is found.
pub fn parse_zoneinfo(text: &str) -> Result<NodeInfo, String> {
    let mut node = NodeInfo::default();
    // Some(zone) while inside a zone block of node 0.
    let mut cur: Option<ZoneInfo> = None;
    let mut section = Section::Zone;
    for line in text.lines() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("Node ") {
            if let Some(z) = cur.take() {
                node.zones.push(z);
            }
            let (nid, zone) = rest.split_once(", zone").unwrap_or((rest, ""));
            let zone = zone.trim();
            if nid.trim() == "0" && !zone.is_empty() {
                cur = Some(ZoneInfo {
                    name: zone.to_string(),
                    ..ZoneInfo::default()
                });
            }
            section = Section::Zone;
            continue;
        }
        let Some(z) = cur.as_mut() else { continue };
        if t == "per-node stats" {
            section = Section::NodeStats;
            continue;
        }
        if t == "pagesets" {
            section = Section::Pagesets;
            continue;
        }
        if let Some(v) = t.strip_prefix("pages free") {
            section = Section::Zone;
            z.free_pages = v.trim().parse().unwrap_or(0);
            continue;
        }
        // `name: value` (pagesets and the lines after them) or `name value`.
        let (key, value) = match t.split_once(':') {
            Some((k, v)) => (k.trim(), v.trim()),
            None => match t.rsplit_once(char::is_whitespace) {
                Some((k, v)) => (k.trim(), v.trim()),
                None => continue,
            },
        };
        if section == Section::Pagesets {
            if PAGESET_KEYS.contains(&key) {
                continue;
            }
            section = Section::Zone;
        }
        let Some(v) = parse_int(value) else { continue };
        if section == Section::NodeStats {
            node.node_stats.insert(key.to_string(), v);
            continue;
        }
        let u = v.max(0) as u64;
        match key {
            "min" => z.min_pages = u,
            "low" => z.low_pages = u,
            "high" => z.high_pages = u,
            "spanned" => z.spanned_pages = u,
            "present" => z.present_pages = u,
            "managed" => z.managed_pages = u,
            "start_pfn" => z.start_pfn = Some(u),
            _ => {
                z.stats.insert(key.to_string(), v);
            }
        }
    }
    if let Some(z) = cur.take() {
        node.zones.push(z);
    }
    if node.zones.is_empty() {
        return Err("no zone of node 0 in the zoneinfo text".into());
    }
    Ok(node)
}

/// /sys/block/<dev>/stat (Documentation/block/stat.rst): 11 fields up to
/// 4.17, 15 with the discard fields (4.18+), 17 with the flush fields
/// (5.5+). Fields a shorter line lacks are 0. Times are milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DiskStat {
    pub reads: u64,
    pub read_merges: u64,
    pub read_sectors: u64,
    pub read_ticks_ms: u64,
    pub writes: u64,
    pub write_merges: u64,
    /// 512-byte sectors, whatever the device's block size.
    pub write_sectors: u64,
    pub write_ticks_ms: u64,
    pub in_flight: u64,
    /// Time the device had I/O in flight.
    pub io_ticks_ms: u64,
    pub time_in_queue_ms: u64,
    pub discards: u64,
    pub discard_merges: u64,
    pub discard_sectors: u64,
    pub discard_ticks_ms: u64,
    pub flushes: u64,
    pub flush_ticks_ms: u64,
    /// How many numbers the line had (11, 15 or 17).
    pub fields: usize,
}

/// Parse /sys/block/<dev>/stat: at least 11 unsigned numbers.
pub fn parse_diskstat(text: &str) -> Result<DiskStat, String> {
    let nums = text
        .split_whitespace()
        .map(|f| f.parse::<u64>())
        .collect::<Result<Vec<u64>, _>>()
        .map_err(|_| format!("block device stat is not a list of numbers: {text:?}"))?;
    if nums.len() < 11 {
        return Err(format!(
            "block device stat has {} numbers, expected 11, 15 or 17: {text:?}",
            nums.len()
        ));
    }
    let n = |i: usize| nums.get(i).copied().unwrap_or(0);
    Ok(DiskStat {
        reads: n(0),
        read_merges: n(1),
        read_sectors: n(2),
        read_ticks_ms: n(3),
        writes: n(4),
        write_merges: n(5),
        write_sectors: n(6),
        write_ticks_ms: n(7),
        in_flight: n(8),
        io_ticks_ms: n(9),
        time_in_queue_ms: n(10),
        discards: n(11),
        discard_merges: n(12),
        discard_sectors: n(13),
        discard_ticks_ms: n(14),
        flushes: n(15),
        flush_ticks_ms: n(16),
        fields: nums.len(),
    })
}

/// What wbsim reads of /proc/PID/stat (proc(5)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcStat {
    pub pid: u32,
    /// The command name between the parentheses (may hold spaces and
    /// parentheses).
    pub comm: String,
    /// `R`, `S`, `D`, ...
    pub state: char,
    /// Field 14, in clock ticks (USER_HZ, 100 per second on x86).
    pub utime_ticks: u64,
    /// Field 15, likewise.
    pub stime_ticks: u64,
}

/// Parse one /proc/PID/stat line. The comm ends at the last `)` of the
/// line, since it may itself contain spaces and parentheses.
pub fn parse_proc_stat(text: &str) -> Result<ProcStat, String> {
    let bad = |what: &str| format!("/proc/PID/stat: {what}: {:?}", text.trim());
    let open = text.find('(').ok_or_else(|| bad("no '('"))?;
    let close = text.rfind(')').ok_or_else(|| bad("no ')'"))?;
    if close < open {
        return Err(bad("')' before '('"));
    }
    let pid = text[..open].trim().parse().map_err(|_| bad("bad pid"))?;
    let rest: Vec<&str> = text[close + 1..].split_whitespace().collect();
    // rest[0] is field 3 (state); field n is rest[n - 3].
    if rest.len() < 13 {
        return Err(bad("too few fields"));
    }
    let num = |field: usize| -> Result<u64, String> {
        rest[field - 3]
            .parse()
            .map_err(|_| bad(&format!("field {field} is not a number")))
    };
    Ok(ProcStat {
        pid,
        comm: text[open + 1..close].to_string(),
        state: rest[0].chars().next().ok_or_else(|| bad("no state"))?,
        utime_ticks: num(14)?,
        stime_ticks: num(15)?,
    })
}
