//! Architecture rules of the library, checked on the text of `src/` (issue 27).
//!
//! 1. `library_top_level_folders_form_no_import_cycle`: the top-level modules
//!    of the library (each folder of `src/`, and each file but `lib.rs`) must
//!    not import each other in a cycle, so that each subsystem can be read,
//!    tested and changed on top of the ones below it. A -> B is any
//!    `crate::B` path, or `super::` path climbing out of A, in A's code.
//! 2. `profile_fields_are_read_only_at_dispatch_points`: outside
//!    `src/kernel/`, `KernelProfile` fields are read only in the files of
//!    `DISPATCH_POINTS`, so that each era-varying decision is made in one
//!    place per mechanism rather than wherever its effect is felt.
//!    `dispatch_point_list_has_no_stale_entries` keeps that list honest.
//!
//! Test code does not count: files named `tests.rs` or `tests_*.rs`, files
//! under a `tests/` folder, modules declared `#[cfg(test)] mod x;` and inline
//! `#[cfg(test)] mod x { .. }` blocks. Comments (doc links included) and
//! string and char literals are blanked before searching.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The files of `src/` (outside `kernel/`) allowed to read `KernelProfile`
/// fields, each with the era-varying mechanism it dispatches.
const DISPATCH_POINTS: &[&str] = &[
    // Not a mechanism: `make_report` labels the report with the profile's name.
    "lib.rs",
    // Page-state accounting on redirty: 3.3's `account_page_redirty`.
    "writeback/account.rs",
    // Writeback plugging: per-task plug lists, a plug per writeback pass, or bios
    // straight into the queue (3.0 presets).
    "block/plug.rs",
    // Reclaim's treatment of dirty pages: who may write them (kswapd by priority,
    // direct reclaim), what becomes of skipped ones, throttling on dirty batches,
    // flagging inodes for the flusher (Gorman's RFC series, 3.2).
    "reclaim/dirty_pages.rs",
    // Dirty-limit scope (global or per zone; the allocator asks here through
    // `MmHost::dirty_limit_scope`), bdi limit clipping (2.6.24), task dirty limit.
    "writeback/limits.rs",
    // BDI proportions: floating (period shift) or flexible (3.7+).
    "writeback/shares.rs",
    // Dirty throttling: the writer writes back (2.6.24 – 3.1) or IO-less (3.2+).
    "writeback/throttle.rs",
    // The flusher's pass: 1024 pages shared by its inodes (3.0) or a
    // bandwidth-sized chunk per inode in a time-limited pass (3.1+).
    "writeback/chunk.rs",
    // NR_FREE_PAGES drift safety: percpu_drift_mark and pressure
    // thresholds (2.6.36 / 2.6.38+) or neither (2.6.24).
    "mm/free_counter.rs",
    // get_scan_count's forced batch for kswapd: small zones (3.0), always
    // (3.2) or only all_unreclaimable zones (3.3+).
    "reclaim/mod.rs",
    // Node-based reclaim (4.8+): who owns the LRU lists (zone or node) and
    // whether they are generations (MGLRU), kswapd balancing zone by zone or
    // the node (4.12+), reclaim_throttle in place of congestion waits (5.16+).
    "reclaim/node.rs",
    // Watermark gaps: a quarter and a half of min (≤ 4.5) or
    // vm.watermark_scale_factor of the zone (4.6+).
    "mm/zone.rs",
    // Page mobility grouping and watermark boosting (5.0+).
    "mm/buddy.rs",
    // Per-CPU page lists: 6 x batch, frees cold (2.6.24 – 3.x), or high from
    // the low watermark, scaled frees, capped under reclaim (5.14+).
    "mm/pcp.rs",
    // Writeback completion per request, or per ext4 io_end / xfs ioend in
    // a worker (6.1: ext4 dioread_nolock 5.6+, iomap IOEND_BATCH_SIZE).
    "fs/ioend.rs",
    // jbd2's commit: ordered data first (3.x) or none with unwritten
    // extents, and writers waiting on shadowed buffers (6.1).
    "fs/jbd2.rs",
    // Which filesystems attach buffer heads to data pages (xfs until 4.x).
    "fs/mod.rs",
    // The block layer's form: single queue with congestion, or blk-mq
    // with writeback throttling (4.10+ / 5.0+).
    "block/wbt.rs",
    // Wake-up placement with no idle CPU: the previous CPU (3.x) or the
    // lighter of waker's and previous by PELT load (4.13+).
    "sched/pelt.rs",
    // sched_wakeup's layout: `success=1` up to 4.2.
    "sched/trace.rs",
];

#[test]
fn library_top_level_folders_form_no_import_cycle() {
    let (sources, nodes) = library_sources();
    let mut edges: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    for s in &sources {
        let Some(from) = top_module(&s.rel) else {
            continue;
        };
        for (line, to) in module_refs(&tokens(&s.code), module_depth(&s.rel)) {
            if to != from && nodes.contains(&to) {
                let at = format!("src/{}:{line}", s.rel);
                edges.entry((from.to_string(), to)).or_default().push(at);
            }
        }
    }
    let show = |(a, b): &(String, String)| {
        let at = &edges[&(a.clone(), b.clone())];
        format!("    {a} -> {b}: {} ({} in all)\n", at[0], at.len())
    };
    let sccs = strongly_connected(&edges.keys().cloned().collect());
    let mut msg = String::new();
    for scc in &sccs {
        let names: Vec<&str> = scc.iter().map(String::as_str).collect();
        msg += &format!("  cycle {{{}}}:\n", names.join(", "));
        let inside = |(a, b): &&(String, String)| scc.contains(a) && scc.contains(b);
        msg += &edges.keys().filter(inside).map(show).collect::<String>();
    }
    let all: String = edges.keys().map(show).collect();
    assert!(
        sccs.is_empty(),
        "top-level modules of src/ import each other in a cycle (issue 27); \
         break each cycle by moving code or turning an import around:\n{msg}\
         all edges between top-level modules:\n{all}"
    );
}

#[test]
fn profile_fields_are_read_only_at_dispatch_points() {
    let (sources, _) = library_sources();
    let offences: Vec<String> = sources
        .iter()
        .filter(|s| !s.rel.starts_with("kernel/") && !DISPATCH_POINTS.contains(&s.rel.as_str()))
        .flat_map(|s| {
            let reads = profile_reads(&tokens(&s.code));
            reads.into_iter().map(move |(line, field)| {
                format!("  src/{}:{line} reads profile field `{field}`\n", s.rel)
            })
        })
        .collect();
    assert!(
        offences.is_empty(),
        "KernelProfile fields are read outside src/kernel/ and DISPATCH_POINTS:\n{}\
         Move the decision to the dispatch point of its mechanism, or add the file \
         to DISPATCH_POINTS in tests/architecture.rs with a comment naming the \
         era-varying mechanism it decides.",
        offences.concat()
    );
}

#[test]
fn dispatch_point_list_has_no_stale_entries() {
    let (sources, _) = library_sources();
    let mut problems = Vec::new();
    for (i, &entry) in DISPATCH_POINTS.iter().enumerate() {
        let source = sources.iter().find(|s| s.rel == entry);
        if DISPATCH_POINTS[..i].contains(&entry) {
            problems.push(format!("  {entry}: listed twice"));
        } else if entry.starts_with("kernel/") {
            problems.push(format!("  {entry}: src/kernel/ needs no entry"));
        } else if source.is_none() {
            problems.push(format!("  {entry}: no such non-test file under src/"));
        } else if source.is_some_and(|s| profile_reads(&tokens(&s.code)).is_empty()) {
            problems.push(format!("  {entry}: reads no profile field"));
        }
    }
    assert!(
        problems.is_empty(),
        "stale DISPATCH_POINTS entries in tests/architecture.rs; remove them:\n{}",
        problems.join("\n")
    );
}

/// Subsystems own their state: the machine (`system::System`) and each
/// subsystem's state struct expose methods, not fields.
#[test]
fn machine_and_subsystem_state_have_no_public_fields() {
    let (sources, _) = library_sources();
    let owners = [
        ("system/mod.rs", "System"),
        ("sched/mod.rs", "Core"),
        ("mm/memory.rs", "Memory"),
        ("block/layer.rs", "BlockLayer"),
        ("writeback/state.rs", "Writeback"),
        ("fs/state.rs", "Filesystems"),
        ("reclaim/state.rs", "Reclaim"),
        ("workload/state.rs", "Workloads"),
    ];
    let mut problems = Vec::new();
    for (rel, name) in owners {
        let Some(source) = sources.iter().find(|s| s.rel == rel) else {
            problems.push(format!("  src/{rel}: missing (it should define {name})"));
            continue;
        };
        let head = format!("pub struct {name} {{");
        let Some(start) = source.code.find(&head) else {
            problems.push(format!("  src/{rel}: no `{head}`"));
            continue;
        };
        let body = &source.code[start + head.len()..];
        let body = &body[..body.find("\n}").unwrap_or(body.len())];
        for line in body.lines() {
            let t = line.trim_start();
            // `pub(super)` keeps a field inside the subsystem's folder.
            if t.starts_with("pub ") || t.starts_with("pub(crate)") {
                problems.push(format!("  src/{rel}: {name}: `{}`", t.trim_end()));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "public fields on the machine or a subsystem's state (issue 27: give the \
         others a method instead):\n{}",
        problems.join("\n")
    );
}

/// A non-test library file: its path relative to `src/` and its code with
/// comments, literals and test modules blanked (lines kept).
struct Source {
    rel: String,
    code: String,
}

/// The non-test sources of the library and the names of its top-level modules.
fn library_sources() -> (Vec<Source>, BTreeSet<String>) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    list_rs_files(&src, "", &mut files);
    let (mut sources, mut test_mods, mut nodes) = (Vec::new(), Vec::new(), BTreeSet::new());
    for rel in files {
        let text = std::fs::read_to_string(src.join(&rel)).expect("readable source");
        let (code, decls) = strip_test_modules(&blank_comments_and_literals(&text));
        for d in decls {
            let path = format!("{}/{d}", module_dir(&rel));
            test_mods.push(path.trim_start_matches('/').to_string());
        }
        nodes.extend(top_module(&rel).map(String::from));
        sources.push(Source { rel, code });
    }
    sources.retain(|s| !is_test_file(&s.rel, &test_mods));
    (sources, nodes)
}

fn list_rs_files(dir: &Path, prefix: &str, out: &mut Vec<String>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let name = format!("{prefix}{}", e.file_name().to_string_lossy());
        if e.path().is_dir() {
            list_rs_files(&e.path(), &format!("{name}/"), out);
        } else if name.ends_with(".rs") {
            out.push(name);
        }
    }
}

/// `tests.rs`, `tests_*.rs`, anything under `tests/`, or a file of a module
/// declared `#[cfg(test)] mod x;` (given as paths like `trace/synthetic`).
fn is_test_file(rel: &str, test_mods: &[String]) -> bool {
    let (dirs, name) = rel.rsplit_once('/').unwrap_or(("", rel));
    name == "tests.rs"
        || name.starts_with("tests_")
        || dirs.split('/').any(|d| d == "tests")
        || test_mods
            .iter()
            .any(|m| rel == format!("{m}.rs") || rel.starts_with(&format!("{m}/")))
}

/// The top-level module a file belongs to; `None` for `lib.rs`.
fn top_module(rel: &str) -> Option<&str> {
    match rel.split_once('/') {
        Some((dir, _)) => Some(dir),
        None => rel.strip_suffix(".rs").filter(|&m| m != "lib"),
    }
}

/// Where a file's child modules live: `mm/page.rs` -> `mm/page`, `mm/mod.rs` -> `mm`.
fn module_dir(rel: &str) -> &str {
    let path = rel.strip_suffix(".rs").unwrap_or(rel);
    Some(path)
        .filter(|&p| p != "lib")
        .map_or("", |p| p.strip_suffix("/mod").unwrap_or(p))
}

/// How many `super::` lead from the file's module to the crate root (inline
/// non-test modules are not counted, so `super` in them is approximate).
fn module_depth(rel: &str) -> usize {
    module_dir(rel).split('/').filter(|d| !d.is_empty()).count()
}

/// `s` with every character but newlines replaced by a space.
fn spaces(s: impl Iterator<Item = char>) -> String {
    s.map(|ch| if ch == '\n' { ch } else { ' ' }).collect()
}

/// Replace comments and string/char literals by spaces, keeping newlines.
fn blank_comments_and_literals(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let n = c.len();
    let at = |i: usize, a: char, b: char| c.get(i) == Some(&a) && c.get(i + 1) == Some(&b);
    let ident = |i: usize| c[i].is_alphanumeric() || c[i] == '_';
    let hashes_at = |i: usize| c[i..].iter().take_while(|&&h| h == '#').count();
    let (mut out, mut i) = (String::new(), 0);
    while i < n {
        let (start, hashes) = (i, hashes_at(i + 1));
        let raw = c[i] == 'r'
            && c.get(i + 1 + hashes) == Some(&'"')
            && (i == 0 || !ident(i - 1) || (c[i - 1] == 'b' && (i < 2 || !ident(i - 2))));
        if at(i, '/', '/') {
            i = (i..n).find(|&k| c[k] == '\n').unwrap_or(n);
        } else if at(i, '/', '*') {
            let mut depth = 0;
            while i < n {
                depth += at(i, '/', '*') as i32 - at(i, '*', '/') as i32;
                i += 1 + (at(i, '/', '*') || at(i, '*', '/')) as usize;
                if depth == 0 {
                    break;
                }
            }
        } else if raw {
            let close = (i + 2 + hashes..n).find(|&k| c[k] == '"' && hashes_at(k + 1) >= hashes);
            i = close.map_or(n, |k| k + 1 + hashes);
        } else if c[i] == '"' {
            i += 1;
            while i < n && c[i] != '"' {
                i += if c[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
        } else if at(i, '\'', '\\') {
            i = (i + 3..n).find(|&k| c[k] == '\'').map_or(n, |k| k + 1);
        } else if c[i] == '\'' && c.get(i + 2) == Some(&'\'') {
            i += 3;
        } else {
            out.push(c[i]);
            i += 1;
            continue;
        }
        out += &spaces(c[start..i.min(n)].iter().copied());
    }
    out
}

/// Blank `#[cfg(test)] mod x { .. }` blocks of blanked code; also return the
/// names `x` of `#[cfg(test)] mod x;` declarations.
fn strip_test_modules(code: &str) -> (String, Vec<String>) {
    const ATTR: &str = "#[cfg(test)]";
    let (mut out, mut decls, mut from) = (code.to_string(), Vec::new(), 0);
    while let Some(pos) = out[from..].find(ATTR).map(|p| p + from) {
        from = pos + ATTR.len();
        let Some(brace) = out[from..].find(['{', ';']).map(|p| p + from) else {
            break;
        };
        let mut head = out[from..brace].to_string(); // attributes, visibility, `mod x`
        while let Some(a) = head.find("#[") {
            let b = head[a..].find(']').map_or(head.len(), |p| a + p + 1);
            head.replace_range(a..b, " ");
        }
        let name = match head.split_whitespace().collect::<Vec<_>>()[..] {
            ["mod", name] => name.to_string(),
            [vis, "mod", name] if vis.starts_with("pub") => name.to_string(),
            _ => continue,
        };
        let mut depth = 0;
        let end = if out[brace..].starts_with(';') {
            decls.push(name);
            brace + 1
        } else {
            let close = out[brace..].char_indices().find(|&(_, ch)| {
                depth += (ch == '{') as i32 - (ch == '}') as i32;
                depth == 0
            });
            close.map_or(out.len(), |(p, _)| brace + p + 1)
        };
        let blank = spaces(out[pos..end].chars());
        out.replace_range(pos..end, &blank);
        from = end;
    }
    (out, decls)
}

/// Identifiers, `::` and single punctuation characters, each with its line.
fn tokens(code: &str) -> Vec<(usize, String)> {
    let (mut out, mut line) = (Vec::new(), 1);
    let mut chars = code.chars().peekable();
    while let Some(ch) = chars.next() {
        if ch == '\n' {
            line += 1;
        } else if ch.is_alphanumeric() || ch == '_' {
            let mut word = ch.to_string();
            while let Some(next) = chars.next_if(|c| c.is_alphanumeric() || *c == '_') {
                word.push(next);
            }
            out.push((line, word));
        } else if ch == ':' && chars.next_if_eq(&':').is_some() {
            out.push((line, "::".to_string()));
        } else if !ch.is_whitespace() {
            out.push((line, ch.to_string()));
        }
    }
    out
}

/// The text of token `i`, or "" past the end.
fn text(toks: &[(usize, String)], i: usize) -> &str {
    toks.get(i).map_or("", |(_, t)| t.as_str())
}

fn is_word(t: &str) -> bool {
    t.starts_with(|c: char| c.is_alphabetic() || c == '_')
}

/// The crate-root items (line, name) that `crate::x`, `crate::{x, y}` and
/// `super::`s climbing to the root name, in a file `depth` modules deep.
fn module_refs(toks: &[(usize, String)], depth: usize) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for i in 0..toks.len() {
        let mut j = i;
        if text(toks, i) == "crate" && text(toks, i + 1) == "::" {
            j += 2;
        } else if text(toks, i) == "super" && text(toks, i.wrapping_sub(1)) != "::" {
            while text(toks, j) == "super" && text(toks, j + 1) == "::" {
                j += 2;
            }
            if j == i || j - i != 2 * depth {
                continue;
            }
        } else {
            continue;
        }
        if text(toks, j) != "{" {
            out.extend(toks.get(j).filter(|(_, t)| is_word(t)).cloned());
            continue;
        }
        let mut nesting = 0;
        for k in j..toks.len() {
            nesting += (text(toks, k) == "{") as i32 - (text(toks, k) == "}") as i32;
            if nesting == 0 {
                break;
            }
            if nesting == 1 && matches!(text(toks, k), "{" | ",") && is_word(text(toks, k + 1)) {
                out.push(toks[k + 1].clone());
            }
        }
    }
    out
}

/// Field reads (line, field) of `profile.f` or `profile().f`, method calls excluded.
fn profile_reads(toks: &[(usize, String)]) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for i in (0..toks.len()).filter(|&i| text(toks, i) == "profile") {
        let call = text(toks, i + 1) == "(" && text(toks, i + 2) == ")";
        let j = if call { i + 3 } else { i + 1 };
        let field = text(toks, j + 1);
        if text(toks, j) == "." && is_word(field) && !matches!(text(toks, j + 2), "(" | "::") {
            out.push(toks[j + 1].clone());
        }
    }
    out
}

/// The strongly connected components of more than one node.
fn strongly_connected(edges: &BTreeSet<(String, String)>) -> Vec<BTreeSet<String>> {
    let mut succ: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (a, b) in edges {
        succ.entry(a).or_default().push(b);
        succ.entry(b).or_default();
    }
    let mut reaches: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for &from in succ.keys() {
        let (mut seen, mut stack) = (BTreeSet::new(), vec![from]);
        while let Some(n) = stack.pop() {
            stack.extend(succ[n].iter().filter(|&&m| seen.insert(m)));
        }
        reaches.insert(from, seen);
    }
    let mut sccs = Vec::new();
    for (&n, from_n) in &reaches {
        let mut scc = from_n.clone();
        scc.retain(|m| reaches[m].contains(n));
        if scc.len() > 1 && !sccs.contains(&scc) {
            sccs.push(scc);
        }
    }
    sccs.into_iter()
        .map(|scc| scc.into_iter().map(String::from).collect())
        .collect()
}

mod checker {
    use super::*;

    fn owned(v: &[(usize, &str)]) -> Vec<(usize, String)> {
        v.iter().map(|&(l, t)| (l, t.to_string())).collect()
    }

    #[test]
    fn blanking_keeps_code_and_lines_and_drops_test_modules() {
        let text = "use crate::a; // crate::b\n\
                    /* crate::c /* nested */ */ let s = \"crate::d {\";\n\
                    let c = '{'; let e = '\\''; let r = r#\"crate::e \" }\"#;\n\
                    #[cfg(test)]\nmod tests {\n\
                    fn f() { let s = \"}\"; let c = '}'; if x { } }\n}\n\
                    #[cfg(test)]\nmod helper;\nfn g<'a>(x: &'a str) { crate::f::g() }\n";
        let (code, decls) = strip_test_modules(&blank_comments_and_literals(text));
        assert_eq!(code.lines().count(), text.lines().count());
        assert_eq!(
            module_refs(&tokens(&code), 0),
            owned(&[(1, "a"), (10, "f")])
        );
        assert_eq!(decls, ["helper"]);
        assert!(!code.contains("fn f") && code.contains("fn g<'a>"));
    }

    #[test]
    fn finds_references_and_profile_reads() {
        let code = "use crate::{mm::X, system::{a, b}};\nuse super::super::fs::Y;\nuse super::z;";
        let refs = owned(&[(1, "mm"), (1, "system"), (2, "fs")]);
        assert_eq!(module_refs(&tokens(code), 2), refs);
        let code = "self.profile.a; sys.profile().b; self.profile.c.per_zone();\n\
                    self.profile.clone(); let p = profile\n    .d;\n\
                    kernel::profile().e; profile_x.f;";
        let reads = owned(&[(1, "a"), (1, "b"), (1, "c"), (3, "d"), (4, "e")]);
        assert_eq!(profile_reads(&tokens(code)), reads);
    }

    #[test]
    fn recognises_test_files_and_top_modules() {
        let mods = ["trace/synthetic".to_string()];
        for rel in "mm/tests.rs scenario/tests_limits.rs a/tests/b.rs trace/synthetic.rs".split(' ')
        {
            assert!(is_test_file(rel, &mods), "{rel}");
        }
        assert!(!is_test_file("mm/page.rs", &mods) && !is_test_file("trace/mod.rs", &mods));
        let tops = ["mm/page.rs", "estimate.rs", "lib.rs"].map(top_module);
        assert_eq!(tops, [Some("mm"), Some("estimate"), None]);
        assert_eq!(
            ["lib.rs", "mm/mod.rs", "mm/page.rs"].map(module_depth),
            [0, 1, 2]
        );
    }

    #[test]
    fn cycle_finder_reports_exactly_the_cycle() {
        let edges = [("a", "b"), ("b", "c"), ("c", "a"), ("d", "a"), ("c", "e")];
        let edges = edges.map(|(a, b)| (a.to_string(), b.to_string())).into();
        let expected: BTreeSet<String> = ["a", "b", "c"].map(String::from).into();
        assert_eq!(strongly_connected(&edges), [expected]);
    }
}
