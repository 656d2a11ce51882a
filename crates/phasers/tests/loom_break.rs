//! Loom models of breaking: a participant dropped without leaving.
//!
//! - **Dropped before arriving at episode 1**: everyone else's wait for episode 1 must return
//!   `Error::Broken { by, episode: 1 }`, and keep returning it, instead of hanging (loom reports a
//!   hang as a deadlock or as a model that never ends). Episode 0 must complete normally for all.
//!   Every algorithm with 2 participants (each rank dropped in turn), and several with 3 (the root
//!   and a leaf of the trees): on three threads, or with the two survivors polled with timed waits
//!   on one thread.
//! - **Dropped right after its last episode**, while the other may still be released from it: the
//!   other's waits for that episode and the earlier ones must succeed; breaking affects only later
//!   episodes, so its next wait returns `Error::Broken { by, episode: 2 }`.
//!
//! Run with `scripts/loom.sh`.
#![cfg(phasers_loom)]

mod loom_support;

use loom_support::*;

/// Rank `dropper` completes episode 0 and is dropped; the others complete episode 0 and must then
/// find the barrier broken from episode 1. Ranks in one group share a loom thread (see
/// `loom_support`).
fn dropped_before_arriving(
    config: Config,
    parties: usize,
    dropper: usize,
    groups: &'static [&'static [usize]],
) {
    model(move || {
        let (reports, ledger) = scenario(config, parties, 2, groups, move |mut group, ledger| {
            let led = complete(&mut group, ledger, 0);
            if let Some(at) = group.iter().position(|p| p.rank() == dropper) {
                std::mem::drop(group.remove(at));
            }
            if group.is_empty() {
                return led;
            }
            for _ in 0..2 {
                let outcomes = match &mut group[..] {
                    [participant] => vec![participant.wait()],
                    group => poll_all_broken(group),
                };
                for (participant, outcome) in group.iter().zip(outcomes) {
                    assert_broken(participant.rank(), outcome, dropper, 1);
                    assert_eq!(participant.episode(), 1);
                }
            }
            led
        });
        assert_one_leader_each(&reports, 1);
        assert_eq!(ledger.completions(), 1);
    });
}

/// Polls every participant of `group` at episode 1 with timed waits until none times out.
fn poll_all_broken(
    group: &mut [phasers::Participant],
) -> Vec<phasers::Result<phasers::WaitResult>> {
    let mut outcomes: Vec<Option<phasers::Result<phasers::WaitResult>>> = vec![None; group.len()];
    loop {
        for (participant, outcome) in group.iter_mut().zip(&mut outcomes) {
            if outcome.is_none() {
                match participant.wait_timeout(std::time::Duration::from_millis(1)) {
                    Err(phasers::Error::Timeout { episode, .. }) => assert_eq!(episode, 1),
                    other => *outcome = Some(other),
                }
            }
        }
        if outcomes.iter().all(Option::is_some) {
            return outcomes.into_iter().map(Option::unwrap).collect();
        }
        loom::thread::yield_now();
    }
}

/// 2 participants: rank `dropper` completes episodes 0 and 1 and is dropped at once; the other must
/// complete both, then find the barrier broken from episode 2.
fn dropped_after_last_episode(config: Config, dropper: usize) {
    model(move || {
        let (reports, ledger) = scenario(config, 2, 2, &[&[0], &[1]], move |mut group, ledger| {
            let led: Led = (0..2)
                .flat_map(|episode| complete(&mut group, ledger, episode))
                .collect();
            let mut participant = group.pop().unwrap();
            if participant.rank() == dropper {
                std::mem::drop(participant);
            } else {
                for _ in 0..2 {
                    let outcome = participant.wait();
                    assert_broken(participant.rank(), outcome, dropper, 2);
                }
            }
            led
        });
        assert_one_leader_each(&reports, 2);
        assert_eq!(ledger.completions(), 2);
    });
}

macro_rules! two_party_break_models {
    ($($algorithm:ident: $config:expr;)*) => {
        $(
            mod $algorithm {
                use super::*;

                #[test]
                fn rank_0_dropped_before_arriving() {
                    dropped_before_arriving($config, 2, 0, &[&[0], &[1]]);
                }

                #[test]
                fn rank_1_dropped_before_arriving() {
                    dropped_before_arriving($config, 2, 1, &[&[0], &[1]]);
                }

                #[test]
                fn rank_0_dropped_after_last_episode() {
                    dropped_after_last_episode($config, 0);
                }

                #[test]
                fn rank_1_dropped_after_last_episode() {
                    dropped_after_last_episode($config, 1);
                }
            }
        )*
    };
}

two_party_break_models! {
    sense_reversing: SENSE_REVERSING;
    counting: COUNTING;
    ticket: TICKET;
    combining_tree: COMBINING_TREE;
    mcs_tree: MCS_TREE;
    dissemination: DISSEMINATION;
    tournament: TOURNAMENT;
}

macro_rules! three_party_break_models {
    ($($name:ident: $config:expr, dropper $dropper:expr, groups $groups:expr;)*) => {
        $(
            #[test]
            fn $name() {
                dropped_before_arriving($config, 3, $dropper, $groups);
            }
        )*
    };
}

three_party_break_models! {
    combining_tree_fan_in_2_root_dropped: COMBINING_TREE_FAN_IN_2, dropper 0, groups &[&[0], &[1, 2]];
    combining_tree_fan_in_2_leaf_dropped: COMBINING_TREE_FAN_IN_2, dropper 2, groups &[&[2], &[0, 1]];
    mcs_tree_root_dropped: MCS_TREE, dropper 0, groups &[&[0], &[1, 2]];
    mcs_tree_leaf_dropped: MCS_TREE, dropper 2, groups &[&[2], &[0, 1]];
    tournament_champion_dropped: TOURNAMENT, dropper 0, groups &[&[0], &[1, 2]];
    tournament_loser_dropped: TOURNAMENT, dropper 2, groups &[&[2], &[0, 1]];
    dissemination_rank_1_dropped: DISSEMINATION, dropper 1, groups &[&[1], &[0, 2]];
    combining_tree_fan_in_2_root_dropped_three_threads: COMBINING_TREE_FAN_IN_2, dropper 0, groups &[&[0], &[1], &[2]];
    mcs_tree_root_dropped_three_threads: MCS_TREE, dropper 0, groups &[&[0], &[1], &[2]];
    tournament_loser_dropped_three_threads: TOURNAMENT, dropper 2, groups &[&[0], &[1], &[2]];
    counting_dropped_three_threads: COUNTING, dropper 1, groups &[&[0], &[1], &[2]];
}
