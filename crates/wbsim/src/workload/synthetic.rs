//! Command lines of wbsim's two synthetic programs. They are not real tools:
//! they stand for what a source describes only in words.
//!
//! - `memtouch -s SIZE -H HOT -r TOUCHES_PER_S -w WRITE_PERCENT`: a process
//!   with SIZE of anonymous memory (a daemon, a monitor, a shell): it
//!   writes every page once at start, then touches one page of the first
//!   HOT bytes, chosen at random, TOUCHES_PER_S times a second (in one
//!   batch a millisecond), writing it with probability WRITE_PERCENT. It
//!   runs until the workload ends.
//! - `mapwrite -s SIZE FILE`: "a streaming write to a large mapping": the
//!   file is created, mapped MAP_SHARED and every page written once in
//!   order through page faults, then unmapped (no msync).
//!
//! Sizes take the binary suffixes K, M, G (`64M` = 64 MiB) and must be
//! whole pages. Ranges: memtouch `-s` and `-H` up to 64 GiB (far above the
//! simulated machines' memory plus swap; it bounds the per-page swap table
//! built up front at 64 MiB), `-r` up to 10,000,000 touches a second (at
//! the model's 0.1 µs of user time a touch, one CPU busy all the time),
//! `-w` 0..=100 %; `-r` and `-w` act on the hot set only, so they need
//! `-H`. mapwrite `-s` up to 16 TiB − 4 KiB (the model's 32-bit page
//! index; a larger size used to wrap to a shorter mapping).

use serde::Serialize;

use super::limits::{echo, Limit, Unit, MAX_FILE_BYTES, MAX_FILE_SOURCE};
use super::shell::split_words;

const MEMTOUCH_MAX_BYTES: u64 = 64 << 30;
const MEMTOUCH_MAX_SOURCE: &str = "whole pages; far above the simulated machines' \
     memory and swap, and it bounds the per-page swap table built up front";

/// memtouch `-s`: the process's anonymous memory.
pub const MEMTOUCH_SIZE: Limit = Limit {
    what: "the memory size",
    min: 4096,
    max: MEMTOUCH_MAX_BYTES,
    step: 4096,
    unit: Unit::Bytes,
    source: MEMTOUCH_MAX_SOURCE,
};
/// memtouch `-H`: the hot set (also at most `-s`).
pub const MEMTOUCH_HOT: Limit = Limit {
    what: "the hot set",
    min: 0,
    max: MEMTOUCH_MAX_BYTES,
    step: 4096,
    unit: Unit::Bytes,
    source: "whole pages, and at most -s",
};
/// memtouch `-r`: touches a second.
pub const MEMTOUCH_RATE: Limit = Limit {
    what: "touches per second",
    min: 1,
    max: 10_000_000,
    step: 1,
    unit: Unit::Count(""),
    source: "at 0.1 µs of user time a touch, one CPU busy all the time",
};
/// memtouch `-w`: the share of touches that write.
pub const MEMTOUCH_WRITE: Limit = Limit {
    what: "the write share",
    min: 0,
    max: 100,
    step: 1,
    unit: Unit::Percent,
    source: "a percentage",
};
/// mapwrite `-s`: the mapping (and file) size.
pub const MAPWRITE_SIZE: Limit = Limit {
    what: "the mapping size",
    min: 4096,
    max: MAX_FILE_BYTES,
    step: 4096,
    unit: Unit::Bytes,
    source: MAX_FILE_SOURCE,
};

/// A parsed `memtouch` command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MemTouchCommand {
    pub size_bytes: u64,
    pub hot_bytes: u64,
    pub touches_per_s: u64,
    pub write_percent: u32,
}

/// A parsed `mapwrite` command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MapWriteCommand {
    pub size_bytes: u64,
    pub file: String,
}

impl MapWriteCommand {
    /// Pages of the mapping: exact, since parsing bounds the size to
    /// 2^32 - 1 pages.
    pub fn size_pages(&self) -> u32 {
        u32::try_from(self.size_bytes.div_ceil(4096)).unwrap_or(u32::MAX)
    }
}

/// `12`, `64K`, `512M`, `4G` → bytes, within `limit`.
fn parse_size(opt: &str, text: &str, limit: &Limit) -> Result<u64, String> {
    let (digits, mult) = match text.chars().last() {
        Some('K') | Some('k') => (&text[..text.len() - 1], 1u64 << 10),
        Some('M') => (&text[..text.len() - 1], 1 << 20),
        Some('G') => (&text[..text.len() - 1], 1 << 30),
        _ => (text, 1),
    };
    let n = number(opt, digits, text, "a size such as 4096, 64K, 512M or 4G")?;
    limit.check(&format!("{opt} "), text, n.saturating_mul(mult))
}

/// A decimal number; one too long for 64 bits is `u64::MAX` (out of any
/// range).
fn number(opt: &str, digits: &str, text: &str, expected: &str) -> Result<u64, String> {
    match digits.parse::<u64>() {
        Ok(n) => Ok(n),
        Err(_) if !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit()) => Ok(u64::MAX),
        Err(_) => Err(format!("{opt} {}: expected {expected}", echo(text))),
    }
}

/// `-x VALUE` pairs in order, then the positional words.
type Options = (Vec<(String, String)>, Vec<String>);

/// Split `-x VALUE` pairs and positional words.
fn options(command: &str, program: &str, allowed: &str) -> Result<Options, String> {
    let words = split_words(command)?;
    match words.first() {
        Some(p) if p == program || p.ends_with(&format!("/{program}")) => {}
        other => {
            return Err(format!(
                "command must start with `{program}` (got `{}`)",
                echo(other.map_or("", |s| s.as_str()))
            ))
        }
    }
    let (mut opts, mut positional) = (Vec::new(), Vec::new());
    let mut i = 1;
    while i < words.len() {
        let w = &words[i];
        i += 1;
        if let Some(o) = w.strip_prefix('-') {
            if !allowed.split(", ").any(|a| a == w) {
                return Err(format!(
                    "unsupported option `-{}` for {program}; supported: {allowed}",
                    echo(o)
                ));
            }
            let Some(v) = words.get(i) else {
                return Err(format!("option `{}` needs a value", echo(w)));
            };
            i += 1;
            opts.push((w.clone(), v.clone()));
        } else {
            positional.push(w.clone());
        }
    }
    Ok((opts, positional))
}

pub fn parse_memtouch(command: &str) -> Result<MemTouchCommand, String> {
    let (opts, positional) = options(command, "memtouch", "-s, -H, -r, -w")?;
    if let Some(p) = positional.first() {
        return Err(format!(
            "unexpected argument `{}`; memtouch takes options only",
            echo(p)
        ));
    }
    let mut c = MemTouchCommand {
        size_bytes: 0,
        hot_bytes: 0,
        touches_per_s: 0,
        write_percent: 0,
    };
    let (mut rate_given, mut write_given) = (None, None);
    for (o, v) in &opts {
        match o.as_str() {
            "-s" => c.size_bytes = parse_size(o, v, &MEMTOUCH_SIZE)?,
            "-H" => c.hot_bytes = parse_size(o, v, &MEMTOUCH_HOT)?,
            "-r" => {
                let n = number(o, v, v, "touches per second (an integer)")?;
                c.touches_per_s = MEMTOUCH_RATE.check("-r ", v, n)?;
                rate_given = Some(v);
            }
            _ => {
                let n = number(o, v, v, "a percentage 0-100")?;
                c.write_percent = MEMTOUCH_WRITE.check("-w ", v, n)? as u32;
                write_given = Some(v);
            }
        }
    }
    if c.size_bytes == 0 {
        return Err("-s missing: memtouch needs a size (-s 64M)".to_string());
    }
    if c.hot_bytes == 0 {
        for (opt, v) in [("-r", rate_given), ("-w", write_given)] {
            if let Some(v) = v {
                return Err(format!(
                    "{opt} {} without -H: touches go to the hot set, and with no hot \
                     set memtouch only writes its memory once and exits; give -H",
                    echo(v)
                ));
            }
        }
    }
    if c.hot_bytes > c.size_bytes {
        return Err(format!(
            "-H {} is larger than -s {}: the hot set is part of the memory",
            c.hot_bytes, c.size_bytes
        ));
    }
    if c.hot_bytes > 0 && c.touches_per_s == 0 {
        return Err("-H given without -r: touches per second must be at least 1".to_string());
    }
    Ok(c)
}

pub fn parse_mapwrite(command: &str) -> Result<MapWriteCommand, String> {
    let (opts, positional) = options(command, "mapwrite", "-s")?;
    let size_bytes = match opts.last() {
        Some((o, v)) => parse_size(o, v, &MAPWRITE_SIZE)?,
        None => return Err("missing -s: mapwrite needs the mapping size (-s 4G)".to_string()),
    };
    let [file] = positional.as_slice() else {
        return Err("mapwrite takes exactly one FILE after its options".to_string());
    };
    Ok(MapWriteCommand {
        size_bytes,
        file: file.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memtouch_parses_and_checks() {
        let c = parse_memtouch("memtouch -s 96M -H 16M -r 500 -w 20").unwrap();
        assert_eq!(c.size_bytes, 96 << 20);
        assert_eq!(
            (c.hot_bytes, c.touches_per_s, c.write_percent),
            (16 << 20, 500, 20)
        );
        for (cmd, msg) in [
            ("memtouch -H 1M -r 1", "-s missing"),
            ("memtouch -s 1M -r 5", "-r 5 without -H"),
            ("memtouch -s 1M -w 5", "-w 5 without -H"),
            ("memtouch -s 6000", "a multiple of 4 KiB"),
            ("memtouch -s 1M -H 2M -r 1", "larger than -s"),
            ("memtouch -s 1M -w 101", "-w 101"),
            ("memtouch -s 1X", "-s 1X"),
            ("memtouch -s 1M -q 3", "unsupported option `-q`"),
            ("mapwrite -s 1M", "must start with `memtouch`"),
        ] {
            let e = parse_memtouch(cmd).unwrap_err();
            assert!(e.contains(msg), "{cmd}: {e}");
        }
    }

    #[test]
    fn mapwrite_parses_and_checks() {
        let c = parse_mapwrite("mapwrite -s 4G disk/map").unwrap();
        assert_eq!((c.size_bytes, c.file.as_str()), (4 << 30, "disk/map"));
        assert!(parse_mapwrite("mapwrite disk/map")
            .unwrap_err()
            .contains("missing -s"));
        assert!(parse_mapwrite("mapwrite -s 4G")
            .unwrap_err()
            .contains("one FILE"));
    }

    /// 16 TiB was accepted and wrapped to 0 pages in the 32-bit page count
    /// the run code keeps (`as u32`): mapwrite then wrote nothing.
    #[test]
    fn mapwrite_sizes_fit_the_page_index() {
        let c = parse_mapwrite("mapwrite -s 17179869180K d/m").unwrap();
        assert_eq!(c.size_pages(), u32::MAX);
        let e = parse_mapwrite("mapwrite -s 16384G d/m").unwrap_err();
        assert_eq!(
            e,
            "-s 16384G: the mapping size must be 4 KiB..=17179869180 KiB, a multiple of \
             4 KiB (2^32 - 1 pages: the model's 32-bit page index, and ext4's largest \
             file with 4 KiB blocks)"
        );
        assert!(parse_mapwrite("mapwrite -s 99999999999999999999999G d/m")
            .unwrap_err()
            .contains("mapping size must be"));
    }

    /// -s, -H and -r were unbounded: -r 2^40 wrapped the per-batch count
    /// to 32 bits and overflowed the batch interval.
    #[test]
    fn memtouch_numbers_have_ranges() {
        let e = |s: &str| parse_memtouch(s).unwrap_err();
        assert!(parse_memtouch("memtouch -s 64G -H 64G -r 10000000 -w 100").is_ok());
        assert!(e("memtouch -s 65537M").starts_with("-s 65537M: the memory size must be"));
        assert!(e("memtouch -s 1M -H 1M -r 10000001")
            .starts_with("-r 10000001: touches per second must be 1..=10000000"));
        assert!(e("memtouch -s 1M -H 1M -r 1099511627776").contains("touches per second"));
        assert!(e("memtouch -s 1M -H 1M -r 1 -w 101")
            .starts_with("-w 101: the write share must be 0..=100 %"));
    }
}
