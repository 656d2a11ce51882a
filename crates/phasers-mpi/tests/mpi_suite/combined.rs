//! The combined barrier: the invariant over every thread of every rank for every local and
//! process algorithm and wait policy, up to 64 threads per rank; different thread counts per
//! rank; the default process step (Auto: every rank chooses alike) and the node-shm one at 1 to 8
//! threads; a rank alone on its communicator; who leads; a panicking or dropped thread; local and
//! process timeouts.

use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use mpi::traits::CommunicatorCollectives;
use phasers::{Algorithm, WaitPolicy};
use phasers_mpi::{mpi, CombinedBarrier, CombinedParticipant, Error, ProcessAlgorithm};

use crate::case::{ensure, every, Case, Ctx, Failures, INTENTIONAL};
use crate::rng::Rng;
use crate::shm::SharedCounters;

pub fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "combined_invariant_every_algorithm_1_2_3_threads",
            run: every_algorithm_few_threads,
        },
        Case {
            name: "combined_invariant_every_algorithm_8_threads",
            run: every_algorithm_8_threads,
        },
        Case {
            name: "combined_invariant_every_wait_policy",
            run: every_wait_policy,
        },
        Case {
            name: "combined_invariant_thread_counts_differ_per_rank",
            run: thread_counts_differ,
        },
        Case {
            name: "combined_invariant_default_auto_and_node_shm",
            run: default_auto_and_node_shm,
        },
        Case {
            name: "combined_default_auto_every_rank_chooses_alike",
            run: default_ranks_agree,
        },
        Case {
            name: "combined_alone_on_its_communicator",
            run: alone_on_its_communicator,
        },
        Case {
            name: "combined_parties_sums_every_rank_threads",
            run: parties_sum,
        },
        Case {
            name: "combined_stress_64_participants",
            run: stress_64_participants,
        },
        Case {
            name: "combined_stress_64_threads_per_rank",
            run: stress_64_threads_per_rank,
        },
        Case {
            name: "combined_leader_is_the_last_local_arrival",
            run: leader_is_last_arrival,
        },
        Case {
            name: "combined_panicking_thread_breaks_its_rank",
            run: panicking_thread,
        },
        Case {
            name: "combined_dropped_handle_breaks_its_rank",
            run: dropped_handle,
        },
        Case {
            name: "combined_broken_rank_others_time_out",
            run: broken_rank_others_time_out,
        },
        Case {
            name: "combined_local_timeout_keeps_the_arrival",
            run: local_timeout,
        },
        Case {
            name: "combined_process_timeout_reaches_every_thread",
            run: process_timeout,
        },
    ]
}

/// One run of the invariant check.
struct Config {
    local: Algorithm,
    process: ProcessAlgorithm,
    policy: WaitPolicy,
    /// Threads of each rank of the communicator.
    threads: Vec<usize>,
    episodes: u64,
    /// A thread sleeps before an arrival with probability 1 / `sleep_one_in` (0: never).
    sleep_one_in: u64,
}

/// Every thread writes its arrival count into its own shared counter before it waits. After
/// episode `e` every thread of every rank must have arrived `e + 1` or `e + 2` times; the wait
/// returns episode `e`; exactly one thread per rank leads each episode.
fn invariant(ctx: &Ctx<'_>, config: &Config) -> Result<(), String> {
    let describe = || {
        format!(
            "{} x {} ({:?}, threads {:?})",
            config.local.name(),
            config.process.name(),
            config.policy,
            config.threads
        )
    };
    let widest = *config.threads.iter().max().expect("one rank at least");
    let arrivals = SharedCounters::new(ctx.comm, ctx.size * widest)?;
    let mine = config.threads[ctx.rank];
    let builder = CombinedBarrier::builder(ctx.mpi, ctx.comm, mine)
        .local(config.local)
        .wait_policy(config.policy);
    // Auto is the default: asking for it is leaving the process step alone.
    let builder = if config.process == ProcessAlgorithm::Auto {
        builder
    } else {
        builder.process(config.process)
    };
    let barrier = builder
        .build()
        .map_err(|e| format!("{}: build: {e}", describe()))?;
    ensure(barrier.process_algorithm() == config.process, || {
        format!(
            "{}: process_algorithm() is {}",
            describe(),
            barrier.process_algorithm().name()
        )
    })?;
    let leaders: Vec<AtomicU32> = (0..config.episodes).map(|_| AtomicU32::new(0)).collect();
    let failures = Failures::default();
    // The threads need only these (a `Ctx` holds MPI handles, which are not `Sync`).
    let (rank, seed) = (ctx.rank, ctx.seed);
    std::thread::scope(|s| {
        for mut p in barrier.participants() {
            let (arrivals, leaders, failures) = (&arrivals, &leaders, &failures);
            s.spawn(move || {
                let t = p.thread_rank();
                let mut rng = Rng::new(seed, rank, t);
                for e in 0..config.episodes {
                    if config.sleep_one_in > 0 {
                        rng.maybe_sleep(config.sleep_one_in, Duration::from_micros(500));
                    }
                    arrivals
                        .get(rank * widest + t)
                        .store(e + 1, Ordering::SeqCst);
                    let done = match p.wait() {
                        Ok(done) => done,
                        Err(error) => {
                            failures.add(format!("thread {t}: episode {e}: {error}"));
                            return;
                        }
                    };
                    failures.check(done.episode() == e, || {
                        format!(
                            "thread {t}: wait returned episode {}, expected {e}",
                            done.episode()
                        )
                    });
                    if done.is_leader() {
                        leaders[e as usize].fetch_add(1, Ordering::Relaxed);
                    }
                    for (r, &threads) in config.threads.iter().enumerate() {
                        for u in 0..threads {
                            let seen = arrivals.get(r * widest + u).load(Ordering::SeqCst);
                            failures.check(seen == e + 1 || seen == e + 2, || {
                                format!(
                                    "rank {} thread {t} left episode {e} while rank {r} thread \
                                     {u} had arrived {seen} times",
                                    rank
                                )
                            });
                        }
                    }
                }
            });
        }
    });
    for (e, count) in leaders.iter().enumerate() {
        let count = count.load(Ordering::Relaxed);
        failures.check(count == 1, || format!("episode {e} had {count} leaders"));
    }
    failures
        .into_result()
        .map_err(|e| format!("{}: {e}", describe()))
}

fn all_locals() -> impl Iterator<Item = Algorithm> {
    std::iter::once(Algorithm::Auto).chain(Algorithm::CONCRETE)
}

fn every_algorithm_few_threads(ctx: &Ctx<'_>) -> Result<(), String> {
    every([1, 2, 3], |threads| {
        every(all_locals(), |local| {
            every(ProcessAlgorithm::ALL, |process| {
                invariant(
                    ctx,
                    &Config {
                        local,
                        process,
                        policy: WaitPolicy::Auto,
                        threads: vec![threads; ctx.size],
                        episodes: 40,
                        sleep_one_in: 16,
                    },
                )
            })
        })
    })
}

fn every_algorithm_8_threads(ctx: &Ctx<'_>) -> Result<(), String> {
    every(all_locals(), |local| {
        every(ProcessAlgorithm::ALL, |process| {
            invariant(
                ctx,
                &Config {
                    local,
                    process,
                    policy: WaitPolicy::Auto,
                    threads: vec![8; ctx.size],
                    episodes: 20,
                    sleep_one_in: 32,
                },
            )
        })
    })
}

fn every_wait_policy(ctx: &Ctx<'_>) -> Result<(), String> {
    every(WaitPolicy::ALL, |policy| {
        every(
            [Algorithm::SenseReversing, Algorithm::Dissemination],
            |local| {
                invariant(
                    ctx,
                    &Config {
                        local,
                        process: ProcessAlgorithm::Dissemination,
                        policy,
                        threads: vec![3; ctx.size],
                        episodes: 60,
                        sleep_one_in: 16,
                    },
                )
            },
        )
    })
}

fn thread_counts_differ(ctx: &Ctx<'_>) -> Result<(), String> {
    // 1, 3, 2, 8, 1, 3, ... threads on ranks 0, 1, 2, 3, ...
    let threads: Vec<usize> = (0..ctx.size).map(|r| [1, 3, 2, 8][r % 4]).collect();
    let locals = [
        Algorithm::SenseReversing,
        Algorithm::McsTree,
        Algorithm::Counting,
    ];
    every(locals, |local| {
        every(ProcessAlgorithm::ALL, |process| {
            invariant(
                ctx,
                &Config {
                    local,
                    process,
                    policy: WaitPolicy::Auto,
                    threads: threads.clone(),
                    episodes: 60,
                    sleep_one_in: 16,
                },
            )
        })
    })
}

/// The default process step (Auto, whatever it chose here) and the node-shm one it usually
/// chooses on one node, at 1, 2, 4 and 8 threads per rank with the threads' arrivals spread out.
fn default_auto_and_node_shm(ctx: &Ctx<'_>) -> Result<(), String> {
    every([1, 2, 4, 8], |threads| {
        every(
            [ProcessAlgorithm::Auto, ProcessAlgorithm::NodeShm],
            |process| {
                invariant(
                    ctx,
                    &Config {
                        local: Algorithm::SenseReversing,
                        process,
                        policy: WaitPolicy::Auto,
                        threads: vec![threads; ctx.size],
                        episodes: 200,
                        sleep_one_in: 50,
                    },
                )
            },
        )
    })
}

/// A barrier built with the defaults runs Auto, which names a concrete algorithm, the same on
/// every rank, also when the ranks bring different thread counts.
fn default_ranks_agree(ctx: &Ctx<'_>) -> Result<(), String> {
    let barrier = CombinedBarrier::builder(ctx.mpi, ctx.comm, 1 + ctx.rank % 3)
        .build()
        .map_err(|e| format!("build: {e}"))?;
    ensure(
        barrier.process_algorithm() == ProcessAlgorithm::Auto,
        || {
            format!(
                "the default process step is {}, expected auto",
                barrier.process_algorithm().name()
            )
        },
    )?;
    let chosen = barrier.process_chosen();
    ensure(chosen != ProcessAlgorithm::Auto, || {
        "process_chosen() answered auto; it names what runs".to_owned()
    })?;
    let index = ProcessAlgorithm::ALL
        .iter()
        .position(|&a| a == chosen)
        .expect("every algorithm is in ALL") as u64;
    let mut everyone = vec![0u64; ctx.size];
    ctx.comm.all_gather_into(&index, &mut everyone[..]);
    ensure(everyone.iter().all(|&i| i == index), || {
        let names: Vec<&str> = everyone
            .iter()
            .map(|&i| ProcessAlgorithm::ALL[i as usize].name())
            .collect();
        format!("the ranks chose differently: {names:?}")
    })
}

/// Each rank builds a combined barrier on a communicator of its own: the local barrier is the
/// whole barrier (no process step runs), and it still holds every thread until all arrived,
/// numbers episodes from 0 and has one leader per episode.
fn alone_on_its_communicator(ctx: &Ctx<'_>) -> Result<(), String> {
    const THREADS: usize = 3;
    const EPISODES: u64 = 300;
    let alone = mpi::topology::SimpleCommunicator::self_comm();
    let barrier = CombinedBarrier::builder(ctx.mpi, &alone, THREADS)
        .build()
        .map_err(|e| format!("build: {e}"))?;
    ensure(barrier.parties() == THREADS, || {
        format!("parties() = {}, expected {THREADS}", barrier.parties())
    })?;
    ensure(
        barrier.process_chosen() == ProcessAlgorithm::Dissemination,
        || {
            format!(
                "alone, Auto chose {}; one rank takes dissemination without measuring",
                barrier.process_chosen().name()
            )
        },
    )?;
    let arrived = AtomicUsize::new(0);
    let leaders: Vec<AtomicU32> = (0..EPISODES).map(|_| AtomicU32::new(0)).collect();
    let failures = Failures::default();
    let seed = ctx.seed;
    let rank = ctx.rank;
    std::thread::scope(|s| {
        for mut p in barrier.participants() {
            let (arrived, leaders, failures) = (&arrived, &leaders, &failures);
            s.spawn(move || {
                let t = p.thread_rank();
                let mut rng = Rng::new(seed, rank, t);
                for e in 0..EPISODES {
                    rng.maybe_sleep(32, Duration::from_micros(200));
                    arrived.fetch_add(1, Ordering::SeqCst);
                    let done = match p.wait() {
                        Ok(done) => done,
                        Err(error) => {
                            failures.add(format!("thread {t}: episode {e}: {error}"));
                            return;
                        }
                    };
                    let seen = arrived.load(Ordering::SeqCst);
                    let least = THREADS * (e as usize + 1);
                    failures.check(
                        done.episode() == e && (least..least + THREADS).contains(&seen),
                        || {
                            format!(
                                "thread {t}: episode {} (expected {e}) left with {seen} arrivals                                  counted, expected {least} to {}",
                                done.episode(),
                                least + THREADS - 1
                            )
                        },
                    );
                    if done.is_leader() {
                        leaders[e as usize].fetch_add(1, Ordering::Relaxed);
                    }
                }
            });
        }
    });
    for (e, count) in leaders.iter().enumerate() {
        let count = count.load(Ordering::Relaxed);
        failures.check(count == 1, || format!("episode {e} had {count} leaders"));
    }
    failures.into_result()
}

/// The project's stress requirement: 64 participants on 2 cores, here threads x ranks.
fn stress_64_participants(ctx: &Ctx<'_>) -> Result<(), String> {
    let threads = (64 / ctx.size).max(1);
    every(ProcessAlgorithm::ALL, |process| {
        invariant(
            ctx,
            &Config {
                local: Algorithm::Auto,
                process,
                policy: WaitPolicy::Auto,
                threads: vec![threads; ctx.size],
                episodes: 100,
                sleep_one_in: 64,
            },
        )
    })
}

/// 64 threads in every rank: 128 or 256 threads on 2 cores.
fn stress_64_threads_per_rank(ctx: &Ctx<'_>) -> Result<(), String> {
    every(
        [Algorithm::SenseReversing, Algorithm::Tournament],
        |local| {
            invariant(
                ctx,
                &Config {
                    local,
                    process: ProcessAlgorithm::Dissemination,
                    policy: WaitPolicy::Auto,
                    threads: vec![64; ctx.size],
                    episodes: 20,
                    sleep_one_in: 0,
                },
            )
        },
    )
}

/// With `SenseReversing` the last local arrival leads. Each episode one thread (a different one
/// each time) arrives 5 ms after its siblings: it should lead, so the leader is not always thread
/// 0. A loaded machine can delay another thread even longer, so the check asks for a majority.
fn leader_is_last_arrival(ctx: &Ctx<'_>) -> Result<(), String> {
    const THREADS: usize = 4;
    const EPISODES: u64 = 16;
    let barrier = CombinedBarrier::builder(ctx.mpi, ctx.comm, THREADS)
        .local(Algorithm::SenseReversing)
        .build()
        .map_err(|e| e.to_string())?;
    let late_led = AtomicUsize::new(0);
    let led_by_other_than_0 = AtomicUsize::new(0);
    let failures = Failures::default();
    std::thread::scope(|s| {
        for mut p in barrier.participants() {
            let (late_led, others, failures) = (&late_led, &led_by_other_than_0, &failures);
            s.spawn(move || {
                let t = p.thread_rank();
                for e in 0..EPISODES {
                    let late = (e as usize + 1) % THREADS;
                    if t == late {
                        std::thread::sleep(Duration::from_millis(5));
                    }
                    match p.wait() {
                        Ok(done) if done.is_leader() => {
                            if t == late {
                                late_led.fetch_add(1, Ordering::Relaxed);
                            }
                            if t != 0 {
                                others.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                        Ok(_) => {}
                        Err(error) => {
                            failures.add(format!("thread {t}: episode {e}: {error}"));
                            return;
                        }
                    }
                }
            });
        }
    });
    failures.into_result()?;
    let (late, others) = (
        late_led.load(Ordering::Relaxed),
        led_by_other_than_0.load(Ordering::Relaxed),
    );
    ensure(others > 0 && late * 2 >= EPISODES as usize, || {
        format!(
            "of {EPISODES} episodes the late thread led {late} and a thread other than 0 led \
             {others}; the last arrival should lead"
        )
    })
}

/// The episode at which one thread of a rank is lost.
const LOST_AT: u64 = 5;
const LOST_THREAD: usize = 1;

/// Thread 1 of every rank panics before arriving at episode 5. The other threads of each rank get
/// `Core(Broken)` naming thread 1 and episode 5; the process step of episode 5 never starts on
/// any rank, so no rank waits for another.
fn panicking_thread(ctx: &Ctx<'_>) -> Result<(), String> {
    lose_a_thread(ctx, |_p| {
        panic!("{INTENTIONAL}: thread {LOST_THREAD} panics")
    })
}

/// As [`panicking_thread`], but thread 1 drops its handle and returns.
fn dropped_handle(ctx: &Ctx<'_>) -> Result<(), String> {
    lose_a_thread(ctx, drop)
}

fn lose_a_thread(ctx: &Ctx<'_>, lose: fn(CombinedParticipant)) -> Result<(), String> {
    every(ProcessAlgorithm::ALL, |process| {
        every([Algorithm::SenseReversing, Algorithm::McsTree], |local| {
            let barrier = CombinedBarrier::builder(ctx.mpi, ctx.comm, 3)
                .local(local)
                .process(process)
                .build()
                .map_err(|e| e.to_string())?;
            let failures = Failures::default();
            std::thread::scope(|s| {
                let handles: Vec<_> = barrier
                    .participants()
                    .into_iter()
                    .map(|mut p| {
                        let failures = &failures;
                        s.spawn(move || {
                            let t = p.thread_rank();
                            for e in 0..LOST_AT {
                                if let Err(error) = p.wait() {
                                    failures.add(format!("thread {t}: episode {e}: {error}"));
                                    return;
                                }
                            }
                            if t == LOST_THREAD {
                                std::thread::sleep(Duration::from_millis(20));
                                lose(p);
                                return;
                            }
                            for attempt in 0..2 {
                                match p.wait() {
                                    Err(Error::Core(phasers::Error::Broken { by, episode }))
                                        if by == LOST_THREAD && episode == LOST_AT => {}
                                    other => failures.add(format!(
                                        "thread {t}: wait {attempt} after thread {LOST_THREAD} \
                                         was lost returned {other:?}, expected Core(Broken {{ by: \
                                         {LOST_THREAD}, episode: {LOST_AT} }})"
                                    )),
                                }
                            }
                        })
                    })
                    .collect();
                for handle in handles {
                    // The lost thread's panic is the point of the case.
                    let _ = handle.join();
                }
            });
            failures
                .into_result()
                .map_err(|e| format!("{} x {}: {e}", local.name(), process.name()))
        })
    })
}

/// Thread 1 of rank 0 panics before episode 5; only rank 0 is broken. The other ranks wait for
/// episode 5 with a timeout: their leader's process step times out and every thread of those
/// ranks gets `Error::Timeout` for process episode 5, naming a rank; rank 0's other threads get
/// `Core(Broken)`. Nobody hangs.
fn broken_rank_others_time_out(ctx: &Ctx<'_>) -> Result<(), String> {
    const THREADS: usize = 3;
    let barrier = CombinedBarrier::builder(ctx.mpi, ctx.comm, THREADS)
        .process(ProcessAlgorithm::Dissemination)
        .build()
        .map_err(|e| e.to_string())?;
    let failures = Failures::default();
    let rank = ctx.rank;
    std::thread::scope(|s| {
        let handles: Vec<_> = barrier
            .participants()
            .into_iter()
            .map(|mut p| {
                let failures = &failures;
                s.spawn(move || {
                    let t = p.thread_rank();
                    for e in 0..LOST_AT {
                        if let Err(error) = p.wait() {
                            failures.add(format!("thread {t}: episode {e}: {error}"));
                            return;
                        }
                    }
                    if rank == 0 {
                        if t == LOST_THREAD {
                            panic!("{INTENTIONAL}: rank 0 thread {t} panics");
                        }
                        match p.wait() {
                            Err(Error::Core(phasers::Error::Broken {
                                by: LOST_THREAD, ..
                            })) => {}
                            other => failures.add(format!(
                                "rank 0 thread {t}: after thread {LOST_THREAD} panicked: {other:?}"
                            )),
                        }
                        return;
                    }
                    match p.wait_timeout(Duration::from_millis(500)) {
                        Err(Error::Timeout {
                            what,
                            episode,
                            waiting_for,
                            ..
                        }) => failures.check(
                            what == "dissemination"
                                && episode == LOST_AT
                                && !waiting_for.is_empty(),
                            || {
                                format!(
                                    "thread {t}: timeout in {what:?} episode {episode} waiting \
                                     for {waiting_for:?}; expected dissemination, {LOST_AT}, a rank"
                                )
                            },
                        ),
                        // A thread whose own deadline passed while its leader was still in the
                        // process step: its arrival stays; the next wait returns the step's
                        // outcome at once.
                        Err(Error::Core(phasers::Error::Timeout { .. })) => {
                            match p.wait_timeout(Duration::from_millis(500)) {
                                Err(Error::Timeout { episode, .. }) if episode == LOST_AT => {}
                                other => failures.add(format!(
                                    "thread {t}: second wait after a local timeout: {other:?}"
                                )),
                            }
                        }
                        other => failures.add(format!(
                            "thread {t}: waiting for broken rank 0 returned {other:?}, expected \
                             a timeout"
                        )),
                    }
                })
            })
            .collect();
        for handle in handles {
            let _ = handle.join();
        }
    });
    // Rank 0 never takes episode 5, so the other ranks' tokens for it are still on their way to
    // rank 0 on this barrier's communicator. The ranks that timed out keep their communicator on
    // drop (`Channel::keep_communicator`), but rank 0 cannot know that tokens are coming: freed
    // there, the communicator's context id could go to a later case's communicator and the stale
    // tokens with it (a later Auto build hung in `MPI_Comm_dup`, and with only the others keeping
    // theirs Open MPI crashed on rank 0). So every rank keeps it here; a program whose rank broke
    // ends instead (see the `Error::Timeout` docs).
    std::mem::forget(barrier);
    failures.into_result()
}

/// Thread 0 checks with a zero timeout, then waits 100 ms for thread 1, which arrives after 1 s:
/// both give `Core(Timeout)` naming thread 1 at once; waiting again with `Duration::MAX` (no
/// deadline) completes episode 0, then 1.
fn local_timeout(ctx: &Ctx<'_>) -> Result<(), String> {
    let barrier = CombinedBarrier::builder(ctx.mpi, ctx.comm, 2)
        .build()
        .map_err(|e| e.to_string())?;
    let failures = Failures::default();
    std::thread::scope(|s| {
        for mut p in barrier.participants() {
            let failures = &failures;
            s.spawn(move || {
                let t = p.thread_rank();
                if t == 1 {
                    std::thread::sleep(Duration::from_millis(1000));
                } else {
                    // Duration::ZERO only checks (issue 21): thread 1 is missing, at once.
                    match p.wait_timeout(Duration::ZERO) {
                        Err(Error::Core(phasers::Error::Timeout {
                            episode: 0,
                            missing,
                            ..
                        })) if missing == [1] => {}
                        other => failures.add(format!(
                            "thread 0: a zero timeout returned {other:?}, expected \
                             Core(Timeout {{ episode: 0, missing: [1] }})"
                        )),
                    }
                    match p.wait_timeout(Duration::from_millis(100)) {
                        Err(Error::Core(phasers::Error::Timeout {
                            episode: 0,
                            missing,
                            ..
                        })) if missing == [1] => {}
                        other => failures.add(format!(
                            "thread 0: waiting 100 ms for thread 1 returned {other:?}, expected \
                             Core(Timeout {{ episode: 0, missing: [1] }})"
                        )),
                    }
                }
                // Duration::MAX is no deadline: the episodes complete as with `wait`.
                for e in 0..2 {
                    match p.wait_timeout(Duration::MAX) {
                        Ok(done) => failures.check(done.episode() == e, || {
                            format!(
                                "thread {t}: episode {} after a local timeout, expected {e}",
                                done.episode()
                            )
                        }),
                        Err(error) => failures.add(format!("thread {t}: episode {e}: {error}")),
                    }
                }
            });
        }
    });
    failures.into_result()
}

/// Every rank but 0 arrives 1 s late; rank 0's threads wait 100 ms at a time. Rank 0's leader's
/// process step times out, and every thread of rank 0 gets `Error::Timeout` for episode 0 (a
/// thread whose own deadline passed first gets `Core(Timeout)` and sees the step's timeout when
/// it waits again). Waiting again then completes episode 0 everywhere, then episode 1.
fn process_timeout(ctx: &Ctx<'_>) -> Result<(), String> {
    const THREADS: usize = 3;
    every(ProcessAlgorithm::ALL, |process| {
        let barrier = CombinedBarrier::builder(ctx.mpi, ctx.comm, THREADS)
            .process(process)
            .build()
            .map_err(|e| e.to_string())?;
        let failures = Failures::default();
        let started = Instant::now();
        let rank = ctx.rank;
        std::thread::scope(|s| {
            for mut p in barrier.participants() {
                let failures = &failures;
                s.spawn(move || {
                    let t = p.thread_rank();
                    if rank == 0 {
                        let mut local_timeouts = 0;
                        loop {
                            match p.wait_timeout(Duration::from_millis(100)) {
                                Err(Error::Timeout { what, episode: 0, .. }) => {
                                    failures.check(what == process.name(), || {
                                        format!("thread {t}: the timeout names {what:?}")
                                    });
                                    break;
                                }
                                Err(Error::Core(phasers::Error::Timeout { .. }))
                                    if local_timeouts < 3 =>
                                {
                                    local_timeouts += 1;
                                }
                                other => {
                                    failures.add(format!(
                                        "rank 0 thread {t}: waiting 100 ms for late ranks \
                                         returned {other:?}, expected Error::Timeout in episode 0"
                                    ));
                                    break;
                                }
                            }
                        }
                    } else {
                        std::thread::sleep(Duration::from_millis(1000));
                    }
                    for e in 0..2 {
                        match p.wait() {
                            Ok(done) => failures.check(done.episode() == e, || {
                                format!(
                                    "rank {rank} thread {t}: episode {} after the timeout, expected {e}",
                                    done.episode()
                                )
                            }),
                            Err(error) => {
                                failures.add(format!("rank {rank} thread {t}: episode {e}: {error}"));
                                return;
                            }
                        }
                    }
                });
            }
        });
        // Every rank ends the episode after the late ones arrive (1 s), however it waited.
        let mut took = vec![0f64; ctx.size];
        ctx.comm
            .all_gather_into(&started.elapsed().as_secs_f64(), &mut took[..]);
        failures.check(took.iter().all(|&t| t >= 0.9), || {
            format!("the ranks took {took:?} s; the late ones sleep 1 s")
        });
        failures
            .into_result()
            .map_err(|e| format!("{}: {e}", process.name()))
    })
}

/// `parties()` counts every thread of every rank: rank `r` brings `r + 1` threads, so the
/// barrier and each handle report `1 + 2 + ... + size`, and `threads()` this rank's own count.
fn parties_sum(ctx: &Ctx<'_>) -> Result<(), String> {
    let threads = ctx.rank + 1;
    let barrier = CombinedBarrier::builder(ctx.mpi, ctx.comm, threads)
        .build()
        .map_err(|e| format!("build: {e}"))?;
    let expected = ctx.size * (ctx.size + 1) / 2;
    ensure(barrier.parties() == expected, || {
        format!("parties() = {}, expected {expected}", barrier.parties())
    })?;
    ensure(barrier.threads() == threads, || {
        format!("threads() = {}, expected {threads}", barrier.threads())
    })?;
    let participants = barrier.participants();
    ensure(participants.iter().all(|p| p.parties() == expected), || {
        "a participant's parties() differs from the barrier's".to_string()
    })
}
