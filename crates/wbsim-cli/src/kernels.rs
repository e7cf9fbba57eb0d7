//! `wbsim kernels --diff A B`: which mechanisms two kernel profiles differ
//! in, key by key, with where each side's value comes from.
//!
//! Profiles are compared as their TOML serialization, not field by field,
//! so that a key added to `KernelProfile` later is compared without a
//! change here.

use std::path::Path;

use wbsim::kernel::layers::{self, ResolvedProfile};

use crate::exit::Failure;

/// What a missing value (an `Option` that is `None`) prints as.
const ABSENT: &str = "-";

/// A profile file when `what` names one, else a preset name: what
/// `--show` and `--diff` accept.
pub fn resolve(what: &str) -> Result<ResolvedProfile, String> {
    let path = Path::new(what);
    if path.is_file() {
        layers::resolve_file(path)
    } else {
        layers::resolve_preset(what)
    }
}

/// `wbsim kernels --diff A B [--set K=V]...`. The overrides apply to both
/// sides, so that the diff is what the profiles differ in under them.
pub fn cmd_diff(a: &str, b: &str, sets: &[String]) -> Result<u8, Failure> {
    let a = layers::apply_sets(&resolve(a)?, sets)?;
    let b = layers::apply_sets(&resolve(b)?, sets)?;
    print!("{}", diff(&a, &b)?);
    Ok(0)
}

/// The diff as printed: a line naming both profiles, a table of the keys
/// whose values differ (in `--show` order, with each value's source), and
/// `N of M keys differ`. The name and description are not mechanisms: they
/// are neither listed nor counted.
pub fn diff(a: &ResolvedProfile, b: &ResolvedProfile) -> Result<String, String> {
    let (ta, tb) = (values(a)?, values(b)?);
    let (pa, pb) = (&a.profile, &b.profile);
    let keys = mechanism_keys(&ta, &tb);
    let (la, lb) = (label(&pa.name), label(&pb.name));
    let mut rows = vec![[
        "key".to_string(),
        la.to_string(),
        lb.to_string(),
        format!("from ({la})"),
        format!("from ({lb})"),
    ]];
    for k in &keys {
        let (va, vb) = (ta.get(k), tb.get(k));
        if va == vb {
            continue;
        }
        rows.push([
            format!("{}.{k}", layers::key_section(k).unwrap_or("?")),
            va.map_or(ABSENT.into(), ToString::to_string),
            vb.map_or(ABSENT.into(), ToString::to_string),
            source(a, k),
            source(b, k),
        ]);
    }
    let differ = rows.len() - 1;
    let mut out = format!(
        "{} ({}) vs {} ({})\n",
        pa.name, pa.description, pb.name, pb.description
    );
    if differ == 0 {
        out += "no mechanism differs\n";
    } else {
        out += &table(&rows);
    }
    out += &format!("{differ} of {} keys differ\n", keys.len());
    Ok(out)
}

/// The profile's keys and values as TOML (what `--show` prints); a `None`
/// is left out by the serializer.
fn values(r: &ResolvedProfile) -> Result<toml::Table, String> {
    match toml::Value::try_from(&r.profile) {
        Ok(toml::Value::Table(t)) => Ok(t),
        _ => Err(format!(
            "profile `{}` cannot be written as TOML",
            r.profile.name
        )),
    }
}

/// The keys to compare: the library's, in `--show` order, then any the
/// profiles carry that its list does not name yet, less the `profile`
/// section (name and description).
fn mechanism_keys(a: &toml::Table, b: &toml::Table) -> Vec<String> {
    let mut keys: Vec<String> = layers::all_keys().into_iter().map(String::from).collect();
    for k in a.keys().chain(b.keys()) {
        if !keys.contains(k) {
            keys.push(k.clone());
        }
    }
    keys.retain(|k| layers::key_section(k) != Some("profile"));
    keys
}

/// A column title: the profile's name without the ` --set KEY=VALUE` tail
/// that `--set` adds to both sides alike (the header line keeps it).
fn label(name: &str) -> &str {
    name.split(" --set ").next().unwrap_or(name)
}

/// Where a key's value came from; a key no layer set has serde's default
/// (as `--show` says).
fn source(r: &ResolvedProfile, key: &str) -> String {
    r.sources
        .get(key)
        .cloned()
        .unwrap_or_else(|| "default".into())
}

/// Left-aligned columns, two spaces apart.
fn table(rows: &[[String; 5]]) -> String {
    let mut widths = [0; 5];
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in rows {
        let line: Vec<String> = row
            .iter()
            .zip(widths)
            .map(|(cell, w)| format!("{cell:<w$}"))
            .collect();
        out += line.join("  ").trim_end();
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn preset(name: &str) -> ResolvedProfile {
        layers::resolve_preset(name).unwrap()
    }

    /// The first cell of each table row (the keys listed), header excluded.
    fn listed(text: &str) -> Vec<&str> {
        text.lines()
            .skip(2)
            .filter(|l| !l.ends_with("keys differ"))
            .filter_map(|l| l.split_whitespace().next())
            .collect()
    }

    /// Every key but name and description.
    fn mechanisms() -> usize {
        layers::all_keys().len() - 2
    }

    #[test]
    fn per_zone_dirty_limits_and_redirty_accounting_separate_3_2_from_3_3() {
        let text = diff(&preset("3.2"), &preset("3.3")).unwrap();
        let first = text.lines().next().unwrap();
        assert!(
            first.starts_with("3.2 (3.2: IO-less")
                && first.ends_with("vs 3.3 (3.2 + per-zone dirty limits)"),
            "{text}"
        );
        let keys = listed(&text);
        assert!(keys.contains(&"writeback.dirty_limit_scope"), "{text}");
        assert!(keys.contains(&"writeback.redirty_accounting"), "{text}");
        assert!(
            !keys.contains(&"reclaim.kswapd_writepage_max_priority"),
            "{text}"
        );
        assert!(!keys.iter().any(|k| k.starts_with("profile.")), "{text}");
        let scope = text
            .lines()
            .find(|l| l.starts_with("writeback.dirty_limit_scope"))
            .unwrap();
        let cells: Vec<&str> = scope.split("  ").filter(|c| !c.is_empty()).collect();
        assert_eq!(
            cells.iter().map(|c| c.trim()).collect::<Vec<_>>(),
            [
                "writeback.dirty_limit_scope",
                "\"global\"",
                "\"per-zone\"",
                "base 3.1-mmotm",
                "preset 3.3"
            ],
            "{text}"
        );
        let count = format!("{} of {} keys differ", keys.len(), mechanisms());
        assert_eq!(text.lines().last(), Some(count.as_str()), "{text}");
    }

    #[test]
    fn a_preset_against_itself_differs_in_nothing() {
        let text = diff(&preset("3.3"), &preset("3.3")).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert_eq!(lines[1], "no mechanism differs");
        assert_eq!(lines[2], format!("0 of {} keys differ", mechanisms()));
    }

    #[test]
    fn a_file_on_a_preset_differs_in_the_key_it_changes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mine.toml");
        std::fs::write(&path, "base = \"3.3\"\nkswapd_writepage_max_priority = 6\n").unwrap();
        let mine = resolve(path.to_str().unwrap()).unwrap();
        let text = diff(&preset("3.3"), &mine).unwrap();
        assert_eq!(
            listed(&text),
            ["reclaim.kswapd_writepage_max_priority"],
            "{text}"
        );
        let row = text.lines().nth(2).unwrap();
        assert!(
            row.contains(" 9 ") && row.contains(" 6 ") && row.contains("file "),
            "{text}"
        );
        assert!(text.ends_with(&format!("1 of {} keys differ\n", mechanisms())));
    }

    #[test]
    fn a_key_one_side_leaves_unset_prints_as_a_dash() {
        let text = diff(&preset("2.6.24"), &preset("2.6.24+shift-12")).unwrap();
        assert_eq!(
            listed(&text),
            ["writeback.proportion_shift_fixed"],
            "{text}"
        );
        let cells: Vec<&str> = text.lines().nth(2).unwrap().split_whitespace().collect();
        assert_eq!(
            cells,
            [
                "writeback.proportion_shift_fixed",
                "-",
                "12",
                "default",
                "preset",
                "2.6.24+shift-12"
            ],
            "{text}"
        );
    }
}
