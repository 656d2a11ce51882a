//! [`AnyThreadBarrier::wait_timeout`] and [`AnyThreadBarrier::wait_deadline`]: a timed call that
//! gives up returns `Error::Timeout` and breaks the barrier (`java.util.concurrent.CyclicBarrier`'s
//! rule), so every other current and later call returns `Error::Broken` promptly instead of
//! hanging; a timeout too long for the clock never expires; and generous timeouts on an
//! oversubscribed machine change nothing: every episode completes with exactly one leader.
//!
//! Every group of threads runs under the hang watchdog, so a wait that would never return fails
//! the test instead of blocking it.

mod watchdog_support;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use phasers::{Algorithm, AnyThreadBarrier, Error};
use watchdog_support::within;

/// How long a call told of a break may take to return: "promptly" on a loaded 2-core machine.
const PROMPT: Duration = Duration::from_secs(5);

/// Spins until some call has taken a ticket at the current episode (`settle` reports the
/// barrier in use).
fn until_a_call_is_inside(barrier: &AnyThreadBarrier) {
    while barrier.settle().is_ok() {
        std::thread::yield_now();
    }
}

#[test]
fn a_timed_out_call_breaks_the_barrier_and_the_plain_waiter_gets_broken() {
    for algorithm in Algorithm::CONCRETE {
        let (timed, plain, plain_after_timeout, later) =
            within("3 parties, 2 callers", move || {
                let barrier = Arc::new(AnyThreadBarrier::with_algorithm(3, algorithm).unwrap());
                let waiter = {
                    let barrier = Arc::clone(&barrier);
                    std::thread::spawn(move || {
                        let result = barrier.wait();
                        (result, Instant::now())
                    })
                };
                until_a_call_is_inside(&barrier);
                let timed = barrier.wait_timeout(Duration::from_millis(50));
                let gave_up = Instant::now();
                let (plain, returned) = waiter.join().unwrap();
                let later = barrier.wait_timeout(Duration::from_secs(60));
                (
                    timed,
                    plain,
                    returned.saturating_duration_since(gave_up),
                    later,
                )
            });
        match timed {
            // The third call never came; the plain waiter may or may not have reached the roster.
            Err(Error::Timeout {
                episode: 0,
                ref missing,
                resumable: false,
            }) => assert!(
                (1..=2).contains(&missing.len()),
                "{algorithm:?}: {} calls missing of 3",
                missing.len()
            ),
            other => panic!("{algorithm:?}: the timed call should time out, got {other:?}"),
        }
        assert!(
            matches!(plain, Err(Error::Broken { episode: 0, .. })),
            "{algorithm:?}: the plain waiter should be told the barrier broke, got {plain:?}"
        );
        assert!(
            plain_after_timeout < PROMPT,
            "{algorithm:?}: the plain waiter returned {plain_after_timeout:?} after the timeout"
        );
        // A later call, timed or not, is refused at once rather than waiting out its timeout.
        assert!(
            matches!(later, Err(Error::Broken { .. })),
            "{algorithm:?}: a later call should get Broken, got {later:?}"
        );
    }
}

#[test]
fn the_timeout_error_says_the_episode_and_how_many_calls_were_missing() {
    let barrier = AnyThreadBarrier::with_algorithm(4, Algorithm::Counting).unwrap();
    let err = barrier.wait_timeout(Duration::from_millis(10)).unwrap_err();
    match &err {
        // Alone: 1 call of 4 arrived, so 3 are missing.
        Error::Timeout {
            episode,
            missing,
            resumable: false,
        } => {
            assert_eq!(*episode, 0);
            assert_eq!(missing.len(), 3, "{err}");
        }
        other => panic!("expected a timeout, got {other:?}"),
    }
    assert!(barrier.is_broken());
    // The barrier is broken, so `settle` may let it be destroyed: nothing waits any more.
    assert_eq!(barrier.settle(), Ok(()));
}

#[test]
fn completed_episodes_stay_complete_and_the_break_starts_at_the_timed_out_episode() {
    let (timed, other) = within("2 parties, 10 episodes, then a timeout", || {
        let barrier = Arc::new(AnyThreadBarrier::with_algorithm(2, Algorithm::Tournament).unwrap());
        let partner = {
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                for episode in 0..10 {
                    assert_eq!(barrier.wait().unwrap().episode(), episode);
                }
            })
        };
        for episode in 0..10 {
            assert_eq!(
                barrier
                    .wait_timeout(Duration::from_secs(10))
                    .unwrap()
                    .episode(),
                episode
            );
        }
        partner.join().unwrap();
        // Episode 10 gets one call only.
        let timed = barrier.wait_timeout(Duration::from_millis(20));
        (timed, barrier.wait())
    });
    assert!(
        matches!(timed, Err(Error::Timeout { episode: 10, .. })),
        "{timed:?}"
    );
    // The second call at episode 10 took the other rank, whose participant is still there: it is
    // told by the broken state, which names episode 10.
    assert!(
        matches!(other, Err(Error::Broken { episode: 10, .. })),
        "{other:?}"
    );
}

#[test]
fn a_deadline_in_the_past_gives_up_at_once_and_breaks_the_barrier() {
    for algorithm in Algorithm::CONCRETE {
        let barrier = AnyThreadBarrier::with_algorithm(2, algorithm).unwrap();
        let past = Instant::now() - Duration::from_secs(1);
        let start = Instant::now();
        let result = barrier.wait_deadline(past);
        assert!(
            matches!(result, Err(Error::Timeout { episode: 0, .. })),
            "{algorithm:?}: {result:?}"
        );
        assert!(
            start.elapsed() < PROMPT,
            "{algorithm:?}: a past deadline took {:?}",
            start.elapsed()
        );
        assert!(barrier.is_broken(), "{algorithm:?}");
        // Both ranks' later calls: one finds the dropped participant's error, one the broken state.
        for _ in 0..2 {
            let later = barrier.wait_deadline(Instant::now() + Duration::from_secs(60));
            assert!(
                matches!(later, Err(Error::Broken { episode: 0, .. })),
                "{algorithm:?}: {later:?}"
            );
        }
    }
}

#[test]
fn a_deadline_in_the_past_completes_a_barrier_of_one() {
    let barrier = AnyThreadBarrier::with_algorithm(1, Algorithm::McsTree).unwrap();
    let past = Instant::now() - Duration::from_secs(1);
    for episode in 0..3 {
        let result = barrier.wait_deadline(past).unwrap();
        assert_eq!((result.episode(), result.is_leader()), (episode, true));
    }
    assert!(!barrier.is_broken());
}

#[test]
fn duration_max_never_expires_while_the_others_arrive_late() {
    for timeout in [Duration::MAX, Duration::from_secs(u64::MAX)] {
        let results = within("Duration::MAX with late arrivals", move || {
            let barrier = Arc::new(AnyThreadBarrier::with_algorithm(3, Algorithm::Auto).unwrap());
            let late: Vec<_> = (0..2)
                .map(|_| {
                    let barrier = Arc::clone(&barrier);
                    std::thread::spawn(move || {
                        std::thread::sleep(Duration::from_millis(200));
                        barrier.wait().unwrap()
                    })
                })
                .collect();
            let mut results = vec![barrier.wait_timeout(timeout).unwrap()];
            results.extend(late.into_iter().map(|t| t.join().unwrap()));
            assert!(!barrier.is_broken());
            results
        });
        assert!(results.iter().all(|r| r.episode() == 0));
        assert_eq!(results.iter().filter(|r| r.is_leader()).count(), 1);
    }
}

#[test]
fn sixty_four_threads_on_two_cores_with_generous_timeouts_complete_every_episode() {
    const PARTIES: usize = 64;
    const EPISODES: u64 = 100;
    for algorithm in [
        Algorithm::Auto,
        Algorithm::SenseReversing,
        Algorithm::Tournament,
        Algorithm::McsTree,
    ] {
        let calls = within("64 threads, timed waits", move || {
            let barrier = AnyThreadBarrier::with_algorithm(PARTIES, algorithm).unwrap();
            let arrivals = AtomicU64::new(0);
            let calls: Vec<Vec<(u64, bool)>> = std::thread::scope(|s| {
                let threads: Vec<_> = (0..PARTIES)
                    .map(|_| {
                        let (barrier, arrivals) = (&barrier, &arrivals);
                        s.spawn(move || {
                            (0..EPISODES)
                                .map(|_| {
                                    // Relaxed on both sides: only the barrier orders them.
                                    arrivals.fetch_add(1, Ordering::Relaxed);
                                    let result =
                                        barrier.wait_timeout(Duration::from_secs(10)).unwrap();
                                    let seen = arrivals.load(Ordering::Relaxed);
                                    // The barrier invariant: nobody leaves episode e before
                                    // every call of it arrived.
                                    assert!(
                                        seen >= (result.episode() + 1) * PARTIES as u64,
                                        "left episode {} having seen {seen} arrivals",
                                        result.episode()
                                    );
                                    (result.episode(), result.is_leader())
                                })
                                .collect()
                        })
                    })
                    .collect();
                threads.into_iter().map(|t| t.join().unwrap()).collect()
            });
            assert!(!barrier.is_broken());
            barrier.settle().unwrap();
            calls
        });
        let all: Vec<(u64, bool)> = calls.into_iter().flatten().collect();
        for episode in 0..EPISODES {
            let of_episode = all.iter().filter(|(e, _)| *e == episode).count();
            assert_eq!(of_episode, PARTIES, "{algorithm:?}: episode {episode}");
            let leaders = all.iter().filter(|&&(e, led)| e == episode && led).count();
            assert_eq!(
                leaders, 1,
                "{algorithm:?}: episode {episode} had {leaders} leaders"
            );
        }
    }
}
