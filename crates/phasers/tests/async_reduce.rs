//! `Reducer::reduce_async` and `Reducer::allreduce_async`: every algorithm with tasks alone (on
//! two pool threads and on one, where a task that blocked its thread would deadlock), 64 tasks on
//! 2 threads with chunked lengths, tasks and blocking threads in one group and one handle
//! alternating the two forms, cancellation (a future dropped before its first poll, after a
//! `Pending` poll, and while the others are mid-call, at the root and away from it), the errors
//! of mismatched calls compared with the blocking forms', an operator that panics in a task, the
//! futures being `Send` (moved to another thread mid-call), the outcomes compared with the
//! blocking forms', and a task stalled in a reduction reported by the stall watchdog.
//!
//! Every call's result is checked: participant `r`'s element `i` in call `c` is
//! `(r + 1) * 1000 + 7c + i % 97`, so the sum of every element is known in closed form.
//!
//! No runtime: the tasks run on `executor_support`'s `block_on` and `Pool`, and every wait that
//! could hang is bounded by its `within`.

mod executor_support;
mod stall_support;

use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::Poll;
use std::time::{Duration, Instant};

use executor_support::{block_on, poll_once, within, Pool, Task};
use phasers::{Error, Op, ReduceAlgorithm, ReduceOutcome, Reducer, Reduction};

const ALGORITHMS: [ReduceAlgorithm; 5] = [
    ReduceAlgorithm::Linear,
    ReduceAlgorithm::StaticTree,
    ReduceAlgorithm::DynamicPairs,
    ReduceAlgorithm::DynamicGroup,
    ReduceAlgorithm::Auto,
];

/// The lengths the calls cycle through: single elements, odd sizes, and lengths above 1024 so
/// that the job is chunked.
const LENS: [usize; 7] = [1, 3, 1024, 1025, 17, 3000, 4100];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Reduce,
    Allreduce,
}

const MODES: [Mode; 2] = [Mode::Reduce, Mode::Allreduce];

/// Call `c`'s mode in the multi-call tests: allreduce and reduce in turn.
fn mode_of(call: u64) -> Mode {
    if call % 2 == 0 {
        Mode::Allreduce
    } else {
        Mode::Reduce
    }
}

fn len_of(call: u64) -> usize {
    LENS[call as usize % LENS.len()]
}

fn group(parties: usize, algorithm: ReduceAlgorithm, root: usize) -> Reduction<u64> {
    Reduction::<u64>::builder(parties)
        .op(Op::Sum)
        .algorithm(algorithm)
        .root(root)
        .build()
        .expect("a valid group")
}

fn input(rank: usize, call: u64, len: usize) -> Vec<u64> {
    (0..len)
        .map(|i| (rank as u64 + 1) * 1000 + 7 * call + (i % 97) as u64)
        .collect()
}

/// The sum over `parties` participants of element `i` of call `call`.
fn expected(parties: usize, call: u64, i: usize) -> u64 {
    let n = parties as u64;
    1000 * n * (n + 1) / 2 + n * (7 * call + (i % 97) as u64)
}

/// The output a participant passes: the input's length where it receives the result, else none.
fn output_for(p: &Reducer<u64>, mode: Mode, len: usize) -> Vec<u64> {
    if mode == Mode::Allreduce || p.is_root() {
        vec![0; len]
    } else {
        Vec::new()
    }
}

/// Checks a successful call's outcome and output.
fn check(p: &Reducer<u64>, call: u64, mode: Mode, out: &[u64], outcome: &ReduceOutcome) {
    let what = format!(
        "rank {} of {}, call {call}, {mode:?}",
        p.rank(),
        p.parties()
    );
    let receives = mode == Mode::Allreduce || p.is_root();
    assert_eq!(outcome.has_result(), receives, "{what}");
    assert_ne!(outcome.algorithm(), ReduceAlgorithm::Auto, "{what}");
    if receives {
        for (i, &x) in out.iter().enumerate() {
            assert_eq!(x, expected(p.parties(), call, i), "{what}, element {i}");
        }
    }
}

/// Starts `p`'s call in `mode` (not polled yet).
fn start<'a>(
    p: &'a mut Reducer<u64>,
    mode: Mode,
    input: &'a [u64],
    out: &'a mut [u64],
) -> Pin<Box<dyn Future<Output = phasers::Result<ReduceOutcome>> + Send + 'a>> {
    match mode {
        Mode::Reduce => Box::pin(p.reduce_async(input, out)),
        Mode::Allreduce => Box::pin(p.allreduce_async(input, out)),
    }
}

/// Call `call` of `len` elements in `mode` from a task; checks the result when it is `Ok`.
async fn call_async_len(
    p: &mut Reducer<u64>,
    call: u64,
    mode: Mode,
    len: usize,
) -> phasers::Result<ReduceOutcome> {
    let mine = input(p.rank(), call, len);
    let mut out = output_for(p, mode, len);
    let outcome = match mode {
        Mode::Reduce => p.reduce_async(&mine, &mut out).await,
        Mode::Allreduce => p.allreduce_async(&mine, &mut out).await,
    };
    if let Ok(outcome) = &outcome {
        check(p, call, mode, &out, outcome);
    }
    outcome
}

/// The blocking form of [`call_async_len`].
fn call_blocking_len(
    p: &mut Reducer<u64>,
    call: u64,
    mode: Mode,
    len: usize,
) -> phasers::Result<ReduceOutcome> {
    let mine = input(p.rank(), call, len);
    let mut out = output_for(p, mode, len);
    let outcome = match mode {
        Mode::Reduce => p.reduce(&mine, &mut out),
        Mode::Allreduce => p.allreduce(&mine, &mut out),
    };
    if let Ok(outcome) = &outcome {
        check(p, call, mode, &out, outcome);
    }
    outcome
}

/// Call `call` with its usual mode and length, from a task.
async fn call_async(p: &mut Reducer<u64>, call: u64) -> phasers::Result<ReduceOutcome> {
    call_async_len(p, call, mode_of(call), len_of(call)).await
}

/// Call `call` with its usual mode and length, blocking.
fn call_blocking(p: &mut Reducer<u64>, call: u64) -> phasers::Result<ReduceOutcome> {
    call_blocking_len(p, call, mode_of(call), len_of(call))
}

/// Every participant a task on a `Pool` of `threads`, making `calls` calls, each checked.
fn tasks_alone(
    algorithm: ReduceAlgorithm,
    parties: usize,
    root: usize,
    threads: usize,
    calls: u64,
) {
    within(move || {
        let group = group(parties, algorithm, root);
        let tasks: Vec<Task> = group
            .participants()
            .into_iter()
            .map(|mut p| {
                Box::pin(async move {
                    for call in 0..calls {
                        let outcome = call_async(&mut p, call).await.unwrap_or_else(|e| {
                            panic!("{algorithm:?}, {parties} parties, call {call}: {e}")
                        });
                        assert_eq!(outcome.episode(), call);
                    }
                }) as Task
            })
            .collect();
        Pool::run(threads, tasks);
    });
}

/// The error every participant of a call at or after `episode` gets once `by` left it.
fn broken(by: usize, episode: u64) -> Error {
    Error::Broken { by, episode }
}

#[test]
fn tasks_alone_on_two_threads() {
    for algorithm in ALGORITHMS {
        for (parties, root) in [(2, 1), (3, 1), (3, 2), (5, 3)] {
            tasks_alone(algorithm, parties, root, 2, 21);
        }
    }
}

#[test]
fn tasks_alone_on_one_thread() {
    for algorithm in ALGORITHMS {
        for (parties, root) in [(2, 1), (3, 2), (64, 41)] {
            let calls = if parties == 64 { 14 } else { 21 };
            tasks_alone(algorithm, parties, root, 1, calls);
        }
    }
}

/// The stress test: 64 tasks on 2 threads, many calls of every length, every result checked.
#[test]
fn sixty_four_tasks_on_two_threads() {
    for algorithm in ALGORITHMS {
        tasks_alone(algorithm, 64, 37, 2, 84);
    }
}

#[test]
fn a_group_of_one_task() {
    for algorithm in ALGORITHMS {
        tasks_alone(algorithm, 1, 0, 1, 7);
    }
}

/// Even ranks are tasks (all on one pool thread), odd ranks blocking threads, in one group.
#[test]
fn tasks_and_threads_share_a_group() {
    for algorithm in ALGORITHMS {
        for (parties, root) in [(3, 1), (6, 4)] {
            within(move || {
                let group = group(parties, algorithm, root);
                let mut tasks: Vec<Task> = Vec::new();
                let mut threads = Vec::new();
                for mut p in group.participants() {
                    if p.rank() % 2 == 0 {
                        tasks.push(Box::pin(async move {
                            for call in 0..14 {
                                let outcome = call_async(&mut p, call).await.unwrap();
                                assert_eq!(outcome.episode(), call);
                            }
                        }));
                    } else {
                        threads.push(std::thread::spawn(move || {
                            for call in 0..14 {
                                let outcome = call_blocking(&mut p, call).unwrap();
                                assert_eq!(outcome.episode(), call);
                            }
                        }));
                    }
                }
                Pool::run(1, tasks);
                for thread in threads {
                    thread.join().unwrap();
                }
            });
        }
    }
}

/// Each handle switches between the blocking and the async form from call to call, each
/// participant in its own pattern.
#[test]
fn one_handle_alternates_blocking_and_async_calls() {
    for algorithm in ALGORITHMS {
        within(move || {
            let group = group(3, algorithm, 2);
            let threads: Vec<_> = group
                .participants()
                .into_iter()
                .map(|mut p| {
                    std::thread::spawn(move || {
                        for call in 0..14u64 {
                            let blocking = (call + p.rank() as u64 / 2) % 2 == 0;
                            let outcome = if blocking {
                                call_blocking(&mut p, call)
                            } else {
                                block_on(call_async(&mut p, call))
                            };
                            assert_eq!(outcome.unwrap().episode(), call);
                        }
                    })
                })
                .collect();
            for thread in threads {
                thread.join().unwrap();
            }
        });
    }
}

/// The ranks to drop: the root and one away from it.
fn dropped_ranks(root: usize, parties: usize) -> [usize; 2] {
    [root, (root + 1) % parties]
}

/// (a) A future dropped before its first poll did nothing: the same call is made again, and it
/// and the next call complete with the episodes they would have had.
#[test]
fn a_future_dropped_before_its_first_poll_changes_nothing() {
    for algorithm in ALGORITHMS {
        for mode in MODES {
            for dropped in dropped_ranks(1, 3) {
                within(move || {
                    let group = group(3, algorithm, 1);
                    let mut handles = group.participants();
                    // Drop one at call 0, on a fresh group, and again at call 1.
                    for call in 0..2u64 {
                        let p = &mut handles[dropped];
                        let len = 3000;
                        let mine = input(dropped, call, len);
                        let mut out = output_for(p, mode, len);
                        drop(start(p, mode, &mine, &mut out));
                        assert!(!group.is_broken());
                        std::thread::scope(|s| {
                            for p in handles.iter_mut() {
                                s.spawn(move || {
                                    let outcome = if p.rank() == dropped {
                                        block_on(call_async_len(p, call, mode, len))
                                    } else if p.rank() % 2 == 0 {
                                        call_blocking_len(p, call, mode, len)
                                    } else {
                                        block_on(call_async_len(p, call, mode, len))
                                    };
                                    let outcome = outcome.unwrap_or_else(|e| {
                                        panic!("{algorithm:?} {mode:?}, dropped {dropped}: {e}")
                                    });
                                    assert_eq!(outcome.episode(), call);
                                });
                            }
                        });
                    }
                    assert!(!group.is_broken());
                    drop(handles);
                });
            }
        }
    }
}

/// (b) A future polled once (`Pending`: the others have not come) and dropped breaks the group at
/// its call: every other participant, threads and tasks, gets `Broken` naming it and the call,
/// from that call and the next, and so does the dropped handle's next call, blocking or async.
/// The calls that completed before are unaffected.
#[test]
fn a_future_dropped_after_pending_breaks_the_group() {
    const PARTIES: usize = 4;
    const ROOT: usize = 2;
    for algorithm in ALGORITHMS {
        for mode in MODES {
            for dropped in dropped_ranks(ROOT, PARTIES) {
                within(move || {
                    let name = format!("{algorithm:?} {mode:?}, dropped {dropped}");
                    let group = group(PARTIES, algorithm, ROOT);
                    let mut handles = group.participants();
                    // Two calls complete: the cancelled one is call 2 (one that waits for call 0
                    // to have completed before reusing its state).
                    std::thread::scope(|s| {
                        for p in handles.iter_mut() {
                            s.spawn(move || {
                                for call in 0..2 {
                                    let outcome = block_on(call_async(p, call)).unwrap();
                                    assert_eq!(outcome.episode(), call);
                                }
                            });
                        }
                    });
                    let episode = 2;
                    let mut handles: Vec<Option<Reducer<u64>>> =
                        handles.into_iter().map(Some).collect();
                    let mut gone = handles[dropped].take().unwrap();
                    {
                        let len = len_of(episode);
                        let mine = input(dropped, episode, len);
                        let mut out = output_for(&gone, mode, len);
                        let mut future = start(&mut gone, mode, &mine, &mut out);
                        assert!(poll_once(&mut future).is_pending(), "{name}");
                        assert!(poll_once(&mut future).is_pending(), "{name}");
                        drop(future);
                    }
                    assert!(group.is_broken(), "{name}");
                    let want = broken(dropped, episode);
                    // The others: the first a blocking thread, the rest tasks on one pool thread.
                    let seen = Arc::new(Mutex::new(Vec::new()));
                    let mut others = handles.into_iter().flatten();
                    let mut first = others.next().unwrap();
                    let thread = std::thread::spawn(move || {
                        let a = call_blocking_len(&mut first, episode, mode, len_of(episode));
                        let b = call_blocking(&mut first, episode + 1);
                        (first.rank(), a, b)
                    });
                    let tasks: Vec<Task> = others
                        .map(|mut p| {
                            let seen = seen.clone();
                            Box::pin(async move {
                                let a =
                                    call_async_len(&mut p, episode, mode, len_of(episode)).await;
                                let b = call_async(&mut p, episode + 1).await;
                                seen.lock().unwrap().push((p.rank(), a, b));
                            }) as Task
                        })
                        .collect();
                    Pool::run(1, tasks);
                    let mut seen = std::mem::take(&mut *seen.lock().unwrap());
                    seen.push(thread.join().unwrap());
                    assert_eq!(seen.len(), PARTIES - 1);
                    for (rank, a, b) in seen {
                        assert_eq!(a.unwrap_err(), want, "{name}: rank {rank}, the call");
                        assert_eq!(b.unwrap_err(), want, "{name}: rank {rank}, the next call");
                    }
                    // The dropped handle's next calls, both forms.
                    let next = block_on(call_async_len(&mut gone, episode, mode, len_of(episode)));
                    assert_eq!(next.unwrap_err(), want, "{name}: the dropped handle, async");
                    let next = call_blocking_len(&mut gone, episode, mode, len_of(episode));
                    assert_eq!(
                        next.unwrap_err(),
                        want,
                        "{name}: the dropped handle, blocking"
                    );
                });
            }
        }
    }
}

/// A small xorshift, so that the races vary but a failing round can be replayed by its seed.
fn next_random(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

fn spin(iterations: u64) {
    for _ in 0..iterations {
        std::hint::spin_loop();
    }
}

/// One round of (c): the others arrive concurrently (one blocking thread, one task on its own
/// thread) while the dropped participant polls its future a few times and drops it. Then everyone
/// makes one more call. Returns whether the future had completed before it was dropped.
fn race_round(algorithm: ReduceAlgorithm, mode: Mode, dropped: usize, seed: u64) -> bool {
    const PARTIES: usize = 3;
    const ROOT: usize = 1;
    let name = format!("{algorithm:?} {mode:?}, dropped {dropped}, seed {seed}");
    let mut random = seed;
    let len = [1usize, 5, 3000][(next_random(&mut random) % 3) as usize];
    let group = group(PARTIES, algorithm, ROOT);
    let mut handles: Vec<Option<Reducer<u64>>> =
        group.participants().into_iter().map(Some).collect();
    let mut gone = handles[dropped].take().unwrap();
    let threads: Vec<_> = handles
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(k, mut p)| {
            std::thread::spawn(move || {
                let (a, b) = if k == 0 {
                    let a = call_blocking_len(&mut p, 0, mode, len);
                    (a, block_on(call_async_len(&mut p, 1, Mode::Allreduce, 5)))
                } else {
                    let a = block_on(call_async_len(&mut p, 0, mode, len));
                    (a, call_blocking_len(&mut p, 1, Mode::Allreduce, 5))
                };
                (p.rank(), a, b)
            })
        })
        .collect();
    spin(next_random(&mut random) % 20_000);
    let polls = 1 + next_random(&mut random) % 4;
    let mut completed = None;
    {
        let mine = input(dropped, 0, len);
        let mut out = output_for(&gone, mode, len);
        let mut future = start(&mut gone, mode, &mine, &mut out);
        for _ in 0..polls {
            if let Poll::Ready(outcome) = poll_once(&mut future) {
                completed = Some(outcome);
                break;
            }
            spin(next_random(&mut random) % 5_000);
        }
        drop(future);
        if let Some(outcome) = &completed {
            let outcome = outcome.as_ref().unwrap_or_else(|e| panic!("{name}: {e}"));
            check(&gone, 0, mode, &out, outcome);
        }
    }
    let want = broken(dropped, 0);
    let next = call_blocking_len(&mut gone, 1, Mode::Allreduce, 5);
    match &completed {
        Some(_) => assert_eq!(next.unwrap().episode(), 1, "{name}"),
        None => assert_eq!(next.unwrap_err(), want, "{name}: the dropped handle"),
    }
    for thread in threads {
        let (rank, a, b) = thread.join().unwrap();
        match &completed {
            Some(_) => {
                assert_eq!(a.unwrap().episode(), 0, "{name}: rank {rank}");
                assert_eq!(b.unwrap().episode(), 1, "{name}: rank {rank}");
            }
            None => {
                // Checked already if `Ok`: it finished before the drop.
                if let Err(error) = a {
                    assert_eq!(error, want, "{name}: rank {rank}, the call");
                }
                assert_eq!(b.unwrap_err(), want, "{name}: rank {rank}, the next call");
            }
        }
    }
    // (Every handle is gone now, so the group is broken either way.)
    completed.is_some()
}

/// (c) A future dropped while the others are mid-call: nobody hangs, each of the others gets
/// `Ok` (a correct result: it finished before the drop) or `Broken` naming the dropped rank, the
/// next call `Broken`; or, if the future had completed, everything is `Ok`.
#[test]
fn a_future_dropped_while_others_are_mid_call() {
    const ROUNDS: u64 = 100;
    let mut completed_in_all = 0;
    for algorithm in ALGORITHMS {
        for mode in MODES {
            for dropped in dropped_ranks(1, 3) {
                completed_in_all += within(move || {
                    let mut completed = 0;
                    for round in 0..ROUNDS {
                        let seed = 0x9E37_79B9_7F4A_7C15 ^ ((round + 1) * 0x1000_0001);
                        completed += race_round(algorithm, mode, dropped, seed) as u32;
                    }
                    completed
                });
            }
        }
    }
    eprintln!(
        "{completed_in_all} of {} dropped futures had completed",
        20 * ROUNDS
    );
}

/// A mismatch's `what`, and what the two participants it names passed, in an order that does not
/// depend on who found it; checks that each named participant passed what the error says.
fn normalized(error: &Error, plan: Plan) -> (&'static str, Vec<String>) {
    let Error::Mismatch {
        what,
        rank,
        ours,
        other,
        theirs,
    } = error
    else {
        panic!("expected Mismatch, got {error:?}");
    };
    if *what == "length" {
        // With more than two participants, which pair is named depends on who met whom.
        assert_ne!(rank, other, "{error}");
        for (rank, passed) in [(rank, ours), (other, theirs)] {
            assert_eq!(passed, &format!("{} elements", plan(*rank).1), "{error}");
        }
    }
    let mut sides = vec![ours.clone(), theirs.clone()];
    sides.sort();
    (what, sides)
}

/// Three calls per participant: `first(rank)` gives call 0's mode, input length and output length;
/// calls 1 and 2 are matched allreduces of 4 elements. Returns each rank's three outcomes.
type Plan = fn(usize) -> (Mode, usize, usize);

fn run_plan(
    algorithm: ReduceAlgorithm,
    parties: usize,
    root: usize,
    plan: Plan,
    async_ranks: fn(usize) -> bool,
) -> Vec<Vec<phasers::Result<ReduceOutcome>>> {
    within(move || {
        let group = group(parties, algorithm, root);
        let threads: Vec<_> = group
            .participants()
            .into_iter()
            .map(|mut p| {
                std::thread::spawn(move || {
                    let is_async = async_ranks(p.rank());
                    let (mode, len, out_len) = plan(p.rank());
                    let mine = input(p.rank(), 0, len);
                    let mut out = vec![0u64; out_len];
                    let mut results = Vec::new();
                    results.push(if is_async {
                        block_on(start(&mut p, mode, &mine, &mut out))
                    } else {
                        match mode {
                            Mode::Reduce => p.reduce(&mine, &mut out),
                            Mode::Allreduce => p.allreduce(&mine, &mut out),
                        }
                    });
                    for call in 1..3 {
                        results.push(if is_async {
                            block_on(call_async_len(&mut p, call, Mode::Allreduce, 4))
                        } else {
                            call_blocking_len(&mut p, call, Mode::Allreduce, 4)
                        });
                    }
                    results
                })
            })
            .collect();
        threads.into_iter().map(|t| t.join().unwrap()).collect()
    })
}

/// Checks one run of a mismatched plan: every participant learns of the one mismatch within its
/// three calls (those that returned `Ok` before are non-roots of a `reduce` without a result),
/// and returns it.
fn one_mismatch(name: &str, root: usize, results: &[Vec<phasers::Result<ReduceOutcome>>]) -> Error {
    let mut error: Option<Error> = None;
    for (rank, calls) in results.iter().enumerate() {
        let first = calls
            .iter()
            .position(|c| c.is_err())
            .unwrap_or_else(|| panic!("{name}: rank {rank} never learned: {calls:?}"));
        for (index, outcome) in calls.iter().enumerate() {
            match outcome {
                Ok(done) => assert!(
                    index < first && index == 0 && rank != root && !done.has_result(),
                    "{name}: rank {rank}, call {index}: {done:?}"
                ),
                Err(got) => match &error {
                    None => error = Some(got.clone()),
                    Some(want) => assert_eq!(got, want, "{name}: rank {rank}, call {index}"),
                },
            }
        }
    }
    error.unwrap()
}

/// Mismatched lengths, and an output of the wrong length at the root and away from it: the async
/// forms return the blocking forms' `Mismatch`, from the same calls, to every participant, tasks
/// alone and mixed with threads.
#[test]
fn mismatches_match_the_blocking_forms() {
    let plans: [(&str, usize, usize, Plan); 4] = [
        ("allreduce lengths", 2, 1, |rank| {
            (Mode::Allreduce, [2, 102][rank], [2, 102][rank])
        }),
        ("reduce lengths", 3, 1, |rank| {
            let len = if rank == 2 { 1500 } else { 6 };
            (Mode::Reduce, len, if rank == 1 { len } else { 0 })
        }),
        ("root output length", 3, 1, |rank| {
            (Mode::Reduce, 4, if rank == 1 { 3 } else { 0 })
        }),
        ("allreduce output length", 3, 1, |rank| {
            (Mode::Allreduce, 1100, if rank == 2 { 1099 } else { 1100 })
        }),
    ];
    for algorithm in ALGORITHMS {
        for (what, parties, root, plan) in plans {
            let name = format!("{algorithm:?}, {what}");
            let blocking = run_plan(algorithm, parties, root, plan, |_| false);
            let expected = one_mismatch(&format!("{name}, blocking"), root, &blocking);
            for (form, ranks) in [
                ("tasks", (|_| true) as fn(usize) -> bool),
                ("mixed", |rank| rank % 2 == 1),
            ] {
                let name = format!("{name}, {form}");
                let seen = run_plan(algorithm, parties, root, plan, ranks);
                let error = one_mismatch(&name, root, &seen);
                assert_eq!(
                    normalized(&error, plan),
                    normalized(&expected, plan),
                    "{name}: {error}"
                );
                if what.contains("output") {
                    // Only one participant is odd: the error names it twice, whoever found it.
                    assert_eq!(error, expected, "{name}");
                }
                // Those that receive a result learn from the call itself, as blocking.
                for (rank, calls) in seen.iter().enumerate() {
                    if mode_has_result(plan(rank).0, rank, root) {
                        assert!(calls[0].is_err(), "{name}: rank {rank}: {:?}", calls[0]);
                    }
                }
            }
        }
    }
}

fn mode_has_result(mode: Mode, rank: usize, root: usize) -> bool {
    mode == Mode::Allreduce || rank == root
}

/// An element that makes the operator panic.
const POISON: u64 = u64::MAX;
/// The message of the operator's panic, which the panic hook keeps quiet.
const POISONED: &str = "a poisoned element";

/// Keeps the operator's expected panics off stderr; every other panic is reported as before.
fn quiet_poison_panics() {
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        let report = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let payload = info.payload();
            let message = (payload.downcast_ref::<&str>().copied())
                .or_else(|| payload.downcast_ref::<String>().map(String::as_str));
            if message != Some(POISONED) {
                report(info);
            }
        }));
    });
}

/// An operator that panics in a task: the panic comes out of that task's poll (caught around
/// `block_on`), the others get `Broken` naming one that panicked, and every later call, the
/// panicking handles' included, too.
#[test]
fn a_panicking_operator_in_a_task_breaks_the_group() {
    quiet_poison_panics();
    for algorithm in ALGORITHMS {
        for mode in MODES {
            for len in [1usize, 3000] {
                within(move || {
                    let name = format!("{algorithm:?} {mode:?}, {len} elements");
                    let group = Reduction::<u64>::builder(3)
                        .combine(|a: u64, b: u64| {
                            if a == POISON || b == POISON {
                                panic!("{}", POISONED);
                            }
                            a.wrapping_add(b)
                        })
                        .algorithm(algorithm)
                        .root(1)
                        .build()
                        .unwrap();
                    let threads: Vec<_> = group
                        .participants()
                        .into_iter()
                        .map(|mut p| {
                            std::thread::spawn(move || {
                                let rank = p.rank();
                                let mine = vec![if rank == 2 { POISON } else { 1 }; len];
                                let mut out = output_for(&p, mode, len);
                                let call = catch_unwind(AssertUnwindSafe(|| {
                                    block_on(start(&mut p, mode, &mine, &mut out))
                                }));
                                let next = if rank == 0 {
                                    p.allreduce(&[1], &mut [0])
                                } else {
                                    block_on(p.allreduce_async(&[1], &mut [0]))
                                };
                                (rank, call.map_err(drop), next)
                            })
                        })
                        .collect();
                    let seen: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
                    let panicked: Vec<usize> = seen
                        .iter()
                        .filter(|(_, call, _)| call.is_err())
                        .map(|(rank, _, _)| *rank)
                        .collect();
                    assert!(!panicked.is_empty(), "{name}: nobody panicked: {seen:?}");
                    let Error::Broken { by, episode: 0 } = seen[0].2.clone().unwrap_err() else {
                        panic!("{name}: {seen:?}");
                    };
                    assert!(panicked.contains(&by), "{name}: {seen:?}");
                    let want = broken(by, 0);
                    for (rank, call, next) in &seen {
                        match call {
                            Err(()) => {}
                            Ok(Err(error)) => assert_eq!(error, &want, "{name}: rank {rank}"),
                            Ok(Ok(done)) => assert!(
                                mode == Mode::Reduce && *rank != 1 && !done.has_result(),
                                "{name}: rank {rank}: {done:?}"
                            ),
                        }
                        assert_eq!(next.as_ref().unwrap_err(), &want, "{name}: rank {rank}");
                    }
                    assert!(group.is_broken());
                });
            }
        }
    }
}

fn assert_send<T: Send>(_: &T) {}

/// The futures are `Send`: one is polled on this thread (`Pending`), moved to another thread and
/// finished there.
#[test]
fn the_futures_are_send_and_move_between_threads_mid_call() {
    within(|| {
        let group = group(2, ReduceAlgorithm::DynamicPairs, 1);
        let mut handles = group.participants();
        let mut late = handles.pop().unwrap();
        let mut early = handles.pop().unwrap();
        let mine = input(0, 0, 3000);
        let mut out = vec![0u64; 3000];
        {
            let reduce = early.reduce_async(&mine, &mut []);
            assert_send(&reduce);
        }
        let mut future = Box::pin(early.allreduce_async(&mine, &mut out));
        assert_send(&future);
        assert!(poll_once(&mut future).is_pending());
        let outcome = std::thread::scope(|s| {
            let finished = s.spawn(move || block_on(future));
            let outcome = call_blocking_len(&mut late, 0, Mode::Allreduce, 3000).unwrap();
            assert_eq!(outcome.episode(), 0);
            finished.join().unwrap().unwrap()
        });
        assert_eq!(outcome.episode(), 0);
        // The result was copied out when the moved future completed.
        check(&early, 0, Mode::Allreduce, &out, &outcome);
    });
}

/// The outcomes of the async forms (episode, algorithm, has_result) are the blocking forms',
/// call by call, for every algorithm; under `Auto`, whose choice depends on timing, the episode
/// and has_result, and one algorithm per call.
#[test]
fn outcomes_match_the_blocking_forms() {
    for algorithm in ALGORITHMS {
        let run = move |is_async: bool| {
            within(move || {
                let group = group(3, algorithm, 2);
                let threads: Vec<_> = group
                    .participants()
                    .into_iter()
                    .map(|mut p| {
                        std::thread::spawn(move || {
                            (0..10u64)
                                .map(|call| {
                                    if is_async {
                                        block_on(call_async(&mut p, call)).unwrap()
                                    } else {
                                        call_blocking(&mut p, call).unwrap()
                                    }
                                })
                                .collect::<Vec<_>>()
                        })
                    })
                    .collect();
                threads
                    .into_iter()
                    .map(|t| t.join().unwrap())
                    .collect::<Vec<_>>()
            })
        };
        let blocking = run(false);
        let tasks = run(true);
        for rank in 0..3 {
            for call in 0..10 {
                let (b, t) = (blocking[rank][call], tasks[rank][call]);
                let name = format!("{algorithm:?}, rank {rank}, call {call}");
                assert_eq!(t.episode(), call as u64, "{name}");
                assert_eq!(t.episode(), b.episode(), "{name}");
                assert_eq!(t.has_result(), b.has_result(), "{name}");
                assert_eq!(t.algorithm(), tasks[0][call].algorithm(), "{name}");
                if algorithm != ReduceAlgorithm::Auto {
                    assert_eq!(t, b, "{name}");
                }
            }
        }
    }
}

/// A task left `Pending` in a reduction with a short stall time is reported once, naming the
/// ranks that have not come; when they come, the call completes and nothing more is reported.
#[test]
fn a_task_stalled_in_a_reduction_is_reported() {
    use stall_support::{one_report, serial, take_reports};
    const STALL: Duration = Duration::from_millis(200);
    const LATE: Duration = Duration::from_secs(3);
    let _serial = serial();
    within(|| {
        let group = Reduction::<u64>::builder(3)
            .op(Op::Sum)
            .algorithm(ReduceAlgorithm::StaticTree)
            .root(1)
            .stall_after(STALL)
            .build()
            .unwrap();
        let mut handles = group.participants();
        // One call completes with all three, so the stalled one is call 1.
        std::thread::scope(|s| {
            for p in handles.iter_mut() {
                s.spawn(move || call_blocking(p, 0).unwrap());
            }
        });
        let mut late: Vec<_> = handles.drain(1..).collect();
        let mut early = handles.pop().unwrap();
        let start_at = Instant::now();
        let mine = input(0, 1, len_of(1));
        let mut out = output_for(&early, mode_of(1), len_of(1));
        let mut future = start(&mut early, mode_of(1), &mine, &mut out);
        assert!(poll_once(&mut future).is_pending());
        let (report, came) = one_report(start_at, LATE, STALL);
        assert!(came >= STALL, "{report}");
        assert_eq!(report.object(), "Reduction (StaticTree, 3 participants)");
        assert_eq!(report.episode(), 1);
        assert_eq!(report.missing(), Some(&[1, 2][..]));
        // The others come: the call completes, and nothing more is reported.
        let outcome = std::thread::scope(|s| {
            for p in late.iter_mut() {
                s.spawn(move || call_blocking(p, 1).unwrap());
            }
            block_on(future).unwrap()
        });
        assert_eq!(outcome.episode(), 1);
        check(&early, 1, mode_of(1), &out, &outcome);
        std::thread::sleep(STALL * 3);
        let lines: Vec<_> = take_reports().iter().map(|(_, r)| r.to_string()).collect();
        assert!(lines.is_empty(), "no report expected: {lines:#?}");
    });
}
