//! Process barriers: the barrier invariant for every algorithm, on the world and on
//! sub-communicators, barriers that share a communicator, and timeouts.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use mpi::topology::Color;
use mpi::traits::{Communicator, CommunicatorCollectives};
use phasers_mpi::{mpi, Error, ProcessAlgorithm, ProcessBarrier};

use crate::case::{every, Case, Ctx, Failures};
use crate::rng::Rng;
use crate::shm::SharedCounters;

pub fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "process_barrier_invariant_every_algorithm",
            run: invariant_every_algorithm,
        },
        Case {
            name: "process_barrier_on_sub_communicators",
            run: sub_communicators,
        },
        Case {
            name: "process_barriers_sharing_a_communicator_stay_apart",
            run: barriers_share_a_communicator,
        },
        Case {
            name: "process_barrier_timeout_names_ranks_and_keeps_the_arrival",
            run: timeout_keeps_arrival,
        },
        Case {
            name: "process_barrier_duration_max_is_no_deadline",
            run: duration_max_is_no_deadline,
        },
        Case {
            name: "process_barrier_node_shm_across_emulated_nodes",
            run: node_shm_across_emulated_nodes,
        },
        Case {
            name: "process_barrier_auto_chooses_alike_everywhere",
            run: auto_chooses_alike,
        },
    ]
}

/// The node-shm barrier with nodes of 1 and 2 ranks (and Auto on them): the leaders' network step
/// runs between emulated nodes of one machine, and the invariant still holds.
fn node_shm_across_emulated_nodes(ctx: &Ctx<'_>) -> Result<(), String> {
    every([1, 2, 3], |ranks_per_node| {
        every(
            [ProcessAlgorithm::NodeShm, ProcessAlgorithm::Auto],
            |algorithm| {
                let barrier =
                    ProcessBarrier::emulating_nodes(ctx.mpi, ctx.comm, algorithm, ranks_per_node)
                        .map_err(|e| e.to_string())?;
                invariant_on(ctx.comm, barrier, algorithm, ctx.seed)
                    .map_err(|e| format!("{} in nodes of {ranks_per_node}: {e}", algorithm.name()))
            },
        )
    })
}

/// Auto measures every candidate, chooses the fastest it measured, and every rank chooses the
/// same one from the same numbers.
fn auto_chooses_alike(ctx: &Ctx<'_>) -> Result<(), String> {
    let barrier = ProcessBarrier::new(ctx.mpi, ctx.comm, ProcessAlgorithm::Auto)
        .map_err(|e| e.to_string())?;
    let failures = Failures::default();
    let chosen = barrier.chosen();
    let calibration = barrier.calibration();
    failures.check(chosen != ProcessAlgorithm::Auto, || {
        "auto reports itself as its choice".to_owned()
    });
    if ctx.size == 1 {
        failures.check(calibration.is_empty(), || {
            format!("one rank measured {calibration:?}")
        });
    } else {
        let fastest = calibration.iter().min_by_key(|(_, t)| *t).map(|&(a, _)| a);
        failures.check(fastest == Some(chosen), || {
            format!("auto chose {chosen:?} but measured {calibration:?}")
        });
        failures.check(
            calibration.len() >= 3
                && calibration
                    .iter()
                    .all(|(a, t)| *a != ProcessAlgorithm::Auto && !t.is_zero()),
            || format!("the calibration lacks candidates or times: {calibration:?}"),
        );
    }
    let index = ProcessAlgorithm::ALL
        .iter()
        .position(|&a| a == chosen)
        .unwrap_or(usize::MAX) as u64;
    let mut all = vec![0u64; ctx.size];
    ctx.comm.all_gather_into(&index, &mut all[..]);
    failures.check(all.iter().all(|&i| i == index), || {
        format!("the ranks chose differently: {all:?} (indices into ProcessAlgorithm::ALL)")
    });
    failures.into_result()
}

/// `wait_timeout(Duration::MAX)` on every algorithm: no overflow, and an episode that every rank
/// reaches completes as with `wait` (issue 21).
fn duration_max_is_no_deadline(ctx: &Ctx<'_>) -> Result<(), String> {
    every(ProcessAlgorithm::ALL, |algorithm| {
        let mut barrier =
            ProcessBarrier::new(ctx.mpi, ctx.comm, algorithm).map_err(|e| e.to_string())?;
        for episode in 0..3 {
            match barrier.wait_timeout(Duration::MAX) {
                Ok(got) if got == episode => {}
                other => {
                    return Err(format!(
                        "{}: episode {episode} gave {other:?}",
                        algorithm.name()
                    ))
                }
            }
        }
        Ok(())
    })
}

/// Episodes without sleeps (messages race) and with random sleeps (every rank is sometimes last).
const FAST_EPISODES: u64 = 600;
const SLOW_EPISODES: u64 = 200;

fn invariant_every_algorithm(ctx: &Ctx<'_>) -> Result<(), String> {
    every(ProcessAlgorithm::ALL, |algorithm| {
        invariant(ctx, ctx.comm, algorithm, ctx.seed)
            .map_err(|e| format!("{}: {e}", algorithm.name()))
    })
}

/// Every rank writes its arrival count into its own shared counter before it waits; after
/// episode `e` every counter must read `e + 1` (everyone arrived) or `e + 2` (a rank that left
/// already arrived at the next episode), never less and never more.
fn invariant(
    ctx: &Ctx<'_>,
    comm: &impl Communicator,
    algorithm: ProcessAlgorithm,
    seed: u64,
) -> Result<(), String> {
    let barrier = ProcessBarrier::new(ctx.mpi, comm, algorithm).map_err(|e| e.to_string())?;
    invariant_on(comm, barrier, algorithm, seed)
}

/// [`invariant`] on a barrier already built with `algorithm` on `comm`.
fn invariant_on(
    comm: &impl Communicator,
    mut barrier: ProcessBarrier,
    algorithm: ProcessAlgorithm,
    seed: u64,
) -> Result<(), String> {
    let (me, size) = (comm.rank() as usize, comm.size() as usize);
    let arrivals = SharedCounters::new(comm, size)?;
    let failures = Failures::default();
    failures.check(
        barrier.rank() == me
            && barrier.parties() == size
            && barrier.algorithm() == algorithm
            && barrier.chosen() != ProcessAlgorithm::Auto
            && (algorithm == ProcessAlgorithm::Auto || barrier.chosen() == algorithm)
            && barrier.episode() == 0,
        || {
            format!(
                "a new barrier reports rank {} size {} algorithm {:?} episode {}, expected {me}, \
                 {size}, {algorithm:?}, 0",
                barrier.rank(),
                barrier.parties(),
                barrier.algorithm(),
                barrier.episode()
            )
        },
    );
    let mut rng = Rng::new(seed, me, 0);
    for e in 0..FAST_EPISODES + SLOW_EPISODES {
        if e >= FAST_EPISODES {
            rng.maybe_sleep(6, Duration::from_millis(2));
        }
        arrivals.get(me).store(e + 1, Ordering::SeqCst);
        let got = barrier
            .wait()
            .map_err(|err| format!("episode {e}: wait failed: {err}"))?;
        failures.check(got == e, || {
            format!("wait returned episode {got}, expected {e}")
        });
        for r in 0..size {
            let seen = arrivals.get(r).load(Ordering::SeqCst);
            failures.check(seen == e + 1 || seen == e + 2, || {
                format!(
                    "rank {me} left episode {e} while rank {r} had arrived {seen} times \
                     (expected {} or {})",
                    e + 1,
                    e + 2
                )
            });
        }
        failures.check(barrier.episode() == e + 1, || {
            format!("episode() is {} after episode {e}", barrier.episode())
        });
        if e % 200 == 199 {
            // Every rank agrees on the count (a collective outside the barrier under test).
            let mut all = vec![0u64; size];
            comm.all_gather_into(&barrier.episode(), &mut all[..]);
            failures.check(all.iter().all(|&n| n == e + 1), || {
                format!("after episode {e} the ranks report episode counts {all:?}")
            });
        }
    }
    failures.into_result()
}

/// The invariant on communicators smaller than the world: `P - 1` ranks (3 with 4 ranks: not a
/// power of two) next to one lonely rank, and the even ranks next to the odd ones.
fn sub_communicators(ctx: &Ctx<'_>) -> Result<(), String> {
    let last = ctx.rank == ctx.size - 1;
    let all_but_last = ctx
        .comm
        .split_by_color(Color::with_value(i32::from(last)))
        .ok_or("split by color gave no communicator")?;
    let parity = ctx
        .comm
        .split_by_color(Color::with_value((ctx.rank % 2) as i32))
        .ok_or("split by parity gave no communicator")?;
    every(ProcessAlgorithm::ALL, |algorithm| {
        every([&all_but_last, &parity], |comm| {
            invariant(ctx, comm, algorithm, ctx.seed)
                .map_err(|e| format!("{} on {} rank(s): {e}", algorithm.name(), comm.size()))
        })
    })
}

/// Two barriers with the same algorithm on one communicator, one waited three times as often as
/// the other: each must keep its own count, and a token of one must never complete the other.
fn barriers_share_a_communicator(ctx: &Ctx<'_>) -> Result<(), String> {
    let (me, size) = (ctx.rank, ctx.size);
    every(ProcessAlgorithm::ALL, |algorithm| {
        let arrivals = SharedCounters::new(ctx.comm, 2 * size)?;
        let mut often =
            ProcessBarrier::new(ctx.mpi, ctx.comm, algorithm).map_err(|e| e.to_string())?;
        let mut seldom =
            ProcessBarrier::new(ctx.mpi, ctx.comm, algorithm).map_err(|e| e.to_string())?;
        let failures = Failures::default();
        let mut rng = Rng::new(ctx.seed, me, 0);
        for e in 0..300u64 {
            rng.maybe_sleep(10, Duration::from_millis(1));
            arrivals.get(me).store(e + 1, Ordering::SeqCst);
            let got = often.wait().map_err(|err| err.to_string())?;
            failures.check(got == e, || {
                format!("{}: often: episode {got}, expected {e}", algorithm.name())
            });
            for r in 0..size {
                let seen = arrivals.get(r).load(Ordering::SeqCst);
                failures.check(seen == e + 1 || seen == e + 2, || {
                    format!(
                        "{}: often: left episode {e} while rank {r} had arrived {seen} times",
                        algorithm.name()
                    )
                });
            }
            if e % 3 == 2 {
                let k = e / 3;
                arrivals.get(size + me).store(k + 1, Ordering::SeqCst);
                let got = seldom.wait().map_err(|err| err.to_string())?;
                failures.check(got == k, || {
                    format!("{}: seldom: episode {got}, expected {k}", algorithm.name())
                });
                for r in 0..size {
                    let seen = arrivals.get(size + r).load(Ordering::SeqCst);
                    failures.check(seen == k + 1 || seen == k + 2, || {
                        format!(
                            "{}: seldom: left episode {k} while rank {r} had arrived {seen} times",
                            algorithm.name()
                        )
                    });
                }
            }
        }
        failures.check(often.episode() == 300 && seldom.episode() == 100, || {
            format!(
                "{}: episodes {} and {}, expected 300 and 100",
                algorithm.name(),
                often.episode(),
                seldom.episode()
            )
        });
        failures.into_result()
    })
}

/// How long the other ranks keep rank 0 waiting; far longer than rank 0's timeout, so a loaded
/// machine cannot make them arrive in time.
const LATE: Duration = Duration::from_millis(1000);
const TIMEOUT: Duration = Duration::from_millis(100);

/// Rank 0 times out while every other rank is late: `Error::Timeout` names the algorithm, episode
/// 0 and the ranks whose messages it lacks; a deadline already past times out too; waiting again
/// completes episode 0, and the next wait is episode 1 everywhere.
fn timeout_keeps_arrival(ctx: &Ctx<'_>) -> Result<(), String> {
    every(ProcessAlgorithm::ALL, |algorithm| {
        let mut barrier =
            ProcessBarrier::new(ctx.mpi, ctx.comm, algorithm).map_err(|e| e.to_string())?;
        let name = algorithm.name();
        // Checks only record: every rank must go on to the waits below, or the others hang.
        let failures = Failures::default();
        if ctx.rank == 0 {
            let expected: Vec<usize> = match barrier.chosen() {
                // Round 0 takes the token of rank P - 1, which has not arrived.
                ProcessAlgorithm::Dissemination => vec![ctx.size - 1],
                // Rank 0 gathers its up to four children's arrivals.
                ProcessAlgorithm::McsTree => (1..ctx.size.min(5)).collect(),
                // MPI does not say.
                ProcessAlgorithm::Library => Vec::new(),
                // Rank 0 leads the one node and waits for every other rank's arrival.
                ProcessAlgorithm::NodeShm => (1..ctx.size).collect(),
                ProcessAlgorithm::Auto => {
                    failures.add("auto reports itself as the algorithm it chose".to_owned());
                    Vec::new()
                }
            };
            let start = Instant::now();
            match barrier.wait_timeout(TIMEOUT) {
                Err(
                    ref error @ Error::Timeout {
                        what,
                        episode,
                        ref waiting_for,
                        after,
                    },
                ) => {
                    failures.check(
                        what == name && episode == 0 && *waiting_for == expected,
                        || {
                            format!(
                                "timeout says what {what:?} episode {episode} waiting for \
                             {waiting_for:?}; expected {name:?}, 0, {expected:?}"
                            )
                        },
                    );
                    failures.check(after >= TIMEOUT && start.elapsed() >= TIMEOUT, || {
                        format!("timed out after {after:?}, before {TIMEOUT:?}")
                    });
                    let text = error.to_string();
                    failures.check(
                        text.contains(name) && text.contains(&format!("{expected:?}")),
                        || format!("the message does not name the algorithm and ranks: {text}"),
                    );
                }
                Ok(got) => failures.add(format!(
                    "wait_timeout completed episode {got} while the other ranks were late"
                )),
                Err(other) => failures.add(format!(
                    "wait_timeout returned {other:?}, expected a timeout"
                )),
            }
            failures.check(barrier.episode() == 0, || {
                format!("episode() is {} after a timeout", barrier.episode())
            });
            match barrier.wait_deadline(Instant::now()) {
                Err(Error::Timeout { episode: 0, .. }) => {}
                // A completed episode here would mean the late ranks were not late: the checks
                // below then fail on the episode numbers.
                other => failures.add(format!(
                    "a deadline already past returned {other:?}, expected a timeout in episode 0"
                )),
            }
            // Duration::ZERO only checks (issue 21), as a past deadline does.
            match barrier.wait_timeout(Duration::ZERO) {
                Err(Error::Timeout { episode: 0, .. }) => {}
                other => failures.add(format!(
                    "a zero timeout returned {other:?}, expected a timeout in episode 0"
                )),
            }
            match barrier.wait() {
                Ok(got) => failures.check(got == 0, || {
                    format!("waiting again after the timeout completed episode {got}, expected 0")
                }),
                Err(error) => failures.add(format!("waiting again after the timeout: {error}")),
            }
        } else {
            std::thread::sleep(LATE);
            match barrier.wait() {
                Ok(got) => failures.check(got == 0, || {
                    format!("the late rank completed episode {got}, expected 0")
                }),
                Err(error) => failures.add(format!("the late rank's wait: {error}")),
            }
        }
        match barrier.wait_timeout(Duration::from_secs(30)) {
            Ok(got) => failures.check(got == 1, || format!("next episode {got}, expected 1")),
            Err(error) => failures.add(format!("the episode after the timeout: {error}")),
        }
        failures.into_result().map_err(|e| format!("{name}: {e}"))
    })
}
