//! Replays the fuzzers' inputs on stable, so every finding stays fixed:
//! each file of `fuzz/corpus/<target>/` and `fuzz/artifacts/<target>/` runs
//! through the fuzz harness (`fuzz/src/lib.rs`, the same code the
//! cargo-fuzz targets run) and must not panic and must stop within the
//! event budget. The findings of the first fuzzing runs each have a test
//! below that replays its input under a wall-clock bound (a hang fails
//! it instead of hanging the suite). See fuzz/README.md.

#[path = "../../../fuzz/src/lib.rs"]
#[allow(dead_code)] // the fuzz targets use more of the harness than this test
mod harness;

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use harness::{Target, Verdict, MAX_EVENTS};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

/// The files of `dir` (none if it does not exist), in name order.
fn inputs(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

/// Run `data` through the harness; the panic message, if it panicked.
fn replay(target: Target, data: &[u8]) -> Result<Verdict, String> {
    std::panic::catch_unwind(|| harness::run(target, data)).map_err(|e| {
        e.downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "panic".to_string())
    })
}

#[test]
fn corpus_and_artifacts_replay() {
    let mut failures = Vec::new();
    for target in Target::ALL {
        let corpus = inputs(&fuzz_dir().join("corpus").join(target.name()));
        assert!(
            !corpus.is_empty(),
            "fuzz/corpus/{} has no inputs",
            target.name()
        );
        let artifacts = inputs(&fuzz_dir().join("artifacts").join(target.name()));
        let mut simulated = 0;
        for file in corpus.iter().chain(&artifacts) {
            let data = std::fs::read(file).unwrap();
            match replay(target, &data) {
                Ok(Verdict::Simulated(_, events)) => {
                    simulated += 1;
                    assert!(events <= MAX_EVENTS, "{}: {events} events", file.display());
                }
                Ok(_) => {}
                Err(message) => failures.push(format!("{}: {message}", file.display())),
            }
        }
        assert!(
            simulated > 0,
            "no input of fuzz/corpus/{} reaches the simulation",
            target.name()
        );
    }
    assert!(
        failures.is_empty(),
        "{} fuzz inputs panic:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Replay the inputs of `fuzz/artifacts/<target>/` named `<prefix>-*`;
/// each must finish within `seconds` without panicking.
fn replay_finding(target: Target, prefix: &str, seconds: u64) {
    let dir = fuzz_dir().join("artifacts").join(target.name());
    let files: Vec<PathBuf> = inputs(&dir)
        .into_iter()
        .filter(|f| {
            f.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&format!("{prefix}-")))
        })
        .collect();
    assert!(!files.is_empty(), "no {prefix}-* in {}", dir.display());
    for file in files {
        let data = std::fs::read(&file).unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(replay(target, &data));
        });
        match rx.recv_timeout(Duration::from_secs(seconds)) {
            Ok(Ok(_)) => {}
            Ok(Err(message)) => panic!("{}: {message}", file.display()),
            Err(_) => panic!("{}: not finished in {seconds} s", file.display()),
        }
    }
}

#[test]
fn fixed_scenario_parses_on_every_selector() {
    for selector in 0..=u8::MAX {
        let mut data = vec![selector];
        data.extend_from_slice(b"if=/dev/zero of=disk/f bs=4k count=1");
        if let Err(e) = harness::parse(Target::Dd, &data) {
            panic!("selector {selector}: {e}");
        }
    }
}

#[test]
fn command_line_survives_toml_quoting() {
    let args = "if=/dev/zero of='disk/a \"b\\c\u{1}\u{7f}' bs=4k count=1\n";
    let mut data = vec![0];
    data.extend_from_slice(args.as_bytes());
    let sc = harness::parse(Target::Dd, &data).unwrap();
    assert_eq!(sc.tasks[0].command, format!("dd {args}"));
}

/// iozone without `-i 0` panicked (`unreachable!` in the run code); it is
/// refused at parse time now, as IOzone's manual requires test 0.
#[test]
fn finding_iozone_without_write_test() {
    replay_finding(Target::Iozone, "iozone-without-i0", 10);
}

/// memtouch `-r 333333333335200` never finished; `-r` has a range now.
#[test]
fn finding_memtouch_unbounded_rate() {
    replay_finding(Target::Memtouch, "memtouch-r-unbounded", 10);
}

/// With every `[cpu_cost]` at 0 ns a task that never sleeps ran at one
/// simulated instant and neither the event budget nor the time limit
/// stopped it; a dispatch now hands control back to the engine every
/// 65,536 steps.
#[test]
fn finding_scenario_zero_cpu_cost_hang() {
    replay_finding(Target::Scenario, "zero-cpu-cost-hang", 10);
}

/// Zone sizes of 16 TiB and more overflowed a sum in the validator (a
/// panic where overflow checks are on); machines are bounded at 64 GiB.
#[test]
fn finding_scenario_machine_16tib() {
    replay_finding(Target::Scenario, "machine-16tib", 10);
}
