//! The plan the guest runs (tasks, sysctls, tracepoints, modules), and
//! the host's checks on what goes into it.

use wbsim::scenario::Scenario;
use wbsim_guest::protocol::{self, Plan, PlanTask};

use crate::machine::LabMachine;

/// Tracepoints always traced: kswapd's sleeps and wakes (its awake time),
/// reclaim's writes and direct reclaim stalls.
pub const BASE_TRACE_EVENTS: &[&str] = &[
    "vmscan/mm_vmscan_kswapd_wake",
    "vmscan/mm_vmscan_kswapd_sleep",
    "vmscan/mm_vmscan_wakeup_kswapd",
    "vmscan/mm_vmscan_writepage",
    // 5.19 and later name it after folios.
    "vmscan/mm_vmscan_write_folio",
    "vmscan/mm_vmscan_direct_reclaim_begin",
    "vmscan/mm_vmscan_direct_reclaim_end",
];
/// Added by `--trace`: the writeback tracepoints that fire per work item
/// or per throttling decision (not the per-page ones).
pub const WRITEBACK_TRACE_EVENTS: &[&str] = &[
    "vmscan/mm_vmscan_lru_shrink_inactive",
    "writeback/writeback_start",
    "writeback/writeback_written",
    "writeback/writeback_wait",
    "writeback/writeback_wake_background",
    "writeback/balance_dirty_pages",
    "writeback/bdi_dirty_ratelimit",
    "writeback/global_dirty_state",
    "writeback/writeback_congestion_wait",
    "writeback/writeback_wait_iff_congested",
];
/// Guest seconds of writeback making no progress, with pages dirtied and
/// not written, after which a boot is stopped as hung: five minutes past
/// twice the time the flusher may leave a dirty page (`dirty_expire` +
/// `dirty_writeback`), so that no scenario's own settings can trip it.
pub fn writeback_stall_limit_s(sc: &Scenario) -> f64 {
    let centisecs = f64::from(sc.sysctl.dirty_expire_centisecs)
        + f64::from(sc.sysctl.dirty_writeback_centisecs);
    300.0 + 2.0 * centisecs / 100.0
}

/// A tracepoint name as tracefs spells it, `system/event`: one slash,
/// letters, digits and underscores (so it cannot leave `events/`).
pub fn valid_trace_event(name: &str) -> bool {
    let ok = |p: &str| !p.is_empty() && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    matches!(name.split_once('/'), Some((sys, ev)) if ok(sys) && ok(ev))
}

/// The plan the guest runs.
pub fn plan(
    sc: &Scenario,
    m: &LabMachine,
    modules: Vec<String>,
    sample_ms: u64,
    trace: bool,
    extra_events: &[String],
) -> Plan {
    let mut events: Vec<String> = BASE_TRACE_EVENTS.iter().map(|s| s.to_string()).collect();
    if trace {
        events.extend(WRITEBACK_TRACE_EVENTS.iter().map(|s| s.to_string()));
        for e in extra_events {
            if !events.contains(e) {
                events.push(e.clone());
            }
        }
    }
    Plan {
        version: protocol::PLAN_VERSION,
        // A mount(8) type, or `fuse-ntfs` (the guest runs ntfs-3g).
        fs_type: m.fs_type.as_str().into(),
        mount_options: String::new(),
        workdir: "/work".into(),
        mount: m.mount.clone(),
        sysctls: m.sysctls.clone(),
        tasks: sc
            .tasks
            .iter()
            .map(|t| PlanTask {
                name: t.name.clone(),
                command: t.command.clone(),
                after: t.after.clone(),
            })
            .collect(),
        sample_ms,
        trace_events: events,
        // The same with --trace: the buffer comes out of the highest zone,
        // so a bigger one would give a traced boot another machine. The
        // guest logs events lost to overruns.
        trace_buffer_kb: 4096,
        time_limit_s: sc.run.time_limit_s,
        modules,
        swap: m.swap.is_some(),
        data_queue: m.data_queue.clone(),
        lru_gen: None,
        kprobes: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::lab_machine;
    use crate::run::workspace_dir;

    fn scenario() -> Scenario {
        let text = std::fs::read_to_string(
            workspace_dir().join("scenarios/lab/ci-dd-96m-ext4.toml"),
        )
        .unwrap()
        .replace(
            "[run]",
            "[[task]]\nname = \"second\"\ncommand = \"dd if=/dev/zero of=disk/b bs=4k count=8\"\n\
                 after = \"dd\"\n\n[run]",
        );
        wbsim::scenario::parse_scenario(&text, "ci.toml").unwrap()
    }

    #[test]
    fn plan_carries_tasks_sysctls_and_the_guest_checks_it() {
        let sc = scenario();
        let m = lab_machine(&sc).unwrap();
        let extra = vec!["sched/sched_switch".to_string()];
        let p = plan(&sc, &m, vec!["00-virtio.ko".into()], 500, false, &extra);
        assert_eq!(p.version, protocol::PLAN_VERSION);
        assert_eq!((p.fs_type.as_str(), p.mount.as_str()), ("ext4", "disk"));
        assert_eq!(p.tasks[1].after.as_deref(), Some("dd"));
        assert!(p.sysctls.contains(&("vm/dirty_ratio".into(), "20".into())));
        assert_eq!(p.time_limit_s, sc.run.time_limit_s);
        assert_eq!(p.modules, ["00-virtio.ko"]);
        // Default dirty_expire 30 s and dirty_writeback 5 s: 300 + 2 × 35.
        assert_eq!(writeback_stall_limit_s(&sc), 370.0);
        // Without --trace only the vmscan events; with it the writeback ones too.
        assert!(p.trace_events.iter().all(|e| e.starts_with("vmscan/")));
        let traced = plan(&sc, &m, vec![], 500, true, &extra);
        assert!(traced
            .trace_events
            .iter()
            .any(|e| e == "writeback/balance_dirty_pages"));
        // Extra tracepoints come only with --trace, after the built-in ones.
        assert_eq!(
            traced.trace_events.last().map(String::as_str),
            Some("sched/sched_switch")
        );
        assert!(!p.trace_events.contains(&extra[0]));
        // The guest's own plan check accepts what the host writes.
        let json = serde_json::to_string(&p).unwrap();
        let back: Plan = serde_json::from_str(&json).unwrap();
        assert_eq!(back, p);
        assert_eq!(wbsim_guest::plan::problems(&p), Vec::<String>::new());
    }

    #[test]
    fn trace_event_names_are_system_slash_event() {
        for good in ["sched/sched_switch", "vmscan/mm_vmscan_kswapd_wake"] {
            assert!(valid_trace_event(good), "{good}");
        }
        for bad in ["sched", "/x", "a/", "a/b/c", "../x", "a/b c", ""] {
            assert!(!valid_trace_event(bad), "{bad}");
        }
    }
}
