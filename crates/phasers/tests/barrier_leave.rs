//! Leaving: on `SenseReversing` and `Counting` a participant can leave, the barrier shrinks, and the
//! rest keep synchronizing correctly; the other algorithms refuse with `Unsupported` and stay whole.

mod barrier_support;

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use barrier_support::{
    all_algorithms, builder_with_record, run_episodes, run_recorded, Record, Rng,
};
use phasers::{Algorithm, Barrier, Error, Participant};

/// The algorithms that support leaving.
const LEAVABLE: [Algorithm; 2] = [Algorithm::SenseReversing, Algorithm::Counting];

fn invalid<T: std::fmt::Debug>(result: phasers::Result<T>, what: &str) -> String {
    match result {
        Err(Error::InvalidArgument { message }) => message,
        other => panic!("{what}: expected InvalidArgument, got {other:?}"),
    }
}

/// After a successful leave the handle is spent: every wait and a second leave are invalid.
fn check_spent(p: &mut Participant, what: &str) {
    let rank = p.rank();
    let message = invalid(p.wait(), what);
    assert!(
        message.contains(&format!("rank {rank} has left")),
        "{message}"
    );
    invalid(p.wait_timeout(Duration::from_secs(60)), what);
    invalid(p.wait_deadline(Instant::now()), what);
    invalid(p.leave(), what);
}

/// `parties` participants; rank `r > 0` leaves at episode `leave_at(r)`, rank 0 never leaves and runs
/// `episodes` episodes, alone at the end. The invariant is checked against who is still expected:
/// a rank that left at `l` arrived at every episode up to `l` and at none after.
fn leave_while_running(
    algorithm: Algorithm,
    parties: usize,
    episodes: u64,
    leave_at: impl Fn(usize) -> u64 + Sync,
) {
    let what = format!("{algorithm}, {parties} parties leaving");
    let record = Record::new(parties, episodes);
    let barrier = builder_with_record(parties, &record)
        .algorithm(algorithm)
        .build()
        .unwrap();
    let remaining: Participant = std::thread::scope(|s| {
        let mut stayer = None;
        for mut p in barrier.participants() {
            let (record, what, leave_at) = (&record, &what, &leave_at);
            let thread = s.spawn(move || {
                let rank = p.rank();
                let last = if rank == 0 { episodes } else { leave_at(rank) };
                for episode in 0..last {
                    record.arrive(rank, episode);
                    let released = p
                        .wait()
                        .unwrap_or_else(|e| panic!("{what}: rank {rank} episode {episode}: {e}"));
                    assert_eq!(released.episode(), episode, "{what}: rank {rank}");
                    record.check_released(what, rank, episode, released.is_leader());
                }
                if rank != 0 {
                    record.leave(rank, last);
                    p.leave()
                        .unwrap_or_else(|e| panic!("{what}: rank {rank} leaving at {last}: {e}"));
                    check_spent(&mut p, what);
                    // Dropping a handle that left breaks nothing (checked after the scope).
                    drop(p);
                    None
                } else {
                    Some(p)
                }
            });
            if stayer.is_none() {
                stayer = Some(thread);
            }
        }
        stayer.unwrap().join().unwrap().expect("rank 0 stays")
    });
    // Every handle but rank 0's was dropped after leaving, and the barrier is intact.
    assert!(
        !barrier.is_broken(),
        "{what}: dropping left handles broke the barrier"
    );
    let max_leave = (1..parties).map(&leave_at).max().unwrap_or(0);
    // One completion per episode, including those a leaver completed; a leaver that arrives last
    // runs the action but gets no `WaitResult`, so those episodes may show no leader among the
    // waiters. After the last leave every episode has exactly one.
    record.check_end(&what, episodes, false);
    for episode in max_leave + 1..episodes {
        assert_eq!(
            record.leaders[episode as usize].load(Ordering::Relaxed),
            1,
            "{what}: episode {episode}"
        );
    }
    // Rank 0 alone: the barrier has shrunk to one, so a wait never blocks.
    let mut remaining = remaining;
    let released = remaining.wait_timeout(Duration::from_secs(60)).unwrap();
    assert_eq!(released.episode(), episodes);
    assert!(released.is_leader());
}

/// The last arriver leaves: its arrival must complete the episode and release the waiters.
fn last_arriver_leaves(algorithm: Algorithm) {
    let what = format!("{algorithm}, last arriver leaves");
    let record = Record::new(3, 40);
    let barrier = builder_with_record(3, &record)
        .algorithm(algorithm)
        .build()
        .unwrap();
    let mut handles = barrier.participants();
    run_recorded(&mut handles, 2, Some(&record));
    let mut leaver = handles.pop().unwrap();

    // Deterministic order: ranks 0 and 1 arrive (and give up waiting), then rank 2 leaves, so rank
    // 2's arrival is the last one and must complete episode 2.
    for p in handles.iter_mut() {
        record.arrive(p.rank(), 2);
        assert!(matches!(
            p.wait_timeout(Duration::from_millis(5)),
            Err(Error::Timeout { episode: 2, .. })
        ));
    }
    record.leave(2, 2);
    leaver.leave().unwrap();
    assert_eq!(
        record.completions.load(Ordering::Relaxed),
        3,
        "{what}: leave completed it"
    );
    for p in handles.iter_mut() {
        let released = p.wait_timeout(Duration::from_secs(60)).unwrap();
        assert_eq!(released.episode(), 2);
        // The leaver led that episode (it ran the action), so no waiter did.
        assert!(!released.is_leader(), "{what}: rank {}", p.rank());
    }
    check_spent(&mut leaver, &what);
    drop(leaver);

    // Threaded: ranks 0 and 1 are (most likely) parked when rank 1 leaves; it must wake rank 0.
    let start = Instant::now();
    std::thread::scope(|s| {
        let (first, second) = handles.split_at_mut(1);
        let first = &mut first[0];
        let second = &mut second[0];
        s.spawn(|| {
            record.arrive(0, 3);
            assert_eq!(first.wait().unwrap().episode(), 3);
        });
        std::thread::sleep(Duration::from_millis(50));
        record.leave(1, 3);
        second.leave().unwrap();
    });
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{what}: the leave did not release"
    );
    handles.truncate(1);
    // Rank 0 alone now.
    run_recorded(&mut handles, 36, Some(&record));
    record.check_end(&what, 40, false);
    assert!(!barrier.is_broken());
}

/// A leave with a wait still pending after a timeout first completes that episode.
fn leave_completes_a_pending_wait(algorithm: Algorithm) {
    let what = format!("{algorithm}, leave with a pending wait");
    let record = Record::new(3, 30);
    let barrier = builder_with_record(3, &record)
        .algorithm(algorithm)
        .build()
        .unwrap();
    let mut handles = barrier.participants();
    let mut leaver = handles.pop().unwrap();
    record.arrive(2, 0);
    assert!(matches!(
        leaver.wait_timeout(Duration::from_millis(5)),
        Err(Error::Timeout { episode: 0, .. })
    ));
    std::thread::scope(|s| {
        let record = &record;
        let stayers = &mut handles;
        s.spawn(move || run_recorded(stayers, 30, Some(record)));
        // Completes episode 0 (needs ranks 0 and 1), then leaves at episode 1.
        record.leave(2, 1);
        leaver.leave().unwrap();
    });
    assert_eq!(
        leaver.episode(),
        1,
        "{what}: the pending episode was completed first"
    );
    check_spent(&mut leaver, &what);
    record.check_end(&what, 30, false);
}

/// A rank that left is not named as missing by a timed-out wait.
fn left_rank_is_not_missing(algorithm: Algorithm) {
    let barrier = Barrier::with_algorithm(3, algorithm).unwrap();
    let mut handles = barrier.participants();
    handles.pop().unwrap().leave().unwrap();
    for episode in 0..3 {
        match handles[0].wait_timeout(Duration::from_millis(5)) {
            Err(Error::Timeout {
                episode: at,
                missing,
                resumable: true,
            }) => {
                assert_eq!(at, episode);
                assert_eq!(
                    missing,
                    vec![1],
                    "{algorithm}: rank 2 left, only rank 1 is missing"
                );
            }
            other => panic!("{algorithm}: expected a timeout, got {other:?}"),
        }
        let (first, second) = handles.split_at_mut(1);
        std::thread::scope(|s| {
            s.spawn(|| second[0].wait().unwrap());
            assert_eq!(first[0].wait().unwrap().episode(), episode);
        });
    }
}

/// Leaves mixed with timeouts: every rank but 0 leaves at a pseudo-random episode, every wait is a
/// short timed wait that is retried, and some leaves happen while a timed-out wait is still pending
/// (the leave must first complete that episode, then leave at the next).
fn leave_with_timeouts(algorithm: Algorithm, parties: usize, episodes: u64, seed: u64) {
    let what = format!("{algorithm}, {parties} parties, leaves and timeouts, seed {seed}");
    let record = Record::new(parties, episodes);
    let barrier = builder_with_record(parties, &record)
        .algorithm(algorithm)
        .build()
        .unwrap();
    std::thread::scope(|s| {
        for mut p in barrier.participants() {
            let (record, what) = (&record, &what);
            s.spawn(move || {
                let rank = p.rank();
                let mut rng = Rng::new(seed * 7_919 + rank as u64);
                let last = if rank == 0 {
                    episodes
                } else {
                    rng.below(episodes / 2)
                };
                for episode in 0..last {
                    record.arrive(rank, episode);
                    let released = loop {
                        match p.wait_timeout(Duration::from_micros(rng.below(200))) {
                            Ok(released) => break Some(released),
                            Err(Error::Timeout { episode: at, .. }) => {
                                assert_eq!(at, episode, "{what}: rank {rank}");
                                // Sometimes give up on the episode for good and leave from here:
                                // the leave completes it first.
                                if rank != 0 && episode + 1 == last && rng.below(2) == 0 {
                                    break None;
                                }
                            }
                            Err(other) => panic!("{what}: rank {rank} episode {episode}: {other}"),
                        }
                    };
                    match released {
                        Some(released) => {
                            assert_eq!(released.episode(), episode, "{what}: rank {rank}");
                            record.check_released(what, rank, episode, released.is_leader());
                        }
                        None => {
                            assert!(p.is_pending());
                            record.leave(rank, episode + 1);
                            p.leave().unwrap();
                            assert_eq!(p.episode(), episode + 1, "{what}: rank {rank}");
                            return;
                        }
                    }
                }
                if rank != 0 {
                    record.leave(rank, last);
                    p.leave().unwrap();
                }
            });
        }
    });
    record.check_end(&what, episodes, false);
}

/// Everyone leaves, one after the other; the last leave completes the episode on its own.
fn everyone_leaves(algorithm: Algorithm) {
    let record = Record::new(4, 2);
    let barrier = builder_with_record(4, &record)
        .algorithm(algorithm)
        .build()
        .unwrap();
    let mut handles = barrier.participants();
    run_recorded(&mut handles, 1, Some(&record));
    for p in handles.iter_mut() {
        record.leave(p.rank(), 1);
        p.leave().unwrap();
    }
    record.check_end(algorithm.name(), 2, false);
    drop(handles);
    assert!(
        !barrier.is_broken(),
        "{algorithm}: nobody was dropped without leaving"
    );
}

/// On an algorithm with a fixed party count, `leave` refuses and the handle stays a full
/// participant, even with a pending wait.
fn leave_unsupported(algorithm: Algorithm) {
    let parties = 3;
    let barrier = Barrier::with_algorithm(parties, algorithm).unwrap();
    let resolved = barrier.algorithm();
    assert!(!resolved.supports_leave());
    let mut handles = barrier.participants();
    run_episodes(&mut handles, 2);
    match handles[1].leave() {
        Err(Error::Unsupported {
            algorithm: name,
            hint,
            ..
        }) => {
            assert_eq!(name, resolved.name());
            assert!(
                hint.contains("SenseReversing") && hint.contains("Counting"),
                "{hint}"
            );
        }
        other => panic!("{algorithm}: expected Unsupported, got {other:?}"),
    }
    // With a pending arrival, the refusal leaves it in place.
    assert!(handles[2].wait_timeout(Duration::from_millis(5)).is_err());
    assert!(matches!(handles[2].leave(), Err(Error::Unsupported { .. })));
    assert!(handles[2].is_pending());
    // Every handle, the refused ones included, still takes part: these episodes need all three.
    run_episodes(&mut handles, 5);
    assert_eq!(handles[2].episode(), 7);
    assert!(!barrier.is_broken());
}

/// A rank that left before an episode began must not be named missing by a timeout in that
/// episode: its leave happened before the release that let the others into the episode.
///
/// Rank 1 parks in episode 0, rank 2 leaves as its last arrival (so the leave releases rank 0 and
/// wakes rank 1, which takes the leaver a few microseconds), and rank 0 races into episode 1 with a
/// zero timeout. Rank 2 must never be in `missing` there.
fn leaver_is_not_missing_after_the_release(algorithm: Algorithm, rounds: usize) {
    let mut named = 0;
    for _ in 0..rounds {
        let barrier = Barrier::builder(3)
            .algorithm(algorithm)
            .wait_policy(phasers::WaitPolicy::Park)
            .build()
            .unwrap();
        let mut handles = barrier.participants();
        let mut leaver = handles.pop().unwrap();
        let mut sleeper = handles.pop().unwrap();
        let mut racer = handles.pop().unwrap();
        assert!(racer.wait_timeout(Duration::ZERO).is_err());
        std::thread::scope(|s| {
            s.spawn(|| sleeper.wait().unwrap());
            std::thread::sleep(Duration::from_micros(200));
            s.spawn(|| leaver.leave().unwrap());
            loop {
                match racer.wait_timeout(Duration::ZERO) {
                    Ok(released) => break assert_eq!(released.episode(), 0),
                    Err(Error::Timeout { episode: 0, .. }) => {}
                    Err(other) => panic!("{algorithm}: {other}"),
                }
            }
            match racer.wait_timeout(Duration::ZERO) {
                Err(Error::Timeout {
                    episode: 1,
                    missing,
                    resumable: true,
                }) => named += usize::from(missing.contains(&2)),
                // Rank 1 was quicker and the two completed episode 1: nothing to check.
                Ok(released) => assert_eq!(released.episode(), 1),
                Err(other) => panic!("{algorithm}: {other}"),
            }
        });
    }
    assert_eq!(
        named, 0,
        "{algorithm}: {named} of {rounds} timeouts in episode 1 named rank 2, which had left in \
         episode 0"
    );
}

#[test]
// Regression: `leave` used to record the leave in the roster only after the arrival that may
// release the others, so a released participant's timeout could name the leaver as missing.
fn leaver_is_never_named_missing_later() {
    leaver_is_not_missing_after_the_release(Algorithm::SenseReversing, 200);
    leaver_is_not_missing_after_the_release(Algorithm::Counting, 200);
}

#[test]
fn supports_leave_matches_the_documentation() {
    for algorithm in Algorithm::CONCRETE {
        assert_eq!(
            algorithm.supports_leave(),
            LEAVABLE.contains(&algorithm),
            "{algorithm}"
        );
    }
}

macro_rules! leave_tests {
    ($($module:ident: $algorithm:expr),+ $(,)?) => {
        $(
            mod $module {
                use super::*;

                #[test]
                fn leaves_at_various_episodes() {
                    leave_while_running($algorithm, 8, 200, |rank| (rank as u64 * 7) % 30 + 1);
                    // Pseudo-random leave episodes, 0 included, often several at once.
                    for seed in 0..30u64 {
                        leave_while_running($algorithm, 8, 80, |rank| {
                            Rng::new(seed * 1_000 + rank as u64).below(60)
                        });
                    }
                }

                #[test]
                fn all_but_one_leave_at_the_same_episode() {
                    leave_while_running($algorithm, 5, 50, |_| 10);
                }

                #[test]
                fn leaves_under_oversubscription() {
                    leave_while_running($algorithm, 33, 200, |rank| rank as u64 * 3);
                    for seed in 0..5u64 {
                        leave_while_running($algorithm, 33, 150, |rank| {
                            Rng::new(seed * 1_000 + rank as u64).below(120)
                        });
                    }
                }

                #[test]
                fn last_arriver_leaves() {
                    super::last_arriver_leaves($algorithm);
                }

                #[test]
                fn leave_completes_a_pending_wait() {
                    super::leave_completes_a_pending_wait($algorithm);
                }

                #[test]
                fn left_rank_is_not_missing() {
                    super::left_rank_is_not_missing($algorithm);
                }

                #[test]
                fn leaves_mixed_with_timeouts() {
                    for seed in 0..10 {
                        leave_with_timeouts($algorithm, 8, 200, seed);
                    }
                }

                #[test]
                fn everyone_leaves() {
                    super::everyone_leaves($algorithm);
                }
            }
        )+
    };
}

leave_tests!(
    sense_reversing: Algorithm::SenseReversing,
    counting: Algorithm::Counting,
);

#[test]
fn other_algorithms_refuse_to_leave() {
    for algorithm in Algorithm::CONCRETE {
        if !algorithm.supports_leave() {
            leave_unsupported(algorithm);
        }
    }
}

/// `Auto` supports leaving exactly when what it resolved to does.
#[test]
fn auto_leaves_when_its_choice_can() {
    for parties in [2, 3, 8, 9, 64] {
        let barrier = Barrier::with_algorithm(parties, Algorithm::Auto).unwrap();
        let resolved = barrier.algorithm();
        let mut handles = barrier.participants();
        let mut last = handles.pop().unwrap();
        let result = last.leave();
        if resolved.supports_leave() {
            result.unwrap();
            // The others are a barrier of `parties - 1` now.
            run_episodes(&mut handles, 3);
        } else {
            assert!(
                matches!(result, Err(Error::Unsupported { .. })),
                "{result:?}"
            );
            handles.push(last);
            run_episodes(&mut handles, 3);
        }
        assert!(!barrier.is_broken(), "Auto with {parties} ({resolved})");
    }
}

#[test]
fn every_algorithm_either_leaves_or_refuses() {
    for algorithm in all_algorithms() {
        let barrier = Barrier::with_algorithm(2, algorithm).unwrap();
        let mut handles = barrier.participants();
        let result = handles[0].leave();
        assert_eq!(
            result.is_ok(),
            barrier.algorithm().supports_leave(),
            "{algorithm}: {result:?}"
        );
    }
}
