//! What a user sees when a job goes wrong: a rank that dies or aborts while the others wait at
//! a barrier (the job must end through `mpirun`, not hang), a rank that is merely slow (the
//! others warn on stderr, naming it), a program started without `mpirun`, and a thread level
//! too low for a combined barrier.
//!
//! These are ordinary tests: each launches `examples/fault_rank.rs` (the job that misbehaves) with
//! `mpirun` under a time limit and checks its exit status and output. The example binary is found
//! next to this test binary (`<target>/<profile>/examples/fault_rank`, which `cargo test` builds
//! along with the tests); when only this test was built (`cargo test --test mpi_faults`) it is
//! built first with `cargo build --example fault_rank` into the same target directory.

#[path = "mpi_support/mod.rs"]
mod mpi_support;

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use mpi_support::{mpirun_command, run_with_timeout, Finished};

/// A job whose rank died must end well within this; Open MPI needs about a second.
const JOB_LIMIT: Duration = Duration::from_secs(60);

/// The `fault_rank` example binary, built if it is not there yet.
fn fault_rank() -> &'static PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let exe = std::env::current_exe().expect("the test binary's path");
        // <target>/<profile>/deps/mpi_faults-<hash>
        let profile_dir = exe
            .parent()
            .and_then(|deps| deps.parent())
            .expect("the test binary lies in <target>/<profile>/deps")
            .to_path_buf();
        let example = profile_dir.join("examples").join("fault_rank");
        if !example.is_file() {
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
            let mut build = Command::new(cargo);
            build.args(["build", "-p", "phasers-mpi", "--example", "fault_rank"]);
            if profile_dir
                .file_name()
                .is_some_and(|name| name == "release")
            {
                build.arg("--release");
            }
            if let Some(target_dir) = profile_dir.parent() {
                build.arg("--target-dir").arg(target_dir);
            }
            let status = build.status().expect("cargo runs");
            assert!(
                status.success(),
                "building the fault_rank example failed: {build:?}"
            );
        }
        assert!(example.is_file(), "{} is missing", example.display());
        example
    })
}

/// `mpirun -np <np> fault_rank <args>` with `env`, under [`JOB_LIMIT`].
fn launch(np: usize, args: &[&str], env: &[(&str, &str)]) -> Finished {
    let mut command = mpirun_command(np);
    command.arg(fault_rank()).args(args);
    for (name, value) in env {
        command.env(name, value);
    }
    // Warnings of our own are asked for where a test wants them.
    if !env
        .iter()
        .any(|(name, _)| *name == phasers_mpi::STALL_WARN_ENV)
    {
        command.env(phasers_mpi::STALL_WARN_ENV, "off");
    }
    run_with_timeout(&mut command, JOB_LIMIT, true).unwrap_or_else(|hang| panic!("{hang}"))
}

fn show(job: &Finished) -> String {
    format!(
        "status {}, after {:?}\n--- stdout\n{}\n--- stderr\n{}",
        job.status, job.elapsed, job.stdout, job.stderr
    )
}

/// Open MPI passes the status of the rank that failed on as its own.
fn is_open_mpi(job: &Finished) -> bool {
    job.stderr.contains("Open MPI") || job.stderr.contains("mpirun detected")
}

fn rank_exits(barrier: &str) {
    for np in [2, 3] {
        let job = launch(np, &["exit", barrier], &[]);
        let last = np - 1;
        assert!(!job.status.success(), "{np} ranks: {}", show(&job));
        assert!(
            job.stderr
                .contains(&format!("rank {last} exits with status 3")),
            "{}",
            show(&job)
        );
        assert!(
            !job.stdout.contains("rank 0 finished"),
            "rank 0 passed the barrier without rank {last}: {}",
            show(&job)
        );
        if is_open_mpi(&job) {
            assert_eq!(job.status.code(), Some(3), "{}", show(&job));
            assert!(
                job.stderr.contains("exited with non-zero status"),
                "{}",
                show(&job)
            );
        }
    }
}

#[test]
fn a_rank_that_exits_ends_the_job_at_a_process_barrier() {
    rank_exits("process");
}

#[test]
fn a_rank_that_exits_ends_the_job_at_a_combined_barrier() {
    rank_exits("combined");
}

fn rank_aborts(barrier: &str) {
    let job = launch(2, &["abort", barrier], &[]);
    assert!(!job.status.success(), "{}", show(&job));
    assert!(
        job.stderr.contains("rank 1 calls MPI_Abort(5)"),
        "{}",
        show(&job)
    );
    assert!(!job.stdout.contains("rank 0 finished"), "{}", show(&job));
    if is_open_mpi(&job) {
        assert_eq!(job.status.code(), Some(5), "{}", show(&job));
        assert!(
            job.stderr.contains("MPI_ABORT was invoked on rank 1"),
            "{}",
            show(&job)
        );
    }
}

#[test]
fn a_rank_that_aborts_ends_the_job_at_a_process_barrier() {
    rank_aborts("process");
}

#[test]
fn a_rank_that_aborts_ends_the_job_at_a_combined_barrier() {
    rank_aborts("combined");
}

fn slow_rank_warns(barrier: &str) {
    let job = launch(2, &["slow", barrier], &[(phasers_mpi::STALL_WARN_ENV, "1")]);
    assert!(job.status.success(), "{}", show(&job));
    for rank in 0..2 {
        assert!(
            job.stdout
                .contains(&format!("rank {rank} finished 6 episodes")),
            "{}",
            show(&job)
        );
    }
    // Rank 0 waits 3 s for rank 1 in episode 3 of the process step (a combined barrier's
    // leader runs it): at least the warnings after 1 s and 2 s.
    let warning = "phasers-mpi: rank 0 has waited";
    let warnings: Vec<&str> = job.stderr.lines().filter(|l| l.contains(warning)).collect();
    assert!(
        warnings.len() >= 2,
        "expected warnings after 1 s and 2 s: {}",
        show(&job)
    );
    for line in warnings {
        assert!(
            line.contains("dissemination (episode 3) for rank(s) [1]")
                && line.contains(phasers_mpi::STALL_WARN_ENV),
            "the warning should name the operation, the episode, the late rank and how to \
             silence it: {line}"
        );
    }
    assert!(
        !job.stderr.contains("rank 1 has waited"),
        "only rank 0 waited: {}",
        show(&job)
    );
}

#[test]
fn a_slow_rank_is_named_in_the_stall_warning_at_a_process_barrier() {
    slow_rank_warns("process");
}

#[test]
fn a_slow_rank_is_named_in_the_stall_warning_at_a_combined_barrier() {
    slow_rank_warns("combined");
}

#[test]
fn stall_warnings_can_be_turned_off() {
    let job = launch(
        2,
        &["slow", "process"],
        &[(phasers_mpi::STALL_WARN_ENV, "off")],
    );
    assert!(job.status.success(), "{}", show(&job));
    assert!(!job.stderr.contains("has waited"), "{}", show(&job));
}

/// The variables by which `Mpi::init` recognizes a launcher; the test harness may itself run
/// under one.
const LAUNCHER_VARIABLES: [&str; 5] = [
    "OMPI_COMM_WORLD_SIZE",
    "PMIX_RANK",
    "PMI_SIZE",
    "PMI_RANK",
    "MPI_LOCALNRANKS",
];

fn without_launcher(args: &[&str]) -> Command {
    let mut command = Command::new(fault_rank());
    command.args(args);
    for name in LAUNCHER_VARIABLES {
        command.env_remove(name);
    }
    command.env_remove(phasers_mpi::SINGLETON_ENV);
    command
}

#[test]
fn without_mpirun_the_program_says_how_to_launch_it() {
    let job = run_with_timeout(&mut without_launcher(&["none", "process"]), JOB_LIMIT, true)
        .unwrap_or_else(|hang| panic!("{hang}"));
    assert_eq!(job.status.code(), Some(1), "{}", show(&job));
    assert!(
        job.stderr.contains("not started by an MPI launcher"),
        "{}",
        show(&job)
    );
    assert!(
        job.stderr.contains("mpirun -np 2") && job.stderr.contains("fault_rank"),
        "the message should show the command to run: {}",
        show(&job)
    );
    assert!(
        job.stderr.contains(phasers_mpi::SINGLETON_ENV),
        "{}",
        show(&job)
    );
}

#[test]
fn singleton_runs_one_rank_without_mpirun() {
    let mut command = without_launcher(&["none", "combined"]);
    command.env(phasers_mpi::SINGLETON_ENV, "1");
    let job =
        run_with_timeout(&mut command, JOB_LIMIT, true).unwrap_or_else(|hang| panic!("{hang}"));
    assert!(job.status.success(), "{}", show(&job));
    assert!(
        job.stdout.contains("rank 0 finished 6 episodes"),
        "{}",
        show(&job)
    );
}

#[test]
fn a_combined_barrier_of_two_threads_needs_serialized() {
    let job = launch(2, &["single-threading"], &[]);
    assert!(!job.status.success(), "{}", show(&job));
    assert!(
        job.stderr.contains("needs MPI thread support Serialized")
            && job.stderr.contains("provides only Single"),
        "{}",
        show(&job)
    );
}
