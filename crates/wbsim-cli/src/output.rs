//! A command's output files, planned before any simulation runs and
//! committed together after all of them are written.
//!
//! - **Checked first**: every output's directory exists and is writable (a
//!   temporary file is created there at once), the path is not a directory,
//!   no two outputs of one command share a path, and no output is an input.
//!   A mistake costs no simulation time.
//! - **Regular files are replaced by rename**, keeping the old file's
//!   permission bits (a 0600 file stays 0600); a symlink to a regular file
//!   keeps pointing at it, and the file it points to is replaced.
//! - **Anything else is written through, never replaced**: a device node,
//!   a FIFO or a socket is opened and written as a shell's `>` would (as
//!   root, `--trace /dev/null` must not replace /dev/null); `-` is standard
//!   output.
//! - **All or nothing**: the temporary files are renamed into place only
//!   when every output has been written. A failure, SIGINT, SIGTERM or
//!   SIGHUP removes them and leaves the previous set intact. Temporary
//!   names are `.NAME.wbsim-tmp-PID-N`; those left by a killed process
//!   (SIGKILL) are removed by the next command that writes NAME.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions, Permissions};
use std::io::Write;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

/// Temporary files not yet committed, removed by the signal handler.
static PENDING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// The marker in temporary names that a later run recognises.
const TMP_MARK: &str = ".wbsim-tmp-";

/// A signal arrived; its handler is cleaning up and will exit with 130.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Whether a signal's handler is under way. The command it interrupted
/// may fail first (the lab's QEMU killed under it): the process must
/// still exit with 130 from the handler, not with that failure.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Install the SIGINT/SIGTERM/SIGHUP handler that removes uncommitted
/// temporary files and exits with 130. Call once, at start.
pub fn install_signal_cleanup() {
    let _ = ctrlc::set_handler(|| {
        INTERRUPTED.store(true, Ordering::SeqCst);
        remove_pending();
        wbsim_lab::run::cleanup_on_signal();
        eprintln!("wbsim: interrupted; no output file was changed");
        std::process::exit(crate::exit::INTERRUPTED);
    });
}

fn remove_pending() {
    let paths = match PENDING.lock() {
        Ok(mut p) => std::mem::take(&mut *p),
        Err(poisoned) => std::mem::take(&mut *poisoned.into_inner()),
    };
    for p in paths {
        let _ = std::fs::remove_file(p);
    }
}

fn register(tmp: &Path) {
    if let Ok(mut p) = PENDING.lock() {
        p.push(tmp.to_path_buf());
    }
}

fn unregister(tmp: &Path) {
    if let Ok(mut p) = PENDING.lock() {
        p.retain(|x| x != tmp);
    }
}

/// Where one output goes.
enum Target {
    /// `-`: standard output, written at commit.
    Stdout,
    /// A regular file (new or existing): written to `tmp`, renamed at commit.
    Replace {
        tmp: PathBuf,
        file: Option<File>,
        keep_mode: Option<Permissions>,
    },
    /// A device node, FIFO or socket: written at commit (or streamed).
    WriteThrough,
}

struct Planned {
    /// The option that named it (`--json`), for messages.
    label: String,
    /// The path as given (or resolved through a symlink).
    path: PathBuf,
    target: Target,
    /// Bytes to write at commit (stdout and write-through targets).
    held: Option<Vec<u8>>,
}

/// The planned outputs of one command; see the module comment.
pub struct Outputs {
    planned: Vec<Planned>,
}

/// A handle to one planned output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputId(usize);

/// What a path resolves to, for duplicate checks: the canonical directory
/// and the file name (or the whole canonical path when it exists).
fn identity(path: &Path) -> Option<PathBuf> {
    if let Ok(p) = path.canonicalize() {
        return Some(p);
    }
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    Some(parent.canonicalize().ok()?.join(path.file_name()?))
}

impl Outputs {
    /// Check and reserve every output. `requests` are `(option, path)`
    /// pairs; `inputs` are files the command reads, which no output may be.
    pub fn plan(requests: &[(&str, &Path)], inputs: &[&Path]) -> Result<Outputs, String> {
        let mut seen: BTreeMap<PathBuf, String> = BTreeMap::new();
        for input in inputs {
            if let Some(id) = identity(input) {
                seen.insert(id, format!("the input {}", input.display()));
            }
        }
        let mut out = Outputs {
            planned: Vec::new(),
        };
        let mut stdout_by: Option<&str> = None;
        for &(label, path) in requests {
            if path == Path::new("-") {
                if let Some(other) = stdout_by {
                    return Err(format!(
                        "{label} -: standard output is already taken by {other} -"
                    ));
                }
                stdout_by = Some(label);
                out.planned.push(Planned {
                    label: label.to_string(),
                    path: path.to_path_buf(),
                    target: Target::Stdout,
                    held: Some(Vec::new()),
                });
                continue;
            }
            let shown = path.display();
            if let Some(id) = identity(path) {
                if let Some(other) = seen.get(&id) {
                    return Err(format!(
                        "{label} {shown}: the same file as {other}; give each output its own path"
                    ));
                }
                seen.insert(id, format!("{label} {shown}"));
            }
            out.planned.push(plan_one(label, path)?);
        }
        Ok(out)
    }

    /// Print the text report: on standard output, or on standard error
    /// when standard output is one of the outputs.
    pub fn print_text(&self, text: &str) {
        if self.uses_stdout() {
            eprint!("{text}");
        } else {
            print!("{text}");
        }
    }

    /// Whether standard output is one of the outputs (then the text report
    /// goes to standard error).
    pub fn uses_stdout(&self) -> bool {
        self.planned
            .iter()
            .any(|p| matches!(p.target, Target::Stdout))
    }

    /// The id of the output named by `label`, if it was requested.
    pub fn id(&self, label: &str) -> Option<OutputId> {
        self.planned
            .iter()
            .position(|p| p.label == label)
            .map(OutputId)
    }

    /// Give an output its whole content.
    pub fn put(&mut self, id: OutputId, bytes: &[u8]) -> Result<(), String> {
        let p = &mut self.planned[id.0];
        match &mut p.target {
            Target::Replace { file, .. } => {
                let f = file
                    .as_mut()
                    .ok_or_else(|| format!("{} {}: written twice", p.label, p.path.display()))?;
                f.write_all(bytes)
                    .and_then(|()| f.flush())
                    .map_err(|e| format!("{} {}: cannot write: {e}", p.label, p.path.display()))?;
            }
            Target::Stdout | Target::WriteThrough => {
                p.held.get_or_insert_with(Vec::new).extend_from_slice(bytes);
            }
        }
        Ok(())
    }

    /// A writer that streams straight into an output (a trace too large to
    /// hold in memory): the temporary file of a regular file, else the
    /// device, FIFO or standard output itself.
    pub fn stream(&mut self, id: OutputId) -> Result<Box<dyn Write + Send>, String> {
        let p = &mut self.planned[id.0];
        let cannot =
            |e: std::io::Error| format!("{} {}: cannot write: {e}", p.label, p.path.display());
        match &mut p.target {
            Target::Replace { file, .. } => {
                let f = file
                    .take()
                    .ok_or_else(|| format!("{}: written twice", p.label))?;
                Ok(Box::new(std::io::BufWriter::with_capacity(1 << 20, f)))
            }
            Target::Stdout => {
                p.held = None;
                Ok(Box::new(std::io::BufWriter::new(std::io::stdout())))
            }
            Target::WriteThrough => {
                p.held = None;
                let f = OpenOptions::new()
                    .write(true)
                    .open(&p.path)
                    .map_err(cannot)?;
                Ok(Box::new(std::io::BufWriter::with_capacity(1 << 20, f)))
            }
        }
    }

    /// Rename every temporary file into place and write the held bytes.
    pub fn commit(mut self) -> Result<(), String> {
        for p in &mut self.planned {
            let cannot =
                |e: std::io::Error| format!("{} {}: cannot write: {e}", p.label, p.path.display());
            match &mut p.target {
                Target::Replace {
                    tmp,
                    file,
                    keep_mode,
                } => {
                    if let Some(f) = file.take() {
                        f.sync_all().map_err(cannot)?;
                    }
                    if let Some(mode) = keep_mode.take() {
                        std::fs::set_permissions(&*tmp, mode).map_err(cannot)?;
                    }
                    std::fs::rename(&*tmp, &p.path).map_err(cannot)?;
                    unregister(tmp);
                }
                Target::Stdout => {
                    if let Some(bytes) = p.held.take() {
                        let mut out = std::io::stdout().lock();
                        out.write_all(&bytes)
                            .and_then(|()| out.flush())
                            .map_err(cannot)?;
                    }
                }
                Target::WriteThrough => {
                    if let Some(bytes) = p.held.take() {
                        let mut f = OpenOptions::new()
                            .write(true)
                            .open(&p.path)
                            .map_err(cannot)?;
                        f.write_all(&bytes).map_err(cannot)?;
                    }
                }
            }
        }
        Ok(())
    }
}

impl Drop for Outputs {
    /// An uncommitted set leaves nothing behind (a committed temporary was
    /// renamed away, so removing it finds nothing).
    fn drop(&mut self) {
        for p in &self.planned {
            if let Target::Replace { tmp, .. } = &p.target {
                let _ = std::fs::remove_file(tmp);
                unregister(tmp);
            }
        }
    }
}

fn plan_one(label: &str, path: &Path) -> Result<Planned, String> {
    let shown = path.display();
    let file_name = path
        .file_name()
        .ok_or_else(|| format!("{label} {shown}: not a file name"))?;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    match std::fs::metadata(&dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            return Err(format!(
                "{label} {shown}: cannot write: {} is not a directory",
                dir.display()
            ))
        }
        Err(_) => {
            return Err(format!(
                "{label} {shown}: cannot write: directory {} does not exist",
                dir.display()
            ))
        }
    }
    let (path, keep_mode) = match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => {
            return Err(format!("{label} {shown}: is a directory; give a file name"))
        }
        Ok(m) if m.is_file() => {
            OpenOptions::new().write(true).open(path).map_err(|e| {
                format!(
                    "{label} {shown}: cannot write: {}",
                    wbsim::scenario::io_reason(&e)
                )
            })?;
            // Through a symlink, replace the file it points to.
            let real = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
            (real, Some(m.permissions()))
        }
        Ok(m) => {
            let t = m.file_type();
            if !(t.is_char_device() || t.is_block_device() || t.is_fifo() || t.is_socket()) {
                return Err(format!("{label} {shown}: not a file wbsim can write"));
            }
            if !t.is_fifo() {
                OpenOptions::new().write(true).open(path).map_err(|e| {
                    format!(
                        "{label} {shown}: cannot write: {}",
                        wbsim::scenario::io_reason(&e)
                    )
                })?;
            }
            return Ok(Planned {
                label: label.to_string(),
                path: path.to_path_buf(),
                target: Target::WriteThrough,
                held: Some(Vec::new()),
            });
        }
        Err(_) => (path.to_path_buf(), None),
    };
    let real_dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => dir,
    };
    let name = path
        .file_name()
        .unwrap_or(file_name)
        .to_string_lossy()
        .into_owned();
    remove_stale_temps(&real_dir, &name);
    let (tmp, file) = create_temp(&real_dir, &name).map_err(|e| {
        format!(
            "{label} {shown}: cannot write: {}",
            wbsim::scenario::io_reason(&e)
        )
    })?;
    Ok(Planned {
        label: label.to_string(),
        path,
        target: Target::Replace {
            tmp,
            file: Some(file),
            keep_mode,
        },
        held: None,
    })
}

/// A fresh `.NAME.wbsim-tmp-PID-N` in `dir`, registered for cleanup.
fn create_temp(dir: &Path, name: &str) -> std::io::Result<(PathBuf, File)> {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    loop {
        let tmp = dir.join(format!(
            ".{name}{TMP_MARK}{}-{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        match OpenOptions::new().write(true).create_new(true).open(&tmp) {
            Ok(f) => {
                register(&tmp);
                return Ok((tmp, f));
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

/// Remove `.NAME.wbsim-tmp-PID-N` files of `dir` whose process is gone
/// (left by a SIGKILL), and the `.NAME.PID.N.tmp` names of earlier
/// versions of wbsim likewise.
fn remove_stale_temps(dir: &Path, name: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let prefix = format!(".{name}");
    for e in entries.flatten() {
        let file = e.file_name();
        let Some(rest) = file.to_str().and_then(|f| f.strip_prefix(&prefix)) else {
            continue;
        };
        let pid = if let Some(r) = rest.strip_prefix(TMP_MARK) {
            r.split('-').next()
        } else if let Some(r) = rest.strip_prefix('.').and_then(|r| r.strip_suffix(".tmp")) {
            r.split('.').next().filter(|_| r.split('.').count() == 2)
        } else {
            None
        };
        let Some(pid) = pid.and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn nothing_is_replaced_until_commit_and_drop_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.json");
        std::fs::write(&a, "old").unwrap();
        {
            let mut o = Outputs::plan(&[("--json", &a)], &[]).unwrap();
            let id = o.id("--json").unwrap();
            o.put(id, b"new").unwrap();
            // Dropped without commit: the failure path.
        }
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "old");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        let mut o = Outputs::plan(&[("--json", &a)], &[]).unwrap();
        o.put(o.id("--json").unwrap(), b"new").unwrap();
        o.commit().unwrap();
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "new");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_replaced_file_keeps_its_permission_bits() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("secret.json");
        std::fs::write(&a, "old").unwrap();
        std::fs::set_permissions(&a, Permissions::from_mode(0o600)).unwrap();
        let mut o = Outputs::plan(&[("--json", &a)], &[]).unwrap();
        o.put(o.id("--json").unwrap(), b"new").unwrap();
        o.commit().unwrap();
        let mode = std::fs::metadata(&a).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }

    #[test]
    fn a_device_node_is_written_through_not_replaced() {
        let null = Path::new("/dev/null");
        let mut o = Outputs::plan(&[("--trace", null)], &[]).unwrap();
        o.put(o.id("--trace").unwrap(), b"x").unwrap();
        o.commit().unwrap();
        let t = std::fs::metadata(null).unwrap().file_type();
        assert!(t.is_char_device(), "/dev/null is still a device");
    }

    #[test]
    fn bad_plans_are_refused_before_anything_runs() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.json");
        let input = dir.path().join("s.toml");
        std::fs::write(&input, "x").unwrap();
        let err = |r: Result<Outputs, String>| r.err().expect("refused");
        let same = err(Outputs::plan(&[("--json", &a), ("--series", &a)], &[]));
        assert!(same.contains("the same file as --json"), "{same}");
        let over = err(Outputs::plan(&[("--json", &input)], &[&input]));
        assert!(over.contains("the input"), "{over}");
        let d = err(Outputs::plan(&[("--json", dir.path())], &[]));
        assert!(d.contains("is a directory"), "{d}");
        let missing = dir.path().join("no/such/a.json");
        let m = err(Outputs::plan(&[("--json", &missing)], &[]));
        assert!(m.contains("does not exist"), "{m}");
        let two = err(Outputs::plan(
            &[("--json", Path::new("-")), ("--trace", Path::new("-"))],
            &[],
        ));
        assert!(two.contains("standard output is already taken"), "{two}");
        // Nothing was left behind by the refused plans.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn temps_of_a_killed_process_are_removed_by_the_next_run() {
        let dir = tempfile::tempdir().unwrap();
        // A process that has exited: its pid is not running.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        let stale = dir.path().join(format!(".a.json{TMP_MARK}{pid}-0"));
        let old_style = dir.path().join(format!(".a.json.{pid}.3.tmp"));
        let other = dir.path().join(format!(".b.json{TMP_MARK}{pid}-0"));
        for p in [&stale, &old_style, &other] {
            std::fs::write(p, "junk").unwrap();
        }
        let a = dir.path().join("a.json");
        let o = Outputs::plan(&[("--json", &a)], &[]).unwrap();
        drop(o);
        assert!(!stale.exists() && !old_style.exists());
        assert!(other.exists(), "another file's temp is left alone");
    }
}
