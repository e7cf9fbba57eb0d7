//! The allowed range of every number a workload command line takes. The
//! parsers check values with [`Limit::check`] and the option reference
//! (`reference::reference_markdown`) prints the same constants, so the
//! text and the checks cannot drift apart.

/// What a limit counts, for messages and the reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// A plain count (threads, files, loops, ...).
    Count(&'static str),
    /// Bytes, printed with the largest binary unit that divides exactly.
    Bytes,
    /// A percentage.
    Percent,
}

/// An inclusive range `min..=max`, in steps of `step` from 0 (sizes that
/// must be whole pages), with what the number is and where the bound
/// comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    /// What the number is, e.g. "threads".
    pub what: &'static str,
    pub min: u64,
    pub max: u64,
    /// Granularity (1 = any integer); `min` and `max` are multiples.
    pub step: u64,
    pub unit: Unit,
    /// Where the bound comes from, e.g. "fs_mark's MAX_THREADS".
    pub source: &'static str,
}

/// The largest file the model can hold: page indices are 32-bit, so
/// 2^32 − 1 pages (16 TiB − 4 KiB), which is also ext4's largest file with
/// 4 KiB blocks (2^32 − 1 blocks).
pub const MAX_FILE_BYTES: u64 = (u32::MAX as u64) * 4096;

/// Why a file is at most [`MAX_FILE_BYTES`].
pub const MAX_FILE_SOURCE: &str = "2^32 - 1 pages: the model's 32-bit page index, \
     and ext4's largest file with 4 KiB blocks";

impl Limit {
    /// The range as the reference and the messages print it.
    pub fn range_text(&self) -> String {
        let (lo, hi) = (self.show(self.min), self.show(self.max));
        let step = if self.step > 1 {
            format!(", a multiple of {}", self.show(self.step))
        } else {
            String::new()
        };
        match self.unit {
            Unit::Count(unit) if !unit.is_empty() => format!("{lo}..={hi} {unit}{step}"),
            Unit::Percent => format!("{lo}..={hi} %"),
            _ => format!("{lo}..={hi}{step}"),
        }
    }

    fn show(&self, n: u64) -> String {
        match self.unit {
            Unit::Bytes => format_bytes(n),
            _ => n.to_string(),
        }
    }

    /// Whether `n` is allowed.
    pub fn allows(&self, n: u64) -> bool {
        (self.min..=self.max).contains(&n) && n.is_multiple_of(self.step.max(1))
    }

    /// `n` (typed as `text` after option `label`, e.g. `-t ` or `bs=`)
    /// if allowed, else a message naming the option, the value and the
    /// range: "-t 100000: threads must be 1..=64 (fs_mark's MAX_THREADS)".
    pub fn check(&self, label: &str, text: &str, n: u64) -> Result<u64, String> {
        if self.allows(n) {
            return Ok(n);
        }
        Err(format!(
            "{label}{}: {} must be {} ({})",
            echo(text),
            self.what,
            self.range_text(),
            self.source
        ))
    }
}

/// `n` bytes with the largest binary unit that divides it exactly.
pub fn format_bytes(n: u64) -> String {
    const UNITS: [(&str, u32); 4] = [("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)];
    for (name, shift) in UNITS {
        if n != 0 && n.is_multiple_of(1 << shift) {
            return format!("{} {name}", n >> shift);
        }
    }
    if n == 1 {
        return "1 byte".to_string();
    }
    format!("{n} bytes")
}

/// A value as the user typed it, for a message: at most 80 characters.
pub fn echo(text: &str) -> String {
    match text.char_indices().nth(80) {
        Some((i, _)) => format!("{}...", &text[..i]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_and_messages() {
        let l = crate::workload::fsmark::FSMARK_THREADS;
        assert_eq!(
            l.check("-t ", "100000", 100_000).unwrap_err(),
            "-t 100000: threads must be 1..=64 (fs_mark's MAX_THREADS)"
        );
        assert_eq!(l.check("-t ", "64", 64), Ok(64));
        assert_eq!(format_bytes(MAX_FILE_BYTES), "17179869180 KiB");
        assert_eq!(format_bytes(16 << 20), "16 MiB");
        assert_eq!(format_bytes(3), "3 bytes");
        let long = "9".repeat(200);
        assert_eq!(echo(&long).chars().count(), 83);
        assert_eq!(echo("é".repeat(81).as_str()).chars().count(), 83);
    }
}
