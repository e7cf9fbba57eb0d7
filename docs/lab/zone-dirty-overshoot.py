#!/usr/bin/env python3
"""How far a real per-zone-dirty kernel lets each zone pass its own limit.

Reads a real run's folder (validation/real-3x/<run>/: `samples`, a row every
~2 s, and `zoneinfo.before`) and prints, per zone, the largest
(nr_dirty + nr_writeback) / zone dirty limit and how many samples exceed
1.10. The limit is 3.3's zone_dirty_limit (mm/page-writeback.c, read in
3.3.8): dirty_ratio % of zone_dirtyable_memory = NR_FREE_PAGES +
zone_reclaimable_pages - dirty_balance_reserve, the reserve being the
zone's largest lowmem_reserve ("protection") plus its high watermark
(calculate_totalreserve_pages in mm/page_alloc.c).
The guests have no swap, so the reclaimable pages are the file LRU.

Usage: zone-dirty-overshoot.py RUN_DIR [RUN_DIR ...] [--dirty-ratio 40]
"""
import re
import sys


def reserves(zoneinfo_path):
    """Zone name -> dirty_balance_reserve pages, from a zoneinfo dump."""
    out, zone, high = {}, None, 0
    for line in open(zoneinfo_path, errors="replace"):
        m = re.match(r"Node \d+, zone\s+(\S+)", line)
        if m:
            zone, high = m.group(1), 0
            continue
        m = re.match(r"\s+high\s+(\d+)$", line)
        if m and zone and zone not in out:
            high = int(m.group(1))
        m = re.match(r"\s+protection: \((.*)\)", line)
        if m and zone:
            out[zone] = max(int(x) for x in m.group(1).split(",")) + high
    return out


def main(argv):
    ratio = 40
    if "--dirty-ratio" in argv:
        i = argv.index("--dirty-ratio")
        ratio = int(argv[i + 1])
        del argv[i : i + 2]
    if not argv:
        sys.exit(__doc__)
    for run in argv:
        reserve = reserves(f"{run}/zoneinfo.before")
        lines = open(f"{run}/samples").read().splitlines()
        header = lines[0].split()
        col = {h: i for i, h in enumerate(header)}
        rows = [l.split() for l in lines[1:] if len(l.split()) == len(header)]
        print(run)
        for zone in ("DMA", "DMA32", "Normal"):
            worst, over, n = 0.0, 0, 0
            for row in rows:
                get = lambda key: int(row[col[f"{zone}.{key}"]])
                dirtyable = (
                    get("nr_free_pages")
                    + get("nr_inactive_file")
                    + get("nr_active_file")
                    - reserve.get(zone, 0)
                )
                limit = max(dirtyable, 0) * ratio // 100
                if limit == 0:
                    continue
                share = (get("nr_dirty") + get("nr_writeback")) / limit
                worst, n = max(worst, share), n + 1
                over += share > 1.10
            print(f"  {zone:7} max {worst:.3f}  over 1.10 in {over} of {n} samples")


if __name__ == "__main__":
    main(sys.argv[1:])
