//! `Participant::wait_async`: every algorithm with tasks alone and with blocking threads, 64
//! tasks on 2 threads, a future dropped mid-wait and resumed, a barrier broken while tasks wait,
//! a blocking participant's timeout while the others are tasks, and leaving.
//!
//! No runtime: the tasks run on `executor_support`'s `block_on` and `Pool`, and every wait that
//! could hang is bounded by its `within`.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

mod executor_support;
use executor_support::{
    block_on, poll_each_pending, poll_once, poll_while_paying, within, Count, Pool, Task,
};

use phasers::barrier::BarrierFuture;
use phasers::{Algorithm, Barrier, Error, Mode, Participant, Phaser, Registration, WaitResult};

/// How many participants arrived at each episode, counted before their arrivals, and how many
/// led each: once an episode completes for anyone, its count must be every party (the barrier
/// invariant), and exactly one participant leads it.
struct Ledger {
    arrived: Vec<AtomicUsize>,
    leaders: Vec<AtomicUsize>,
    completions: AtomicU64,
    parties: usize,
}

impl Ledger {
    fn new(parties: usize, episodes: u64) -> Arc<Self> {
        Arc::new(Ledger {
            arrived: (0..episodes).map(|_| AtomicUsize::new(0)).collect(),
            leaders: (0..episodes).map(|_| AtomicUsize::new(0)).collect(),
            completions: AtomicU64::new(0),
            parties,
        })
    }

    fn arrive(&self, episode: u64) {
        self.arrived[episode as usize].fetch_add(1, Ordering::Release);
    }

    /// Checks what a participant that expected `episode` was told.
    fn passed(&self, episode: u64, result: WaitResult) {
        assert_eq!(result.episode(), episode);
        let arrived = self.arrived[episode as usize].load(Ordering::Acquire);
        assert_eq!(
            arrived, self.parties,
            "episode {episode} completed after {arrived} of {} arrivals",
            self.parties
        );
        // The completion action of this episode ran before anyone was released.
        assert!(self.completions.load(Ordering::Acquire) > episode);
        if result.is_leader() {
            self.leaders[episode as usize].fetch_add(1, Ordering::Relaxed);
        }
    }

    fn check_leaders(&self) {
        for (episode, leaders) in self.leaders.iter().enumerate() {
            assert_eq!(leaders.load(Ordering::Relaxed), 1, "leaders of {episode}");
        }
    }
}

/// A barrier of `parties` with `algorithm` whose completion action counts in `ledger`.
fn barrier(algorithm: Algorithm, parties: usize, ledger: &Arc<Ledger>) -> Barrier {
    let ledger = ledger.clone();
    Barrier::builder(parties)
        .algorithm(algorithm)
        .fan_in(2)
        .on_completion(move || {
            ledger.completions.fetch_add(1, Ordering::AcqRel);
        })
        .build()
        .unwrap()
}

/// A task that passes `episodes` episodes with `wait_async`, checking each.
fn task(mut participant: Participant, ledger: Arc<Ledger>, episodes: u64) -> Task {
    Box::pin(async move {
        for episode in 0..episodes {
            ledger.arrive(episode);
            let result = participant.wait_async().await.unwrap();
            ledger.passed(episode, result);
        }
        // Kept until every episode is done: dropping it would break the barrier.
        drop(participant);
    })
}

/// `tasks` participants as tasks on `pool_threads` threads and `threads` blocking ones, for
/// `episodes` episodes of a barrier with `algorithm`.
fn run_mixed(
    algorithm: Algorithm,
    tasks: usize,
    pool_threads: usize,
    threads: usize,
    episodes: u64,
) {
    within(move || {
        let parties = tasks + threads;
        let ledger = Ledger::new(parties, episodes);
        let barrier = barrier(algorithm, parties, &ledger);
        let mut handles = barrier.participants();
        let blocking: Vec<Participant> = handles.drain(tasks..).collect();
        let futures: Vec<Task> = handles
            .into_iter()
            .map(|p| task(p, ledger.clone(), episodes))
            .collect();
        std::thread::scope(|s| {
            for mut participant in blocking {
                let ledger = &ledger;
                s.spawn(move || {
                    for episode in 0..episodes {
                        ledger.arrive(episode);
                        ledger.passed(episode, participant.wait().unwrap());
                    }
                    drop(participant);
                });
            }
            Pool::run(pool_threads, futures);
        });
        ledger.check_leaders();
        assert_eq!(ledger.completions.load(Ordering::Relaxed), episodes);
    });
}

#[test]
fn every_algorithm_with_tasks_alone() {
    for algorithm in Algorithm::CONCRETE {
        for parties in [1, 2, 3, 5] {
            run_mixed(algorithm, parties, 2, 0, 200);
        }
    }
}

#[test]
fn every_algorithm_with_tasks_and_threads() {
    for algorithm in Algorithm::CONCRETE {
        run_mixed(algorithm, 1, 1, 1, 200);
        run_mixed(algorithm, 3, 2, 2, 200);
    }
}

#[test]
fn sixty_four_tasks_on_two_threads() {
    for algorithm in Algorithm::CONCRETE.into_iter().chain([Algorithm::Auto]) {
        run_mixed(algorithm, 64, 2, 0, 100);
    }
}

/// Sixty-four tasks and a blocking thread: the thread parks while the tasks run.
#[test]
fn sixty_four_tasks_and_a_thread() {
    for algorithm in [
        Algorithm::Counting,
        Algorithm::Dissemination,
        Algorithm::McsTree,
    ] {
        run_mixed(algorithm, 64, 2, 1, 50);
    }
}

/// Four parties: rank 0's future is polled once (it arrives, or plays the rounds it can) and
/// dropped; the others arrive from threads, and rank 0 resumes with `resume`.
fn dropped_then_resumed(algorithm: Algorithm, resume: fn(&mut Participant) -> WaitResult) {
    within(move || {
        let ledger = Ledger::new(4, 2);
        let barrier = barrier(algorithm, 4, &ledger);
        let mut handles = barrier.participants();
        let mut first = handles.remove(0);
        {
            let mut wait = first.wait_async();
            assert!(poll_once(&mut wait).is_pending(), "{algorithm}");
            assert!(poll_once(&mut wait).is_pending(), "{algorithm}"); // polled again: still
        }
        assert!(first.is_pending(), "{algorithm}");
        assert_eq!(first.episode(), 0);
        std::thread::scope(|s| {
            for mut p in handles {
                s.spawn(move || {
                    for episode in 0..2 {
                        assert_eq!(p.wait().unwrap().episode(), episode);
                    }
                    // Kept to the end: a dropped participant breaks the barrier.
                    p
                });
            }
            // Episode 0 completes once the others arrive, without rank 0 arriving again.
            assert_eq!(resume(&mut first).episode(), 0, "{algorithm}");
            assert!(!first.is_pending());
            // And the next episode is an ordinary one.
            assert_eq!(block_on(first.wait_async()).unwrap().episode(), 1);
        });
        assert_eq!(ledger.completions.load(Ordering::Relaxed), 2, "{algorithm}");
    });
}

#[test]
fn a_dropped_future_is_resumed_by_wait() {
    for algorithm in Algorithm::CONCRETE {
        dropped_then_resumed(algorithm, |p| p.wait().unwrap());
    }
}

#[test]
fn a_dropped_future_is_resumed_by_wait_async() {
    for algorithm in Algorithm::CONCRETE {
        dropped_then_resumed(algorithm, |p| block_on(p.wait_async()).unwrap());
    }
}

/// A dropped future leaves no waker behind: the release that would have woken it finds none (a
/// waker that was still stored would be woken, and count).
#[test]
fn a_dropped_future_leaves_no_waker() {
    for algorithm in Algorithm::CONCRETE {
        within(move || {
            let barrier = Barrier::with_algorithm(2, algorithm).unwrap();
            let mut handles = barrier.participants();
            let (mut second, mut first) = (handles.pop().unwrap(), handles.pop().unwrap());
            let count = Count::new();
            let waker = Waker::from(count.clone());
            {
                let mut wait = first.wait_async();
                let polled = Pin::new(&mut wait).poll(&mut Context::from_waker(&waker));
                assert!(polled.is_pending());
            }
            // Still stored, it would hold the count's `Arc`: only `count` and `waker` do.
            assert_eq!(Arc::strong_count(&count), 2, "{algorithm}");
            std::thread::scope(|s| {
                // A tree's rank 1 waits for rank 0 to go on: both wait at once.
                s.spawn(|| second.wait().unwrap());
                assert_eq!(first.wait().unwrap().episode(), 0);
            });
            assert_eq!(count.wakes(), 0, "{algorithm}");
        });
    }
}

/// A future that completed took its waker with it, also where it waited on several signals (the
/// rounds of dissemination and the tournament, a tree's levels).
#[test]
fn a_completed_future_leaves_no_waker() {
    for algorithm in Algorithm::CONCRETE {
        within(move || {
            let barrier = Barrier::builder(4)
                .algorithm(algorithm)
                .fan_in(2)
                .build()
                .unwrap();
            let mut handles = barrier.participants();
            let mut first = handles.remove(0);
            let count = Count::new();
            let waker = Waker::from(count.clone());
            let mut wait = first.wait_async();
            assert!(Pin::new(&mut wait)
                .poll(&mut Context::from_waker(&waker))
                .is_pending());
            let handles = std::thread::scope(|s| {
                let others: Vec<_> = handles
                    .into_iter()
                    .map(|mut p| {
                        s.spawn(move || {
                            p.wait().unwrap();
                            p
                        })
                    })
                    .collect();
                // Polled with the counting waker until it completes: each poll may store it
                // on another signal.
                loop {
                    match Pin::new(&mut wait).poll(&mut Context::from_waker(&waker)) {
                        Poll::Ready(result) => break assert_eq!(result.unwrap().episode(), 0),
                        Poll::Pending => std::thread::yield_now(),
                    }
                }
                others
                    .into_iter()
                    .map(|t| t.join().unwrap())
                    .collect::<Vec<_>>()
            });
            drop(wait);
            assert_eq!(
                Arc::strong_count(&count),
                2,
                "{algorithm}: a waker stayed stored"
            );
            drop(handles);
        });
    }
}

/// A participant lost in a panic breaks the barrier: the tasks waiting get the error the
/// blocking waiters get.
#[test]
fn a_panic_breaks_the_barrier_for_tasks_as_for_threads() {
    for algorithm in Algorithm::CONCRETE {
        let (tasks, threads) = within(move || {
            let barrier = Barrier::builder(5)
                .algorithm(algorithm)
                .fan_in(2)
                .build()
                .unwrap();
            let mut handles = barrier.participants();
            let lost = handles.pop().unwrap(); // rank 4
            let blocking: Vec<Participant> = handles.drain(2..).collect(); // ranks 2 and 3
            let (sender, receiver) = mpsc::channel();
            let futures: Vec<Task> = handles
                .into_iter()
                .map(|mut p| {
                    let sender = sender.clone();
                    Box::pin(async move {
                        sender.send(p.wait_async().await).unwrap();
                        // Waiting again reports the break again.
                        sender.send(p.wait_async().await).unwrap();
                    }) as Task
                })
                .collect();
            let threads = std::thread::scope(|s| {
                let waiting: Vec<_> = blocking
                    .into_iter()
                    .map(|mut p| s.spawn(move || p.wait()))
                    .collect();
                s.spawn(move || Pool::run(2, futures));
                std::thread::sleep(Duration::from_millis(20)); // let every one of them wait
                let panicked = std::thread::spawn(move || {
                    let _held = lost;
                    panic!("a participant's thread panics");
                })
                .join();
                assert!(panicked.is_err());
                waiting
                    .into_iter()
                    .map(|t| t.join().unwrap())
                    .collect::<Vec<_>>()
            });
            drop(sender);
            (receiver.iter().collect::<Vec<_>>(), threads)
        });
        let broken = Error::Broken { by: 4, episode: 0 };
        assert_eq!(tasks.len(), 4, "{algorithm}");
        for outcome in tasks.iter().chain(&threads) {
            assert_eq!(outcome, &Err(broken.clone()), "{algorithm}");
        }
    }
}

/// A completion action that panics in a task's poll breaks the barrier for the others, and the
/// panic goes on out of the poll.
#[test]
fn a_completion_action_that_panics_in_a_task() {
    for algorithm in Algorithm::CONCRETE {
        within(move || {
            let barrier = Barrier::builder(2)
                .algorithm(algorithm)
                .on_completion(|| panic!("the action panics"))
                .build()
                .unwrap();
            let mut handles = barrier.participants();
            let (mut second, mut first) = (handles.pop().unwrap(), handles.pop().unwrap());
            let mut waits = [first.wait_async(), second.wait_async()];
            // Whichever of the two leads runs the action in its poll; the other may need a
            // second poll to get that far (a tree's root waits for its children first).
            let mut polls: Vec<_> = waits.iter_mut().map(poll_catch).collect();
            if polls.iter().all(|p| matches!(p, Ok(Poll::Pending))) {
                polls = waits.iter_mut().map(poll_catch).collect();
            }
            assert_eq!(
                polls.iter().filter(|p| p.is_err()).count(),
                1,
                "{algorithm}"
            );
            for (polled, wait) in polls.into_iter().zip(&mut waits) {
                let outcome = match polled {
                    Err(_) => continue, // the leader's poll, which panicked
                    Ok(Poll::Ready(outcome)) => outcome,
                    Ok(Poll::Pending) => block_on(wait),
                };
                assert!(
                    matches!(outcome, Err(Error::Broken { .. })),
                    "{algorithm}: {outcome:?}"
                );
            }
        });
    }
}

/// Polls once, catching a panic.
fn poll_catch<F: Future + Unpin>(future: &mut F) -> std::thread::Result<Poll<F::Output>> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| poll_once(future)))
}

/// A blocking participant's timed wait times out while the others are tasks, naming the one
/// missing (the task that arrived is not), and its arrival stays for the tasks to complete.
#[test]
fn a_blocking_timeout_among_tasks() {
    for algorithm in Algorithm::CONCRETE {
        within(move || {
            let barrier = Barrier::builder(3)
                .algorithm(algorithm)
                .fan_in(2)
                .build()
                .unwrap();
            let mut handles = barrier.participants();
            let mut blocking = handles.pop().unwrap(); // rank 2
            let (mut late, mut early) = (handles.pop().unwrap(), handles.pop().unwrap());
            let mut early_wait = early.wait_async();
            assert!(poll_once(&mut early_wait).is_pending());
            match blocking.wait_timeout(Duration::from_millis(10)) {
                Err(Error::Timeout {
                    episode, missing, ..
                }) => assert_eq!((episode, missing), (0, vec![1]), "{algorithm}"),
                other => panic!("{algorithm}: expected a timeout, got {other:?}"),
            }
            assert!(blocking.is_pending());
            std::thread::scope(|s| {
                // All three at once: in a tree or dissemination, each may wait for another.
                let resumed = s.spawn(move || {
                    let result = blocking.wait().unwrap();
                    (result, blocking)
                });
                let late = s.spawn(move || (block_on(late.wait_async()).unwrap(), late));
                let early_result = block_on(early_wait).unwrap();
                let (late_result, _late) = late.join().unwrap();
                let (blocking_result, _blocking) = resumed.join().unwrap();
                let results = [early_result, late_result, blocking_result];
                assert!(results.iter().all(|r| r.episode() == 0), "{algorithm}");
                assert_eq!(results.iter().filter(|r| r.is_leader()).count(), 1);
            });
        });
    }
}

/// A participant that leaves releases the tasks waiting for it; its own async wait is refused.
#[test]
fn leaving_releases_waiting_tasks() {
    for algorithm in [Algorithm::Counting, Algorithm::SenseReversing] {
        within(move || {
            let barrier = Barrier::with_algorithm(3, algorithm).unwrap();
            let mut handles = barrier.participants();
            let mut leaver = handles.pop().unwrap();
            let (mut second, mut first) = (handles.pop().unwrap(), handles.pop().unwrap());
            let mut first_wait = first.wait_async();
            let mut second_wait = second.wait_async();
            assert!(poll_once(&mut first_wait).is_pending());
            assert!(poll_once(&mut second_wait).is_pending());
            leaver.leave().unwrap();
            assert!(matches!(
                block_on(leaver.wait_async()),
                Err(Error::InvalidArgument { .. })
            ));
            assert_eq!(block_on(first_wait).unwrap().episode(), 0);
            assert_eq!(block_on(second_wait).unwrap().episode(), 0);
            // Two parties from now on.
            std::thread::scope(|s| {
                s.spawn(|| block_on(second.wait_async()).unwrap());
                assert_eq!(first.wait().unwrap().episode(), 1);
            });
        });
    }
}

/// Polling after completion panics, as the type's docs say.
#[test]
#[should_panic(expected = "polled after it completed")]
fn polling_after_completion_panics() {
    let barrier = Barrier::with_algorithm(1, Algorithm::Counting).unwrap();
    let mut only = barrier.participant(0).unwrap();
    let mut wait = only.wait_async();
    assert!(poll_once(&mut wait).is_ready());
    let _ = poll_once(&mut wait);
}

/// The future is `Send`, so it can run on a multi-threaded executor.
#[test]
fn the_future_is_send() {
    fn send<T: Send>(_: &T) {}
    let barrier = Barrier::with_algorithm(1, Algorithm::Counting).unwrap();
    let mut only = barrier.participant(0).unwrap();
    let wait = only.wait_async();
    send(&wait);
}

/// The algorithms whose leader releases everyone through one word, so that its release finds
/// every waiting task (a tree's root wakes only its children).
const ONE_RELEASE_WORD: [Algorithm; 3] = [
    Algorithm::Counting,
    Algorithm::SenseReversing,
    Algorithm::Ticket,
];

/// A barrier of `algorithm` for `waiters` participants and a last one.
fn waiting_tasks(algorithm: Algorithm, waiters: usize) -> (Barrier, Participant, Vec<Participant>) {
    let barrier = Barrier::with_algorithm(waiters + 1, algorithm).unwrap();
    let mut handles = barrier.participants();
    let last = handles.pop().unwrap();
    (barrier, last, handles)
}

/// A `wait_async` of each of `participants`, polled once with `waker`: each arrived and waits.
fn waiting<'a>(participants: &'a mut [Participant], waker: &Waker) -> Vec<BarrierFuture<'a>> {
    let mut futures: Vec<_> = participants
        .iter_mut()
        .map(Participant::wait_async)
        .collect();
    poll_each_pending(&mut futures, waker);
    futures
}

/// The task whose arrival completes an episode that many tasks wait for wakes them a batch per
/// poll (wakes past a worker's run queue would spill into its executor's shared queue): its
/// future stays pending, woken by itself, until every waiter is woken, each exactly once.
#[test]
fn the_leading_task_wakes_many_waiters_over_several_polls() {
    for algorithm in ONE_RELEASE_WORD {
        let (_barrier, mut last, mut others) = waiting_tasks(algorithm, 1_000);
        let waiters = Count::new();
        let waiter_waker = Waker::from(waiters.clone());
        let mut futures = waiting(&mut others, &waiter_waker);
        let (completed, polls) = poll_while_paying(&mut last.wait_async(), || {
            assert!(
                waiters.wakes() < 1_000,
                "{algorithm}: woke all, stayed pending"
            );
        });
        let completed = completed.unwrap();
        assert!(
            completed.is_leader() && completed.episode() == 0,
            "{algorithm}"
        );
        assert!(polls > 1, "{algorithm}: 1,000 wakes were made in one poll");
        assert_eq!(waiters.wakes(), 1_000, "{algorithm}");
        for future in &mut futures {
            let polled = Pin::new(future).poll(&mut Context::from_waker(&waiter_waker));
            assert!(
                matches!(polled, Poll::Ready(Ok(result)) if result.episode() == 0),
                "{algorithm}"
            );
        }
    }
}

/// A leading task dropped before it woke every waiter (cancelled, or its runtime shut down)
/// wakes the rest as it drops: no waiter is left asleep on a completed episode.
#[test]
fn a_leading_task_dropped_while_waking_wakes_the_rest() {
    let (_barrier, mut last, mut others) = waiting_tasks(Algorithm::Counting, 1_000);
    let waiters = Count::new();
    let _waiting = waiting(&mut others, &Waker::from(waiters.clone()));
    let mut wait = last.wait_async();
    assert!(poll_once(&mut wait).is_pending(), "1,000 wakes in one poll");
    assert!(waiters.wakes() < 1_000);
    drop(wait);
    assert_eq!(waiters.wakes(), 1_000);
    // The episode completed all the same: the leader's next wait is for the next one.
    assert_eq!((last.episode(), last.is_pending()), (1, false));
}

/// A release that the completion action makes inside a task's poll (here a blocking `next` on
/// a phaser) wakes its waiters at once: only the task's own release is paid a batch per poll.
/// Paid after the action instead, an action that went on to wait for those tasks would wait
/// forever.
#[test]
fn a_release_inside_a_completion_action_wakes_its_waiters_at_once() {
    within(|| {
        let (_phaser, main) = Phaser::new(Mode::SigWait).unwrap();
        let mut others = main.register_many(Mode::SigWait, 1_000).unwrap();
        let waiters = Count::new();
        let waiter_waker = Waker::from(waiters.clone());
        let mut futures: Vec<_> = others.iter_mut().map(Registration::next_async).collect();
        poll_each_pending(&mut futures, &waiter_waker);
        let main = Mutex::new(main);
        let woken_during_action = Arc::new(AtomicUsize::new(0));
        let (seen, counted) = (woken_during_action.clone(), waiters.clone());
        let barrier = Barrier::builder(1)
            .algorithm(Algorithm::Counting)
            .on_completion(move || {
                let mut main = main.lock().unwrap();
                // The first episode only: later ones would wait for the tasks' next signals.
                if main.phase() == 0 {
                    assert_eq!(main.next().unwrap(), 0);
                    seen.store(counted.wakes(), Ordering::Relaxed);
                }
            })
            .build()
            .unwrap();
        let mut only = barrier.participant(0).unwrap();
        let polled = poll_once(&mut only.wait_async());
        assert_eq!(woken_during_action.load(Ordering::Relaxed), 1_000);
        // The barrier's own release found no task waiting: it completes in this poll.
        assert!(matches!(polled, Poll::Ready(Ok(result)) if result.is_leader()));
    });
}
