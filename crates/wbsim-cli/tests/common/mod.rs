//! Scenario texts shared by the `wbsim` end-to-end tests.

use std::path::Path;

/// The commented example scenario: a 10 GiB dd through a USB stick to xfs
/// on a 3765 MiB machine (runs for about half a second).
pub fn example() -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/zone-dirty-v2/xfs.toml");
    std::fs::read_to_string(p).unwrap()
}

/// A small, quick variant of the example: 64 MiB machine, 32 MiB dd.
pub fn quick() -> String {
    example()
        .replace("total_mib = 3765", "total_mib = 64")
        .replace("size_mib = 15", "size_mib = 16")
        .replace("size_mib = 3246", "size_mib = 32")
        .replace("size_mib = 504", "size_mib = 16")
        .replace("count=$((10 << 15))", "count=1024")
}
