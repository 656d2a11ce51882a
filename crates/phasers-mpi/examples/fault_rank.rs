//! A job in which the last rank misbehaves, for the fault tests (`tests/mpi_faults.rs`) and for
//! trying by hand what a user would see:
//!
//! ```text
//! mpirun -np 2 target/debug/examples/fault_rank <fault> <barrier>
//! ```
//!
//! `<fault>`: `exit` (the last rank leaves with `exit(3)` without finalizing MPI), `abort` (it
//! calls `MPI_Abort` with code 5), `slow` (it arrives 3 s late once), `none`; `single-threading`
//! asks MPI for `Threading::Single` and then builds a combined barrier of 2 threads, which must
//! fail with `Error::Threading`. `<barrier>`: `process` (a `ProcessBarrier`) or `combined` (a
//! `CombinedBarrier` of 2 threads per rank). Every other rank waits at the barrier without a
//! timeout; the job must end anyway (through `mpirun`), or finish after the slow rank.

use std::time::Duration;

use phasers_mpi::mpi::topology::SimpleCommunicator;
use phasers_mpi::mpi::traits::Communicator;
use phasers_mpi::{CombinedBarrier, Error, Mpi, ProcessAlgorithm, ProcessBarrier, Threading};

/// Episodes before and after the fault.
const BEFORE: u64 = 3;
const AFTER: u64 = 3;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let fault = args.first().map_or("none", String::as_str).to_owned();
    let barrier = args.get(1).map_or("process", String::as_str).to_owned();
    if let Err(error) = run(&fault, &barrier) {
        eprintln!("fault_rank: {error}");
        std::process::exit(1);
    }
}

fn run(fault: &str, barrier: &str) -> Result<(), Error> {
    if fault == "single-threading" {
        let mpi = Mpi::init(Threading::Single)?;
        return CombinedBarrier::builder(&mpi, mpi.world(), 2)
            .build()
            .map(|_| println!("fault_rank: a 2-thread combined barrier was built under Single"));
    }
    let mpi = Mpi::init(Threading::Serialized)?;
    let rank = mpi.rank();
    let faulty = rank == mpi.size() - 1;
    // Before each episode: the faulty rank misbehaves at episode BEFORE. (The threads of a
    // combined barrier call this, and an `Mpi` is not `Sync`: it takes only the rank.)
    let act = |episode: u64| {
        if !faulty || episode != BEFORE {
            return;
        }
        match fault {
            "exit" => {
                eprintln!("fault_rank: rank {rank} exits with status 3");
                std::process::exit(3);
            }
            "abort" => {
                eprintln!("fault_rank: rank {rank} calls MPI_Abort(5)");
                SimpleCommunicator::world().abort(5);
            }
            "slow" => std::thread::sleep(Duration::from_secs(3)),
            _ => {}
        }
    };
    match barrier {
        "process" => {
            let mut barrier =
                ProcessBarrier::new(&mpi, mpi.world(), ProcessAlgorithm::Dissemination)?;
            for episode in 0..BEFORE + AFTER {
                act(episode);
                barrier.wait()?;
            }
        }
        "combined" => {
            // Dissemination, as the process barrier above, rather than the default Auto: the
            // stall warning then names the algorithm and the late rank the same way every run.
            let barrier = CombinedBarrier::builder(&mpi, mpi.world(), 2)
                .process(ProcessAlgorithm::Dissemination)
                .build()?;
            std::thread::scope(|s| {
                let threads: Vec<_> = barrier
                    .participants()
                    .into_iter()
                    .map(|mut p| {
                        let act = &act;
                        s.spawn(move || -> Result<(), Error> {
                            for episode in 0..BEFORE + AFTER {
                                if p.thread_rank() == 0 {
                                    act(episode);
                                }
                                p.wait()?;
                            }
                            Ok(())
                        })
                    })
                    .collect();
                threads
                    .into_iter()
                    .try_for_each(|t| t.join().expect("a barrier thread panicked"))
            })?;
        }
        other => {
            return Err(Error::InvalidArgument {
                message: format!("unknown barrier {other:?}; use process or combined"),
            })
        }
    }
    println!(
        "fault_rank: rank {} finished {} episodes",
        mpi.rank(),
        BEFORE + AFTER
    );
    Ok(())
}
