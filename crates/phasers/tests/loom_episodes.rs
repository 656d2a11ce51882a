//! Loom models of every barrier algorithm through several episodes, checking the barrier invariant
//! (nobody leaves episode `k` before everyone arrived at `k`, and everyone's writes before arriving
//! are visible), that the completion action runs exactly once per episode with its effect visible
//! after the release, and that each episode has exactly one leader (see `loom_support`).
//!
//! - `two_parties`: 2 participants, 3 episodes, each on its own loom thread, waiting with `wait()`.
//! - `three_parties_three_threads`: 3 participants, each on its own loom thread, waiting with
//!   `wait()`.
//! - `three_parties_rank_R_alone`: 3 participants; rank `R` waits with `wait()` on its own thread,
//!   the other two share a thread that polls both with timed waits, so timeouts and resumption are
//!   explored with three parties too. Which rank is alone matters to the tree algorithms, where
//!   ranks play different parts.
//!
//! Three episodes where the search fits the CI budget; otherwise two (or one), or fewer
//! preemptions: each model names its bounds, and `scripts/loom.sh --nocapture` prints how many
//! executions each explored.
//!
//! Every participant is dropped after its last episode, possibly while another is still being
//! released from it, and the `Barrier` object is dropped while the participants run.
//!
//! Run with `scripts/loom.sh`.
#![cfg(phasers_loom)]

mod loom_support;

use loom_support::*;

/// `name: parties, episodes, groups, at most this many preemptions;`, each with its attributes.
macro_rules! episode_models {
    ($($algorithm:ident: $config:expr => {
        $($(#[$attribute:meta])* $name:ident: $parties:literal, $episodes:literal, $groups:expr, $preemptions:literal;)*
    })*) => {
        $(
            mod $algorithm {
                use super::*;

                $(
                    #[test]
                    $(#[$attribute])*
                    fn $name() {
                        run_episodes($config, $parties, $episodes, $groups, $preemptions);
                    }
                )*
            }
        )*
    };
}

episode_models! {
    sense_reversing: SENSE_REVERSING => {
        two_parties: 2, 3, &[&[0], &[1]], 2;
        three_parties_three_threads: 3, 2, &[&[0], &[1], &[2]], 2;
        three_parties_rank_0_alone: 3, 3, &[&[0], &[1, 2]], 2;
        three_parties_rank_1_alone: 3, 3, &[&[1], &[0, 2]], 2;
        three_parties_rank_2_alone: 3, 3, &[&[2], &[0, 1]], 2;
    }
    counting: COUNTING => {
        two_parties: 2, 3, &[&[0], &[1]], 2;
        three_parties_three_threads: 3, 2, &[&[0], &[1], &[2]], 2;
        // The third episode reuses the first counter, re-armed while others may still read it.
        three_parties_three_threads_three_episodes: 3, 3, &[&[0], &[1], &[2]], 1;
        // Every rank plays the same part: one grouping is enough.
        three_parties_rank_0_alone: 3, 3, &[&[0], &[1, 2]], 2;
    }
    ticket: TICKET => {
        two_parties: 2, 3, &[&[0], &[1]], 2;
        three_parties_three_threads: 3, 2, &[&[0], &[1], &[2]], 2;
        three_parties_rank_0_alone: 3, 3, &[&[0], &[1, 2]], 2;
        three_parties_rank_1_alone: 3, 3, &[&[1], &[0, 2]], 2;
        three_parties_rank_2_alone: 3, 3, &[&[2], &[0, 1]], 2;
    }
    combining_tree: COMBINING_TREE => {
        two_parties: 2, 3, &[&[0], &[1]], 2;
        three_parties_three_threads: 3, 2, &[&[0], &[1], &[2]], 2;
        three_parties_rank_0_alone: 3, 3, &[&[0], &[1, 2]], 2;
        three_parties_rank_1_alone: 3, 3, &[&[1], &[0, 2]], 2;
        three_parties_rank_2_alone: 3, 3, &[&[2], &[0, 1]], 2;
    }
    combining_tree_fan_in_2: COMBINING_TREE_FAN_IN_2 => {
        two_parties: 2, 3, &[&[0], &[1]], 2;
        three_parties_three_threads: 3, 3, &[&[0], &[1], &[2]], 2;
        three_parties_rank_0_alone: 3, 3, &[&[0], &[1, 2]], 2;
        three_parties_rank_1_alone: 3, 3, &[&[1], &[0, 2]], 2;
        three_parties_rank_2_alone: 3, 3, &[&[2], &[0, 1]], 2;
    }
    mcs_tree: MCS_TREE => {
        two_parties: 2, 3, &[&[0], &[1]], 2;
        three_parties_three_threads: 3, 3, &[&[0], &[1], &[2]], 1;
        three_parties_rank_0_alone: 3, 2, &[&[0], &[1, 2]], 2;
        three_parties_rank_1_alone: 3, 3, &[&[1], &[0, 2]], 2;
        three_parties_rank_2_alone: 3, 3, &[&[2], &[0, 1]], 2;
    }
    dissemination: DISSEMINATION => {
        two_parties: 2, 3, &[&[0], &[1]], 2;
        // Every round signals on its own flag: the largest search of all.
        three_parties_three_threads: 3, 1, &[&[0], &[1], &[2]], 1;
        three_parties_three_threads_no_preemption: 3, 2, &[&[0], &[1], &[2]], 0;
        three_parties_rank_0_alone: 3, 3, &[&[0], &[1, 2]], 1;
        three_parties_rank_1_alone: 3, 3, &[&[1], &[0, 2]], 1;
        three_parties_rank_2_alone: 3, 3, &[&[2], &[0, 1]], 1;
    }
    tournament: TOURNAMENT => {
        two_parties: 2, 3, &[&[0], &[1]], 2;
        three_parties_three_threads: 3, 3, &[&[0], &[1], &[2]], 1;
        three_parties_rank_0_alone: 3, 2, &[&[0], &[1, 2]], 1;
        three_parties_rank_1_alone: 3, 3, &[&[1], &[0, 2]], 2;
        three_parties_rank_2_alone: 3, 3, &[&[2], &[0, 1]], 2;
    }
}
