//! The FUSE daemon a `fuse-ntfs` scenario needs in the guest: a static
//! ntfs-3g the user builds once (README, lab section) and passes with
//! `--ntfs-3g`. The guest has no libraries, so a dynamically linked one
//! is refused before anything boots.

use std::path::Path;

/// The ELF program-header type of an interpreter (`PT_INTERP`): a binary
/// that has one needs a dynamic loader.
const PT_INTERP: u32 = 3;

/// Does this 64-bit little-endian ELF ask for a dynamic loader?
fn has_interpreter(elf: &[u8]) -> bool {
    let u16_at = |o: usize| elf.get(o..o + 2).map(|b| u16::from_le_bytes([b[0], b[1]]));
    let u32_at = |o: usize| {
        elf.get(o..o + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let u64_at = |o: usize| {
        elf.get(o..o + 8)
            .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
    };
    let (Some(phoff), Some(phentsize), Some(phnum)) = (u64_at(0x20), u16_at(0x36), u16_at(0x38))
    else {
        return false;
    };
    (0..phnum as usize).any(|i| u32_at(phoff as usize + i * phentsize as usize) == Some(PT_INTERP))
}

/// Read and check the ntfs-3g binary for the guest.
pub fn read_ntfs3g(path: &Path) -> Result<Vec<u8>, String> {
    let bytes = std::fs::read(path).map_err(|e| {
        format!(
            "--ntfs-3g {}: {}",
            path.display(),
            wbsim::scenario::io_reason(&e)
        )
    })?;
    if !bytes.starts_with(b"\x7fELF\x02\x01") {
        return Err(format!(
            "--ntfs-3g {}: not a 64-bit x86 ELF executable",
            path.display()
        ));
    }
    if has_interpreter(&bytes) {
        return Err(format!(
            "--ntfs-3g {}: dynamically linked; the guest has no libraries, so it needs a \
             static ntfs-3g (the README's lab section builds one)",
            path.display()
        ));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal ELF64 header with one program header of type `ptype`.
    fn elf(ptype: u32) -> Vec<u8> {
        let mut b = vec![0u8; 0x40 + 0x38];
        b[..6].copy_from_slice(b"\x7fELF\x02\x01");
        b[0x20..0x28].copy_from_slice(&0x40u64.to_le_bytes());
        b[0x36..0x38].copy_from_slice(&0x38u16.to_le_bytes());
        b[0x38..0x3a].copy_from_slice(&1u16.to_le_bytes());
        b[0x40..0x44].copy_from_slice(&ptype.to_le_bytes());
        b
    }

    #[test]
    fn a_static_binary_is_taken_and_a_dynamic_or_foreign_one_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("ntfs-3g");
        std::fs::write(&p, elf(1)).unwrap();
        assert!(read_ntfs3g(&p).is_ok());
        std::fs::write(&p, elf(PT_INTERP)).unwrap();
        assert!(read_ntfs3g(&p).unwrap_err().contains("dynamically linked"));
        std::fs::write(&p, b"#!/bin/sh\n").unwrap();
        assert!(read_ntfs3g(&p).unwrap_err().contains("not a 64-bit"));
        let e = read_ntfs3g(&dir.path().join("missing")).unwrap_err();
        assert!(e.starts_with("--ntfs-3g "), "{e}");
    }

    #[test]
    fn the_hosts_own_shell_is_dynamic() {
        // A real binary of this host: Debian's /bin/sh is dynamically linked.
        if let Ok(b) = std::fs::read("/bin/sh") {
            assert!(has_interpreter(&b));
        }
    }
}
