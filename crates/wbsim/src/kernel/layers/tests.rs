use super::*;

fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn every_preset_resolves_with_a_source_for_each_key_it_sets() {
    for name in super::super::preset_names() {
        let r = resolve_preset(name).unwrap();
        assert_eq!(r.profile.name, name);
        assert!(r.sources.contains_key("dirty_limit_scope"), "{name}");
    }
}

#[test]
fn a_file_on_a_base_overrides_only_what_it_says() {
    let d = tempfile::tempdir().unwrap();
    let p = write(
        d.path(),
        "mine.toml",
        "base = \"3.0-vanilla\"\nkswapd_writepage_max_priority = 9\n",
    );
    let r = resolve_file(&p).unwrap();
    let vanilla = resolve_preset("3.0-vanilla").unwrap().profile;
    assert_eq!(r.profile.kswapd_writepage_max_priority, 9);
    assert_eq!(r.profile.dirty_limit_scope, vanilla.dirty_limit_scope);
    assert_eq!(r.profile.name, "mine");
    assert_eq!(
        r.sources["kswapd_writepage_max_priority"],
        format!("file {}", p.display())
    );
    assert_eq!(r.sources["task_dirty_limit"], "base 3.0-vanilla");
    let shown = show(&r);
    assert!(
        shown.contains("reclaim.kswapd_writepage_max_priority = 9"),
        "{shown}"
    );
    assert!(shown.contains("# base 3.0-vanilla"), "{shown}");
}

#[test]
fn unknown_keys_bad_values_bad_bases_and_contradictions_name_the_key() {
    let d = tempfile::tempdir().unwrap();
    let cases = [
        (
            "base = \"3.0-vanilla\"\nkswapd_writepage_max_prio = 9\n",
            "kswapd_writepage_max_prio",
        ),
        ("base = \"2.4\"\n", "key `base`"),
        ("base = 3\n", "key `base`"),
        (
            "base = \"3.7\"\nproportion_shift_fixed = 12\n",
            "proportion_shift_fixed",
        ),
        (
            "base = \"3.0-vanilla\"\nkswapd_writepage_max_priority = 13\n",
            "kswapd_writepage_max_priority",
        ),
        (
            "base = \"3.0-vanilla\"\nskipped_dirty_file_page = \"drop\"\n",
            "drop",
        ),
        (
            "base = \"3.0-vanilla\"\nwriteback_chunk = \"bandwidth\"\n",
            "`writeback_chunk` = \"bandwidth\"",
        ),
    ];
    for (text, want) in cases {
        let p = write(d.path(), "bad.toml", text);
        let e = resolve_file(&p).unwrap_err();
        assert!(e.contains(want), "{text:?} -> {e}");
        // The file and the line of the key at fault, as scenario errors say.
        let line = if text.starts_with("base = \"3.0-vanilla\"") || text.contains("3.7") {
            2
        } else {
            1
        };
        assert!(
            e.starts_with(&format!("{}:{line}: ", p.display())),
            "{text:?} -> {e}"
        );
    }
}

#[test]
fn set_overrides_one_key_bare_or_with_its_section() {
    let base = resolve_preset("3.0-vanilla").unwrap();
    let r = apply_sets(&base, &["reclaim.kswapd_writepage_max_priority=9".into()]).unwrap();
    assert_eq!(r.profile.kswapd_writepage_max_priority, 9);
    assert_eq!(r.sources["kswapd_writepage_max_priority"], "--set");
    assert!(r
        .profile
        .name
        .ends_with("--set kswapd_writepage_max_priority=9"));
    let r = apply_sets(&base, &["skipped_dirty_file_page=immediate-reclaim".into()]).unwrap();
    assert_eq!(
        r.profile.skipped_dirty_file_page,
        super::super::SkippedDirtyPage::ImmediateReclaim
    );
    for (bad, want) in [
        (
            "writeback.kswapd_writepage_max_priority=9",
            "section `reclaim`",
        ),
        ("nosuch=1", "unknown key `nosuch`"),
        ("kswapd_writepage_max_priority", "KEY=VALUE"),
        (
            "kswapd_writepage_max_priority=lots",
            "kswapd_writepage_max_priority",
        ),
    ] {
        let e = apply_sets(&base, &[bad.into()]).unwrap_err();
        assert!(e.contains(want), "{bad} -> {e}");
    }
}
