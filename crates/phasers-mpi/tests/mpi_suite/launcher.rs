//! Started by `cargo test` (no MPI launcher around it), the suite re-launches itself under
//! `mpirun`, once per rank count, and fails when any job fails or outlives its time limit.
//!
//! Environment:
//! - `PHASERS_MPI_TEST_NP`: rank counts, comma separated (default `2,4`);
//! - `PHASERS_MPI_TEST_TIMEOUT`: seconds one job may take before it is stopped (default 300);
//! - `PHASERS_MPIRUN`: the launcher (default `mpirun`); `PHASERS_MPIRUN_ARGS`: extra arguments.

use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

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
        match run_with_timeout(&mut command, timeout) {
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
                eprintln!("mpi_suite: the job with {np} ranks: {message}");
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

/// `mpirun -np <np>` with what a small shared machine needs: no binding (several threads per
/// rank), oversubscription allowed (more ranks than cores), and root allowed when we are root.
pub fn mpirun_command(np: usize) -> Command {
    let mut command =
        Command::new(std::env::var("PHASERS_MPIRUN").unwrap_or_else(|_| "mpirun".to_owned()));
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } == 0 {
        command.arg("--allow-run-as-root");
    }
    command.args([
        "-np",
        &np.to_string(),
        "--bind-to",
        "none",
        "--oversubscribe",
    ]);
    if let Ok(extra) = std::env::var("PHASERS_MPIRUN_ARGS") {
        command.args(extra.split_whitespace());
    }
    command
}

/// Runs `command` in its own process group; past `timeout` it stops the whole group (mpirun and
/// its ranks) with SIGTERM, then SIGKILL, and returns an error.
pub fn run_with_timeout(command: &mut Command, timeout: Duration) -> Result<ExitStatus, String> {
    let mut child = command
        .stdin(Stdio::null())
        .process_group(0)
        .spawn()
        .map_err(|e| {
            format!(
                "cannot start {command:?}: {e} (is Open MPI installed? run scripts/setup-mpi.sh)"
            )
        })?;
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            return Ok(status);
        }
        if Instant::now() >= deadline {
            stop_group(&mut child);
            return Err(format!(
                "still running after {timeout:?}: it hangs (stopped); set \
                 PHASERS_MPI_TEST_TIMEOUT to allow more"
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn stop_group(child: &mut Child) {
    let group = child.id() as libc::pid_t;
    for (signal, grace) in [
        (libc::SIGTERM, Duration::from_secs(5)),
        (libc::SIGKILL, Duration::from_secs(5)),
    ] {
        // SAFETY: signals the process group this function's caller created for the child.
        unsafe { libc::kill(-group, signal) };
        let until = Instant::now() + grace;
        while Instant::now() < until {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}
