//! Launching MPI jobs from tests: the `mpirun` command line a small shared machine needs, and
//! running a job with a time limit, so a hung job fails a test instead of hanging CI. Shared by
//! the suite's self-launch (`mpi_suite/launcher.rs`) and the fault tests (`mpi_faults.rs`).
#![allow(dead_code)]

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// `mpirun -np <np>` with what a small shared machine needs: no binding (several threads per
/// rank), oversubscription allowed (more ranks than cores), and root allowed when we are root.
/// `PHASERS_MPIRUN` replaces `mpirun`; `PHASERS_MPIRUN_ARGS` adds arguments.
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

/// What a finished job left.
pub struct Finished {
    pub status: ExitStatus,
    pub elapsed: Duration,
    /// Captured output (empty when the output went to the terminal).
    pub stdout: String,
    pub stderr: String,
}

/// Runs `command` in its own process group, capturing its output when `capture`. Past `timeout`
/// it stops the whole group (mpirun and its ranks) with SIGTERM, then SIGKILL, and returns an
/// error with whatever output it had.
pub fn run_with_timeout(
    command: &mut Command,
    timeout: Duration,
    capture: bool,
) -> Result<Finished, String> {
    let (out, err) = if capture {
        (Stdio::piped(), Stdio::piped())
    } else {
        (Stdio::inherit(), Stdio::inherit())
    };
    let start = Instant::now();
    let mut child = command
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .process_group(0)
        .spawn()
        .map_err(|e| {
            format!(
                "cannot start {command:?}: {e} (is Open MPI installed? run scripts/setup-mpi.sh)"
            )
        })?;
    let stdout = child.stdout.take().map(read_in_background);
    let stderr = child.stderr.take().map(read_in_background);
    let collect = |reader: Option<std::thread::JoinHandle<String>>| {
        reader.map_or_else(String::new, |r| r.join().unwrap_or_default())
    };
    let deadline = start + timeout;
    loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            return Ok(Finished {
                status,
                elapsed: start.elapsed(),
                stdout: collect(stdout),
                stderr: collect(stderr),
            });
        }
        if Instant::now() >= deadline {
            stop_group(&mut child);
            return Err(format!(
                "{command:?} was still running after {timeout:?}: it hangs (stopped)\n\
                 --- stdout\n{}\n--- stderr\n{}",
                collect(stdout),
                collect(stderr)
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn read_in_background(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

fn stop_group(child: &mut Child) {
    let group = child.id() as libc::pid_t;
    for signal in [libc::SIGTERM, libc::SIGKILL] {
        // SAFETY: signals the process group `run_with_timeout` created for the child.
        unsafe { libc::kill(-group, signal) };
        let until = Instant::now() + Duration::from_secs(5);
        while Instant::now() < until {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}
