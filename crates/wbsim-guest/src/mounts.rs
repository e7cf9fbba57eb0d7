//! What the init mounts and finds: the console (fds 0-2), proc, sysfs,
//! devtmpfs (or mknod(2) from /sys/block/*/dev), debugfs and tracefs;
//! the two virtio disks (/sys/block/vd*), told apart by the results
//! disk's magic; and the data disk's filesystem.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;
use std::time::{Duration, Instant};

use crate::protocol::{NTFS3G_PATH, RESULTS_MAGIC};
use crate::sys;

const DISK_WAIT: Duration = Duration::from_secs(20);

/// If fds 0-2 are closed (no /dev/console in the initramfs when the
/// kernel started init), open /dev/console on them.
pub fn ensure_console() {
    // SAFETY: fcntl(F_GETFD) only queries the descriptors.
    let closed = (0..3).any(|fd| unsafe { libc::fcntl(fd, libc::F_GETFD) } < 0);
    if !closed {
        return;
    }
    let Ok(path) = sys::cstring("/dev/console") else {
        return;
    };
    // SAFETY: path is a valid C string; the fds are ours to replace.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_RDWR | libc::O_NOCTTY);
        if fd < 0 {
            return;
        }
        for target in 0..3 {
            if fd != target && libc::fcntl(target, libc::F_GETFD) < 0 {
                libc::dup2(fd, target);
            }
        }
        if fd > 2 {
            libc::close(fd);
        }
    }
}

/// Mount unless `target` already holds `marker` (mounted before us, or
/// `init` run by hand on a running system: nothing is mounted over).
fn mount_if_absent(source: &str, target: &str, fstype: &str, marker: &str) -> io::Result<()> {
    if Path::new(target).join(marker).exists() {
        return Ok(());
    }
    std::fs::create_dir_all(target)?;
    match sys::mount(source, target, fstype, "") {
        Err(e) if e.raw_os_error() == Some(libc::EBUSY) => Ok(()),
        r => r,
    }
}

/// proc, sysfs, devtmpfs, debugfs and tracefs. Returns notes on what was
/// missing (for the log); proc and sysfs are required.
pub fn mount_pseudo_filesystems() -> Result<Vec<String>, String> {
    let mut notes = Vec::new();
    for (fs, at, marker) in [("proc", "/proc", "self"), ("sysfs", "/sys", "block")] {
        mount_if_absent(fs, at, fs, marker)
            .map_err(|e| format!("mounting {fs} at {at}: {}", sys::err_text(&e)))?;
    }
    if let Err(e) = mount_if_absent("devtmpfs", "/dev", "devtmpfs", "null") {
        notes.push(format!(
            "no devtmpfs ({}); device nodes are made with mknod",
            sys::err_text(&e)
        ));
    }
    ensure_console();
    if let Err(e) = mount_if_absent("debugfs", "/sys/kernel/debug", "debugfs", "bdi") {
        notes.push(format!("no debugfs: {}", sys::err_text(&e)));
    }
    // The kernel makes /sys/kernel/tracing when it has tracefs (4.1+).
    if Path::new("/sys/kernel/tracing").is_dir() {
        if let Err(e) = mount_if_absent("tracefs", "/sys/kernel/tracing", "tracefs", "trace") {
            notes.push(format!("no tracefs: {}", sys::err_text(&e)));
        }
    }
    Ok(notes)
}

/// The vd* block devices, sorted.
fn virtio_disks() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir("/sys/block")
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|n| n.starts_with("vd"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// /dev/NAME, made with mknod from /sys/block/NAME/dev ("major:minor")
/// when devtmpfs did not make it.
pub fn device_node(name: &str) -> Result<String, String> {
    let path = format!("/dev/{name}");
    if !Path::new(&path).exists() {
        mknod_from_sysfs(
            &path,
            &format!("/sys/block/{name}/dev"),
            libc::S_IFBLK | 0o600,
        )?;
    }
    Ok(path)
}

/// mknod `path` with the "major:minor" that the sysfs file `dev_file`
/// holds, `mode` giving the node's type and permissions.
fn mknod_from_sysfs(path: &str, dev_file: &str, mode: libc::mode_t) -> Result<(), String> {
    let numbers = sys::read_text(dev_file)
        .map_err(|e| format!("reading {dev_file}: {}", sys::err_text(&e)))?;
    let (major, minor) = numbers
        .trim()
        .split_once(':')
        .and_then(|(a, b)| Some((a.parse::<u32>().ok()?, b.parse::<u32>().ok()?)))
        .ok_or_else(|| format!("{dev_file}: unexpected {numbers:?}"))?;
    if let Some(dir) = Path::new(path).parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let c = sys::cstring(path).map_err(|e| e.to_string())?;
    // SAFETY: c is a valid path string.
    sys::check(unsafe { libc::mknod(c.as_ptr(), mode, libc::makedev(major, minor)) })
        .map_err(|e| format!("mknod {path}: {}", sys::err_text(&e)))
}

/// The first 16 bytes of a device.
fn magic_of(path: &str) -> io::Result<[u8; 16]> {
    let mut m = [0u8; 16];
    File::open(path)?.read_exact(&mut m)?;
    Ok(m)
}

/// The guest's disks by role.
pub struct Disks {
    pub data: String,
    pub results: String,
    /// The swap disk, when the plan asks for one.
    pub swap: Option<String>,
}

/// `mkswap`'s signature: the last 10 bytes of the first 4 KiB page
/// (`union swap_header` in include/linux/swap.h, version 1 since 2.2).
const SWAP_MAGIC: &[u8; 10] = b"SWAPSPACE2";
const SWAP_MAGIC_OFFSET: u64 = 4096 - 10;

/// Does the device's first page end with mkswap's signature?
fn is_swap(path: &str) -> bool {
    let mut m = [0u8; 10];
    let ok = File::open(path).and_then(|f| {
        use std::os::unix::fs::FileExt;
        f.read_exact_at(&mut m, SWAP_MAGIC_OFFSET)
    });
    ok.is_ok() && &m == SWAP_MAGIC
}

/// Wait (up to 20 s) for the virtio disks (two, three with `want_swap`)
/// and tell them apart: the results disk by its magic, the swap disk by
/// its swap header, the data disk is the one left.
pub fn find_disks(want_swap: bool) -> Result<Disks, String> {
    let wanted = if want_swap { 3 } else { 2 };
    let deadline = Instant::now() + DISK_WAIT;
    let mut disks = virtio_disks();
    while disks.len() < wanted && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
        disks = virtio_disks();
    }
    if disks.is_empty() {
        return Err(
            "no virtio block device: the kernel needs CONFIG_VIRTIO_PCI and \
                    CONFIG_VIRTIO_BLK (built in, or as modules in the image)"
                .into(),
        );
    }
    let (mut results, mut swaps, mut others) = (Vec::new(), Vec::new(), Vec::new());
    for d in &disks {
        let node = device_node(d)?;
        if magic_of(&node).is_ok_and(|m| &m == RESULTS_MAGIC) {
            results.push(d.clone());
        } else if want_swap && is_swap(&node) {
            swaps.push(d.clone());
        } else {
            others.push(d.clone());
        }
    }
    let swap = match (want_swap, swaps.as_slice()) {
        (false, _) => None,
        (true, [s]) => Some(s.clone()),
        (true, _) => {
            return Err(format!(
                "expected one virtio disk with a swap header; found {} among {}",
                swaps.len(),
                disks.join(", ")
            ))
        }
    };
    match (results.as_slice(), others.as_slice()) {
        ([r], [d]) => Ok(Disks {
            data: d.clone(),
            results: r.clone(),
            swap,
        }),
        _ => Err(format!(
            "expected {wanted} virtio disks, one of them starting with the results magic; \
             found {} ({} with the magic)",
            disks.join(", "),
            results.len()
        )),
    }
}

/// The kernel config option of a filesystem type, for messages.
pub fn fs_config_option(fs_type: &str) -> String {
    match fs_type {
        "ext4" => "CONFIG_EXT4_FS".into(),
        "xfs" => "CONFIG_XFS_FS".into(),
        "btrfs" => "CONFIG_BTRFS_FS".into(),
        "fuse-ntfs" => "CONFIG_FUSE_FS".into(),
        other => format!("CONFIG_{}_FS", other.to_ascii_uppercase()),
    }
}

/// Mount the data disk at `target` (made if missing); `fuse-ntfs` by
/// running the ntfs-3g the host provided.
pub fn mount_data(device: &str, target: &Path, fs_type: &str, options: &str) -> Result<(), String> {
    std::fs::create_dir_all(target)
        .map_err(|e| format!("creating {}: {}", target.display(), sys::err_text(&e)))?;
    if fs_type == "fuse-ntfs" {
        return mount_fuse_ntfs(device, target, options);
    }
    let t = target.to_string_lossy();
    sys::mount(device, &t, fs_type, options).map_err(|e| {
        if e.raw_os_error() == Some(libc::ENODEV) {
            format!(
                "the kernel has no {fs_type} filesystem ({}), built in or as a module",
                fs_config_option(fs_type)
            )
        } else {
            format!(
                "mounting {device} ({fs_type}, options {options:?}) at {t}: {}",
                sys::err_text(&e)
            )
        }
    })
}

/// The ntfs-3g command line: device, mount point, `-o` options if any.
pub fn ntfs3g_args(device: &str, target: &Path, options: &str) -> Vec<String> {
    let mut a = vec![device.to_string(), target.to_string_lossy().into_owned()];
    if !options.is_empty() {
        a.extend(["-o".to_string(), options.to_string()]);
    }
    a
}

/// /dev/fuse, made with mknod from /sys/class/misc/fuse/dev when devtmpfs
/// did not make it; an error naming CONFIG_FUSE_FS when the kernel has no
/// FUSE.
fn ensure_dev_fuse() -> Result<(), String> {
    const DEV_FILE: &str = "/sys/class/misc/fuse/dev";
    if Path::new("/dev/fuse").exists() {
        return Ok(());
    }
    if !Path::new(DEV_FILE).exists() {
        return Err(
            "the kernel has no FUSE (CONFIG_FUSE_FS, built in or as a module) for fuse-ntfs".into(),
        );
    }
    mknod_from_sysfs("/dev/fuse", DEV_FILE, libc::S_IFCHR | 0o666)
}

/// Mount an NTFS data disk through FUSE: ntfs-3g mounts, forks its daemon
/// and exits 0; the daemon serves the mount until it is unmounted.
fn mount_fuse_ntfs(device: &str, target: &Path, options: &str) -> Result<(), String> {
    ensure_dev_fuse()?;
    if !Path::new(NTFS3G_PATH).exists() {
        return Err(format!(
            "fuse-ntfs needs ntfs-3g at {NTFS3G_PATH}; the host puts it there (wbsim lab run --ntfs-3g)"
        ));
    }
    let out = std::process::Command::new(NTFS3G_PATH)
        .args(ntfs3g_args(device, target, options))
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("running {NTFS3G_PATH}: {}", sys::err_text(&e)))?;
    if !out.status.success() {
        return Err(format!(
            "ntfs-3g {device} {} failed ({}): {}",
            target.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(())
}

/// umount(2) of the data disk.
pub fn unmount(target: &Path) -> io::Result<()> {
    let c = sys::cstring(&target.to_string_lossy())?;
    // SAFETY: c is a valid path string.
    sys::check(unsafe { libc::umount2(c.as_ptr(), 0) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_options_of_filesystems() {
        assert_eq!(fs_config_option("xfs"), "CONFIG_XFS_FS");
        assert_eq!(fs_config_option("f2fs"), "CONFIG_F2FS_FS");
        assert_eq!(fs_config_option("fuse-ntfs"), "CONFIG_FUSE_FS");
    }

    #[test]
    fn ntfs3g_gets_device_mount_point_and_options_only_when_given() {
        let t = Path::new("/work/disk");
        assert_eq!(ntfs3g_args("/dev/vda", t, ""), ["/dev/vda", "/work/disk"]);
        assert_eq!(
            ntfs3g_args("/dev/vda", t, "big_writes"),
            ["/dev/vda", "/work/disk", "-o", "big_writes"]
        );
    }

    #[test]
    fn a_swap_header_is_found_at_the_end_of_the_first_page_only() {
        let dir = tempfile::tempdir().unwrap();
        let swap = dir.path().join("swap.img");
        let mut page = vec![0u8; 8192];
        page[4086..4096].copy_from_slice(SWAP_MAGIC);
        std::fs::write(&swap, &page).unwrap();
        assert!(is_swap(swap.to_str().unwrap()));
        let other = dir.path().join("data.img");
        let mut page = vec![0u8; 8192];
        page[0..10].copy_from_slice(SWAP_MAGIC);
        std::fs::write(&other, &page).unwrap();
        assert!(!is_swap(other.to_str().unwrap()));
        assert!(!is_swap("/nonexistent/disk"));
    }
}
