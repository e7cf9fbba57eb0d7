//! The scenario reference, generated from [`super::schema`].

use std::fmt::Write as _;

use super::schema::{
    Default, Key, Kind, Section, Type, MAX_FRAMES, MAX_MEMORY_MIB, MAX_TIME_LIMIT_S,
};
use super::validate::devices::{MAX_DEVICES, MAX_FILESYSTEMS};
use super::validate::tasks::MAX_TASK_FILES;
use crate::sim::cost::CostTable;

/// The command that regenerates `docs/scenario-reference.md`.
pub const REGENERATE: &str = "wbsim scenario --reference > docs/scenario-reference.md";

/// Markdown reference of every scenario section and key: type, unit,
/// default, allowed values, whether required, what it does and an example.
pub fn reference_markdown() -> String {
    let max_file_pages = u64::from(crate::mm::page::MAX_PAGE_INDEX) + 1;
    let mut out = String::new();
    out.push_str(&format!(
        "# Scenario file reference\n\n\
         <!-- Generated from crates/wbsim/src/scenario/schema.rs; do not edit. \
         Regenerate with `{REGENERATE}`. -->\n\n\
         A scenario is a TOML file. Every key below is checked against its type and \
         range; unknown keys are errors. All problems of a file are reported at once, \
         one per line, as `FILE:LINE:COLUMN: key: what is wrong; allowed: ...`. Files \
         larger than 4 MiB, and anything that is not a regular file, are refused.\n\n\
         Limits that keep a run plausible: at most {MAX_FRAMES} page frames in all \
         zones together ({MAX_MEMORY_MIB} MiB, 64 GiB, at 4 KiB pages; more at a coarser \
         `machine.unit_kib`); `run.time_limit_s` at most {MAX_TIME_LIMIT_S} s; \
         at most {MAX_DEVICES} `[[device]]` and {MAX_FILESYSTEMS} `[[fs]]` tables; \
         at most {MAX_TASK_FILES} files created by a run's tasks, and files, memory \
         regions and swap of at most {max_file_pages} pages each (1 TiB at 4 KiB; \
         more at a coarser `machine.unit_kib`): a frame holds 28-bit inode numbers \
         and page indices.\n\n\
         Defaults matter: a key left out takes the default shown, and that changes \
         results (for example an `ssd` without `queue_depth` serves one command at a \
         time).\n"
    ));
    for s in super::schema::SECTIONS {
        section(&mut out, s);
    }
    out.push_str("\n## The programs a task may run\n\n");
    out.push_str(&crate::workload::reference_markdown());
    out
}

fn section(out: &mut String, s: &Section) {
    let title = match (s.path, s.kind) {
        ("", _) => "Top level".to_string(),
        (p, Kind::Table) => format!("`[{p}]`"),
        (p, Kind::ArrayOfTables) => format!("`[[{p}]]`"),
    };
    let required = match (s.required, s.kind) {
        (_, _) if s.path.is_empty() => "",
        (true, Kind::Table) => " Required.",
        (true, Kind::ArrayOfTables) => " Required: at least one.",
        (false, Kind::Table) => " Optional.",
        (false, Kind::ArrayOfTables) => " Optional: any number.",
    };
    let _ = write!(out, "\n## {title}\n\n{}{required}\n", s.doc);
    if !s.keys.is_empty() {
        out.push_str(
            "\n| Key | Type | Unit | Default | Allowed | Required | Description | Example |\n\
             |---|---|---|---|---|---|---|---|\n",
        );
        for k in s.keys {
            row(out, k);
        }
    }
    if let Some(named) = s.named {
        let t = named.template;
        let _ = write!(
            out,
            "\nAny of these keys, each {} in {} ({}); the default is the built-in cost. \
             Example: `{} = 9000`.\n\n| Key | Built-in default (ns) |\n|---|---|\n",
            t.ty.name(),
            t.unit,
            t.allowed(),
            named.names.first().copied().unwrap_or("name"),
        );
        let mut costs = CostTable::default();
        for name in named.names {
            let built_in = costs
                .field_mut(name)
                .map_or_else(String::new, |v| v.to_string());
            let _ = writeln!(out, "| `{name}` | {built_in} |");
        }
    }
}

fn row(out: &mut String, k: &Key) {
    let ty = match k.ty {
        Type::Int { .. } | Type::IntOf(_) => "integer",
        Type::Float { .. } => "number",
        Type::Bool => "boolean",
        Type::Str => "string",
        Type::Enum(_) => "string (one of)",
        Type::KernelPreset => "string (kernel preset)",
        Type::Names { .. } => "array of strings",
    };
    let default = match k.default {
        Default::Required => "—".to_string(),
        Default::Absent(text) => text.to_string(),
        Default::Int(n) => format!("`{n}`"),
        Default::Float(x) => format!("`{x:?}`"),
        Default::Bool(b) => format!("`{b}`"),
        Default::Str(s) => format!("`\"{s}\"`"),
    };
    let required = match (k.default, k.only) {
        (Default::Required, None) => "yes".to_string(),
        (Default::Required, Some((disc, values))) => {
            format!("yes, for {disc} {}", values.join(", "))
        }
        (_, Some((disc, values))) => format!("no; only for {disc} {}", values.join(", ")),
        _ => "no".to_string(),
    };
    let cell = |s: &str| s.replace('|', "\\|");
    let _ = writeln!(
        out,
        "| `{}` | {ty} | {} | {} | {} | {} | {} | `{}` |",
        k.name,
        cell(k.unit),
        cell(&default),
        cell(&k.allowed()),
        required,
        cell(k.doc),
        cell(k.example),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::schema::SECTIONS;

    /// The checked-in reference is what the schema generates.
    #[test]
    fn checked_in_reference_is_up_to_date() {
        let checked_in = include_str!("../../../../docs/scenario-reference.md");
        let generated = reference_markdown();
        if checked_in != generated {
            let line = checked_in
                .lines()
                .zip(generated.lines())
                .position(|(a, b)| a != b)
                .map_or_else(
                    || checked_in.lines().count().min(generated.lines().count()) + 1,
                    |i| i + 1,
                );
            panic!(
                "docs/scenario-reference.md differs from reference_markdown() from line \
                 {line} on; regenerate it with `{REGENERATE}` (from the repository root)"
            );
        }
    }

    /// Every key has a doc string and an example of itself, every optional
    /// key states its default, and every section is documented.
    #[test]
    fn every_key_is_documented_with_an_example() {
        for s in SECTIONS {
            assert!(!s.doc.is_empty(), "section {:?}", s.path);
            for k in s.keys {
                assert!(!k.doc.is_empty(), "{}.{}", s.path, k.name);
                assert!(
                    k.example.starts_with(&format!("{} = ", k.name)),
                    "{}.{}: {}",
                    s.path,
                    k.name,
                    k.example
                );
                assert!(
                    crate::scenario::tree::parse(k.example, "x").is_ok(),
                    "{}",
                    k.example
                );
            }
        }
    }

    /// Numeric keys' defaults lie in their range.
    #[test]
    fn defaults_are_allowed_values() {
        for s in SECTIONS {
            for k in s.keys {
                match (k.ty, k.default) {
                    (Type::Int { min, max, .. }, Default::Int(n)) => {
                        assert!((min..=max).contains(&n), "{}", k.name)
                    }
                    (Type::IntOf(v), Default::Int(n)) => assert!(v.contains(&n), "{}", k.name),
                    (Type::Float { min, max, .. }, Default::Float(x)) => {
                        assert!(x >= min && x <= max, "{}", k.name)
                    }
                    (Type::Enum(v), Default::Str(d)) => assert!(v.contains(&d), "{}", k.name),
                    (Type::Bool, Default::Bool(_))
                    | (_, Default::Required | Default::Absent(_)) => {}
                    (ty, d) => panic!("{}: default {d:?} does not fit {ty:?}", k.name),
                }
            }
        }
    }

    #[test]
    fn reference_states_the_ssd_queue_depth_default() {
        let r = reference_markdown();
        let row = r
            .lines()
            .find(|l| l.starts_with("| `queue_depth` |"))
            .unwrap();
        assert!(row.contains("| `1` |") && row.contains("depth 1"), "{row}");
        assert!(r.contains("| `kernel` |") && r.contains("3.0-vanilla"));
        assert!(r.contains("`syscall_ns`"));
    }
}
