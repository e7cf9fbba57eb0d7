#!/usr/bin/env python3
"""Where a run's instructions go, by line of the project's source.

The simulator's hot path is inlined, so per-function totals say little.
This charges each instruction's own cost in a callgrind profile to the
innermost line of the project (`crates/...`) in that instruction's inline
chain (`addr2line -i`), so a standard-library bounds check counts where
the project indexed, not in `core::slice`.

    CARGO_PROFILE_RELEASE_DEBUG=line-tables-only CARGO_TARGET_DIR=/tmp/dbg \\
        cargo build --release -p wbsim-cli
    valgrind --tool=callgrind --dump-instr=yes --callgrind-out-file=cg.out \\
        /tmp/dbg/release/wbsim run scenarios/zone-dirty-v2/xfs.toml --runs 1 --kernel 3.3
    scripts/callgrind-lines.py cg.out /tmp/dbg/release/wbsim --per 2319750
    scripts/callgrind-lines.py cg.out /tmp/dbg/release/wbsim --by file
    scripts/callgrind-lines.py cg.out /tmp/dbg/release/wbsim \\
        --callers wbsim/src/mm/inode_table.rs:318 --skip inode_table.rs,mm/memory.rs

`--per N` divides each figure by N (the run's `nr_written`, for
instructions a page write). `--mnemonic REGEX` counts only the
instructions whose mnemonic matches (`objdump -d`), e.g. `^i?div` for
the divisions, which cost many cycles each however few they are: step 17
found the dd's one division a page this way. `--callers LINE` charges the instructions of
LINE to the next line of ours up its inline chain (skipping lines that
match `--skip`), to find which callers pay for an inlined helper.
`--within FILE:FIRST-LAST` charges every instruction whose inline chain
passes through those lines of FILE to the outermost such line: what
each call of an inlined function costs, all it calls included (step 21:
`--within wbsim/src/mm/filemap.rs:78-93` split `write_page_cached`'s
560 instructions a page into its five calls).

Needs `addr2line` and, for `--mnemonic`, `objdump` (binutils). Only the simulator's own object is counted:
instructions in libc and the dynamic loader are left out of the total.
"""
import argparse
import collections
import re
import subprocess
import sys

OUR_CODE = "/crates/"


def self_cost_by_address(path, object_part):
    """Each instruction address's own (exclusive) cost in `path`, for the
    objects whose name contains `object_part`."""
    cost = collections.Counter()
    names = {}
    counting = True
    last = 0
    skip_call_cost = False
    with open(path) as f:
        for line in f:
            if line.startswith(("ob=", "cob=")):
                # An object is named where its number first appears, which
                # may be as a callee (`cob=`); only `ob=` says whose
                # instructions follow.
                m = re.match(r"c?ob=\((\d+)\)\s*(.*)", line.rstrip("\n"))
                if m:
                    if m.group(2):
                        names[m.group(1)] = m.group(2)
                    if line.startswith("ob="):
                        counting = object_part in names.get(m.group(1), "")
                continue
            if line.startswith("calls="):
                # The line after `calls=` is the call's inclusive cost.
                skip_call_cost = True
                continue
            head = line[:1]
            if not (head.isdigit() or head in "+-*"):
                continue
            parts = line.split()
            last = position(parts[0], last)
            if skip_call_cost:
                skip_call_cost = False
                continue
            # Positions are "instruction line" (`--dump-instr=yes`), then
            # the cost.
            if counting and len(parts) > 2:
                cost[last] += int(parts[2])
    return cost


def position(field, last):
    """A callgrind position: absolute (hex or decimal), relative (+/-) or
    the same as the last (*)."""
    if field == "*":
        return last
    if field[0] in "+-":
        sign = 1 if field[0] == "+" else -1
        return last + sign * int(field[1:], 0)
    return int(field, 0)


def inline_chains(binary, addresses):
    """Each address's inline chain, innermost first, as `file:line`."""
    chains = {}
    batch = 5000
    for start in range(0, len(addresses), batch):
        args = ["0x%x" % a for a in addresses[start : start + batch]]
        out = subprocess.run(
            ["addr2line", "-i", "-a", "-e", binary, *args],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        current = None
        for line in out.splitlines():
            if line.startswith("0x"):
                current = int(line, 16)
                chains[current] = []
            elif current is not None:
                chains[current].append(line.split(" ")[0])
    return chains


def addresses_with_mnemonic(disassembly, pattern):
    """The addresses of the instructions in `objdump -d` output whose
    mnemonic matches the regular expression `pattern`."""
    wanted = re.compile(pattern)
    found = set()
    for line in disassembly.splitlines():
        m = re.match(r"\s*([0-9a-f]+):\s+(?:[0-9a-f]{2} )*\s*([a-z][a-z0-9.]*)", line)
        if m and wanted.search(m.group(2)):
            found.add(int(m.group(1), 16))
    return found


def disassemble(binary):
    return subprocess.run(
        ["objdump", "-d", "--no-show-raw-insn", binary],
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def ours(chain):
    """The chain's lines in the project, innermost first, from `crates/`."""
    return [l.split(OUR_CODE, 1)[1] for l in chain if OUR_CODE in l]


def parse_within(spec):
    """`FILE:FIRST-LAST` as (file, first, last)."""
    path, _, lines = spec.rpartition(":")
    first, _, last = lines.partition("-")
    if not path or not first.isdigit() or not (last or first).isdigit():
        sys.exit(f"--within {spec}: expected FILE:FIRST-LAST, e.g. wbsim/src/mm/filemap.rs:78-93")
    return path, int(first), int(last or first)


def outermost_within(chain, path, first, last):
    """The outermost line of `chain` (innermost first) in `path` between
    `first` and `last`, or None."""
    found = None
    for entry in chain:
        file, _, line = entry.rpartition(":")
        if file == path and line.isdigit() and first <= int(line) <= last:
            found = entry
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("profile", help="callgrind output (--dump-instr=yes)")
    ap.add_argument("binary", help="the profiled binary, built with line tables")
    ap.add_argument("--by", choices=["line", "file"], default="line")
    ap.add_argument("--callers", metavar="LINE", help="e.g. wbsim/src/mm/frames.rs:198")
    ap.add_argument("--skip", default="", help="comma-separated parts of caller lines to look through")
    ap.add_argument("--per", type=float, default=0, help="also divide each figure by this")
    ap.add_argument("--top", type=int, default=60)
    ap.add_argument("--object", default="wbsim", help="count only objects whose name has this")
    ap.add_argument("--mnemonic", metavar="REGEX", help="count only these instructions, e.g. '^i?div'")
    ap.add_argument("--within", metavar="FILE:FIRST-LAST", help="e.g. wbsim/src/mm/filemap.rs:78-93")
    a = ap.parse_args()

    cost = self_cost_by_address(a.profile, a.object)
    total = sum(cost.values())
    if total == 0:
        sys.exit(f"{a.profile}: no cost in an object named like `{a.object}`")
    if a.mnemonic:
        keep = addresses_with_mnemonic(disassemble(a.binary), a.mnemonic)
        cost = collections.Counter({addr: n for addr, n in cost.items() if addr in keep})
        print(f"{sum(cost.values())} executions of `{a.mnemonic}` of {total} instructions")
        total = sum(cost.values())
        if total == 0:
            return
    addresses = sorted(cost)
    chains = inline_chains(a.binary, addresses)
    skip = [s for s in a.skip.split(",") if s]
    within = parse_within(a.within) if a.within else None
    by = collections.Counter()
    for addr in addresses:
        chain = ours(chains.get(addr, []))
        if within:
            key = outermost_within(chain, *within)
            if key is None:
                continue
        elif a.callers:
            if not chain or chain[0] != a.callers:
                continue
            up = [c for c in chain[1:] if not any(s in c for s in skip)]
            key = up[0] if up else "(outermost)"
        else:
            key = chain[0] if chain else "(not ours) " + (chains.get(addr) or ["??"])[0]
            if a.by == "file":
                key = key.rsplit(":", 1)[0]
        by[key] += cost[addr]

    print(f"total {total} instructions" + (f", {total / a.per:.1f} per unit" if a.per else ""))
    for key, n in by.most_common(a.top):
        per = f" {n / a.per:9.1f}" if a.per else ""
        print(f"{100 * n / total:6.2f}% {n:13d}{per} {key}")


if __name__ == "__main__":
    main()
