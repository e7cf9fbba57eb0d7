//! The vmscan/writeback tracepoints: their totals (computed as
//! trace-vmscan-postprocess.pl computes them) agree with /proc/vmstat, and
//! the ftrace text is deterministic.

mod common;

use std::sync::{Arc, Mutex};

use common::dirty_heavy;
use wbsim::{kernel, simulate_traced, RunOptions};

/// A `Write` that keeps the bytes for the test to read.
#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Shared {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn traced(preset: &str) -> (wbsim::report::RunReport, String) {
    let buf = Shared::default();
    let profile = kernel::preset(preset).unwrap();
    let r = simulate_traced(
        &dirty_heavy(),
        &profile,
        1,
        &RunOptions::default(),
        Box::new(buf.clone()),
    )
    .unwrap();
    let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
    (r, text)
}

#[test]
fn trace_totals_equal_vmstat() {
    for preset in ["3.0-rc6", "3.0-rc6+reclaim-1-3"] {
        let (r, text) = traced(preset);
        let t = &r.ftrace;
        let v = |k: &str| r.vmstat[k] as u64;
        assert!(t.direct_reclaims > 0 && t.kswapd_wakeups > 0, "{preset}");
        assert_eq!(t.direct_reclaims, v("allocstall"), "{preset}");
        assert_eq!(t.direct_pages_scanned, v("pgscan_direct"), "{preset}");
        assert_eq!(t.kswapd_pages_scanned, v("pgscan_kswapd"), "{preset}");
        assert_eq!(t.kswapd_pages_reclaimed, v("kswapd_steal"), "{preset}");
        assert_eq!(
            t.direct_pages_reclaimed + t.kswapd_pages_reclaimed,
            v("pgsteal"),
            "{preset}"
        );
        let writes = t.direct_writes.total() + t.kswapd_writes.total();
        assert_eq!(writes, v("nr_vmscan_write"), "{preset}");
        // One line per event, each naming a known tracepoint.
        let events = text.lines().filter(|l| !l.starts_with('#')).count();
        assert!(events > 1000, "{preset}: {events}");
        assert!(text
            .lines()
            .filter(|l| !l.starts_with('#'))
            .all(|l| l.contains(": mm_vmscan_") || l.contains(": writeback_")));
    }
}

#[test]
fn same_seed_same_trace() {
    let (_, a) = traced("3.0-rc6+reclaim-1-5");
    let (_, b) = traced("3.0-rc6+reclaim-1-5");
    assert_eq!(a, b);
}

/// The report has one kswapd-awake figure: the run's `kswapd_awake_seconds`
/// is the tracepoints' wake-to-sleep total that mmtests prints.
#[test]
fn one_kswapd_awake_figure() {
    let (r, _) = traced("3.0-rc6");
    assert!(r.kswapd_awake_seconds > 0.0);
    assert_eq!(
        (r.kswapd_awake_seconds * 1e9).round() as u64,
        r.ftrace.kswapd_awake_ns
    );
}
