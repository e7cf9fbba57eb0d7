//! Kernel modules from the initramfs, loaded with init_module(2) (not
//! finit_module, which Linux 3.2 lacks), in the plan's order.

use std::path::Path;

use crate::sys;

/// Load one module image; an already loaded module (EEXIST) is fine.
/// Returns whether it was loaded now.
pub fn load(path: &Path) -> Result<bool, String> {
    let name = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let image = std::fs::read(path).map_err(|e| {
        format!(
            "module {name}: reading {}: {}",
            path.display(),
            sys::err_text(&e)
        )
    })?;
    // SAFETY: image is a readable buffer of image.len() bytes; the
    // parameter string is an empty C string.
    let r = unsafe {
        libc::syscall(
            libc::SYS_init_module,
            image.as_ptr(),
            image.len() as libc::c_ulong,
            c"".as_ptr(),
        )
    };
    if r == 0 {
        return Ok(true);
    }
    let e = sys::last_error();
    if e.raw_os_error() == Some(libc::EEXIST) {
        return Ok(false);
    }
    Err(format!("loading module {name}: {}", sys::err_text(&e)))
}

/// Load `names` from `dir` in order.
pub fn load_all(dir: &Path, names: &[String]) -> Result<Vec<String>, String> {
    let mut loaded = Vec::new();
    for n in names {
        if load(&dir.join(n))? {
            loaded.push(n.clone());
        }
    }
    Ok(loaded)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_module_names_itself() {
        let e = load(Path::new("/nonexistent/virtio_blk.ko")).unwrap_err();
        assert!(e.starts_with("module virtio_blk.ko: reading"), "{e}");
    }
}
