//! The guest's /init: mount, read the plan, load modules, find the disks,
//! mount the data disk, apply sysctls, set up tracing, snapshot, run the
//! tasks with the sampler going, snapshot again, write the results
//! header, power off (reboot(2) RB_POWER_OFF). Any failure, panics
//! included, becomes an `error` record and console line, then power off:
//! PID 1 must never panic or return (the kernel would panic).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::protocol::{self, kind, tag, MODULES_DIR};
use crate::records::RecordWriter;
use crate::sampler::{self, Sampler, Sources};
use crate::trace::{self, TraceReader};
use crate::{modules, mounts, plan, sys, tasks};

/// What the error path needs to know of how far the init got.
#[derive(Default)]
struct Guest {
    writer: Option<Arc<RecordWriter>>,
}

/// As PID 1: run the plan at `protocol::PLAN_PATH`, then power off.
pub fn pid1_main() -> ! {
    mounts::ensure_console();
    run_guarded(Path::new(protocol::PLAN_PATH));
    power_off()
}

/// `wbsim-guest init`: run the plan; power off only with `poweroff`
/// (a guard against running it by hand on a real machine). Exit status.
pub fn init_command(plan: &Path, poweroff: bool) -> i32 {
    let ok = run_guarded(plan);
    if poweroff {
        power_off();
    }
    if ok {
        0
    } else {
        1
    }
}

/// Run the plan, turning errors and panics into the error path.
fn run_guarded(plan_path: &Path) -> bool {
    let mut guest = Guest::default();
    let result = catch_unwind(AssertUnwindSafe(|| run(plan_path, &mut guest)));
    let message = match result {
        Ok(Ok(())) => return true,
        Ok(Err(m)) => m,
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown".into());
            format!("internal error (panic): {what}")
        }
    };
    if let Some(w) = &guest.writer {
        w.record(kind::ERROR, tag::NONE, message.as_bytes());
        let _ = w.finish();
    }
    sys::console(&protocol::error_line(&message));
    false
}

fn power_off() -> ! {
    // SAFETY: sync and reboot have no memory preconditions.
    unsafe {
        libc::sync();
        libc::reboot(libc::RB_POWER_OFF);
    }
    // Not allowed to power off (not PID 1, no CAP_SYS_BOOT): never return
    // as PID 1; otherwise leave.
    if sys::getpid() != 1 {
        std::process::exit(1);
    }
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}

fn uname_release() -> String {
    // SAFETY: zeroed utsname is a valid out-parameter.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: u is valid.
    unsafe { libc::uname(&mut u) };
    let bytes: Vec<u8> = u
        .release
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

fn run(plan_path: &Path, guest: &mut Guest) -> Result<(), String> {
    let plan = plan::read(plan_path)?;
    let problems = plan::problems(&plan);
    if !problems.is_empty() {
        return Err(format!("bad plan: {}", problems.join("; ")));
    }
    let notes = mounts::mount_pseudo_filesystems()?;
    let loaded = modules::load_all(Path::new(MODULES_DIR), &plan.modules)?;
    let disks = mounts::find_disks(plan.swap)?;
    let results = format!("/dev/{}", disks.results);
    let w = Arc::new(
        RecordWriter::open_device(Path::new(&results))
            .map_err(|e| format!("opening the results disk {results}: {}", sys::err_text(&e)))?,
    );
    guest.writer = Some(w.clone());
    w.record(kind::UNAME, tag::NONE, uname_release().as_bytes());
    let cmdline = sys::read_text("/proc/cmdline").unwrap_or_default();
    w.record(kind::CMDLINE, tag::NONE, cmdline.trim_end().as_bytes());
    for n in &notes {
        w.log(n);
    }
    if !plan.modules.is_empty() {
        let already = plan.modules.len() - loaded.len();
        let note = if already > 0 {
            format!(" ({already} were loaded already)")
        } else {
            String::new()
        };
        w.log(&format!("modules loaded: {}{note}", loaded.join(" ")));
    }
    w.log(&format!(
        "data disk {}, results disk {}",
        disks.data, disks.results
    ));

    let workdir = PathBuf::from(&plan.workdir);
    let target = workdir.join(&plan.mount);
    mounts::mount_data(
        &format!("/dev/{}", disks.data),
        &target,
        &plan.fs_type,
        &plan.mount_options,
    )?;
    w.log(&format!(
        "mounted {} ({}, options {:?}) at {}",
        disks.data,
        plan.fs_type,
        plan.mount_options,
        target.display()
    ));
    set_queue(&disks.data, &plan.data_queue, &w);
    if let Some(swap) = &disks.swap {
        let node = format!("/dev/{swap}");
        sys::swapon(&node).map_err(|e| {
            format!(
                "swapon {node}: {} (the kernel needs CONFIG_SWAP)",
                sys::err_text(&e)
            )
        })?;
        w.log(&format!("swap on {swap}"));
    }
    std::env::set_current_dir(&workdir)
        .map_err(|e| format!("chdir {}: {}", workdir.display(), sys::err_text(&e)))?;

    for (path, value) in &plan.sysctls {
        sys::write_value(Path::new("/proc/sys").join(path), value)
            .map_err(|e| format!("sysctl {path} = {value}: {}", sys::err_text(&e)))?;
        w.log(&format!("sysctl {path} = {value}"));
    }

    if let Some(on) = plan.lru_gen {
        set_lru_gen(on, &w)?;
    }

    let tracer = start_tracing(&plan, &w)?;

    // SAFETY: sync has no preconditions.
    unsafe { libc::sync() };
    if let Err(e) = sys::write_value("/proc/sys/vm/drop_caches", "3") {
        w.log(&format!("drop_caches: {}", sys::err_text(&e)));
    }
    let kswapd = sampler::find_kswapd0();
    if kswapd.is_none() {
        w.log("no kswapd0 process; no kswapd records");
    }
    let sources = Sources {
        data_disk: disks.data.clone(),
        kswapd,
    };
    let before = sources.snapshot(&w, tag::BEFORE);
    let start_ns = sys::monotonic_ns();
    let sampler = Sampler::start(
        w.clone(),
        sources.clone(),
        plan.sample_ms,
        &before,
        start_ns,
    )
    .map_err(|e| format!("starting the sampler: {}", sys::err_text(&e)))?;

    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("/proc/self/exe"));
    w.log(&format!("workload: {} tasks", plan.tasks.len()));
    let ends = tasks::run_tasks(
        &plan.tasks,
        &exe,
        &workdir,
        Duration::from_secs(plan.time_limit_s),
        &w,
    );
    sources.snapshot(&w, tag::AFTER);
    let statuses: Vec<String> = ends
        .iter()
        .map(|e| {
            format!(
                "{} {}{}",
                e.name,
                e.exit_status,
                if e.cut { " (cut)" } else { "" }
            )
        })
        .collect();
    w.log(&format!(
        "workload ended after {:.1} s; exit statuses: {}",
        (sys::monotonic_ns() - start_ns) as f64 / 1e9,
        statuses.join(", ")
    ));

    sampler.stop();
    if let Some(t) = tracer {
        t.stop();
    }
    // SAFETY: as above.
    unsafe { libc::sync() };
    let _ = std::env::set_current_dir("/");
    if let Err(e) = mounts::unmount(&target) {
        w.log(&format!(
            "unmounting {}: {}",
            target.display(),
            sys::err_text(&e)
        ));
    }
    if w.dropped() > 0 {
        w.log(&format!(
            "{} records dropped: the results disk was full",
            w.dropped()
        ));
    }
    w.finish()
        .map_err(|e| format!("writing the results header: {}", sys::err_text(&e)))?;
    sys::console(&protocol::done_line());
    Ok(())
}

/// The data disk's request-queue settings: each written, then read back
/// and logged with what the kernel kept (a refused value is logged, and
/// the kernel's own stays).
fn set_queue(disk: &str, settings: &[(String, String)], w: &RecordWriter) {
    let dir = Path::new("/sys/block").join(disk).join("queue");
    for (name, value) in settings {
        let path = dir.join(name);
        let written = sys::write_value(&path, value);
        let now = sys::read_text(&path)
            .map(|t| t.trim().to_string())
            .unwrap_or_else(|e| format!("unreadable ({})", sys::err_text(&e)));
        match written {
            Ok(()) => w.log(&format!("{disk} queue {name} = {value}: now {now}")),
            Err(e) => w.log(&format!(
                "{disk} queue {name} = {value}: {}; kept {now}",
                sys::err_text(&e)
            )),
        }
    }
}

/// Tracing as the plan asks. A kernel without event tracing is an error
/// (kswapd's awake time and reclaim's writes come from its
/// tracepoints); a tracepoint this kernel lacks is logged and skipped.
fn start_tracing(
    plan: &protocol::Plan,
    w: &Arc<RecordWriter>,
) -> Result<Option<TraceReader>, String> {
    if plan.trace_events.is_empty() {
        return Ok(None);
    }
    let Some(dir) = trace::tracing_dir() else {
        return Err(
            "the kernel has no event tracing (no trace_pipe under /sys/kernel/tracing \
             or /sys/kernel/debug/tracing): it needs CONFIG_EVENT_TRACING (CONFIG_FTRACE) \
             and CONFIG_DEBUG_FS or tracefs, for the vmscan tracepoints"
                .into(),
        );
    };
    if let Err(e) = trace::setup(
        &dir,
        plan.trace_buffer_kb,
        &plan.trace_events,
        &plan.kprobes,
        w,
    ) {
        w.log(&format!("{e}; no trace records"));
        return Ok(None);
    }
    Ok(match TraceReader::start(&dir, w.clone()) {
        Ok(t) => {
            w.log(&format!(
                "tracing {} events from {}",
                plan.trace_events.len(),
                dir.display()
            ));
            Some(t)
        }
        Err(e) => {
            w.log(&format!(
                "opening trace_pipe: {}; no trace records",
                sys::err_text(&e)
            ));
            None
        }
    })
}

/// The path of the MGLRU switch (6.1+, `CONFIG_LRU_GEN`).
const LRU_GEN_ENABLED: &str = "/sys/kernel/mm/lru_gen/enabled";

/// Switch MGLRU on (`y`: every component) or off, and log what the kernel
/// reads back. A kernel without MGLRU cannot run a plan that wants it.
fn set_lru_gen(on: bool, w: &RecordWriter) -> Result<(), String> {
    let value = if on { "y" } else { "n" };
    match sys::write_value(LRU_GEN_ENABLED, value) {
        Ok(()) => {
            let now = std::fs::read_to_string(LRU_GEN_ENABLED).unwrap_or_default();
            w.log(&format!("lru_gen enabled = {value}: now {}", now.trim()));
            Ok(())
        }
        Err(e) if on => Err(format!(
            "{LRU_GEN_ENABLED} = y: {} (the plan wants MGLRU; the kernel needs CONFIG_LRU_GEN)",
            sys::err_text(&e)
        )),
        Err(e) => {
            w.log(&format!(
                "lru_gen: {} (no MGLRU to switch off)",
                sys::err_text(&e)
            ));
            Ok(())
        }
    }
}
