//! An existing rsmpi program that adopts phasers-mpi in a few lines.
//!
//! The program counts the primes below [`LIMIT`]: each rank counts its block of numbers and
//! `MPI_Allreduce` adds the counts. It initializes MPI itself and keeps doing so; the lines marked
//! "added" give each rank [`THREADS`] threads that share its block, with one hybrid team over
//! every thread of every rank (built on the program's own `world`) and a process barrier among the
//! ranks of each node (built on the program's own `split_shared` communicator). Both counts must
//! agree with the known one.
//!
//! `Mpi::adopt` needs no launcher check and no `PHASERS_MPI_SINGLETON`: the program, not
//! phasers-mpi, decides how MPI starts, and rsmpi starts a lone process as a one-rank world.
//!
//! ```text
//! cargo run -p phasers-mpi --example adopt_rsmpi          # one rank
//! cargo test -p phasers-mpi --example adopt_rsmpi         # the same, as a test
//! mpirun --allow-run-as-root -np 2 --bind-to none target/debug/examples/adopt_rsmpi
//! mpirun --allow-run-as-root -np 4 --oversubscribe --bind-to none target/debug/examples/adopt_rsmpi
//! ```

use mpi::collective::SystemOperation;
use mpi::traits::{Communicator, CommunicatorCollectives};
use phasers::Op;
use phasers_mpi::{mpi, Error, HybridTeam, Mpi, ProcessAlgorithm, ProcessBarrier};

/// Count the primes below this.
const LIMIT: u64 = 100_000;
/// There are 9592 primes below 100 000 (the prime-counting function, pi(10^5)).
const PRIMES_BELOW_LIMIT: u64 = 9592;
/// Threads each rank adds with phasers-mpi.
const THREADS: usize = 2;

fn is_prime(n: u64) -> bool {
    n >= 2 && (2..).take_while(|d| d * d <= n).all(|d| n % d != 0)
}

/// The primes in `part` of `parts` equal blocks of `0..LIMIT`.
fn count_primes(part: usize, parts: usize) -> u64 {
    let block = LIMIT.div_ceil(parts as u64);
    let start = block * part as u64;
    (start..(start + block).min(LIMIT))
        .filter(|&n| is_prime(n))
        .count() as u64
}

fn main() -> Result<(), Error> {
    // The existing program: rsmpi owns MPI. Threads need `Serialized` (any of them may lead a
    // phasers-mpi call into MPI); the program asks for it where it initializes MPI.
    let (universe, provided) = mpi::initialize_with_threading(mpi::Threading::Serialized)
        .expect("MPI is initialized once, here");
    let world = universe.world();
    let node = world.split_shared(0);
    let (rank, ranks) = (world.rank() as usize, world.size() as usize);
    let mut counted = 0u64;
    world.all_reduce_into(
        &count_primes(rank, ranks),
        &mut counted,
        SystemOperation::sum(),
    );

    // Added: phasers-mpi uses the program's MPI and its communicators.
    let phasers = Mpi::adopt()?;
    assert!(
        phasers.threading() >= phasers_mpi::Threading::Serialized,
        "{provided:?}"
    );
    let team = HybridTeam::new(&phasers, &world, THREADS)?;
    let mut node_barrier = ProcessBarrier::new(&phasers, &node, ProcessAlgorithm::Dissemination)?;

    // Added: every thread of every rank counts its own block; the team adds the counts.
    let mut threaded = 0u64;
    std::thread::scope(|s| {
        let threads: Vec<_> = team
            .participants()
            .into_iter()
            .map(|mut member| {
                s.spawn(move || {
                    let mine = count_primes(member.rank(), member.parties());
                    let mut total = [0u64];
                    member.allreduce(&[mine], &mut total, Op::Sum)?;
                    Ok::<u64, Error>(total[0])
                })
            })
            .collect();
        for thread in threads {
            threaded = thread.join().expect("a counting thread panicked")?;
        }
        Ok::<(), Error>(())
    })?;
    // Added: the ranks of this node meet before rank 0 of the node reports.
    node_barrier.wait()?;

    assert_eq!(counted, PRIMES_BELOW_LIMIT, "the program's own count");
    assert_eq!(threaded, PRIMES_BELOW_LIMIT, "the count of the threads");
    if rank == 0 {
        println!(
            "adopt_rsmpi: {ranks} rank(s) found {counted} primes below {LIMIT}; {} thread(s) of \
             a phasers-mpi hybrid team found {threaded}",
            team.parties()
        );
    }
    // phasers-mpi's objects go first; the program finalizes MPI when `universe` drops.
    drop((node_barrier, team, phasers));
    Ok(())
}

#[cfg(test)]
mod tests {
    /// `cargo test` runs the whole program as a one-rank MPI world.
    #[test]
    fn the_program_runs_as_a_single_rank() {
        super::main().expect("adopt_rsmpi runs as a single rank");
    }
}
