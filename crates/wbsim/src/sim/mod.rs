//! The engine: simulated clock, deterministic event queue, CPU cost table and
//! the per-run random number streams.
//!
//! Time is `u64` nanoseconds since boot. Events with equal time are delivered
//! in insertion order, so a run is a pure function of the scenario and the
//! seed.

pub mod cost;

pub use cost::CostTable;

/// Simulated nanoseconds.
pub type Ns = u64;

pub const NS_PER_US: Ns = 1_000;
pub const NS_PER_MS: Ns = 1_000_000;
pub const NS_PER_SEC: Ns = 1_000_000_000;

/// What an event does when its time comes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum EventKind {
    /// Run (or resume) a task. The token must match the task's current wait
    /// token, otherwise the wake-up is stale (the task was woken earlier by
    /// something else) and is dropped.
    RunTask { task: u32, token: u32 },
    /// The step a CPU was running has ended: pick what it runs next.
    CpuFree { cpu: u32 },
    /// The device finished request `slot` of its queue.
    DeviceComplete { device: u32, slot: u32 },
}

/// Where a packed event keeps its kind: the top two bits.
const KIND_SHIFT: u32 = 62;
const RUN_TASK: u64 = 0;
const CPU_FREE: u64 = 1;
const DEVICE_COMPLETE: u64 = 2;
/// The first field of a packed event: bits 32 to 61.
const FIRST_MASK: u64 = (1 << 30) - 1;

impl EventKind {
    /// The kind in one word, so that a queued event is 16 bytes: the kind
    /// in the top two bits, the task, CPU or device in the next 30, the
    /// token or slot in the low 32. Tasks, CPUs and devices are numbered
    /// from 0 and a run has far fewer than 2^30 of each.
    #[inline(always)]
    fn pack(self) -> u64 {
        let (kind, first, second) = match self {
            EventKind::RunTask { task, token } => (RUN_TASK, task, token),
            EventKind::CpuFree { cpu } => (CPU_FREE, cpu, 0),
            EventKind::DeviceComplete { device, slot } => (DEVICE_COMPLETE, device, slot),
        };
        debug_assert!(u64::from(first) <= FIRST_MASK);
        kind << KIND_SHIFT | u64::from(first) << 32 | u64::from(second)
    }

    #[inline(always)]
    fn unpack(word: u64) -> EventKind {
        let first = (word >> 32 & FIRST_MASK) as u32;
        let second = word as u32;
        match word >> KIND_SHIFT {
            RUN_TASK => EventKind::RunTask {
                task: first,
                token: second,
            },
            CPU_FREE => EventKind::CpuFree { cpu: first },
            _ => EventKind::DeviceComplete {
                device: first,
                slot: second,
            },
        }
    }
}

/// A deterministic priority queue of events: earliest time first, equal
/// times in insertion order.
///
/// A run has few events pending at once: one per CPU, one per runnable or
/// sleeping task, one per request at a device. That is under ten in a dd
/// run, 50 to 100 in the 16-CPU fs_mark on two 31-deep SSDs. So the queue
/// is a vector sorted latest-first: `pop` takes the last element and
/// `push` inserts behind every event due at or before its time, found by
/// walking back from the end, where most new events belong (a linear walk
/// took 1 % fewer instructions than a binary search on that fs_mark run).
/// At these sizes that beats a binary heap's sift and needs no sequence
/// number for ties. Each event is two words (its time and its packed
/// kind), and the walk moves each event it passes up by one as it goes,
/// so an insertion near the end costs no call to `memmove` (that call was
/// 6.8 % of the fs_mark run's time, `perf record`).
#[derive(Debug, Default)]
pub struct EventQueue {
    /// Pending events, latest first (the next one is at the end): the
    /// time and the packed kind.
    pending: Vec<(Ns, u64)>,
}

impl EventQueue {
    pub fn with_capacity(capacity: usize) -> Self {
        EventQueue {
            pending: Vec::with_capacity(capacity),
        }
    }

    #[inline]
    pub fn push(&mut self, at_ns: Ns, kind: EventKind) {
        // Behind (popped after) every event due at or before `at_ns`.
        // Most events are due soon (a CPU's step end, the next request's
        // completion), so the place is near the end: walk back from it,
        // moving each event passed one place up.
        let entry = (at_ns, kind.pack());
        let mut at = self.pending.len();
        self.pending.push(entry);
        let pending = self.pending.as_mut_slice();
        while at > 0 && pending[at - 1].0 <= at_ns {
            pending[at] = pending[at - 1];
            at -= 1;
        }
        pending[at] = entry;
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(Ns, EventKind)> {
        self.pending
            .pop()
            .map(|(t, word)| (t, EventKind::unpack(word)))
    }

    /// Time of the earliest pending event, if any.
    #[inline]
    pub fn peek_time(&self) -> Option<Ns> {
        self.pending.last().map(|&(t, _)| t)
    }

    pub fn len(&self) -> usize {
        self.pending.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }
}

/// One seeded random stream per source of randomness, derived from the run
/// seed and a stream number so that adding a new source does not perturb the
/// others.
pub fn rng_stream(seed: u64, stream: u64) -> rand_pcg::Pcg64Mcg {
    use rand::SeedableRng;
    // SplitMix64 finaliser to decorrelate (seed, stream) pairs.
    let mut z = seed
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(stream.wrapping_mul(0xBF58_476D_1CE4_E5B9))
        .wrapping_add(0x94D0_49BB_1331_11EB);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    rand_pcg::Pcg64Mcg::seed_from_u64(z)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against a binary heap keyed by (time, insertion number), over a
    /// random mix of pushes (many ties) and pops.
    #[test]
    fn pops_in_time_then_insertion_order() {
        use rand::Rng;
        use std::cmp::Reverse;
        let mut rng = rng_stream(7, 0);
        let mut q = EventQueue::default();
        let mut reference = std::collections::BinaryHeap::new();
        let mut seq = 0u64;
        for _ in 0..20_000 {
            if rng.gen_bool(0.55) {
                let t: Ns = rng.gen_range(0..40);
                let kind = EventKind::CpuFree { cpu: seq as u32 };
                q.push(t, kind);
                reference.push(Reverse((t, seq, kind)));
                seq += 1;
            } else {
                let want = reference.pop().map(|Reverse((t, _, k))| (t, k));
                assert_eq!(q.pop(), want);
            }
            assert_eq!(q.len(), reference.len());
            assert_eq!(q.peek_time(), reference.peek().map(|r| r.0 .0));
        }
    }

    #[test]
    fn every_kind_comes_back_as_it_went_in() {
        let kinds = [
            EventKind::RunTask {
                task: (1 << 30) - 1,
                token: u32::MAX,
            },
            EventKind::RunTask { task: 0, token: 0 },
            EventKind::CpuFree { cpu: 15 },
            EventKind::DeviceComplete {
                device: 3,
                slot: u32::MAX,
            },
        ];
        for k in kinds {
            assert_eq!(EventKind::unpack(k.pack()), k);
        }
    }

    #[test]
    fn ties_are_broken_by_insertion_order() {
        let mut q = EventQueue::default();
        q.push(10, EventKind::DeviceComplete { device: 2, slot: 0 });
        q.push(5, EventKind::DeviceComplete { device: 9, slot: 0 });
        q.push(10, EventKind::DeviceComplete { device: 1, slot: 0 });
        q.push(10, EventKind::RunTask { task: 0, token: 0 });
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![
                (5, EventKind::DeviceComplete { device: 9, slot: 0 }),
                (10, EventKind::DeviceComplete { device: 2, slot: 0 }),
                (10, EventKind::DeviceComplete { device: 1, slot: 0 }),
                (10, EventKind::RunTask { task: 0, token: 0 }),
            ]
        );
    }

    #[test]
    fn rng_streams_differ_and_repeat() {
        use rand::Rng;
        let a: u64 = rng_stream(1, 0).gen();
        let b: u64 = rng_stream(1, 1).gen();
        let c: u64 = rng_stream(2, 0).gen();
        assert_ne!(a, b);
        assert_ne!(a, c);
        assert_eq!(a, rng_stream(1, 0).gen::<u64>());
    }
}
