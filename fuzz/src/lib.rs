//! The fuzz harness of wbsim, shared by the cargo-fuzz targets
//! (`fuzz/fuzz_targets/*.rs`, nightly) and the corpus replay test
//! (`crates/wbsim/tests/fuzz_corpus.rs`, stable), which includes this file
//! with `#[path]`. It uses nothing but `wbsim` and `std`.
//!
//! Targets:
//! - `scenario`: the input is scenario text (UTF-8) for
//!   `wbsim::scenario::parse_scenario`; a scenario that parses and whose
//!   zones add up to at most [`MAX_SCENARIO_ZONE_MIB`] (so building the
//!   machine stays cheap) is simulated once, on the kernel preset it
//!   names, with its first seed, under [`MAX_EVENTS`] engine events and
//!   at most [`MAX_SIMULATED_S`] simulated seconds.
//! - `dd`, `fs_mark`, `iozone`, `memtouch`, `mapwrite`: the input is one
//!   byte choosing the filesystem type (low two bits: xfs, ext4, btrfs,
//!   fuse-ntfs) and the kernel preset (the other six bits, modulo the
//!   number of presets), then the program's arguments (UTF-8): the command
//!   line is the program name, a space and those arguments. It is the one
//!   `[[task]]` (memtouch: beside a dd) of a fixed 128 MiB machine
//!   ([`program_scenario`]) whose
//!   filesystem is mounted at `disk`, parsed and simulated under
//!   [`MAX_EVENTS`] engine events and [`MAX_SIMULATED_S`] simulated
//!   seconds.
//!
//! Every simulation must return without panicking, and stop by the event
//! budget: its report counts at most [`MAX_EVENTS`] events.

use wbsim::scenario::{parse_scenario, Scenario};
use wbsim::system::Outcome;
use wbsim::RunOptions;

/// The test suites' USB stick (one `[[device]]` section, named `sdb`).
const USB_STICK_DEVICE: &str =
    include_str!("../../crates/wbsim/tests/fixtures/usb-stick-device.toml");

/// Engine events per simulation: a run of the program targets costs about
/// a millisecond or less (see fuzz/README.md).
pub const MAX_EVENTS: u64 = 500;

/// Simulated seconds of a fuzz run at most (the scenario's `time_limit_s`
/// is cut to this); with [`MAX_EVENTS`] it bounds an execution's cost.
pub const MAX_SIMULATED_S: u64 = 2;

/// The largest machine (sum of `[[machine.zone]]` sizes, MiB) that the
/// `scenario` target simulates; larger ones are only parsed, since building
/// the page frames of a large machine would dominate an execution.
pub const MAX_SCENARIO_ZONE_MIB: u64 = 512;

/// One fuzz target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    Scenario,
    Dd,
    FsMark,
    Iozone,
    Memtouch,
    Mapwrite,
}

impl Target {
    pub const ALL: [Target; 6] = [
        Target::Scenario,
        Target::Dd,
        Target::FsMark,
        Target::Iozone,
        Target::Memtouch,
        Target::Mapwrite,
    ];

    /// The cargo-fuzz target name, which is also the folder of its corpus
    /// (`fuzz/corpus/NAME`) and artifacts (`fuzz/artifacts/NAME`).
    pub fn name(self) -> &'static str {
        match self {
            Target::Scenario => "scenario",
            Target::Dd => "dd",
            Target::FsMark => "fs_mark",
            Target::Iozone => "iozone",
            Target::Memtouch => "memtouch",
            Target::Mapwrite => "mapwrite",
        }
    }

    pub fn from_name(name: &str) -> Option<Target> {
        Target::ALL.into_iter().find(|t| t.name() == name)
    }

    /// The program a command-line target runs (`None` for `scenario`).
    pub fn program(self) -> Option<&'static str> {
        match self {
            Target::Scenario => None,
            other => Some(other.name()),
        }
    }
}

/// What one execution did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The input is not UTF-8, or not a scenario / command line that
    /// parses (the parser's error is in the string).
    Rejected(String),
    /// Parsed, but not simulated: the machine is over
    /// [`MAX_SCENARIO_ZONE_MIB`].
    Skipped(String),
    /// Simulated: the outcome and the number of engine events.
    Simulated(Outcome, u64),
}

/// Run one input of `target`: parse it and, if it parses and its machine
/// is small enough, simulate it under the event budget and at most
/// [`MAX_SIMULATED_S`] of simulated time.
pub fn run(target: Target, data: &[u8]) -> Verdict {
    let mut sc = match parse(target, data) {
        Ok(sc) => sc,
        Err(e) => return Verdict::Rejected(e),
    };
    let zone_mib: u64 = sc
        .machine
        .zones
        .iter()
        .map(|z| z.size_mib)
        .fold(0, u64::saturating_add);
    if zone_mib > MAX_SCENARIO_ZONE_MIB {
        return Verdict::Skipped(format!(
            "{zone_mib} MiB of zones, over {MAX_SCENARIO_ZONE_MIB}"
        ));
    }
    sc.run.time_limit_s = sc.run.time_limit_s.min(MAX_SIMULATED_S);
    simulate(&sc)
}

/// Parse the input of `target` into a scenario.
pub fn parse(target: Target, data: &[u8]) -> Result<Scenario, String> {
    match target.program() {
        None => {
            let text = std::str::from_utf8(data).map_err(|e| e.to_string())?;
            parse_scenario(text, "fuzz.toml").map_err(|e| e.to_string())
        }
        Some(program) => {
            let (&selector, args) = data.split_first().ok_or("empty input")?;
            let args = std::str::from_utf8(args).map_err(|e| e.to_string())?;
            let text = program_scenario(selector, program, args);
            parse_scenario(&text, "fuzz.toml").map_err(|e| e.to_string())
        }
    }
}

/// Simulate `sc` once on the kernel it names, with its first seed, under
/// the event budget.
pub fn simulate(sc: &Scenario) -> Verdict {
    let profile = match wbsim::resolve_profile(sc, None) {
        Ok(p) => p,
        Err(e) => return Verdict::Rejected(e),
    };
    let opts = RunOptions {
        max_events: Some(MAX_EVENTS),
        ..Default::default()
    };
    let r = wbsim::simulate(sc, &profile, sc.run.seed, &opts);
    assert!(
        r.sim_events <= MAX_EVENTS,
        "{} engine events, over the budget of {MAX_EVENTS}",
        r.sim_events
    );
    Verdict::Simulated(r.outcome, r.sim_events)
}

/// Filesystem types of the command-line targets, by the low two bits of
/// the first input byte.
pub const FS_TYPES: [&str; 4] = ["xfs", "ext4", "btrfs", "fuse-ntfs"];

/// The fixed scenario of the command-line targets: 2 CPUs, a 16 MiB DMA
/// and a 112 MiB DMA32 zone (128 MiB), the test suites' 20 MiB/s USB stick
/// with a 256 MiB swap partition, one filesystem mounted at `disk`,
/// dirty_ratio 40, a 2 s time limit, and the command line `PROGRAM ARGS`
/// as the only task; memtouch, a background process the run does not
/// wait for, runs beside a 256 MiB dd so that the run lasts. `selector`'s
/// low two bits choose the filesystem type ([`FS_TYPES`]), the other six
/// the kernel preset (modulo the number of presets).
pub fn program_scenario(selector: u8, program: &str, args: &str) -> String {
    let fs = FS_TYPES[usize::from(selector & 3)];
    let presets = wbsim::kernel::preset_names();
    let kernel = presets[usize::from(selector >> 2) % presets.len()];
    let command = toml_basic_string(&format!("{program} {args}"));
    let companion = if program == "memtouch" {
        "[[task]]\nname = \"writer\"\ncommand = \"dd if=/dev/zero of=disk/writer bs=1M count=256\"\n"
    } else {
        ""
    };
    format!(
        r#"kernel = "{kernel}"
[machine]
cpus = 2
total_mib = 128
[[machine.zone]]
name = "DMA"
size_mib = 16
[[machine.zone]]
name = "DMA32"
size_mib = 112
{USB_STICK_DEVICE}
[[fs]]
type = "{fs}"
device = "sdb"
mount = "disk"
[swap]
device = "sdb"
size_mib = 256
[sysctl]
dirty_ratio = 40
[[task]]
name = "fuzz"
command = {command}
{companion}[run]
seed = 1
runs = 1
time_limit_s = 2
"#
    )
}

/// `s` as a TOML basic string, quotes included.
pub fn toml_basic_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
