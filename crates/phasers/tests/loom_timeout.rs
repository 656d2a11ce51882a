//! Loom models of timed waits for every barrier algorithm: 2 participants, 2 episodes; one waits
//! with `wait_timeout` in a loop until it succeeds, the other with `wait()`. Under loom every timed
//! wait that is not already complete times out, so the timed participant gives up and resumes at
//! every point of its episode where it can wait. Each timeout must name the right episode and keep
//! the arrival in place, and every episode must still complete exactly once with the barrier
//! invariant, the completion action and one leader (see `loom_support`). Both ranks take the timed
//! role in turn, because the tree algorithms give rank 0 a different part from the others.
//!
//! The three-party models of `loom_episodes` also poll two participants with timed waits.
//!
//! Run with `scripts/loom.sh`.
#![cfg(phasers_loom)]

mod loom_support;

use loom_support::*;

const EPISODES: u64 = 2;

/// Rank `timed` waits with `wait_timeout`, the other rank with `wait()`.
fn timeout(config: Config, timed: usize) {
    model(move || {
        let (reports, ledger) = scenario(
            config,
            2,
            EPISODES as usize,
            &[&[0], &[1]],
            move |mut group, ledger| {
                (0..EPISODES)
                    .flat_map(|episode| {
                        if group[0].rank() == timed {
                            poll_all_checked(&mut group, ledger, episode)
                        } else {
                            complete(&mut group, ledger, episode)
                        }
                    })
                    .collect()
            },
        );
        assert_one_leader_each(&reports, EPISODES);
        assert_eq!(ledger.completions(), EPISODES);
    });
}

macro_rules! timeout_models {
    ($($algorithm:ident: $config:expr;)*) => {
        $(
            mod $algorithm {
                use super::*;

                #[test]
                fn rank_0_times_out() {
                    timeout($config, 0);
                }

                #[test]
                fn rank_1_times_out() {
                    timeout($config, 1);
                }
            }
        )*
    };
}

timeout_models! {
    sense_reversing: SENSE_REVERSING;
    counting: COUNTING;
    ticket: TICKET;
    combining_tree: COMBINING_TREE;
    mcs_tree: MCS_TREE;
    dissemination: DISSEMINATION;
    tournament: TOURNAMENT;
}
