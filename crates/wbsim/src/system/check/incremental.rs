//! The checker of checked runs (`RunOptions::check_every_event`, `wbsim run
//! --check`): the invariants of [`super`] after every event at a cost that
//! does not grow with the machine's memory.

use serde::Serialize;

use super::{Findings, Invariant, Snap, Tally, ADD, SUB};
use crate::mm::page::Pfn;
use crate::mm::MmHost;
use crate::sched::HasCore;
use crate::system::System;

/// What the checks of a checked run found (`RunReport::check`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckSummary {
    /// Events after which the invariants were checked.
    pub events_checked: u64,
    /// How many distinct invariants are checked ([`Invariant::ALL`]).
    pub invariants: u32,
    /// Checks (after an event, or a full walk before the first event or at
    /// the end) that found at least one invariant broken. A state that
    /// stays broken is found again by each later check.
    pub violations: u64,
    /// The first finding: simulated time, event number, invariant, detail.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_violation: Option<String>,
}

impl CheckSummary {
    /// The one line that ends `wbsim run --check`, e.g. `check: 1234567
    /// events checked, 16 invariants, 0 violations`; with violations, the
    /// first one follows after `; first `.
    pub fn line(&self) -> String {
        let plural = if self.violations == 1 { "" } else { "s" };
        let mut line = format!(
            "check: {} events checked, {} invariants, {} violation{plural}",
            self.events_checked, self.invariants, self.violations
        );
        if let Some(first) = &self.first_violation {
            line += "; first ";
            line += first;
        }
        line
    }
}

/// Frame writes one event may make before its check falls back to a full
/// walk: 256 KiB of log, more than the busiest events of the modelled
/// workloads write (a flusher's 1024-page chunk writes each page a few
/// times).
const LOG_SLOTS: usize = 1 << 16;

/// When a check ran, for the first violation's message.
#[derive(Debug, Clone, Copy)]
enum When {
    Start,
    Event(u64),
    Walk(u64),
    End,
}

impl std::fmt::Display for When {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            When::Start => write!(f, "before the first event"),
            When::Event(n) => write!(f, "after event {n}"),
            When::Walk(n) => write!(f, "after event {n}, full walk"),
            When::End => write!(f, "end of run, full walk"),
        }
    }
}

/// Checks every invariant after every event without walking every frame.
///
/// It keeps, per frame, the state it last counted ([`Snap`], 8 bytes) and
/// a running [`Tally`] of those states. After an event it takes the log of
/// frames written during it (`Frames` logs every write through
/// `IndexMut`), moves each changed frame from its old state's
/// counts to its new one's, checks those frames' own conditions, and then
/// compares the tally with the lists and counters: O(frames written +
/// zones × CPUs) per event instead of O(frames). Every `walk_every` events,
/// after an event that wrote more frames than the log holds, before the
/// first event and at the end of the run it instead walks every frame,
/// rebuilding the snapshots and the tally from scratch.
///
/// When a violation is found:
/// - a list length, zone/global/device counter or wrapped counter that
///   disagrees with the frames (invariants `free-list-length` …
///   `no-wrap`), and a frame whose own flags, holder or mapping break a
///   condition (`free-frame-clean`, `lru-frame-has-pg-lru`,
///   `dirty-frame-mapped`, `frame-in-its-mapping`): at the event that
///   caused it, since every frame write is logged and every counter is
///   read afresh;
/// - a frame made inconsistent without being written, i.e. its mapping's
///   page cache lost or moved it (`frame-in-its-mapping` with only the
///   inode changed), or a frame written past `Frames`' logging: at the
///   next full walk, at most `walk_every` events later, or at the end of
///   the run.
///
/// Nothing is allocated per event: the snapshots, tally and log buffers
/// are sized once, and a message is formatted only for the run's first
/// violation.
#[derive(Debug)]
pub struct Checker {
    pub(super) snaps: Vec<Snap>,
    pub(super) tally: Tally,
    /// Walk every frame once this many events have passed since the last
    /// walk. Default: an eighth of the frames (at least 1024), so the walks
    /// add about eight frame visits per event, no more than the frames a
    /// busy event writes.
    pub walk_every: u64,
    since_walk: u64,
    findings: Findings,
    pub(super) summary: CheckSummary,
}

impl Checker {
    fn new(frames: usize) -> Checker {
        Checker {
            snaps: Vec::with_capacity(frames),
            tally: Tally::default(),
            walk_every: (frames as u64 / 8).max(1024),
            since_walk: 0,
            findings: Findings {
                keep_message: true,
                ..Findings::default()
            },
            summary: CheckSummary {
                events_checked: 0,
                invariants: Invariant::ALL.len() as u32,
                violations: 0,
                first_violation: None,
            },
        }
    }

    /// Count and check every frame from scratch, then the counts.
    fn full_walk(&mut self, sys: &System) {
        self.tally.reset(sys.mm().nr_zones());
        self.snaps.clear();
        for (pfn, p) in sys.mm().pages().iter().enumerate() {
            let s = Snap::of(sys.mm().pages(), pfn);
            self.tally.count(s, ADD);
            self.snaps.push(s);
            sys.check_frame(pfn, p, &mut self.findings);
        }
        sys.check_counts(&self.tally, &mut self.findings);
        sys.check_fs_blocks(&mut self.findings);
        self.since_walk = 0;
    }

    /// Recount and check the frames in `written`, then the counts. A frame
    /// logged twice is recounted once (its snapshot is already current)
    /// and checked twice, which is harmless.
    fn after_writes(&mut self, sys: &System, written: &[Pfn]) {
        for &pfn in written {
            let p = &sys.mm().pages()[pfn as usize];
            let (old, new) = (
                self.snaps[pfn as usize],
                Snap::of(sys.mm().pages(), pfn as usize),
            );
            if old != new {
                self.tally.count(old, SUB);
                self.tally.count(new, ADD);
                self.snaps[pfn as usize] = new;
            }
            sys.check_frame(pfn as usize, p, &mut self.findings);
        }
        sys.check_counts(&self.tally, &mut self.findings);
    }

    /// Fold one check's findings into the summary.
    fn record(&mut self, sys: &System, when: When) {
        if self.findings.broken == 0 {
            return;
        }
        self.findings.broken = 0;
        self.summary.violations += 1;
        if let Some(m) = self.findings.message.take() {
            self.summary.first_violation = Some(format!("at {} ns ({when}): {m}", sys.now()));
            self.findings.keep_message = false;
        }
    }
}

impl System {
    /// Create the checker, walk every frame once and start logging frame
    /// writes. Once per system: a second `run` keeps checking with the same
    /// checker (and the writes made between the runs).
    pub(crate) fn start_checking(&mut self) {
        if self.checker.is_some() {
            return;
        }
        let mut c = Checker::new(self.mm().pages().len());
        c.full_walk(self);
        c.record(self, When::Start);
        self.checker = Some(c);
        self.mm_mut().pages_mut().start_logging(LOG_SLOTS);
    }

    /// Check after an event: incrementally, or a full walk when one is due
    /// or the event wrote more frames than the log holds.
    pub(crate) fn check_event(&mut self) {
        let Some(mut c) = self.checker.take() else {
            return;
        };
        c.summary.events_checked += 1;
        c.since_walk += 1;
        let n = self.core().events_processed();
        let written = self
            .mm()
            .pages()
            .written()
            .filter(|_| c.since_walk < c.walk_every);
        let when = if let Some(written) = written {
            c.after_writes(self, written);
            When::Event(n)
        } else {
            c.full_walk(self);
            When::Walk(n)
        };
        c.record(self, when);
        self.mm_mut().pages_mut().clear_log();
        self.checker = Some(c);
    }

    /// The full walk at the end of a checked run.
    pub(crate) fn check_end(&mut self) {
        let Some(mut c) = self.checker.take() else {
            return;
        };
        c.full_walk(self);
        c.record(self, When::End);
        self.mm_mut().pages_mut().clear_log();
        self.checker = Some(c);
    }

    /// What the checks found so far; `None` unless the run was checked.
    pub fn check_summary(&self) -> Option<CheckSummary> {
        self.checker.as_ref().map(|c| c.summary.clone())
    }
}
