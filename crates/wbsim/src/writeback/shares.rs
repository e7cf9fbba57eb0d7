//! BDI proportions, the dispatch point: how each device's share of the
//! dirty limit follows its share of recent writeback completions. Chosen
//! once, when the machine is built, from the kernel profile:
//!
//! - [`super::proportions`]: floating proportions (`lib/proportions.c`,
//!   2.6.24 – 3.6), with a period of `2^shift` completions;
//! - [`super::flex_proportions`]: flexible proportions
//!   (`lib/flex_proportions.c`, 3.7+), aged every 3 s.

use super::flex_proportions::FlexGlobal;
use super::proportions::{calc_period_shift, PropGlobal, PropLocal};
use crate::kernel::{KernelProfile, Proportions};
use crate::sim::Ns;

/// The global half of the completion proportions, of the profile's kind.
#[derive(Debug, Clone)]
pub enum CompletionShares {
    Floating(PropGlobal),
    Flexible(FlexGlobal),
}

/// The floating proportions' period shift of a profile for a machine
/// whose dirty limit is `dirty_total_pages` (`calc_period_shift`, or the
/// profile's fixed shift).
pub fn period_shift(profile: &KernelProfile, dirty_total_pages: u64) -> u32 {
    profile
        .proportion_shift_fixed
        .unwrap_or_else(|| calc_period_shift(dirty_total_pages, profile.proportion_shift_offset))
}

impl CompletionShares {
    pub fn from_profile(profile: &KernelProfile, shift: u32) -> CompletionShares {
        match profile.proportions {
            Proportions::Floating => CompletionShares::Floating(PropGlobal::new(shift)),
            Proportions::Flexible => CompletionShares::Flexible(FlexGlobal::default()),
        }
    }

    /// `bdi_writeout_fraction`: (numerator, denominator) of the device's
    /// share, `local` being the device's half.
    pub fn fraction(&mut self, local: &mut PropLocal, now_ns: Ns) -> (u64, u64) {
        match self {
            CompletionShares::Floating(g) => g.fraction(local),
            CompletionShares::Flexible(g) => g.fraction(local, now_ns),
        }
    }

    /// The share as it stands, changing nothing (for sampling).
    pub fn fraction_now(&self, local: &PropLocal, now_ns: Ns) -> (u64, u64) {
        let mut local = local.clone();
        match self {
            CompletionShares::Floating(g) => g.fraction(&mut local),
            CompletionShares::Flexible(g) => g.clone().fraction(&mut local, now_ns),
        }
    }

    /// `__bdi_writeout_inc`: one completion for the device.
    pub fn inc(&mut self, local: &mut PropLocal, now_ns: Ns) {
        match self {
            CompletionShares::Floating(g) => g.inc(local),
            CompletionShares::Flexible(g) => g.add(local, 1, now_ns),
        }
    }
}
