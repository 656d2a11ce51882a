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
//!   preemptions (about 38,000 executions, 4 s), the static tree at zero (two did not finish in 150 s)
//!   twice, the task as the root and as the other; the dynamic pairs at one (about 11,000, 1 s;
//!   at two about 720,000 and 80 s) twice too, and the dynamic group at one (about 23,000, 3 s).
//! - `cancelled::*`: a task's call polled once by hand (its waker counts wakes) and then dropped,
//!   while the others call the same reduction on threads. If that poll completed the call,
//!   everyone gets the exact result. Otherwise the task's output is never written, its handle's
//!   next call returns `Error::Broken { by: task, episode: 0 }` at once, and every thread returns
//!   that error or, where its call could complete before the drop, `Ok` with the exact result;
//!   nobody waits for ever, no thread's output changes after its call returned, and the waker
//!   stored in the group is released by the time everyone is done.
//!   - `linear_three_parties`: the task (rank 1) and two threads, an `allreduce` of three
//!     elements: the task's withdrawal from the first meeting (`leave_first`) races the late
//!     thread's arrival that completes it, and a task that was too late arrives at the second
//!     meeting on its way out. A thread's call can only complete if the task's first poll went
//!     through the first meeting, so a thread returns `Ok` only if both threads had started their
//!     calls before that poll returned. One preemption: about 150,000 executions, 35 s (two did
//!     not finish in 4 minutes).
//!   - `dynamic_pairs_task_root`: the task is the root of a `reduce`, its (staged) output offered
//!     to the last pair, which the thread masters when the task arrived first; two participants,
//!     two preemptions (about 6,500 executions, 1 s).
//!   - `dynamic_pairs_thread_root`: the reverse: the task masters the last pair when it arrived
//!     second, writing the blocking root's own output, and a task cancelled then completes the
//!     call once the pair's job is done (`Shared::complete_when_done`), the root waiting for that
//!     without giving up; two preemptions (about 6,000 executions, 1 s).
//!   - `dynamic_pairs_three_parties_task_root`: the task is the root of a `reduce` among three,
//!     at one preemption (about 45,000 executions, 8 s).
//!   - `static_tree_task_root`, `linear_two_parties`: the same check, two preemptions (a few
//!     thousand executions each).
//! - `waiting_when_dropped::*`: two participants; the thread's handle is dropped without calling
//!   while the task waits in an `allreduce`, and the task gets `Error::Broken { by: 1, .. }`;
//!   each algorithm at two preemptions (under 200 executions each).
//!
//! About 70 s in all on a 2-core VM (each model's figure is above; the executions as printed with
//! `--nocapture`).
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
const PLAN: [(Mode, usize); 2] = [(Mode::Allreduce, 2), (Mode::Reduce, 1)];

/// One participant's calls, as a task with a poller, else as a thread; every input spent (overwritten)
/// the moment its call returns, every result exact.
fn participate(mut participant: Reducer<u64>, mut poller: Option<Poller>, root: usize) {
    let parties = participant.parties();
    let rank = participant.rank();
    let mut spent = Vec::new();
    let n: usize = std::env::var("PLAN_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2);
    let skip: usize = std::env::var("PLAN_SKIP")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    for (call, &(mode, len)) in PLAN.iter().enumerate().skip(skip).take(n) {
        let call = call - skip;
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
fn task_and_thread(algorithm: ReduceAlgorithm, root: usize, task: usize, max_preemptions: usize) {
    model_bounded(max_preemptions, move || {
        let mut all = handles(algorithm, 2, root);
        let other = all.remove(1 - task);
        let mine = all.pop().expect("the task's handle");
        let thread = thread::spawn(move || participate(other, None, root));
        participate(mine, Some(Poller::new()), root);
        thread.join().expect("the thread's participant panicked");
    });
}

mod task_and_thread {
    use super::*;

    /// 2 preemptions: about 38,000 executions, 4 s.
    #[test]
    fn linear() {
        task_and_thread(ReduceAlgorithm::Linear, 0, 0, 2);
    }

    /// The task is the root: it masters the pair. 0 preemptions (loom still switches at every
    /// blocking point): at 2, the two calls did not finish in 150 s.
    #[test]
    fn static_tree_task_root() {
        task_and_thread(ReduceAlgorithm::StaticTree, 0, 0, 0);
    }

    /// The task is the slave, offering its staged input; quick return from the reduce. 0
    /// preemptions, as above.
    #[test]
    fn static_tree_thread_root() {
        task_and_thread(ReduceAlgorithm::StaticTree, 0, 1, 0);
    }

    /// 1 preemption (2 take over a minute).
    #[test]
    fn dynamic_pairs_task_root() {
        task_and_thread(ReduceAlgorithm::DynamicPairs, 1, 1, 1);
    }

    /// 1 preemption.
    #[test]
    fn dynamic_pairs_thread_root() {
        task_and_thread(ReduceAlgorithm::DynamicPairs, 1, 0, 1);
    }

    /// The task consumed in the reduce works until the call completes. 1 preemption.
    #[test]
    fn dynamic_group() {
        task_and_thread(ReduceAlgorithm::DynamicGroup, 0, 1, 1);
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

/// `parties` participants, one `mode` call of `len` elements; `task` polls its call once by hand
/// on the model's main thread and drops it, the others call on threads.
fn cancel_model(
    algorithm: ReduceAlgorithm,
    parties: usize,
    root: usize,
    task: usize,
    mode: Mode,
    len: usize,
    max_preemptions: usize,
) {
    model_bounded(max_preemptions, move || {
        // `started[rank]`: that thread is about to make its call (a plain atomic: not a
        // scheduling point, and the loom threads run one at a time).
        let started: std::sync::Arc<Vec<AtomicBool>> =
            std::sync::Arc::new((0..parties).map(|_| AtomicBool::new(false)).collect());
        let mut all: Vec<Option<Reducer<u64>>> = handles(algorithm, parties, root)
            .into_iter()
            .map(Some)
            .collect();
        let mut mine = all[task].take().expect("the task's handle");
        let threads: Vec<_> = all
            .into_iter()
            .flatten()
            .map(|mut participant| {
                let started = std::sync::Arc::clone(&started);
                thread::spawn(move || {
                    let rank = participant.rank();
                    let mut data = inputs(0, rank, len);
                    let receives = mode.has_result(rank, root);
                    let mut output = vec![UNTOUCHED; if receives { len } else { 0 }];
                    started[rank].store(true, Ordering::SeqCst);
                    let outcome = mode.call(&mut participant, &data, &mut output);
                    data.fill(GARBAGE);
                    let at_return = output.clone();
                    Report {
                        rank,
                        outcome,
                        at_return,
                        output,
                        _spent: data,
                    }
                })
            })
            .collect();

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
            // The future is dropped here: a cancellation unless it completed.
            drop(future);
            (polled, all_started)
        };
        data.fill(GARBAGE);
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
        let lost = Error::Broken {
            by: task,
            episode: 0,
        };
        let reports: Vec<Report> = threads
            .into_iter()
            .map(|thread| thread.join().expect("a thread's participant panicked"))
            .collect();
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
                            all_started_at_poll,
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
        drop(waker);
        assert_eq!(
            std::sync::Arc::strong_count(&wakes),
            1,
            "the group still holds the cancelled task's waker ({} wakes)",
            wakes.0.load(Ordering::Relaxed)
        );
        drop(mine);
        let key = format!(
            "cancelled={cancelled} all_started={all_started_at_poll} {:?}",
            reports
                .iter()
                .map(|r| r.outcome.is_ok())
                .collect::<Vec<_>>()
        );
        *STATS.lock().unwrap().entry(key).or_insert(0) += 1;
    });
    eprintln!("{:#?}", STATS.lock().unwrap());
}
static STATS: std::sync::Mutex<std::collections::BTreeMap<String, usize>> =
    std::sync::Mutex::new(std::collections::BTreeMap::new());

mod cancelled {
    use super::*;

    /// 1 preemption.
    #[test]
    fn linear_three_parties() {
        cancel_model(ReduceAlgorithm::Linear, 3, 0, 1, Mode::Allreduce, 3, 2);
    }

    /// 2 preemptions.
    #[test]
    fn linear_two_parties() {
        cancel_model(ReduceAlgorithm::Linear, 2, 0, 0, Mode::Allreduce, 2, 2);
    }

    /// 2 preemptions.
    #[test]
    fn dynamic_pairs_task_root() {
        cancel_model(ReduceAlgorithm::DynamicPairs, 2, 0, 0, Mode::Reduce, 1, 2);
    }

    /// 2 preemptions.
    #[test]
    fn dynamic_pairs_thread_root() {
        cancel_model(ReduceAlgorithm::DynamicPairs, 2, 0, 1, Mode::Reduce, 1, 2);
    }

    /// 1 preemption.
    #[test]
    fn dynamic_pairs_three_parties_task_root() {
        cancel_model(ReduceAlgorithm::DynamicPairs, 3, 2, 2, Mode::Reduce, 1, 2);
    }

    /// 2 preemptions.
    #[test]
    fn static_tree_task_root() {
        cancel_model(ReduceAlgorithm::StaticTree, 2, 0, 0, Mode::Reduce, 1, 2);
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
