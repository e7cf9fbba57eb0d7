//! The option reference of the programs a scenario task may run, as
//! Markdown, for the scenario reference document. Every range printed here
//! is the [`Limit`] constant its parser checks against, so the text and the
//! checks cannot drift apart (the tests below try each bound and one step
//! past it).

use super::dd::{DD_BS, DD_COUNT, DD_FILE};
use super::fsmark::{
    FSMARK_DIRS, FSMARK_FILES, FSMARK_FILE_SIZE, FSMARK_LOOPS, FSMARK_PER_SUBDIR, FSMARK_SUBDIRS,
    FSMARK_SYNC, FSMARK_THREADS, FSMARK_WRITE,
};
use super::iozone::{IOZONE_FILE, IOZONE_RECORD, IOZONE_TEST};
use super::limits::{Limit, Unit};
use super::synthetic::{MAPWRITE_SIZE, MEMTOUCH_HOT, MEMTOUCH_RATE, MEMTOUCH_SIZE, MEMTOUCH_WRITE};

/// One accepted option or operand.
pub struct OptDoc {
    pub syntax: &'static str,
    pub meaning: &'static str,
    /// How a size is written, for byte-valued options.
    pub size_syntax: &'static str,
    pub limit: Option<&'static Limit>,
}

/// One program: what it is, what it accepts, what it refuses.
pub struct ProgramDoc {
    pub name: &'static str,
    pub about: &'static str,
    pub options: &'static [OptDoc],
    pub refused: &'static str,
}

const fn opt(syntax: &'static str, meaning: &'static str, limit: &'static Limit) -> OptDoc {
    OptDoc {
        syntax,
        meaning,
        size_syntax: "",
        limit: Some(limit),
    }
}

const fn size(
    syntax: &'static str,
    meaning: &'static str,
    size_syntax: &'static str,
    limit: &'static Limit,
) -> OptDoc {
    OptDoc {
        syntax,
        meaning,
        size_syntax,
        limit: Some(limit),
    }
}

const fn flag(syntax: &'static str, meaning: &'static str) -> OptDoc {
    OptDoc {
        syntax,
        meaning,
        size_syntax: "",
        limit: None,
    }
}

const DD_SIZES: &str = "GNU dd's: a number with c, w, b, kB, K, MB, M, GB, G, ... (KiB, MiB \
     also) and `x` products; `$(( ))` arithmetic is expanded";
const IOZONE_SIZES: &str = "a plain number is KiB; suffixes k, m, g";
const SYNTHETIC_SIZES: &str = "a plain number is bytes; suffixes K, M, G";

/// Every program a task may run, in the order the reference lists them.
pub const PROGRAMS: &[ProgramDoc] = &[
    ProgramDoc {
        name: "dd",
        about: "GNU dd copying /dev/zero to a file: `count` write(2) calls of `bs` bytes \
                through the page cache (on fuse-ntfs, written through to the daemon).",
        options: &[
            flag(
                "if=/dev/zero",
                "the input; the only one modelled (required)",
            ),
            flag(
                "of=FILE",
                "the output file, under one of the mounts (required)",
            ),
            size(
                "bs=N",
                "bytes per read(2)/write(2) call (required)",
                DD_SIZES,
                &DD_BS,
            ),
            opt("count=N", "blocks to copy (required)", &DD_COUNT),
            size("bs × count", "the file size", DD_SIZES, &DD_FILE),
            flag(
                "conv=fsync, conv=fdatasync",
                "write and wait for the file's dirty pages after the last block; on \
                 fuse-ntfs, ntfs-3g syncs the whole volume (its block device's pages). \
                 The two are the same in the model: the inode and journal writes of \
                 fsync are not modelled",
            ),
        ],
        refused: "`oflag=` (O_DIRECT and O_SYNC writes are not modelled), other `conv=` \
                  values, any other input than /dev/zero, other operands",
    },
    ProgramDoc {
        name: "fs_mark",
        about: "Ric Wheeler's fs_mark 3.3: each thread creates `-n` files of `-s` bytes per \
                loop, written in `-w`-byte calls, `-L` loops; options as getopt reads them \
                (`-S0` or `-S 0`).",
        options: &[
            opt(
                "-d DIR",
                "a directory, repeatable; one thread at least per directory (required)",
                &FSMARK_DIRS,
            ),
            opt(
                "-t N",
                "threads in all; when more than the directories, a multiple of their number",
                &FSMARK_THREADS,
            ),
            opt(
                "-n N",
                "files per thread and loop (default 1000)",
                &FSMARK_FILES,
            ),
            size(
                "-s BYTES",
                "size of each file (default 51200)",
                "bytes",
                &FSMARK_FILE_SIZE,
            ),
            size(
                "-w BYTES",
                "bytes per write(2) (default 16384)",
                "bytes",
                &FSMARK_WRITE,
            ),
            opt("-L N", "loops (default 1); keeps the files", &FSMARK_LOOPS),
            flag(
                "-k",
                "keep the files; required unless -L is given: without either, fs_mark \
                 unlinks its files after its one iteration, which is not modelled",
            ),
            opt(
                "-S N",
                "sync method (required, since fs_mark's default 1 is not modelled)",
                &FSMARK_SYNC,
            ),
            opt(
                "-D N",
                "subdirectories per directory. Accepted (the published commands use it) but \
                 not modelled: files are placed by their -d directory, and the cost of a \
                 create is the calibrated constant",
                &FSMARK_SUBDIRS,
            ),
            opt(
                "-N N",
                "files per subdirectory; needs -D. Accepted but not modelled, as -D",
                &FSMARK_PER_SUBDIR,
            ),
            flag(
                "-l FILE",
                "fs_mark's log file; no effect (the report carries the figures)",
            ),
        ],
        refused: "-S other than 0, any other option",
    },
    ProgramDoc {
        name: "iozone",
        about: "IOzone 3.x: the write/rewrite test and, after it, read/re-read and \
                random-read/random-write passes over one file.",
        options: &[
            opt(
                "-i N",
                "a test group, repeatable: 0 write/rewrite (required), 1 read/re-read, \
                 2 random-read/random-write",
                &IOZONE_TEST,
            ),
            size(
                "-r SIZE",
                "record size (required)",
                IOZONE_SIZES,
                &IOZONE_RECORD,
            ),
            size(
                "-s SIZE",
                "file size, a whole number of records (required)",
                IOZONE_SIZES,
                &IOZONE_FILE,
            ),
            flag(
                "-f FILE",
                "the test file, under one of the mounts (required)",
            ),
            flag("-B", "access the file through a shared mapping (mmap)"),
            flag(
                "-e",
                "include the flush (fsync, or msync with -B) in the timing",
            ),
            flag("-w", "keep the file at the end"),
        ],
        refused: "tests 3..=12 (not modelled), a run without -i 0, any other option",
    },
    ProgramDoc {
        name: "memtouch",
        about: "wbsim's synthetic process with anonymous memory: writes each page once, \
                then touches random pages of its hot set until the workload ends.",
        options: &[
            size(
                "-s SIZE",
                "the process's memory (required)",
                SYNTHETIC_SIZES,
                &MEMTOUCH_SIZE,
            ),
            size(
                "-H SIZE",
                "the hot set, the first part of the memory (default 0: fill and exit)",
                SYNTHETIC_SIZES,
                &MEMTOUCH_HOT,
            ),
            opt(
                "-r N",
                "touches of the hot set a second; needs -H",
                &MEMTOUCH_RATE,
            ),
            opt(
                "-w N",
                "share of touches that write; needs -H",
                &MEMTOUCH_WRITE,
            ),
        ],
        refused: "positional arguments, -r or -w without -H, any other option",
    },
    ProgramDoc {
        name: "mapwrite",
        about: "wbsim's synthetic streaming write through a shared mapping: every page \
                written once in order by write faults, then unmapped (no msync).",
        options: &[
            size(
                "-s SIZE",
                "the mapping size (required)",
                SYNTHETIC_SIZES,
                &MAPWRITE_SIZE,
            ),
            flag(
                "FILE",
                "the file, under one of the mounts (required, exactly one)",
            ),
        ],
        refused: "any other option",
    },
    ProgramDoc {
        name: "sync",
        about: "sync(1) of busybox and of coreutils before 8.24: one sync(2) (`sys_sync`, \
                3.2 – 3.4): writes every dirty page of the files and block devices that \
                have any when it starts and waits until none is dirty or under writeback. \
                Give it `after` the task whose data it syncs (`dd ...; sync`). In the \
                model the syncing task writes the pages itself (in the kernel the \
                device's flusher does); the journal commit (`->sync_fs`) is not \
                modelled.",
        options: &[],
        refused: "any operand (coreutils 8.24's -d, -f and FILE)",
    },
];

fn unit_text(o: &OptDoc) -> String {
    match o.limit.map(|l| l.unit) {
        Some(Unit::Bytes) => format!("bytes ({})", o.size_syntax),
        Some(Unit::Count(u)) if !u.is_empty() => u.to_string(),
        Some(Unit::Count(_)) => "count".to_string(),
        Some(Unit::Percent) => "percent".to_string(),
        None => "".to_string(),
    }
}

/// The reference: per program, every accepted option or operand with its
/// meaning, unit and allowed range, and what is refused.
pub fn reference_markdown() -> String {
    let mut out = String::from(
        "Every number has a stated range; a value outside it is an error naming the \
         option and the range.\n",
    );
    for p in PROGRAMS {
        out += &format!("\n### `{}`\n\n{}\n\n", p.name, p.about);
        if p.options.is_empty() {
            out += "It takes no options or operands.\n";
        } else {
            out += "| option | meaning | unit | allowed |\n|---|---|---|---|\n";
        }
        for o in p.options {
            let allowed = o.limit.map_or(String::new(), |l| {
                format!("{} ({})", l.range_text(), l.source)
            });
            out += &format!(
                "| `{}` | {} | {} | {} |\n",
                o.syntax,
                o.meaning,
                unit_text(o),
                allowed
            );
        }
        out += &format!("\nRefused: {}.\n", p.refused);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::dd::parse_dd;
    use crate::workload::fsmark::parse_fsmark;
    use crate::workload::iozone::parse_iozone;
    use crate::workload::synthetic::{parse_mapwrite, parse_memtouch};

    type Probe = fn(u64) -> Result<(), String>;

    fn ok<T>(r: Result<T, String>) -> Result<(), String> {
        r.map(|_| ())
    }

    /// Each limit with a command line that sets just that number.
    fn probes() -> Vec<(&'static Limit, &'static str, Probe)> {
        vec![
            (&DD_BS, "bs=", |n| {
                ok(parse_dd(&format!("dd if=/dev/zero of=d/f bs={n} count=1")))
            }),
            (&DD_COUNT, "count=", |n| {
                ok(parse_dd(&format!("dd if=/dev/zero of=d/f bs=1 count={n}")))
            }),
            // The file size in steps of 4 KiB blocks, past the largest
            // count= of 4 KiB blocks.
            (&DD_FILE, "bs × count", |n| {
                ok(parse_dd(&format!(
                    "dd if=/dev/zero of=d/f bs=4096 count={}",
                    n.div_ceil(4096)
                )))
            }),
            (&FSMARK_DIRS, "-d", |n| {
                let dirs: String = (0..n).map(|i| format!(" -d d/{i}")).collect();
                ok(parse_fsmark(&format!("fs_mark -S0 -L 1{dirs}")))
            }),
            (&FSMARK_THREADS, "-t", |n| {
                ok(parse_fsmark(&format!("fs_mark -d d/a -S0 -L 1 -t {n}")))
            }),
            (&FSMARK_FILES, "-n", |n| {
                ok(parse_fsmark(&format!("fs_mark -d d/a -S0 -L 1 -n {n}")))
            }),
            (&FSMARK_FILE_SIZE, "-s", |n| {
                ok(parse_fsmark(&format!("fs_mark -d d/a -S0 -L 1 -s {n}")))
            }),
            (&FSMARK_WRITE, "-w", |n| {
                ok(parse_fsmark(&format!("fs_mark -d d/a -S0 -L 1 -w {n}")))
            }),
            (&FSMARK_LOOPS, "-L", |n| {
                ok(parse_fsmark(&format!("fs_mark -d d/a -S0 -L {n}")))
            }),
            (&FSMARK_SYNC, "-S", |n| {
                ok(parse_fsmark(&format!("fs_mark -d d/a -L 1 -S {n}")))
            }),
            (&FSMARK_SUBDIRS, "-D", |n| {
                ok(parse_fsmark(&format!("fs_mark -d d/a -S0 -L 1 -D {n}")))
            }),
            (&FSMARK_PER_SUBDIR, "-N", |n| {
                ok(parse_fsmark(&format!(
                    "fs_mark -d d/a -S0 -L 1 -D 2 -N {n}"
                )))
            }),
            (&IOZONE_TEST, "-i", |n| {
                ok(parse_iozone(&format!(
                    "iozone -i 0 -i {n} -r 4k -s 64k -f d/f"
                )))
            }),
            (&IOZONE_RECORD, "-r", |n| {
                ok(parse_iozone(&format!(
                    "iozone -i 0 -r {}k -s 16m -f d/f",
                    n / 1024
                )))
            }),
            (&IOZONE_FILE, "-s", |n| {
                ok(parse_iozone(&format!(
                    "iozone -i 0 -r 4k -s {}k -f d/f",
                    n / 1024
                )))
            }),
            (&MEMTOUCH_SIZE, "-s", |n| {
                ok(parse_memtouch(&format!("memtouch -s {n}")))
            }),
            (&MEMTOUCH_HOT, "-H", |n| {
                let rate = if n > 0 { " -r 1" } else { "" };
                ok(parse_memtouch(&format!("memtouch -s 64G -H {n}{rate}")))
            }),
            (&MEMTOUCH_RATE, "-r", |n| {
                ok(parse_memtouch(&format!("memtouch -s 1M -H 1M -r {n}")))
            }),
            (&MEMTOUCH_WRITE, "-w", |n| {
                ok(parse_memtouch(&format!("memtouch -s 1M -H 1M -r 1 -w {n}")))
            }),
            (&MAPWRITE_SIZE, "-s", |n| {
                ok(parse_mapwrite(&format!("mapwrite -s {n} d/m")))
            }),
        ]
    }

    #[test]
    fn each_stated_range_is_the_one_the_parser_enforces() {
        let probes = probes();
        for (limit, label, probe) in &probes {
            let what = limit.what;
            assert_eq!(probe(limit.min), Ok(()), "{label} {what}: min accepted");
            assert_eq!(probe(limit.max), Ok(()), "{label} {what}: max accepted");
            let past_max = limit.max + limit.step;
            let e = probe(past_max).expect_err(&format!("{label} {past_max} refused"));
            assert!(e.contains(label), "{label} {past_max}: {e}");
            if limit.min >= limit.step {
                let below = limit.min - limit.step;
                let e = probe(below).expect_err(&format!("{label} {below} refused"));
                assert!(e.contains(label), "{label} {below}: {e}");
            }
        }
        // Every limit a program lists is probed.
        let listed: Vec<&Limit> = PROGRAMS
            .iter()
            .flat_map(|p| p.options.iter().filter_map(|o| o.limit))
            .collect();
        assert_eq!(listed.len(), probes.len());
        for l in listed {
            assert!(probes.iter().any(|(p, _, _)| **p == *l), "{}", l.what);
        }
    }

    #[test]
    fn out_of_range_messages_state_the_range_printed() {
        // The message and the reference print the same range text.
        let e = parse_fsmark("fs_mark -d d/a -S0 -L 1 -t 100000").unwrap_err();
        assert_eq!(
            e,
            "-t 100000: threads must be 1..=64 (fs_mark's MAX_THREADS)"
        );
        let text = reference_markdown();
        assert!(text.contains("| `-t N` |"), "{text}");
        assert!(text.contains("1..=64 (fs_mark's MAX_THREADS)"), "{text}");
        for p in PROGRAMS {
            assert!(text.contains(&format!("### `{}`", p.name)));
        }
        assert!(text.contains("2097148 KiB"));
    }
}
