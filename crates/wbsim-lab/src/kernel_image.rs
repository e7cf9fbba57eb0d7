//! Kernel images: a bzImage given by path, checked by its x86 boot header
//! (Documentation/x86/boot.txt: `0xAA55` at 0x1FE, `HdrS` at 0x202, the
//! version string's offset at 0x20E), or Debian's packaged kernel fetched
//! by `wbsim lab setup` with `apt-get download` and unpacked with
//! `dpkg-deb -x`, never installed. Debian's cloud kernel builds virtio as
//! modules; [`module_load_order`] finds them and their dependencies from
//! each module's own `.modinfo` `depends=` list (no depmod needed).

use std::path::{Path, PathBuf};

/// A kernel the lab can boot.
#[derive(Debug, Clone)]
pub struct KernelImage {
    /// `debian`, or the path as given.
    pub label: String,
    pub path: PathBuf,
    /// The version string of the boot header, e.g. `3.2.4 (root@h) #1 SMP ...`.
    pub version: String,
    /// Where the kernel's modules are (`lib/modules/<release>`), if any.
    pub modules_dir: Option<PathBuf>,
}

impl KernelImage {
    /// The release, the version string's first word (`3.2.4`, `6.1.0-56-cloud-amd64`).
    pub fn release(&self) -> &str {
        self.version.split_whitespace().next().unwrap_or("")
    }

    /// The major version number (3 for 3.2.4).
    pub fn major(&self) -> u32 {
        self.release()
            .split('.')
            .next()
            .and_then(|m| m.parse().ok())
            .unwrap_or(0)
    }
}

/// The version string of an x86 bzImage, or why the file is not one.
pub fn bzimage_version(bytes: &[u8]) -> Result<String, String> {
    if bytes.len() < 0x400 {
        return Err(format!(
            "{} bytes is too short for a kernel image",
            bytes.len()
        ));
    }
    if bytes[0x1FE..0x200] != [0x55, 0xAA] || &bytes[0x202..0x206] != b"HdrS" {
        return Err(
            "it is not an x86 bzImage (no 0xAA55 boot signature and \"HdrS\" \
             setup header at 0x1FE/0x202; give arch/x86/boot/bzImage, not vmlinux)"
                .into(),
        );
    }
    let protocol = u16::from_le_bytes([bytes[0x206], bytes[0x207]]);
    if protocol < 0x0200 {
        return Err(format!(
            "boot protocol {protocol:#x} is older than 2.00; QEMU -kernel needs a bzImage"
        ));
    }
    let off = u16::from_le_bytes([bytes[0x20E], bytes[0x20F]]) as usize + 0x200;
    let end = bytes[off.min(bytes.len())..]
        .iter()
        .position(|&b| b == 0)
        .map(|n| off + n)
        .ok_or("the boot header's kernel_version string is not terminated")?;
    let v = String::from_utf8_lossy(&bytes[off..end]).into_owned();
    if v.split('.')
        .next()
        .and_then(|m| m.parse::<u32>().ok())
        .is_none()
    {
        return Err(format!(
            "the boot header's version string {v:?} names no kernel release"
        ));
    }
    Ok(v)
}

/// Open a bzImage given by path.
pub fn from_path(path: &Path) -> Result<KernelImage, String> {
    let bytes = std::fs::read(path).map_err(|e| {
        format!(
            "--kernel-image {}: {}",
            path.display(),
            wbsim::scenario::io_reason(&e)
        )
    })?;
    let version =
        bzimage_version(&bytes).map_err(|e| format!("--kernel-image {}: {e}", path.display()))?;
    Ok(KernelImage {
        label: path.display().to_string(),
        path: path.to_path_buf(),
        version,
        modules_dir: None,
    })
}

/// Debian's kernel as `wbsim lab setup` left it under `lab_dir/debian`.
pub fn debian(lab_dir: &Path) -> Result<KernelImage, String> {
    let root = lab_dir.join("debian").join("root");
    let release =
        std::fs::read_to_string(lab_dir.join("debian").join("release")).map_err(|_| {
            format!(
                "the Debian kernel is not fetched yet (no {}): run `wbsim lab setup` first",
                lab_dir.join("debian/release").display()
            )
        })?;
    let release = release.trim();
    let path = root.join("boot").join(format!("vmlinuz-{release}"));
    let mut k = from_path(&path)?;
    k.label = "debian".into();
    k.modules_dir = Some(root.join("lib/modules").join(release));
    Ok(k)
}

/// The Debian packages of the kernel: the metapackage and the ABI it
/// points at (bookworm: `linux-image-6.1.0-NN-cloud-amd64`).
pub const DEBIAN_METAPACKAGE: &str = "linux-image-cloud-amd64";

/// Fetch and unpack Debian's kernel into `lab_dir/debian` (idempotent).
/// Returns the release.
pub fn fetch_debian(lab_dir: &Path) -> Result<String, String> {
    use std::process::Command;
    let dir = lab_dir.join("debian");
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let out = Command::new("apt-cache")
        .args(["depends", DEBIAN_METAPACKAGE])
        .output()
        .map_err(|e| format!("apt-cache: {e} (the lab fetches Debian's kernel with apt)"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let package = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("Depends: "))
        .find(|p| p.starts_with("linux-image-"))
        .ok_or_else(|| format!("apt-cache depends {DEBIAN_METAPACKAGE} names no linux-image package (is this Debian with bookworm sources?)"))?
        .to_string();
    let release = package.trim_start_matches("linux-image-").to_string();
    let have = std::fs::read_to_string(dir.join("release")).unwrap_or_default();
    if have.trim() == release
        && dir
            .join("root/boot")
            .join(format!("vmlinuz-{release}"))
            .exists()
    {
        return Ok(release);
    }
    let status = Command::new("apt-get")
        .args(["download", &package])
        .current_dir(&dir)
        .status()
        .map_err(|e| format!("apt-get: {e}"))?;
    if !status.success() {
        return Err(format!("apt-get download {package} failed ({status})"));
    }
    let deb = std::fs::read_dir(&dir)
        .map_err(|e| e.to_string())?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&format!("{package}_")) && n.ends_with(".deb"))
        })
        .ok_or("apt-get download left no .deb")?;
    let root = dir.join("root");
    let _ = std::fs::remove_dir_all(&root);
    let status = Command::new("dpkg-deb")
        .arg("-x")
        .arg(&deb)
        .arg(&root)
        .status()
        .map_err(|e| format!("dpkg-deb: {e}"))?;
    if !status.success() {
        return Err(format!("dpkg-deb -x {} failed ({status})", deb.display()));
    }
    std::fs::write(dir.join("release"), format!("{release}\n")).map_err(|e| e.to_string())?;
    Ok(release)
}

/// A module's `depends=` list, read from its `.modinfo` strings.
pub fn module_depends(ko: &[u8]) -> Vec<String> {
    const KEY: &[u8] = b"\0depends=";
    let Some(at) = ko.windows(KEY.len()).position(|w| w == KEY) else {
        return Vec::new();
    };
    let rest = &ko[at + KEY.len()..];
    let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
    String::from_utf8_lossy(&rest[..end])
        .split(',')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// Module names compare with `-` and `_` alike, as modprobe does.
fn norm(name: &str) -> String {
    name.replace('-', "_")
}

/// The module files to load, dependencies first, for the named modules;
/// modules built into the kernel (`modules.builtin`) are skipped.
pub fn module_load_order(modules_dir: &Path, wanted: &[&str]) -> Result<Vec<PathBuf>, String> {
    let mut index = std::collections::BTreeMap::new();
    let mut stack = vec![modules_dir.join("kernel")];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if let Some(n) = p
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_suffix(".ko"))
            {
                index.insert(norm(n), p);
            }
        }
    }
    let builtin: Vec<String> = std::fs::read_to_string(modules_dir.join("modules.builtin"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.rsplit('/').next()?.strip_suffix(".ko").map(norm))
        .collect();
    let mut order = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    fn visit(
        name: &str,
        index: &std::collections::BTreeMap<String, PathBuf>,
        builtin: &[String],
        seen: &mut std::collections::BTreeSet<String>,
        order: &mut Vec<PathBuf>,
    ) -> Result<(), String> {
        let n = norm(name);
        if builtin.contains(&n) || !seen.insert(n.clone()) {
            return Ok(());
        }
        let path = index.get(&n).ok_or_else(|| {
            format!("module {name} is neither built in nor under the kernel's modules")
        })?;
        let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        for dep in module_depends(&bytes) {
            visit(&dep, index, builtin, seen, order)?;
        }
        order.push(path.clone());
        Ok(())
    }
    for w in wanted {
        visit(w, &index, &builtin, &mut seen, &mut order)?;
    }
    Ok(order)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake_bzimage(version: &str) -> Vec<u8> {
        let mut b = vec![0u8; 0x2000];
        b[0x1FE] = 0x55;
        b[0x1FF] = 0xAA;
        b[0x202..0x206].copy_from_slice(b"HdrS");
        b[0x206..0x208].copy_from_slice(&0x020Au16.to_le_bytes());
        b[0x20E..0x210].copy_from_slice(&0x0800u16.to_le_bytes());
        b[0xA00..0xA00 + version.len()].copy_from_slice(version.as_bytes());
        b
    }

    #[test]
    fn bzimage_header_gives_the_release() {
        let v = bzimage_version(&fake_bzimage("3.2.4 (root@lab) #1 SMP")).unwrap();
        let k = KernelImage {
            label: "x".into(),
            path: "x".into(),
            version: v,
            modules_dir: None,
        };
        assert_eq!((k.release(), k.major()), ("3.2.4", 3));
    }

    #[test]
    fn files_that_are_not_kernels_are_refused_with_the_reason() {
        assert!(bzimage_version(b"#!/bin/sh\n")
            .unwrap_err()
            .contains("too short"));
        let elf = [b"\x7fELF".as_slice(), &[0u8; 0x1000]].concat();
        assert!(bzimage_version(&elf)
            .unwrap_err()
            .contains("not an x86 bzImage"));
        assert!(bzimage_version(&fake_bzimage("garbage"))
            .unwrap_err()
            .contains("no kernel release"));
    }

    #[test]
    fn module_order_puts_dependencies_first_and_skips_builtins() {
        let d = tempfile::tempdir().unwrap();
        let k = d.path().join("kernel/drivers");
        std::fs::create_dir_all(&k).unwrap();
        let ko = |deps: &str| {
            format!("\x7fELF\0license=GPL\0depends={deps}\0vermagic=6.1\0").into_bytes()
        };
        std::fs::write(k.join("virtio_blk.ko"), ko("virtio,virtio_ring")).unwrap();
        std::fs::write(k.join("virtio_ring.ko"), ko("virtio")).unwrap();
        std::fs::write(k.join("virtio.ko"), ko("")).unwrap();
        std::fs::write(d.path().join("modules.builtin"), "kernel/fs/ext4/ext4.ko\n").unwrap();
        let order = module_load_order(d.path(), &["virtio-blk", "ext4"]).unwrap();
        let names: Vec<_> = order
            .iter()
            .map(|p| p.file_name().unwrap().to_str().unwrap())
            .collect();
        assert_eq!(names, ["virtio.ko", "virtio_ring.ko", "virtio_blk.ko"]);
        assert!(module_load_order(d.path(), &["nosuch"])
            .unwrap_err()
            .contains("nosuch"));
    }
}
