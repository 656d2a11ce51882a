//! Breaking: a participant that panics, or whose handle is dropped without leaving, breaks the
//! barrier, and everyone else's wait returns `Error::Broken` naming it, promptly, instead of hanging.
//! A panic in the completion action breaks the barrier the same way.

mod barrier_support;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use barrier_support::{fixed_leader, run_episodes};
use phasers::{Algorithm, Barrier, Error, Participant, WaitResult};

/// The library promises milliseconds; this bound is for a loaded 2-core CI machine and only proves
/// that nobody hangs.
const PROMPTLY: Duration = Duration::from_secs(2);

/// How long the culprit lets the others settle into their waits (and park) before it fails.
const SETTLE: Duration = Duration::from_millis(50);

/// The text of a panic payload.
fn payload_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_default()
}

/// After a break: waiting again (in every form), or leaving, fails at once with the same error.
fn check_stays_broken(p: &mut Participant, expected: &Error, what: &str) {
    let start = Instant::now();
    assert_eq!(
        p.wait().as_ref(),
        Err(expected),
        "{what}: wait after the break"
    );
    assert_eq!(
        p.wait_timeout(Duration::from_secs(60)).as_ref(),
        Err(expected),
        "{what}: a timed wait after the break must say Broken, not time out"
    );
    assert_eq!(
        p.wait_deadline(Instant::now() - Duration::from_secs(1))
            .as_ref(),
        Err(expected),
        "{what}: wait_deadline after the break"
    );
    match p.leave() {
        // Algorithms with a fixed party count refuse before looking at the barrier's state.
        Err(Error::Unsupported { .. }) => {}
        other => assert_eq!(
            other.as_ref(),
            Err(expected),
            "{what}: leave after the break"
        ),
    }
    assert!(
        start.elapsed() < PROMPTLY,
        "{what}: waits on a broken barrier blocked"
    );
}

/// `culprit`'s thread panics while holding its handle, at episode `warmup`, while every other
/// participant waits for that episode.
fn panic_breaks(algorithm: Algorithm, parties: usize, culprit: usize, warmup: u64) {
    let what = format!("{algorithm}, {parties} parties, rank {culprit} panics");
    let barrier = Barrier::with_algorithm(parties, algorithm).unwrap();
    let mut handles = barrier.participants();
    run_episodes(&mut handles, warmup);
    assert!(!barrier.is_broken());

    let panicked_at: Mutex<Option<Instant>> = Mutex::new(None);
    let outcomes: Vec<(Participant, phasers::Result<WaitResult>, Instant)> =
        std::thread::scope(|s| {
            let mut culprit_thread = None;
            let mut waiters = Vec::new();
            for p in handles {
                if p.rank() == culprit {
                    let panicked_at = &panicked_at;
                    culprit_thread = Some(s.spawn(move || {
                        let _held = p; // dropped by the unwinding, as in a real failure
                        std::thread::sleep(SETTLE);
                        *panicked_at.lock().unwrap() = Some(Instant::now());
                        panic!("deliberate failure in the culprit");
                    }));
                } else {
                    waiters.push(s.spawn(move || {
                        let mut p = p;
                        let result = p.wait();
                        (p, result, Instant::now())
                    }));
                }
            }
            let payload = culprit_thread
                .unwrap()
                .join()
                .expect_err("the culprit panics");
            assert_eq!(payload_text(&*payload), "deliberate failure in the culprit");
            waiters.into_iter().map(|w| w.join().unwrap()).collect()
        });

    let panicked_at = panicked_at.lock().unwrap().expect("the culprit ran");
    let expected = Error::Broken {
        by: culprit,
        episode: warmup,
    };
    assert_eq!(outcomes.len(), parties - 1);
    for (mut p, result, returned_at) in outcomes {
        let rank = p.rank();
        assert_eq!(result.as_ref(), Err(&expected), "{what}: rank {rank}");
        // The break released the waiter, and did so promptly.
        assert!(
            returned_at >= panicked_at,
            "{what}: rank {rank} returned before the panic"
        );
        assert!(
            returned_at - panicked_at < PROMPTLY,
            "{what}: rank {rank} took {:?} to notice the panic",
            returned_at - panicked_at
        );
        check_stays_broken(&mut p, &expected, &what);
    }
    assert!(barrier.is_broken());
}

/// A handle dropped (without a panic) after completing episode `warmup - 1` breaks episode
/// `warmup`, but not the episode it completed, even when the others have not yet seen its release.
fn drop_breaks(algorithm: Algorithm, parties: usize, culprit: usize, warmup: u64) {
    let what = format!("{algorithm}, {parties} parties, rank {culprit} dropped");
    let barrier = Barrier::with_algorithm(parties, algorithm).unwrap();
    let mut handles = barrier.participants();
    run_episodes(&mut handles, warmup - 1);
    let dropped = handles.remove(culprit);
    let expected = Error::Broken {
        by: culprit,
        episode: warmup,
    };
    std::thread::scope(|s| {
        s.spawn(|| {
            // Complete the last episode, then vanish at once: the others may still be on their way
            // out of that episode, which the drop must not disturb.
            let mut dropped = dropped;
            let released = dropped.wait().unwrap();
            assert_eq!(released.episode(), warmup - 1);
            drop(dropped);
        });
        for p in handles.iter_mut() {
            let (what, expected) = (&what, &expected);
            s.spawn(move || {
                let rank = p.rank();
                let released = p.wait().unwrap_or_else(|e| {
                    panic!("{what}: rank {rank}: a completed episode broke: {e}")
                });
                assert_eq!(released.episode(), warmup - 1);
                let start = Instant::now();
                assert_eq!(p.wait().as_ref(), Err(expected), "{what}: rank {rank}");
                assert!(start.elapsed() < PROMPTLY, "{what}: rank {rank} hung");
                check_stays_broken(p, expected, what);
            });
        }
    });
    assert!(barrier.is_broken());
}

/// The completion action panics in episode `failing`: the leader's thread panics with the action's
/// payload, everyone else gets `Broken` naming the leader.
fn completion_panic_breaks(algorithm: Algorithm, parties: usize, failing: u64) {
    let what = format!("{algorithm}, {parties} parties, completion panics");
    let completed = Arc::new(AtomicU64::new(0));
    let counter = Arc::clone(&completed);
    let barrier = Barrier::builder(parties)
        .algorithm(algorithm)
        .on_completion(move || {
            if counter.load(Ordering::Relaxed) == failing {
                panic!("deliberate failure in the completion action");
            }
            counter.fetch_add(1, Ordering::Relaxed);
        })
        .build()
        .unwrap();
    let outcomes: Vec<std::thread::Result<(Participant, phasers::Result<WaitResult>)>> =
        std::thread::scope(|s| {
            let threads: Vec<_> = barrier
                .participants()
                .into_iter()
                .map(|mut p| {
                    s.spawn(move || {
                        for episode in 0..failing {
                            assert_eq!(p.wait().unwrap().episode(), episode);
                        }
                        let result = p.wait();
                        (p, result)
                    })
                })
                .collect();
            threads.into_iter().map(|t| t.join()).collect()
        });

    let leaders: Vec<usize> = (0..parties).filter(|&r| outcomes[r].is_err()).collect();
    assert_eq!(
        leaders.len(),
        1,
        "{what}: exactly the leader's thread panics: {leaders:?}"
    );
    let leader = leaders[0];
    if let Some(fixed) = fixed_leader(barrier.algorithm()) {
        assert_eq!(leader, fixed, "{what}");
    }
    let expected = Error::Broken {
        by: leader,
        episode: failing,
    };
    for (rank, outcome) in outcomes.into_iter().enumerate() {
        match outcome {
            Err(payload) => assert_eq!(
                payload_text(&*payload),
                "deliberate failure in the completion action",
                "{what}: the action's panic continues in the leader's thread"
            ),
            Ok((mut p, result)) => {
                assert_eq!(result.as_ref(), Err(&expected), "{what}: rank {rank}");
                check_stays_broken(&mut p, &expected, &what);
            }
        }
    }
    assert_eq!(completed.load(Ordering::Relaxed), failing);
    assert!(barrier.is_broken());
}

/// A panic caught inside the leader's own thread (around `wait`) still leaves the barrier broken,
/// and the leader's handle reports it too.
fn caught_completion_panic_breaks(algorithm: Algorithm) {
    let barrier = Barrier::builder(1)
        .algorithm(algorithm)
        .on_completion(|| panic!("deliberate failure in the completion action"))
        .build()
        .unwrap();
    let mut only = barrier.participant(0).unwrap();
    let caught = catch_unwind(AssertUnwindSafe(|| only.wait()));
    assert!(caught.is_err(), "{algorithm}: the panic reaches the leader");
    assert!(barrier.is_broken());
    let expected = Error::Broken { by: 0, episode: 0 };
    assert_eq!(only.wait(), Err(expected.clone()), "{algorithm}");
    check_stays_broken(&mut only, &expected, algorithm.name());
}

/// One module of tests per algorithm, so a failure names the algorithm.
macro_rules! broken_tests {
    ($($module:ident: $algorithm:expr),+ $(,)?) => {
        $(
            mod $module {
                use super::*;

                #[test]
                fn panic_with_3_parties() {
                    for culprit in 0..3 {
                        panic_breaks($algorithm, 3, culprit, 2);
                    }
                }

                #[test]
                fn panic_with_8_parties() {
                    for culprit in [0, 1, 4, 7] {
                        panic_breaks($algorithm, 8, culprit, 3);
                    }
                }

                #[test]
                fn panic_before_the_first_episode() {
                    panic_breaks($algorithm, 3, 1, 0);
                }

                #[test]
                fn drop_without_leave() {
                    for round in 0..20 {
                        drop_breaks($algorithm, 3, round % 3, 1 + round as u64 % 2);
                    }
                    drop_breaks($algorithm, 8, 5, 4);
                }

                #[test]
                fn completion_action_panic() {
                    completion_panic_breaks($algorithm, 3, 4);
                    completion_panic_breaks($algorithm, 8, 0);
                    completion_panic_breaks($algorithm, 8, 5);
                }

                #[test]
                fn completion_action_panic_caught_by_the_leader() {
                    caught_completion_panic_breaks($algorithm);
                }
            }
        )+
    };
}

broken_tests!(
    sense_reversing: Algorithm::SenseReversing,
    counting: Algorithm::Counting,
    ticket: Algorithm::Ticket,
    combining_tree: Algorithm::CombiningTree,
    mcs_tree: Algorithm::McsTree,
    dissemination: Algorithm::Dissemination,
    tournament: Algorithm::Tournament,
    auto: Algorithm::Auto,
);

/// A barrier nobody has waited on, whose handles are all dropped, reports itself broken (the
/// documented meaning of `is_broken`: some episode can no longer complete).
#[test]
fn dropping_every_handle_breaks() {
    let barrier = Barrier::with_algorithm(4, Algorithm::Auto).unwrap();
    let handles = barrier.participants();
    assert!(!barrier.is_broken());
    drop(handles);
    assert!(barrier.is_broken());
}

/// A handle that was never handed out breaks nothing.
#[test]
fn unclaimed_handles_do_not_break() {
    let barrier = Barrier::with_algorithm(3, Algorithm::Auto).unwrap();
    assert!(!barrier.is_broken());
    let clone = barrier.clone();
    drop(clone);
    assert!(!barrier.is_broken());
}
