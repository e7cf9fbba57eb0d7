//! Dotted-key overrides of a scenario (`wbsim run --set sysctl.dirty_ratio=40`,
//! the Python API's `**overrides`, a sweep's grid): each `KEY=VALUE` sets one
//! key of the scenario's TOML before it is validated, so a bad value is
//! reported as the validator reports a bad file, naming the key.
//!
//! A key is a path of table names and keys; a list of tables takes an index:
//! `machine.total_mib`, `sysctl.dirty_ratio`, `device[0].seq_write_mib_per_s`,
//! `machine.zone[1].size_mib`, `task[0].command`. Keys of the other roots
//! (`reclaim.*`, `writeback.*`, `fs.ext4_io_end_pages` ...) are kernel-profile
//! keys: [`is_scenario_key`] tells them apart (the scenario's `[[fs]]` list
//! always takes an index, the profile's `fs.` keys never do).

use super::{parse_scenario, parse_scenario_as, Scenario, ScenarioError};
use toml_edit::{DocumentMut, Item, Table, Value};

/// The scenario's top-level keys and sections (docs/scenario-reference.md).
const SCENARIO_ROOTS: &[&str] = &[
    "kernel", "name", "machine", "device", "fs", "sysctl", "swap", "task", "run", "cpu_cost",
];

/// Whether `KEY=VALUE` (or `KEY`) names a scenario key rather than a
/// kernel-profile key.
pub fn is_scenario_key(set: &str) -> bool {
    let key = set.split('=').next().unwrap_or("");
    let root = key.split(['.', '[']).next().unwrap_or("");
    match root {
        "fs" => key.starts_with("fs["),
        _ => SCENARIO_ROOTS.contains(&root),
    }
}

/// Parse scenario `text` (from `file_name`) with `sets` (`KEY=VALUE`, each a
/// scenario key) applied. A value is read as TOML (`40`, `0.5`, `true`,
/// `"ext4"`), else taken as a string (`ext4`).
pub fn parse_with_overrides(
    text: &str,
    file_name: &str,
    sets: &[String],
) -> Result<Scenario, ScenarioError> {
    if sets.is_empty() {
        return parse_scenario(text, file_name);
    }
    let fail = |set: &str, message: String| {
        ScenarioError::whole_file(file_name, format!("override `{set}`: {message}"))
    };
    // A file that is not TOML is reported as it would be without overrides.
    let mut doc: DocumentMut = match text.parse() {
        Ok(d) => d,
        Err(_) => return parse_scenario(text, file_name),
    };
    for set in sets {
        let (key, raw) = set
            .split_once('=')
            .ok_or_else(|| fail(set, "expected KEY=VALUE".into()))?;
        if !is_scenario_key(key) {
            return Err(fail(
                set,
                format!(
                    "`{key}` is not a scenario key (its first part must be one of: {})",
                    SCENARIO_ROOTS.join(", ")
                ),
            ));
        }
        let raw = raw.trim();
        let parsed = raw.parse::<Value>().ok();
        // A key that holds a string keeps one (`kernel=3.10` is not 3.1).
        let value = match parsed {
            Some(v) if v.is_str() || !holds_string(doc.as_table(), key) => v,
            _ => Value::from(raw),
        };
        set_path(doc.as_table_mut(), key, value).map_err(|m| fail(set, m))?;
    }
    let label = format!("{file_name} (with {})", sets.join(", "));
    parse_scenario_as(&doc.to_string(), &label, file_name)
}

/// Whether `path` already holds a string in `table`.
fn holds_string(table: &Table, path: &str) -> bool {
    let segs: Vec<&str> = path.split('.').collect();
    let mut t = table;
    for (i, seg) in segs.iter().enumerate() {
        let Ok((name, idx)) = segment(seg) else {
            return false;
        };
        let item = t.get(name);
        if i + 1 == segs.len() {
            return idx.is_none() && item.is_some_and(|it| it.as_str().is_some());
        }
        let next = match idx {
            None => item.and_then(Item::as_table),
            Some(k) => item
                .and_then(Item::as_array_of_tables)
                .and_then(|l| l.get(k)),
        };
        match next {
            Some(n) => t = n,
            None => return false,
        }
    }
    false
}

/// One path segment: a key, with an index when it names a list of tables.
fn segment(seg: &str) -> Result<(&str, Option<usize>), String> {
    match seg.split_once('[') {
        None if !seg.is_empty() => Ok((seg, None)),
        None => Err("empty key segment".into()),
        Some((name, rest)) => {
            let idx = rest
                .strip_suffix(']')
                .and_then(|i| i.parse::<usize>().ok())
                .ok_or_else(|| format!("`{seg}`: expected NAME[INDEX]"))?;
            Ok((name, Some(idx)))
        }
    }
}

/// Set `value` at dotted `path` under `table`, creating plain tables on the
/// way; a list of tables must exist up to the index named.
fn set_path(table: &mut Table, path: &str, value: Value) -> Result<(), String> {
    let segs: Vec<&str> = path.split('.').collect();
    let mut t = table;
    for (i, seg) in segs.iter().enumerate() {
        let (name, idx) = segment(seg)?;
        let last = i + 1 == segs.len();
        match (idx, last) {
            (None, true) => {
                if t.get(name)
                    .is_some_and(|it| it.is_table() || it.is_array_of_tables())
                {
                    return Err(format!("`{name}` is a section, not a key"));
                }
                t.insert(name, Item::Value(value));
                return Ok(());
            }
            (None, false) => {
                if t.get(name).is_some_and(Item::is_array_of_tables) {
                    return Err(format!(
                        "`{name}` is a list of tables: name one, e.g. `{name}[0].{}`",
                        segs[i + 1..].join(".")
                    ));
                }
                let item = t.entry(name).or_insert_with(|| {
                    let mut new = Table::new();
                    new.set_implicit(true);
                    Item::Table(new)
                });
                t = item
                    .as_table_mut()
                    .ok_or_else(|| format!("`{name}` is a value, not a section"))?;
            }
            (Some(_), true) => return Err(format!("`{seg}`: a list of tables is not a value")),
            (Some(k), false) => {
                let list = t
                    .get_mut(name)
                    .and_then(Item::as_array_of_tables_mut)
                    .ok_or_else(|| format!("the scenario has no list of tables `{name}`"))?;
                let n = list.len();
                t = list
                    .get_mut(k)
                    .ok_or_else(|| format!("`{name}` has {n} entries (0 to {})", n.max(1) - 1))?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "kernel = \"3.3\"\n[machine]\ncpus = 1\n[[machine.zone]]\nname = \"DMA32\"\n\
                        size_mib = 64\n[[device]]\nname = \"sdb\"\nmodel = \"usb-stick\"\n\
                        capacity_gib = 16\nseq_write_mib_per_s = 20.0\nmax_request_kib = 120\n[[fs]]\ntype = \"ext4\"\n\
                        device = \"sdb\"\nmount = \"disk\"\n[[task]]\n\
                        command = \"dd if=/dev/zero of=disk/f bs=4k count=1\"\n";

    fn with(sets: &[&str]) -> Result<Scenario, ScenarioError> {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        parse_with_overrides(BASE, "base.toml", &sets)
    }

    #[test]
    fn scenario_keys_are_told_from_profile_keys() {
        assert!(is_scenario_key("sysctl.dirty_ratio=40"));
        assert!(is_scenario_key("fs[0].type"));
        assert!(is_scenario_key("machine.zone[0].size_mib"));
        assert!(!is_scenario_key("fs.ext4_io_end_pages=32"));
        assert!(!is_scenario_key("reclaim.kswapd_writepage_max_priority=9"));
    }

    #[test]
    fn overrides_set_new_and_existing_keys_and_list_entries() {
        let sc = with(&[
            "sysctl.dirty_ratio=40",
            "machine.zone[0].size_mib=128",
            "device[0].seq_write_mib_per_s=5",
            "kernel=3.2",
        ])
        .unwrap();
        assert_eq!(sc.sysctl.dirty_ratio, 40);
        assert_eq!(sc.kernel, "3.2");
        assert_eq!(sc.name, "base");
        assert_eq!(sc.devices[0].seq_write_mib_per_s, 5.0);
    }

    #[test]
    fn a_bad_override_names_its_key() {
        let msg = |sets: &[&str]| with(sets).unwrap_err().to_string();
        let m = msg(&["sysctl.dirty_ratio=400"]);
        assert!(
            m.contains("dirty_ratio") && m.contains("with sysctl.dirty_ratio=400"),
            "{m}"
        );
        let m = msg(&["sysctl.no_such_key=1"]);
        assert!(m.contains("no_such_key"), "{m}");
        let m = msg(&["device.seq_write_mib_per_s=5"]);
        assert!(
            m.contains("list of tables") && m.contains("device[0]"),
            "{m}"
        );
        let m = msg(&["device[3].seq_write_mib_per_s=5"]);
        assert!(m.contains("has 1 entries"), "{m}");
        let m = msg(&["reclaim.x=1"]);
        assert!(m.contains("not a scenario key"), "{m}");
        let m = msg(&["sysctl"]);
        assert!(m.contains("KEY=VALUE"), "{m}");
    }
}
