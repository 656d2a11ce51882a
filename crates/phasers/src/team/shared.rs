//! The state every member of one team shares.

use std::any::{Any, TypeId};

use super::meeting::Meeting;
use super::slot::Slot;
use crate::error::Error;
use crate::primitive::{Arc, AtomicBool, AtomicU64, Mutex, Ordering};
use crate::reduce::ReduceAlgorithm;
use crate::wait::{BrokenState, Roster, SpinPlan, Stall, Tuning, Watched, Wording};

/// How many recent calls keep their error: a member can be at most one call ahead of another
/// (every call opens with a meeting of all), so two would do; a few more cost nothing.
const ERRORS_KEPT: usize = 8;

/// A split's outcome for one member: its new team and its rank there.
pub(crate) type SplitSeat = (Arc<TeamShared>, usize);

pub(crate) struct TeamShared {
    pub(crate) size: usize,
    pub(crate) checked: bool,
    /// The key of this team's call signatures (see `signature`).
    pub(crate) signature_key: u64,
    pub(crate) tuning: Tuning,
    /// What combines the arrays of blocking reductions (see `reduce_group`).
    pub(crate) reduce_algorithm: ReduceAlgorithm,
    /// The reduction groups, one `EmbeddedGroup<T>` per element type, made on first use (see
    /// `reduce_group`).
    pub(crate) groups: Mutex<Vec<(TypeId, Box<dyn Any + Send + Sync>)>>,
    pub(crate) plan: SpinPlan,
    pub(crate) slots: Box<[Slot]>,
    /// Every call's opening meeting; meeting `s` belongs to call `s`.
    pub(crate) entry: Meeting,
    /// The closing meeting of `AllSync` calls that move data, numbered separately.
    pub(crate) exit: Meeting,
    /// `seq + 1` of the latest call with a recorded error; checked before taking the lock.
    fault: AtomicU64,
    errors: Mutex<Vec<(u64, Error)>>,
    /// The last split's outcome, by old rank: written by the split's completer, taken by each
    /// member after the release.
    pub(crate) splits: Mutex<Vec<Option<SplitSeat>>>,
    pub(crate) broken: BrokenState,
    /// Never broken: for waits that must not give up because others still use the caller's
    /// buffers (they always finish: see the module docs).
    pub(crate) intact: BrokenState,
    pub(crate) claimed: Box<[AtomicBool]>,
    /// The calls each member has begun, for stall reports (see `Member::wait_for`).
    pub(crate) roster: Roster,
    pub(crate) stall: Stall,
}

// SAFETY: the fields that are not `Sync` by themselves are the slots' posts and staging areas and
// the meetings' inline results, all `UnsafeCell`s whose protocol (one writer at a time, readers
// only between the meetings that order them) is described where they are declared. The raw
// pointers in posts point to buffers whose owners keep them alive until every reader is done.
unsafe impl Sync for TeamShared {}
// SAFETY: as above; nothing in the team is tied to a thread.
unsafe impl Send for TeamShared {}

impl TeamShared {
    pub(crate) fn new(
        size: usize,
        checked: bool,
        tuning: Tuning,
        reduce_algorithm: ReduceAlgorithm,
    ) -> Self {
        TeamShared {
            size,
            checked,
            signature_key: super::signature::new_key(),
            tuning,
            reduce_algorithm,
            groups: Mutex::new(Vec::new()),
            plan: tuning.plan(size),
            slots: (0..size).map(|_| Slot::new()).collect(),
            entry: Meeting::new(size, true),
            exit: Meeting::new(size, false),
            fault: AtomicU64::new(0),
            errors: Mutex::new(Vec::new()),
            splits: Mutex::new(Vec::new()),
            broken: BrokenState::new(),
            intact: BrokenState::new(),
            claimed: (0..size).map(|_| AtomicBool::new(false)).collect(),
            roster: Roster::new(size),
            stall: Stall::new(tuning.stall_after()),
        }
    }

    /// Records `error` as the outcome of call `seq`, unless one is already recorded: every member
    /// of the call then returns the first error found.
    #[cold]
    pub(crate) fn record_error(&self, seq: u64, error: Error) {
        let mut errors = self.errors.lock().unwrap_or_else(|e| e.into_inner());
        if errors.iter().any(|(s, _)| *s == seq) {
            return;
        }
        if errors.len() == ERRORS_KEPT {
            errors.remove(0);
        }
        errors.push((seq, error));
        self.fault.fetch_max(seq + 1, Ordering::AcqRel);
    }

    /// The error recorded for call `seq`, if any.
    #[inline]
    pub(crate) fn error_for(&self, seq: u64) -> Option<Error> {
        if self.fault.load(Ordering::Acquire) <= seq {
            return None;
        }
        self.error_for_slow(seq)
    }

    #[cold]
    fn error_for_slow(&self, seq: u64) -> Option<Error> {
        let errors = self.errors.lock().unwrap_or_else(|e| e.into_inner());
        errors
            .iter()
            .find(|(s, _)| *s == seq)
            .map(|(_, error)| error.clone())
    }

    /// Records that calls from `seq` on cannot complete because `rank` is gone, and wakes every
    /// sleeper so that it sees it. A member may be lost a call ahead of another (it returned
    /// early in `NoSync`, or the other is stuck in a call whose members differed), so the
    /// earliest break counts (see [`BrokenState::break_from_earliest`]).
    #[cold]
    pub(crate) fn break_from(&self, seq: u64, rank: usize) {
        if self.broken.break_from_earliest(seq, rank) {
            self.entry.wake_all();
            self.exit.wake_all();
            for slot in self.slots.iter() {
                slot.touched.wake_all();
            }
        }
    }

    /// The error a call returns once the team is broken.
    pub(crate) fn broken_error(&self) -> Error {
        let (by, episode) = self
            .broken
            .breaker()
            .expect("broken_error is only called once the team is broken");
        Error::Broken { by, episode }
    }
}

/// How stall reports speak of teams.
static STALL_WORDING: Wording = Wording {
    unit: "call",
    members: "member(s)",
    all_arrived: "although every member has begun it: the last to arrive may still be checking it",
    unnamed: "for members still moving data in it (an operator of theirs may not return)",
    advice:
        "every member must make the same collective calls in the same order (checked mode, \
             PHASERS_CHECKED=on, finds calls that differ); a member that is done should be \
             dropped, which breaks the team so that the others get Error::Broken instead of waiting",
};

impl Watched for TeamShared {
    fn stall(&self) -> &Stall {
        &self.stall
    }

    fn wording(&self) -> &'static Wording {
        &STALL_WORDING
    }

    fn describe(&self) -> String {
        format!("Team of {}", self.size)
    }

    fn missing(&self, seq: u64) -> Vec<usize> {
        self.roster.missing(seq)
    }
}
