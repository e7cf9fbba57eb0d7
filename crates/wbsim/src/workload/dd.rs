//! Parser for `dd` command lines, following GNU coreutils dd operand syntax.
//!
//! Only the subset the simulator models is accepted: `if=/dev/zero`, `of=`,
//! `bs=`, `count=` and `conv=fsync|fdatasync`.  Words are split like a
//! POSIX shell would (quotes, backslashes and `$(( ))` arithmetic expansion
//! are understood); anything else is rejected with a message saying what is
//! supported. `oflag=direct` (O_DIRECT, writes that bypass the page cache)
//! is refused: the model writes through the page cache only.
//!
//! `conv=fsync` and `conv=fdatasync` both write and wait for the file's
//! dirty pages after the last block (`filemap_write_and_wait`); on a
//! fuse-ntfs file, whose pages are written through to the daemon, the
//! FUSE_FSYNC request makes ntfs-3g sync the whole volume
//! (`ntfs_fuse_fsync` → `ntfs_device_sync`), which the model does as a
//! flush of the block device's page cache. The inode and journal writes
//! that make fsync differ from fdatasync are not modelled.

use serde::Serialize;

use super::limits::{echo, Limit, Unit, MAX_FILE_BYTES, MAX_FILE_SOURCE};
use super::shell::split_words;

/// Linux's `MAX_RW_COUNT` (`INT_MAX & PAGE_MASK`): the most one `write(2)`
/// moves; dd repeats a cut-short write, which the model would not count.
pub const DD_BS: Limit = Limit {
    what: "block size",
    min: 1,
    max: 0x7fff_f000,
    step: 1,
    unit: Unit::Bytes,
    source: "Linux's MAX_RW_COUNT, the most one write(2) moves",
};

/// `count=`: blocks; what bounds it is the file size `bs × count`.
pub const DD_COUNT: Limit = Limit {
    what: "count",
    min: 0,
    max: MAX_FILE_BYTES,
    step: 1,
    unit: Unit::Count("blocks"),
    source: "with bs=1; in all bs × count is at most the largest file",
};

/// `bs × count`: the output file's size.
pub const DD_FILE: Limit = Limit {
    what: "the file size bs × count",
    min: 0,
    max: MAX_FILE_BYTES,
    step: 1,
    unit: Unit::Bytes,
    source: MAX_FILE_SOURCE,
};

/// A parsed `dd` invocation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DdCommand {
    /// The `if=` operand (always `/dev/zero` after a successful parse).
    pub input: String,
    /// The `of=` operand, verbatim.
    pub output: String,
    /// Block size in bytes (`bs=`), always > 0.
    pub bs_bytes: u64,
    /// Number of blocks to copy (`count=`).
    pub count: u64,
    /// `conv=fsync` or `conv=fdatasync` was given.
    pub conv_fsync: bool,
    /// Always false: `oflag=direct` is refused (O_DIRECT is not modelled).
    pub oflag_direct: bool,
}

impl DdCommand {
    /// Total bytes written: `bs_bytes * count` (checked at parse time not to overflow).
    pub fn total_bytes(&self) -> u64 {
        self.bs_bytes.saturating_mul(self.count)
    }
}

const SUPPORTED_OPERANDS: &str = "if, of, bs, count, conv";
const SIZE_SUFFIXES: &str = "c, w, b, kB, K, MB, M, GB, G";
const CONV_VALUES: &str = "fsync, fdatasync";

/// Parse a dd command line the way GNU dd reads its operands.
pub fn parse_dd(command: &str) -> Result<DdCommand, String> {
    let words = split_words(command)?;
    let Some((program, operands)) = words.split_first() else {
        return Err("empty command; expected a dd command line such as \
                    `dd if=/dev/zero of=disk/file bs=1M count=100`"
            .to_string());
    };
    if program != "dd" && !program.ends_with("/dd") {
        return Err(format!(
            "command must start with `dd` (got `{}`); only dd workloads are supported",
            echo(program)
        ));
    }

    let mut input: Option<String> = None;
    let mut output: Option<String> = None;
    let mut bs: Option<u64> = None;
    let mut count: Option<u64> = None;
    let mut conv_fsync = false;

    // As in GNU dd, a later operand overrides an earlier one of the same name.
    for word in operands {
        let Some((name, value)) = word.split_once('=') else {
            return Err(format!(
                "unrecognized operand `{}`; operands look like name=value, \
                 supported operands: {SUPPORTED_OPERANDS}",
                echo(word)
            ));
        };
        match name {
            "if" => input = Some(value.to_string()),
            "of" => {
                if value.is_empty() {
                    return Err(
                        "of= is empty; expected an output file such as of=disk/file".to_string()
                    );
                }
                output = Some(value.to_string());
            }
            "bs" => {
                let n = parse_size(value).map_err(|why| size_error(word, why, "bs=32k"))?;
                bs = Some(DD_BS.check("bs=", value, n)?);
            }
            "count" => {
                let n = parse_size(value).map_err(|why| size_error(word, why, "count=100"))?;
                count = Some(DD_COUNT.check("count=", value, n)?);
            }
            "conv" => {
                for item in value.split(',') {
                    match item {
                        "fsync" | "fdatasync" => conv_fsync = true,
                        _ => {
                            return Err(format!(
                                "{}: unsupported conversion `{}`; supported: {CONV_VALUES}",
                                echo(word),
                                echo(item)
                            ))
                        }
                    }
                }
            }
            "oflag" => {
                return Err(format!(
                    "{}: output flags are not modelled (O_DIRECT and O_SYNC writes \
                     are not); the model writes through the page cache, with \
                     conv=fsync to flush at the end",
                    echo(word)
                ))
            }
            _ => {
                return Err(format!(
                    "unsupported operand `{}`; supported operands: {SUPPORTED_OPERANDS}",
                    echo(word)
                ))
            }
        }
    }

    let input = input.unwrap_or_else(|| "/dev/stdin".to_string());
    if input != "/dev/zero" {
        return Err(format!(
            "only if=/dev/zero is supported (got if={})",
            echo(&input)
        ));
    }
    let output = output.ok_or("missing of=; dd needs an output file such as of=disk/file")?;
    let bs_bytes = bs.ok_or("missing bs=; give a block size such as bs=32k")?;
    let count = count.ok_or("missing count=; give the number of blocks such as count=1000")?;
    let size = bs_bytes.saturating_mul(count);
    DD_FILE.check("bs × count = ", &format!("{bs_bytes} × {count}"), size)?;
    Ok(DdCommand {
        input,
        output,
        bs_bytes,
        count,
        conv_fsync,
        oflag_direct: false,
    })
}

/// Why a size operand could not be read.
enum SizeError {
    Malformed,
    TooLarge,
}

fn size_error(word: &str, why: SizeError, example: &str) -> String {
    match why {
        SizeError::Malformed => format!(
            "{}: malformed size; expected a number with an optional suffix \
             {SIZE_SUFFIXES} (e.g. {example})",
            echo(word)
        ),
        SizeError::TooLarge => format!("{}: number too large (maximum {})", echo(word), u64::MAX),
    }
}

/// Parse a GNU dd size: `N[suffix]`, optionally multiplied with `x`, e.g. `4kx2`.
fn parse_size(text: &str) -> Result<u64, SizeError> {
    let mut total: u64 = 1;
    for factor in text.split('x') {
        let n = parse_one_size(factor)?;
        total = total.checked_mul(n).ok_or(SizeError::TooLarge)?;
    }
    Ok(total)
}

fn parse_one_size(text: &str) -> Result<u64, SizeError> {
    let digits_end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (digits, suffix) = text.split_at(digits_end);
    if digits.is_empty() {
        return Err(SizeError::Malformed);
    }
    let multiplier = suffix_multiplier(suffix).ok_or(SizeError::Malformed)?;
    let n: u64 = digits.parse().map_err(|_| SizeError::TooLarge)?;
    n.checked_mul(multiplier).ok_or(SizeError::TooLarge)
}

/// Multiplier for a GNU size suffix; `B` after a power letter means decimal, `iB` binary.
fn suffix_multiplier(suffix: &str) -> Option<u64> {
    match suffix {
        "" | "c" => return Some(1),
        "w" => return Some(2),
        "b" => return Some(512),
        _ => {}
    }
    let mut chars = suffix.chars();
    let letter = chars.next()?;
    let power: u32 = match letter {
        'k' | 'K' => 1,
        'M' => 2,
        'G' => 3,
        'T' => 4,
        'P' => 5,
        'E' => 6,
        _ => return None,
    };
    let base: u64 = match chars.as_str() {
        "" | "iB" => 1024,
        "B" => 1000,
        _ => return None,
    };
    base.checked_pow(power)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn dd(args: &str) -> Result<DdCommand, String> {
        parse_dd(&format!("dd if=/dev/zero of=disk/f {args}"))
    }

    #[test]
    fn seed_command_with_shell_arithmetic() {
        let cmd = parse_dd("dd if=/dev/zero of=disk/zeroes bs=32k count=$((10 << 15))").unwrap();
        assert_eq!(
            cmd,
            DdCommand {
                input: "/dev/zero".into(),
                output: "disk/zeroes".into(),
                bs_bytes: 32768,
                count: 327680,
                conv_fsync: false,
                oflag_direct: false,
            }
        );
        assert_eq!(cmd.total_bytes(), 10 << 30);
    }

    #[test]
    fn size_suffixes() {
        let bs = |s: &str| dd(&format!("bs={s} count=1")).map(|c| c.bs_bytes);
        assert_eq!(bs("1M"), Ok(1 << 20));
        assert_eq!(bs("4096"), Ok(4096));
        assert_eq!(bs("2b"), Ok(1024));
        assert_eq!(bs("1kB"), Ok(1000));
        assert_eq!(bs("3c"), Ok(3));
        assert_eq!(bs("3w"), Ok(6));
        assert_eq!(bs("1K"), Ok(1024));
        assert_eq!(bs("1KiB"), Ok(1024));
        assert_eq!(bs("1MB"), Ok(1_000_000));
        assert_eq!(bs("1MiB"), Ok(1 << 20));
        assert_eq!(bs("1GB"), Ok(1_000_000_000));
        assert_eq!(bs("1G"), Ok(1 << 30));
        assert_eq!(bs("4kx2"), Ok(8192));
    }

    #[test]
    fn count_forms() {
        let count = |s: &str| dd(&format!("bs=1 count={s}")).map(|c| c.count);
        assert_eq!(count("1000"), Ok(1000));
        assert_eq!(count("2K"), Ok(2048));
        assert_eq!(count("$((3 * 4 + 1))"), Ok(13));
        assert_eq!(count("$(( (1 + 1) << 2 ))"), Ok(8));
        assert_eq!(count("\"$((0x10))\""), Ok(16));
        assert!(count("abc").unwrap_err().contains("count=abc: malformed"));
        assert!(count("$((1 << 64))").unwrap_err().contains("shift"));
        assert!(count("$((1 / 0))")
            .unwrap_err()
            .contains("division by zero"));
        assert!(count("$((9223372036854775807 + 1))")
            .unwrap_err()
            .contains("overflow"));
        assert!(count("$((-1))").unwrap_err().contains("malformed"));
    }

    #[test]
    fn rejects_malformed_bs() {
        assert_eq!(
            dd("bs=32q count=1").unwrap_err(),
            "bs=32q: malformed size; expected a number with an optional suffix \
             c, w, b, kB, K, MB, M, GB, G (e.g. bs=32k)"
        );
        assert!(dd("bs= count=1")
            .unwrap_err()
            .starts_with("bs=: malformed size"));
        assert!(dd("bs=-1 count=1")
            .unwrap_err()
            .starts_with("bs=-1: malformed size"));
        assert_eq!(
            dd("bs=0 count=1").unwrap_err(),
            "bs=0: block size must be 1 byte..=2097148 KiB \
             (Linux's MAX_RW_COUNT, the most one write(2) moves)"
        );
        assert!(dd("bs=99999999999999999999 count=1")
            .unwrap_err()
            .contains("too large"));
        assert!(dd("bs=16E count=1").unwrap_err().contains("too large"));
        assert!(dd("bs=1G count=16G")
            .unwrap_err()
            .contains("the file size bs × count must be"));
    }

    #[test]
    fn rejects_missing_and_unknown_operands() {
        let err = parse_dd("dd if=/dev/zero bs=1M count=1").unwrap_err();
        assert!(err.contains("missing of="), "{err}");
        assert!(dd("count=1").unwrap_err().contains("missing bs="));
        assert!(dd("bs=1").unwrap_err().contains("missing count="));
        let err = dd("bs=1 count=1 status=none").unwrap_err();
        assert!(
            err.contains("status=none") && err.contains(SUPPORTED_OPERANDS),
            "{err}"
        );
        assert!(dd("bs=1 count=1 junk")
            .unwrap_err()
            .contains("unrecognized operand"));
        let err = parse_dd("dd of=x bs=1 count=1").unwrap_err();
        assert!(err.contains("only if=/dev/zero is supported"), "{err}");
        assert!(parse_dd("cp a b")
            .unwrap_err()
            .contains("must start with `dd`"));
        assert!(parse_dd("   ").unwrap_err().contains("empty command"));
        assert!(dd("bs=1 count=1 | cat")
            .unwrap_err()
            .contains("shell operator"));
        assert!(dd("bs=1 count=$HOME").unwrap_err().contains("$(( ))"));
        assert!(dd("bs=1 count='1").unwrap_err().contains("unterminated"));
    }

    #[test]
    fn conv_and_oflag() {
        let cmd = parse_dd("/bin/dd if=/dev/zero of=d/f bs=1 count=1 conv=fdatasync").unwrap();
        assert!(cmd.conv_fsync && !cmd.oflag_direct);
        assert!(dd("bs=1 count=1 conv=fsync").unwrap().conv_fsync);
        let err = dd("bs=1 count=1 conv=notrunc").unwrap_err();
        assert!(
            err.contains("notrunc") && err.contains(CONV_VALUES),
            "{err}"
        );
        let err = dd("bs=1 count=1 oflag=sync").unwrap_err();
        assert!(
            err.contains("oflag=sync: output flags are not modelled"),
            "{err}"
        );
    }

    /// oflag=direct was accepted and then ignored by the run code (the
    /// writes went through the page cache): it is refused now.
    #[test]
    fn oflag_direct_is_refused_as_not_modelled() {
        let err = dd("bs=1M count=1 oflag=direct").unwrap_err();
        assert!(
            err.starts_with("oflag=direct: output flags are not modelled")
                && err.contains("through the page cache"),
            "{err}"
        );
    }

    #[test]
    fn sizes_have_stated_ranges() {
        assert!(dd("bs=2147479552 count=1").is_ok());
        let err = dd("bs=2147479553 count=1").unwrap_err();
        assert!(
            err.starts_with("bs=2147479553: block size must be"),
            "{err}"
        );
        assert!(dd("bs=1 count=0").is_ok());
        assert!(dd("bs=4096 count=4294967295").is_ok());
        let err = dd("bs=4096 count=4294967296").unwrap_err();
        assert!(err.contains("17179869180 KiB"), "{err}");
        let long = "9".repeat(300);
        let err = dd(&format!("bs={long} count=1")).unwrap_err();
        assert!(err.len() < 200, "{err}");
    }

    #[test]
    fn later_operand_wins() {
        assert_eq!(dd("bs=1 bs=2 count=1").unwrap().bs_bytes, 2);
    }

    proptest! {
        #[test]
        fn parse_dd_never_panics(s in "\\PC*") {
            let _ = parse_dd(&s);
        }

        #[test]
        fn parse_dd_never_panics_on_dd_like_input(
            s in "dd( (if|of|bs|count|conv|oflag)=[-a-zA-Z0-9$()<>+*/ x\"']{0,20}){0,6}"
        ) {
            let _ = parse_dd(&s);
        }
    }
}
