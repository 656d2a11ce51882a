//! The environment and bad input through the public API: what `Mpi` reports, a second
//! `Mpi::init`, algorithm names, and the combined barrier's builder errors.

use mpi::traits::Communicator;
use phasers_mpi::{
    mpi, CombinedBarrier, Error, HybridTeam, Mpi, ProcessAlgorithm, Threading,
    MAX_THREADS_PER_PROCESS,
};

use crate::case::{ensure, Case, Ctx};

pub fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "mpi_environment_reports_the_world",
            run: environment,
        },
        Case {
            name: "mpi_init_twice_is_already_initialized",
            run: init_twice,
        },
        Case {
            name: "process_algorithm_names_round_trip",
            run: algorithm_names,
        },
        Case {
            name: "combined_builder_rejects_bad_thread_counts",
            run: builder_errors,
        },
        Case {
            name: "hybrid_builder_rejects_bad_thread_counts_on_every_rank",
            run: hybrid_builder_errors,
        },
    ]
}

fn environment(ctx: &Ctx<'_>) -> Result<(), String> {
    ensure(phasers_mpi::launched_by_mpirun(), || {
        "launched_by_mpirun() is false under mpirun".to_owned()
    })?;
    let world = ctx.mpi.world();
    ensure(
        ctx.mpi.rank() == world.rank() as usize && ctx.mpi.size() == world.size() as usize,
        || {
            format!(
                "Mpi says rank {} of {}, the world says {} of {}",
                ctx.mpi.rank(),
                ctx.mpi.size(),
                world.rank(),
                world.size()
            )
        },
    )?;
    ensure(ctx.mpi.threading() >= Threading::Serialized, || {
        format!(
            "asked for Serialized, Mpi::init succeeded with {:?}",
            ctx.mpi.threading()
        )
    })?;
    ensure(
        Threading::Single < Threading::Funneled
            && Threading::Funneled < Threading::Serialized
            && Threading::Serialized < Threading::Multiple,
        || "threading levels are not ordered weakest first".to_owned(),
    )
}

fn init_twice(_ctx: &Ctx<'_>) -> Result<(), String> {
    match Mpi::init(Threading::Single) {
        Err(error @ Error::AlreadyInitialized) => {
            ensure(error.to_string().contains("already initialized"), || {
                format!("the message does not say what happened: {error}")
            })
        }
        Err(other) => Err(format!(
            "a second Mpi::init returned {other:?}, expected AlreadyInitialized"
        )),
        Ok(_) => Err("a second Mpi::init succeeded".to_owned()),
    }
}

fn algorithm_names(_ctx: &Ctx<'_>) -> Result<(), String> {
    for algorithm in ProcessAlgorithm::ALL {
        let parsed: ProcessAlgorithm =
            algorithm.name().parse().map_err(|e: Error| e.to_string())?;
        ensure(parsed == algorithm, || {
            format!("{:?} parses back as {parsed:?}", algorithm.name())
        })?;
        let upper: ProcessAlgorithm = algorithm
            .name()
            .to_uppercase()
            .parse()
            .map_err(|e: Error| e.to_string())?;
        ensure(upper == algorithm, || {
            format!("{:?} in capitals parses as {upper:?}", algorithm.name())
        })?;
    }
    match "ring".parse::<ProcessAlgorithm>() {
        Err(error @ Error::InvalidArgument { .. }) => {
            let text = error.to_string();
            ensure(
                ProcessAlgorithm::ALL
                    .iter()
                    .all(|a| text.contains(a.name()))
                    && text.contains("ring"),
                || format!("the message names neither the input nor the choices: {text}"),
            )
        }
        other => Err(format!("\"ring\" parsed as {other:?}")),
    }
}

fn builder_errors(ctx: &Ctx<'_>) -> Result<(), String> {
    // Not collective: it fails before building anything.
    match CombinedBarrier::builder(ctx.mpi, ctx.comm, 0).build() {
        Err(error @ Error::InvalidArgument { .. }) => {
            ensure(error.to_string().contains("at least 1"), || {
                format!("0 threads: the message does not say what is accepted: {error}")
            })?
        }
        Err(other) => {
            return Err(format!(
                "0 threads gave {other:?}, expected InvalidArgument"
            ))
        }
        Ok(_) => return Err("a combined barrier of 0 threads was built".to_owned()),
    }
    // Every rank asks for too many threads, so every rank reaches the collective part.
    let too_many = phasers::barrier::MAX_PARTIES + 1;
    match CombinedBarrier::builder(ctx.mpi, ctx.comm, too_many).build() {
        Err(Error::Core(phasers::Error::InvalidArgument { .. })) => {}
        Err(other) => {
            return Err(format!(
                "{too_many} threads gave {other:?}, expected Core(InvalidArgument)"
            ))
        }
        Ok(_) => {
            return Err(format!(
                "a combined barrier of {too_many} threads was built"
            ))
        }
    }
    let barrier = CombinedBarrier::builder(ctx.mpi, ctx.comm, 3)
        .local(phasers::Algorithm::Tournament)
        .process(ProcessAlgorithm::McsTree)
        .build()
        .map_err(|e| e.to_string())?;
    ensure(
        barrier.threads() == 3
            && barrier.local_algorithm() == phasers::Algorithm::Tournament
            && barrier.process_algorithm() == ProcessAlgorithm::McsTree,
        || {
            format!(
                "the barrier reports {} threads, {:?}, {:?}",
                barrier.threads(),
                barrier.local_algorithm(),
                barrier.process_algorithm()
            )
        },
    )?;
    let ranks: Vec<usize> = barrier
        .participants()
        .iter()
        .map(|p| p.thread_rank())
        .collect();
    ensure(ranks == [0, 1, 2], || {
        format!("participants have thread ranks {ranks:?}, expected [0, 1, 2]")
    })
}

/// A thread count of 0, or above the limit, on one rank only: every rank gets the same
/// `InvalidArgument` naming that rank (none is left waiting in a collective), and a good team
/// builds afterwards.
fn hybrid_builder_errors(ctx: &Ctx<'_>) -> Result<(), String> {
    let me = ctx.comm.rank() as usize;
    let last = ctx.comm.size() as usize - 1;
    for bad in [0, MAX_THREADS_PER_PROCESS + 1] {
        let threads = if me == last { bad } else { 1 };
        match HybridTeam::new(ctx.mpi, ctx.comm, threads) {
            Err(error @ Error::InvalidArgument { .. }) => {
                let text = error.to_string();
                ensure(
                    text.contains(&format!("process {last}"))
                        && text.contains(&bad.to_string())
                        && text.contains(&MAX_THREADS_PER_PROCESS.to_string()),
                    || format!("{bad} threads on rank {last}: the message says too little: {text}"),
                )?
            }
            Err(other) => {
                return Err(format!(
                    "{bad} threads on rank {last} gave {other:?}, expected InvalidArgument"
                ))
            }
            Ok(_) => {
                return Err(format!(
                    "a hybrid team with {bad} threads on rank {last} was built"
                ))
            }
        }
    }
    let team = HybridTeam::new(ctx.mpi, ctx.comm, 1).map_err(|e| e.to_string())?;
    let mut member = team.participants().pop().ok_or("no member handed out")?;
    member.barrier().map_err(|e| e.to_string())
}
