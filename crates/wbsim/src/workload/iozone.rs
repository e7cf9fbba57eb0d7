//! The `iozone` command line (IOzone 3.x, `iozone.c` option parsing, read
//! from IOzone 3.465 as published in public mirrors): which tests run, the
//! record and file sizes, mmap mode and the file. Only the options wbsim
//! models are accepted; anything else is rejected with the list of those.
//!
//! * `-i N`: a test group, repeatable. 0 = write and rewrite, 1 = read and
//!   reread, 2 = random read and random write (run in that order whatever
//!   the order given, as `begin()` does). Groups 3–12 exist in IOzone
//!   but are not modelled; other numbers are not IOzone tests. Without
//!   `-i`, IOzone runs every group; wbsim requires an explicit `-i`, and
//!   requires `-i 0`, as IOzone's manual page (`iozone.1`, 3.414) does:
//!
//!   > One will always need to specify 0 so that any of the following
//!   > tests will have a file to measure.
//!
//!   (IOzone itself does not check it: the read tests then fail to open
//!   the file.)
//! * `-r SIZE`, `-s SIZE`: record and file size; a plain number is KiB,
//!   suffixes `k`, `m`, `g` (either case) as in IOzone. The record is
//!   4 KiB (a page, what the model moves) to 16 MiB (IOzone's
//!   `MAXBUFFERSIZE`: "Error: maximum record size ... is greater than
//!   maximum buffer size"); the file at most 16 TiB − 4 KiB (the model's
//!   32-bit page index) and a whole number of records.
//! * `-B`: the file is mapped (`mmap` MAP_SHARED) and accessed by copying
//!   to or from the mapping.
//! * `-f FILE`: the test file. IOzone's default is `iozone.tmp` in its
//!   working directory; a scenario has no working directory, so `-f` is
//!   required.
//! * `-e`: include the flush (`fsync`, or `msync(MS_SYNC)` with `-B`) in
//!   the timing.
//! * `-w`: keep the file at the end.

use serde::Serialize;

use super::limits::{echo, Limit, Unit, MAX_FILE_BYTES, MAX_FILE_SOURCE};
use super::shell::split_words;

/// `-r`: a whole number of pages, at most IOzone's `MAXBUFFERSIZE`.
pub const IOZONE_RECORD: Limit = Limit {
    what: "the record size",
    min: 4096,
    max: 16 << 20,
    step: 4096,
    unit: Unit::Bytes,
    source: "whole pages, up to IOzone's MAXBUFFERSIZE",
};
/// `-s`: a whole number of pages (and of records), at most the largest
/// file the model holds.
pub const IOZONE_FILE: Limit = Limit {
    what: "the file size",
    min: 4096,
    max: MAX_FILE_BYTES,
    step: 4096,
    unit: Unit::Bytes,
    source: MAX_FILE_SOURCE,
};
/// `-i`: the test groups modelled.
pub const IOZONE_TEST: Limit = Limit {
    what: "the test number",
    min: 0,
    max: 2,
    step: 1,
    unit: Unit::Count(""),
    source: "IOzone's tests are 0..=12; 0 (write/rewrite), 1 (read/re-read) and 2 \
             (random-read/write) are modelled, and 0 is required",
};

/// One timed IOzone pass, in the order `begin()` runs them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum IozoneTest {
    Write,
    Rewrite,
    Read,
    Reread,
    RandRead,
    RandWrite,
}

impl IozoneTest {
    /// The name IOzone's report uses for the column (lower case).
    pub fn name(self) -> &'static str {
        match self {
            IozoneTest::Write => "write",
            IozoneTest::Rewrite => "rewrite",
            IozoneTest::Read => "read",
            IozoneTest::Reread => "reread",
            IozoneTest::RandRead => "randread",
            IozoneTest::RandWrite => "randwrite",
        }
    }

    pub fn writes(self) -> bool {
        matches!(
            self,
            IozoneTest::Write | IozoneTest::Rewrite | IozoneTest::RandWrite
        )
    }

    pub fn random(self) -> bool {
        matches!(self, IozoneTest::RandRead | IozoneTest::RandWrite)
    }
}

/// A parsed `iozone` command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IozoneCommand {
    /// Passes to run, in IOzone's order.
    pub tests: Vec<IozoneTest>,
    pub record_bytes: u64,
    pub file_bytes: u64,
    /// `-B`: access through a shared mapping.
    pub mmap: bool,
    /// `-e`: the flush is timed.
    pub include_flush: bool,
    /// `-w`: do not unlink the file at the end.
    pub keep_file: bool,
    pub file: String,
}

impl IozoneCommand {
    pub fn records(&self) -> u64 {
        self.file_bytes / self.record_bytes
    }
}

const SUPPORTED: &str = "-i 0|1|2, -r SIZE, -s SIZE, -f FILE, -B, -e, -w";

/// IOzone's test groups 0..=12 by number, for messages.
const GROUP_NAMES: [&str; 13] = [
    "write/rewrite",
    "read/re-read",
    "random-read/write",
    "read-backwards",
    "re-write-record",
    "stride-read",
    "fwrite/re-fwrite",
    "fread/re-fread",
    "random-mix",
    "pwrite/re-pwrite",
    "pread/re-pread",
    "pwritev/re-pwritev",
    "preadv/re-preadv",
];

/// IOzone's size syntax: a plain number is KiB; `k`, `m`, `g` suffixes.
fn parse_size(opt: &str, text: &str) -> Result<u64, String> {
    let (digits, mult) = match text.chars().last() {
        Some('k' | 'K') => (&text[..text.len() - 1], 1u64 << 10),
        Some('m' | 'M') => (&text[..text.len() - 1], 1 << 20),
        Some('g' | 'G') => (&text[..text.len() - 1], 1 << 30),
        _ => (text, 1 << 10),
    };
    let all_digits = !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit());
    let n: u64 = match digits.parse() {
        Ok(n) => n,
        // Too many digits for 64 bits: out of any range.
        Err(_) if all_digits => u64::MAX,
        Err(_) => {
            return Err(format!(
                "{opt} {}: expected a size such as 4k, 64m or 1g (a plain number is KiB)",
                echo(text)
            ))
        }
    };
    Ok(n.saturating_mul(mult))
}

/// Parse an IOzone command line.
pub fn parse_iozone(command: &str) -> Result<IozoneCommand, String> {
    let words = split_words(command)?;
    match words.first() {
        Some(p) if p == "iozone" || p.ends_with("/iozone") => {}
        _ => return Err("command must start with `iozone`".to_string()),
    }
    let mut groups: Vec<u32> = Vec::new();
    let (mut record, mut file_bytes, mut file) = (None, None, None);
    let (mut mmap, mut include_flush, mut keep_file) = (false, false, false);
    let mut it = words[1..].iter();
    while let Some(w) = it.next() {
        let mut value = |opt: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{opt} needs a value"))
        };
        match w.as_str() {
            "-B" => mmap = true,
            "-e" => include_flush = true,
            "-w" => keep_file = true,
            "-i" => {
                let v = value("-i")?;
                let n: u32 = v
                    .parse()
                    .map_err(|_| format!("-i {}: expected a test number 0..12", echo(&v)))?;
                match n {
                    0..=2 => groups.push(n),
                    3..=12 => {
                        return Err(format!(
                            "-i {n} ({}) is an IOzone test wbsim does not model; \
                             modelled: 0 (write/rewrite), 1 (read/re-read), \
                             2 (random-read/write)",
                            GROUP_NAMES[n as usize]
                        ))
                    }
                    _ => {
                        return Err(format!(
                            "-i {n}: unknown test number; IOzone's tests are 0..12, \
                             of which wbsim models 0, 1 and 2"
                        ))
                    }
                }
            }
            "-r" => {
                let v = value("-r")?;
                record = Some(IOZONE_RECORD.check("-r ", &v, parse_size("-r", &v)?)?);
            }
            "-s" => {
                let v = value("-s")?;
                file_bytes = Some(IOZONE_FILE.check("-s ", &v, parse_size("-s", &v)?)?);
            }
            "-f" => file = Some(value("-f")?),
            other => {
                return Err(format!(
                    "unsupported option `{}`; supported: {SUPPORTED}",
                    echo(other)
                ))
            }
        }
    }
    if groups.is_empty() {
        return Err("no -i given; say which tests to run, e.g. -i 0 -i 2".to_string());
    }
    if !groups.contains(&0) {
        return Err(format!(
            "-i 0 missing: the read and random tests measure the file the write \
             test (-i 0) creates; as IOzone's manual says, \"one will always need to \
             specify 0 so that any of the following tests will have a file to \
             measure\" (e.g. -i 0 -i {})",
            groups[0]
        ));
    }
    let record_bytes = record.ok_or("-r is required (record size, e.g. -r 4k)")?;
    let file_bytes = file_bytes.ok_or("-s is required (file size, e.g. -s 1000M)")?;
    let file = file.ok_or(
        "-f is required: IOzone writes iozone.tmp in its working directory, \
         and a scenario names the file instead (e.g. -f b/iozone.tmp)",
    )?;
    if record_bytes > file_bytes {
        return Err(format!(
            "record size -r {} KiB is larger than the file size -s {} KiB",
            record_bytes >> 10,
            file_bytes >> 10
        ));
    }
    if !file_bytes.is_multiple_of(record_bytes) {
        return Err(format!(
            "-s {} KiB is not a whole number of -r {} KiB records: the model \
             moves whole records",
            file_bytes >> 10,
            record_bytes >> 10
        ));
    }
    groups.sort_unstable();
    groups.dedup();
    let mut tests = Vec::new();
    for g in groups {
        tests.extend(match g {
            0 => [IozoneTest::Write, IozoneTest::Rewrite],
            1 => [IozoneTest::Read, IozoneTest::Reread],
            _ => [IozoneTest::RandRead, IozoneTest::RandWrite],
        });
    }
    Ok(IozoneCommand {
        tests,
        record_bytes,
        file_bytes,
        mmap,
        include_flush,
        keep_file,
        file,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seed_command_parses() {
        let c = parse_iozone("iozone -B -i 0 -i 2 -r 4k -s 1000M -f b/iozone.tmp").unwrap();
        assert_eq!(
            c.tests,
            vec![
                IozoneTest::Write,
                IozoneTest::Rewrite,
                IozoneTest::RandRead,
                IozoneTest::RandWrite
            ]
        );
        assert_eq!((c.record_bytes, c.file_bytes), (4096, 1000 << 20));
        assert!(c.mmap && !c.include_flush);
        assert_eq!(c.records(), 256_000);
        // A plain number is KiB; groups run in IOzone's order.
        let c = parse_iozone("./iozone -i 2 -i 1 -i 0 -r 64 -s 1024 -f x/f").unwrap();
        assert_eq!((c.record_bytes, c.file_bytes), (65536, 1 << 20));
        assert_eq!(c.tests[0], IozoneTest::Write);
        assert_eq!(c.tests[2], IozoneTest::Read);
    }

    #[test]
    fn bad_lines_say_what_is_wrong() {
        let e = |s: &str| parse_iozone(s).unwrap_err();
        assert!(e("iozone -i 7 -r 4k -s 1m -f a/f").contains("not model"));
        assert!(e("iozone -i 42 -r 4k -s 1m -f a/f").contains("unknown test number"));
        assert!(e("iozone -i x -r 4k -s 1m -f a/f").contains("test number"));
        assert!(e("iozone -i 0 -r 8m -s 1m -f a/f").contains("larger than the file"));
        assert!(e("iozone -i 0 -r 4k -s 1m").contains("-f is required"));
        assert!(e("iozone -i 0 -r 4k -s 1m -f a/f -Q").contains("supported"));
        assert!(e("iozone -i 0 -r 2k -s 1m -f a/f").contains("a multiple of 4 KiB"));
        assert!(e("iozone -i 0 -r 8k -s 12k -f a/f").contains("whole number of -r 8 KiB"));
        assert!(e("iozone -r 4k -s 1m -f a/f").contains("no -i"));
        assert!(e("iozone -i 0 -r 4k -s 1q -f a/f").contains("expected a size"));
        assert!(e("iozone -i").contains("needs a value"));
    }

    /// Without -i 0 the run code reached `unreachable!` (a read test with
    /// no file): it is a parse error now, quoting IOzone's manual.
    #[test]
    fn tests_without_the_write_test_are_refused() {
        for line in [
            "iozone -i 1 -r 4k -s 1m -f a/f",
            "iozone -i 2 -r 4k -s 1m -f a/f",
            "iozone -i 2 -i 1 -B -r 4k -s 1m -f a/f",
        ] {
            let e = parse_iozone(line).unwrap_err();
            assert!(
                e.starts_with("-i 0 missing") && e.contains("one will always need to specify 0"),
                "{line}: {e}"
            );
        }
        assert!(parse_iozone("iozone -i 0 -i 1 -r 4k -s 1m -f a/f").is_ok());
    }

    #[test]
    fn sizes_have_stated_ranges() {
        let e = |s: &str| parse_iozone(s).unwrap_err();
        assert!(parse_iozone("iozone -i 0 -r 16m -s 16m -f a/f").is_ok());
        assert_eq!(
            e("iozone -i 0 -r 16388k -s 32m -f a/f"),
            "-r 16388k: the record size must be 4 KiB..=16 MiB, a multiple of 4 KiB \
             (whole pages, up to IOzone's MAXBUFFERSIZE)"
        );
        assert!(parse_iozone("iozone -i 0 -r 4k -s 17179869180 -f a/f").is_ok());
        assert!(e("iozone -i 0 -r 4k -s 17179869184 -f a/f")
            .starts_with("-s 17179869184: the file size must be"));
        assert!(
            e("iozone -i 0 -r 4k -s 99999999999999999999999g -f a/f").contains("file size must be")
        );
        assert!(e("iozone -i 0 -r 4k -s 0 -f a/f").contains("file size must be"));
    }
}
