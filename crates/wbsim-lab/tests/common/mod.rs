//! Helpers shared by the integration tests.
#![allow(dead_code)]

use wbsim_guest::protocol::Record;

/// The text of `tests/fixtures/<name>`.
pub fn fixture(name: &str) -> String {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A record as the guest writes it.
pub fn rec(kind: &str, tag: &str, t_ns: u64, payload: &str) -> Record {
    Record {
        kind: kind.to_string(),
        tag: tag.to_string(),
        t_ns,
        payload: payload.as_bytes().to_vec(),
    }
}

/// Seconds to ns.
pub fn ns(s: f64) -> u64 {
    (s * 1e9).round() as u64
}
