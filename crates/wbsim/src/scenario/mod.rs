//! Scenario files: a TOML description of the machine, devices, filesystems,
//! sysctls and workload to simulate.
//!
//! Parsing keeps the byte span of every key and value so that each problem is
//! reported as `FILE:LINE: key `dotted.path[i]`: what is wrong; what is allowed`.

mod error;
mod validate;

use std::path::Path;

use serde::Serialize;

pub use error::ScenarioError;

/// A fully validated scenario.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scenario {
    /// File stem of the scenario file.
    pub name: String,
    /// Kernel variant to model, e.g. `3.0-vanilla`.
    pub kernel: String,
    pub machine: MachineConfig,
    pub devices: Vec<DeviceConfig>,
    pub filesystems: Vec<FsConfig>,
    pub sysctl: SysctlConfig,
    pub tasks: Vec<TaskConfig>,
    pub run: RunConfig,
}

/// CPUs, memory zones and timer frequency.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MachineConfig {
    pub cpus: u32,
    /// Zones in ascending order (DMA < DMA32 < Normal), no duplicates.
    pub zones: Vec<ZoneConfig>,
    pub min_free_kbytes: Option<u64>,
    pub hz: u32,
}

/// A memory zone type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum ZoneKind {
    #[serde(rename = "DMA")]
    Dma,
    #[serde(rename = "DMA32")]
    Dma32,
    Normal,
}

impl ZoneKind {
    /// The name used in scenario files and by the kernel.
    pub fn as_str(self) -> &'static str {
        match self {
            ZoneKind::Dma => "DMA",
            ZoneKind::Dma32 => "DMA32",
            ZoneKind::Normal => "Normal",
        }
    }
}

/// One memory zone.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ZoneConfig {
    pub kind: ZoneKind,
    pub size_mib: u64,
}

/// A block-device performance model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum DeviceModel {
    #[serde(rename = "usb-stick")]
    UsbStick,
}

/// A block device.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeviceConfig {
    pub name: String,
    pub model: DeviceModel,
    pub capacity_gib: u64,
    pub seq_write_mib_per_s: f64,
    pub max_request_kib: u32,
    pub command_overhead_us: f64,
    pub small_write_penalty_us: f64,
    pub nr_requests: u32,
}

/// A filesystem type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum FsType {
    #[serde(rename = "xfs")]
    Xfs,
    #[serde(rename = "ext4")]
    Ext4,
    #[serde(rename = "btrfs")]
    Btrfs,
    #[serde(rename = "fuse-ntfs")]
    FuseNtfs,
}

/// A filesystem on a device, mounted at a relative path.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FsConfig {
    pub fs_type: FsType,
    /// Name of a [`DeviceConfig`].
    pub device: String,
    /// Relative mount path without leading or trailing `/`.
    pub mount: String,
}

/// The `vm.*` writeback sysctls.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SysctlConfig {
    pub dirty_ratio: u32,
    pub dirty_background_ratio: u32,
    pub dirty_bytes: u64,
    pub dirty_background_bytes: u64,
    pub dirty_expire_centisecs: u32,
    pub dirty_writeback_centisecs: u32,
    pub swappiness: u32,
    pub laptop_mode: bool,
}

impl Default for SysctlConfig {
    fn default() -> Self {
        SysctlConfig {
            dirty_ratio: 20,
            dirty_background_ratio: 10,
            dirty_bytes: 0,
            dirty_background_bytes: 0,
            dirty_expire_centisecs: 3000,
            dirty_writeback_centisecs: 500,
            swappiness: 60,
            laptop_mode: false,
        }
    }
}

/// A workload task.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskConfig {
    pub name: String,
    /// The command line as written in the scenario.
    pub command: String,
    pub dd: crate::workload::dd::DdCommand,
}

/// How to run the simulation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunConfig {
    pub seed: u64,
    pub runs: u32,
    /// Simulated seconds.
    pub time_limit_s: u64,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            seed: 1,
            runs: 1,
            time_limit_s: 7200,
        }
    }
}

/// Read and validate a scenario file.
pub fn load_scenario(path: &Path) -> Result<Scenario, ScenarioError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| {
        ScenarioError::whole_file(&file, format!("cannot read file: {}", io_reason(&e)))
    })?;
    parse_scenario(&text, &file)
}

/// Parse and validate scenario text; `file_name` is used in errors and its
/// file stem becomes the scenario name.
pub fn parse_scenario(text: &str, file_name: &str) -> Result<Scenario, ScenarioError> {
    let root = tree::parse(text, file_name)?;
    let name = Path::new(file_name)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| file_name.to_string());
    validate::scenario(&root, text, file_name, name)
}

/// The OS error text without the trailing " (os error N)".
fn io_reason(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.find(" (os error ") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

/// A TOML document as a tree that remembers byte spans.
///
/// `toml::Spanned` cannot be used directly for every key: keys introduced by
/// `[[a.b]]` headers and dotted keys carry no span, and `Spanned` then fails.
/// These types ask for spans the same way `Spanned` does and fall back to
/// "no span" instead of failing; callers use the nearest enclosing span.
mod tree {
    use std::fmt;
    use std::ops::Range;

    use serde::de::{
        Deserialize, Deserializer, Error as _, IgnoredAny, MapAccess, SeqAccess, Visitor,
    };

    use super::ScenarioError;

    // The protocol `toml::Spanned` uses to ask the deserializer for spans.
    const SPANNED_NAME: &str = "$__serde_spanned_private_Spanned";
    const SPANNED_START: &str = "$__serde_spanned_private_start";
    const SPANNED_END: &str = "$__serde_spanned_private_end";
    const SPANNED_VALUE: &str = "$__serde_spanned_private_value";
    const SPANNED_FIELDS: &[&str] = &[SPANNED_START, SPANNED_END, SPANNED_VALUE];
    // How toml hands datetimes to a visitor.
    const DATETIME_FIELD: &str = "$__toml_private_datetime";

    /// A value with its span, if the deserializer provided one.
    #[derive(Debug, Clone, PartialEq)]
    pub(super) struct Node {
        pub span: Option<Range<usize>>,
        pub value: Value,
    }

    #[derive(Debug, Clone, PartialEq)]
    pub(super) enum Value {
        Int(i64),
        Float(f64),
        Bool(bool),
        Str(String),
        Datetime,
        Array(Vec<Node>),
        Table(Vec<Entry>),
    }

    /// A `key = value` pair of a table, in document order.
    #[derive(Debug, Clone, PartialEq)]
    pub(super) struct Entry {
        pub key: String,
        pub key_span: Option<Range<usize>>,
        pub value: Node,
    }

    impl Value {
        /// "an integer", "a table", ... for error messages.
        pub fn describe(&self) -> String {
            match self {
                Value::Int(n) => format!("an integer ({n})"),
                Value::Float(x) => format!("a float ({x})"),
                Value::Bool(b) => format!("a boolean ({b})"),
                Value::Str(s) => format!("a string ({s:?})"),
                Value::Datetime => "a date/time".to_string(),
                Value::Array(_) => "an array".to_string(),
                Value::Table(_) => "a table".to_string(),
            }
        }
    }

    /// Parse TOML text into a spanned tree; syntax errors point at their line.
    pub(super) fn parse(text: &str, file: &str) -> Result<Node, ScenarioError> {
        let root: Result<Plain, toml::de::Error> = toml::from_str(text);
        match root {
            Ok(Plain(value)) => Ok(Node { span: None, value }),
            Err(e) => Err(ScenarioError {
                file: file.to_string(),
                line: e.span().map(|s| line_of(text, s.start)),
                key: None,
                message: format!("invalid TOML: {}", one_line(e.message())),
            }),
        }
    }

    /// Join a multi-line parser message into one line.
    fn one_line(message: &str) -> String {
        let lines: Vec<&str> = message
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        lines.join("; ")
    }

    /// 1-based line containing byte `offset` (clamped to the text).
    pub(super) fn line_of(text: &str, offset: usize) -> usize {
        let end = offset.min(text.len());
        1 + text.as_bytes()[..end]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
    }

    /// A value deserialized without asking for its span (also the root table).
    struct Plain(Value);

    impl<'de> Deserialize<'de> for Plain {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            d.deserialize_any(NodeVisitor).map(|n| Plain(n.value))
        }
    }

    impl<'de> Deserialize<'de> for Node {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            d.deserialize_struct(SPANNED_NAME, SPANNED_FIELDS, NodeVisitor)
        }
    }

    struct NodeVisitor;

    fn plain(value: Value) -> Node {
        Node { span: None, value }
    }

    impl<'de> Visitor<'de> for NodeVisitor {
        type Value = Node;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a TOML value")
        }
        fn visit_bool<E>(self, v: bool) -> Result<Node, E> {
            Ok(plain(Value::Bool(v)))
        }
        fn visit_i64<E>(self, v: i64) -> Result<Node, E> {
            Ok(plain(Value::Int(v)))
        }
        fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Node, E> {
            i64::try_from(v)
                .map(|v| plain(Value::Int(v)))
                .map_err(|_| E::custom("integer too large"))
        }
        fn visit_f64<E>(self, v: f64) -> Result<Node, E> {
            Ok(plain(Value::Float(v)))
        }
        fn visit_str<E>(self, v: &str) -> Result<Node, E> {
            Ok(plain(Value::Str(v.to_string())))
        }
        fn visit_string<E>(self, v: String) -> Result<Node, E> {
            Ok(plain(Value::Str(v)))
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
            let mut items = Vec::new();
            while let Some(item) = seq.next_element::<Node>()? {
                items.push(item);
            }
            Ok(plain(Value::Array(items)))
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
            let mut entries = Vec::new();
            while let Some(key) = map.next_key::<Key>()? {
                if entries.is_empty() && key.name == SPANNED_START {
                    return spanned_value(map);
                }
                if entries.is_empty() && key.name == DATETIME_FIELD {
                    map.next_value::<IgnoredAny>()?;
                    return Ok(plain(Value::Datetime));
                }
                let value = map.next_value::<Node>()?;
                entries.push(Entry {
                    key: key.name,
                    key_span: key.span.clone(),
                    value: Node {
                        span: value.span.or(key.span),
                        value: value.value,
                    },
                });
            }
            Ok(plain(Value::Table(entries)))
        }
    }

    /// Read the rest of the spanned protocol map: start value, end, value.
    fn spanned_value<'de, A: MapAccess<'de>>(mut map: A) -> Result<Node, A::Error> {
        let start: usize = map.next_value()?;
        expect_key(&mut map, SPANNED_END)?;
        let end: usize = map.next_value()?;
        expect_key(&mut map, SPANNED_VALUE)?;
        let Plain(value) = map.next_value()?;
        Ok(Node {
            span: Some(start..end),
            value,
        })
    }

    fn expect_key<'de, A: MapAccess<'de>>(map: &mut A, wanted: &str) -> Result<(), A::Error> {
        match map.next_key::<Key>()? {
            Some(k) if k.name == wanted => Ok(()),
            _ => Err(A::Error::custom("malformed spanned value")),
        }
    }

    /// A table key with its span, if the deserializer provided one.
    struct Key {
        name: String,
        span: Option<Range<usize>>,
    }

    impl<'de> Deserialize<'de> for Key {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            d.deserialize_struct(SPANNED_NAME, SPANNED_FIELDS, KeyVisitor)
        }
    }

    struct KeyVisitor;

    impl<'de> Visitor<'de> for KeyVisitor {
        type Value = Key;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a table key")
        }
        fn visit_str<E>(self, v: &str) -> Result<Key, E> {
            Ok(Key {
                name: v.to_string(),
                span: None,
            })
        }
        fn visit_string<E>(self, v: String) -> Result<Key, E> {
            Ok(Key {
                name: v,
                span: None,
            })
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Key, A::Error> {
            expect_key(&mut map, SPANNED_START)?;
            let start: usize = map.next_value()?;
            expect_key(&mut map, SPANNED_END)?;
            let end: usize = map.next_value()?;
            expect_key(&mut map, SPANNED_VALUE)?;
            let name: String = map.next_value()?;
            Ok(Key {
                name,
                span: Some(start..end),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::dd::DdCommand;
    use proptest::prelude::*;

    /// The zone-dirty-v2 example: a 3.0 kernel box writing 10 GiB of zeroes to a USB stick.
    const ZONE_DIRTY_V2: &str = r#"kernel = "3.0-vanilla"

[machine]
cpus = 4
hz = 1000
min_free_kbytes = 11584
total_mib = 3765

[[machine.zone]]
name = "DMA"
size_mib = 15

[[machine.zone]]
name = "DMA32"
size_mib = 3246

[[machine.zone]]
name = "Normal"
size_mib = 504

[[device]]
name = "sdb"
model = "usb-stick"
capacity_gib = 16
seq_write_mib_per_s = 19.53
max_request_kib = 120
command_overhead_us = 250.0
small_write_penalty_us = 3000.0
nr_requests = 128

[[fs]]
type = "xfs"
device = "sdb"
mount = "disk"

[sysctl]
dirty_ratio = 20
dirty_background_ratio = 10

[[task]]
name = "dd"
command = "dd if=/dev/zero of=disk/zeroes bs=32k count=$((10 << 15))"

[run]
seed = 1
runs = 1
time_limit_s = 7200
"#;

    /// Parse `ZONE_DIRTY_V2` with `from` replaced by `to` (which must occur once).
    fn parse_edited(from: &str, to: &str) -> Result<Scenario, ScenarioError> {
        assert_eq!(ZONE_DIRTY_V2.matches(from).count(), 1, "{from}");
        parse_scenario(&ZONE_DIRTY_V2.replace(from, to), "scenarios/edited.toml")
    }

    /// Check error cases, one per line: `from | to | line | key | message part`.
    /// Each case replaces `from` (which must occur once) with `to` (`\n` allowed)
    /// and expects an error at that line and key whose message contains the part.
    fn check_cases(cases: &str) {
        for case in cases.lines().filter(|l| !l.trim().is_empty()) {
            let cols: Vec<&str> = case.split(" | ").map(str::trim).collect();
            let [from, to, line, key, words] = cols[..] else {
                panic!("bad case {case:?}");
            };
            let e = parse_edited(from, &to.replace("\\n", "\n")).unwrap_err();
            assert_eq!(e.file, "scenarios/edited.toml");
            let line: usize = line.parse().unwrap();
            assert_eq!((e.line, e.key.as_deref()), (Some(line), Some(key)), "{e}");
            assert!(e.message.contains(words), "{words:?} not in: {e}");
        }
    }

    #[test]
    fn zone_dirty_v2_parses_exactly() {
        let s = parse_scenario(ZONE_DIRTY_V2, "examples/zone-dirty-v2.toml").unwrap();
        let expected = Scenario {
            name: "zone-dirty-v2".into(),
            kernel: "3.0-vanilla".into(),
            machine: MachineConfig {
                cpus: 4,
                zones: vec![
                    ZoneConfig {
                        kind: ZoneKind::Dma,
                        size_mib: 15,
                    },
                    ZoneConfig {
                        kind: ZoneKind::Dma32,
                        size_mib: 3246,
                    },
                    ZoneConfig {
                        kind: ZoneKind::Normal,
                        size_mib: 504,
                    },
                ],
                min_free_kbytes: Some(11584),
                hz: 1000,
            },
            devices: vec![DeviceConfig {
                name: "sdb".into(),
                model: DeviceModel::UsbStick,
                capacity_gib: 16,
                seq_write_mib_per_s: 19.53,
                max_request_kib: 120,
                command_overhead_us: 250.0,
                small_write_penalty_us: 3000.0,
                nr_requests: 128,
            }],
            filesystems: vec![FsConfig {
                fs_type: FsType::Xfs,
                device: "sdb".into(),
                mount: "disk".into(),
            }],
            sysctl: SysctlConfig::default(),
            tasks: vec![TaskConfig {
                name: "dd".into(),
                command: "dd if=/dev/zero of=disk/zeroes bs=32k count=$((10 << 15))".into(),
                dd: DdCommand {
                    input: "/dev/zero".into(),
                    output: "disk/zeroes".into(),
                    bs_bytes: 32768,
                    count: 327680,
                    conv_fsync: false,
                    oflag_direct: false,
                },
            }],
            run: RunConfig::default(),
        };
        assert_eq!(s, expected);
        assert_eq!(s.tasks[0].dd.total_bytes(), 10 << 30);
    }

    #[test]
    fn defaults_fill_optional_keys() {
        let text = "kernel = \"k\"\n[machine]\n[[machine.zone]]\nname = \"Normal\"\nsize_mib = 1\n\
                    [[device]]\nname = \"d\"\nmodel = \"usb-stick\"\ncapacity_gib = 1\n\
                    seq_write_mib_per_s = 1\nmax_request_kib = 4\n\
                    [[fs]]\ntype = \"ext4\"\ndevice = \"d\"\nmount = \"m\"\n\
                    [[task]]\ncommand = \"dd if=/dev/zero of=m/f bs=1 count=1\"\n";
        let s = parse_scenario(text, "min").unwrap();
        assert_eq!(
            (s.name.as_str(), s.machine.cpus, s.machine.hz),
            ("min", 2, 1000)
        );
        assert_eq!(s.machine.min_free_kbytes, None);
        assert_eq!(s.devices[0].nr_requests, 128);
        assert_eq!(s.devices[0].command_overhead_us, 0.0);
        assert_eq!(s.sysctl, SysctlConfig::default());
        assert_eq!(s.tasks[0].name, "task0");
        assert_eq!(
            s.run,
            RunConfig {
                seed: 1,
                runs: 1,
                time_limit_s: 7200
            }
        );
    }

    #[test]
    fn unknown_keys_name_line_and_key() {
        check_cases(
            r#"
kernel = | x = 1\nkernel = | 1 | x | unknown key `x`; allowed keys here: device, fs, kernel, machine, run, sysctl, task
cpus = 4 | cpus = 4\nfoo = 1 | 5 | machine.foo | unknown key `foo`; allowed keys here: cpus, hz, min_free_kbytes, total_mib, zone
size_mib = 3246 | size_mib = 3246\nsize = 3 | 16 | machine.zone[1].size | unknown key `size`; allowed keys here: name, size_mib
nr_requests = 128 | nr_requests = 128\nqueue = 4 | 30 | device[0].queue | unknown key `queue`; allowed keys here: capacity_gib, command_overhead_us,
dirty_ratio = 20 | dirty_ratio = 20\ndirty = 1 | 38 | sysctl.dirty | allowed keys here: dirty_background_bytes,
"#,
        );
    }

    #[test]
    fn bad_numbers_name_line_and_key() {
        check_cases(
            r#"
size_mib = 3246 | size_mib = -5 | 15 | machine.zone[1].size_mib | must be greater than 0 (got -5)
size_mib = 504 | size_mib = 0 | 19 | machine.zone[2].size_mib | must be greater than 0 (got 0)
capacity_gib = 16 | capacity_gib = -1 | 24 | device[0].capacity_gib | must be greater than 0 (got -1)
19.53 | -1.5 | 25 | device[0].seq_write_mib_per_s | must be a finite number greater than 0 (got -1.5)
19.53 | nan | 25 | device[0].seq_write_mib_per_s | must be a finite number greater than 0 (got NaN)
= 120 | = 122 | 26 | device[0].max_request_kib | must be a multiple of 4 (one 4 KiB page) (got 122)
= 250.0 | = -1 | 27 | device[0].command_overhead_us | must be a finite number >= 0 (got -1)
cpus = 4 | cpus = "4" | 4 | machine.cpus | expected an integer, found a string ("4")
cpus = 4 | cpus = 0 | 4 | machine.cpus | must be between 1 and 256 (got 0)
hz = 1000 | hz = 200 | 5 | machine.hz | must be one of 100, 250, 300, 1000 (got 200)
= 11584 | = 64 | 6 | machine.min_free_kbytes | must be between 128 and 65536 (got 64)
dirty_ratio = 20 | dirty_ratio = 101 | 37 | sysctl.dirty_ratio | must be between 0 and 100 (got 101)
dirty_ratio = 20 | dirty_ratio = 0 | 37 | sysctl.dirty_ratio | leaves no dirty limit
dirty_ratio = 20 | dirty_bytes = 100 | 37 | sysctl.dirty_bytes | must be 0 (use dirty_ratio) or at least 8192
runs = 1 | runs = 0 | 46 | run.runs | must be between 1 and 1000 (got 0)
seed = 1 | seed = -1 | 45 | run.seed | must be at least 0 (got -1)
"#,
        );
    }

    #[test]
    fn zone_larger_than_total_points_at_zone() {
        check_cases(
            r#"
size_mib = 3246 | size_mib = 4000 | 15 | machine.zone[1].size_mib | zone DMA32 is 4000 MiB, larger than total_mib = 3765
total_mib = 3765 | total_mib = 3766 | 7 | machine.total_mib | zone sizes sum to 3765 MiB (DMA 15 + DMA32 3246 + Normal 504) but total_mib = 3766
"#,
        );
    }

    #[test]
    fn structural_errors() {
        check_cases(
            r#"
name = "Normal" | name = "DMA32" | 18 | machine.zone[2].name | duplicate zone `DMA32`; zones must be listed in ascending order
name = "Normal" | name = "HighMem" | 18 | machine.zone[2].name | unknown zone `HighMem`; allowed: DMA, DMA32, Normal
device = "sdb" | device = "sdc" | 33 | fs[0].device | no [[device]] named `sdc`; defined devices: sdb
mount = "disk" | mount = "/disk" | 34 | fs[0].mount | must be a relative path without leading or trailing '/'
model = "usb-stick" | model = "nvme" | 23 | device[0].model | unknown device model `nvme`; allowed: usb-stick
[[fs]] | [fs] | 31 | fs | expected an array of tables written as [[fs]], found a table
nr_requests = 128 | nr_requests = 128\n[[device]]\nname = "sdb"\nmodel = "usb-stick"\ncapacity_gib = 1\nseq_write_mib_per_s = 1\nmax_request_kib = 4 | 31 | device[1].name | duplicate device name `sdb` (also used by device[0]); device names must be unique
capacity_gib = 16 | # none | 21 | device[0].capacity_gib | missing required key `capacity_gib`
"#,
        );
        let e = parse_edited("kernel = \"3.0-vanilla\"", "").unwrap_err();
        assert_eq!((e.line, e.key.as_deref()), (None, Some("kernel")), "{e}");
        assert!(e.message.contains("missing required key `kernel`"), "{e}");
        let e = parse_edited("[machine]", "[machine\n").unwrap_err();
        assert_eq!((e.line, e.key.as_deref()), (Some(3), None), "{e}");
        assert!(e.message.starts_with("invalid TOML"), "{e}");
    }

    #[test]
    fn bad_dd_command_reported_at_command_line() {
        check_cases(
            r#"
bs=32k | bs=32q | 42 | task[0].command | bs=32q: malformed size; expected a number with an optional suffix c, w, b, kB, K, MB, M, GB, G (e.g. bs=32k)
of=disk/zeroes | of=usb/zeroes | 42 | task[0].command | of=usb/zeroes is not on any filesystem; it must be a file under one of the mounts: disk/
"#,
        );
        let e = parse_edited("bs=32k", "bs=32q").unwrap_err().to_string();
        assert!(
            e.starts_with("scenarios/edited.toml:42: key `task[0].command`: bs=32q"),
            "{e}"
        );
    }

    #[test]
    fn missing_file_mentions_path() {
        let path = Path::new("/nonexistent/wbsim/zone-dirty-v2.toml");
        let e = load_scenario(path).unwrap_err();
        assert_eq!((e.line, e.key.as_deref()), (None, None));
        assert_eq!(e.file, "/nonexistent/wbsim/zone-dirty-v2.toml");
        assert!(e.message.starts_with("cannot read file: "), "{e}");
        assert!(
            e.to_string()
                .contains("/nonexistent/wbsim/zone-dirty-v2.toml"),
            "{e}"
        );
    }

    #[test]
    fn load_reads_a_real_file() {
        let path = std::env::temp_dir().join(format!("wbsim-scenario-{}.toml", std::process::id()));
        std::fs::write(&path, ZONE_DIRTY_V2).unwrap();
        let loaded = load_scenario(&path);
        let _ = std::fs::remove_file(&path);
        assert_eq!(loaded.unwrap().tasks[0].dd.count, 327680);
    }

    proptest! {
        #[test]
        fn parse_scenario_never_panics(text in "\\PC*") {
            let _ = parse_scenario(&text, "fuzz.toml");
        }

        #[test]
        fn parse_scenario_never_panics_on_edited_example(
            at in 0usize..2000, junk in "[-=\\[\\]a-z0-9 \"\\n.]{0,12}"
        ) {
            let mut cut = at.min(ZONE_DIRTY_V2.len());
            while !ZONE_DIRTY_V2.is_char_boundary(cut) {
                cut -= 1;
            }
            let text = format!("{}{junk}{}", &ZONE_DIRTY_V2[..cut], &ZONE_DIRTY_V2[cut..]);
            let _ = parse_scenario(&text, "fuzz.toml");
        }
    }
}
