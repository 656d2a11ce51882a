//! The one word a sub-phaser's arrivals, registrations and completions agree on.
//!
//! # Layout (64 bits)
//!
//! | bits | field | meaning |
//! |---|---|---|
//! | 34..=63 | `tag` | the phase this sub-phaser is gathering, modulo 2^30 |
//! | 33 | `ahead` | some signaller has already signalled a later phase (see `Tree::arrive_ahead`) |
//! | 32 | `closes` | the root only: completing a phase has work to do between the gather and the re-arm (an advance action, a reproducible accumulator); set once, kept for ever |
//! | 16..=31 | `signallers` | signallers registered here: registrations on a leaf, active children above |
//! | 0..=15 | `unarrived` | signallers that have not yet signalled `phase` |
//!
//! # Why 64 bits, and where the whole phase comes from
//!
//! The word used to hold the whole 64-bit phase in a 128-bit word. Its compare-and-swap
//! (`cmpxchg16b` on x86-64) is on the critical path of every phase twice, once per arrival of a
//! two-task phase, and costs far more than an 8-byte one: measured on the 2-core Intel Xeon VM
//! (2026-11-30), a two-thread loop of guessed compare-and-swaps on one word took ~142 ns per
//! phase with 8-byte words and ~176 ns with 16-byte ones, and one task's `next()` spent 16 of its
//! 43 ns in `cmpxchg16b`. Java's `Phaser` keeps the same fields in one 64-bit word too (31-bit
//! phase, 16-bit counts).
//!
//! So the word keeps the phase's low 30 bits, and every reader knows a phase near the word's (its
//! `near`): the word's phase is the one with that tag nearest `near`, which is right while the two
//! are less than 2^29 apart ([`WINDOW`]). Every reader has such a phase:
//! - a signaller arriving at phase `q` on its leaf: the leaf is at `q` or behind it by at most
//!   [`MAX_RUN_AHEAD`] (a signal-only registration waits before running further ahead of the
//!   phaser), and a parent is behind its completing child by as little;
//! - a completer: the phase it completes;
//! - a registration joining or leaving for phase `q`: the leaf is within [`MAX_RUN_AHEAD`] of the
//!   phaser's phase, and so is `q`: only a signaller registers signallers, and its phase is never
//!   behind the phaser's, nor more than [`MAX_RUN_AHEAD`] ahead of it (see `Registration::enroll`);
//! - a waiter spinning on the root for its phase `p`: only signallers do (the root is then at `p`
//!   or `p + 1`); wait-only registrations, which can lag any number of phases, and observers wait
//!   on the release word, which holds the whole phase.
//!
//! A compare-and-swap checks the tag with the rest, so an operation that read phase `p` acts on
//! `p` only, unless 2^30 phases passed between its load and its compare-and-swap: at the fastest
//! phase measured (about 40 ns, one task alone), that is a thread descheduled for 40 s in the
//! middle of a registration or of a signal ahead, which hold the structure lock. A signaller's
//! own arrival cannot be fooled at all: its phase cannot complete without it. Java's `Phaser`
//! accepts the same exposure at 2^31.
//!
//! # States
//!
//! | state | `signallers` | `unarrived` |
//! |---|---|---|
//! | open | ≥ 1 | ≥ 1 |
//! | completing: the last arrival is delivering the phase upwards | ≥ 1 | 0 |
//! | inactive (no signaller), or being left under the structure lock | 0 | 0 |
//!
//! While a sub-phaser is completing, nothing else changes its word: arrivals for later phases,
//! registrations and drops wait until its completer re-arms it for the next phase.
//!
//! A root without `closes` skips the completing state: its last arrival moves it straight from
//! `(p, s, 1)` to `(p + 1, s, s)` (see `Tree::rearm_at_once`). Plain accumulators do not mark the
//! root: that arrival readies their root cells before its compare-and-swap, which the cells allow
//! whether or not the compare-and-swap then succeeds (see `root_line.rs`). Because `closes` sits
//! in the word, that compare-and-swap fails if a reproducible accumulator was attached since the
//! arrival looked, and a task can only send to one once attaching it has marked the root.

use std::num::NonZeroU64;

use crate::primitive::{Ordering, WordAtomic};

const COUNT_BITS: u32 = 16;
const COUNT_MASK: u64 = (1 << COUNT_BITS) - 1;
const CLOSES: u64 = 1 << 32;
const AHEAD: u64 = 1 << 33;
const TAG_SHIFT: u32 = 34;
/// The tag's width. The crate's own unit tests shrink it to 4 bits (a wrap every 16 phases), so
/// that a test of a few hundred phases crosses the wrap many times, with signals ahead, joins and
/// accumulators (see `phase_wrap_tests.rs`); everything below derives from it.
const TAG_BITS: u32 = if cfg!(test) { 4 } else { 64 - TAG_SHIFT };
const TAG_MASK: u64 = (1 << TAG_BITS) - 1;
/// How many phases a tag takes to come round again.
pub(crate) const TAG_PERIOD: u64 = 1 << TAG_BITS;

/// How far from its reader's `near` a word's phase may be and still be read right.
pub(crate) const WINDOW: u64 = 1 << (TAG_BITS - 1);

/// How many phases a signal-only registration may run ahead of the phaser, and a registering
/// task lag behind it: a quarter of the window, so that a leaf (at most this far ahead of the
/// phaser) and a reader's phase (at most this far either side) stay within the window of each
/// other, with room for the completions not yet published.
pub(crate) const MAX_RUN_AHEAD: u64 = WINDOW / 4;

/// The most signallers one sub-phaser can hold (a flat phaser's registrations that signal; a
/// tree holds this many per sub-phaser).
pub(crate) const MAX_SIGNALLERS: u32 = (1 << COUNT_BITS) - 1;

/// A decoded sub-phaser word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct State {
    pub(crate) phase: u64,
    pub(crate) ahead: bool,
    pub(crate) closes: bool,
    pub(crate) signallers: u32,
    pub(crate) unarrived: u32,
}

impl State {
    pub(crate) fn open(phase: u64, signallers: u32, unarrived: u32, ahead: bool) -> Self {
        debug_assert!(unarrived <= signallers && signallers <= MAX_SIGNALLERS);
        State {
            phase,
            ahead,
            closes: false,
            signallers,
            unarrived,
        }
    }

    /// What an arrival that found this word keeps for its next guess (see `Tree::arrive`): all
    /// of it but the phase and the `ahead` mark; nothing when there is no signaller to count.
    pub(crate) fn seen(self) -> Option<Seen> {
        let counted = State {
            ahead: false,
            ..self
        };
        NonZeroU64::new(counted.pack() & ((1 << TAG_SHIFT) - 1))
            .filter(|_| self.signallers > 0)
            .map(Seen)
    }

    /// Whether the last arrival of `phase` is delivering it: nothing else may change the word.
    pub(crate) fn is_completing(self) -> bool {
        self.unarrived == 0 && self.signallers > 0
    }

    /// No signaller: the sub-phaser takes no part in any phase until a registration activates it.
    pub(crate) fn is_inactive(self) -> bool {
        self.signallers == 0
    }

    fn pack(self) -> u64 {
        ((self.phase & TAG_MASK) << TAG_SHIFT)
            | if self.ahead { AHEAD } else { 0 }
            | if self.closes { CLOSES } else { 0 }
            | (u64::from(self.signallers) << COUNT_BITS)
            | u64::from(self.unarrived)
    }

    /// The state in `word`, whose phase is the one with its tag nearest `near`.
    fn unpack(word: u64, near: u64) -> Self {
        let tag = word >> TAG_SHIFT;
        let distance = tag.wrapping_sub(near) & TAG_MASK;
        let phase = if distance < WINDOW {
            near.wrapping_add(distance)
        } else {
            near.wrapping_sub((1 << TAG_BITS) - distance)
        };
        State {
            phase,
            ahead: word & AHEAD != 0,
            closes: word & CLOSES != 0,
            signallers: ((word >> COUNT_BITS) & COUNT_MASK) as u32,
            unarrived: (word & COUNT_MASK) as u32,
        }
    }
}

/// What an arrival found on its sub-phaser's word, less the phase and the `ahead` mark: the
/// guess for its next arrival there (see `Tree::arrive`). Packed as the word's low half, one
/// machine word, so that keeping it and reading it back never loads across smaller stores (a
/// struct of its fields cost a stalled store-to-load forwarding on every signal).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Seen(NonZeroU64);

impl Seen {
    /// The word this arrival finds for `phase` if the signallers are still those it found last
    /// time, and it arrives in the same place among them (as many still to signal before it).
    /// Tasks tend to keep their places from phase to phase: at two registrations the one that
    /// completes a phase has the completion's work to do after the release, so the other
    /// arrives first again, and the completer guessing "first" would fail its guess every
    /// phase. A place that cannot be one (a completing word) guesses "first".
    pub(crate) fn expected(self, phase: u64) -> State {
        let found = State::unpack(((phase & TAG_MASK) << TAG_SHIFT) | self.0.get(), phase);
        let unarrived = if (1..=found.signallers).contains(&found.unarrived) {
            found.unarrived
        } else {
            found.signallers
        };
        State { unarrived, ..found }
    }
}

/// A sub-phaser's word.
///
/// # Memory ordering
///
/// Every change is a compare-and-swap with `AcqRel`, so the changes form one release sequence: the
/// arrival that completes a phase acquires what every earlier arrival did before arriving (their
/// accumulator contributions above all). Re-arming is a `Release` store by the completer, which
/// alone may change a completing word.
pub(crate) struct Word(WordAtomic);

impl Word {
    pub(crate) fn new(state: State) -> Self {
        Word(WordAtomic::new(state.pack()))
    }

    /// The state, read as the phase nearest `near` (see the module's documentation).
    #[inline]
    pub(crate) fn load(&self, near: u64) -> State {
        State::unpack(self.0.load(Ordering::Acquire), near)
    }

    /// Replaces `current` by `new`; on failure returns what the word holds now, read near
    /// `current`'s phase.
    #[inline]
    pub(crate) fn replace(&self, current: State, new: State) -> Result<(), State> {
        self.0
            .compare_exchange(
                current.pack(),
                new.pack(),
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .map(|_| ())
            .map_err(|actual| State::unpack(actual, current.phase))
    }

    /// The tag alone: the phase modulo 2^30. Its low bits are the phase's, which is all the
    /// root's accumulator results need (see `root_line.rs`); no `near` is needed to read them.
    #[inline]
    pub(crate) fn tag(&self) -> u64 {
        self.0.load(Ordering::Acquire) >> TAG_SHIFT
    }

    /// Sets the word outright: only the completer of a completing word, or the holder of the
    /// structure lock activating an inactive one, may call this.
    pub(crate) fn set(&self, state: State) {
        self.0.store(state.pack(), Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packing_round_trips_at_the_extremes() {
        for state in [
            State::open(0, 1, 1, false),
            State::open(u64::MAX, MAX_SIGNALLERS, MAX_SIGNALLERS, true),
            State {
                closes: true,
                ..State::open(7, MAX_SIGNALLERS, 1, true)
            },
            State::open(1 << 40, MAX_SIGNALLERS, 0, false),
            State::open(TAG_MASK, 2, 1, false),
            State::open(TAG_MASK + 1, 2, 2, false),
        ] {
            // Read near the phase itself, and from the window's two ends.
            for near in [
                state.phase,
                state.phase.wrapping_add(WINDOW),
                state.phase.wrapping_sub(WINDOW - 1),
            ] {
                assert_eq!(State::unpack(state.pack(), near), state, "near {near}");
            }
        }
    }

    /// Across the tag's wrap, the same bits read as the phase before the wrap or after it,
    /// whichever is nearer the reader's phase.
    #[test]
    fn a_tag_reads_as_the_phase_nearest_the_reader() {
        let word = State::open(TAG_MASK + 1, 3, 3, false).pack();
        assert_eq!(State::unpack(word, TAG_MASK).phase, TAG_MASK + 1);
        assert_eq!(
            State::unpack(word, 3 * (TAG_MASK + 1)).phase,
            3 * (TAG_MASK + 1)
        );
        let before_wrap = State::open(TAG_MASK, 3, 3, false).pack();
        assert_eq!(State::unpack(before_wrap, TAG_MASK + 2).phase, TAG_MASK);
    }

    #[test]
    fn a_guess_keeps_the_signallers_and_the_mark_but_not_the_phase() {
        let found = State {
            closes: true,
            ..State::open(9, 5, 3, true)
        };
        let expected = found.seen().unwrap().expected(10);
        assert_eq!(
            expected,
            State {
                closes: true,
                ..State::open(10, 5, 3, false)
            }
        );
        assert_eq!(State::open(9, 0, 0, false).seen(), None);
    }

    #[test]
    fn a_guess_from_a_completing_word_is_the_first_arrival() {
        let completing = State::open(4, 3, 0, false);
        assert_eq!(
            completing.seen().unwrap().expected(5),
            State::open(5, 3, 3, false)
        );
    }

    #[test]
    fn completing_and_inactive_are_told_apart() {
        assert!(State::open(3, 2, 0, false).is_completing());
        assert!(!State::open(3, 0, 0, false).is_completing());
        assert!(State::open(3, 0, 0, false).is_inactive());
        assert!(!State::open(3, 2, 1, false).is_completing());
    }
}
