#!/usr/bin/env python3
"""Write the seed inputs of the fuzz targets into fuzz/corpus/<target>/:
the scenario files of scenarios/ and the command lines of scenarios/ and
README.md (paths moved under the fixed scenario's mount `disk`), each
program's line on each filesystem type (first byte 0..3) and on a few
kernel presets. Run from the repository root: python3 fuzz/seed.py"""
import hashlib, glob, os, re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAMS = ["dd", "fs_mark", "iozone", "memtouch", "mapwrite"]

def put(target, data):
    d = os.path.join(ROOT, "fuzz", "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "seed-" + hashlib.sha1(data).hexdigest()), "wb") as f:
        f.write(data)

lines = set()
for path in sorted(glob.glob(os.path.join(ROOT, "scenarios", "**", "*.toml"), recursive=True)):
    text = open(path, encoding="utf-8").read()
    put("scenario", text.encode())
    lines.update(re.findall(r'^command = "(.*)"$', text, re.M))
readme = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
lines.update(re.findall(r"`((?:dd|fs_mark|iozone|memtouch|mapwrite) [^`]*)`", readme))
lines.update([
    "dd if=/dev/zero of=disk/f bs=32k count=5120",
    "dd if=/dev/zero of=disk/f bs=1M count=96 conv=fsync",
    "dd if=/dev/zero of=disk/f bs=1M count=64 conv=fdatasync oflag=direct",
    "fs_mark -d disk/fm -D 4 -N 10 -n 20 -L 3 -t 1 -S0 -s 1048576",
    "fs_mark -d disk/a -d disk/b -n 10 -L 2 -S0 -s 65536 -k",
    "iozone -i 0 -i 1 -r 64k -s 96M -f disk/big",
    "iozone -B -i 0 -i 2 -r 4k -s 32M -f disk/iozone.tmp -w",
    "iozone -i 0 -i 2 -r 4k -s 32M -f disk/iozone.tmp -e",
    "memtouch -s 80M -H 60M -r 5000 -w 10",
    "mapwrite -s 96M disk/map",
])

def under_disk(line):
    # Paths of file operands and options onto the mount `disk`.
    line = re.sub(r"(of=)(?:/?[^ /]+/)?([^ ]+)", r"\1disk/\2", line)
    line = re.sub(r"(-[df] )(?:/?[^ /]+/)?([^ ]+)", r"\1disk/\2", line)
    if line.startswith("mapwrite"):
        line = re.sub(r" (?:/?[^ /-][^ /]*/)?([^ /-][^ ]*)$", r" disk/\1", line)
    return line

for line in sorted(lines):
    program, _, args = line.partition(" ")
    if program not in PROGRAMS:
        continue
    for args in {args, under_disk(line).partition(" ")[2]}:
        for selector in [0, 1, 2, 3, 4 * 3, 4 * 7 + 1, 4 * 12 + 2]:
            put(program, bytes([selector]) + args.encode())
