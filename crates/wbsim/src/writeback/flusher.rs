//! Per-device flusher threads, 2.6.32 – 3.x (`fs/fs-writeback.c`:
//! `bdi_writeback_thread`, `wb_do_writeback`, `wb_writeback` (its pass
//! 3.0's or 3.1+'s, see `chunk.rs`),
//! `wb_check_old_data_flush`, `wb_check_background_flush`,
//! `over_bground_thresh`, `bdi_start_background_writeback`,
//! `wakeup_flusher_threads`).

use super::chunk::WritebackChunks;
use super::pass::{PassResult, WbPass, WritebackCaller};
use crate::sched::Step;
use crate::sim::{Ns, NS_PER_MS};
use crate::writeback::limits::Limits;
use crate::writeback::pass::WritebackPasses;
use crate::writeback::throttle::throttle_after_writeback_pass;
use crate::writeback::WritebackHost;

/// `struct wb_writeback_work`.
#[derive(Debug, Clone, Copy)]
pub struct WbWork {
    pub nr_pages: i64,
    pub for_kupdate: bool,
    pub for_background: bool,
    pub range_cyclic: bool,
}

#[derive(Debug, Clone)]
pub struct FlusherState {
    pub bdi: usize,
    /// Sleeping with no timeout or until `timer_at`.
    pub sleeping: bool,
    pub timer_at: Option<Ns>,
    /// `wb->last_old_flush`: the last periodic writeback, or the
    /// registration (`wb_init`), in ns of simulated time (negative:
    /// before the run began).
    pub last_old_flush_ns: i64,
    work: Option<WbWork>,
    /// The pass in progress, boxed: the flusher's state is taken out of
    /// the system for each of its steps, and the pass (104 bytes) would
    /// make that a 176-byte copy each way, a `memcpy` call that was 2 %
    /// of the writeback-plug run's time (`perf record`).
    pass: Option<Box<WbPass>>,
    pub pages_written: u64,
    /// When the current work item started (`wb_start` of `wb_writeback`).
    work_start_ns: Ns,
}

impl FlusherState {
    pub fn new(bdi: usize, registered_before_start_ns: Ns) -> FlusherState {
        FlusherState {
            bdi,
            sleeping: true,
            timer_at: None,
            last_old_flush_ns: -(registered_before_start_ns as i64),
            work: None,
            pass: None,
            pages_written: 0,
            work_start_ns: 0,
        }
    }

    /// The state for a step of the flusher, which runs on it and puts it
    /// back when the step ends: what it reads in the meantime (a wake-up,
    /// the periodic timer) sees the state as it was before the step, the
    /// pass taken out.
    fn take_for_step(&mut self) -> FlusherState {
        FlusherState {
            pass: self.pass.take(),
            work: self.work,
            ..*self
        }
    }
}

/// The flusher threads and the work queued for them.
pub trait Flushers: WritebackHost {
    fn writeback_interval_ns(&self) -> Ns {
        self.sysctl().dirty_writeback_centisecs as Ns * 10 * NS_PER_MS
    }

    /// Wake a sleeping flusher now.
    fn wake_flusher(&mut self, bdi: usize) {
        let tid = self.wb().bdis[bdi].flusher;
        let f = &mut self.wb_mut().flushers[bdi];
        if f.sleeping {
            f.sleeping = false;
            f.timer_at = None;
            self.wake_task(tid);
        }
    }

    /// The first dirty inode of a device: make sure the flusher looks at it
    /// within `dirty_writeback_interval`.
    fn flusher_arm_periodic(&mut self, bdi: usize) {
        let interval = self.writeback_interval_ns();
        if interval == 0 {
            return;
        }
        let tid = self.wb().bdis[bdi].flusher;
        let at = self.now() + interval;
        let f = &mut self.wb_mut().flushers[bdi];
        if f.sleeping && f.timer_at.is_none() {
            f.timer_at = Some(at);
            let token = self.task(tid).token;
            self.push_event(at, crate::sim::EventKind::RunTask { task: tid, token });
        }
    }

    /// `wakeup_flusher_threads(nr_pages)` from reclaim: queue non-cyclic
    /// work on every device with dirty IO (0 = all dirty pages).
    fn wakeup_flusher_threads(&mut self, nr_pages: u64) {
        let nr = if nr_pages == 0 {
            self.mm().gauges().nr_dirty
        } else {
            nr_pages
        };
        for bdi in 0..self.wb().bdis.len() {
            if !self.wb().bdis[bdi].has_dirty_io() {
                continue;
            }
            self.wb_mut().bdis[bdi].work.push_back(WbWork {
                nr_pages: nr as i64,
                for_kupdate: false,
                for_background: false,
                range_cyclic: false,
            });
            self.wake_flusher(bdi);
        }
    }

    /// `over_bground_thresh` (2.6.32 – 3.1): global dirty ≥ background.
    fn over_bground_thresh(&self) -> bool {
        self.mm().gauges().nr_dirty >= self.global_dirty_limits().background
    }

    /// One scheduling step of the flusher thread `tid` of `bdi`.
    #[inline(never)]
    fn flusher_step(&mut self, tid: u32, bdi: usize) -> Step {
        let mut f = self.wb_mut().flushers[bdi].take_for_step();
        f.sleeping = false;
        f.timer_at = None;
        let step = self.flusher_run(tid, &mut f);
        self.wb_mut().flushers[bdi] = f;
        step
    }

    fn flusher_run(&mut self, tid: u32, f: &mut FlusherState) -> Step {
        let bdi = f.bdi;
        self.wb_mut().bdis[bdi].writeback_running = true;
        // wb_do_writeback checks for background work once per wake-up.
        let mut background_checked = false;
        loop {
            // The pass is run where it is kept (a step that yields or
            // blocks leaves it there), and taken out once it is done.
            if let Some(pass) = f.pass.as_mut() {
                match self.writeback_pass(tid, pass, WritebackCaller::Writeback) {
                    PassResult::Done => {}
                    PassResult::Blocked => return Step::Wait(None),
                    PassResult::Yield => return Step::Continue,
                }
                let pass = f.pass.take().expect("the pass just run");
                self.writeback_pass_end(tid, bdi);
                f.pages_written += pass.written;
                throttle_after_writeback_pass(self, bdi, f.work_start_ns);
                let work = f.work.as_mut().expect("pass without work");
                if let Some(sb) = pass.per_inode {
                    // 3.1+ wb_writeback: progress (pages written or inodes
                    // cleaned) → go again; nothing on b_more_io → stop;
                    // else wait.
                    work.nr_pages = sb.work_nr_pages;
                    if sb.wrote > 0 {
                        continue;
                    }
                    if self.wb().bdis[bdi].b_more_io.is_empty() {
                        f.work = None;
                        continue;
                    }
                } else {
                    let budget = self.max_writeback_pages();
                    work.nr_pages -= (budget - pass.nr_to_write.max(0)).max(0);
                    // 3.0 wb_writeback: budget used up → go again; nothing
                    // more on b_more_io → stop; progress → go again; else
                    // wait.
                    if pass.nr_to_write <= 0 {
                        continue;
                    }
                    if self.wb().bdis[bdi].b_more_io.is_empty() {
                        f.work = None;
                        continue;
                    }
                    if pass.written > 0 {
                        continue;
                    }
                }
                // Wait for the inode under I_SYNC elsewhere.
                return self.congestion_wait(tid, self.jiffies_ns(self.hz() / 10));
            }
            if let Some(work) = f.work {
                // wb_writeback loop head.
                let stop = work.nr_pages <= 0
                    || ((work.for_background || work.for_kupdate)
                        && !self.wb().bdis[bdi].work.is_empty())
                    || (work.for_background && !self.over_bground_thresh());
                if stop {
                    f.work = None;
                    continue;
                }
                let older = work.for_kupdate.then(|| {
                    self.now()
                        .saturating_sub(self.sysctl().dirty_expire_centisecs as Ns * 10 * NS_PER_MS)
                });
                let mut pass = self.flusher_pass(bdi, work.nr_pages, older);
                // `wbc_to_write_flags`: REQ_BACKGROUND.
                pass.background = work.for_kupdate || work.for_background;
                f.pass = Some(Box::new(pass));
                continue;
            }
            // wb_do_writeback: queued work, then kupdate, then background.
            f.work_start_ns = self.now();
            if let Some(w) = self.wb_mut().bdis[bdi].work.pop_front() {
                f.work = Some(w);
                continue;
            }
            let interval = self.writeback_interval_ns();
            // wb_check_old_data_flush: dirty_writeback_interval after the
            // last one, or after the registration.
            if interval > 0 && self.now() as i64 >= f.last_old_flush_ns + interval as i64 {
                f.last_old_flush_ns = self.now() as i64;
                let nr = self.mm().gauges().nr_dirty + self.wb().bdis[bdi].b_dirty.len() as u64;
                if nr > 0 {
                    f.work = Some(WbWork {
                        nr_pages: nr as i64,
                        for_kupdate: true,
                        for_background: false,
                        range_cyclic: true,
                    });
                    continue;
                }
            }
            if !background_checked
                && self.over_bground_thresh()
                && self.wb().bdis[bdi].reclaimable > 0
            {
                background_checked = true;
                f.work = Some(WbWork {
                    nr_pages: i64::MAX,
                    for_kupdate: false,
                    for_background: true,
                    range_cyclic: true,
                });
                continue;
            }
            break;
        }
        self.wb_mut().bdis[bdi].writeback_running = false;
        f.sleeping = true;
        if self.wb().bdis[bdi].has_dirty_io() && self.writeback_interval_ns() > 0 {
            let at = self.now() + self.writeback_interval_ns();
            f.timer_at = Some(at);
            Step::Wait(Some(at))
        } else {
            Step::Wait(None)
        }
    }
}

impl<T: WritebackHost + ?Sized> Flushers for T {}

/// `bdi_start_background_writeback`: just wake the flusher; it runs
/// background writeback once it has no queued work.
pub fn bdi_start_background_writeback<H: WritebackHost + ?Sized>(sys: &mut H, bdi: usize) {
    sys.wake_flusher(bdi);
}

#[cfg(test)]
mod tests {
    use crate::kernel::preset;
    use crate::scenario::parse_scenario;
    use crate::sim::NS_PER_MS;
    use crate::system::build_system;
    use crate::writeback::WritebackHost;

    /// A 200 MiB dd to the test USB stick (20 MiB/s) stopped at 5 s; the
    /// flusher's last periodic writeback then (`last_old_flush`).
    fn last_old_flush_at_5_s(registered_before_start_ms: u64) -> i64 {
        let text = format!(
            "kernel = \"6.1\"\n[machine]\ncpus = 2\n[[machine.zone]]\nname = \"DMA32\"\n\
             size_mib = 64\n{}registered_before_start_ms = {registered_before_start_ms}\n\
             [[fs]]\ntype = \"ext4\"\ndevice = \"sdb\"\nmount = \"disk\"\n\
             [[task]]\ncommand = \"dd if=/dev/zero of=disk/f bs=1M count=200\"\n\
             [run]\ntime_limit_s = 5\n",
            include_str!("../../tests/fixtures/usb-stick-device.toml")
        );
        let sc = parse_scenario(&text, "registered.toml").unwrap();
        let mut sys = build_system(&sc, &preset("6.1").unwrap(), 1);
        assert_eq!(sys.run(), crate::system::Outcome::TimeLimit);
        sys.wb().flushers[0].last_old_flush_ns
    }

    /// `wb_check_old_data_flush` runs dirty_writeback_interval (5 s) after
    /// `wb_init`: a disk registered 300 ms before dd has its first
    /// periodic writeback at 4.7 s, one registered at the start not yet.
    #[test]
    fn periodic_writeback_follows_the_disks_registration() {
        assert_eq!(last_old_flush_at_5_s(0), 0);
        let first = last_old_flush_at_5_s(300);
        let due = (5_000 - 300) as i64 * NS_PER_MS as i64;
        assert!(
            (due..due + 50 * NS_PER_MS as i64).contains(&first),
            "first periodic writeback at {first} ns, due at {due}"
        );
    }
}
