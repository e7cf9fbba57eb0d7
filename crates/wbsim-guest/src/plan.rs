//! Reading and checking a [`Plan`]: its version, that every task's
//! command parses as the simulator parses it, that `after` names an
//! earlier task, and the few values the init relies on.

use std::path::Path;

use crate::protocol::{Plan, PLAN_VERSION};
use crate::sys;
use crate::workloads;

/// Read and parse a plan file (JSON).
pub fn read(path: &Path) -> Result<Plan, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("reading the plan {}: {}", path.display(), sys::err_text(&e)))?;
    serde_json::from_str(&text).map_err(|e| format!("the plan {}: {e}", path.display()))
}

/// Every problem of a plan, as messages; empty when it is good.
pub fn problems(plan: &Plan) -> Vec<String> {
    let mut out = Vec::new();
    if plan.version != PLAN_VERSION {
        out.push(format!(
            "plan version {} is not the version this guest speaks ({PLAN_VERSION})",
            plan.version
        ));
    }
    if plan.fs_type.is_empty() {
        out.push("fs_type is empty".into());
    }
    if !plan.workdir.starts_with('/') {
        out.push(format!(
            "workdir {:?} is not an absolute path",
            plan.workdir
        ));
    }
    if plan.mount.is_empty()
        || plan.mount.starts_with('/')
        || plan.mount.split('/').any(|p| p == "..")
    {
        out.push(format!(
            "mount {:?} must be a relative path inside the workdir",
            plan.mount
        ));
    }
    if plan.sample_ms == 0 {
        out.push("sample_ms must be at least 1".into());
    }
    if plan.time_limit_s == 0 {
        out.push("time_limit_s must be at least 1".into());
    }
    for (path, _) in &plan.sysctls {
        if path.is_empty() || path.starts_with('/') || path.split('/').any(|p| p == "..") {
            out.push(format!("sysctl {path:?} is not a path below /proc/sys"));
        }
    }
    for (name, _) in &plan.data_queue {
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            out.push(format!(
                "data_queue {name:?} is not a file name under /sys/block/DISK/queue"
            ));
        }
    }
    for probe in &plan.kprobes {
        if crate::protocol::kprobe_parts(probe).is_none() {
            out.push(format!(
                "kprobe {probe:?} is not {}",
                crate::protocol::KPROBE_FORMS
            ));
        }
    }
    if !plan.kprobes.is_empty() && plan.trace_events.is_empty() {
        out.push("kprobes are traced only with trace_events".into());
    }
    for (i, t) in plan.tasks.iter().enumerate() {
        if let Err(e) = workloads::parse(&t.command) {
            out.push(format!("task {}: {e}", t.name));
        }
        if let Some(a) = &t.after {
            if !plan.tasks[..i].iter().any(|e| &e.name == a) {
                out.push(format!(
                    "task {}: after = {a:?} is not the name of an earlier task",
                    t.name
                ));
            }
        }
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::protocol::PlanTask;

    /// A good plan, for tests.
    pub fn sample() -> Plan {
        Plan {
            version: PLAN_VERSION,
            fs_type: "ext4".into(),
            mount_options: String::new(),
            workdir: "/work".into(),
            mount: "disk".into(),
            sysctls: vec![("vm/dirty_ratio".into(), "20".into())],
            tasks: vec![
                PlanTask {
                    name: "writer".into(),
                    command: "dd if=/dev/zero of=disk/f bs=1M count=10".into(),
                    after: None,
                },
                PlanTask {
                    name: "second".into(),
                    command: "mapwrite -s 1M disk/m".into(),
                    after: Some("writer".into()),
                },
            ],
            sample_ms: 500,
            trace_events: vec![],
            trace_buffer_kb: 1024,
            time_limit_s: 60,
            modules: vec![],
            swap: false,
            data_queue: vec![("max_sectors_kb".into(), "120".into())],
            lru_gen: None,
            kprobes: Vec::new(),
        }
    }

    #[test]
    fn a_good_plan_has_no_problems() {
        assert!(problems(&sample()).is_empty());
    }

    #[test]
    fn a_plan_written_before_swap_reads_as_without_swap() {
        let mut v = serde_json::to_value(sample()).unwrap();
        v.as_object_mut().unwrap().remove("swap");
        let p: Plan = serde_json::from_value(v).unwrap();
        assert!(!p.swap);
    }

    #[test]
    fn a_plan_written_before_queue_settings_sets_none() {
        let mut v = serde_json::to_value(sample()).unwrap();
        v.as_object_mut().unwrap().remove("data_queue");
        let p: Plan = serde_json::from_value(v).unwrap();
        assert!(p.data_queue.is_empty());
    }

    #[test]
    fn a_queue_setting_must_stay_in_the_queue_directory() {
        let mut p = sample();
        p.data_queue
            .push(("../../../proc/sys/vm/x".into(), "1".into()));
        let e = problems(&p);
        assert_eq!(e.len(), 1, "{e:?}");
        assert!(e[0].contains("not a file name under /sys/block/DISK/queue"));
    }

    #[test]
    fn problems_are_named() {
        let mut p = sample();
        p.version = 9;
        p.tasks[0].command = "dd of=x".into();
        p.tasks[1].after = Some("later".into());
        p.mount = "/abs".into();
        p.kprobes = vec!["p tfb try_to_free_buffers".into()];
        let e = problems(&p);
        assert_eq!(e.len(), 6, "{e:?}");
        assert!(e[0].contains("plan version 9"));
        assert!(e.iter().any(|m| m.starts_with("task writer: ")));
        assert!(e
            .iter()
            .any(|m| m.contains("\"later\" is not the name of an earlier task")));
    }
}
