//! Writing output files atomically: the bytes go to a temporary sibling
//! first and are renamed into place, so a failure never leaves half a file
//! behind. `stage` and `publish` are the two halves, for callers that must
//! publish several files together (the SVG and PNG of a plot).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Write a file via a temporary sibling and a rename.
pub fn write_atomically(path: &Path, bytes: impl AsRef<[u8]>) -> Result<(), String> {
    let tmp = stage(path, bytes.as_ref())?;
    publish(&tmp, path)
}

/// A fresh temporary name beside `path`, for streaming a file that
/// `publish` then renames into place.
pub fn temp_path_for(path: &Path) -> Result<PathBuf, String> {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let name = path
        .file_name()
        .ok_or_else(|| format!("{}: not a file name", path.display()))?;
    Ok(path.with_file_name(format!(
        ".{}.{}.{}.tmp",
        name.to_string_lossy(),
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    )))
}

/// Write `bytes` to a fresh temporary file beside `path`; returns its name.
pub fn stage(path: &Path, bytes: &[u8]) -> Result<PathBuf, String> {
    let tmp = temp_path_for(path)?;
    std::fs::write(&tmp, bytes).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        format!("{}: cannot write: {e}", path.display())
    })?;
    Ok(tmp)
}

/// Rename a staged file into place (removing it on failure).
pub fn publish(tmp: &Path, path: &Path) -> Result<(), String> {
    std::fs::rename(tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(tmp);
        format!("{}: cannot write: {e}", path.display())
    })
}
