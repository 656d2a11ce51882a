//! `AnyThreadBarrier::wait_async`: tasks and blocking threads share one barrier under every
//! algorithm, 64 tasks on 2 threads, and cancellation: a future dropped before its first poll does
//! nothing; one dropped after it breaks the barrier (as a timed wait that gives up does), whether
//! it had arrived or was still queued behind its rank's previous call, unless its episode had
//! completed; nobody hangs and `settle` returns.
//!
//! No runtime: the tasks run on `executor_support`'s `block_on` and `Pool`, and every wait that
//! could hang is bounded by its `within`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

mod executor_support;
use executor_support::{block_on, poll_once, within, Pool, Task};

use phasers::{Algorithm, AnyThreadBarrier, Error};

const ALGORITHMS: [Algorithm; 7] = [
    Algorithm::Auto,
    Algorithm::Counting,
    Algorithm::SenseReversing,
    Algorithm::Dissemination,
    Algorithm::Tournament,
    Algorithm::McsTree,
    Algorithm::CombiningTree,
];

/// Per episode: how many calls arrived (counted before the call) and how many led.
struct Ledger {
    arrived: Vec<AtomicUsize>,
    leaders: Vec<AtomicUsize>,
    parties: usize,
}

impl Ledger {
    fn new(parties: usize, episodes: u64) -> Arc<Self> {
        Arc::new(Ledger {
            arrived: (0..episodes).map(|_| AtomicUsize::new(0)).collect(),
            leaders: (0..episodes).map(|_| AtomicUsize::new(0)).collect(),
            parties,
        })
    }

    /// A call of round `round` completed `episode`: calls pair up in rounds here (each party
    /// makes one call per round), so its episode is its round.
    fn completed(&self, round: u64, result: phasers::WaitResult) {
        assert_eq!(result.episode(), round);
        let arrived = self.arrived[round as usize].load(Ordering::Acquire);
        assert!(
            arrived >= self.parties,
            "episode {round} released after {arrived} of {} arrivals",
            self.parties
        );
        if result.is_leader() {
            self.leaders[round as usize].fetch_add(1, Ordering::Relaxed);
        }
    }

    fn check_end(&self) {
        for (episode, leaders) in self.leaders.iter().enumerate() {
            assert_eq!(
                leaders.load(Ordering::Relaxed),
                1,
                "leaders of episode {episode}"
            );
        }
    }
}

/// `tasks` tasks on 2 threads and `threads` blocking threads, one call each per episode.
fn mixed(algorithm: Algorithm, tasks: usize, threads: usize, episodes: u64) {
    let parties = tasks + threads;
    let barrier = Arc::new(AnyThreadBarrier::with_algorithm(parties, algorithm).unwrap());
    let ledger = Ledger::new(parties, episodes);
    let (b, l) = (barrier.clone(), ledger.clone());
    within(move || {
        let (barrier, ledger) = (b, l);
        std::thread::scope(|s| {
            for _ in 0..threads {
                let (barrier, ledger) = (&barrier, &ledger);
                s.spawn(move || {
                    for round in 0..episodes {
                        ledger.arrived[round as usize].fetch_add(1, Ordering::Release);
                        ledger.completed(round, barrier.wait().unwrap());
                    }
                });
            }
            let futures: Vec<Task> = (0..tasks)
                .map(|_| {
                    let (barrier, ledger) = (barrier.clone(), ledger.clone());
                    Box::pin(async move {
                        for round in 0..episodes {
                            ledger.arrived[round as usize].fetch_add(1, Ordering::Release);
                            ledger.completed(round, barrier.wait_async().await.unwrap());
                        }
                    }) as Task
                })
                .collect();
            Pool::run(2, futures);
        });
        barrier.settle().unwrap();
    });
    ledger.check_end();
}

#[test]
fn tasks_and_blocking_threads_share_a_barrier_under_every_algorithm() {
    for algorithm in ALGORITHMS {
        mixed(algorithm, 4, 2, 200);
    }
}

#[test]
fn sixty_four_tasks_on_two_threads() {
    for algorithm in [
        Algorithm::Auto,
        Algorithm::Dissemination,
        Algorithm::McsTree,
    ] {
        mixed(algorithm, 64, 0, 100);
    }
}

/// More tasks than parties, taking their calls from a shared pool of work (the safe pattern): a
/// rank's calls queue behind each other, tasks behind tasks, and each episode has `parties`
/// calls.
#[test]
fn more_tasks_than_parties_from_a_shared_pool() {
    const PARTIES: usize = 3;
    const CALLS: usize = PARTIES * 100;
    for algorithm in ALGORITHMS {
        let barrier = Arc::new(AnyThreadBarrier::with_algorithm(PARTIES, algorithm).unwrap());
        let next = Arc::new(AtomicUsize::new(0));
        let results = Arc::new(Mutex::new(Vec::new()));
        let futures: Vec<Task> = (0..8)
            .map(|_| {
                let (barrier, next, results) = (barrier.clone(), next.clone(), results.clone());
                Box::pin(async move {
                    while next.fetch_add(1, Ordering::Relaxed) < CALLS {
                        let result = barrier.wait_async().await.unwrap();
                        results.lock().unwrap().push(result);
                    }
                }) as Task
            })
            .collect();
        let b = barrier.clone();
        within(move || {
            Pool::run(2, futures);
            b.settle().unwrap();
        });
        let results = results.lock().unwrap();
        assert_eq!(results.len(), CALLS);
        for episode in 0..(CALLS / PARTIES) as u64 {
            let calls = results.iter().filter(|r| r.episode() == episode).count();
            let leaders = results
                .iter()
                .filter(|r| r.episode() == episode && r.is_leader())
                .count();
            assert_eq!(
                (calls, leaders),
                (PARTIES, 1),
                "{algorithm:?}, episode {episode}"
            );
        }
    }
}

/// Dropped before its first poll: no ticket, no arrival; the barrier goes on as before.
#[test]
fn dropped_before_its_first_poll() {
    let barrier = AnyThreadBarrier::new(2);
    drop(barrier.wait_async());
    let results = within(move || {
        let results = std::thread::scope(|s| {
            let other = s.spawn(|| barrier.wait().unwrap());
            [barrier.wait().unwrap(), other.join().unwrap()]
        });
        assert!(!barrier.is_broken());
        barrier.settle().unwrap();
        results
    });
    assert!(results.iter().all(|r| r.episode() == 0));
}

/// Dropped after arriving, its episode incomplete: the barrier breaks at that episode; a blocking
/// call and a task waiting there return `Broken`, later calls too, at once; `settle` returns.
#[test]
fn dropped_after_arriving_breaks_the_barrier() {
    for algorithm in ALGORITHMS {
        let barrier = Arc::new(AnyThreadBarrier::with_algorithm(4, algorithm).unwrap());
        // Episode 0 completes normally.
        within({
            let barrier = barrier.clone();
            move || {
                std::thread::scope(|s| {
                    for _ in 0..3 {
                        s.spawn(|| block_on(barrier.wait_async()).unwrap());
                    }
                    barrier.wait().unwrap();
                });
            }
        });
        let mut dropped = barrier.wait_async();
        assert!(poll_once(&mut dropped).is_pending(), "{algorithm:?}");
        let mut task = barrier.wait_async();
        assert!(poll_once(&mut task).is_pending());
        let b = barrier.clone();
        let blocking = std::thread::spawn(move || b.wait());
        std::thread::sleep(Duration::from_millis(20));
        drop(dropped);
        assert!(barrier.is_broken(), "{algorithm:?}");
        let blocked = within(move || blocking.join().unwrap());
        assert!(
            matches!(blocked, Err(Error::Broken { .. })),
            "{algorithm:?}: {blocked:?}"
        );
        assert!(matches!(block_on(task), Err(Error::Broken { .. })));
        assert!(matches!(barrier.wait(), Err(Error::Broken { .. })));
        assert!(matches!(
            block_on(barrier.wait_async()),
            Err(Error::Broken { .. })
        ));
        let b = barrier.clone();
        within(move || b.settle().unwrap());
    }
}

/// Dropped once its episode completed, before it was polled again: the drop finishes the wait
/// and the barrier goes on.
#[test]
fn dropped_after_its_episode_completed_keeps_the_barrier() {
    for algorithm in ALGORITHMS {
        let barrier = AnyThreadBarrier::with_algorithm(2, algorithm).unwrap();
        let mut first = barrier.wait_async();
        assert!(poll_once(&mut first).is_pending(), "{algorithm:?}");
        let mut second = barrier.wait_async();
        // The last arrival: completes episode 0 (it may still have to release `first`).
        let second = match poll_once(&mut second) {
            std::task::Poll::Ready(result) => result.unwrap(),
            std::task::Poll::Pending => {
                drop(first);
                // A tree that releases `second` through `first`: the drop's last look did it.
                let result = block_on(second).unwrap();
                assert!(!barrier.is_broken(), "{algorithm:?}");
                assert_eq!(result.episode(), 0);
                continue_on(&barrier, algorithm);
                continue;
            }
        };
        assert_eq!(second.episode(), 0);
        drop(first); // complete, never polled again
        assert!(!barrier.is_broken(), "{algorithm:?}");
        continue_on(&barrier, algorithm);
    }
}

/// The barrier still runs: episodes 1 to 20 with a task and a thread.
fn continue_on(barrier: &AnyThreadBarrier, algorithm: Algorithm) {
    std::thread::scope(|s| {
        let task = s.spawn(|| {
            (0..20)
                .map(|_| block_on(barrier.wait_async()).unwrap().episode())
                .collect::<Vec<_>>()
        });
        for episode in 1..=20 {
            assert_eq!(barrier.wait().unwrap().episode(), episode, "{algorithm:?}");
        }
        assert_eq!(task.join().unwrap(), (1..=20).collect::<Vec<_>>());
    });
    barrier.settle().unwrap();
}

/// Dropped while queued behind its rank's previous call (a task holding the rank's participant,
/// not yet polled since its episode completed): the barrier breaks from the dropped call's
/// episode, the previous call still completes its own, and nobody hangs.
#[test]
fn dropped_while_queued_for_its_rank_breaks_the_barrier() {
    let barrier = AnyThreadBarrier::with_algorithm(2, Algorithm::Counting).unwrap();
    let mut first = barrier.wait_async(); // ticket 0: rank 0, episode 0
    assert!(poll_once(&mut first).is_pending());
    let second = barrier.wait_async(); // ticket 1: rank 1, completes episode 0
    assert_eq!(block_on(second).unwrap().episode(), 0);
    let mut queued = barrier.wait_async(); // ticket 2: rank 0, lent to `first`
    assert!(poll_once(&mut queued).is_pending());
    assert!(format!("{queued:?}").contains("queued"), "{queued:?}");
    drop(queued);
    assert!(barrier.is_broken());
    // `first`'s episode 0 had completed: it is not broken.
    assert_eq!(block_on(first).unwrap().episode(), 0);
    assert!(matches!(
        barrier.wait(),
        Err(Error::Broken { episode: 1, .. })
    ));
    within(move || barrier.settle().unwrap());
}

/// A task queued behind another task of its rank does not wake itself to be polled again (a
/// busy re-poll for as long as the other task waits): it is woken once, when the other task
/// gives the rank back, and then takes the next episode.
#[test]
fn a_task_queued_behind_a_task_is_woken_by_the_give_back() {
    use std::future::Future;
    use std::pin::Pin;
    use std::task::{Context, Poll, Waker};
    let barrier = AnyThreadBarrier::with_algorithm(2, Algorithm::Counting).unwrap();
    let mut first = barrier.wait_async(); // ticket 0: rank 0, episode 0
    assert!(poll_once(&mut first).is_pending());
    // Ticket 1: rank 1, completes episode 0.
    assert_eq!(block_on(barrier.wait_async()).unwrap().episode(), 0);
    let count = executor_support::Count::new();
    let waker = Waker::from(count.clone());
    let mut third = barrier.wait_async(); // ticket 2: rank 0, still lent to `first`
    let mut poll_third = || Pin::new(&mut third).poll(&mut Context::from_waker(&waker));
    assert!(poll_third().is_pending());
    assert!(poll_third().is_pending()); // polled again: one waker kept, not two
    assert_eq!(count.wakes(), 0, "a queued task must not wake itself");
    assert_eq!(block_on(&mut first).unwrap().episode(), 0); // gives rank 0 back
    assert_eq!(count.wakes(), 1);
    assert!(poll_third().is_pending()); // took rank 0, arrived at episode 1
    assert_eq!(block_on(barrier.wait_async()).unwrap().episode(), 1); // ticket 3
    assert!(matches!(poll_third(), Poll::Ready(Ok(result)) if result.episode() == 1));
    drop((first, third));
    within(move || barrier.settle().unwrap());
}

/// A blocking call of a rank whose participant a task holds waits for the task to give it back,
/// and takes the next episode.
#[test]
fn a_blocking_call_waits_for_its_rank_from_a_task() {
    let result = within(|| {
        let barrier = AnyThreadBarrier::new(2);
        let mut first = barrier.wait_async(); // ticket 0: rank 0
        assert!(poll_once(&mut first).is_pending());
        let result = std::thread::scope(|s| {
            // Ticket 1: rank 1, completes episode 0.
            assert_eq!(
                s.spawn(|| barrier.wait())
                    .join()
                    .unwrap()
                    .unwrap()
                    .episode(),
                0
            );
            // Ticket 2: rank 0, lent to `first` until it is polled.
            let third = s.spawn(|| barrier.wait());
            std::thread::sleep(Duration::from_millis(20));
            assert!(!third.is_finished());
            assert_eq!(block_on(first).unwrap().episode(), 0); // gives rank 0 back
            let fourth = barrier.wait().unwrap(); // ticket 3: rank 1, episode 1
            let third = third.join().unwrap().unwrap();
            (third.episode(), fourth.episode())
        });
        barrier.settle().unwrap();
        result
    });
    assert_eq!(result, (1, 1));
}

/// A completion action that panics in a task's poll: the panic continues out of the poll, the
/// barrier breaks, and the other calls (tasks that had arrived, a later blocking call) get
/// `Broken`; the future dropped while unwinding gives its participant back once, and `settle`
/// returns.
#[test]
fn a_completion_action_panicking_in_a_task_breaks_the_barrier() {
    let barrier = phasers::Barrier::builder(3)
        .algorithm(Algorithm::Counting)
        .on_completion(|| panic!("boom in the completion action"))
        .build()
        .unwrap();
    let barrier = AnyThreadBarrier::from_barrier(barrier).unwrap();
    let mut first = barrier.wait_async();
    assert!(poll_once(&mut first).is_pending());
    let mut second = barrier.wait_async();
    assert!(poll_once(&mut second).is_pending());
    // The last call: Counting's last arrival leads and runs the action in its poll.
    let last = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        block_on(barrier.wait_async())
    }));
    let payload = last.expect_err("the action's panic continues out of the poll");
    assert!(payload
        .downcast_ref::<&str>()
        .is_some_and(|text| text.contains("boom")));
    assert!(barrier.is_broken());
    assert!(matches!(block_on(first), Err(Error::Broken { .. })));
    assert!(matches!(block_on(second), Err(Error::Broken { .. })));
    assert!(matches!(barrier.wait(), Err(Error::Broken { .. })));
    assert!(matches!(
        block_on(barrier.wait_async()),
        Err(Error::Broken { .. })
    ));
    within(move || barrier.settle().unwrap());
}
