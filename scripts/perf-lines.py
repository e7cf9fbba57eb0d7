#!/usr/bin/env python3
"""Where a run's time goes, by line of the project's source: the
`perf record` twin of `callgrind-lines.py`.

Instructions (callgrind) say what the code does; samples of time say
where it waits. Step 24 found the two apart: the first read of each
completed page's frame was 11 % of zone-dirty-v1 fs_mark's time and a
few instructions. Each sample is charged to the innermost line of the
project in its address's inline chain (`addr2line -i`), as
`callgrind-lines.py` does.

    CARGO_PROFILE_RELEASE_DEBUG=line-tables-only CARGO_TARGET_DIR=/tmp/dbg \\
        cargo build --release -p wbsim-cli
    perf record -F 4999 -o perf.data /tmp/dbg/release/wbsim run \\
        scenarios/zone-dirty-v1/fsmark-xfs.toml --runs 1 --kernel 3.0-vanilla
    scripts/perf-lines.py /tmp/dbg/release/wbsim perf.data [more.data ...]
    scripts/perf-lines.py /tmp/dbg/release/wbsim perf.data --by file
    scripts/perf-lines.py /tmp/dbg/release/wbsim perf.data \\
        --callers wbsim/src/mm/frames.rs:140

Shares are of all samples, the kernel's included (page faults, for
one). `--callers LINE` shows the next three lines of ours up the inline
chain of the samples charged to LINE. `--within FILE:FIRST-LAST` as in
`callgrind-lines.py`. Needs `perf`, `addr2line` and `readelf`.
"""
import argparse
import collections
import importlib.util
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("cgl", os.path.join(HERE, "callgrind-lines.py"))
cgl = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cgl)


def load_segments(binary):
    """The binary's `LOAD` segments as (file offset, virtual address, size)."""
    out = subprocess.run(["readelf", "-lW", binary], capture_output=True, text=True, check=True)
    segs = []
    for line in out.stdout.splitlines():
        parts = line.split()
        if parts and parts[0] == "LOAD":
            segs.append((int(parts[1], 16), int(parts[2], 16), int(parts[4], 16)))
    return segs


def samples_by_address(binary, data_files):
    """Each sampled address of `binary` (as its virtual address, what
    `addr2line` takes) and how many samples it had; and all samples."""
    segs = load_segments(binary)
    name = os.path.realpath(binary)
    cost = collections.Counter()
    total = 0
    for path in data_files:
        out = subprocess.run(
            ["perf", "script", "-i", path, "--show-mmap-events", "-F", "ip,dso"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        maps = []
        for line in out.splitlines():
            if "MMAP" in line:
                m = re.search(r"\[(0x[0-9a-f]+)\((0x[0-9a-f]+)\) @ (0x[0-9a-f]+).*?(\S+)$", line)
                if m and os.path.realpath(m.group(4)) == name:
                    start, size, pgoff = (int(m.group(i), 16) for i in (1, 2, 3))
                    maps.append((start, size, pgoff))
                continue
            parts = line.split()
            if len(parts) < 2 or not re.fullmatch(r"[0-9a-f]+", parts[0]):
                continue
            total += 1
            ip = int(parts[0], 16)
            for start, size, pgoff in maps:
                if start <= ip < start + size:
                    off = ip - start + pgoff
                    for seg_off, seg_vaddr, seg_size in segs:
                        if seg_off <= off < seg_off + seg_size:
                            cost[off - seg_off + seg_vaddr] += 1
                            break
                    break
    return cost, total


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("binary", help="the recorded binary, built with line tables")
    ap.add_argument("data", nargs="+", help="perf.data files of runs of it")
    ap.add_argument("--by", choices=["line", "file"], default="line")
    ap.add_argument("--callers", metavar="LINE", help="e.g. wbsim/src/mm/frames.rs:140")
    ap.add_argument("--within", metavar="FILE:FIRST-LAST")
    ap.add_argument("--top", type=int, default=40)
    a = ap.parse_args()

    cost, total = samples_by_address(a.binary, a.data)
    if total == 0:
        sys.exit("no samples")
    chains = cgl.inline_chains(a.binary, sorted(cost))
    within = cgl.parse_within(a.within) if a.within else None
    by = collections.Counter()
    for addr, n in cost.items():
        chain = cgl.ours(chains.get(addr, []))
        if within:
            key = cgl.outermost_within(chain, *within)
            if key is None:
                continue
        elif a.callers:
            if not chain or chain[0] != a.callers:
                continue
            key = " <- ".join(chain[1:4]) or "(no caller of ours)"
        elif a.by == "file":
            key = chain[0].rsplit(":", 1)[0] if chain else "(not ours)"
        else:
            key = chain[0] if chain else "(not ours)"
        by[key] += n
    print(f"{total} samples, {sum(cost.values())} in {a.binary}")
    for key, n in by.most_common(a.top):
        print(f"{100 * n / total:6.2f}% {n:7d} {key}")


if __name__ == "__main__":
    main()
