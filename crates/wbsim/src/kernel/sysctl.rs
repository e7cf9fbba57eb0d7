//! The `vm.*` sysctls a run sets (`/proc/sys/vm`).

use serde::Serialize;

/// The `vm.*` writeback sysctls.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SysctlConfig {
    pub dirty_ratio: u32,
    pub dirty_background_ratio: u32,
    pub dirty_bytes: u64,
    pub dirty_background_bytes: u64,
    pub dirty_expire_centisecs: u32,
    pub dirty_writeback_centisecs: u32,
    pub swappiness: u32,
    pub laptop_mode: bool,
    /// vm.watermark_scale_factor (4.6+), in ten-thousandths of a zone:
    /// the gap between its min, low and high watermarks.
    pub watermark_scale_factor: u32,
    /// vm.watermark_boost_factor (5.0+), in ten-thousandths of a zone's
    /// high watermark: how far fragmenting fallbacks may boost it.
    pub watermark_boost_factor: u32,
}

impl Default for SysctlConfig {
    fn default() -> Self {
        SysctlConfig {
            dirty_ratio: 20,
            dirty_background_ratio: 10,
            dirty_bytes: 0,
            dirty_background_bytes: 0,
            dirty_expire_centisecs: 3000,
            dirty_writeback_centisecs: 500,
            swappiness: 60,
            laptop_mode: false,
            watermark_scale_factor: 10,
            watermark_boost_factor: 15_000,
        }
    }
}
