//! The one word a sub-phaser's arrivals, registrations and completions agree on.
//!
//! # Layout (128 bits)
//!
//! | bits | field | meaning |
//! |---|---|---|
//! | 64..=127 | `phase` | the phase this sub-phaser is gathering |
//! | 63 | `ahead` | some signaller has already signalled a later phase (see `Tree::arrive_ahead`) |
//! | 62 | `closes` | the root only: completing a phase has work to do before the re-arm (an advance action, an accumulator); set once, kept for ever |
//! | 31..=61 | `signallers` | signallers registered here: registrations on a leaf, active children above |
//! | 0..=30 | `unarrived` | signallers that have not yet signalled `phase` |
//!
//! The whole phase sits in the word, so every compare-and-swap checks it: an operation that read
//! phase `p` can never act on phase `p + 2` after a wrap of a shorter field.
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
//! `(p, s, 1)` to `(p + 1, s, s)` (see `Tree::rearm_at_once`). Because `closes` sits in the word,
//! that compare-and-swap fails if an accumulator was attached since the arrival looked, and a
//! task can only send to an accumulator once attaching it has marked the root.

use std::num::NonZeroU64;

use crate::primitive::{AtomicU128, Ordering};

const COUNT_BITS: u32 = 31;
const COUNT_MASK: u128 = (1 << COUNT_BITS) - 1;
const AHEAD: u128 = 1 << 63;
const CLOSES: u128 = 1 << 62;

/// The most signallers one sub-phaser can hold: far more tasks than any machine runs.
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
        NonZeroU64::new(counted.pack() as u64)
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

    fn pack(self) -> u128 {
        (u128::from(self.phase) << 64)
            | if self.ahead { AHEAD } else { 0 }
            | if self.closes { CLOSES } else { 0 }
            | (u128::from(self.signallers) << COUNT_BITS)
            | u128::from(self.unarrived)
    }

    fn unpack(word: u128) -> Self {
        State {
            phase: (word >> 64) as u64,
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
        let found = State::unpack((u128::from(phase) << 64) | u128::from(self.0.get()));
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
pub(crate) struct Word(AtomicU128);

impl Word {
    pub(crate) fn new(state: State) -> Self {
        Word(AtomicU128::new(state.pack()))
    }

    #[inline]
    pub(crate) fn load(&self) -> State {
        State::unpack(self.0.load(Ordering::Acquire))
    }

    /// Replaces `current` by `new`; on failure returns what the word holds now.
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
            .map_err(State::unpack)
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
        ] {
            assert_eq!(State::unpack(state.pack()), state);
        }
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
