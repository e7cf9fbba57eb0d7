//! Embed the built-in scenarios (`scenarios/**/*.toml`) and the validation
//! data (`validation/*.toml`) in the binary, so that `wbsim reproduce` needs
//! no files at run time. The table is generated from the directories, so no
//! code lists an experiment or a scenario by name.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn collect(dir: &Path, root: &Path, out: &mut Vec<(String, PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            collect(&p, root, out);
        } else if p.extension().is_some_and(|e| e == "toml") {
            let rel = p
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            out.push((rel, p));
        }
    }
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let repo = manifest.join("../..").canonicalize().unwrap();
    let mut code = String::new();
    for (name, dir) in [
        ("SCENARIO_FILES", "scenarios"),
        ("VALIDATION_FILES", "validation"),
    ] {
        let root = repo.join(dir);
        println!("cargo:rerun-if-changed={}", root.display());
        let mut files = Vec::new();
        collect(&root, &root, &mut files);
        writeln!(code, "pub const {name}: &[(&str, &str)] = &[").unwrap();
        for (rel, path) in &files {
            println!("cargo:rerun-if-changed={}", path.display());
            writeln!(
                code,
                "    ({rel:?}, include_str!({:?})),",
                path.display().to_string()
            )
            .unwrap();
        }
        writeln!(code, "];").unwrap();
    }
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("builtin_files.rs");
    std::fs::write(out, code).unwrap();
}
