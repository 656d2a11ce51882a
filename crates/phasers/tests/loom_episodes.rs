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
//! executions each explored, and in how long.
//!
//! # How many episodes show reuse
//!
//! A participant can be at most one episode ahead of another (it cannot arrive at `k + 2` before
//! everyone arrived at `k + 1`), so every reuse hazard is an overlap of two consecutive episodes:
//! one participant already in `k + 1` while another is still being released from `k`. Most
//! algorithms keep no state that alternates between episodes: sense-reversing, ticket, combining
//! tree, dissemination and tournament publish the episode number (`number + 1`) on their release
//! and arrival words, count arrivals cumulatively, or reset their one counter within the episode,
//! so episode `k + 2` repeats the overlap of `k` and `k + 1` with numbers one higher. Two episodes
//! show their every reuse; their `two_parties` models run three anyway (cheap), and their larger
//! models run two. Counting alternates two counters (episode `k + 2` is the first to arrive on a
//! counter re-armed by the leader of `k + 1`) and the MCS tree flips its children's bits, so its
//! expected word alternates: their models keep three episodes where they can.
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
        // One episode at 2 preemptions: what three threads add to `two_parties` is a second
        // sleeper on the very word the others' arrivals decrement and the last one publishes, and
        // one episode shows it at full depth. Across episodes the threads meet only through
        // happens-before: the leader re-arms the next counter before it publishes, and re-arms
        // this one only once everyone arrived at the next episode, that is, after every access
        // to it. That reuse, and the third episode, the first to arrive on a re-armed counter,
        // are explored by `two_parties` and `three_parties_rank_0_alone` at 2 and by
        // `three_parties_three_threads_three_episodes` at 1. (Two episodes at 2: 2.8 million
        // executions, 240 s here; one: 311,000, 21 s.)
        three_parties_three_threads: 3, 1, &[&[0], &[1], &[2]], 2;
        // The third episode reuses the first counter, re-armed while others may still read it.
        three_parties_three_threads_three_episodes: 3, 3, &[&[0], &[1], &[2]], 1;
        // Every rank plays the same part: one grouping is enough.
        three_parties_rank_0_alone: 3, 3, &[&[0], &[1, 2]], 2;
    }
    ticket: TICKET => {
        two_parties: 2, 3, &[&[0], &[1]], 2;
        // 1 preemption, not 2: one `fetch_add` on one ticket counter, and the last ticket publishes
        // `number + 1` on one release word: to loom the same steps as sense-reversing's one
        // counter and one release word (it explored the same 339,999 schedules for both, and for
        // the combining tree below, at 2). `sense_reversing::three_parties_three_threads` keeps 2 for that release
        // with two sleepers; what is ticket's own, its arithmetic on the ticket, depends only on
        // the order of the arrivals, and every order of three arrivals takes at most one
        // preemption (the others are switches at a blocking wait, which loom does not count).
        three_parties_three_threads: 3, 2, &[&[0], &[1], &[2]], 1;
        three_parties_rank_0_alone: 3, 3, &[&[0], &[1, 2]], 2;
        three_parties_rank_1_alone: 3, 3, &[&[1], &[0, 2]], 2;
        three_parties_rank_2_alone: 3, 3, &[&[2], &[0, 1]], 2;
    }
    combining_tree: COMBINING_TREE => {
        two_parties: 2, 3, &[&[0], &[1]], 2;
        // 1 preemption, as ticket's above: with the default fan-in of 4, three participants meet
        // at one node, one `fetch_add` and one release word (the same 339,999 schedules as
        // sense-reversing's at 2). The tree's climbing and its release below are explored with
        // three threads at 2 preemptions by `combining_tree_fan_in_2`.
        three_parties_three_threads: 3, 2, &[&[0], &[1], &[2]], 1;
        three_parties_rank_0_alone: 3, 3, &[&[0], &[1, 2]], 2;
        three_parties_rank_1_alone: 3, 3, &[&[1], &[0, 2]], 2;
        three_parties_rank_2_alone: 3, 3, &[&[2], &[0, 1]], 2;
    }
    combining_tree_fan_in_2: COMBINING_TREE_FAN_IN_2 => {
        two_parties: 2, 3, &[&[0], &[1]], 2;
        // Two episodes show every reuse of the tree's words (see the file's docs).
        three_parties_three_threads: 3, 2, &[&[0], &[1], &[2]], 2;
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
        // Two episodes: every flag carries the episode number, so two show each flag's reuse
        // (see the file's docs). (Three: 1.2 million executions in all, 138 s here; two: 108,000,
        // 14 s.)
        three_parties_rank_0_alone: 3, 2, &[&[0], &[1, 2]], 1;
        three_parties_rank_1_alone: 3, 2, &[&[1], &[0, 2]], 1;
        three_parties_rank_2_alone: 3, 2, &[&[2], &[0, 1]], 1;
    }
    tournament: TOURNAMENT => {
        two_parties: 2, 3, &[&[0], &[1]], 2;
        // Two episodes: arrival and wake-up flags carry the episode number (see the file's docs).
        three_parties_three_threads: 3, 2, &[&[0], &[1], &[2]], 1;
        three_parties_rank_0_alone: 3, 2, &[&[0], &[1, 2]], 1;
        three_parties_rank_1_alone: 3, 3, &[&[1], &[0, 2]], 2;
        three_parties_rank_2_alone: 3, 3, &[&[2], &[0, 1]], 2;
    }
}
