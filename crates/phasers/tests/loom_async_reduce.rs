//! Loom models of the async reductions (`Reducer::reduce_async`, `Reducer::allreduce_async`): a
//! participant that calls as an async task beside participants that block, a task's call
//! cancelled (its future dropped) after its first poll, and a task waiting while the group breaks
//! (see `src/reduce/reduce_future.rs`, `staging.rs`, `task_wait.rs` and each algorithm's
//! `run_in_task`).
//!
//! There is no executor under loom: a task runs on a loom thread that polls its future by hand
//! and, on `Pending`, parks until its waker unparks it (`loom_support::poller`); a wake the library
//! fails to make leaves it parked for ever, which loom reports as a deadlock. As in
//! `loom_reduce.rs`, every participant overwrites its input with garbage the moment its call
//! returns (a cancelled task: the moment its future is dropped), keeping it allocated: a read of
//! it after that puts garbage into a result.
//!
//! - `task_and_thread::*`: two participants, one a task (through a `Poller`) and one a thread,
//!   an `allreduce` of two elements then a `reduce` of one, every result exact. Linear at two
//!   preemptions; the dynamic pairs (the task the root of the reduce, and the thread) and the
//!   dynamic group at one (two take over a minute); the static tree with the task the root: both
//!   calls at zero (one did not finish in 150 s) and each call alone at one; with the task the
//!   slave: each call alone at one (both calls take 475,000 executions and 44 s even at zero).
//!   Linear 55,000 executions, 5 s; dynamic pairs 17,000 and 58,000, 2 and 6 s; dynamic group
//!   208,000, 23 s; the static tree's 8,200 + 11,000 + 2,900 and 31,000 + 8,600, 5 s in all.
//! - `cancelled::*`: a task's call polled once by hand (its waker counts wakes) and then dropped,
//!   while the others make the same call blocking, on threads. If that poll completed the call,
//!   everyone gets the exact result. Otherwise the task's own output is never written, its
//!   handle's next call returns `Error::Broken { by: task, episode: 0 }` at once, and every other
//!   participant returns that error or, where its call could complete before the drop, `Ok` with
//!   the exact result; nobody waits for ever, nobody's output changes after its call returned, and
//!   the group no longer holds the task's waker once everyone is done. Each model runs with the
//!   task polling first on the model's main thread and, for the two-party ones and the
//!   three-party ones at a lower bound, again with the task on a thread of its own and a blocking
//!   participant calling first on the main thread: at low bounds which thread starts first
//!   decides which orders of arrival are explored at all.
//!   - `linear_three_parties`: the task (rank 1) and two threads, an `allreduce` of three
//!     elements: the task's withdrawal from the first meeting (`leave_first`) races the late
//!     thread's arrival that completes it, and a task that was too late arrives at the second
//!     meeting on its way out. A thread's call completes at the second meeting, which a task
//!     cancelled in the first one reaches only after breaking the group, so a thread returns `Ok`
//!     only if both threads had started their calls before the task's poll returned. Two
//!     preemptions with the task first, one the other way (two did not finish in 120 s).
//!   - `linear_two_parties`: the same with one thread, two preemptions.
//!   - `dynamic_pairs_task_root`: the task is the root of a `reduce`, its (staged) output offered
//!     to the last pair, which the thread masters when the task arrived first; two preemptions.
//!   - `dynamic_pairs_thread_root`: the reverse: the task masters the last pair when it arrives
//!     second, writing the blocking root's own output, and a task cancelled then completes the
//!     call once the pair's job is done (`Shared::complete_when_done`), the root waiting for that
//!     without giving up; two preemptions.
//!   - `dynamic_pairs_three_parties_task_root`: the task is the root of a `reduce` among three;
//!     one preemption, the task on a thread of its own (first on the main thread it polls before
//!     anyone else calls at one preemption, and two did not finish in 150 s).
//!   - `static_tree_task_root`: the task is the root of a `reduce` of two; two preemptions.
//!
//!   Executions (task first, then the other way): `linear_three_parties` 321,000 (36 s) and
//!   3,800; `linear_two_parties` 2,200 and 3,900; `dynamic_pairs_task_root` 21,000 and 1,200;
//!   `dynamic_pairs_thread_root` 7,500 and 3,300; `dynamic_pairs_three_parties_task_root` 52,000
//!   (6 s); `static_tree_task_root` 20,000 and 17,000; each two-party model 3 s or less.
//! - `waiting_when_dropped::*`: two participants; the thread's handle is dropped without calling
//!   while the task waits in an `allreduce`, and the task gets `Error::Broken { by: 1, .. }` and
//!   an untouched output; each algorithm at two preemptions (39 executions each).
//!
//! About 120 s of models in all on a 2-core VM (60 s with the two test threads of a plain
//! `cargo test`), `linear_three_parties` the longest (36 s alone, 48 s beside another model).
//!
//! Run with `scripts/loom.sh loom_async_reduce`.
#![cfg(phasers_loom)]

mod loom_support;

use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::task::{Context, Poll, Wake, Waker};

use loom::thread;
use loom_support::model_bounded;
use loom_support::poller::Poller;
use phasers::{Error, Op, ReduceAlgorithm, ReduceOutcome, Reducer, Reduction};

/// What a spent input holds: far from any sum of real inputs, so a result that read it shows.
const GARBAGE: u64 = 0xDEAD_0000_0000;
/// What an output holds before its call: no sum of inputs either.
const UNTOUCHED: u64 = 0xBEEF_0000_0000;

/// Rank `rank`'s input element `i` in call `call`.
fn input(call: usize, rank: usize, i: usize) -> u64 {
    (1 + rank as u64) + 10 * (1 + i as u64) + 100 * (1 + call as u64)
}

fn inputs(call: usize, rank: usize, len: usize) -> Vec<u64> {
    (0..len).map(|i| input(call, rank, i)).collect()
}

fn expected(parties: usize, call: usize, len: usize) -> Vec<u64> {
    (0..len)
        .map(|i| (0..parties).map(|rank| input(call, rank, i)).sum())
        .collect()
}

/// Whether the call is a `reduce` (result at the root only) or an `allreduce` (everywhere).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Reduce,
    Allreduce,
}

impl Mode {
    fn has_result(self, rank: usize, root: usize) -> bool {
        self == Mode::Allreduce || rank == root
    }

    /// The blocking call.
    fn call(
        self,
        participant: &mut Reducer<u64>,
        input: &[u64],
        output: &mut [u64],
    ) -> phasers::Result<ReduceOutcome> {
        match self {
            Mode::Reduce => participant.reduce(input, output),
            Mode::Allreduce => participant.allreduce(input, output),
        }
    }

    /// The call as a task, or as a thread without a poller.
    fn call_as(
        self,
        participant: &mut Reducer<u64>,
        poller: Option<&mut Poller>,
        input: &[u64],
        output: &mut [u64],
    ) -> phasers::Result<ReduceOutcome> {
        let Some(poller) = poller else {
            return self.call(participant, input, output);
        };
        match self {
            Mode::Reduce => poller.block_on(Box::pin(participant.reduce_async(input, output))),
            Mode::Allreduce => {
                poller.block_on(Box::pin(participant.allreduce_async(input, output)))
            }
        }
    }
}

/// The handles of a fresh group, in rank order; the `Reduction` itself is dropped: the handles
/// keep the group.
fn handles(algorithm: ReduceAlgorithm, parties: usize, root: usize) -> Vec<Reducer<u64>> {
    let group = Reduction::<u64>::builder(parties)
        .op(Op::Sum)
        .algorithm(algorithm)
        .root(root)
        .build()
        .expect("a valid group");
    group.participants()
}

// --- Model 1: a task beside a thread -------------------------------------------------------------

/// Each participant's calls: an allreduce of two elements, then a reduce of one.
const PLAN: &[(Mode, usize)] = &[(Mode::Allreduce, 2), (Mode::Reduce, 1)];

/// One participant's calls, as a task with a poller, else as a thread; every input spent (overwritten)
/// the moment its call returns, every result exact.
fn participate(
    mut participant: Reducer<u64>,
    mut poller: Option<Poller>,
    root: usize,
    plan: &[(Mode, usize)],
) {
    let parties = participant.parties();
    let rank = participant.rank();
    let mut spent = Vec::new();
    for (call, &(mode, len)) in plan.iter().enumerate() {
        let mut data = inputs(call, rank, len);
        let receives = mode.has_result(rank, root);
        let mut output = vec![UNTOUCHED; if receives { len } else { 0 }];
        let outcome = mode
            .call_as(&mut participant, poller.as_mut(), &data, &mut output)
            .unwrap_or_else(|error| panic!("rank {rank}, call {call}: {error}"));
        // The input is the caller's again: scribble over it before anything else.
        data.fill(GARBAGE);
        spent.push(data);
        assert_eq!(outcome.episode(), call as u64, "rank {rank}");
        assert_eq!(outcome.has_result(), receives, "rank {rank}, call {call}");
        if receives {
            assert_eq!(
                output,
                expected(parties, call, len),
                "rank {rank}, call {call} ({mode:?})"
            );
        }
    }
}

/// Two participants: `task` calls as a task on the model's main thread, the other as a thread.
fn task_and_thread(
    algorithm: ReduceAlgorithm,
    root: usize,
    task: usize,
    plan: &'static [(Mode, usize)],
    max_preemptions: usize,
) {
    model_bounded(max_preemptions, move || {
        let mut all = handles(algorithm, 2, root);
        let other = all.remove(1 - task);
        let mine = all.pop().expect("the task's handle");
        let thread = thread::spawn(move || participate(other, None, root, plan));
        participate(mine, Some(Poller::new()), root, plan);
        thread.join().expect("the thread's participant panicked");
    });
}

mod task_and_thread {
    use super::*;

    /// 2 preemptions.
    #[test]
    fn linear() {
        task_and_thread(ReduceAlgorithm::Linear, 0, 0, PLAN, 2);
    }

    /// The task is the root: it masters the pair. Both calls at 0 preemptions (1 did not finish
    /// in 150 s).
    #[test]
    fn static_tree_task_root() {
        task_and_thread(ReduceAlgorithm::StaticTree, 0, 0, PLAN, 0);
    }

    /// Each call alone at 1 preemption.
    #[test]
    fn static_tree_task_root_allreduce() {
        task_and_thread(ReduceAlgorithm::StaticTree, 0, 0, &PLAN[..1], 1);
    }

    #[test]
    fn static_tree_task_root_reduce() {
        task_and_thread(ReduceAlgorithm::StaticTree, 0, 0, &PLAN[1..], 1);
    }

    /// The task is the slave, offering its staged input, and quick-returns from the reduce: each
    /// call alone at 1 preemption (both calls take 475,000 executions and 44 s even at 0).
    #[test]
    fn static_tree_thread_root_allreduce() {
        task_and_thread(ReduceAlgorithm::StaticTree, 0, 1, &PLAN[..1], 1);
    }

    #[test]
    fn static_tree_thread_root_reduce() {
        task_and_thread(ReduceAlgorithm::StaticTree, 0, 1, &PLAN[1..], 1);
    }

    /// The task is the root of the reduce. 1 preemption.
    #[test]
    fn dynamic_pairs_task_root() {
        task_and_thread(ReduceAlgorithm::DynamicPairs, 1, 1, PLAN, 1);
    }

    /// The thread is the root of the reduce. 1 preemption.
    #[test]
    fn dynamic_pairs_thread_root() {
        task_and_thread(ReduceAlgorithm::DynamicPairs, 1, 0, PLAN, 1);
    }

    /// The task, consumed in the reduce, works until the call completes. 1 preemption.
    #[test]
    fn dynamic_group() {
        task_and_thread(ReduceAlgorithm::DynamicGroup, 0, 1, PLAN, 1);
    }
}

// --- Model 2: a task's call cancelled after its first poll ---------------------------------------

/// A waker that only counts its wakes.
struct CountWakes(AtomicUsize);

impl Wake for CountWakes {
    fn wake(self: std::sync::Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &std::sync::Arc<Self>) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

/// What a thread reports: its outcome, its output right after the call returned, and the output
/// itself, which the model's main thread compares with that copy once every thread is done and
/// the task's future dropped: they differ if anyone wrote it after the call returned.
struct Report {
    rank: usize,
    outcome: phasers::Result<ReduceOutcome>,
    at_return: Vec<u64>,
    output: Vec<u64>,
    /// The thread's spent input, kept allocated until the model ends.
    _spent: Vec<u64>,
}

/// Which threads had started their calls: `started[rank]` is set just before `rank` calls (plain
/// atomics: not scheduling points, and the loom threads run one at a time).
type Started = std::sync::Arc<Vec<AtomicBool>>;

/// A blocking participant's one call, spent at once.
fn blocking_call(
    mut participant: Reducer<u64>,
    started: &Started,
    root: usize,
    mode: Mode,
    len: usize,
) -> Report {
    let rank = participant.rank();
    let mut data = inputs(0, rank, len);
    let receives = mode.has_result(rank, root);
    let mut output = vec![UNTOUCHED; if receives { len } else { 0 }];
    started[rank].store(true, Ordering::SeqCst);
    let outcome = mode.call(&mut participant, &data, &mut output);
    data.fill(GARBAGE);
    Report {
        rank,
        outcome,
        at_return: output.clone(),
        output,
        _spent: data,
    }
}

/// What the cancelled task reports.
struct TaskReport {
    /// Whether its first poll left the call pending (so that the drop cancelled it).
    cancelled: bool,
    /// Whether every other participant had started its call when that poll returned.
    all_started_at_poll: bool,
    wakes: std::sync::Arc<CountWakes>,
    /// The task's handle, its spent input and its output, kept until the model ends.
    _handle: Reducer<u64>,
    _spent: Vec<u64>,
    _output: Vec<u64>,
}

/// The task's call, polled once by hand with a waker that counts its wakes, then dropped.
fn poll_once_and_drop(
    mut mine: Reducer<u64>,
    started: &Started,
    root: usize,
    mode: Mode,
    len: usize,
) -> TaskReport {
    let task = mine.rank();
    let parties = mine.parties();
    let wakes = std::sync::Arc::new(CountWakes(AtomicUsize::new(0)));
    let waker = Waker::from(std::sync::Arc::clone(&wakes));
    let mut data = inputs(0, task, len);
    let receives = mode.has_result(task, root);
    let mut output = vec![UNTOUCHED; if receives { len } else { 0 }];
    let (polled, all_started_at_poll) = {
        let mut context = Context::from_waker(&waker);
        let mut future: std::pin::Pin<Box<dyn Future<Output = _> + Send + '_>> = match mode {
            Mode::Reduce => Box::pin(mine.reduce_async(&data, &mut output)),
            Mode::Allreduce => Box::pin(mine.allreduce_async(&data, &mut output)),
        };
        let polled = future.as_mut().poll(&mut context);
        let all_started = (0..parties)
            .filter(|&rank| rank != task)
            .all(|rank| started[rank].load(Ordering::SeqCst));
        // A cancellation, unless the poll completed the call.
        drop(future);
        (polled, all_started)
    };
    data.fill(GARBAGE);
    drop(waker);
    let cancelled = match polled {
        Poll::Ready(outcome) => {
            let outcome = outcome.unwrap_or_else(|error| {
                panic!("the task's call completed in its first poll with {error}")
            });
            assert_eq!(outcome.episode(), 0);
            assert_eq!(outcome.has_result(), receives);
            if receives {
                assert_eq!(output, expected(parties, 0, len), "the task");
            }
            false
        }
        Poll::Pending => {
            // Nobody writes a cancelled task's own output: its call worked on copies.
            assert!(
                output.iter().all(|&value| value == UNTOUCHED),
                "the cancelled task's output was written: {output:?}"
            );
            // Its handle stays at the broken call: the next call fails at once.
            let mut again = vec![UNTOUCHED; output.len()];
            let next = mode.call(&mut mine, &inputs(1, task, len), &mut again);
            assert_eq!(
                next,
                Err(Error::Broken {
                    by: task,
                    episode: 0
                }),
                "the cancelled task's next call"
            );
            true
        }
    };
    TaskReport {
        cancelled,
        all_started_at_poll,
        wakes,
        _handle: mine,
        _spent: data,
        _output: output,
    }
}

/// A cancellation model's group and call.
#[derive(Clone, Copy)]
struct Cancel {
    algorithm: ReduceAlgorithm,
    parties: usize,
    root: usize,
    /// The rank whose call is a task's, cancelled after its first poll.
    task: usize,
    mode: Mode,
    len: usize,
}

/// `parties` participants, one `mode` call of `len` elements: `task` polls its call once by hand
/// on a thread of its own and drops it; the others make the same call blocking, the first of them
/// on the model's main thread (which calls at once, so that even at a low preemption bound the
/// others have arrived in some executions when the task polls).
fn cancel_model(case: Cancel, task_on_main: bool, max_preemptions: usize) {
    let Cancel {
        algorithm,
        parties,
        root,
        task,
        mode,
        len,
    } = case;
    model_bounded(max_preemptions, move || {
        let started: Started =
            std::sync::Arc::new((0..parties).map(|_| AtomicBool::new(false)).collect());
        let mut all: Vec<Option<Reducer<u64>>> = handles(algorithm, parties, root)
            .into_iter()
            .map(Some)
            .collect();
        let mine = all[task].take().expect("the task's handle");
        let mut others = all.into_iter().flatten();
        // On the main thread: the task, or else the first of the others.
        let first = (!task_on_main).then(|| others.next().expect("a participant beside the task"));
        let threads: Vec<_> = others
            .map(|participant| {
                let started = std::sync::Arc::clone(&started);
                thread::spawn(move || blocking_call(participant, &started, root, mode, len))
            })
            .collect();
        let (task_report, mut reports) = match first {
            None => (
                poll_once_and_drop(mine, &started, root, mode, len),
                Vec::new(),
            ),
            Some(first) => {
                let started_for_task = std::sync::Arc::clone(&started);
                let task_thread = thread::spawn(move || {
                    poll_once_and_drop(mine, &started_for_task, root, mode, len)
                });
                let report = blocking_call(first, &started, root, mode, len);
                (
                    task_thread.join().expect("the task's thread panicked"),
                    vec![report],
                )
            }
        };
        reports.extend(
            threads
                .into_iter()
                .map(|thread| thread.join().expect("a thread's participant panicked")),
        );
        let cancelled = task_report.cancelled;
        let lost = Error::Broken {
            by: task,
            episode: 0,
        };
        for report in &reports {
            let rank = report.rank;
            assert_eq!(
                report.at_return, report.output,
                "rank {rank}'s output was written after its call returned {:?}",
                report.outcome
            );
            match &report.outcome {
                Ok(outcome) => {
                    assert_eq!(outcome.episode(), 0, "rank {rank}");
                    let receives = mode.has_result(rank, root);
                    assert_eq!(outcome.has_result(), receives, "rank {rank}");
                    if receives {
                        assert_eq!(report.output, expected(parties, 0, len), "rank {rank}");
                    }
                    if cancelled && algorithm == ReduceAlgorithm::Linear {
                        // The call completes at the second meeting, which a task cancelled in
                        // the first one reaches only after breaking the group.
                        assert!(
                            task_report.all_started_at_poll,
                            "rank {rank} completed a call whose task was cancelled in the first \
                             meeting"
                        );
                    }
                }
                Err(error) => {
                    assert!(
                        cancelled,
                        "rank {rank} got {error} though the task's call completed"
                    );
                    assert_eq!(error, &lost, "rank {rank}");
                }
            }
        }
        // The waker the task stored is released: by the wait's drop, or by the wake that took it.
        assert_eq!(
            std::sync::Arc::strong_count(&task_report.wakes),
            1,
            "the group still holds the cancelled task's waker ({} wakes)",
            task_report.wakes.0.load(Ordering::Relaxed)
        );
    });
}

mod cancelled {
    use super::*;

    /// The task polling first on the main thread at 2 preemptions, then on a thread of its own
    /// beside a blocking participant calling first on the main thread at 1 (2 did not finish in
    /// 120 s).
    #[test]
    fn linear_three_parties() {
        cancel_model(
            Cancel {
                algorithm: ReduceAlgorithm::Linear,
                parties: 3,
                root: 0,
                task: 1,
                mode: Mode::Allreduce,
                len: 3,
            },
            true,
            2,
        );
        cancel_model(
            Cancel {
                algorithm: ReduceAlgorithm::Linear,
                parties: 3,
                root: 0,
                task: 1,
                mode: Mode::Allreduce,
                len: 3,
            },
            false,
            1,
        );
    }

    /// Each of the two-party models twice: the task polling first on the main thread, then the
    /// blocking participant calling first there.
    #[test]
    fn linear_two_parties() {
        for task_on_main in [true, false] {
            cancel_model(
                Cancel {
                    algorithm: ReduceAlgorithm::Linear,
                    parties: 2,
                    root: 0,
                    task: 0,
                    mode: Mode::Allreduce,
                    len: 2,
                },
                task_on_main,
                2,
            );
        }
    }

    #[test]
    fn dynamic_pairs_task_root() {
        for task_on_main in [true, false] {
            cancel_model(
                Cancel {
                    algorithm: ReduceAlgorithm::DynamicPairs,
                    parties: 2,
                    root: 0,
                    task: 0,
                    mode: Mode::Reduce,
                    len: 1,
                },
                task_on_main,
                2,
            );
        }
    }

    #[test]
    fn dynamic_pairs_thread_root() {
        for task_on_main in [true, false] {
            cancel_model(
                Cancel {
                    algorithm: ReduceAlgorithm::DynamicPairs,
                    parties: 2,
                    root: 0,
                    task: 1,
                    mode: Mode::Reduce,
                    len: 1,
                },
                task_on_main,
                2,
            );
        }
    }

    /// The task on a thread of its own, at 1 preemption (with the task polling first on the main
    /// thread, 2 did not finish in 150 s, and 1 has the task poll before anyone else calls).
    #[test]
    fn dynamic_pairs_three_parties_task_root() {
        cancel_model(
            Cancel {
                algorithm: ReduceAlgorithm::DynamicPairs,
                parties: 3,
                root: 2,
                task: 2,
                mode: Mode::Reduce,
                len: 1,
            },
            false,
            1,
        );
    }

    #[test]
    fn static_tree_task_root() {
        for task_on_main in [true, false] {
            cancel_model(
                Cancel {
                    algorithm: ReduceAlgorithm::StaticTree,
                    parties: 2,
                    root: 0,
                    task: 0,
                    mode: Mode::Reduce,
                    len: 1,
                },
                task_on_main,
                2,
            );
        }
    }
}

// --- Model 3: a task waiting while a handle is dropped -------------------------------------------

fn waiting_when_dropped(algorithm: ReduceAlgorithm, max_preemptions: usize) {
    model_bounded(max_preemptions, move || {
        let mut all = handles(algorithm, 2, 0);
        let other = all.pop().expect("rank 1");
        let mut mine = all.pop().expect("rank 0");
        let dropper = thread::spawn(move || drop(other));
        let mut poller = Poller::new();
        let data = [1u64];
        let mut output = [UNTOUCHED];
        let outcome = poller.block_on(Box::pin(mine.allreduce_async(&data, &mut output)));
        assert_eq!(outcome, Err(Error::Broken { by: 1, episode: 0 }));
        assert_eq!(output, [UNTOUCHED], "a broken call's output was written");
        dropper.join().expect("dropping does not panic");
    });
}

mod waiting_when_dropped {
    use super::*;

    #[test]
    fn linear() {
        waiting_when_dropped(ReduceAlgorithm::Linear, 2);
    }

    #[test]
    fn static_tree() {
        waiting_when_dropped(ReduceAlgorithm::StaticTree, 2);
    }

    #[test]
    fn dynamic_pairs() {
        waiting_when_dropped(ReduceAlgorithm::DynamicPairs, 2);
    }

    #[test]
    fn dynamic_group() {
        waiting_when_dropped(ReduceAlgorithm::DynamicGroup, 2);
    }
}
