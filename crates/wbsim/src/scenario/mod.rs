//! Scenario files: a TOML description of the machine, devices, filesystems,
//! sysctls and workload to simulate.
//!
//! Parsing keeps the byte span of every key and value so that each problem is
//! reported as `FILE:LINE:COLUMN: dotted.path[i]: what is wrong; allowed: ...`,
//! every problem of a file at once. The keys, types, ranges and defaults
//! are declared in [`schema`], which also generates the reference
//! ([`reference_markdown`], checked in as `docs/scenario-reference.md`).

mod error;
pub mod overrides;
mod reference;
pub mod schema;
mod validate;

use std::path::Path;

use serde::Serialize;

pub use error::{Problem, ScenarioError};
pub use reference::reference_markdown;
// Types the subsystems own, re-exported where a scenario names them.
pub use crate::device::{DeviceConfig, DeviceModel};
pub use crate::fs::FsType;
pub use crate::io_reason;
pub use crate::kernel::SysctlConfig;
pub use crate::sched::IrqDelivery;

/// A fully validated scenario.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scenario {
    /// File stem of the scenario file.
    pub name: String,
    /// Kernel variant to model, e.g. `3.0-vanilla`.
    pub kernel: String,
    pub machine: MachineConfig,
    pub devices: Vec<DeviceConfig>,
    pub filesystems: Vec<FsConfig>,
    pub sysctl: SysctlConfig,
    pub swap: Option<SwapConfig>,
    pub tasks: Vec<TaskConfig>,
    pub run: RunConfig,
    /// `[cpu_cost]`: CPU costs that replace the built-in ones (name, ns).
    pub cpu_cost: Vec<(String, u64)>,
}

/// CPUs, memory zones and timer frequency.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MachineConfig {
    pub cpus: u32,
    /// Every zone, node by node; within a node in ascending order (DMA <
    /// DMA32 < Normal), no duplicates.
    pub zones: Vec<ZoneConfig>,
    /// The NUMA nodes, in order, when the scenario has `[[machine.node]]`
    /// (empty: one node with every CPU and zone).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<NodeConfig>,
    pub min_free_kbytes: Option<u64>,
    pub hz: u32,
    /// Which CPU takes each device interrupt (`irq_delivery`).
    pub irq_delivery: IrqDelivery,
    /// From a wake-up to the woken task running on an idle CPU
    /// (`idle_wakeup_us`), in ns.
    #[serde(skip_serializing_if = "is_zero")]
    pub idle_wakeup_ns: u64,
    /// The smoothed global dirty limit the kernel set at boot
    /// (`boot_dirty_limit_pages`); `None`: the threshold at the start.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub boot_dirty_limit_pages: Option<u64>,
    /// The simulated page's size in KiB (`unit_kib`, 4: page granularity).
    #[serde(skip_serializing_if = "is_base_unit")]
    pub unit_kib: u64,
}

fn is_base_unit(kib: &u64) -> bool {
    *kib == 4
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// One NUMA node: how many CPUs and zones it has (the next ones of the
/// machine's, in order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct NodeConfig {
    pub cpus: u32,
    pub zones: usize,
}

impl ZoneConfig {
    /// Pages of `unit` the kernel holds for the whole run (`kernel_mib` and
    /// `kernel_kib`).
    pub fn kernel_pages(&self, unit: crate::mm::unit::PageUnit) -> u64 {
        unit.pages_of_mib(self.kernel_mib) + self.kernel_kib / unit.kib()
    }
}

impl MachineConfig {
    /// The simulated page's size.
    pub fn unit(&self) -> crate::mm::unit::PageUnit {
        crate::mm::unit::PageUnit::from_kib(self.unit_kib)
    }

    /// The nodes of the machine: those of the scenario, or one node
    /// holding every CPU and zone.
    pub fn node_layout(&self) -> Vec<NodeConfig> {
        if self.nodes.is_empty() {
            vec![NodeConfig {
                cpus: self.cpus,
                zones: self.zones.len(),
            }]
        } else {
            self.nodes.clone()
        }
    }
}

/// A memory zone type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum ZoneKind {
    #[serde(rename = "DMA")]
    Dma,
    #[serde(rename = "DMA32")]
    Dma32,
    Normal,
}

impl ZoneKind {
    /// The name used in scenario files and by the kernel.
    pub fn as_str(self) -> &'static str {
        match self {
            ZoneKind::Dma => "DMA",
            ZoneKind::Dma32 => "DMA32",
            ZoneKind::Normal => "Normal",
        }
    }
}

/// One memory zone.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ZoneConfig {
    pub kind: ZoneKind,
    pub size_mib: u64,
    /// Memory of the zone the kernel holds for the whole run (slab,
    /// page tables, early allocations): never free, never on an LRU list.
    pub kernel_mib: u64,
    /// More held, in KiB (`kernel_kib`, a multiple of 4).
    #[serde(skip_serializing_if = "is_zero")]
    pub kernel_kib: u64,
    /// Pages the allocator managed when the kernel sized the zone's
    /// watermarks and reserves at boot (`managed_mib`); `None`: the size.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub managed_mib: Option<u64>,
}

/// A filesystem on a device, mounted at a relative path.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FsConfig {
    pub fs_type: FsType,
    /// Name of a [`DeviceConfig`].
    pub device: String,
    /// Relative mount path without leading or trailing `/`.
    pub mount: String,
    /// xfs: allocation groups (mkfs `agcount`; 4 for a single disk).
    pub ag_count: u32,
    /// xfs: on-disk inode size in bytes (256 for v4, 512 for v5/CRC).
    pub inode_size: u32,
}

impl FsConfig {
    /// Whether `path` (relative, as a scenario names files) is under this
    /// filesystem's mount.
    pub fn holds(&self, path: &str) -> bool {
        path.strip_prefix(self.mount.as_str())
            .is_some_and(|rest| rest.starts_with('/'))
    }
}

/// A swap partition on one of the devices.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SwapConfig {
    /// Name of a [`DeviceConfig`]; the partition sits at the device's end.
    pub device: String,
    pub size_mib: u64,
}

/// A workload task.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskConfig {
    pub name: String,
    /// The command line as written in the scenario.
    pub command: String,
    pub program: Program,
    /// Start when this earlier task exits (a shell's `a; b`), instead of
    /// at time 0.
    pub after: Option<String>,
    /// Pages of its program file's text the task touches (0: not
    /// modelled), and the file: tasks naming the same file share them.
    pub text_pages: u32,
    pub text_file: String,
    /// The NUMA node whose CPUs the task runs on (`numactl
    /// --cpunodebind`); `None`: any CPU.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<u32>,
}

/// The program a task runs, parsed from its command line.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Program {
    Dd(crate::workload::dd::DdCommand),
    FsMark(crate::workload::fsmark::FsMarkCommand),
    MemTouch(crate::workload::synthetic::MemTouchCommand),
    MapWrite(crate::workload::synthetic::MapWriteCommand),
    Iozone(crate::workload::iozone::IozoneCommand),
    Sync(crate::workload::sync::SyncCommand),
}

impl TaskConfig {
    /// The dd command, if the task runs dd.
    pub fn dd(&self) -> Option<&crate::workload::dd::DdCommand> {
        match &self.program {
            Program::Dd(d) => Some(d),
            _ => None,
        }
    }
}

/// How to run the simulation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunConfig {
    pub seed: u64,
    pub runs: u32,
    /// Simulated seconds.
    pub time_limit_s: u64,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            seed: 1,
            runs: 1,
            time_limit_s: 7200,
        }
    }
}

/// Largest scenario file [`load_scenario`] reads (4 MiB).
pub const MAX_FILE_BYTES: u64 = 4 << 20;

/// Read and validate a scenario file. Anything but a regular file of at
/// most [`MAX_FILE_BYTES`] is refused before it is opened (a FIFO would
/// block the open).
pub fn load_scenario(path: &Path) -> Result<Scenario, ScenarioError> {
    parse_scenario(&read_scenario_text(path)?, &path.display().to_string())
}

/// The text of scenario file `path`: a regular UTF-8 file of at most
/// [`MAX_FILE_BYTES`].
pub fn read_scenario_text(path: &Path) -> Result<String, ScenarioError> {
    use std::io::Read;

    let file = path.display().to_string();
    let fail = |message: String| ScenarioError::whole_file(&file, message);
    let cannot_read = |e: std::io::Error| fail(format!("cannot read file: {}", io_reason(&e)));
    let meta = std::fs::metadata(path).map_err(cannot_read)?;
    check_metadata(&meta).map_err(fail)?;
    let opened = std::fs::File::open(path).map_err(cannot_read)?;
    // The file may have been replaced since: check what was opened.
    check_metadata(&opened.metadata().map_err(cannot_read)?).map_err(fail)?;
    let mut bytes = Vec::new();
    opened
        .take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(cannot_read)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(fail(too_large(bytes.len() as u64)));
    }
    String::from_utf8(bytes)
        .map_err(|_| fail("cannot read file: stream did not contain valid UTF-8".to_string()))
}

/// A regular file of at most [`MAX_FILE_BYTES`].
fn check_metadata(meta: &std::fs::Metadata) -> Result<(), String> {
    let ft = meta.file_type();
    if !ft.is_file() {
        let what = if ft.is_dir() {
            "a directory"
        } else {
            special_file_kind(&ft)
        };
        return Err(format!(
            "cannot read file: it is {what}; allowed: a regular file"
        ));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(too_large(meta.len()));
    }
    Ok(())
}

fn too_large(len: u64) -> String {
    format!("cannot read file: it is {len} bytes; allowed: at most {MAX_FILE_BYTES} bytes (4 MiB)")
}

#[cfg(unix)]
fn special_file_kind(ft: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if ft.is_fifo() {
        "a FIFO"
    } else if ft.is_char_device() {
        "a character device"
    } else if ft.is_block_device() {
        "a block device"
    } else if ft.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

#[cfg(not(unix))]
fn special_file_kind(_: &std::fs::FileType) -> &'static str {
    "not a regular file"
}

/// Parse and validate scenario text; `file_name` is used in errors and its
/// file stem becomes the scenario name.
pub fn parse_scenario(text: &str, file_name: &str) -> Result<Scenario, ScenarioError> {
    parse_scenario_as(text, file_name, file_name)
}

/// As [`parse_scenario`], errors naming `label` (a file with what was done
/// to it), the scenario named after `file_name`.
pub(crate) fn parse_scenario_as(
    text: &str,
    label: &str,
    file_name: &str,
) -> Result<Scenario, ScenarioError> {
    let root = tree::parse(text, label)?;
    let name = Path::new(file_name)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| file_name.to_string());
    validate::scenario(&root, text, label, name)
}

mod tree;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_limits;
#[cfg(test)]
mod tests_numa;
