//! Fixtures shared by the unit tests of several modules.

use crate::kernel::preset;
use crate::mm::MmHost;
use crate::scenario::{parse_scenario, Scenario};
use crate::system::{build_system, System};

/// The USB stick the end-to-end tests use too.
const USB_STICK_DEVICE: &str = include_str!("../tests/fixtures/usb-stick-device.toml");

/// A 64 MiB machine of `cpus` CPUs with a USB stick formatted `fs`, running
/// one 4 KiB dd per file name (the dd tasks take CPUs 0, 1, ... in order).
pub(crate) fn usb_stick_scenario(kernel: &str, fs: &str, cpus: u32, files: &[&str]) -> Scenario {
    let mut text = format!(
        r#"
kernel = "{kernel}"
[machine]
cpus = {cpus}
[[machine.zone]]
name = "DMA32"
size_mib = 64
{USB_STICK_DEVICE}
[[fs]]
type = "{fs}"
device = "sdb"
mount = "disk"
"#
    );
    for f in files {
        text += &format!("[[task]]\ncommand = \"dd if=/dev/zero of=disk/{f} bs=4k count=1\"\n");
    }
    parse_scenario(&text, "usb.toml").unwrap()
}

/// `usb_stick_scenario` on one CPU, built on `kernel`; returns the system
/// and the regular files' inodes in creation order.
pub(crate) fn usb_stick_files(kernel: &str, fs: &str, files: &[&str]) -> (System, Vec<u32>) {
    let sc = usb_stick_scenario(kernel, fs, 1, files);
    let sys = build_system(&sc, &preset(kernel).unwrap(), 1);
    let inodes = (0..sys.mm().nr_inodes() as u32)
        .filter(|&i| sys.mm().inode(i).kind == crate::mm::inode::MappingKind::Regular)
        .collect();
    (sys, inodes)
}

/// Pages `0..n` of inode `ino`, created through the page cache as a write
/// does (`__GFP_WRITE`) and dirtied by task 0.
pub(crate) fn dirty_file_pages(sys: &mut System, ino: u32, n: u32) -> Vec<u32> {
    use crate::mm::filemap::Filemap;
    use crate::mm::MmHost;
    let gfp = crate::mm::Gfp::movable(true);
    (0..n)
        .map(|idx| {
            let pfn = sys.find_or_create_page(0, ino, idx, gfp).unwrap();
            sys.set_page_dirty(pfn, Some(0));
            pfn
        })
        .collect()
}
