//! The declarative schema of scenario files: every section and key with its
//! type, unit, default, allowed range, whether it is required, a doc string
//! and an example.
//!
//! Validation reads key lists, types, ranges and defaults from here (see
//! `validate/table.rs`), and [`super::reference_markdown`] prints the same
//! table, so the reference cannot drift from what is enforced. Checks that
//! involve several keys (zone order, device names, raid members, ...) stay
//! in code.

mod device_keys;
mod sections;

pub use sections::SECTIONS;

/// Most page frames a machine may have: 16 Mi. Frames are numbered by a
/// `u32` [`crate::mm::page::Pfn`], page-cache slots keep a frame number
/// below 2^24 apart from a shadow entry, and the simulator keeps state for
/// every frame, so this bound keeps a run within a few hundred MiB of host
/// memory. That is 64 GiB of 4 KiB pages; a coarser `unit_kib` allows
/// more memory in as many frames.
pub const MAX_FRAMES: u64 = crate::mm::page::MAX_FRAMES as u64;

/// Largest machine memory at page granularity, in MiB (64 GiB).
pub const MAX_MEMORY_MIB: i64 = 65_536;

/// Largest machine memory at the coarsest unit
/// ([`crate::mm::unit::MAX_UNIT_KIB`]), in MiB (16 TiB): the bound of
/// every memory size key; [`MAX_FRAMES`] decides for the scenario's unit.
pub const MAX_COARSE_MEMORY_MIB: i64 = 16 << 20;

/// Longest simulated time, in seconds (about 115 days); the limit in
/// nanoseconds then fits a `u64` many times over.
pub const MAX_TIME_LIMIT_S: i64 = 10_000_000;

/// What a value must be.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Type {
    /// An integer in `min..=max`, with an extra rule.
    Int {
        min: i64,
        max: i64,
        rule: IntRule,
    },
    /// One of a few integers.
    IntOf(&'static [i64]),
    /// A finite number (integers accepted) above `min` (or equal to it when
    /// `min_inclusive`) and at most `max`.
    Float {
        min: f64,
        min_inclusive: bool,
        max: f64,
    },
    Bool,
    /// A non-empty string.
    Str,
    /// One of these strings.
    Enum(&'static [&'static str]),
    /// The name of a built-in kernel preset ([`crate::kernel::preset_names`]).
    KernelPreset,
    /// An array of `min..=max` non-empty strings (names of other items).
    Names {
        min: usize,
        max: usize,
    },
}

/// An extra rule for integers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntRule {
    None,
    MultipleOf(i64),
    PowerOfTwo,
}

/// The value a key takes when it is not given.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Default {
    /// The key must be given.
    Required,
    /// No single value; the text says what happens.
    Absent(&'static str),
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(&'static str),
}

/// One key of a section.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Key {
    pub name: &'static str,
    pub ty: Type,
    /// Unit of numbers ("MiB", "µs", ...); empty when none.
    pub unit: &'static str,
    pub default: Default,
    pub doc: &'static str,
    /// One example line, `key = value`.
    pub example: &'static str,
    /// The key applies only when the string key `.0` of the same table has
    /// one of the values `.1` (e.g. `queue_depth` only for `model = "ssd"`).
    pub only: Option<(&'static str, &'static [&'static str])>,
}

/// Whether a section is a table or an array of tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Table,
    ArrayOfTables,
}

/// Keys a section takes besides [`Section::keys`]: any of `names`, all of
/// one type (`[cpu_cost]`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NamedKeys {
    pub names: &'static [&'static str],
    pub template: Key,
}

/// A table (or array of tables) of a scenario file.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Section {
    /// Dotted path, `""` for the top level, `machine.zone` for `[[machine.zone]]`.
    pub path: &'static str,
    pub kind: Kind,
    /// Must appear (arrays of tables: at least once).
    pub required: bool,
    pub doc: &'static str,
    pub keys: &'static [Key],
    pub named: Option<NamedKeys>,
}

impl Section {
    /// The definition of key `name` of this section.
    pub fn key(&self, name: &str) -> Option<Key> {
        if let Some(k) = self.keys.iter().find(|k| k.name == name) {
            return Some(*k);
        }
        let named = self.named?;
        let name = *named.names.iter().find(|n| **n == name)?;
        Some(Key {
            name,
            ..named.template
        })
    }

    /// Names of the sections directly below this one.
    pub fn children(&self) -> impl Iterator<Item = &'static str> + '_ {
        SECTIONS.iter().filter_map(move |s| {
            let rest = if self.path.is_empty() {
                s.path
            } else {
                s.path.strip_prefix(self.path)?.strip_prefix('.')?
            };
            (!s.path.is_empty() && !rest.contains('.')).then_some(rest)
        })
    }

    /// Every key name allowed here (keys, then sub-sections), sorted.
    pub fn allowed_names(&self) -> Vec<&'static str> {
        let mut names: Vec<&'static str> = self.keys.iter().map(|k| k.name).collect();
        if let Some(n) = self.named {
            names.extend(n.names);
        }
        names.extend(self.children());
        names.sort_unstable();
        names
    }
}

impl Type {
    /// "an integer", "a string", ... for messages.
    pub fn name(&self) -> &'static str {
        match self {
            Type::Int { .. } | Type::IntOf(_) => "an integer",
            Type::Float { .. } => "a number",
            Type::Bool => "a boolean",
            Type::Str | Type::Enum(_) | Type::KernelPreset => "a string",
            Type::Names { .. } => "an array of strings",
        }
    }
}

impl Key {
    /// What values are allowed, with the unit: "1 to 256 CPUs".
    pub fn allowed(&self) -> String {
        let unit = if self.unit.is_empty() {
            String::new()
        } else {
            format!(" {}", self.unit)
        };
        match self.ty {
            Type::Int { min, max, rule } => {
                let rule = match rule {
                    IntRule::None => String::new(),
                    IntRule::MultipleOf(m) => format!(", a multiple of {m}"),
                    IntRule::PowerOfTwo => ", a power of two".to_string(),
                };
                format!("{min} to {max}{unit}{rule}")
            }
            Type::IntOf(values) => {
                let v: Vec<String> = values.iter().map(|v| v.to_string()).collect();
                format!("{}{unit}", v.join(", "))
            }
            Type::Float {
                min,
                min_inclusive,
                max,
            } => {
                let op = if min_inclusive { ">=" } else { ">" };
                format!("a finite number {op} {min} and <= {max}{unit}")
            }
            Type::Bool => "true, false".to_string(),
            Type::Str => "a non-empty string".to_string(),
            Type::Enum(values) => values.join(", "),
            Type::KernelPreset => crate::kernel::preset_names().join(", "),
            Type::Names { min, max } => format!("an array of {min} to {max} names"),
        }
    }
}

/// The section at `path` (without array indexes).
pub fn section(path: &str) -> Option<&'static Section> {
    SECTIONS.iter().find(|s| s.path == path)
}
