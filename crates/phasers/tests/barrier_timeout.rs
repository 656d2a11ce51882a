//! Timed waits: a wait that gives up names exactly the ranks that have not arrived, its arrival
//! stays in place, and the next wait on the same handle completes the same episode, for every
//! algorithm.

mod barrier_support;

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use barrier_support::{builder_with_record, run_recorded, Record, Rng};
use phasers::{Algorithm, Barrier, Error, Participant};

/// Long enough that a timed-out wait has really been through spin, yield and park.
const SHORT: Duration = Duration::from_millis(20);

/// Expects a timeout at `episode` naming exactly `missing`.
fn expect_timeout(
    result: phasers::Result<phasers::WaitResult>,
    episode: u64,
    missing: &[usize],
    what: &str,
) {
    match result {
        Err(Error::Timeout {
            episode: at,
            missing: named,
            resumable: true,
        }) => {
            assert_eq!(at, episode, "{what}: timed out in the wrong episode");
            assert_eq!(named, missing, "{what}: wrong ranks named as missing");
        }
        other => panic!("{what}: expected a timeout in episode {episode}, got {other:?}"),
    }
}

/// Builds a barrier of `parties`, runs `warmup` full episodes, then lets the ranks in `present`
/// arrive one after the other with timed waits while the others stay away, and finally lets
/// everyone complete that episode and a few more.
fn timeout_scenario(algorithm: Algorithm, parties: usize, present: &[usize], warmup: u64) {
    let what = format!("{algorithm}, {parties} parties, present {present:?}");
    let episodes = warmup + 1 + 3;
    let record = Record::new(parties, episodes);
    let barrier = builder_with_record(parties, &record)
        .algorithm(algorithm)
        .build()
        .unwrap();
    let mut handles = barrier.participants();
    run_recorded(&mut handles, warmup, Some(&record));
    let episode = warmup;

    // The present ranks arrive one at a time from this thread, so what each timed-out wait must
    // report is exact: everyone who has not arrived yet.
    let mut arrived = Vec::new();
    for &rank in present {
        arrived.push(rank);
        record.arrive(rank, episode);
        let missing: Vec<usize> = (0..parties).filter(|r| !arrived.contains(r)).collect();
        let p = &mut handles[rank];
        let start = Instant::now();
        expect_timeout(p.wait_timeout(SHORT), episode, &missing, &what);
        // Never gives up before the deadline (the deadline may be overshot, never undershot).
        assert!(start.elapsed() >= SHORT, "{what}: gave up early");
        assert!(p.is_pending(), "{what}: the arrival must stay in place");
        assert_eq!(p.episode(), episode, "{what}: the episode must not move on");
    }
    // A second try, with a deadline already in the past: still the same episode, and the earlier
    // arrivals are neither lost nor counted twice, so exactly the absent ranks are missing.
    let absent: Vec<usize> = (0..parties).filter(|r| !present.contains(r)).collect();
    for &rank in present {
        let past = Instant::now() - Duration::from_millis(1);
        expect_timeout(handles[rank].wait_deadline(past), episode, &absent, &what);
        expect_timeout(
            handles[rank].wait_timeout(Duration::ZERO),
            episode,
            &absent,
            &what,
        );
    }

    // Now everyone waits: the present ranks resume, the absent ones arrive for the first time. Every
    // wait must complete the episode that timed out, with one leader and one completion.
    let results: Vec<phasers::WaitResult> = std::thread::scope(|s| {
        let waits: Vec<_> = handles
            .iter_mut()
            .map(|p| {
                s.spawn(|| {
                    if !p.is_pending() {
                        record.arrive(p.rank(), p.episode());
                    }
                    // An absurdly long timeout must not overflow: it means "no deadline".
                    let released = p.wait_timeout(Duration::MAX).unwrap();
                    record.check_released(
                        "resume",
                        p.rank(),
                        released.episode(),
                        released.is_leader(),
                    );
                    released
                })
            })
            .collect();
        waits.into_iter().map(|w| w.join().unwrap()).collect()
    });
    for (rank, released) in results.iter().enumerate() {
        assert_eq!(
            released.episode(),
            episode,
            "{what}: rank {rank} resumed a different episode"
        );
        assert!(!handles[rank].is_pending());
        assert_eq!(handles[rank].episode(), episode + 1);
    }
    assert_eq!(
        results.iter().filter(|r| r.is_leader()).count(),
        1,
        "{what}"
    );
    assert_eq!(
        record.completions.load(Ordering::Relaxed),
        episode + 1,
        "{what}"
    );

    // Later episodes are normal.
    run_recorded(&mut handles, 3, Some(&record));
    assert_eq!(
        record.completions.load(Ordering::Relaxed),
        episodes,
        "{what}"
    );
    assert!(!barrier.is_broken());
}

/// `parties` threads each time out over and over with small, varying timeouts, so arrivals are left
/// pending and resumed at every step of every algorithm. The invariant must hold, each wait must
/// complete the right episode, and each episode must complete exactly once: a pending arrival that
/// were counted again on resume would complete an episode early or twice.
fn repeated_timeouts(algorithm: Algorithm, parties: usize, episodes: u64) {
    let what = format!("{algorithm}, {parties} parties, repeated timeouts");
    let record = Record::new(parties, episodes);
    let barrier = builder_with_record(parties, &record)
        .algorithm(algorithm)
        .build()
        .unwrap();
    let timeouts = AtomicU64::new(0);
    std::thread::scope(|s| {
        for mut p in barrier.participants() {
            let (record, timeouts, what) = (&record, &timeouts, &what);
            s.spawn(move || {
                let rank = p.rank();
                let mut rng = Rng::new(rank as u64 + 1);
                for episode in 0..episodes {
                    // Now and then a participant is late, so the others' short waits give up
                    // while it is away.
                    if rng.below(8) == 0 {
                        std::thread::sleep(Duration::from_micros(rng.below(500)));
                    }
                    record.arrive(rank, episode);
                    let released = loop {
                        let result = match rng.below(8) {
                            0 => p.wait_timeout(Duration::ZERO),
                            1 => p.wait_deadline(Instant::now()),
                            2 => p.wait(),
                            _ => p.wait_timeout(Duration::from_micros(rng.below(300))),
                        };
                        match result {
                            Ok(released) => break released,
                            Err(Error::Timeout {
                                episode: at,
                                missing,
                                resumable: true,
                            }) => {
                                timeouts.fetch_add(1, Ordering::Relaxed);
                                assert_eq!(at, episode, "{what}: rank {rank} timed out elsewhere");
                                assert!(p.is_pending());
                                // This rank has arrived, so it is never missing; the rest are
                                // distinct valid ranks in increasing order.
                                assert!(!missing.contains(&rank), "{what}: {missing:?}");
                                assert!(missing.windows(2).all(|w| w[0] < w[1]), "{missing:?}");
                                assert!(missing.iter().all(|&r| r < parties), "{missing:?}");
                            }
                            Err(other) => panic!("{what}: rank {rank} episode {episode}: {other}"),
                        }
                    };
                    assert_eq!(released.episode(), episode, "{what}: rank {rank}");
                    assert!(!p.is_pending());
                    record.check_released(what, rank, episode, released.is_leader());
                }
            });
        }
    });
    record.check_end(&what, episodes, true);
    // With late partners and timeouts of at most 300 us, many waits give up; if none did, the test
    // did not test what it claims to.
    let timeouts = timeouts.load(Ordering::Relaxed);
    assert!(timeouts > 0, "{what}: no wait ever timed out");
    eprintln!("{what}: {timeouts} timeouts");
}

/// Checks the `Participant` accessors around a timeout on the simplest case.
fn accessors_follow_the_pending_arrival(algorithm: Algorithm) {
    let barrier = Barrier::with_algorithm(2, algorithm).unwrap();
    let mut handles = barrier.participants();
    let second: Participant = handles.pop().unwrap();
    let mut first = handles.pop().unwrap();
    assert!(!first.is_pending());
    assert!(first.wait_timeout(Duration::from_millis(1)).is_err());
    assert!(first.is_pending());
    assert_eq!(first.episode(), 0);
    let debug = format!("{first:?}");
    assert!(debug.contains("pending: true"), "{debug}");
    let mut second = second;
    std::thread::scope(|s| {
        s.spawn(|| second.wait().unwrap());
        assert_eq!(first.wait().unwrap().episode(), 0);
    });
    assert!(!first.is_pending());
    assert_eq!(first.episode(), 1);
}

/// One module of tests per algorithm, so a failure names the algorithm.
macro_rules! timeout_tests {
    ($($module:ident: $algorithm:expr),+ $(,)?) => {
        $(
            mod $module {
                use super::*;

                #[test]
                fn two_parties_rank_0_waits_for_rank_1() {
                    timeout_scenario($algorithm, 2, &[0], 3);
                }

                #[test]
                fn two_parties_rank_1_waits_for_rank_0() {
                    timeout_scenario($algorithm, 2, &[1], 4);
                }

                #[test]
                fn three_parties_rank_2_absent() {
                    timeout_scenario($algorithm, 3, &[0, 1], 3);
                    timeout_scenario($algorithm, 3, &[1, 0], 2);
                }

                #[test]
                fn three_parties_rank_0_absent() {
                    timeout_scenario($algorithm, 3, &[2, 1], 1);
                }

                #[test]
                fn three_parties_ranks_1_and_2_absent() {
                    timeout_scenario($algorithm, 3, &[0], 3);
                }

                #[test]
                fn three_parties_ranks_0_and_1_absent() {
                    timeout_scenario($algorithm, 3, &[2], 0);
                }

                #[test]
                fn accessors() {
                    accessors_follow_the_pending_arrival($algorithm);
                }

                #[test]
                fn repeated_timeouts_eight_threads() {
                    repeated_timeouts($algorithm, 8, 2_000);
                }
            }
        )+
    };
}

timeout_tests!(
    sense_reversing: Algorithm::SenseReversing,
    counting: Algorithm::Counting,
    ticket: Algorithm::Ticket,
    combining_tree: Algorithm::CombiningTree,
    mcs_tree: Algorithm::McsTree,
    dissemination: Algorithm::Dissemination,
    tournament: Algorithm::Tournament,
    auto: Algorithm::Auto,
);

/// The combining tree with fan-in 2 has the most levels to stop and resume at.
#[test]
fn repeated_timeouts_deep_combining_tree() {
    let parties = 9;
    let episodes = 1_000;
    let record = Record::new(parties, episodes);
    let barrier = builder_with_record(parties, &record)
        .algorithm(Algorithm::CombiningTree)
        .fan_in(2)
        .build()
        .unwrap();
    std::thread::scope(|s| {
        for mut p in barrier.participants() {
            let record = &record;
            s.spawn(move || {
                let rank = p.rank();
                let mut rng = Rng::new(rank as u64 + 100);
                for episode in 0..episodes {
                    record.arrive(rank, episode);
                    let released = loop {
                        match p.wait_timeout(Duration::from_micros(rng.below(200))) {
                            Ok(released) => break released,
                            Err(Error::Timeout { episode: at, .. }) => assert_eq!(at, episode),
                            Err(other) => panic!("rank {rank} episode {episode}: {other}"),
                        }
                    };
                    assert_eq!(released.episode(), episode);
                    record.check_released("fan-in 2", rank, episode, released.is_leader());
                }
            });
        }
    });
    record.check_end("fan-in 2", episodes, true);
}
