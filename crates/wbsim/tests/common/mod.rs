//! Scenario fixtures shared by the end-to-end tests.

use wbsim::report::RunReport;
use wbsim::scenario::{parse_scenario, Scenario};

/// The USB stick the crate's unit-test fixtures use too.
const USB_STICK_DEVICE: &str = include_str!("../fixtures/usb-stick-device.toml");

/// A scenario on a 20 MiB/s USB stick with dirty_ratio 40: the machine
/// section, the filesystem type and the `[[task]]` sections vary.
pub fn scenario(machine: &str, fs: &str, tasks: &str, name: &str) -> Scenario {
    let text = format!(
        r#"
kernel = "3.0-vanilla"
[machine]
{machine}
{USB_STICK_DEVICE}
[[fs]]
type = "{fs}"
device = "sdb"
mount = "disk"
[sysctl]
dirty_ratio = 40
{tasks}
"#
    );
    parse_scenario(&text, name).unwrap()
}

/// A `[machine]` body: `cpus` CPUs and DMA, DMA32 and Normal zones of the
/// given sizes in MiB.
pub fn three_zone_machine(cpus: u32, dma_mib: u64, dma32_mib: u64, normal_mib: u64) -> String {
    format!(
        r#"cpus = {cpus}
total_mib = {}
[[machine.zone]]
name = "DMA"
size_mib = {dma_mib}
[[machine.zone]]
name = "DMA32"
size_mib = {dma32_mib}
[[machine.zone]]
name = "Normal"
size_mib = {normal_mib}"#,
        dma_mib + dma32_mib + normal_mib
    )
}

/// [`small`]'s task: dd writing 160 MiB to `disk/f`.
#[allow(dead_code)]
pub const SMALL_DD_TASK: &str = r#"[[task]]
command = "dd if=/dev/zero of=disk/f bs=32k count=5120""#;

/// A 64 MiB machine writing 160 MiB through a slow USB stick: small enough
/// to check every invariant after every event, large enough that the page
/// cache fills and reclaim runs.
#[allow(dead_code)] // not every test file uses every fixture
pub fn small(fs: &str) -> Scenario {
    scenario(
        &three_zone_machine(2, 16, 32, 16),
        fs,
        SMALL_DD_TASK,
        &format!("{fs}.toml"),
    )
}

/// `small("xfs")` with a 90 % dirty limit, so dirty pages reach the LRU
/// tail and both kswapd and direct reclaim meet them.
#[allow(dead_code)]
pub fn dirty_heavy() -> Scenario {
    let mut sc = small("xfs");
    sc.sysctl.dirty_ratio = 90;
    sc
}

/// A checked run (`check_every_event`) checked every event and found no
/// invariant broken; the message has the first violation otherwise.
#[allow(dead_code)]
pub fn assert_no_violations(r: &RunReport, what: &str) {
    let c = r.check.as_ref().expect("a checked run reports its checks");
    assert_eq!(c.events_checked, r.sim_events, "{what}: {}", c.line());
    assert_eq!(c.violations, 0, "{what}: {}", c.line());
}

/// A `Write` a traced run can own while the test keeps a handle to read
/// the bytes back afterwards.
#[allow(dead_code)] // only the trace-reading tests use it
#[derive(Clone, Default)]
pub struct SharedBuf(pub std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for SharedBuf {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
