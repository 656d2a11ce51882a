//! `Pending::wait_async`: every non-blocking collective with tasks alone (on two threads and on
//! one), with blocking threads, 64 tasks on 2 threads, a future dropped mid-wait and the call
//! finished later, no waker left behind, a team broken while tasks wait (a member dropped, an
//! operator that panics), and checked-mode mismatches.
//!
//! No runtime: the tasks run on `executor_support`'s `block_on` and `Pool`, and every wait that
//! could hang is bounded by its `within`.

use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

mod executor_support;
use executor_support::{block_on, poll_once, within, Count, Pool, Task};

use phasers::team::CollectiveFuture;
use phasers::{Error, Member, Op, Team};

/// Finishes a pending call: by `wait_async().await` in a task, by `wait()` on a blocking thread
/// (whose future never returns `Pending`, so `block_on` runs it straight through).
macro_rules! finish {
    ($blocking:expr, $pending:expr) => {{
        let mut pending = $pending?;
        if $blocking {
            pending.wait()?;
        } else {
            pending.wait_async().await?;
        }
    }};
}

/// One round of every non-blocking collective, with inline (small) and staged (large) payloads,
/// checking every result. `blocking`: finished with `wait` instead of `wait_async`.
async fn every_collective(m: &mut Member, round: u64, blocking: bool) -> phasers::Result<()> {
    let (rank, size) = (m.rank(), m.parties());
    let (r, n) = (rank as u64, size as u64);
    let root = (round as usize) % size;

    finish!(blocking, m.ibarrier());
    finish!(blocking, m.ibarrier_checked(round));

    for len in [4usize, 100] {
        let mut buffer = vec![if rank == root { round + 7 } else { 0 }; len];
        finish!(blocking, m.ibroadcast(root, &mut buffer));
        assert!(buffer.iter().all(|&x| x == round + 7), "broadcast {len}");

        let input: Vec<u64> = (0..len as u64).map(|i| i + r + round).collect();
        let mut sums = vec![0u64; len];
        finish!(blocking, m.iallreduce(&input, &mut sums, Op::Sum));
        let mut maxes = vec![0u64; len];
        finish!(
            blocking,
            m.iallreduce_with(&input, &mut maxes, |a: u64, b: u64| a.max(b))
        );
        let mut reduced = vec![0u64; len];
        finish!(blocking, m.ireduce(root, &input, &mut reduced, Op::Sum));
        let mut mins = vec![u64::MAX; len];
        finish!(
            blocking,
            m.ireduce_with(root, &input, &mut mins, |a: u64, b: u64| a.min(b))
        );
        for i in 0..len {
            let base = i as u64 + round;
            assert_eq!(sums[i], n * base + n * (n - 1) / 2, "allreduce {len}");
            assert_eq!(maxes[i], base + n - 1, "allreduce_with {len}");
            if rank == root {
                assert_eq!(reduced[i], sums[i], "reduce {len}");
                assert_eq!(mins[i], base, "reduce_with {len}");
            }
        }
    }

    for len in [2usize, 40] {
        let mine: Vec<u64> = (0..len as u64).map(|i| r * 1000 + i + round).collect();
        let expected: Vec<u64> = (0..n)
            .flat_map(|s| (0..len as u64).map(move |i| s * 1000 + i + round))
            .collect();
        let mut gathered = vec![0u64; if rank == root { len * size } else { 0 }];
        finish!(blocking, m.igather(root, &mine, &mut gathered));
        if rank == root {
            assert_eq!(gathered, expected, "gather {len}");
        }
        let mut everyone = vec![0u64; len * size];
        finish!(blocking, m.iallgather(&mine, &mut everyone));
        assert_eq!(everyone, expected, "allgather {len}");

        let source = if rank == root {
            expected.clone()
        } else {
            vec![]
        };
        let mut part = vec![0u64; len];
        finish!(blocking, m.iscatter(root, &source, &mut part));
        assert_eq!(part, mine, "scatter {len}");

        // Block `j` of each input goes to member `j`.
        let input: Vec<u64> = (0..(len * size) as u64)
            .map(|i| r * 100_000 + i + round)
            .collect();
        let mut output = vec![0u64; len * size];
        finish!(blocking, m.ialltoall(&input, &mut output));
        for s in 0..n {
            for i in 0..len as u64 {
                let at = (s as usize) * len + i as usize;
                assert_eq!(
                    output[at],
                    s * 100_000 + r * len as u64 + i + round,
                    "alltoall"
                );
            }
        }
    }

    for len in [2usize, 30] {
        let input = vec![r + 1; len];
        let mut inclusive = vec![0u64; len];
        finish!(blocking, m.iscan_inclusive(&input, &mut inclusive, Op::Sum));
        let mut exclusive = vec![u64::MAX; len];
        finish!(blocking, m.iscan_exclusive(&input, &mut exclusive, Op::Sum));
        let mut inclusive_max = vec![0u64; len];
        finish!(
            blocking,
            m.iscan_inclusive_with(&input, &mut inclusive_max, |a: u64, b: u64| a.max(b))
        );
        let mut exclusive_sum = vec![u64::MAX; len];
        finish!(
            blocking,
            m.iscan_exclusive_with(&input, &mut exclusive_sum, |a: u64, b: u64| a + b)
        );
        for i in 0..len {
            assert_eq!(inclusive[i], (r + 1) * (r + 2) / 2, "scan_inclusive");
            assert_eq!(inclusive_max[i], r + 1, "scan_inclusive_with");
            // Member 0's exclusive output is left as it was.
            let before = if rank == 0 { u64::MAX } else { r * (r + 1) / 2 };
            assert_eq!(exclusive[i], before, "scan_exclusive");
            assert_eq!(exclusive_sum[i], before, "scan_exclusive_with");
        }
    }
    Ok(())
}

/// A task that runs `rounds` rounds of every collective as `member`, then drops it.
fn task(mut member: Member, rounds: u64) -> Task {
    Box::pin(async move {
        for round in 0..rounds {
            every_collective(&mut member, round, false).await.unwrap();
        }
        // Kept until every round is done: dropping it would break the team.
        drop(member);
    })
}

/// A team of `tasks + threads`: `tasks` members as tasks on `pool_threads` threads, `threads`
/// as blocking threads, each through `rounds` rounds of every collective.
fn run_mixed(tasks: usize, pool_threads: usize, threads: usize, rounds: u64) {
    within(move || {
        let team = Team::new(tasks + threads).unwrap();
        let mut members = team.participants();
        let blocking: Vec<Member> = members.drain(tasks..).collect();
        let futures: Vec<Task> = members.into_iter().map(|m| task(m, rounds)).collect();
        std::thread::scope(|s| {
            for mut member in blocking {
                s.spawn(move || {
                    for round in 0..rounds {
                        block_on(every_collective(&mut member, round, true)).unwrap();
                    }
                });
            }
            Pool::run(pool_threads, futures);
        });
    });
}

#[test]
fn every_collective_with_tasks_alone() {
    run_mixed(4, 2, 0, 4);
}

/// One thread for every task: any wait that blocked the thread (a call's start waiting for
/// readers that are tasks queued behind it) would hang here.
#[test]
fn every_collective_with_tasks_on_one_thread() {
    run_mixed(3, 1, 0, 4);
}

#[test]
fn every_collective_with_tasks_and_threads() {
    run_mixed(2, 2, 2, 4);
    run_mixed(1, 1, 2, 3);
}

#[test]
fn sixty_four_tasks_on_two_threads() {
    run_mixed(64, 2, 0, 2);
}

#[test]
fn sixty_four_tasks_and_a_thread() {
    run_mixed(64, 2, 1, 1);
}

/// Many small calls by many tasks: the meeting's release wakes them all each time.
#[test]
fn many_barriers_and_allreduces_on_two_threads() {
    within(|| {
        let team = Team::new(16).unwrap();
        let futures: Vec<Task> = team
            .participants()
            .into_iter()
            .map(|mut m| -> Task {
                Box::pin(async move {
                    for round in 0..200u64 {
                        m.ibarrier().unwrap().wait_async().await.unwrap();
                        let (mine, mut sum) = ([round + m.rank() as u64], [0u64]);
                        m.iallreduce(&mine, &mut sum, Op::Sum)
                            .unwrap()
                            .wait_async()
                            .await
                            .unwrap();
                        assert_eq!(sum[0], 16 * round + 120);
                    }
                })
            })
            .collect();
        Pool::run(2, futures);
    });
}

/// Dropping the future cancels the wait only: the call stays pending, where `wait`, `test` or a
/// new `wait_async` finishes it, and the waker is taken off the team.
#[test]
fn a_dropped_future_leaves_the_call_pending_and_no_waker() {
    for resume in 0..3 {
        within(move || {
            let team = Team::new(2).unwrap();
            let (mut first, mut second) =
                (team.participant(0).unwrap(), team.participant(1).unwrap());
            let count = Count::new();
            let waker = Waker::from(count.clone());
            let mine = [1u64; 20]; // staged: member 1 reads member 0's copy
            let mut all = [0u64; 40];
            let mut pending = first.iallgather(&mine, &mut all).unwrap();
            {
                let mut wait = pending.wait_async();
                let polled = Pin::new(&mut wait).poll(&mut Context::from_waker(&waker));
                assert!(polled.is_pending());
            }
            // Still stored, it would hold the count's `Arc`: only `count` and `waker` do.
            assert_eq!(Arc::strong_count(&count), 2);
            assert!(!pending.test().unwrap());
            std::thread::scope(|s| {
                s.spawn(|| {
                    let mut theirs = [0u64; 40];
                    second
                        .iallgather(&[2u64; 20], &mut theirs)
                        .unwrap()
                        .wait()
                        .unwrap();
                    assert_eq!(theirs[..20], [1; 20]);
                    assert_eq!(theirs[20..], [2; 20]);
                });
                match resume {
                    0 => wait_async_ok(&mut pending),
                    1 => pending.wait_timeout(executor_support::HANG).unwrap(),
                    _ => while !pending.test().unwrap() {},
                }
            });
            drop(pending);
            assert_eq!(count.wakes(), 0, "a dropped future was woken");
            assert_eq!(all[..20], [1; 20]);
            assert_eq!(all[20..], [2; 20]);
            // The team goes on.
            block_on(barrier_of_two(&mut first, &mut second)).unwrap();
        });
    }
}

/// Finishes `pending` with `wait_async`, then checks that a completed call returns its outcome
/// again, to every form of wait.
fn wait_async_ok<T: Copy + Send + 'static>(pending: &mut phasers::team::Pending<'_, T>) {
    block_on(pending.wait_async()).unwrap();
    assert!(matches!(
        poll_once(&mut pending.wait_async()),
        Poll::Ready(Ok(()))
    ));
    assert!(pending.test().unwrap());
    pending.wait_timeout(std::time::Duration::ZERO).unwrap();
}

/// A barrier of the two members of a team: `first`'s as a task polled once before `second`
/// arrives, then awaited.
async fn barrier_of_two(first: &mut Member, second: &mut Member) -> phasers::Result<()> {
    let mut mine = first.ibarrier()?;
    let mut wait = mine.wait_async();
    assert!(poll_once(&mut wait).is_pending());
    second.ibarrier()?.wait()?;
    wait.await
}

/// A future that completed took its waker with it, also where it waited on two signals (the
/// meeting's release, then its readers' count).
#[test]
fn a_completed_future_leaves_no_waker() {
    within(|| {
        let team = Team::new(3).unwrap();
        let mut members = team.participants();
        let mut first = members.remove(0);
        let count = Count::new();
        let waker = Waker::from(count.clone());
        let mine = [7u32; 30];
        let mut all = [0u32; 90];
        let mut pending = first.iallgather(&mine, &mut all).unwrap();
        let mut wait = pending.wait_async();
        assert!(Pin::new(&mut wait)
            .poll(&mut Context::from_waker(&waker))
            .is_pending());
        let members = std::thread::scope(|s| {
            let others: Vec<_> = members
                .into_iter()
                .map(|mut m| {
                    s.spawn(move || {
                        let mut theirs = [0u32; 90];
                        m.iallgather(&[7u32; 30], &mut theirs)
                            .unwrap()
                            .wait()
                            .unwrap();
                        m
                    })
                })
                .collect();
            loop {
                match Pin::new(&mut wait).poll(&mut Context::from_waker(&waker)) {
                    Poll::Ready(outcome) => break outcome.unwrap(),
                    Poll::Pending => std::thread::yield_now(),
                }
            }
            others
                .into_iter()
                .map(|t| t.join().unwrap())
                .collect::<Vec<_>>()
        });
        drop(wait);
        assert_eq!(Arc::strong_count(&count), 2, "a waker stayed stored");
        drop(pending);
        assert_eq!(all, [7; 90]);
        drop(members);
    });
}

/// A member dropped (its thread panicked) while tasks wait in a call: they get the error the
/// blocking waiters get, for every kind of call.
#[test]
fn a_dropped_member_breaks_the_team_for_waiting_tasks() {
    within(|| {
        let team = Team::new(4).unwrap();
        let mut members = team.participants();
        let lost = members.pop().unwrap();
        let results = Arc::new(std::sync::Mutex::new(Vec::new()));
        let futures: Vec<Task> = members
            .into_iter()
            .map(|mut m| -> Task {
                let results = results.clone();
                Box::pin(async move {
                    let mine = [m.rank() as u64; 50];
                    let mut all = [0u64; 200];
                    let rank = m.rank();
                    // The drop may also come before the call starts: its `i`-method then
                    // returns the error.
                    let outcome: phasers::Result<()> = async {
                        match rank {
                            0 => m.ibarrier()?.wait_async().await,
                            1 => m.iallgather(&mine, &mut all)?.wait_async().await,
                            _ => {
                                let mut sum = [0u64; 50];
                                let mut pending = m.iallreduce(&mine, &mut sum, Op::Sum)?;
                                let outcome = pending.wait_async().await;
                                outcome
                            }
                        }
                    }
                    .await;
                    results.lock().unwrap().push(outcome);
                })
            })
            .collect();
        std::thread::scope(|s| {
            s.spawn(move || {
                // Panics before its call, after the tasks are (likely) waiting.
                std::thread::sleep(std::time::Duration::from_millis(50));
                let outcome = catch_unwind(AssertUnwindSafe(move || {
                    let _lost = lost;
                    panic!("member 3 fails");
                }));
                assert!(outcome.is_err());
            });
            Pool::run(2, futures);
        });
        let results = results.lock().unwrap();
        assert_eq!(results.len(), 3);
        for outcome in results.iter() {
            assert!(
                matches!(outcome, Err(Error::Broken { by: 3, .. })),
                "{outcome:?}"
            );
        }
    });
}

/// An operator that panics in a task's poll: the panic comes out of that poll (as out of a
/// thread's `wait`), the call fails for the others with `Error::Broken` naming that member, and
/// no waker stays behind.
#[test]
fn an_operator_that_panics_in_a_task() {
    within(|| {
        let team = Team::new(3).unwrap();
        let outcomes: Vec<_> = std::thread::scope(|s| {
            let handles: Vec<_> = team
                .participants()
                .into_iter()
                .map(|mut m| {
                    s.spawn(move || {
                        let rank = m.rank();
                        let mine = [rank as u64; 40]; // staged: each member combines itself
                        let mut sum = [0u64; 40];
                        let outcome = catch_unwind(AssertUnwindSafe(|| {
                            let op = move |a: u64, b: u64| {
                                assert!(rank != 1, "the operator fails on member 1");
                                a + b
                            };
                            let mut pending = m.iallreduce_with(&mine, &mut sum, op).unwrap();
                            block_on(pending.wait_async())
                        }));
                        (rank, outcome.map_err(|_| ()))
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for (rank, outcome) in outcomes {
            match rank {
                1 => assert!(outcome.is_err(), "member 1's poll did not panic"),
                _ => assert!(
                    matches!(outcome, Ok(Err(Error::Broken { by: 1, .. }))),
                    "member {rank}: {outcome:?}"
                ),
            }
        }
    });
}

/// In a checked team, members whose calls differ all get `Error::Mismatch`, tasks and threads
/// alike, and the team goes on.
#[test]
fn a_checked_mismatch_in_tasks_and_threads() {
    within(|| {
        let team = Team::builder(3).checked(true).build().unwrap();
        let outcomes: Vec<_> = std::thread::scope(|s| {
            let handles: Vec<_> = team
                .participants()
                .into_iter()
                .map(|mut m| {
                    s.spawn(move || {
                        let rank = m.rank();
                        // Member 2 passes one element more.
                        let mine = vec![1u64; if rank == 2 { 11 } else { 10 }];
                        let mut sum = vec![0u64; mine.len()];
                        let mut pending = m.iallreduce(&mine, &mut sum, Op::Sum).unwrap();
                        let outcome = if rank == 1 {
                            // A blocking thread among the tasks.
                            pending.wait_timeout(executor_support::HANG)
                        } else {
                            block_on(pending.wait_async())
                        };
                        drop(pending);
                        // The team is not broken: the next call works.
                        let (mine, mut sum) = ([1u64], [0u64]);
                        let mut next = m.iallreduce(&mine, &mut sum, Op::Sum).unwrap();
                        block_on(next.wait_async()).unwrap();
                        drop(next);
                        assert_eq!(sum, [3]);
                        outcome
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for outcome in outcomes {
            assert!(
                matches!(outcome, Err(Error::Mismatch { .. })),
                "{outcome:?}"
            );
        }
    });
}

/// A blocking member's bounded wait times out while the others are tasks that wait, and the
/// call then completes for all.
#[test]
fn a_blocking_timeout_among_tasks() {
    within(|| {
        let team = Team::new(3).unwrap();
        let mut members = team.participants();
        let mut late = members.pop().unwrap();
        let mut timed = members.pop().unwrap();
        let mut task_member = members.pop().unwrap();
        let count = Count::new();
        let waker = Waker::from(count.clone());
        let mut task_pending = task_member.ibarrier().unwrap();
        let mut wait = task_pending.wait_async();
        assert!(Pin::new(&mut wait)
            .poll(&mut Context::from_waker(&waker))
            .is_pending());
        let mut pending = timed.ibarrier().unwrap();
        let waited = pending.wait_timeout(std::time::Duration::from_millis(10));
        assert!(
            matches!(&waited, Err(Error::Timeout { missing, .. }) if *missing == [2]),
            "{waited:?}"
        );
        assert_eq!(count.wakes(), 0);
        late.ibarrier().unwrap().wait().unwrap(); // the last arrival releases everyone
        assert!(count.wakes() >= 1, "the release did not wake the task");
        assert!(matches!(
            Pin::new(&mut wait).poll(&mut Context::from_waker(&waker)),
            Poll::Ready(Ok(()))
        ));
        pending.wait().unwrap();
    });
}

/// A task can hold the call across an `.await` on a multi-threaded executor.
#[test]
fn the_future_and_the_pending_call_are_send() {
    fn send<T: Send>(_: &T) {}
    let team = Team::new(1).unwrap();
    let mut only = team.participant(0).unwrap();
    let (mine, mut out) = ([1u8], [0u8]);
    let mut pending = only
        .iallreduce_with(&mine, &mut out, |a: u8, b: u8| a | b)
        .unwrap();
    send(&pending);
    let wait: CollectiveFuture<'_, '_, u8> = pending.wait_async();
    send(&wait);
    drop(wait);
    drop(pending);
}
