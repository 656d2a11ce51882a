//! `phasers-mpi`: what phasers-mpi's barriers and hybrid collectives cost, against the MPI
//! round trip and the cache-line round trip (the floors), `MPI_Barrier`, the EPCC mixed-mode
//! barrier (OpenMP barrier + `MPI_Barrier`) and, for each hybrid collective, the MPI collective
//! over as many ranks as the team has members, all in one run.
//!
//! ```text
//! mpirun --allow-run-as-root -np 2 --bind-to none target/release/phasers-mpi bench \
//!     [--time SECS] [--threads 1,2,4] [--collectives allreduce,broadcast] [--rounds N] \
//!     [--json F] [--csv F] [--hybrid-csv F] [--plot F.svg]
//! ```
//!
//! Every row runs on the first `p` ranks of the world; the others wait at a polled
//! `MPI_Ibarrier` with naps, so they leave the cores to the row. Each rank count agrees on the
//! operations per sample (rank 0 calibrates and broadcasts), and every barrier row first passes a
//! check that it really waits (see `check.rs`). Rank 0 prints and writes the files.

mod bench;
mod calls;
mod check;
mod cli;
mod collective;
mod combined_grid;
mod crew;
mod csv_out;
mod error;
mod expect;
mod floor;
mod harness;
mod heatmap;
mod hybrid;
mod hybrid_csv;
mod hybrid_group;
mod machine;
mod omp_mpi;
mod outputs;
mod process_rows;
mod report;
mod rounds;
mod stats;
mod subset;
mod table;

use std::process::ExitCode;

use clap::Parser;
use phasers_mpi::mpi::traits::Communicator;
use phasers_mpi::{Mpi, Threading};

use crate::bench::Outcome;
use crate::cli::{Cli, Command};

fn main() -> ExitCode {
    let Cli {
        command: Command::Bench(args),
    } = Cli::parse();
    // Serialized: the combined barrier's leader may be any thread.
    let mpi = match Mpi::init(Threading::Serialized) {
        Ok(mpi) => mpi,
        Err(error) => {
            eprintln!("phasers-mpi: {error}");
            return ExitCode::from(2);
        }
    };
    match bench::run(&mpi, &args) {
        Ok(Outcome::Done) => ExitCode::SUCCESS,
        Ok(Outcome::OutputRefused) => ExitCode::FAILURE,
        Err(error) => {
            eprintln!("phasers-mpi: rank {}: {error}", mpi.rank());
            // The other ranks may be waiting for this one in a collective: end the whole job.
            mpi.world().abort(1)
        }
    }
}
