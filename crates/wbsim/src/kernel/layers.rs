//! Kernel profiles as layered data: a preset or a profile file may say
//! `base = "PRESET"` and give only the keys that differ; `--set KEY=VALUE`
//! overrides one key on top. Every key of the resolved profile remembers
//! where it came from (`wbsim kernels --show`), and contradictory
//! settings are refused at load, naming the keys.
//!
//! Keys may be written bare (`kswapd_writepage_max_priority`) or with the
//! subsystem they belong to (`reclaim.kswapd_writepage_max_priority`),
//! see [`key_section`].

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use super::{
    DirtyThrottle, KernelProfile, KswapdBalance, LruScope, Proportions, WritebackChunk,
    DEF_PRIORITY,
};

/// A profile and, for each key, where its value came from: `preset NAME`,
/// `base NAME`, `file PATH` or `--set`.
#[derive(Debug, Clone, PartialEq)]
pub struct ResolvedProfile {
    pub profile: KernelProfile,
    pub sources: BTreeMap<String, String>,
}

/// Every key a profile may set, with the subsystem it belongs to (for
/// `--set SECTION.KEY=VALUE` and `kernels --show`), in `--show` order.
const KEYS: &[(&str, &str)] = &[
    ("name", "profile"),
    ("description", "profile"),
    ("dirty_limit_scope", "writeback"),
    ("proportions", "writeback"),
    ("proportion_shift_offset", "writeback"),
    ("proportion_shift_fixed", "writeback"),
    ("clip_bdi_dirty_limit", "writeback"),
    ("bdp_wait", "writeback"),
    ("task_dirty_limit", "writeback"),
    ("bdi_ramp_violation_allowed", "writeback"),
    ("dirty_throttle", "writeback"),
    ("ratelimit_shift_wraps", "writeback"),
    ("writeback_chunk", "writeback"),
    ("fs_writepage", "reclaim"),
    ("flush_reclaim_inodes_first", "writeback"),
    ("direct_reclaim_writes_file_pages", "reclaim"),
    ("kswapd_writepage_max_priority", "reclaim"),
    ("skipped_dirty_file_page", "reclaim"),
    ("throttle_on_dirty_isolated", "reclaim"),
    ("throttle_on_writeback_isolated", "reclaim"),
    ("percpu_drift_mark", "reclaim"),
    ("kswapd_force_scan", "reclaim"),
    ("kswapd_force_scan_by_fraction", "reclaim"),
    ("redirty_accounting", "writeback"),
    ("writeback_plug", "block"),
    ("lru_scope", "reclaim"),
    ("kswapd_balance", "reclaim"),
    ("kswapd_writes_seen_twice", "reclaim"),
    ("writeback_page_in_reclaim", "reclaim"),
    ("reclaim_throttle", "reclaim"),
    ("lru_generations", "reclaim"),
    ("watermark_scale_factor", "mm"),
    ("watermark_boosting", "mm"),
    ("pcp_high_from_watermark", "mm"),
    ("block_layer", "block"),
    ("wbt", "block"),
    ("xfs_buffer_heads", "fs"),
    ("ext4_io_end_pages", "fs"),
    ("xfs_ioend_pages", "fs"),
    ("btrfs_bio_max_vecs", "fs"),
    ("btrfs_delalloc_write_pages", "fs"),
    ("btrfs_mount_tree_pages", "fs"),
    ("jbd2_shadow_wait", "fs"),
    ("workingset_refault", "mm"),
    ("mark_accessed_in_pagevec", "mm"),
    ("wake_affine_weight", "sched"),
];

/// The subsystem a profile key belongs to; `None` for an unknown key.
pub fn key_section(key: &str) -> Option<&'static str> {
    KEYS.iter().find(|(k, _)| *k == key).map(|(_, s)| *s)
}

/// Bases may chain; a longer chain is a cycle.
const MAX_BASE_DEPTH: usize = 8;

type Layer = (toml::Table, BTreeMap<String, String>);

/// A preset's own table (its TOML text, not yet resolved).
fn preset_table(name: &str) -> Result<toml::Table, String> {
    let (_, text) = super::PRESETS
        .iter()
        .find(|(n, _)| *n == name)
        .ok_or_else(|| {
            format!(
                "unknown kernel preset `{name}`; available presets: {}",
                super::preset_names().join(", ")
            )
        })?;
    text.parse::<toml::Table>()
        .map_err(|e| format!("built-in preset `{name}` is malformed: {e}"))
}

/// Resolve `table` (from `origin`) over its `base`, if any.
fn layer(mut table: toml::Table, origin: &str, depth: usize) -> Result<Layer, String> {
    let (mut t, mut src) = match table.remove("base") {
        None => (toml::Table::new(), BTreeMap::new()),
        Some(toml::Value::String(base)) => {
            if depth >= MAX_BASE_DEPTH {
                return Err(format!(
                    "{origin}: key `base`: more than {MAX_BASE_DEPTH} bases in a chain (a cycle?)"
                ));
            }
            let (t, src) = layer(
                preset_table(&base).map_err(|e| format!("{origin}: key `base`: {e}"))?,
                &format!("base {base}"),
                depth + 1,
            )?;
            // What the base itself took from its own base stays labelled so.
            (t, src)
        }
        Some(other) => {
            return Err(format!(
                "{origin}: key `base`: expected a preset name in quotes, found {}",
                other.type_str()
            ))
        }
    };
    for (k, v) in table {
        src.insert(k.clone(), origin.to_string());
        t.insert(k, v);
    }
    Ok((t, src))
}

/// Turn a resolved table into a profile, checking keys and coherence.
fn finish(
    t: toml::Table,
    sources: BTreeMap<String, String>,
    what: &str,
) -> Result<ResolvedProfile, String> {
    for k in t.keys() {
        if key_section(k).is_none() {
            return Err(format!(
                "{what}: unknown key `{k}`; allowed: {}",
                all_keys().join(", ")
            ));
        }
    }
    let profile = KernelProfile::deserialize(toml::Value::Table(t.clone())).map_err(|e| {
        // serde's message ends with an "in `KEY`" line; the key is named here.
        let e = e.to_string();
        let msg = e.lines().next().unwrap_or("").trim();
        match bad_key(&t) {
            Some(k) => format!("{what}: key `{k}`: {msg}"),
            None => format!("{what}: {msg}"),
        }
    })?;
    check_coherence(&profile).map_err(|e| format!("{what}: {e}"))?;
    Ok(ResolvedProfile { profile, sources })
}

/// The first key whose value does not fit its type: each is tried alone
/// on top of a complete, valid profile (3.0-vanilla's).
fn bad_key(t: &toml::Table) -> Option<String> {
    let reference = match toml::Value::try_from(super::preset("3.0-vanilla").ok()?) {
        Ok(toml::Value::Table(r)) => r,
        _ => return None,
    };
    t.iter()
        .find(|(k, v)| {
            let mut probe = reference.clone();
            probe.insert((*k).clone(), (*v).clone());
            KernelProfile::deserialize(toml::Value::Table(probe)).is_err()
        })
        .map(|(k, _)| k.clone())
}

/// Every key a profile may set, in `kernels --show` order.
pub fn all_keys() -> Vec<&'static str> {
    KEYS.iter().map(|(k, _)| *k).collect()
}

/// Settings no kernel had together.
pub fn check_coherence(p: &KernelProfile) -> Result<(), String> {
    if p.proportions == Proportions::Flexible
        && (p.proportion_shift_fixed.is_some() || p.proportion_shift_offset != 0)
    {
        return Err(
            "`proportion_shift_fixed` / `proportion_shift_offset` tune the floating \
             proportions' period (2.6.24 - 3.6); `proportions = \"flexible\"` (3.7+) has none"
                .into(),
        );
    }
    if p.throttle_on_dirty_isolated && p.throttle_on_writeback_isolated {
        return Err("`throttle_on_dirty_isolated` (RFC patch 3, Jul 2011) and \
             `throttle_on_writeback_isolated` (its merged form, 3.2) are two versions of \
             one throttle; set at most one"
            .into());
    }
    if p.kswapd_balance == KswapdBalance::Node && p.lru_scope != LruScope::Node {
        return Err(
            "`kswapd_balance = \"node\"` (4.12+) shrinks the node's LRU lists; \
             it needs `lru_scope = \"node\"` (4.8+)"
                .into(),
        );
    }
    if p.lru_scope == LruScope::Node && p.kswapd_balance != KswapdBalance::Node {
        return Err(
            "`lru_scope = \"node\"` (4.8+) has no per-zone lists for the 3.x \
             `kswapd_balance = \"per-zone\"` to shrink zone by zone; set \
             `kswapd_balance = \"node\"`"
                .into(),
        );
    }
    if p.lru_generations && p.lru_scope != LruScope::Node {
        return Err(
            "`lru_generations` (MGLRU, 6.1+) keeps its generations per node; it \
             needs `lru_scope = \"node\"`"
                .into(),
        );
    }
    if p.reclaim_throttle && (p.throttle_on_dirty_isolated || p.throttle_on_writeback_isolated) {
        return Err(
            "`reclaim_throttle` (5.16+) replaced the `wait_iff_congested` back-offs \
             of `throttle_on_dirty_isolated` / `throttle_on_writeback_isolated`; set at most one"
                .into(),
        );
    }
    if p.writeback_chunk == WritebackChunk::Bandwidth
        && p.dirty_throttle == DirtyThrottle::WriterWriteback
    {
        return Err(
            "`writeback_chunk` = \"bandwidth\" sizes each inode's chunk from the device's \
             write-bandwidth estimate, which the model keeps only with IO-less throttling \
             (`dirty_throttle` = \"io-less\" or \"io-less-first\", 3.2+); with \
             \"writer-writeback\" throttling set `writeback_chunk` = \"fixed\" (3.1 had \
             both; its estimate in the writer's balance_dirty_pages is not modelled)"
                .into(),
        );
    }
    if p.kswapd_writepage_max_priority > DEF_PRIORITY {
        return Err(format!(
            "`kswapd_writepage_max_priority` {} is above DEF_PRIORITY (12); allowed: 0 to 12",
            p.kswapd_writepage_max_priority
        ));
    }
    Ok(())
}

/// A built-in preset, resolved over its bases.
pub fn resolve_preset(name: &str) -> Result<ResolvedProfile, String> {
    let (t, src) = layer(preset_table(name)?, &format!("preset {name}"), 0)?;
    finish(t, src, &format!("preset `{name}`"))
}

/// A profile file of the user's own (`--kernel-file`): the keys of a
/// preset, optionally `base = "PRESET"`. Without `name` it is named after
/// the file; without `description`, it says which file it is.
pub fn resolve_file(path: &Path) -> Result<ResolvedProfile, String> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("--kernel-file {shown}: {}", crate::io_reason(&e)))?;
    let table = text
        .parse::<toml::Table>()
        .map_err(|e| format!("{shown}: {}", e.to_string().trim()))?;
    let origin = format!("file {shown}");
    let at_line = |e: String| with_line(e, &shown, &text);
    let (mut t, mut src) = layer(table, &origin, 0).map_err(at_line)?;
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("profile");
    if src.get("name") != Some(&origin) {
        t.insert("name".into(), toml::Value::String(stem.to_string()));
        src.insert("name".into(), origin.clone());
    }
    if src.get("description") != Some(&origin) {
        t.insert(
            "description".into(),
            toml::Value::String(format!("profile file {shown}")),
        );
        src.insert("description".into(), origin.clone());
    }
    finish(t, src, &shown).map_err(at_line)
}

/// Put the line of the first key the message names into the file's
/// prefix (`FILE: …` → `FILE:LINE: …`), as scenario errors give it.
fn with_line(message: String, shown: &str, text: &str) -> String {
    let line_of = |key: &str| {
        text.lines().position(|l| {
            l.trim_start()
                .strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with('='))
        })
    };
    let line = message.split('`').skip(1).step_by(2).find_map(line_of);
    let Some(n) = line else { return message };
    for prefix in [format!("{shown}: "), format!("file {shown}: ")] {
        if let Some(rest) = message.strip_prefix(&prefix) {
            return format!("{shown}:{}: {rest}", n + 1);
        }
    }
    message
}

/// Apply `--set KEY=VALUE` overrides (KEY bare or `SECTION.KEY`; VALUE in
/// TOML syntax, or a bare word taken as a string). The profile's name
/// gains ` --set KEY=VALUE` so that reports tell the runs apart.
pub fn apply_sets(base: &ResolvedProfile, sets: &[String]) -> Result<ResolvedProfile, String> {
    if sets.is_empty() {
        return Ok(base.clone());
    }
    let mut t = match toml::Value::try_from(&base.profile) {
        Ok(toml::Value::Table(t)) => t,
        _ => return Err("the profile cannot be written as TOML".into()),
    };
    let mut src = base.sources.clone();
    let mut name = base.profile.name.clone();
    for s in sets {
        let (key, value) = s.split_once('=').ok_or_else(|| {
            format!("--set {s}: expected KEY=VALUE, e.g. reclaim.kswapd_writepage_max_priority=9")
        })?;
        let key = key.trim();
        let bare = match key.split_once('.') {
            Some((section, k)) => match key_section(k) {
                Some(right) if right == section => k,
                Some(right) => {
                    return Err(format!(
                        "--set {s}: key `{k}` belongs to section `{right}`, not `{section}`"
                    ))
                }
                None => {
                    return Err(format!(
                        "--set {s}: unknown key `{k}`; allowed: {}",
                        all_keys().join(", ")
                    ))
                }
            },
            None => key,
        };
        if key_section(bare).is_none() {
            return Err(format!(
                "--set {s}: unknown key `{bare}`; allowed: {}",
                all_keys().join(", ")
            ));
        }
        let value = value.trim();
        let parsed = format!("v = {value}")
            .parse::<toml::Table>()
            .ok()
            .and_then(|mut t| t.remove("v"))
            .unwrap_or_else(|| toml::Value::String(value.to_string()));
        t.insert(bare.to_string(), parsed);
        src.insert(bare.to_string(), "--set".into());
        name = format!("{name} --set {bare}={value}");
    }
    t.insert("name".into(), toml::Value::String(name));
    finish(t, src, "--set")
}

/// The resolved profile as `kernels --show` prints it: one line per key,
/// `section.key = value   # source`.
pub fn show(r: &ResolvedProfile) -> String {
    let t = match toml::Value::try_from(&r.profile) {
        Ok(toml::Value::Table(t)) => t,
        _ => return String::new(),
    };
    let mut out = String::new();
    for k in all_keys() {
        let Some(v) = t.get(k) else { continue };
        let line = format!("{}.{k} = {v}", key_section(k).unwrap_or("?"));
        let from = r.sources.get(k).map(String::as_str).unwrap_or("default");
        out += &format!("{line:<64} # {from}\n");
    }
    out
}

#[cfg(test)]
mod tests;
