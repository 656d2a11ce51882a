//! Adoption from an existing MPI program: `Mpi::adopt` while other code owns MPI (here the
//! suite's own `Mpi::init`, which stands for the program's rsmpi `Universe`), and every object
//! built on communicators the program made itself: a duplicate, a split into halves, and a split
//! that reverses the ranks. On each, the barriers keep their invariant and the hybrid team's
//! allreduce agrees with the program's own `MPI_Allreduce` on the same communicator, called in
//! between ours.

use std::sync::atomic::{AtomicU64, Ordering};

use mpi::collective::SystemOperation;
use mpi::topology::{Color, SimpleCommunicator};
use mpi::traits::{Communicator, CommunicatorCollectives};
use phasers::Op;
use phasers_mpi::{
    mpi, CombinedBarrier, Error, HybridTeam, Mpi, ProcessAlgorithm, ProcessBarrier, Threading,
};

use crate::case::{ensure, every, Case, Ctx, Failures};
use crate::shm::SharedCounters;

pub fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "adopt_uses_the_running_mpi_without_owning_it",
            run: adopt_running,
        },
        Case {
            name: "adopt_process_barrier_on_the_programs_communicators",
            run: process_barriers,
        },
        Case {
            name: "adopt_combined_barrier_on_the_programs_communicators",
            run: combined_barriers,
        },
        Case {
            name: "adopt_hybrid_allreduce_agrees_with_the_programs_allreduce",
            run: hybrid_allreduce,
        },
    ]
}

/// Episodes per barrier check: enough for every rank to overtake another a few times.
const EPISODES: u64 = 30;
/// Threads per rank for the combined barrier and the hybrid team.
const THREADS: usize = 2;

fn adopt_running(ctx: &Ctx<'_>) -> Result<(), String> {
    let adopted = Mpi::adopt().map_err(|e| format!("Mpi::adopt under a running MPI: {e}"))?;
    ensure(!adopted.owns_mpi() && ctx.mpi.owns_mpi(), || {
        format!(
            "owns_mpi: adopted {}, the suite's Mpi::init {}",
            adopted.owns_mpi(),
            ctx.mpi.owns_mpi()
        )
    })?;
    ensure(
        adopted.rank() == ctx.rank
            && adopted.size() == ctx.size
            && adopted.world().size() as usize == ctx.size,
        || {
            format!(
                "adopted says rank {} of {}, the world is {} of {}",
                adopted.rank(),
                adopted.size(),
                ctx.rank,
                ctx.size
            )
        },
    )?;
    ensure(adopted.threading() == ctx.mpi.threading(), || {
        format!(
            "adopted reads {:?}, Mpi::init got {:?}",
            adopted.threading(),
            ctx.mpi.threading()
        )
    })?;
    // Dropping the adopted context must leave MPI running: the next collective still works.
    drop(adopted);
    let mut ranks = 0u64;
    ctx.comm
        .all_reduce_into(&1u64, &mut ranks, SystemOperation::sum());
    ensure(ranks == ctx.size as u64, || {
        format!("after dropping the adopted Mpi, an allreduce counted {ranks} ranks")
    })?;
    match Mpi::init(Threading::Single) {
        Err(error @ Error::AlreadyInitialized) => {
            ensure(error.to_string().contains("Mpi::adopt()"), || {
                format!("AlreadyInitialized does not point at Mpi::adopt: {error}")
            })
        }
        other => Err(format!(
            "Mpi::init under a running MPI returned {:?}, expected AlreadyInitialized",
            other.map(|_| ())
        )),
    }
}

/// The communicators an existing program would hand us, with a name for messages: a duplicate
/// of the world, its halves (ranks 0, 2, .. and 1, 3, ..; on 2 ranks each half is one rank), and
/// one communicator of every rank in reverse order, so that its ranks differ from the world's.
fn programs_communicators(ctx: &Ctx<'_>) -> Vec<(String, SimpleCommunicator)> {
    let duplicate = ctx.comm.duplicate();
    let parity = (ctx.rank % 2) as i32;
    let half = ctx
        .comm
        .split_by_color(Color::with_value(parity))
        .expect("every rank passes a color, so every rank gets a communicator");
    let reversed = ctx
        .comm
        .split_by_color_with_key(Color::with_value(0), (ctx.size - ctx.rank) as i32)
        .expect("every rank passes a color, so every rank gets a communicator");
    vec![
        ("a duplicate of the world".to_owned(), duplicate),
        (format!("the half of parity {parity}"), half),
        ("the world in reverse order".to_owned(), reversed),
    ]
}

/// Whether every one of `parties` counters reads `episode + 1` or `episode + 2` after `episode`
/// completed: nobody leaves before everyone arrived, nobody runs more than one episode ahead.
fn check_arrivals(
    failures: &Failures,
    arrivals: &SharedCounters,
    parties: usize,
    episode: u64,
    who: &dyn Fn() -> String,
) {
    for other in 0..parties {
        let seen = arrivals.get(other).load(Ordering::SeqCst);
        failures.check(seen == episode + 1 || seen == episode + 2, || {
            format!(
                "{} left episode {episode} while participant {other} had arrived {seen} times",
                who()
            )
        });
    }
}

fn process_barriers(ctx: &Ctx<'_>) -> Result<(), String> {
    let adopted = Mpi::adopt().map_err(|e| e.to_string())?;
    every(programs_communicators(ctx), |(name, comm)| {
        every(ProcessAlgorithm::ALL, |algorithm| {
            let what = format!("{} on {name}", algorithm.name());
            let (rank, size) = (comm.rank() as usize, comm.size() as usize);
            let arrivals = SharedCounters::new(&comm, size)?;
            let mut barrier = ProcessBarrier::new(&adopted, &comm, algorithm)
                .map_err(|e| format!("{what}: build: {e}"))?;
            ensure(barrier.parties() == size && barrier.rank() == rank, || {
                format!(
                    "{what}: the barrier says rank {} of {}, the communicator {rank} of {size}",
                    barrier.rank(),
                    barrier.parties()
                )
            })?;
            let failures = Failures::default();
            for episode in 0..EPISODES {
                arrivals.get(rank).store(episode + 1, Ordering::SeqCst);
                match barrier.wait() {
                    Ok(done) => failures.check(done == episode, || {
                        format!("{what}: wait returned episode {done}, expected {episode}")
                    }),
                    Err(error) => {
                        failures.add(format!("{what}: episode {episode}: {error}"));
                        break;
                    }
                }
                check_arrivals(&failures, &arrivals, size, episode, &|| {
                    format!("{what}: rank {rank}")
                });
            }
            failures.into_result()
        })
    })
}

fn combined_barriers(ctx: &Ctx<'_>) -> Result<(), String> {
    let adopted = Mpi::adopt().map_err(|e| e.to_string())?;
    every(programs_communicators(ctx), |(name, comm)| {
        let (rank, size) = (comm.rank() as usize, comm.size() as usize);
        let arrivals = SharedCounters::new(&comm, size * THREADS)?;
        let barrier = CombinedBarrier::builder(&adopted, &comm, THREADS)
            .build()
            .map_err(|e| format!("combined barrier on {name}: build: {e}"))?;
        ensure(barrier.parties() == size * THREADS, || {
            format!(
                "combined barrier on {name}: {} parties, expected {}",
                barrier.parties(),
                size * THREADS
            )
        })?;
        let failures = Failures::default();
        std::thread::scope(|s| {
            for mut p in barrier.participants() {
                let (arrivals, failures, name) = (&arrivals, &failures, &name);
                s.spawn(move || {
                    let t = p.thread_rank();
                    for episode in 0..EPISODES {
                        arrivals
                            .get(rank * THREADS + t)
                            .store(episode + 1, Ordering::SeqCst);
                        match p.wait() {
                            Ok(done) => failures.check(done.episode() == episode, || {
                                format!(
                                    "combined barrier on {name}: thread {t} returned episode {}, \
                                     expected {episode}",
                                    done.episode()
                                )
                            }),
                            Err(error) => {
                                failures.add(format!(
                                    "combined barrier on {name}: thread {t}, episode {episode}: \
                                     {error}"
                                ));
                                return;
                            }
                        }
                        check_arrivals(failures, arrivals, size * THREADS, episode, &|| {
                            format!("combined barrier on {name}: rank {rank} thread {t}")
                        });
                    }
                });
            }
        });
        failures.into_result()
    })
}

fn hybrid_allreduce(ctx: &Ctx<'_>) -> Result<(), String> {
    let adopted = Mpi::adopt().map_err(|e| e.to_string())?;
    every(programs_communicators(ctx), |(name, comm)| {
        let size = comm.size() as usize;
        let team = HybridTeam::new(&adopted, &comm, THREADS)
            .map_err(|e| format!("hybrid team on {name}: build: {e}"))?;
        ensure(
            team.parties() == size * THREADS && team.processes() == size,
            || {
                format!(
                    "hybrid team on {name}: {} members over {} processes, expected {} over {size}",
                    team.parties(),
                    team.processes(),
                    size * THREADS
                )
            },
        )?;
        // The program's own allreduce on the same communicator, between the team's calls: the
        // team's duplicate keeps the two apart.
        let programs = |value: u64| {
            let mut sum = 0u64;
            comm.all_reduce_into(&value, &mut sum, SystemOperation::sum());
            sum
        };
        let members = team.parties() as u64;
        // Member ranks are 0..members, so the sum of rank + 1 is members (members + 1) / 2.
        let expected = members * (members + 1) / 2;
        let before = programs(comm.rank() as u64 + 1);
        let failures = Failures::default();
        let sums: Vec<AtomicU64> = (0..THREADS).map(|_| AtomicU64::new(0)).collect();
        std::thread::scope(|s| {
            for mut member in team.participants() {
                let (failures, sums, name) = (&failures, &sums, &name);
                s.spawn(move || {
                    let mut sum = [0u64];
                    let mut floats = [0.0f64; 3];
                    for call in 0..EPISODES {
                        let mine = member.rank() as u64 + 1;
                        if let Err(error) = member.allreduce(&[mine], &mut sum, Op::Sum) {
                            failures.add(format!(
                                "hybrid team on {name}: member {}, call {call}: {error}",
                                member.rank()
                            ));
                            return;
                        }
                        failures.check(sum[0] == expected, || {
                            format!(
                                "hybrid team on {name}: allreduce gave {}, expected {expected}",
                                sum[0]
                            )
                        });
                        let input = [1.0, mine as f64, -(mine as f64)];
                        if let Err(error) = member.allreduce(&input, &mut floats, Op::Sum) {
                            failures.add(format!("hybrid team on {name}: f64 allreduce: {error}"));
                            return;
                        }
                        failures.check(
                            floats == [members as f64, expected as f64, -(expected as f64)],
                            || format!("hybrid team on {name}: f64 allreduce gave {floats:?}"),
                        );
                    }
                    sums[member.local_rank()].store(sum[0], Ordering::Relaxed);
                });
            }
        });
        let after = programs(comm.rank() as u64 + 1);
        let ranks = size as u64;
        failures.check(before == after && after == ranks * (ranks + 1) / 2, || {
            format!(
                "the program's own allreduce on {name} gave {before} before the team's calls and \
                 {after} after, expected {}",
                ranks * (ranks + 1) / 2
            )
        });
        // The team's result agrees with the program's MPI_Allreduce over the same members.
        let team_total = programs(sums[0].load(Ordering::Relaxed)) / ranks;
        failures.check(team_total == expected, || {
            format!("ranks disagree on the team's sum on {name}: their mean is {team_total}")
        });
        failures.into_result()
    })
}
