//! The MPI test suite: every case runs on every rank of one `mpirun` job.
//!
//! `cargo test` starts this binary without a launcher; it then re-launches itself with
//! `mpirun -np 2` and `mpirun -np 4 --oversubscribe` (see [`launcher`]) and fails if either job
//! fails. Under `mpirun` it initializes MPI once and runs the cases in order on every rank, each on
//! its own duplicate of the world communicator; rank 0 prints `ok` or `FAILED` per case, and the
//! job exits non-zero when any case failed on any rank. A watchdog aborts the job (`MPI_Abort`)
//! when one case runs longer than [`watchdog::HANG`], so a hang fails with a message.
//!
//! ```text
//! cargo test -p phasers-mpi --test mpi_suite                      # np 2, then np 4
//! PHASERS_MPI_TEST_NP=3 cargo test -p phasers-mpi --test mpi_suite   # np 3 only
//! cargo test -p phasers-mpi --test mpi_suite -- combined           # cases whose name has "combined"
//! mpirun --allow-run-as-root -np 2 --bind-to none target/debug/deps/mpi_suite-<hash> [filter]
//! ```
//!
//! The cases need every rank on one node: they share memory through a file in `/dev/shm`.

mod adopt;
mod case;
mod combined;
mod errors;
mod hybrid;
mod hybrid_composed;
mod hybrid_direct;
mod hybrid_direct_checked;
mod hybrid_engine_reuse;
mod hybrid_faults;
mod hybrid_icomposed;
mod hybrid_mismatch;
mod launcher;
mod process;
mod rng;
mod shm;
mod watchdog;

use std::time::Instant;

use mpi::collective::SystemOperation;
use mpi::traits::{Communicator, CommunicatorCollectives};
use phasers_mpi::{mpi, Mpi, Threading};

use case::{Case, Ctx};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--list") {
        for case in all_cases() {
            println!("{}: test", case.name);
        }
        return;
    }
    // `cargo test` passes its own flags (`--nocapture`, `--test-threads=..`); the first other
    // argument filters the cases by name.
    let filter = args.iter().find(|a| !a.starts_with('-')).cloned();
    if !phasers_mpi::launched_by_mpirun() {
        std::process::exit(launcher::run_jobs(filter.as_deref()));
    }
    std::process::exit(run_under_mpirun(filter.as_deref()));
}

fn all_cases() -> Vec<Case> {
    let mut cases = Vec::new();
    cases.extend(errors::cases());
    cases.extend(process::cases());
    cases.extend(combined::cases());
    cases.extend(hybrid::cases());
    cases.extend(hybrid_composed::cases());
    cases.extend(hybrid_icomposed::cases());
    cases.extend(hybrid_direct_checked::cases());
    cases.extend(hybrid_direct::cases());
    cases.extend(hybrid_engine_reuse::cases());
    cases.extend(hybrid_faults::cases());
    cases.extend(hybrid_mismatch::cases());
    cases.extend(adopt::cases());
    cases
}

/// Runs the cases on this rank; returns the exit status every rank agrees on.
fn run_under_mpirun(filter: Option<&str>) -> i32 {
    case::quiet_intentional_panics();
    let mpi = match Mpi::init(Threading::Serialized) {
        Ok(mpi) => mpi,
        Err(error) => {
            eprintln!("mpi_suite: Mpi::init failed: {error}");
            return 2;
        }
    };
    let world = mpi.world();
    let (rank, size) = (mpi.rank(), mpi.size());
    if world.split_shared(0).size() != world.size() {
        if rank == 0 {
            eprintln!("mpi_suite: every rank must run on one node (the cases share memory)");
        }
        return 2;
    }
    let watchdog = watchdog::Watchdog::start(rank);
    let cases: Vec<Case> = all_cases()
        .into_iter()
        .filter(|c| filter.map_or(true, |f| c.name.contains(f)))
        .collect();
    if rank == 0 {
        println!(
            "\nrunning {} MPI case(s) on {size} ranks ({:?} threads)",
            cases.len(),
            mpi.threading()
        );
    }
    let suite_start = Instant::now();
    let mut failed = Vec::new();
    for (index, case) in cases.iter().enumerate() {
        watchdog.arm(case.name);
        let comm = world.duplicate();
        let ctx = Ctx {
            mpi: &mpi,
            comm: &comm,
            rank,
            size,
            seed: 0x5eed_0000 + index as u64,
        };
        let start = Instant::now();
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (case.run)(&ctx)))
            .unwrap_or_else(|payload| Err(format!("panicked: {}", case::payload_text(&*payload))));
        let elapsed = start.elapsed();
        watchdog.disarm();
        if let Err(message) = &outcome {
            eprintln!("mpi_suite: rank {rank}: {}: {message}", case.name);
        }
        let mine = u8::from(outcome.is_err());
        let mut flags = vec![0u8; size];
        world.all_gather_into(&mine, &mut flags[..]);
        let failing: Vec<usize> = (0..size).filter(|&r| flags[r] != 0).collect();
        if rank == 0 {
            if failing.is_empty() {
                println!("test {} ... ok ({:.2} s)", case.name, elapsed.as_secs_f64());
            } else {
                println!(
                    "test {} ... FAILED on rank(s) {failing:?} ({:.2} s)",
                    case.name,
                    elapsed.as_secs_f64()
                );
            }
        }
        if !failing.is_empty() {
            failed.push(case.name);
        }
    }
    let mut any = 0u8;
    world.all_reduce_into(
        &u8::from(!failed.is_empty()),
        &mut any,
        SystemOperation::max(),
    );
    if rank == 0 {
        println!(
            "\nmpi_suite on {size} ranks: {} passed, {} failed {failed:?} in {:.1} s",
            cases.len() - failed.len(),
            failed.len(),
            suite_start.elapsed().as_secs_f64()
        );
    }
    drop(watchdog);
    drop(mpi);
    i32::from(any != 0)
}
