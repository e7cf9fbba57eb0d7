//! The exit status of every `wbsim` command, documented in the README.
//!
//! | status | meaning |
//! |---|---|
//! | 0 | done; every cell passed, no run was cut, no invariant broke |
//! | 1 | an output could not be written, or another run-time failure |
//! | 2 | usage or input error: bad option, scenario file, kernel name, output path or memory estimate; nothing was simulated or written |
//! | 3 | `reproduce`: a cell FAILed or is undefined (calibration rows do not count) |
//! | 4 | a run was cut by its time limit (`outcome: time-limit`) |
//! | 5 | `--check` found an invariant violation |
//! | 130 | interrupted (SIGINT, SIGTERM or SIGHUP); no output file was changed |
//!
//! When several apply, the highest wins except 130.

/// An output could not be written, or another run-time failure.
pub const RUNTIME: u8 = 1;
/// Usage or input error; nothing was simulated.
pub const USAGE: u8 = 2;
/// A reproduced cell failed or is undefined.
pub const FAILED_CELLS: u8 = 3;
/// A run was cut by its time limit.
pub const CUT_RUNS: u8 = 4;
/// `--check` found a violation.
pub const CHECK_VIOLATION: u8 = 5;
/// Interrupted by a signal.
pub const INTERRUPTED: i32 = 130;

/// A command that could not do its work: the status and the message.
#[derive(Debug)]
pub struct Failure {
    pub status: u8,
    pub message: String,
}

impl Failure {
    /// A run-time failure (status 1), e.g. an output that cannot be written.
    pub fn runtime(message: impl Into<String>) -> Self {
        Failure {
            status: RUNTIME,
            message: message.into(),
        }
    }
}

/// Most messages are about the input: bad options, files, names.
impl From<String> for Failure {
    fn from(message: String) -> Self {
        Failure {
            status: USAGE,
            message,
        }
    }
}

impl From<&str> for Failure {
    fn from(message: &str) -> Self {
        message.to_string().into()
    }
}
