//! `.timeout()` and `.deadline()` on the async waits (`PhaseFuture`, `AwaitPhaseFuture`,
//! `WaitGroupFuture`, `BarrierFuture`, `CollectiveFuture`, `AnyThreadFuture`): for each, a
//! timeout that fires with the blocking form's error and is resumed (an `AnyThreadFuture`'s
//! breaks the barrier, as `wait_timeout` does), a deadline already past that still completes, a
//! timeout that does not fire, 32 or 64 tasks on 2 threads of which some time out, and a timed
//! future dropped mid-wait (its timer goes with it, and the object stays consistent).
//! (`SingleFuture` has no deadline: see its docs.)
//!
//! No runtime: the tasks run on `executor_support`'s `block_on` and `Pool`, and every wait that
//! could hang is bounded by its `within` (and the resumed waits by a timeout of `HANG`).

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

mod executor_support;
use executor_support::{block_on, within, Count, Pool, Task, HANG};

use phasers::{
    Algorithm, AnyThreadBarrier, Barrier, Error, Member, Mode, Op, Participant, Phaser, Team,
    WaitGroup, WaitResult,
};

/// The timeout of the waits that must time out: long enough that a test sees the timer, not the
/// first poll, end the wait.
const SHORT: Duration = Duration::from_millis(20);

/// How long a test lets a thread settle into a wait before it acts.
const SETTLE: Duration = Duration::from_millis(10);

/// The timeouts of the pool tests' tasks, by task number: `ZERO` times out whenever its poll
/// finds the wait unmet, the middle ones only some times, `None` never.
fn pool_timeout(task: usize) -> Option<Duration> {
    match task % 4 {
        0 => Some(Duration::ZERO),
        1 => Some(Duration::from_micros(50)),
        2 => Some(Duration::from_millis(1)),
        _ => None,
    }
}

/// Returns `Pending` once, waking its task at once: a task that timed out lets the pool's other
/// tasks run before it retries (a task that retried at once would hold its thread).
fn yield_now() -> impl Future<Output = ()> {
    struct YieldNow(bool);
    impl Future for YieldNow {
        type Output = ();
        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            if self.0 {
                return Poll::Ready(());
            }
            self.0 = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }
    YieldNow(false)
}

/// Polls `future` once with `waker`.
fn poll_with<F: Future + Unpin>(future: &mut F, waker: &Waker) -> Poll<F::Output> {
    Pin::new(future).poll(&mut Context::from_waker(waker))
}

/// `Error::Timeout`'s fields, for the checks; panics on any other error.
fn timeout_fields(err: Error) -> (u64, Vec<usize>, bool) {
    match err {
        Error::Timeout {
            episode,
            missing,
            resumable,
        } => (episode, missing, resumable),
        other => panic!("expected a timeout, got {other:?}"),
    }
}

/// Checks that nothing holds the waker of `count` but the test (`count` and its `Waker`): the
/// object kept no stored waker, and the timer let go of its clone. The timer thread drops its
/// clone when it handles the dropped delay, soon after the drop, so this waits for it a while.
fn assert_released(count: &Arc<Count>, what: &str) {
    let start = Instant::now();
    while Arc::strong_count(count) > 2 {
        assert!(start.elapsed() < HANG / 4, "{what} left its waker stored");
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(Arc::strong_count(count), 2, "{what}");
}

/// Checks that a timed wait waited at least its timeout (the timer, not the first poll, ended it).
fn waited_since(start: Instant) {
    assert!(
        start.elapsed() >= SHORT,
        "timed out after {:?}",
        start.elapsed()
    );
}

// ---------------------------------------------------------------------------------------------
// PhaseFuture: `Registration::next_async` / `wait_async`

#[test]
fn phase_timeout_fires_and_the_same_phase_resumes() {
    within(|| {
        let (phaser, mut main) = Phaser::new(Mode::SigWait).unwrap();
        let mut late = main.register(Mode::SigWait).unwrap();
        let start = Instant::now();
        let err = block_on(main.next_async().timeout(SHORT)).unwrap_err();
        waited_since(start);
        assert_eq!(timeout_fields(err.clone()), (0, vec![late.id()], true));
        // The signal stayed: `main` is in phase 1, the phaser in 0, and the blocking timeout
        // (which waits for the same phase) returns the very same error.
        assert_eq!(main.phase(), 1);
        assert_eq!(phaser.phase(), 0);
        assert_eq!(
            main.next_timeout(Duration::from_millis(1)),
            Err(err.clone())
        );
        // `wait_async` times out the same way, without signalling again.
        let again = block_on(main.wait_async().deadline(Instant::now() + SHORT));
        assert_eq!(again, Err(err));
        late.signal().unwrap();
        assert_eq!(block_on(main.next_async().timeout(HANG)), Ok(0));
        assert_eq!(phaser.phase(), 1);
        // The next phase is an ordinary one (for `late`, after it waits for phase 0).
        std::thread::scope(|s| {
            s.spawn(|| {
                assert_eq!(late.wait().unwrap(), 0);
                assert_eq!(late.next().unwrap(), 1);
            });
            assert_eq!(block_on(main.next_async().timeout(HANG)), Ok(1));
        });
    });
}

#[test]
fn phase_timeout_of_a_wait_only_registration_names_the_signallers() {
    within(|| {
        let (_phaser, mut main) = Phaser::new(Mode::SigWait).unwrap();
        let mut consumer = main.register(Mode::Wait).unwrap();
        let err = block_on(consumer.wait_async().timeout(SHORT)).unwrap_err();
        assert_eq!(timeout_fields(err.clone()), (0, vec![main.id()], true));
        assert_eq!(consumer.wait_timeout(Duration::from_millis(1)), Err(err));
        main.signal().unwrap();
        assert_eq!(block_on(consumer.next_async().timeout(HANG)), Ok(0));
    });
}

#[test]
fn phase_deadline_already_past_still_completes() {
    within(|| {
        let past = Instant::now();
        // The only signaller: its signal releases the phase in the first poll.
        let (_phaser, mut main) = Phaser::new(Mode::SigWait).unwrap();
        assert_eq!(block_on(main.next_async().deadline(past)), Ok(0));
        assert_eq!(block_on(main.wait_async().deadline(past)), Ok(1));
        // The last signaller of two, and then the other one, which sees it released.
        let mut other = main.register(Mode::SigWait).unwrap();
        other.signal().unwrap();
        assert_eq!(block_on(main.next_async().deadline(past)), Ok(2));
        assert_eq!(block_on(other.next_async().deadline(past)), Ok(2));
        // Not released by the first poll: a timeout at once, with the signal made.
        let err = block_on(main.next_async().deadline(past)).unwrap_err();
        assert_eq!(timeout_fields(err), (3, vec![other.id()], true));
        assert_eq!(main.phase(), 4);
        // A signal-only registration's `next` only signals: it never waits, so never times out.
        let mut producer = main.register(Mode::Sig).unwrap();
        let phase = producer.phase();
        assert_eq!(block_on(producer.next_async().deadline(past)), Ok(phase));
    });
}

#[test]
fn phase_timeout_that_does_not_fire() {
    within(|| {
        let (_phaser, mut main) = Phaser::new(Mode::SigWait).unwrap();
        let mut late = main.register(Mode::SigWait).unwrap();
        std::thread::scope(|s| {
            s.spawn(|| {
                std::thread::sleep(SETTLE);
                late.next().unwrap()
            });
            assert_eq!(block_on(main.next_async().timeout(HANG)), Ok(0));
        });
        // A timeout too long for the clock never expires.
        std::thread::scope(|s| {
            s.spawn(|| {
                std::thread::sleep(SETTLE);
                late.next().unwrap()
            });
            assert_eq!(block_on(main.wait_async().timeout(Duration::MAX)), Ok(1));
        });
    });
}

/// A timed future polled once (signalled, timer armed) and dropped: the timer goes with it (no
/// wake after its deadline, no waker left), and the registration resumes the phase signalled.
#[test]
fn phase_dropped_timed_future_leaves_the_phaser_consistent() {
    within(|| {
        let (phaser, mut main) = Phaser::new(Mode::SigWait).unwrap();
        let mut late = main.register(Mode::SigWait).unwrap();
        let count = Count::new();
        let waker = Waker::from(count.clone());
        {
            let mut next = main.next_async().timeout(SHORT);
            assert!(poll_with(&mut next, &waker).is_pending());
        }
        std::thread::sleep(3 * SHORT);
        assert_eq!(count.wakes(), 0, "a dropped future's timer fired");
        assert_released(&count, "a dropped future");
        assert_eq!(main.phase(), 1);
        late.signal().unwrap();
        assert_eq!(main.next().unwrap(), 0);
        assert_eq!(phaser.phase(), 1);
        assert_eq!(count.wakes(), 0);
    });
}

/// 64 registrations as tasks on 2 threads for 20 phases; a quarter time out whenever their poll
/// finds the phase unreleased, others some times, and each retries the same phase until it
/// completes. Every phase released had all 64 signals, and each retry returned its phase.
#[test]
fn phase_sixty_four_tasks_time_out_and_retry() {
    const TASKS: usize = 64;
    const PHASES: u64 = 20;
    within(|| {
        let (_phaser, main) = Phaser::new(Mode::SigWait).unwrap();
        let registrations = main.register_many(Mode::SigWait, TASKS).unwrap();
        drop(main);
        let arrived: Arc<Vec<AtomicUsize>> =
            Arc::new((0..PHASES).map(|_| AtomicUsize::new(0)).collect());
        let timeouts = Arc::new(AtomicUsize::new(0));
        let tasks: Vec<Task> = registrations
            .into_iter()
            .enumerate()
            .map(|(number, mut registration)| {
                let (arrived, timeouts) = (arrived.clone(), timeouts.clone());
                let timeout = pool_timeout(number);
                Box::pin(async move {
                    for phase in 0..PHASES {
                        arrived[phase as usize].fetch_add(1, Ordering::AcqRel);
                        loop {
                            let next = registration.next_async();
                            let next = match timeout {
                                Some(timeout) => next.timeout(timeout),
                                None => next,
                            };
                            match next.await {
                                Ok(released) => {
                                    assert_eq!(released, phase);
                                    let signals = arrived[phase as usize].load(Ordering::Acquire);
                                    assert_eq!(signals, TASKS, "phase {phase} released early");
                                    break;
                                }
                                Err(err) => {
                                    let (episode, missing, resumable) = timeout_fields(err);
                                    assert_eq!(episode, phase);
                                    assert!(resumable);
                                    assert!(!missing.contains(&registration.id()));
                                    assert_eq!(registration.phase(), phase + 1);
                                    timeouts.fetch_add(1, Ordering::Relaxed);
                                    yield_now().await;
                                }
                            }
                        }
                    }
                    drop(registration);
                }) as Task
            })
            .collect();
        Pool::run(2, tasks);
        assert!(timeouts.load(Ordering::Relaxed) > 0, "no task timed out");
    });
}

// ---------------------------------------------------------------------------------------------
// AwaitPhaseFuture: `Phaser::await_phase_async`

#[test]
fn await_phase_timeout_fires_and_waits_again() {
    within(|| {
        let (phaser, mut main) = Phaser::new(Mode::SigWait).unwrap();
        let mut late = main.register(Mode::SigWait).unwrap();
        main.signal().unwrap();
        let start = Instant::now();
        let err = block_on(phaser.await_phase_async(0).timeout(SHORT)).unwrap_err();
        waited_since(start);
        assert_eq!(timeout_fields(err.clone()), (0, vec![late.id()], true));
        assert_eq!(
            phaser.await_phase_timeout(0, Duration::from_millis(1)),
            Err(err)
        );
        std::thread::scope(|s| {
            s.spawn(|| {
                std::thread::sleep(SETTLE);
                late.signal().unwrap();
            });
            assert_eq!(block_on(phaser.await_phase_async(0).timeout(HANG)), Ok(1));
        });
        assert_eq!(main.wait().unwrap(), 0);
    });
}

#[test]
fn await_phase_deadline_already_past_still_completes() {
    within(|| {
        let past = Instant::now();
        let (phaser, mut main) = Phaser::new(Mode::SigWait).unwrap();
        // In progress: a timeout at once.
        let err = block_on(phaser.await_phase_async(0).deadline(past)).unwrap_err();
        assert_eq!(timeout_fields(err), (0, vec![main.id()], true));
        main.next().unwrap();
        // Completed, and one far ahead: the first poll's checks return at once.
        assert_eq!(block_on(phaser.await_phase_async(0).deadline(past)), Ok(1));
        assert_eq!(block_on(phaser.await_phase_async(7).deadline(past)), Ok(1));
        // Ended: the first poll's check returns the end, not a timeout.
        phaser.force_terminate();
        assert_eq!(
            block_on(phaser.await_phase_async(1).deadline(past)),
            Err(Error::Terminated { phase: 1 })
        );
    });
}

#[test]
fn await_phase_timeout_that_does_not_fire() {
    within(|| {
        let (phaser, mut main) = Phaser::new(Mode::SigWait).unwrap();
        std::thread::scope(|s| {
            s.spawn(|| {
                std::thread::sleep(SETTLE);
                main.next().unwrap()
            });
            assert_eq!(block_on(phaser.await_phase_async(0).timeout(HANG)), Ok(1));
        });
    });
}

#[test]
fn await_phase_dropped_timed_future_leaves_nothing() {
    within(|| {
        let (phaser, mut main) = Phaser::new(Mode::SigWait).unwrap();
        let count = Count::new();
        let waker = Waker::from(count.clone());
        {
            let mut watch = phaser.await_phase_async(0).timeout(SHORT);
            assert!(poll_with(&mut watch, &waker).is_pending());
        }
        std::thread::sleep(3 * SHORT);
        assert_eq!(count.wakes(), 0, "a dropped future's timer fired");
        assert_released(&count, "a dropped future");
        assert_eq!(main.next().unwrap(), 0);
        assert_eq!(phaser.phase(), 1);
        assert_eq!(count.wakes(), 0);
    });
}

/// 64 observer tasks on 2 threads await each of 10 phases that a blocking thread completes every
/// few milliseconds; most time out some times and await the same phase again.
#[test]
fn await_phase_sixty_four_tasks_time_out_and_retry() {
    const TASKS: usize = 64;
    const PHASES: u64 = 10;
    within(|| {
        let (phaser, mut main) = Phaser::new(Mode::SigWait).unwrap();
        let timeouts = Arc::new(AtomicUsize::new(0));
        let tasks: Vec<Task> = (0..TASKS)
            .map(|number| {
                let (phaser, timeouts) = (phaser.clone(), timeouts.clone());
                let timeout = pool_timeout(number);
                Box::pin(async move {
                    let mut phase = 0;
                    while phase < PHASES {
                        let watch = phaser.await_phase_async(phase);
                        let watch = match timeout {
                            Some(timeout) => watch.timeout(timeout),
                            None => watch,
                        };
                        match watch.await {
                            Ok(now) => {
                                assert!(now > phase);
                                phase = now;
                            }
                            Err(err) => {
                                let (episode, missing, resumable) = timeout_fields(err);
                                assert_eq!(episode, phase);
                                assert!(resumable);
                                assert!(missing.iter().all(|&id| id == 0), "{missing:?}");
                                timeouts.fetch_add(1, Ordering::Relaxed);
                                yield_now().await;
                            }
                        }
                    }
                }) as Task
            })
            .collect();
        std::thread::scope(|s| {
            s.spawn(|| {
                for phase in 0..PHASES {
                    std::thread::sleep(Duration::from_millis(3));
                    assert_eq!(main.next().unwrap(), phase);
                }
            });
            Pool::run(2, tasks);
        });
        assert!(timeouts.load(Ordering::Relaxed) > 0, "no task timed out");
    });
}

// ---------------------------------------------------------------------------------------------
// WaitGroupFuture: `WaitGroup::wait_async`

#[test]
fn wait_group_timeout_fires_and_another_clone_waits_again() {
    within(|| {
        let group = WaitGroup::new();
        let never_done = group.clone();
        let start = Instant::now();
        let err = block_on(group.clone().wait_async().timeout(SHORT)).unwrap_err();
        waited_since(start);
        let (episode, missing, resumable) = timeout_fields(err.clone());
        assert_eq!((episode, missing.len(), resumable), (0, 2, true));
        // The blocking form names the same clones (`group` and `never_done`).
        assert_eq!(
            group.clone().wait_timeout(Duration::from_millis(1)),
            Err(err)
        );
        // The timed-out clone counted as done: only `group` and `never_done` are outstanding.
        assert_eq!(format!("{group:?}"), "WaitGroup { outstanding: 2 }");
        std::thread::scope(|s| {
            s.spawn(move || {
                std::thread::sleep(SETTLE);
                drop(never_done);
            });
            assert_eq!(block_on(group.wait_async().timeout(HANG)), Ok(()));
        });
    });
}

#[test]
fn wait_group_deadline_already_past_still_completes() {
    within(|| {
        let past = Instant::now();
        assert_eq!(
            block_on(WaitGroup::new().wait_async().deadline(past)),
            Ok(())
        );
        let group = WaitGroup::new();
        let task = group.clone();
        let err = block_on(group.clone().wait_async().deadline(past)).unwrap_err();
        assert_eq!(timeout_fields(err).1.len(), 2);
        drop(task);
        assert_eq!(block_on(group.wait_async().deadline(past)), Ok(()));
    });
}

#[test]
fn wait_group_timeout_that_does_not_fire() {
    within(|| {
        let group = WaitGroup::new();
        let task = group.clone();
        std::thread::scope(|s| {
            s.spawn(move || {
                std::thread::sleep(SETTLE);
                drop(task);
            });
            assert_eq!(block_on(group.wait_async().timeout(HANG)), Ok(()));
        });
    });
}

#[test]
fn wait_group_dropped_timed_future_leaves_the_group_consistent() {
    within(|| {
        let group = WaitGroup::new();
        let task = group.clone();
        let count = Count::new();
        let waker = Waker::from(count.clone());
        {
            let mut wait = group.clone().wait_async().timeout(SHORT);
            assert!(poll_with(&mut wait, &waker).is_pending());
        }
        std::thread::sleep(3 * SHORT);
        assert_eq!(count.wakes(), 0, "a dropped future's timer fired");
        assert_released(&count, "a dropped future");
        assert_eq!(format!("{group:?}"), "WaitGroup { outstanding: 2 }");
        drop(task);
        assert_eq!(group.wait(), Ok(()));
    });
}

/// 64 tasks on 2 threads, each holding one to three clones more than the one it finally waits
/// with: each timed wait with an extra clone must time out (that task's own last clone is
/// outstanding), and the final waits all complete once every task got there.
#[test]
fn wait_group_sixty_four_tasks_time_out_and_retry() {
    const TASKS: usize = 64;
    within(|| {
        let group = WaitGroup::new();
        let timeouts = Arc::new(AtomicUsize::new(0));
        let mut expected = 0;
        let tasks: Vec<Task> = (0..TASKS)
            .map(|number| {
                let retries = 1 + number % 3;
                expected += retries;
                let clones: Vec<WaitGroup> = (0..=retries).map(|_| group.clone()).collect();
                let timeouts = timeouts.clone();
                let timeout = pool_timeout(number).unwrap_or(Duration::from_millis(2));
                Box::pin(async move {
                    let mut clones = clones;
                    let last = clones.pop().unwrap();
                    for clone in clones {
                        let err = clone.wait_async().timeout(timeout).await.unwrap_err();
                        let (episode, missing, resumable) = timeout_fields(err);
                        assert_eq!(episode, 0);
                        assert!(resumable);
                        assert!(!missing.is_empty());
                        timeouts.fetch_add(1, Ordering::Relaxed);
                        yield_now().await;
                    }
                    last.wait_async().timeout(HANG).await.unwrap();
                }) as Task
            })
            .collect();
        drop(group);
        Pool::run(2, tasks);
        assert_eq!(timeouts.load(Ordering::Relaxed), expected);
    });
}

// ---------------------------------------------------------------------------------------------
// BarrierFuture: `Participant::wait_async`

/// Four participants: rank 0's task times out with ranks 1 to 3 missing (every algorithm), the
/// blocking timeout returns the same error, and once the others arrive from threads, rank 0's
/// next wait completes episode 0 without arriving again, then episode 1 as usual.
#[test]
fn barrier_timeout_fires_and_the_same_episode_resumes() {
    for algorithm in Algorithm::CONCRETE {
        within(move || {
            let barrier = Barrier::with_algorithm(4, algorithm).unwrap();
            let mut handles = barrier.participants();
            let mut first = handles.remove(0);
            let start = Instant::now();
            let err = block_on(first.wait_async().timeout(SHORT)).unwrap_err();
            waited_since(start);
            assert_eq!(
                timeout_fields(err.clone()),
                (0, vec![1, 2, 3], true),
                "{algorithm}"
            );
            assert!(first.is_pending());
            assert_eq!(first.episode(), 0);
            assert_eq!(
                first.wait_timeout(Duration::from_millis(1)),
                Err(err),
                "{algorithm}"
            );
            std::thread::scope(|s| {
                for mut p in handles {
                    s.spawn(move || {
                        for episode in 0..2 {
                            assert_eq!(p.wait().unwrap().episode(), episode);
                        }
                        p // kept to the end: a dropped participant breaks the barrier
                    });
                }
                let resumed = block_on(first.wait_async().timeout(HANG)).unwrap();
                assert_eq!(resumed.episode(), 0, "{algorithm}");
                assert!(!first.is_pending());
                let next = block_on(first.wait_async().deadline(Instant::now() + HANG));
                assert_eq!(next.unwrap().episode(), 1, "{algorithm}");
            });
        });
    }
}

#[test]
fn barrier_deadline_already_past_still_completes() {
    let past = Instant::now();
    for algorithm in Algorithm::CONCRETE {
        within(move || {
            // The only participant: its arrival completes the episode in the first poll.
            let barrier = Barrier::with_algorithm(1, algorithm).unwrap();
            let mut only = barrier.participant(0).unwrap();
            for episode in 0..3 {
                let result = block_on(only.wait_async().deadline(past)).unwrap();
                assert_eq!(result.episode(), episode, "{algorithm}");
            }
        });
    }
    within(move || {
        // The last arrival of two completes the episode; the first resumes it at once.
        let barrier = Barrier::with_algorithm(2, Algorithm::Counting).unwrap();
        let mut handles = barrier.participants();
        let (mut last, mut first) = (handles.pop().unwrap(), handles.pop().unwrap());
        let err = block_on(first.wait_async().deadline(past)).unwrap_err();
        assert_eq!(timeout_fields(err), (0, vec![1], true));
        assert!(block_on(last.wait_async().deadline(past))
            .unwrap()
            .is_leader());
        assert_eq!(
            block_on(first.wait_async().deadline(past))
                .unwrap()
                .episode(),
            0
        );
    });
}

#[test]
fn barrier_timeout_that_does_not_fire() {
    for algorithm in Algorithm::CONCRETE {
        within(move || {
            let barrier = Barrier::with_algorithm(2, algorithm).unwrap();
            let mut handles = barrier.participants();
            let (mut second, mut first) = (handles.pop().unwrap(), handles.pop().unwrap());
            std::thread::scope(|s| {
                s.spawn(|| {
                    std::thread::sleep(SETTLE);
                    second.wait().unwrap()
                });
                let result = block_on(first.wait_async().timeout(HANG)).unwrap();
                assert_eq!(result.episode(), 0, "{algorithm}");
            });
        });
    }
}

#[test]
fn barrier_dropped_timed_future_leaves_the_barrier_consistent() {
    for algorithm in Algorithm::CONCRETE {
        within(move || {
            let barrier = Barrier::with_algorithm(2, algorithm).unwrap();
            let mut handles = barrier.participants();
            let (mut second, mut first) = (handles.pop().unwrap(), handles.pop().unwrap());
            let count = Count::new();
            let waker = Waker::from(count.clone());
            {
                let mut wait = first.wait_async().timeout(SHORT);
                assert!(poll_with(&mut wait, &waker).is_pending(), "{algorithm}");
            }
            std::thread::sleep(3 * SHORT);
            assert_eq!(
                count.wakes(),
                0,
                "{algorithm}: a dropped future's timer fired"
            );
            assert_released(&count, &format!("{algorithm}: a dropped future"));
            assert!(first.is_pending());
            std::thread::scope(|s| {
                s.spawn(|| second.wait().unwrap());
                assert_eq!(first.wait().unwrap().episode(), 0, "{algorithm}");
            });
            assert_eq!(count.wakes(), 0, "{algorithm}");
        });
    }
}

/// 64 participants as tasks on 2 threads for 10 episodes of every algorithm; some time out and
/// retry the same episode. Every episode completed had all 64 arrivals, and exactly one leader.
#[test]
fn barrier_sixty_four_tasks_time_out_and_retry() {
    const TASKS: usize = 64;
    const EPISODES: u64 = 10;
    for algorithm in Algorithm::CONCRETE {
        within(move || {
            let barrier = Barrier::builder(TASKS)
                .algorithm(algorithm)
                .fan_in(2)
                .build()
                .unwrap();
            let arrived: Arc<Vec<AtomicUsize>> =
                Arc::new((0..EPISODES).map(|_| AtomicUsize::new(0)).collect());
            let leaders: Arc<Vec<AtomicUsize>> =
                Arc::new((0..EPISODES).map(|_| AtomicUsize::new(0)).collect());
            let timeouts = Arc::new(AtomicUsize::new(0));
            let tasks: Vec<Task> = barrier
                .participants()
                .into_iter()
                .map(|participant: Participant| {
                    let (arrived, leaders) = (arrived.clone(), leaders.clone());
                    let timeouts = timeouts.clone();
                    let timeout = pool_timeout(participant.rank());
                    Box::pin(async move {
                        let mut participant = participant;
                        for episode in 0..EPISODES {
                            arrived[episode as usize].fetch_add(1, Ordering::AcqRel);
                            loop {
                                let wait = participant.wait_async();
                                let wait = match timeout {
                                    Some(timeout) => wait.timeout(timeout),
                                    None => wait,
                                };
                                match wait.await {
                                    Ok(result) => {
                                        assert_eq!(result.episode(), episode);
                                        let count =
                                            arrived[episode as usize].load(Ordering::Acquire);
                                        assert_eq!(
                                            count, TASKS,
                                            "episode {episode} completed early"
                                        );
                                        if result.is_leader() {
                                            leaders[episode as usize]
                                                .fetch_add(1, Ordering::Relaxed);
                                        }
                                        break;
                                    }
                                    Err(err) => {
                                        let (number, missing, resumable) = timeout_fields(err);
                                        assert_eq!(number, episode);
                                        assert!(resumable);
                                        assert!(!missing.contains(&participant.rank()));
                                        assert!(participant.is_pending());
                                        timeouts.fetch_add(1, Ordering::Relaxed);
                                        yield_now().await;
                                    }
                                }
                            }
                        }
                        // Kept until every episode is done: dropping it would break the barrier.
                        drop(participant);
                    }) as Task
                })
                .collect();
            Pool::run(2, tasks);
            for (episode, leaders) in leaders.iter().enumerate() {
                assert_eq!(
                    leaders.load(Ordering::Relaxed),
                    1,
                    "{algorithm}: leaders of {episode}"
                );
            }
            assert!(
                timeouts.load(Ordering::Relaxed) > 0,
                "{algorithm}: no task timed out"
            );
        });
    }
}

// ---------------------------------------------------------------------------------------------
// CollectiveFuture: `Pending::wait_async`

/// Member 0's allreduce times out with member 1 missing; the blocking timeout returns the same
/// error; the call stays pending, and once member 1 comes the next timed wait finishes it.
#[test]
fn collective_timeout_fires_and_the_call_resumes() {
    within(|| {
        let team = Team::new(2).unwrap();
        let (mut first, mut late) = (team.participant(0).unwrap(), team.participant(1).unwrap());
        let (input, mut sums) = ([1u64, 2, 3], [0u64; 3]);
        let mut pending = first.iallreduce(&input, &mut sums, Op::Sum).unwrap();
        let start = Instant::now();
        let err = block_on(pending.wait_async().timeout(SHORT)).unwrap_err();
        waited_since(start);
        assert_eq!(timeout_fields(err.clone()), (0, vec![1], true));
        assert_eq!(
            pending.wait_timeout(Duration::from_millis(1)),
            Err(err.clone())
        );
        // A past deadline times out the same way at once, and the call is still in progress.
        assert_eq!(
            block_on(pending.wait_async().deadline(Instant::now())),
            Err(err)
        );
        assert_eq!(pending.test(), Ok(false));
        let late = std::thread::spawn(move || {
            let mut theirs = [0u64; 3];
            let call = late.iallreduce(&[10, 20, 30], &mut theirs, Op::Sum);
            call.unwrap().wait().unwrap();
            assert_eq!(theirs, [11, 22, 33]);
            // The team goes on: call 1 as usual, with member 0 as a task.
            late.ibarrier().unwrap().wait().unwrap();
            late
        });
        assert_eq!(block_on(pending.wait_async().timeout(HANG)), Ok(()));
        // Over: every later poll or wait returns the outcome again.
        assert_eq!(
            block_on(pending.wait_async().deadline(Instant::now())),
            Ok(())
        );
        assert_eq!(pending.wait(), Ok(())); // consumes it, ending its borrow of `sums`
        assert_eq!(sums, [11, 22, 33]);
        let mut barrier = first.ibarrier().unwrap();
        assert_eq!(block_on(barrier.wait_async().timeout(HANG)), Ok(()));
        drop(barrier);
        drop(late.join().unwrap());
    });
}

#[test]
fn collective_deadline_already_past_still_completes() {
    within(|| {
        let past = Instant::now();
        // The only member: the call completes in the first poll.
        let mut only = Team::new(1).unwrap().participant(0).unwrap();
        let (input, mut max) = ([3i32, 9], [0i32; 2]);
        let mut pending = only.iallreduce(&input, &mut max, Op::Max).unwrap();
        assert_eq!(block_on(pending.wait_async().deadline(past)), Ok(()));
        drop(pending);
        assert_eq!(max, [3, 9]);
        // Not over in the first poll: a timeout at once, the call left pending; the blocking
        // wait finishes it once member 1 comes.
        let team = Team::new(2).unwrap();
        let (mut first, mut second) = (team.participant(0).unwrap(), team.participant(1).unwrap());
        let mut pending = first.ibarrier().unwrap();
        let err = block_on(pending.wait_async().deadline(past)).unwrap_err();
        assert_eq!(timeout_fields(err), (0, vec![1], true));
        std::thread::scope(|s| {
            s.spawn(move || {
                second.ibarrier().unwrap().wait().unwrap();
                second
            });
            assert_eq!(pending.wait(), Ok(()));
        });
    });
}

#[test]
fn collective_timeout_that_does_not_fire() {
    within(|| {
        let team = Team::new(2).unwrap();
        let (mut first, mut late) = (team.participant(0).unwrap(), team.participant(1).unwrap());
        std::thread::scope(|s| {
            s.spawn(move || {
                for round in 0..2u64 {
                    std::thread::sleep(SETTLE);
                    let (mine, mut sum) = ([round], [0u64]);
                    let call = late.iallreduce(&mine, &mut sum, Op::Sum);
                    call.unwrap().wait().unwrap();
                    assert_eq!(sum, [2 * round]);
                }
                late
            });
            for round in 0..2u64 {
                let (mine, mut sum) = ([round], [0u64]);
                let mut call = first.iallreduce(&mine, &mut sum, Op::Sum).unwrap();
                let wait = call.wait_async();
                // A timeout too long for the clock never expires.
                let wait = if round == 0 {
                    wait.timeout(HANG)
                } else {
                    wait.timeout(Duration::MAX)
                };
                assert_eq!(block_on(wait), Ok(()));
                drop(call);
                assert_eq!(sum, [2 * round]);
            }
        });
    });
}

/// A timed future polled once (timer armed) and dropped: the timer goes with it, and the call
/// stays pending for a later wait to finish.
#[test]
fn collective_dropped_timed_future_leaves_the_call_pending() {
    within(|| {
        let team = Team::new(2).unwrap();
        let (mut first, mut second) = (team.participant(0).unwrap(), team.participant(1).unwrap());
        let mut pending = first.ibarrier().unwrap();
        let count = Count::new();
        let waker = Waker::from(count.clone());
        {
            let mut wait = pending.wait_async().timeout(SHORT);
            assert!(poll_with(&mut wait, &waker).is_pending());
        }
        std::thread::sleep(3 * SHORT);
        assert_eq!(count.wakes(), 0, "a dropped future's timer fired");
        assert_released(&count, "a dropped future");
        assert_eq!(pending.test(), Ok(false));
        std::thread::scope(|s| {
            s.spawn(move || {
                second.ibarrier().unwrap().wait().unwrap();
                second
            });
            assert_eq!(pending.wait(), Ok(()));
        });
        assert_eq!(count.wakes(), 0);
    });
}

/// 32 members as tasks on 2 threads through 10 allreduces; a quarter time out whenever their
/// poll finds the call unfinished, others some times, and each retries the same pending call
/// until it is over. Every sum is right, and each timeout names the call and not its member.
#[test]
fn collective_thirty_two_tasks_time_out_and_retry() {
    const TASKS: usize = 32;
    const ROUNDS: u64 = 10;
    within(|| {
        let team = Team::new(TASKS).unwrap();
        let timeouts = Arc::new(AtomicUsize::new(0));
        let tasks: Vec<Task> = team
            .participants()
            .into_iter()
            .map(|member: Member| {
                let timeouts = timeouts.clone();
                let timeout = pool_timeout(member.rank());
                Box::pin(async move {
                    let mut member = member;
                    let rank = member.rank();
                    for round in 0..ROUNDS {
                        let (mine, mut sum) = ([round + rank as u64], [0u64]);
                        let mut call = member.iallreduce(&mine, &mut sum, Op::Sum).unwrap();
                        loop {
                            let wait = call.wait_async();
                            let wait = match timeout {
                                Some(timeout) => wait.timeout(timeout),
                                None => wait,
                            };
                            match wait.await {
                                Ok(()) => break,
                                Err(err) => {
                                    let (episode, missing, resumable) = timeout_fields(err);
                                    assert_eq!(episode, round);
                                    assert!(resumable);
                                    assert!(!missing.contains(&rank), "{missing:?}");
                                    timeouts.fetch_add(1, Ordering::Relaxed);
                                    yield_now().await;
                                }
                            }
                        }
                        drop(call);
                        let n = TASKS as u64;
                        assert_eq!(sum, [n * round + n * (n - 1) / 2]);
                    }
                    // Kept until every round is done: dropping it would break the team.
                    drop(member);
                }) as Task
            })
            .collect();
        Pool::run(2, tasks);
        assert!(timeouts.load(Ordering::Relaxed) > 0, "no task timed out");
    });
}

// ---------------------------------------------------------------------------------------------
// AnyThreadFuture: `AnyThreadBarrier::wait_async`

/// Runs `wait` as the second call of three at episode 0, after a blocking thread's call (so the
/// calls take ranks 0 and 1, the same for either form): returns the wait's error and the
/// thread's.
fn any_thread_timeout_beside_a_thread(
    wait: impl FnOnce(&AnyThreadBarrier) -> phasers::Result<WaitResult>,
) -> (Error, Error) {
    let barrier = AnyThreadBarrier::new(3);
    let (mine, theirs) = std::thread::scope(|s| {
        let thread = s.spawn(|| barrier.wait());
        // The thread's call has taken its place (rank 0) before this one takes rank 1.
        while !format!("{barrier:?}").contains("calls_started: 1") {
            std::thread::sleep(Duration::from_millis(1));
        }
        std::thread::sleep(SETTLE);
        let mine = wait(&barrier).unwrap_err();
        (mine, thread.join().unwrap().unwrap_err())
    });
    assert!(barrier.is_broken());
    // Every later call, blocking or async, reports the break at once.
    assert!(matches!(
        barrier.wait(),
        Err(Error::Broken { episode: 0, .. })
    ));
    assert!(matches!(
        block_on(barrier.wait_async().timeout(HANG)),
        Err(Error::Broken { episode: 0, .. })
    ));
    barrier.settle().unwrap();
    (mine, theirs)
}

/// The async timeout returns the blocking one's error (episode, missing, not resumable) and
/// breaks the barrier the same way: the waiting thread gets the same `Error::Broken`.
#[test]
fn any_thread_timeout_fires_and_breaks_the_barrier_as_the_blocking_one() {
    within(|| {
        let start = Instant::now();
        let (err, thread_err) =
            any_thread_timeout_beside_a_thread(|b| block_on(b.wait_async().timeout(SHORT)));
        waited_since(start);
        assert_eq!(timeout_fields(err.clone()), (0, vec![2], false));
        assert_eq!(thread_err, Error::Broken { by: 1, episode: 0 });
        let (blocking, blocking_thread) =
            any_thread_timeout_beside_a_thread(|b| b.wait_timeout(SHORT));
        assert_eq!(err, blocking);
        assert_eq!(thread_err, blocking_thread);
        let (deadline, _) = any_thread_timeout_beside_a_thread(|b| {
            block_on(b.wait_async().deadline(Instant::now() + SHORT))
        });
        assert_eq!(deadline, blocking);
    });
}

#[test]
fn any_thread_deadline_already_past_still_completes() {
    within(|| {
        let past = Instant::now();
        // A barrier of one: every call completes its episode.
        let one = AnyThreadBarrier::new(1);
        for episode in 0..3 {
            let result = block_on(one.wait_async().deadline(past)).unwrap();
            assert_eq!((result.episode(), result.is_leader()), (episode, true));
        }
        one.settle().unwrap();
        // The last call of two: completes the episode the thread waits at.
        let pair = AnyThreadBarrier::new(2);
        std::thread::scope(|s| {
            let thread = s.spawn(|| pair.wait());
            std::thread::sleep(SETTLE);
            let result = block_on(pair.wait_async().deadline(past)).unwrap();
            assert_eq!(result.episode(), 0);
            assert_eq!(thread.join().unwrap().unwrap().episode(), 0);
        });
        assert!(!pair.is_broken());
        // Alone: gives up at once, and breaks the barrier.
        let err = block_on(pair.wait_async().deadline(past)).unwrap_err();
        assert_eq!(timeout_fields(err.clone()), (1, vec![1], false));
        assert!(pair.is_broken());
        pair.settle().unwrap();
    });
}

#[test]
fn any_thread_timeout_that_does_not_fire() {
    within(|| {
        let barrier = AnyThreadBarrier::new(2);
        std::thread::scope(|s| {
            s.spawn(|| {
                for episode in 0..3 {
                    std::thread::sleep(SETTLE);
                    assert_eq!(barrier.wait().unwrap().episode(), episode);
                }
            });
            for episode in 0..3 {
                let wait = barrier.wait_async();
                // A timeout too long for the clock never expires.
                let wait = match episode {
                    0 => wait.timeout(HANG),
                    1 => wait.timeout(Duration::MAX),
                    _ => wait.deadline(Instant::now() + HANG),
                };
                assert_eq!(block_on(wait).unwrap().episode(), episode);
            }
        });
        assert!(!barrier.is_broken());
        barrier.settle().unwrap();
    });
}

/// 32 tasks on 2 threads: 10 episodes with deadlines that do not fire (or none), then one that
/// only half the tasks reach, with short timeouts: the first to give up breaks the barrier, so
/// every one of them returns its own timeout (not resumable) or the break, at that episode.
#[test]
fn any_thread_thirty_two_tasks_time_out_and_break() {
    const TASKS: usize = 32;
    const EPISODES: u64 = 10;
    within(|| {
        let barrier = Arc::new(AnyThreadBarrier::new(TASKS));
        let (timeouts, broken) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let tasks: Vec<Task> = (0..TASKS)
            .map(|number| {
                let barrier = barrier.clone();
                let (timeouts, broken) = (timeouts.clone(), broken.clone());
                Box::pin(async move {
                    for episode in 0..EPISODES {
                        let wait = barrier.wait_async();
                        let wait = match number % 3 {
                            0 => wait.timeout(HANG),
                            1 => wait.timeout(Duration::MAX),
                            _ => wait,
                        };
                        assert_eq!(wait.await.unwrap().episode(), episode);
                    }
                    if number % 2 == 1 {
                        return; // never reaches the last episode
                    }
                    let timeout = SHORT + Duration::from_millis(number as u64);
                    match barrier.wait_async().timeout(timeout).await {
                        Err(Error::Timeout {
                            episode,
                            missing,
                            resumable,
                        }) => {
                            assert_eq!((episode, resumable), (EPISODES, false));
                            assert!(missing.len() >= TASKS / 2, "{missing:?}");
                            timeouts.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(Error::Broken { episode, .. }) => {
                            assert_eq!(episode, EPISODES);
                            broken.fetch_add(1, Ordering::Relaxed);
                        }
                        other => panic!("the last episode completed: {other:?}"),
                    }
                }) as Task
            })
            .collect();
        Pool::run(2, tasks);
        let (timeouts, broken) = (
            timeouts.load(Ordering::Relaxed),
            broken.load(Ordering::Relaxed),
        );
        assert!(timeouts >= 1, "no task timed out");
        assert_eq!(timeouts + broken, TASKS / 2);
        assert!(barrier.is_broken());
        barrier.settle().unwrap();
    });
}
