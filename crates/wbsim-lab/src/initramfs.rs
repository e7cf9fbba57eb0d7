//! The guest's initramfs, written as the kernel unpacks it
//! (`init/initramfs.c`: the "newc" cpio format, uncompressed, which every
//! kernel with CONFIG_BLK_DEV_INITRD reads): `/init` (the guest binary),
//! `/dev/console` (so init has a console before devtmpfs is mounted),
//! the plan and the kernel modules. Written by hand rather than with
//! cpio(1) so that no root (for the device node) and no tool is needed,
//! and the archive is byte-identical for the same inputs (mtime 0).

/// A file or directory of the archive.
enum Entry<'a> {
    Dir(&'a str),
    File(&'a str, u32, &'a [u8]),
    CharDev(&'a str, u32, u32),
}

/// An archive being assembled.
#[derive(Default)]
pub struct Initramfs {
    bytes: Vec<u8>,
    next_ino: u32,
}

fn pad4(v: &mut Vec<u8>) {
    while !v.len().is_multiple_of(4) {
        v.push(0);
    }
}

impl Initramfs {
    /// An archive holding `/dev/console` and the usual mount points.
    pub fn new() -> Initramfs {
        let mut a = Initramfs {
            bytes: Vec::new(),
            next_ino: 1,
        };
        for d in [
            "dev",
            "proc",
            "sys",
            "tmp",
            "wbsim-lab",
            "wbsim-lab/modules",
        ] {
            a.dir(d);
        }
        a.push(Entry::CharDev("dev/console", 5, 1));
        a
    }

    /// Add a directory (parents first).
    pub fn dir(&mut self, path: &str) {
        self.push(Entry::Dir(path));
    }

    /// Add a regular file; `executable` gives it mode 0755, else 0644.
    pub fn file(&mut self, path: &str, data: &[u8], executable: bool) {
        let mode = if executable { 0o755 } else { 0o644 };
        self.push(Entry::File(path, mode, data));
    }

    fn push(&mut self, e: Entry) {
        let (name, mode, data, rdev): (&str, u32, &[u8], (u32, u32)) = match e {
            Entry::Dir(p) => (p, 0o040_755, &[], (0, 0)),
            Entry::File(p, m, d) => (p, 0o100_000 | m, d, (0, 0)),
            Entry::CharDev(p, maj, min) => (p, 0o020_600, &[], (maj, min)),
        };
        let ino = self.next_ino;
        self.next_ino += 1;
        self.header(name, ino, mode, data.len() as u32, rdev);
        self.bytes.extend_from_slice(data);
        pad4(&mut self.bytes);
    }

    fn header(&mut self, name: &str, ino: u32, mode: u32, size: u32, rdev: (u32, u32)) {
        let nlink = if mode & 0o040_000 != 0 { 2 } else { 1 };
        let fields = [
            ino,
            mode,
            0,
            0,
            nlink,
            0,
            size,
            0,
            0,
            rdev.0,
            rdev.1,
            name.len() as u32 + 1,
            0,
        ];
        self.bytes.extend_from_slice(b"070701");
        for f in fields {
            self.bytes.extend_from_slice(format!("{f:08X}").as_bytes());
        }
        self.bytes.extend_from_slice(name.as_bytes());
        self.bytes.push(0);
        pad4(&mut self.bytes);
    }

    /// The archive with its trailer.
    pub fn finish(mut self) -> Vec<u8> {
        self.header("TRAILER!!!", 0, 0, 0, (0, 0));
        // The kernel reads whole 512-byte blocks comfortably.
        while !self.bytes.len().is_multiple_of(512) {
            self.bytes.push(0);
        }
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Read back names, modes and sizes as the kernel's unpacker would.
    fn entries(a: &[u8]) -> Vec<(String, u32, Vec<u8>, u32)> {
        let mut out = Vec::new();
        let mut i = 0;
        loop {
            assert_eq!(&a[i..i + 6], b"070701");
            let f = |k: usize| {
                u32::from_str_radix(
                    std::str::from_utf8(&a[i + 6 + 8 * k..i + 14 + 8 * k]).unwrap(),
                    16,
                )
                .unwrap()
            };
            let (mode, size, rmaj, namesize) = (f(1), f(6) as usize, f(9), f(11) as usize);
            let name = std::str::from_utf8(&a[i + 110..i + 110 + namesize - 1])
                .unwrap()
                .to_string();
            let mut j = i + 110 + namesize;
            j = (j + 3) & !3;
            if name == "TRAILER!!!" {
                return out;
            }
            out.push((name, mode, a[j..j + size].to_vec(), rmaj));
            i = (j + size + 3) & !3;
        }
    }

    #[test]
    fn archive_holds_console_init_and_files_padded_to_four_bytes() {
        let mut a = Initramfs::new();
        a.file("init", b"\x7fELF12345", true);
        a.file("wbsim-lab/plan.json", b"{}", false);
        let bytes = a.finish();
        assert_eq!(bytes.len() % 512, 0);
        let e = entries(&bytes);
        let console = e.iter().find(|x| x.0 == "dev/console").unwrap();
        assert_eq!((console.1, console.3), (0o020_600, 5));
        let init = e.iter().find(|x| x.0 == "init").unwrap();
        assert_eq!(
            (init.1, init.2.as_slice()),
            (0o100_755, &b"\x7fELF12345"[..])
        );
        let plan = e.iter().find(|x| x.0 == "wbsim-lab/plan.json").unwrap();
        assert_eq!(plan.2, b"{}");
    }

    #[test]
    fn same_inputs_same_bytes() {
        let build = || {
            let mut a = Initramfs::new();
            a.file("init", b"x", true);
            a.finish()
        };
        assert_eq!(build(), build());
    }
}
