//! `wbsim lab setup`: check for QEMU and the mkfs tools (printing the
//! exact `apt-get install` line for whatever is missing), fetch Debian's
//! kernel, and build the guest binary as a static musl executable.

use std::path::Path;
use std::process::Command;

/// A host tool the lab runs, and the Debian package that has it.
pub struct Tool {
    pub command: &'static str,
    pub package: &'static str,
    pub why: &'static str,
}

/// Every host tool the lab uses.
pub const TOOLS: &[Tool] = &[
    Tool {
        command: "qemu-system-x86_64",
        package: "qemu-system-x86",
        why: "boots the guest",
    },
    Tool {
        command: "mkfs.ext4",
        package: "e2fsprogs",
        why: "makes ext4 data disks",
    },
    Tool {
        command: "mkfs.xfs",
        package: "xfsprogs",
        why: "makes xfs data disks",
    },
    Tool {
        command: "mkfs.btrfs",
        package: "btrfs-progs",
        why: "makes btrfs data disks",
    },
    Tool {
        command: "mkntfs",
        package: "ntfs-3g",
        why: "makes NTFS data disks for fuse-ntfs scenarios",
    },
    Tool {
        command: "mkswap",
        package: "util-linux",
        why: "makes the swap disk of scenarios with [swap]",
    },
    Tool {
        command: "apt-get",
        package: "apt",
        why: "downloads Debian's kernel package",
    },
    Tool {
        command: "dpkg-deb",
        package: "dpkg",
        why: "unpacks Debian's kernel package without installing it",
    },
];

/// Where `command` is: on PATH, or in /sbin or /usr/sbin, where mkfs
/// lives and an ordinary user's PATH often does not go.
pub fn which(command: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/sbin".into(), "/usr/sbin".into()])
        .map(|d| d.join(command))
        .find(|p| is_executable(p))
}

/// Is `command` on PATH (or in /sbin, /usr/sbin)?
pub fn have(command: &str) -> bool {
    which(command).is_some()
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The tools missing on this host.
pub fn missing_tools() -> Vec<&'static Tool> {
    TOOLS.iter().filter(|t| !have(t.command)).collect()
}

/// The `apt-get install` line for the missing tools.
pub fn apt_line(missing: &[&Tool]) -> String {
    let mut pkgs: Vec<&str> = missing.iter().map(|t| t.package).collect();
    pkgs.dedup();
    format!("apt-get install --no-install-recommends {}", pkgs.join(" "))
}

/// The musl target the guest is built for (static, runs on 3.2 kernels).
pub const GUEST_TARGET: &str = "x86_64-unknown-linux-musl";

/// Build the guest binary with cargo in the source tree `workspace`.
/// Adds the musl target with rustup first when it is missing.
pub fn build_guest(workspace: &Path, log: &mut dyn FnMut(&str)) -> Result<(), String> {
    let installed = Command::new("rustup")
        .args(["target", "list", "--installed"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).contains(GUEST_TARGET))
        .unwrap_or(false);
    if !installed {
        log(&format!(
            "adding the {GUEST_TARGET} target: rustup target add {GUEST_TARGET}"
        ));
        let ok = Command::new("rustup")
            .args(["target", "add", GUEST_TARGET])
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            return Err(format!(
                "the guest is built for {GUEST_TARGET}, which is not installed and \
                 `rustup target add {GUEST_TARGET}` failed; install it and rerun setup"
            ));
        }
    }
    log(&format!(
        "building the guest: cargo build --release -p wbsim-guest --target {GUEST_TARGET}"
    ));
    let st = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args([
            "build",
            "--release",
            "-p",
            "wbsim-guest",
            "--target",
            GUEST_TARGET,
        ])
        .current_dir(workspace)
        .status()
        .map_err(|e| format!("cargo: {e}"))?;
    if !st.success() {
        return Err(format!("building the guest failed ({st})"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apt_line_names_each_missing_package_once() {
        let missing: Vec<&Tool> = TOOLS.iter().filter(|t| t.package != "apt").collect();
        let line = apt_line(&missing);
        assert!(
            line.starts_with("apt-get install --no-install-recommends qemu-system-x86 e2fsprogs")
        );
        assert_eq!(line.matches("xfsprogs").count(), 1);
    }

    #[test]
    fn have_finds_sh_and_not_a_made_up_tool() {
        assert!(have("sh"));
        assert!(!have("wbsim-no-such-tool"));
    }
}
