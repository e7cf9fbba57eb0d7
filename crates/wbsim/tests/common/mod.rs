//! Scenario fixtures shared by the end-to-end tests.

use wbsim::scenario::{parse_scenario, Scenario};

/// A scenario on a 20 MiB/s USB stick with dirty_ratio 40: the machine
/// section, the filesystem type and the `[[task]]` sections vary.
pub fn scenario(machine: &str, fs: &str, tasks: &str, name: &str) -> Scenario {
    let text = format!(
        r#"
kernel = "3.0-vanilla"
[machine]
{machine}
[[device]]
name = "sdb"
model = "usb-stick"
capacity_gib = 16
seq_write_mib_per_s = 20.0
max_request_kib = 120
command_overhead_us = 250.0
small_write_penalty_us = 5000.0
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
