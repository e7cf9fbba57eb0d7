//! The scheduler's `sched_switch` and `sched_wakeup` tracepoints
//! (`include/trace/events/sched.h`): which task each CPU ran and who woke
//! whom, the events to set beside vmscan's when asking why kswapd ran
//! when it did (the lab traces real guests with the same two).
//!
//! Layouts, read in `include/trace/events/sched.h`:
//! - `sched_switch`: `prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s
//!   ==> next_comm=%s next_pid=%d next_prio=%d`, the same from 3.2 to 6.1;
//!   a preempted task's state prints `R+` (`TASK_STATE_MAX` / 6.1's
//!   `TASK_REPORT_MAX` bit that `__trace_sched_switch_state` sets).
//! - `sched_wakeup`: `comm=%s pid=%d prio=%d success=%d target_cpu=%03d`
//!   up to 4.2 (`success` always 1 since 3.x's "rudiment"); 4.3 removed
//!   `success` when it added `sched_waking`.
//!
//! Every modelled task is nice 0, so every prio prints 120.

use std::fmt::Write;

use super::context::{clip_comm, write_context};
use super::event::WritebackLayout;

/// `prio` of a nice-0 task (`NICE_TO_PRIO(0)`).
const NICE_0_PRIO: u32 = 120;

/// A task as the sched tracepoints name it; pid 0 is the CPU's idle task
/// (`swapper/N`, `<idle>` in the context column).
#[derive(Debug, Clone, Copy)]
pub struct SchedTask<'a> {
    pub comm: &'a str,
    pub pid: u32,
}

/// The state a task leaves the CPU in (`prev_state`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SwitchState {
    /// Still runnable: preempted (`R+`).
    Preempted,
    /// The idle task, or a task that gave the CPU up while runnable (`R`).
    Running,
    /// `TASK_INTERRUPTIBLE` (`S`).
    Sleeping,
    /// `TASK_UNINTERRUPTIBLE` (`D`).
    DiskSleep,
    /// Exited, waiting to be reaped (`Z`).
    Zombie,
}

impl SwitchState {
    pub fn as_str(self) -> &'static str {
        match self {
            SwitchState::Preempted => "R+",
            SwitchState::Running => "R",
            SwitchState::Sleeping => "S",
            SwitchState::DiskSleep => "D",
            SwitchState::Zombie => "Z",
        }
    }
}

/// The idle task's comm on `cpu` (`swapper/N`, `init_idle`).
pub fn write_idle_comm(out: &mut String, cpu: u32) {
    let _ = write!(out, "swapper/{cpu}");
}

/// Append one `sched_switch` line: `prev` leaves `cpu` in `prev_state`,
/// `next` runs there from `ts_ns`. An idle side has pid 0; its comm is
/// printed as `swapper/<cpu>`.
pub fn write_sched_switch(
    out: &mut String,
    cpu: u32,
    ts_ns: u64,
    prev: SchedTask,
    prev_state: SwitchState,
    next: SchedTask,
) {
    write_context(out, prev.comm, prev.pid, cpu, ts_ns, "sched_switch");
    out.push_str("prev_comm=");
    write_comm(out, prev, cpu);
    let _ = write!(
        out,
        " prev_pid={} prev_prio={NICE_0_PRIO} prev_state={} ==> next_comm=",
        prev.pid,
        prev_state.as_str()
    );
    write_comm(out, next, cpu);
    let _ = writeln!(out, " next_pid={} next_prio={NICE_0_PRIO}", next.pid);
}

/// Append one `sched_wakeup` line: `waker` (pid 0: interrupt context on an
/// idle CPU) on `cpu` makes `woken` runnable on `target_cpu`.
pub fn write_sched_wakeup(
    out: &mut String,
    waker: SchedTask,
    cpu: u32,
    ts_ns: u64,
    woken: SchedTask,
    target_cpu: u32,
    layout: WritebackLayout,
) {
    write_context(out, waker.comm, waker.pid, cpu, ts_ns, "sched_wakeup");
    out.push_str("comm=");
    write_comm(out, woken, target_cpu);
    let _ = write!(out, " pid={} prio={NICE_0_PRIO}", woken.pid);
    if layout == WritebackLayout::Linux3 {
        out.push_str(" success=1");
    }
    let _ = writeln!(out, " target_cpu={target_cpu:03}");
}

fn write_comm(out: &mut String, t: SchedTask, cpu: u32) {
    if t.pid == 0 {
        write_idle_comm(out, cpu);
    } else {
        out.push_str(clip_comm(t.comm));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const IDLE: SchedTask = SchedTask { comm: "", pid: 0 };

    /// Lines of a real 6.1 guest (`wbsim lab run ... --trace-event
    /// sched/sched_switch`), less the irq-flags column 3.0's header lacks.
    #[test]
    fn switch_lines_match_a_real_guest() {
        let mut s = String::new();
        let dd = SchedTask {
            comm: "init",
            pid: 91,
        };
        let kswapd = SchedTask {
            comm: "kswapd0",
            pid: 38,
        };
        write_sched_switch(
            &mut s,
            1,
            23_867_268_000,
            dd,
            SwitchState::Preempted,
            kswapd,
        );
        assert_eq!(
            s,
            "            init-91    [001]    23.867268: sched_switch: prev_comm=init prev_pid=91 \
             prev_prio=120 prev_state=R+ ==> next_comm=kswapd0 next_pid=38 next_prio=120\n"
        );
        s.clear();
        write_sched_switch(&mut s, 0, 2_295_855_000, IDLE, SwitchState::Running, kswapd);
        assert_eq!(
            s,
            "          <idle>-0     [000]     2.295855: sched_switch: prev_comm=swapper/0 prev_pid=0 \
             prev_prio=120 prev_state=R ==> next_comm=kswapd0 next_pid=38 next_prio=120\n"
        );
        s.clear();
        write_sched_switch(&mut s, 1, 0, dd, SwitchState::DiskSleep, IDLE);
        assert!(s.ends_with("prev_state=D ==> next_comm=swapper/1 next_pid=0 next_prio=120\n"));
    }

    #[test]
    fn wakeup_prints_success_before_4_3_only() {
        let kswapd = SchedTask {
            comm: "kswapd0",
            pid: 38,
        };
        let dd = SchedTask { comm: "dd", pid: 7 };
        let mut s = String::new();
        write_sched_wakeup(&mut s, dd, 0, 1_000, kswapd, 1, WritebackLayout::Linux6);
        assert_eq!(
            s,
            "              dd-7     [000]     0.000001: sched_wakeup: comm=kswapd0 pid=38 \
             prio=120 target_cpu=001\n"
        );
        s.clear();
        write_sched_wakeup(&mut s, IDLE, 1, 1_000, kswapd, 1, WritebackLayout::Linux3);
        assert!(s.starts_with("          <idle>-0     [001]"));
        assert!(s.ends_with("prio=120 success=1 target_cpu=001\n"));
    }

    #[test]
    fn long_comms_are_clipped_to_15_bytes() {
        let mut s = String::new();
        let long = SchedTask {
            comm: "a-very-long-task-name",
            pid: 1001,
        };
        write_sched_switch(&mut s, 0, 0, long, SwitchState::Zombie, IDLE);
        assert!(s.contains("prev_comm=a-very-long-tas prev_pid=1001"));
        assert!(s.contains("prev_state=Z"));
    }
}
