//! Loom models of the whole waiting path: spin rounds, a yield, then the park, with the adaptive
//! spin budget growing and shrinking between episodes.
//!
//! The other models park at once (under loom a plan has no spin rounds and no yields, because they
//! multiply the interleavings). Here `PHASERS_SPIN` is set, which under loom gives every waiter up
//! to two spin rounds and one yield before it parks (see `Tuning::plan`), so loom explores a release
//! that lands in each phase of a wait, and the budget's changes from one episode to the next. The
//! checks are `loom_support`'s: the barrier invariant with visibility, one completion per episode,
//! one leader per episode.
//!
//! - `counting`, `sense_reversing`: 2 participants, 3 episodes, each on its own thread: the two
//!   single-word algorithms `Auto` picks.
//! - `dissemination`: 2 participants, 2 episodes: several words per episode.
//! - `three_parties_counting`: 3 participants, 2 episodes, at most 1 preemption (the search with 2
//!   does not fit the CI budget).
//!
//! Run with `scripts/loom.sh`.
#![cfg(phasers_loom)]

mod loom_support;

use loom_support::*;

/// Every rank on its own loom thread, `episodes` episodes, with the spin and yield phases on.
fn walk_the_wait_path(config: Config, parties: usize, episodes: u64, max_preemptions: usize) {
    // Read by the builder inside each execution; every model of this file sets the same value.
    std::env::set_var("PHASERS_SPIN", "2");
    let groups: &'static [&'static [usize]] = match parties {
        2 => &[&[0], &[1]],
        _ => &[&[0], &[1], &[2]],
    };
    run_episodes(config, parties, episodes, groups, max_preemptions);
}

#[test]
fn counting() {
    walk_the_wait_path(COUNTING, 2, 3, 2);
}

#[test]
fn sense_reversing() {
    walk_the_wait_path(SENSE_REVERSING, 2, 3, 2);
}

#[test]
fn dissemination() {
    walk_the_wait_path(DISSEMINATION, 2, 2, 2);
}

#[test]
fn three_parties_counting() {
    walk_the_wait_path(COUNTING, 3, 2, 1);
}
