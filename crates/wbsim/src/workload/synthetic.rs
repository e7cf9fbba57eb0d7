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
//! Sizes take the binary suffixes K, M, G (`64M` = 64 MiB).

use serde::Serialize;

use super::shell::split_words;

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

/// `12`, `64K`, `512M`, `4G` → bytes.
fn parse_size(opt: &str, text: &str) -> Result<u64, String> {
    let (digits, mult) = match text.chars().last() {
        Some('K') | Some('k') => (&text[..text.len() - 1], 1u64 << 10),
        Some('M') => (&text[..text.len() - 1], 1 << 20),
        Some('G') => (&text[..text.len() - 1], 1 << 30),
        _ => (text, 1),
    };
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("{opt} {text}: expected a size such as 4096, 64K, 512M or 4G"))?;
    n.checked_mul(mult)
        .ok_or_else(|| format!("{opt} {text}: size too large"))
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
                other.map_or("", |s| s.as_str())
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
                    "unsupported option `-{o}` for {program}; supported: {allowed}"
                ));
            }
            let Some(v) = words.get(i) else {
                return Err(format!("option `{w}` needs a value"));
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
            "unexpected argument `{p}`; memtouch takes options only"
        ));
    }
    let mut c = MemTouchCommand {
        size_bytes: 0,
        hot_bytes: 0,
        touches_per_s: 0,
        write_percent: 0,
    };
    for (o, v) in &opts {
        match o.as_str() {
            "-s" => c.size_bytes = parse_size(o, v)?,
            "-H" => c.hot_bytes = parse_size(o, v)?,
            "-r" => {
                c.touches_per_s = v
                    .parse()
                    .map_err(|_| format!("-r {v}: expected touches per second (an integer)"))?
            }
            _ => {
                c.write_percent = v
                    .parse()
                    .ok()
                    .filter(|p| *p <= 100)
                    .ok_or_else(|| format!("-w {v}: expected a percentage 0-100"))?
            }
        }
    }
    if c.size_bytes < 4096 {
        return Err("-s missing or below one page: memtouch needs a size (-s 64M)".to_string());
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
    let size_bytes = match opts.first() {
        Some((o, v)) => parse_size(o, v)?,
        None => return Err("missing -s: mapwrite needs the mapping size (-s 4G)".to_string()),
    };
    if size_bytes < 4096 {
        return Err("-s: the mapping must be at least one page".to_string());
    }
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
}
