//! Running the plan's tasks: each a child process (`EXE task --name N --
//! COMMAND`, in its own process group, cwd the workdir), reaped with
//! wait4(2) for its rusage. A task with `after = X` starts when X exits
//! (or, for a background task, when it closes its stderr: memtouch
//! without a hot set, which the simulator lets exit once filled). When
//! every workload task has ended, the background ones (memtouch) get
//! SIGTERM; at the time limit everything left gets SIGKILL and its
//! `TaskEnd` is marked `cut`.
//!
//! Each child's stderr is kept (first 4 KiB) as its `TaskEnd.message`
//! and echoed on the console; its stdout (fs_mark's and IOzone's result
//! tables) is echoed on the console and kept as `task-output` records.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::protocol::{kind, tag, PlanTask, TaskEnd};
use crate::records::RecordWriter;
use crate::sys;
use crate::workloads;

const MESSAGE_BYTES: usize = 4096;
const POLL: Duration = Duration::from_millis(10);
const TERM_GRACE: Duration = Duration::from_secs(5);

/// What a child said on stderr, and whether it has closed it.
#[derive(Default)]
struct Stderr {
    kept: Mutex<Vec<u8>>,
    closed: AtomicBool,
}

struct Running {
    pid: i32,
    stderr: Arc<Stderr>,
    readers: Vec<JoinHandle<()>>,
    /// Its dependents have been started.
    released: bool,
}

enum State {
    Pending,
    Running(Running),
    Done,
}

struct Runner<'a> {
    tasks: &'a [PlanTask],
    background: Vec<bool>,
    state: Vec<State>,
    exe: &'a Path,
    workdir: &'a Path,
    w: Arc<RecordWriter>,
    ends: Vec<TaskEnd>,
    /// The workload is over: nothing more starts.
    stopping: bool,
}

/// Run `tasks` to the end (or the time limit); the `TaskEnd`s in the
/// order the tasks ended. `exe` is this program.
pub fn run_tasks(
    tasks: &[PlanTask],
    exe: &Path,
    workdir: &Path,
    time_limit: Duration,
    w: &Arc<RecordWriter>,
) -> Vec<TaskEnd> {
    let background = tasks
        .iter()
        .map(|t| workloads::parse(&t.command).is_ok_and(|p| workloads::is_background(&p)))
        .collect();
    let mut r = Runner {
        tasks,
        background,
        state: tasks.iter().map(|_| State::Pending).collect(),
        exe,
        workdir,
        w: w.clone(),
        ends: Vec::new(),
        stopping: false,
    };
    let deadline = Instant::now() + time_limit;
    let first: Vec<usize> = (0..tasks.len())
        .filter(|&i| tasks[i].after.is_none())
        .collect();
    for i in first {
        r.start(i);
    }
    loop {
        r.poll();
        let workload_left =
            (0..tasks.len()).any(|i| !r.background[i] && !matches!(r.state[i], State::Done));
        if !workload_left {
            r.stop_all(libc::SIGTERM, false);
            break;
        }
        if Instant::now() >= deadline {
            w.log(&format!(
                "time limit of {} s: killing the tasks left",
                time_limit.as_secs()
            ));
            r.stop_all(libc::SIGKILL, true);
            break;
        }
        std::thread::sleep(POLL);
    }
    for (i, t) in tasks.iter().enumerate() {
        if matches!(r.state[i], State::Pending) {
            w.log(&format!(
                "task {} never started: it runs after {}, which did not end",
                t.name,
                t.after.as_deref().unwrap_or("?")
            ));
        }
    }
    r.ends
}

fn spawn_reader<R: Read + Send + 'static>(
    stream: R,
    f: impl FnOnce(BufReader<R>) + Send + 'static,
) -> Option<JoinHandle<()>> {
    std::thread::Builder::new()
        .name("task-io".into())
        .spawn(move || f(BufReader::new(stream)))
        .ok()
}

impl Runner<'_> {
    fn start(&mut self, i: usize) {
        let t = &self.tasks[i];
        self.w
            .record(kind::TASK_START, tag::NONE, t.name.as_bytes());
        let spawned = Command::new(self.exe)
            .args(["task", "--name", &t.name, "--", &t.command])
            .current_dir(self.workdir)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn();
        let mut child = match spawned {
            Ok(c) => c,
            Err(e) => {
                self.state[i] = State::Done;
                let message = format!("starting {}: {}", self.exe.display(), sys::err_text(&e));
                self.end(i, 127, None, message, false);
                self.release(i);
                return;
            }
        };
        let stderr = Arc::new(Stderr::default());
        let mut readers = Vec::new();
        if let Some(out) = child.stdout.take() {
            let (writer, name) = (self.w.clone(), t.name.clone());
            readers.extend(spawn_reader(out, move |mut r| {
                let mut line = Vec::new();
                while r.read_until(b'\n', &mut line).is_ok_and(|n| n > 0) {
                    let text = String::from_utf8_lossy(&line);
                    let text = text.trim_end_matches('\n');
                    sys::console(text);
                    writer.record(
                        kind::TASK_OUTPUT,
                        tag::NONE,
                        format!("{name}\t{text}").as_bytes(),
                    );
                    line.clear();
                }
            }));
        }
        if let Some(err) = child.stderr.take() {
            let keep = stderr.clone();
            readers.extend(spawn_reader(err, move |mut r| {
                let mut buf = [0u8; 4096];
                while let Ok(n) = r.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    let _ = std::io::stderr().write_all(&buf[..n]);
                    let mut kept = keep.kept.lock().unwrap_or_else(|e| e.into_inner());
                    let room = MESSAGE_BYTES.saturating_sub(kept.len());
                    kept.extend_from_slice(&buf[..n.min(room)]);
                }
                keep.closed.store(true, Ordering::SeqCst);
            }));
        }
        self.state[i] = State::Running(Running {
            pid: child.id() as i32,
            stderr,
            readers,
            released: false,
        });
    }

    /// Start the tasks that run after task `i`.
    fn release(&mut self, i: usize) {
        if self.stopping {
            return;
        }
        let name = &self.tasks[i].name;
        let after: Vec<usize> = (0..self.tasks.len())
            .filter(|&j| {
                self.tasks[j].after.as_deref() == Some(name.as_str())
                    && matches!(self.state[j], State::Pending)
            })
            .collect();
        for j in after {
            self.start(j);
        }
    }

    /// Reap the tasks that exited; release background tasks that closed stderr.
    fn poll(&mut self) {
        for i in 0..self.tasks.len() {
            let State::Running(r) = &mut self.state[i] else {
                continue;
            };
            if let Some((status, ru)) = wait(r.pid, false) {
                self.finish(i, status, ru, false);
                continue;
            }
            if self.background[i] && !r.released && r.stderr.closed.load(Ordering::SeqCst) {
                r.released = true;
                self.release(i);
            }
        }
    }

    /// Send `signal` to every running task's process group and reap them.
    fn stop_all(&mut self, signal: i32, cut: bool) {
        self.stopping = true;
        let running: Vec<usize> = (0..self.tasks.len())
            .filter(|&i| matches!(self.state[i], State::Running(_)))
            .collect();
        for &i in &running {
            if let State::Running(r) = &self.state[i] {
                // SAFETY: signalling our own child's process group.
                unsafe { libc::kill(-r.pid, signal) };
            }
        }
        for i in running {
            let State::Running(r) = &self.state[i] else {
                continue;
            };
            let pid = r.pid;
            let give_up = Instant::now() + TERM_GRACE;
            let reaped = loop {
                if let Some(x) = wait(pid, false) {
                    break x;
                }
                if Instant::now() >= give_up {
                    // SAFETY: as above.
                    unsafe { libc::kill(-pid, libc::SIGKILL) };
                    break wait(pid, true).unwrap_or((libc::SIGKILL, zero_rusage()));
                }
                std::thread::sleep(POLL);
            };
            self.finish(i, reaped.0, reaped.1, cut);
        }
    }

    fn finish(&mut self, i: usize, status: i32, ru: libc::rusage, cut: bool) {
        let State::Running(r) = std::mem::replace(&mut self.state[i], State::Done) else {
            return;
        };
        // The readers end when the last holder of the pipes exits.
        let until = Instant::now() + Duration::from_secs(1);
        for h in r.readers {
            while !h.is_finished() && Instant::now() < until {
                std::thread::sleep(POLL);
            }
            if h.is_finished() {
                let _ = h.join();
            }
        }
        let kept = r
            .stderr
            .kept
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let message = String::from_utf8_lossy(&kept).trim_end().to_string();
        let code = if libc::WIFEXITED(status) {
            libc::WEXITSTATUS(status)
        } else if libc::WIFSIGNALED(status) {
            128 + libc::WTERMSIG(status)
        } else {
            status
        };
        self.end(i, code, Some(ru), message, cut);
        if !r.released {
            self.release(i);
        }
    }

    fn end(
        &mut self,
        i: usize,
        exit_status: i32,
        ru: Option<libc::rusage>,
        message: String,
        cut: bool,
    ) {
        let ru = ru.unwrap_or_else(zero_rusage);
        let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        let end = TaskEnd {
            name: self.tasks[i].name.clone(),
            exit_status,
            user_seconds: secs(ru.ru_utime),
            system_seconds: secs(ru.ru_stime),
            voluntary_context_switches: ru.ru_nvcsw as u64,
            message,
            cut,
        };
        let json = serde_json::to_string(&end).unwrap_or_default();
        self.w.record(kind::TASK_END, tag::NONE, json.as_bytes());
        self.ends.push(end);
    }
}

fn zero_rusage() -> libc::rusage {
    // SAFETY: rusage is plain integers; all-zero is valid.
    unsafe { std::mem::zeroed() }
}

/// wait4 on one child: Some((status, rusage)) once it has exited.
fn wait(pid: i32, block: bool) -> Option<(i32, libc::rusage)> {
    let mut ru = zero_rusage();
    let mut status = 0;
    let flags = if block { 0 } else { libc::WNOHANG };
    loop {
        // SAFETY: status and ru are valid out-parameters.
        let r = unsafe { libc::wait4(pid, &mut status, flags, &mut ru) };
        if r == pid {
            return Some((status, ru));
        }
        if r < 0 && sys::last_error().raw_os_error() == Some(libc::EINTR) {
            continue;
        }
        if r < 0 {
            // ECHILD: reaped elsewhere; report it as gone.
            return Some((libc::SIGKILL, ru));
        }
        return None;
    }
}
