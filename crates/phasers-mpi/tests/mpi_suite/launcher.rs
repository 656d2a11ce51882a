//! Started by `cargo test` (no MPI launcher around it), the suite re-launches itself under
//! `mpirun`, once per rank count, and fails when any job fails or outlives its time limit.
//!
//! Environment:
//! - `PHASERS_MPI_TEST_NP`: rank counts, comma separated (default `2,4`);
//! - `PHASERS_MPI_TEST_TIMEOUT`: seconds one job may take before it is stopped (default 300);
//! - `PHASERS_MPIRUN`: the launcher (default `mpirun`); `PHASERS_MPIRUN_ARGS`: extra arguments.

use std::time::{Duration, Instant};

#[path = "../mpi_support/mod.rs"]
mod mpi_support;

use mpi_support::{mpirun_command, run_with_timeout};

const DEFAULT_NP: &str = "2,4";
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);

/// Runs one job per rank count; returns the exit status of the test (0: every job passed).
pub fn run_jobs(filter: Option<&str>) -> i32 {
    let counts = match rank_counts() {
        Ok(counts) => counts,
        Err(message) => {
            eprintln!("mpi_suite: {message}");
            return 1;
        }
    };
    let timeout = std::env::var("PHASERS_MPI_TEST_TIMEOUT")
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .map_or(DEFAULT_TIMEOUT, Duration::from_secs_f64);
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(error) => {
            eprintln!("mpi_suite: cannot find this test binary to launch it: {error}");
            return 1;
        }
    };
    let mut failed = Vec::new();
    for np in counts {
        let mut command = mpirun_command(np);
        command.arg(&exe).args(filter);
        println!("mpi_suite: launching {command:?}");
        let start = Instant::now();
        match run_with_timeout(&mut command, timeout, false).map(|f| f.status) {
            Ok(status) if status.success() => {
                println!(
                    "mpi_suite: {np} ranks passed in {:.1} s",
                    start.elapsed().as_secs_f64()
                );
            }
            Ok(status) => {
                eprintln!("mpi_suite: the job with {np} ranks failed: {status}");
                failed.push(np);
            }
            Err(message) => {
                eprintln!(
                    "mpi_suite: the job with {np} ranks: {message}\n(set PHASERS_MPI_TEST_TIMEOUT \
                     to allow more than {timeout:?})"
                );
                failed.push(np);
            }
        }
    }
    if failed.is_empty() {
        0
    } else {
        eprintln!(
            "mpi_suite: FAILED with {failed:?} ranks (the cases that failed are listed above)"
        );
        1
    }
}

fn rank_counts() -> Result<Vec<usize>, String> {
    let spec = std::env::var("PHASERS_MPI_TEST_NP").unwrap_or_else(|_| DEFAULT_NP.to_owned());
    spec.split(',')
        .map(|part| match part.trim().parse::<usize>() {
            Ok(np) if np >= 2 => Ok(np),
            _ => Err(format!(
                "PHASERS_MPI_TEST_NP={spec:?}: expected rank counts of at least 2, comma separated"
            )),
        })
        .collect()
}
