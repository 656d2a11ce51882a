//! Loom models of leaving, for the algorithms that support it (sense-reversing and counting): 3
//! participants complete episode 0, then one leaves (arriving at episode 1 without waiting) and the
//! other two complete episodes 1 and 2 as a barrier of two. Every episode must complete with the
//! barrier invariant and its completion action exactly once (see `loom_support`); episodes 0 and 2
//! have exactly one leader, episode 1 at most one (the leaver leads it, unreported, when it arrives
//! last). A participant that has left is refused further waits, and dropping it breaks nothing.
//! Timeouts in the episodes after the leave must not list the leaver as missing.
//!
//! With a thread per rank, every wait parks, and that run is two searches, whose costs add where
//! one model's multiply (together under 60% of the executions of the single model they replace):
//! `three_threads` races episode 0, the leave and the leave episode, then the main thread runs
//! episode 2 after the joins, which still finds a barrier that waits for the leaver (the party
//! count lowered too late); `three_threads_leave_in_episode_0` races a leave with the episode
//! after it as a barrier of two. No step of the single model's episode 2 can overlap episode 0:
//! it needs episode 1 complete, so every rank's arrival at it, each after that rank's wait for
//! episode 0 returned.
//!
//! Run with `scripts/loom.sh`.
#![cfg(phasers_loom)]

mod loom_support;

use loom_support::*;
use phasers::{Error, Participant};

/// Where the leave falls in a model's run, and which episodes race.
#[derive(Clone, Copy)]
struct Run {
    /// Episodes in all.
    episodes: u64,
    /// The episode the leaver leaves in (arriving without waiting); the others complete every
    /// episode from it on as a barrier of two.
    leave: u64,
    /// The episodes the threads run; the rest (the barrier of two from then on) the main thread
    /// runs after the joins, polling the remaining participants.
    raced: u64,
}

/// Episode 0 with all three, the leave in episode 1, episode 2 as a barrier of two, all racing.
const LEAVE_AFTER_EPISODE_0: Run = Run {
    episodes: 3,
    leave: 1,
    raced: 3,
};

/// Rank `leaver` leaves in `run.leave`. Ranks in one group share a loom thread, polled with timed
/// waits (see `loom_support`).
fn leave_model(config: Config, leaver: usize, groups: &'static [&'static [usize]], run: Run) {
    model(move || {
        // The participants that remain after the raced episodes, for the main thread. A std
        // mutex: the threads only push to it before they end, and the main thread takes from it
        // after the joins, so it never blocks and is no scheduling point for loom.
        let rest = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let rest_of_threads = rest.clone();
        // Timeouts after the leave episode must not name the leaver as missing; in the leave
        // episode itself its arrival may race with the reading.
        let check = move |episode: u64| {
            move |missing: &[usize]| {
                assert!(
                    episode == run.leave || !missing.contains(&leaver),
                    "episode {episode}: rank {leaver} left in episode {}, yet a timeout lists it \
                     as missing: {missing:?}",
                    run.leave
                );
            }
        };
        let (mut reports, ledger) = scenario(
            config,
            3,
            run.episodes as usize,
            groups,
            move |mut group, ledger| {
                let mut led: Led = (0..run.leave)
                    .flat_map(|episode| complete(&mut group, ledger, episode))
                    .collect();
                if let Some(at) = group.iter().position(|p| p.rank() == leaver) {
                    let mut participant = group.remove(at);
                    ledger.leave(leaver, run.leave);
                    participant.leave().expect("leaving");
                    assert!(matches!(
                        participant.wait(),
                        Err(Error::InvalidArgument { .. })
                    ));
                    std::mem::drop(participant);
                }
                for episode in run.leave..run.raced {
                    led.extend(match &mut group[..] {
                        [] => break,
                        [participant] => {
                            if wait_checked(participant, ledger, episode) {
                                vec![episode]
                            } else {
                                vec![]
                            }
                        }
                        group => poll_all_checked_with(group, ledger, episode, &check(episode)),
                    });
                }
                rest_of_threads.lock().unwrap().extend(group);
                led
            },
        );
        let mut rest = std::mem::take(&mut *rest.lock().unwrap());
        rest.sort_by_key(|participant| participant.rank());
        for episode in run.raced..run.episodes {
            reports.push(complete_alone(&mut rest, &ledger, episode, &check(episode)));
        }
        for episode in 0..run.episodes {
            let leaders = leaders_of(&reports, episode);
            if episode == run.leave {
                // The leaver leads it, unreported, when it arrives last.
                assert!(leaders <= 1, "episode {episode} had {leaders} leaders");
            } else {
                assert_eq!(leaders, 1, "episode {episode} had {leaders} leaders");
            }
        }
        assert_eq!(ledger.completions(), run.episodes);
    });
}

/// `episode` for the participants of `group` on the main thread after the joins, with no other
/// thread left: timed waits on each in turn, checked as [`poll_all_checked_with`] checks them.
/// Returns the episodes led. With nobody else to arrive, the episode completes in the first round
/// (at the last arrival) and every wait has returned by the end of the second; one still timing
/// out then means the barrier waits for an arrival that will never come, which on threads would
/// hang.
fn complete_alone(
    group: &mut [Participant],
    ledger: &Ledger,
    episode: u64,
    check_missing: &dyn Fn(&[usize]),
) -> Led {
    for participant in group.iter() {
        ledger.arrive(participant.rank(), episode);
    }
    let mut outcomes: Vec<_> = group.iter().map(|_| None).collect();
    for _round in 0..2 {
        for (participant, outcome) in group.iter_mut().zip(&mut outcomes) {
            if outcome.is_none() {
                *outcome = poll(participant, ledger, episode, check_missing);
            }
        }
    }
    let mut led = Vec::new();
    for (participant, outcome) in group.iter().zip(outcomes) {
        let rank = participant.rank();
        let result = outcome
            .unwrap_or_else(|| {
                panic!("rank {rank}, episode {episode}: no release with every other rank arrived")
            })
            .unwrap_or_else(|error| panic!("rank {rank}, episode {episode}: {error}"));
        ledger.check_release(rank, episode, result);
        if result.is_leader() {
            led.push(episode);
        }
    }
    led
}

macro_rules! leave_models {
    ($($algorithm:ident: $config:expr;)*) => {
        $(
            mod $algorithm {
                use super::*;

                /// The leaver shares its thread with another rank.
                #[test]
                fn leaver_polled() {
                    leave_model($config, 2, &[&[0], &[1, 2]], LEAVE_AFTER_EPISODE_0);
                }

                /// The leaver has its own thread; the remaining two are polled.
                #[test]
                fn leaver_alone() {
                    leave_model($config, 2, &[&[0, 1], &[2]], LEAVE_AFTER_EPISODE_0);
                }

                /// Every rank has its own thread, so every wait parks: episode 0 with all three and
                /// the leave in episode 1 race; episode 2, the barrier of two, runs on the main
                /// thread after the joins (its race is the next model's).
                #[test]
                fn three_threads() {
                    leave_model(
                        $config,
                        1,
                        &[&[0], &[1], &[2]],
                        Run {
                            raced: 2,
                            ..LEAVE_AFTER_EPISODE_0
                        },
                    );
                }

                /// Every rank has its own thread: the leave in episode 0 races with the barrier of
                /// two's next episode. With `three_threads`, every step of the run with a leave
                /// between two raced episodes races with those it could overlap.
                #[test]
                fn three_threads_leave_in_episode_0() {
                    leave_model(
                        $config,
                        1,
                        &[&[0], &[1], &[2]],
                        Run {
                            episodes: 2,
                            leave: 0,
                            raced: 2,
                        },
                    );
                }
            }
        )*
    };
}

leave_models! {
    sense_reversing: SENSE_REVERSING;
    counting: COUNTING;
}
