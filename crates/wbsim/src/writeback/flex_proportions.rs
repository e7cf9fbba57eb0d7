//! Flexible proportions (`lib/flex_proportions.c`, Linux 3.7 – 6.x, Jan
//! Kara), which replaced the floating proportions for the per-device share
//! of writeback completions. Shares age by time, not by event count: a
//! deferrable timer (`writeout_period`, `VM_COMPLETIONS_PERIOD_LEN` =
//! 3 s) declares a new period every 3 s while completions happen, and each
//! new period halves every count. `__fprop_inc_percpu` (3.7 counts one
//! event per page) and `fprop_fraction_percpu` give the share.
//!
//! The timer is emulated lazily: before the state is read or changed, the
//! periods that have expired since the last look are declared at once, as
//! `writeout_period` does for missed periods when its deferrable timer
//! fires late.

use super::proportions::PropLocal;
use crate::sim::Ns;

/// `VM_COMPLETIONS_PERIOD_LEN` = 3 * HZ jiffies: 3 s whatever HZ is.
pub const COMPLETIONS_PERIOD_NS: Ns = 3_000_000_000;

/// `struct fprop_global` plus the period timer's `period_time`.
#[derive(Debug, Clone)]
pub struct FlexGlobal {
    /// Events in the current (decayed) window; starts at 1 so that a
    /// period with no events is never divided by zero (`fprop_global_init`).
    pub events: u64,
    /// Periods declared so far.
    pub period: u64,
    /// When the timer fires next; `None` while it is not armed (no
    /// completions since everything aged to nothing).
    pub period_time_ns: Option<Ns>,
}

impl Default for FlexGlobal {
    fn default() -> Self {
        FlexGlobal {
            events: 1,
            period: 0,
            period_time_ns: None,
        }
    }
}

impl FlexGlobal {
    /// Fire the period timer for every expiry up to `now_ns`
    /// (`writeout_period` → `fprop_new_period(missed + 1)`): all counts
    /// halve once per period; when nothing is left (`events <= 1`) the
    /// timer stops.
    pub fn catch_up(&mut self, now_ns: Ns) {
        let Some(due) = self.period_time_ns else {
            return;
        };
        if now_ns < due {
            return;
        }
        let periods = (now_ns - due) / COMPLETIONS_PERIOD_NS + 1;
        if self.events <= 1 {
            self.period_time_ns = None;
            return;
        }
        self.events = if periods >= 64 {
            0
        } else {
            self.events >> periods
        };
        self.period += periods;
        self.period_time_ns = Some(due + periods * COMPLETIONS_PERIOD_NS);
    }

    /// `fprop_reflect_period_percpu`: halve a device's count once for every
    /// period it has not seen.
    fn reflect(&self, l: &mut PropLocal) {
        if l.period == self.period {
            return;
        }
        let missed = self.period - l.period;
        l.x = if missed >= 64 { 0 } else { l.x >> missed };
        l.period = self.period;
    }

    /// `__bdi_writeout_inc` (3.7): `pages` completions on the device of
    /// `l`; arms the period timer if it is not running (`wp_next_time`).
    pub fn add(&mut self, l: &mut PropLocal, pages: u64, now_ns: Ns) {
        self.catch_up(now_ns);
        self.reflect(l);
        l.x += pages;
        self.events += pages;
        if self.period_time_ns.is_none() {
            self.period_time_ns = Some(now_ns + COMPLETIONS_PERIOD_NS);
        }
    }

    /// `fprop_fraction_percpu`: (numerator, denominator), the denominator
    /// never below the numerator nor below 1.
    pub fn fraction(&mut self, l: &mut PropLocal, now_ns: Ns) -> (u64, u64) {
        self.catch_up(now_ns);
        self.reflect(l);
        let num = l.x;
        let den = if self.events <= num {
            num.max(1)
        } else {
            self.events
        };
        (num, den)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Ns = 1_000_000_000;

    /// A device that completes alone for one period owns at least half of
    /// the share afterwards, however large the other's history.
    #[test]
    fn a_lone_device_earns_half_within_one_period() {
        let mut g = FlexGlobal::default();
        let (mut a, mut b) = (PropLocal::default(), PropLocal::default());
        for i in 0..1000 {
            g.add(&mut a, 1000, i * 10_000_000);
        }
        let t0 = 10 * S;
        // B alone, at A's rate, for one period.
        for i in 0..300 {
            g.add(&mut b, 1000, t0 + i * 10_000_000);
        }
        let (nb, db) = g.fraction(&mut b, t0 + 3 * S);
        assert!(2 * nb >= db, "{nb}/{db}");
        let (na, da) = g.fraction(&mut a, t0 + 3 * S);
        assert!(na * db + nb * da <= da * db, "{na}/{da} + {nb}/{db} > 1");
    }

    /// Spec §3.2: events start at 1; with no completions for longer than
    /// the shares last, the timer stops.
    #[test]
    fn aging_to_nothing_stops_the_timer() {
        let mut g = FlexGlobal::default();
        let mut a = PropLocal::default();
        g.add(&mut a, 8, 0);
        assert_eq!(g.period_time_ns, Some(3 * S));
        assert_eq!(g.fraction(&mut a, S), (8, 9));
        // Two periods later (missed one): 9 >> 2 = 2, 8 >> 2 = 2.
        assert_eq!(g.fraction(&mut a, 6 * S + 1), (2, 2));
        assert_eq!(g.period_time_ns, Some(9 * S));
        g.catch_up(9 * S); // 2 >> 1 = 1
        g.catch_up(12 * S); // events <= 1: the timer stops
        assert_eq!(g.period_time_ns, None);
        // The shares freeze until the next completion re-arms the timer.
        assert_eq!(g.fraction(&mut a, 100 * S), (1, 1));
    }
}
