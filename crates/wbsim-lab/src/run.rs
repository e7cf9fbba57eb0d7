//! One `wbsim lab run`: for each boot, make the disks and the initramfs in
//! a private temporary directory, boot, read the results disk, keep the
//! records in the cache (keyed by everything that decides the guest's
//! behaviour: kernel image, guest binary, modules, plan, machine,
//! accelerator, boot number), and turn them into one report.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use sha2::{Digest, Sha256};
use wbsim::report::{LabInfo, Report};
use wbsim::scenario::{FsType, Scenario};
use wbsim_guest::protocol;

use crate::fuse_daemon::read_ntfs3g;
use crate::guest_report::{guest_run, GuestRun};
use crate::initramfs::Initramfs;
use crate::kernel_image::{module_load_order, KernelImage};
use crate::machine::{fs_module, lab_machine, mkfs_command, LabMachine};
use crate::plan::plan;
pub use crate::plan::{
    valid_trace_event, writeback_stall_limit_s, BASE_TRACE_EVENTS, WRITEBACK_TRACE_EVENTS,
};
use crate::qemu::{self, Accel, BootFiles};
pub use wbsim_guest::protocol::{kprobe_parts, KPROBE_FORMS};

/// Makes the swap disk's header on the host.
const MKSWAP: &str = "mkswap";
/// Results disk: 64 MiB of samples and records, plus room for the trace.
const RESULTS_BASE_BYTES: u64 = 64 << 20;
const RESULTS_TRACE_BYTES: u64 = 2 << 30;
const RESULTS_NO_TRACE_BYTES: u64 = 256 << 20;
/// Wall-clock margin for booting and powering off, beyond the scenario's
/// own time limit (TCG boots of 6.1 take ~10 s here).
const BOOT_MARGIN_S: u64 = 180;

/// How to run the lab.
pub struct LabOptions {
    pub lab_dir: PathBuf,
    pub guest_binary: PathBuf,
    pub runs: u32,
    pub sample_ms: u64,
    pub trace: bool,
    /// More tracepoints for `--trace`, as `system/event`
    /// ([`valid_trace_event`]).
    pub extra_trace_events: Vec<String>,
    /// Dynamic probes for `--trace` (`kprobe_events` lines, see
    /// `wbsim_guest::protocol::kprobe_parts`).
    pub kprobes: Vec<String>,
    /// A static ntfs-3g for fuse-ntfs scenarios ([`read_ntfs3g`]).
    pub ntfs_3g: Option<PathBuf>,
    pub rerun: bool,
    /// `None`: [`qemu::auto_accel`].
    pub accel: Option<Accel>,
    pub wall_limit_s: Option<u64>,
    /// MGLRU on or off in the guest (the simulated profile's
    /// `lru_generations`), `None` for the kernel's default.
    pub lru_gen: Option<bool>,
}

/// What the lab reports while it works.
pub enum Progress<'a> {
    Boot {
        run: u32,
        runs: u32,
        cached: bool,
    },
    Guest {
        run: u32,
        t_s: f64,
        dirtied_bytes: u64,
        written_bytes: u64,
    },
    Console {
        run: u32,
        line: &'a str,
    },
}

/// The lab's result.
pub struct LabRun {
    pub report: Report,
    /// Each boot's ftrace text, in run order.
    pub traces: Vec<String>,
    /// Each boot's serial console log.
    pub consoles: Vec<String>,
    /// Whether each boot came from the cache.
    pub cached: Vec<bool>,
}

/// The lab's directory: `$WBSIM_LAB_DIR`, else `$XDG_CACHE_HOME/wbsim/lab`,
/// else `~/.cache/wbsim/lab`.
pub fn default_lab_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("WBSIM_LAB_DIR") {
        return PathBuf::from(d);
    }
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(|| PathBuf::from("/tmp"));
    cache.join("wbsim").join("lab")
}

/// Where `wbsim lab setup` builds the guest binary (this source tree's
/// target directory, musl target).
pub fn default_guest_binary() -> PathBuf {
    workspace_dir().join("target/x86_64-unknown-linux-musl/release/wbsim-guest")
}

/// The source tree this build came from.
pub fn workspace_dir() -> PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    p.canonicalize().unwrap_or(p)
}

static TEMP_DIRS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// For a signal handler: kill the running guests and remove every boot
/// directory still in use (the disk images must not be left behind).
pub fn cleanup_on_signal() {
    qemu::kill_running();
    if let Ok(dirs) = TEMP_DIRS.lock() {
        for d in dirs.iter() {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

/// A boot's private directory, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(lab_dir: &Path, run: u32) -> Result<TempDir, String> {
        let p = lab_dir
            .join("tmp")
            .join(format!("boot-{}-{run}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).map_err(|e| format!("{}: {e}", p.display()))?;
        if let Ok(mut d) = TEMP_DIRS.lock() {
            d.push(p.clone());
        }
        Ok(TempDir(p))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
        if let Ok(mut d) = TEMP_DIRS.lock() {
            d.retain(|x| x != &self.0);
        }
    }
}

/// A sparse file of `bytes` at `path` (a disk image).
fn sparse_image(path: &Path, bytes: u64) -> Result<std::fs::File, String> {
    let f = std::fs::File::create(path).map_err(|e| io_error(path, e))?;
    f.set_len(bytes).map_err(|e| io_error(path, e))?;
    Ok(f)
}

/// An I/O error on `p`, for messages.
fn io_error(p: &Path, e: std::io::Error) -> String {
    format!("{}: {e}", p.display())
}

/// Run a host tool (`cmd[0]`, looked up on PATH and in /sbin), its output
/// kept back unless it fails.
fn run_host_tool(cmd: &[String]) -> Result<(), String> {
    let path = crate::setup::which(&cmd[0]).unwrap_or_else(|| PathBuf::from(&cmd[0]));
    let out = std::process::Command::new(path)
        .args(&cmd[1..])
        .output()
        .map_err(|e| {
            format!(
                "{}: {e} (run `wbsim lab setup` to see what to install)",
                cmd[0]
            )
        })?;
    if !out.status.success() {
        return Err(format!(
            "`{}` failed ({}): {}",
            cmd.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(())
}

fn read(path: &Path, what: &str) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| {
        format!(
            "{what} {}: {}",
            path.display(),
            wbsim::scenario::io_reason(&e)
        )
    })
}

/// Run the scenario on the real kernel `opts.runs` times.
pub fn run_lab(
    sc: &Scenario,
    kernel: &KernelImage,
    opts: &LabOptions,
    progress: &mut dyn FnMut(Progress),
) -> Result<LabRun, String> {
    let m = lab_machine(sc).map_err(|e| e.to_string())?;
    let fuse_daemon = match (m.fs_type, &opts.ntfs_3g) {
        (FsType::FuseNtfs, Some(p)) => Some(read_ntfs3g(p)?),
        (FsType::FuseNtfs, None) => {
            return Err(
                "the scenario's filesystem is fuse-ntfs: the guest needs ntfs-3g, \
                 pass --ntfs-3g PATH to a static build (the README's lab section makes one)"
                    .into(),
            )
        }
        _ => None,
    };
    // The mkfs command line (its image path left out) also keys the cache.
    let mkfs_probe = mkfs_command(m.fs_type, kernel.major(), "IMAGE");
    let mut tools = vec![qemu::QEMU, mkfs_probe[0].as_str()];
    if m.swap.is_some() {
        tools.push(MKSWAP);
    }
    for tool in tools {
        if !crate::setup::have(tool) {
            let t = crate::setup::TOOLS.iter().find(|t| t.command == tool);
            return Err(format!(
                "{tool} not found: install it with `apt-get install {}` (`wbsim lab setup` checks every tool)",
                t.map_or("?", |t| t.package)
            ));
        }
    }
    let guest = read(&opts.guest_binary, "guest binary")
        .map_err(|e| format!("{e}\n(build it with `wbsim lab setup`, or pass --guest PATH)"))?;
    if !guest.starts_with(b"\x7fELF") {
        return Err(format!(
            "{} is not an ELF executable",
            opts.guest_binary.display()
        ));
    }
    let kernel_bytes = read(&kernel.path, "kernel image")?;
    let mut modules: Vec<(String, Vec<u8>)> = Vec::new();
    if let Some(dir) = &kernel.modules_dir {
        let mut wanted = vec!["virtio_pci", "virtio_blk"];
        wanted.extend(fs_module(m.fs_type));
        for (i, p) in module_load_order(dir, &wanted)?.iter().enumerate() {
            let name = format!(
                "{:02}-{}",
                i,
                p.file_name().and_then(|n| n.to_str()).unwrap_or("m.ko")
            );
            modules.push((name, read(p, "module")?));
        }
    }
    let mut plan = plan(
        sc,
        &m,
        modules.iter().map(|(n, _)| n.clone()).collect(),
        opts.sample_ms,
        opts.trace,
        &opts.extra_trace_events,
    );
    plan.lru_gen = opts.lru_gen;
    if opts.trace {
        plan.kprobes = opts.kprobes.clone();
    }
    let plan_json = serde_json::to_string_pretty(&plan).expect("plan serialises");
    let (accel, accel_why) = match opts.accel {
        Some(a) => (a, "asked for".to_string()),
        None => qemu::auto_accel(),
    };

    let mut base = Sha256::new();
    base.update(b"wbsim-lab cache v1\n");
    for part in [&kernel_bytes, &guest] {
        base.update(Sha256::digest(part));
    }
    if let Some(d) = &fuse_daemon {
        base.update(b"ntfs-3g");
        base.update(Sha256::digest(d));
    }
    for (n, b) in &modules {
        base.update(n.as_bytes());
        base.update(Sha256::digest(b));
    }
    base.update(plan_json.as_bytes());
    base.update(
        serde_json::to_string(&m)
            .expect("machine serialises")
            .as_bytes(),
    );
    base.update(accel.as_str().as_bytes());
    base.update(mkfs_probe.join(" ").as_bytes());
    let kernel_sha = hex(&Sha256::digest(&kernel_bytes));

    let mut guest_runs: Vec<GuestRun> = Vec::new();
    let (mut traces, mut consoles, mut cached_runs) = (Vec::new(), Vec::new(), Vec::new());
    let mut commands = Vec::new();
    let mut walls = Vec::new();
    for run in 0..opts.runs {
        let mut h = base.clone();
        h.update(run.to_le_bytes());
        let key = hex(&h.finalize());
        let cache = opts.lab_dir.join("results").join(&key);
        let cached =
            !opts.rerun && cache.join("records.bin").is_file() && cache.join("host.json").is_file();
        progress(Progress::Boot {
            run,
            runs: opts.runs,
            cached,
        });
        if !cached {
            boot_once(
                &BootJob {
                    m: &m,
                    kernel,
                    guest: &guest,
                    fuse_daemon: fuse_daemon.as_deref(),
                    modules: &modules,
                    plan_json: &plan_json,
                    accel,
                    trace: opts.trace,
                    lab_dir: &opts.lab_dir,
                    cache: &cache,
                    run,
                    wall_limit_s: opts
                        .wall_limit_s
                        .unwrap_or(sc.run.time_limit_s + BOOT_MARGIN_S),
                    stall: qemu::WritebackStall::new(writeback_stall_limit_s(sc)),
                },
                progress,
            )?;
        }
        let records_bytes = read(&cache.join("records.bin"), "cached records")?;
        let host: HostInfo =
            serde_json::from_slice(&read(&cache.join("host.json"), "cached host info")?)
                .map_err(|e| format!("{}: {e}", cache.join("host.json").display()))?;
        let records = protocol::decode_records(&records_bytes)
            .map_err(|e| format!("results of boot {run} ({}): {e}", cache.display()))?;
        let g = guest_run(sc, &records, u64::from(run), opts.sample_ms)
            .map_err(|e| format!("boot {run}: {e}"))?;
        commands = host.qemu_command;
        walls.push(host.wall_seconds);
        traces.push(g.trace_text.clone());
        consoles.push(std::fs::read_to_string(cache.join("console.log")).unwrap_or_default());
        cached_runs.push(cached);
        guest_runs.push(g);
    }
    let first = guest_runs.first().ok_or("no runs")?;
    let mut notes = m.notes.clone();
    notes.push(format!("accelerator {}: {accel_why}", accel.as_str()));
    let mut zones = first.zones.clone();
    for z in &mut zones {
        if let Some((_, p)) = m.expected_zone_pages.iter().find(|(n, _)| *n == z.name) {
            z.scenario_pages = *p;
        }
    }
    let report = Report {
        source: "qemu".into(),
        scenario: sc.name.clone(),
        kernel: first.kernel_release.clone(),
        config: sc.clone(),
        profile: None,
        runs: guest_runs.iter().map(|g| g.report.clone()).collect(),
        lab: Some(LabInfo {
            kernel_release: first.kernel_release.clone(),
            kernel_image: kernel.label.clone(),
            kernel_image_sha256: kernel_sha,
            accel: accel.as_str().into(),
            qemu_command: commands,
            zones,
            notes,
            host_wall_seconds: walls,
        }),
    };
    Ok(LabRun {
        report,
        traces,
        consoles,
        cached: cached_runs,
    })
}

/// What the cache keeps of a boot besides the records.
#[derive(serde::Serialize, serde::Deserialize)]
struct HostInfo {
    qemu_command: Vec<String>,
    wall_seconds: f64,
}

struct BootJob<'a> {
    m: &'a LabMachine,
    kernel: &'a KernelImage,
    guest: &'a [u8],
    fuse_daemon: Option<&'a [u8]>,
    modules: &'a [(String, Vec<u8>)],
    plan_json: &'a str,
    accel: Accel,
    trace: bool,
    lab_dir: &'a Path,
    cache: &'a Path,
    run: u32,
    wall_limit_s: u64,
    stall: qemu::WritebackStall,
}

fn boot_once(j: &BootJob, progress: &mut dyn FnMut(Progress)) -> Result<(), String> {
    let tmp = TempDir::new(j.lab_dir, j.run)?;
    let initrd = tmp.0.join("initramfs.cpio");
    let mut a = Initramfs::new();
    a.file("init", j.guest, true);
    if let Some(d) = j.fuse_daemon {
        a.file(protocol::NTFS3G_PATH.trim_start_matches('/'), d, true);
    }
    a.file(
        protocol::PLAN_PATH.trim_start_matches('/'),
        j.plan_json.as_bytes(),
        false,
    );
    for (n, b) in j.modules {
        a.file(
            &format!("{}/{n}", protocol::MODULES_DIR.trim_start_matches('/')),
            b,
            false,
        );
    }
    std::fs::write(&initrd, a.finish()).map_err(|e| io_error(&initrd, e))?;

    let data = tmp.0.join("data.img");
    sparse_image(&data, j.m.disk_bytes)?;
    let mkfs = mkfs_command(j.m.fs_type, j.kernel.major(), &data.display().to_string());
    // Its chatter (mkntfs warns that an image file is no block device) is
    // shown only when it fails.
    run_host_tool(&mkfs)?;

    let swap = match &j.m.swap {
        None => None,
        Some(sw) => {
            let img = tmp.0.join("swap.img");
            sparse_image(&img, sw.bytes)?;
            // Its warning that a sparse image "contains holes" is meant
            // for swap files; the guest sees a block device.
            run_host_tool(&[MKSWAP.to_string(), img.display().to_string()])?;
            Some(img)
        }
    };

    let results = tmp.0.join("results.img");
    let size = RESULTS_BASE_BYTES
        + if j.trace {
            RESULTS_TRACE_BYTES
        } else {
            RESULTS_NO_TRACE_BYTES
        };
    let f = sparse_image(&results, size)?;
    std::os::unix::fs::FileExt::write_all_at(&f, &protocol::encode_header(0, false), 0)
        .map_err(|e| io_error(&results, e))?;
    drop(f);

    let cmd = qemu::qemu_command(
        j.m,
        j.accel,
        &BootFiles {
            kernel: &j.kernel.path,
            initrd: &initrd,
            data_disk: &data,
            results_disk: &results,
            swap_disk: swap.as_deref(),
        },
    );
    let run = j.run;
    let outcome = qemu::boot(
        &cmd,
        Duration::from_secs(j.wall_limit_s),
        Some(j.stall),
        &mut |line| match protocol::parse_console_line(line) {
            Some(protocol::ConsoleLine::Progress {
                t_s,
                dirtied_bytes,
                written_bytes,
                ..
            }) => progress(Progress::Guest {
                run,
                t_s,
                dirtied_bytes,
                written_bytes,
            }),
            _ => progress(Progress::Console { run, line }),
        },
    )?;

    use std::os::unix::fs::FileExt;
    let f = std::fs::File::open(&results).map_err(|e| io_error(&results, e))?;
    let mut header = vec![0u8; protocol::HEADER_BYTES];
    f.read_exact_at(&mut header, 0)
        .map_err(|e| io_error(&results, e))?;
    let (len, complete) = protocol::decode_header(&header)?;
    if !complete {
        return Err("the guest said it was done but left its results incomplete".into());
    }
    if protocol::RECORDS_OFFSET.saturating_add(len) > size {
        return Err(format!(
            "the results header claims {len} bytes, past the disk's end"
        ));
    }
    let mut records = vec![0u8; len as usize];
    f.read_exact_at(&mut records, protocol::RECORDS_OFFSET)
        .map_err(|e| io_error(&results, e))?;
    // Into the cache: a sibling directory renamed into place, so that a
    // half-written entry is never taken for a result.
    let parent = j.cache.parent().expect("cache dir has a parent");
    std::fs::create_dir_all(parent).map_err(|e| io_error(parent, e))?;
    let staging = parent.join(format!(".staging-{}-{run}", std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    std::fs::create_dir_all(&staging).map_err(|e| io_error(&staging, e))?;
    let write = |name: &str, b: &[u8]| {
        std::fs::write(staging.join(name), b).map_err(|e| io_error(&staging.join(name), e))
    };
    write("records.bin", &records)?;
    write("console.log", outcome.console.as_bytes())?;
    write(
        "host.json",
        serde_json::to_string_pretty(&HostInfo {
            qemu_command: cmd,
            wall_seconds: outcome.wall_seconds,
        })
        .expect("serialises")
        .as_bytes(),
    )?;
    let _ = std::fs::remove_dir_all(j.cache);
    std::fs::rename(&staging, j.cache).map_err(|e| io_error(j.cache, e))?;
    Ok(())
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}
