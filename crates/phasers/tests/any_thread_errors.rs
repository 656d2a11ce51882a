//! [`AnyThreadBarrier`]'s bad input, `settle` (the destroy check behind `pthread_barrier_destroy`)
//! and breaking: a completion action that panics must not make later callers panic on the slot's
//! poisoned lock, but report `Error::Broken`.

mod watchdog_support;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use phasers::barrier::{BarrierInUse, MAX_PARTIES};
use phasers::{Algorithm, AnyThreadBarrier, Barrier, Error};
use watchdog_support::within;

#[test]
fn is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<AnyThreadBarrier>();
    assert_send_sync::<AnyThreadBarrier<phasers::barrier::Tournament>>();
}

#[test]
fn zero_or_too_many_parties_is_invalid() {
    for parties in [0, MAX_PARTIES + 1] {
        match AnyThreadBarrier::with_algorithm(parties, Algorithm::Auto) {
            Err(Error::InvalidArgument { message }) => {
                assert!(message.contains("part"), "{message}")
            }
            other => panic!("{parties} parties: expected InvalidArgument, got {other:?}"),
        }
    }
}

#[test]
fn from_barrier_needs_every_participant() {
    let barrier = Barrier::with_algorithm(2, Algorithm::SenseReversing).unwrap();
    let mut kept = barrier.participant(0).unwrap();
    match AnyThreadBarrier::from_barrier(barrier) {
        Err(Error::InvalidArgument { message }) => {
            assert!(message.contains("1 of the 2"), "{message}")
        }
        other => panic!("expected InvalidArgument, got {other:?}"),
    }
    // Rank 1's handle went down with the barrier: the kept handle is told, instead of hanging.
    assert!(matches!(kept.wait(), Err(Error::Broken { by: 1, .. })));

    let barrier = Barrier::with_algorithm(3, Algorithm::Tournament).unwrap();
    let all = barrier.participants();
    assert!(matches!(
        AnyThreadBarrier::from_barrier(barrier),
        Err(Error::InvalidArgument { .. })
    ));
    drop(all);
}

#[test]
fn from_barrier_keeps_algorithm_and_static_dispatch() {
    let barrier = Barrier::builder(3)
        .build_static::<phasers::barrier::Dissemination>()
        .unwrap();
    let barrier = AnyThreadBarrier::from_barrier(barrier).unwrap();
    assert_eq!(barrier.parties(), 3);
    assert_eq!(barrier.algorithm(), Algorithm::Dissemination);
    let debug = format!("{barrier:?}");
    assert!(debug.contains("AnyThreadBarrier") && debug.contains("Dissemination"));
    within("3 threads on a static dissemination barrier", move || {
        std::thread::scope(|s| {
            for _ in 0..3 {
                s.spawn(|| {
                    for _ in 0..100 {
                        barrier.wait().unwrap();
                    }
                });
            }
        });
    });
}

#[test]
fn settle_on_a_fresh_barrier_is_ok() {
    for algorithm in Algorithm::CONCRETE {
        let barrier = AnyThreadBarrier::with_algorithm(3, algorithm).unwrap();
        assert_eq!(barrier.settle(), Ok(()));
    }
}

/// Spins until `settle` reports the barrier in use (another thread's call is on its way in).
fn busy(barrier: &AnyThreadBarrier) -> BarrierInUse {
    loop {
        if let Err(busy) = barrier.settle() {
            return busy;
        }
        std::thread::yield_now();
    }
}

#[test]
fn settle_reports_an_incomplete_episode_and_changes_nothing() {
    within("settle with calls waiting", || {
        for algorithm in Algorithm::CONCRETE {
            let barrier = Arc::new(AnyThreadBarrier::with_algorithm(3, algorithm).unwrap());
            // Episode 0 completes with three calls; then two calls wait at episode 1.
            std::thread::scope(|s| {
                for _ in 0..3 {
                    s.spawn(|| barrier.wait().unwrap());
                }
            });
            std::thread::scope(|s| {
                let first = s.spawn(|| barrier.wait().unwrap());
                let second = s.spawn(|| barrier.wait().unwrap());
                let mut in_use = busy(&barrier);
                while in_use.arrived() < 2 {
                    in_use = busy(&barrier);
                }
                assert_eq!(
                    (in_use.episode(), in_use.arrived(), in_use.parties()),
                    (1, 2, 3),
                    "{algorithm}"
                );
                let message = in_use.to_string();
                assert!(
                    message.contains("2 of its 3") && message.contains("episode 1"),
                    "{message}"
                );
                let as_error: Error = in_use.into();
                assert!(matches!(as_error, Error::InvalidArgument { .. }));
                // Refusing changed nothing: the third call completes the episode.
                let third = barrier.wait().unwrap();
                let results = [third, first.join().unwrap(), second.join().unwrap()];
                assert!(results.iter().all(|result| result.episode() == 1));
                assert_eq!(
                    results.iter().filter(|result| result.is_leader()).count(),
                    1
                );
            });
            assert_eq!(barrier.settle(), Ok(()), "{algorithm}");
        }
    });
}

/// The `pthread_barrier_destroy` pattern: the leader settles as soon as its own wait returns,
/// while the others may still be inside `wait`; settle must return `Ok` every time.
#[test]
fn leader_settles_while_others_return() {
    within("the leader settles right after its wait", || {
        for algorithm in Algorithm::CONCRETE {
            for _ in 0..50 {
                let barrier = AnyThreadBarrier::with_algorithm(8, algorithm).unwrap();
                std::thread::scope(|s| {
                    for _ in 0..8 {
                        s.spawn(|| {
                            if barrier.wait().unwrap().is_leader() {
                                barrier.settle().unwrap();
                            }
                        });
                    }
                });
            }
        }
    });
}

#[test]
fn a_panicking_completion_action_breaks_without_poisoning_later_calls() {
    within("a completion action panics", || {
        for algorithm in Algorithm::CONCRETE {
            let episodes = Arc::new(std::sync::atomic::AtomicU64::new(0));
            let counter = Arc::clone(&episodes);
            let barrier = Barrier::builder(2)
                .algorithm(algorithm)
                .on_completion(move || {
                    if counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed) == 1 {
                        panic!("the completion action of episode 1 fails");
                    }
                })
                .build()
                .unwrap();
            let barrier = AnyThreadBarrier::from_barrier(barrier).unwrap();
            let outcomes: Vec<_> = std::thread::scope(|s| {
                let threads: Vec<_> = (0..2)
                    .map(|_| {
                        s.spawn(|| {
                            (0..2)
                                .map(|_| catch_unwind(AssertUnwindSafe(|| barrier.wait())))
                                .collect::<Vec<_>>()
                        })
                    })
                    .collect();
                threads
                    .into_iter()
                    .flat_map(|t| t.join().unwrap())
                    .collect()
            });
            // Episode 0 completes for both; in episode 1 the leader's call panics (the action's
            // panic continues in its thread) and the other call reports the barrier broken.
            let completed = outcomes.iter().filter(|o| matches!(o, Ok(Ok(_)))).count();
            let panicked = outcomes.iter().filter(|o| o.is_err()).count();
            let broken = outcomes
                .iter()
                .filter(|o| matches!(o, Ok(Err(Error::Broken { episode: 1, .. }))))
                .count();
            assert_eq!((completed, panicked, broken), (2, 1, 1), "{algorithm}");
            assert!(barrier.is_broken());
            // Both slots' later callers get the error, not a panic from a poisoned lock, and do
            // not block.
            for _ in 0..4 {
                assert!(
                    matches!(barrier.wait(), Err(Error::Broken { .. })),
                    "{algorithm}"
                );
            }
            // A broken barrier is never in use, even with an odd number of calls so far.
            assert_eq!(barrier.settle(), Ok(()), "{algorithm}");
        }
    });
}
