//! Floating proportions (`lib/proportions.c`, 2.6.24 – 3.6, Peter
//! Zijlstra): each device's share of recent writeback completions, an
//! exponentially decaying average whose half-life is half a period of
//! `2^shift` events. Also used per task for dirtying events
//! (`task_dirty_inc`, 2.6.24 – 3.1).

/// `struct prop_descriptor` (one copy; the kernel keeps two only to change
/// the shift atomically).
#[derive(Debug, Clone)]
pub struct PropGlobal {
    pub shift: u32,
    /// Event counter `t`.
    pub events: u64,
}

/// `struct prop_local_percpu` / `prop_local_single`.
#[derive(Debug, Clone, Default)]
pub struct PropLocal {
    pub x: u64,
    pub period: u64,
}

/// `calc_period_shift`: `2 + ilog2(dirty_total - 1)`, capped at
/// `PROP_MAX_SHIFT` (48 on 64-bit), plus the profile's offset.
pub fn calc_period_shift(dirty_total_pages: u64, offset: i32) -> u32 {
    let base = 2 + ilog2(dirty_total_pages.saturating_sub(1).max(1));
    (base as i32 + offset).clamp(1, 48) as u32
}

pub fn ilog2(x: u64) -> u32 {
    63 - x.max(1).leading_zeros()
}

impl PropGlobal {
    pub fn new(shift: u32) -> PropGlobal {
        PropGlobal { shift, events: 0 }
    }

    /// `prop_norm_percpu`: catch a local counter up with the elapsed
    /// half-periods, halving it once per half-period.
    pub fn normalise(&self, l: &mut PropLocal) {
        let s1 = self.shift - 1;
        let global_period = self.events & !((1u64 << s1) - 1);
        if l.period == global_period {
            return;
        }
        let m = (global_period - l.period) >> s1;
        l.x = if m >= 64 { 0 } else { l.x >> m };
        l.period = global_period;
    }

    /// `__prop_inc_percpu`: one event on `l`.
    pub fn inc(&mut self, l: &mut PropLocal) {
        self.normalise(l);
        l.x += 1;
        self.events += 1;
    }

    /// `prop_fraction_percpu`: (numerator, denominator).
    pub fn fraction(&self, l: &mut PropLocal) -> (u64, u64) {
        self.normalise(l);
        let half = 1u64 << (self.shift - 1);
        let den = half + (self.events & (half - 1));
        (l.x, den)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Test vector 2 of the writeback spec: lazy halving and the
    /// `half + t mod half` denominator.
    #[test]
    fn floating_fraction_vector() {
        let mut g = PropGlobal::new(4);
        let (mut a, mut b) = (PropLocal::default(), PropLocal::default());
        for _ in 0..8 {
            g.inc(&mut a);
        }
        assert_eq!(g.fraction(&mut a), (4, 8));
        for _ in 0..4 {
            g.inc(&mut b);
        }
        assert_eq!(g.fraction(&mut b), (4, 12));
        assert_eq!(g.fraction(&mut a), (4, 12));
    }

    /// After a device alone completes one whole period (`2^shift`
    /// events) following another device's long history, its share is at
    /// least 1/2; the shares of both never sum to more than 1.
    #[test]
    fn a_lone_device_earns_half_within_one_period() {
        let mut g = PropGlobal::new(10);
        let (mut a, mut b) = (PropLocal::default(), PropLocal::default());
        for _ in 0..10_000 {
            g.inc(&mut a);
        }
        for i in 0..(1u64 << 10) {
            g.inc(&mut b);
            let (na, da) = g.fraction(&mut a);
            let (nb, db) = g.fraction(&mut b);
            assert_eq!(da, db);
            assert!(na + nb <= da, "after {i}: {na} + {nb} > {da}");
        }
        let (nb, db) = g.fraction(&mut b);
        assert!(2 * nb >= db, "{nb}/{db}");
    }

    proptest::proptest! {
        /// While one device alone completes writeback its share never
        /// falls by more than one event's worth (the rounding of the
        /// halving at a half-period boundary, which halves numerator and
        /// denominator alike), whatever the history before. Seed 002's
        /// 500 MiB baseline row (first write fast, then the rewrite slow,
        /// on disk B alone) would need its share to fall.
        #[test]
        fn a_lone_writer_share_never_falls(
            shift in 4u32..12,
            a_events in 0u64..5_000,
            b_before in 0u64..5_000,
            b_events in 1u64..5_000,
        ) {
            let mut g = PropGlobal::new(shift);
            let (mut a, mut b) = (PropLocal::default(), PropLocal::default());
            for _ in 0..b_before {
                g.inc(&mut b);
            }
            for _ in 0..a_events {
                g.inc(&mut a);
            }
            let (mut n0, mut d0) = g.fraction(&mut b);
            for i in 0..b_events {
                g.inc(&mut b);
                let (n1, d1) = g.fraction(&mut b);
                proptest::prop_assert!(
                    (n1 + 1) as u128 * d0 as u128 >= n0 as u128 * d1 as u128,
                    "event {}: {}/{} after {}/{}", i, n1, d1, n0, d0
                );
                (n0, d0) = (n1, d1);
            }
        }
    }

    /// Test vector 1: dirty_total 104,857 pages -> shift 18.
    #[test]
    fn period_shift_vector() {
        assert_eq!(calc_period_shift(104_857, 0), 18);
        assert_eq!(calc_period_shift(104_857, -3), 15);
    }
}
