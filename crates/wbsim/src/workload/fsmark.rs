//! Parser for `fs_mark` command lines (Ric Wheeler's fs_mark 3.3, the
//! version mmtests and the 2011–2013 postings use).
//!
//! Options are read the way getopt(3) reads them: `-S0` and `-S 0` are the
//! same, options may come in any order, `-d` may repeat. Only what the
//! simulator models is accepted; anything else is rejected with a message
//! that names the option and lists the supported ones.
//!
//! Read in fs_mark 3.3's source (josefbacik/fs_mark, `fs_mark.c` at
//! 09b074c): `-t` is the total thread count, at least one per `-d`
//! directory and, when larger, a multiple of their number (thread `i +
//! j * dirs` works in directory `i`); defaults `-n 1000 -s 51200 -w 16384
//! -t 1 -S 1`, one iteration without `-L`; `-L` (like `-k`) keeps the
//! files, and without either they are unlinked after the single
//! iteration, outside the timed loop. `-S` must be given as 0 because only
//! "no sync" is modelled. Without `-k` or `-L` fs_mark unlinks its files
//! after its one iteration, outside its timing; the model does not (the
//! files stay, with whatever of their pages are still dirty): a known
//! limitation, stated in the option reference.
//!
//! Ranges: fs_mark's own limits where it has them (`fs_mark.h`: MAX_THREADS
//! 64 threads and directories, MAX_FILES 1,000,000 files per loop,
//! MAX_IO_BUFFER_SIZE 1 MiB per write; `-D` at least 2), and otherwise
//! `INT_MAX`, since fs_mark reads every number with `atoi` into an `int`.
//! `-D` and `-N` (subdirectories and files per subdirectory) are accepted
//! because the published commands use them, but the model does not place
//! files in subdirectories: a file goes in its `-d` directory (on xfs, that
//! directory's allocation group), and the cost of a create in a large
//! directory is the calibrated `file_create_ns`. `-l FILE` (fs_mark's log)
//! is accepted and has no effect: the report carries the figures.

use serde::Serialize;

use super::limits::{echo, Limit, Unit};
use super::shell::split_words;

/// fs_mark reads its numbers with `atoi` into an `int`.
const INT_MAX: u64 = i32::MAX as u64;

/// `-t`: threads in all (`fs_mark.h` MAX_THREADS).
pub const FSMARK_THREADS: Limit = Limit {
    what: "threads",
    min: 1,
    max: 64,
    step: 1,
    unit: Unit::Count(""),
    source: "fs_mark's MAX_THREADS",
};
/// `-d`: directories, one thread each at least (MAX_THREADS).
pub const FSMARK_DIRS: Limit = Limit {
    what: "the number of -d directories",
    min: 1,
    max: 64,
    step: 1,
    unit: Unit::Count(""),
    source: "fs_mark's MAX_THREADS, one thread per directory",
};
/// `-n`: files per thread and loop (MAX_FILES).
pub const FSMARK_FILES: Limit = Limit {
    what: "files per loop",
    min: 1,
    max: 1_000_000,
    step: 1,
    unit: Unit::Count(""),
    source: "fs_mark's MAX_FILES",
};
/// `-s`: file size.
pub const FSMARK_FILE_SIZE: Limit = Limit {
    what: "the file size",
    min: 0,
    max: INT_MAX,
    step: 1,
    unit: Unit::Bytes,
    source: "fs_mark reads it with atoi into an int",
};
/// `-w`: bytes per write(2) (MAX_IO_BUFFER_SIZE).
pub const FSMARK_WRITE: Limit = Limit {
    what: "bytes per write",
    min: 1,
    max: 1 << 20,
    step: 1,
    unit: Unit::Bytes,
    source: "fs_mark's MAX_IO_BUFFER_SIZE",
};
/// `-L`: loops.
pub const FSMARK_LOOPS: Limit = Limit {
    what: "loops",
    min: 1,
    max: INT_MAX,
    step: 1,
    unit: Unit::Count(""),
    source: "fs_mark reads it with atoi into an int",
};
/// `-D`: subdirectories (fs_mark: "needs to be greater than 1").
pub const FSMARK_SUBDIRS: Limit = Limit {
    what: "subdirectories",
    min: 2,
    max: INT_MAX,
    step: 1,
    unit: Unit::Count(""),
    source: "fs_mark needs at least 2; it reads an int",
};
/// `-N`: files per subdirectory.
pub const FSMARK_PER_SUBDIR: Limit = Limit {
    what: "files per subdirectory",
    min: 0,
    max: INT_MAX,
    step: 1,
    unit: Unit::Count(""),
    source: "fs_mark reads it with atoi into an int",
};
/// `-S`: sync method; fs_mark has 0..=6, the model only 0.
pub const FSMARK_SYNC: Limit = Limit {
    what: "the sync method",
    min: 0,
    max: 0,
    step: 1,
    unit: Unit::Count(""),
    source: "fs_mark's methods are 0..=6; only 0, no fsync or sync, is modelled",
};

/// A parsed fs_mark invocation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FsMarkCommand {
    /// `-d`, in command-line order; at least one.
    pub dirs: Vec<String>,
    /// `-t`: threads in all (at least one per directory).
    pub threads_per_dir: u32,
    /// `-n`: files each thread creates per loop.
    pub files_per_loop: u64,
    /// `-s`: size of each file in bytes.
    pub file_size_bytes: u64,
    /// `-w`: bytes per write(2) call.
    pub write_bytes: u64,
    /// `-L`: loops.
    pub loops: u32,
    /// `-S`: sync method (only 0, no sync, is accepted).
    pub sync_method: u32,
    /// `-D`: subdirectories per directory (0 = files go in the directory).
    pub subdirs: u32,
    /// `-N`: files per subdirectory before moving to the next one
    /// (0 = spread round-robin, fs_mark's behaviour without `-N`).
    pub files_per_subdir: u64,
    /// `-k` or `-L`: keep the files (fs_mark sets this for `-L` too). The
    /// simulator never deletes files: without it fs_mark unlinks them after
    /// its one iteration, outside what it measures.
    pub keep_files: bool,
}

impl FsMarkCommand {
    /// Threads fs_mark runs.
    pub fn threads(&self) -> u32 {
        self.threads_per_dir.max(self.dirs.len() as u32)
    }

    /// Files created by the whole run.
    pub fn total_files(&self) -> u64 {
        self.threads() as u64 * self.files_per_loop * self.loops as u64
    }
}

const SUPPORTED: &str =
    "-d DIR, -D N, -N N, -n N, -s BYTES, -w BYTES, -L N, -S 0, -t N, -k, -l FILE";

/// Parse an fs_mark command line.
pub fn parse_fsmark(command: &str) -> Result<FsMarkCommand, String> {
    let words = split_words(command)?;
    let Some((program, args)) = words.split_first() else {
        return Err("empty command; expected an fs_mark command line such as \
                    `fs_mark -d dir -n 100 -s 4096 -S0`"
            .to_string());
    };
    if program != "fs_mark" && !program.ends_with("/fs_mark") {
        return Err(format!(
            "command must start with `fs_mark` (got `{}`)",
            echo(program)
        ));
    }
    let mut cmd = FsMarkCommand {
        dirs: Vec::new(),
        threads_per_dir: 1,
        files_per_loop: 1000,
        file_size_bytes: 51200,
        write_bytes: 16384,
        loops: 1,
        sync_method: 1,
        subdirs: 0,
        files_per_subdir: 0,
        keep_files: false,
    };
    let mut i = 0;
    while i < args.len() {
        let word = &args[i];
        i += 1;
        let Some(opt) = word.strip_prefix('-').and_then(|s| s.chars().next()) else {
            return Err(format!(
                "unexpected argument `{}`; fs_mark takes options only: {SUPPORTED}",
                echo(word)
            ));
        };
        if opt == 'k' && word.len() == 2 {
            cmd.keep_files = true;
            continue;
        }
        if !"dDNnswLStl".contains(opt) {
            return Err(format!(
                "unsupported option `-{opt}`; supported: {SUPPORTED}"
            ));
        }
        // getopt: the value is attached (`-S0`) or the next word.
        let attached = &word[1 + opt.len_utf8()..];
        let value = if !attached.is_empty() {
            attached.to_string()
        } else if i < args.len() {
            i += 1;
            args[i - 1].clone()
        } else {
            return Err(format!("option `-{opt}` needs a value"));
        };
        if opt == 'd' {
            cmd.dirs.push(value);
            let n = cmd.dirs.len() as u64;
            FSMARK_DIRS.check("-d given ", &format!("{n} times"), n)?;
            continue;
        }
        match opt {
            'l' => {}
            'D' => cmd.subdirs = number(opt, &value, &FSMARK_SUBDIRS)? as u32,
            'N' => cmd.files_per_subdir = number(opt, &value, &FSMARK_PER_SUBDIR)?,
            'n' => cmd.files_per_loop = number(opt, &value, &FSMARK_FILES)?,
            's' => cmd.file_size_bytes = number(opt, &value, &FSMARK_FILE_SIZE)?,
            'w' => cmd.write_bytes = number(opt, &value, &FSMARK_WRITE)?,
            'L' => {
                cmd.loops = number(opt, &value, &FSMARK_LOOPS)? as u32;
                cmd.keep_files = true;
            }
            't' => cmd.threads_per_dir = number(opt, &value, &FSMARK_THREADS)? as u32,
            'S' => cmd.sync_method = number(opt, &value, &FSMARK_SYNC)? as u32,
            _ => {
                return Err(format!(
                    "unsupported option `-{opt}`; supported: {SUPPORTED}"
                ))
            }
        }
    }
    if cmd.dirs.is_empty() {
        return Err("missing -d: fs_mark needs at least one directory (-d DIR)".to_string());
    }
    if cmd.sync_method != 0 {
        return Err(
            "-S not given: fs_mark's default (1, fsync before close) is not modelled; add -S0"
                .to_string(),
        );
    }
    let dirs = cmd.dirs.len() as u32;
    if cmd.threads_per_dir > dirs && !cmd.threads_per_dir.is_multiple_of(dirs) {
        return Err(format!(
            "-t {}: with {dirs} directories (-d) the thread count must be a multiple of {dirs}",
            cmd.threads_per_dir
        ));
    }
    if !cmd.keep_files {
        return Err(
            "neither -k nor -L: fs_mark would unlink its files after its one \
                    iteration, which is not modelled; add -k to keep them (-L N keeps \
                    them too)"
                .to_string(),
        );
    }
    if cmd.files_per_subdir > 0 && cmd.subdirs == 0 {
        return Err("-N needs -D: files per subdirectory without subdirectories".to_string());
    }
    Ok(cmd)
}

/// A non-negative decimal integer within `limit`.
fn number(opt: char, value: &str, limit: &Limit) -> Result<u64, String> {
    let label = format!("-{opt} ");
    if let Some(rest) = value.strip_prefix('-') {
        if rest.chars().all(|c| c.is_ascii_digit()) && !rest.is_empty() {
            return Err(format!(
                "-{opt} {}: must not be negative; {} must be {}",
                echo(value),
                limit.what,
                limit.range_text()
            ));
        }
    }
    let all_digits = !value.is_empty() && value.chars().all(|c| c.is_ascii_digit());
    let n = match value.parse::<u64>() {
        Ok(n) => n,
        // Too many digits for 64 bits: out of any range.
        Err(_) if all_digits => u64::MAX,
        Err(_) => {
            return Err(format!(
                "-{opt} {}: not a number; {} must be {}",
                echo(value),
                limit.what,
                limit.range_text()
            ))
        }
    };
    limit.check(&label, value, n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_004_command() {
        let c = parse_fsmark(
            "./fs_mark  -d  /tmp/fsmark-2676  -D  100  -N  150  -n  150  -L  25  -t  1  -S0  -s  10485760",
        )
        .unwrap();
        assert_eq!(c.dirs, vec!["/tmp/fsmark-2676".to_string()]);
        assert_eq!((c.subdirs, c.files_per_subdir), (100, 150));
        assert_eq!((c.files_per_loop, c.loops, c.threads()), (150, 25, 1));
        assert_eq!((c.sync_method, c.file_size_bytes), (0, 10 << 20));
        assert_eq!(c.total_files(), 3750);
    }

    #[test]
    fn seed_003_command_with_arithmetic_and_two_dirs() {
        let c = parse_fsmark(
            "fs_mark -d fsmark-one -d fsmark-two -D 100 -N 150 -n 150 -L 25 -t 1 -S 0 -s $((10 << 20))",
        )
        .unwrap();
        assert_eq!(c.threads(), 2);
        assert_eq!(c.file_size_bytes, 10 << 20);
    }

    #[test]
    fn seed_001_command_eight_dirs() {
        let dirs: String = (0..8).map(|i| format!(" -d /mnt/scratch/{i}")).collect();
        let c = parse_fsmark(&format!(
            "fs_mark -D 10000 -S0 -n 10000 -s 4096 -L 120{dirs}"
        ))
        .unwrap();
        assert_eq!(c.threads(), 8);
        assert_eq!((c.subdirs, c.files_per_subdir), (10000, 0));
        assert_eq!(
            (c.files_per_loop, c.file_size_bytes, c.loops),
            (10000, 4096, 120)
        );
    }

    #[test]
    fn errors_name_the_option() {
        let cases = [
            ("fs_mark -d a -S0 -x 3", "-x"),
            ("fs_mark -S0 -n 10", "missing -d"),
            ("fs_mark -d a -S0 -s -5", "-s -5: must not be negative"),
            ("fs_mark -d a -S0 -s", "`-s` needs a value"),
            ("fs_mark -d a -S 1", "-S 1: the sync method must be 0..=0"),
            ("fs_mark -d a", "add -S0"),
            ("fs_mark -d a -S0 -L 0", "-L 0: loops must be 1..="),
            ("fs_mark -d a -S0 -n ten", "-n ten: not a number"),
            ("fs_mark -d a -S0 -k -N 5", "-N needs -D"),
            ("dd -d a", "must start with `fs_mark`"),
            ("fs_mark -d a -S0 extra", "unexpected argument `extra`"),
            // The unlink after a run without -k or -L is not modelled.
            ("fs_mark -d a -S0 -n 10", "neither -k nor -L"),
        ];
        for (line, want) in cases {
            let e = parse_fsmark(line).unwrap_err();
            assert!(e.contains(want), "{line}: {e}");
        }
    }

    /// -t was accepted up to 2^32 (and built one task per thread up
    /// front); -n, -w, -D, -N, -L and the -d count had no bound either.
    #[test]
    fn numbers_have_fs_marks_limits() {
        let e = |s: &str| parse_fsmark(s).unwrap_err();
        assert_eq!(
            e("fs_mark -d a -S0 -L 1 -t 100000"),
            "-t 100000: threads must be 1..=64 (fs_mark's MAX_THREADS)"
        );
        assert!(e("fs_mark -d a -S0 -L 1 -t 4294967296").starts_with("-t 4294967296: threads"));
        assert!(e("fs_mark -d a -S0 -L 1 -t 99999999999999999999999").contains("1..=64"));
        assert!(e("fs_mark -d a -S0 -L 1 -n 1000001").contains("fs_mark's MAX_FILES"));
        assert!(e("fs_mark -d a -S0 -L 1 -w 1048577").contains("MAX_IO_BUFFER_SIZE"));
        assert!(e("fs_mark -d a -S0 -L 2147483648").starts_with("-L 2147483648: loops"));
        assert!(e("fs_mark -d a -S0 -L 1 -D 1").starts_with("-D 1: subdirectories"));
        let dirs: String = (0..65).map(|i| format!(" -d d/{i}")).collect();
        assert!(e(&format!("fs_mark -S0 -L 1{dirs}")).starts_with("-d given 65 times"));
        let c = parse_fsmark("fs_mark -d a -S0 -L 1 -t 64").unwrap();
        assert_eq!(c.threads(), 64);
    }
}
