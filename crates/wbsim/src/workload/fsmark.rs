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
//! "no sync" is modelled.

use serde::Serialize;

use super::shell::split_words;

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
            "command must start with `fs_mark` (got `{program}`)"
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
                "unexpected argument `{word}`; fs_mark takes options only: {SUPPORTED}"
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
        match opt {
            'd' => cmd.dirs.push(value),
            'l' => {}
            'D' => cmd.subdirs = number(opt, &value, "a count of subdirectories")? as u32,
            'N' => cmd.files_per_subdir = number(opt, &value, "files per subdirectory")?,
            'n' => cmd.files_per_loop = number(opt, &value, "files per loop")?,
            's' => cmd.file_size_bytes = number(opt, &value, "a file size in bytes")?,
            'w' => cmd.write_bytes = number(opt, &value, "bytes per write")?,
            'L' => {
                cmd.loops = number(opt, &value, "a loop count")? as u32;
                cmd.keep_files = true;
            }
            't' => cmd.threads_per_dir = number(opt, &value, "threads per directory")? as u32,
            'S' => {
                let m = number(opt, &value, "a sync method")?;
                if m != 0 {
                    return Err(format!(
                        "-S {m}: only sync method 0 (no fsync or sync) is modelled"
                    ));
                }
                cmd.sync_method = 0;
            }
            _ => unreachable!(),
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
    for (opt, v) in [
        ('t', cmd.threads_per_dir as u64),
        ('n', cmd.files_per_loop),
        ('L', cmd.loops as u64),
        ('w', cmd.write_bytes),
    ] {
        if v == 0 {
            return Err(format!("-{opt} must be at least 1"));
        }
    }
    let dirs = cmd.dirs.len() as u32;
    if cmd.threads_per_dir > dirs && !cmd.threads_per_dir.is_multiple_of(dirs) {
        return Err(format!(
            "-t {}: with {dirs} directories (-d) the thread count must be a multiple of {dirs}",
            cmd.threads_per_dir
        ));
    }
    if cmd.subdirs == 1 {
        return Err("-D 1: fs_mark needs at least 2 subdirectories".to_string());
    }
    if cmd.files_per_subdir > 0 && cmd.subdirs == 0 {
        return Err("-N needs -D: files per subdirectory without subdirectories".to_string());
    }
    Ok(cmd)
}

/// A non-negative decimal integer (values that fit in 32 bits for counts).
fn number(opt: char, value: &str, what: &str) -> Result<u64, String> {
    if let Some(rest) = value.strip_prefix('-') {
        if rest.chars().all(|c| c.is_ascii_digit()) && !rest.is_empty() {
            return Err(format!(
                "-{opt} {value}: must not be negative; expected {what}"
            ));
        }
    }
    let n: u64 = value
        .parse()
        .map_err(|_| format!("-{opt} {value}: not a number; expected {what}"))?;
    if opt != 's' && opt != 'n' && opt != 'N' && opt != 'w' && n > u32::MAX as u64 {
        return Err(format!("-{opt} {value}: too large; expected {what}"));
    }
    Ok(n)
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
            ("fs_mark -d a -S 1", "-S 1"),
            ("fs_mark -d a", "add -S0"),
            ("fs_mark -d a -S0 -L 0", "-L must be at least 1"),
            ("fs_mark -d a -S0 -n ten", "-n ten: not a number"),
            ("fs_mark -d a -S0 -N 5", "-N needs -D"),
            ("dd -d a", "must start with `fs_mark`"),
            ("fs_mark -d a -S0 extra", "unexpected argument `extra`"),
        ];
        for (line, want) in cases {
            let e = parse_fsmark(line).unwrap_err();
            assert!(e.contains(want), "{line}: {e}");
        }
    }
}
