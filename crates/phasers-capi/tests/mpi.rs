//! The MPI entry points (cargo feature `mpi`, `include/phasers_mpi.h`) from a C MPI program:
//! `tests/c/mpi_comm.c`, compiled with `mpicc` (warnings as errors) and run by `mpirun` on 2
//! ranks and on 4 oversubscribed ranks; and the header declares exactly the `phasers_mpi_*`
//! functions the library exports.
//!
//! ```text
//! cargo test -p phasers-capi --features mpi --test mpi
//! ```
//!
//! Needs Open MPI (scripts/setup-mpi.sh); scripts/test-mpi.sh runs it.

#![cfg(feature = "mpi")]

mod support;

use std::collections::BTreeSet;
use std::process::Command;
use std::time::Duration;

use support::{compile_with, declared, exported, run_captured, Link};

/// The whole program, with its 12 object builds on 3 communicators, takes about a second on 4
/// ranks of 2 cores; the limit only turns a hang into a failure with its output.
const LIMIT: Duration = Duration::from_secs(120);

fn mpi_comm_program() -> std::path::PathBuf {
    compile_with(
        "mpicc",
        &support::C_FLAGS,
        &["mpi_comm.c"],
        "mpi_comm",
        Link::Shared,
    )
}

fn mpirun(program: &std::path::Path, ranks: &[&str]) {
    let mut mpirun = Command::new("mpirun");
    mpirun
        .args(["--bind-to", "none", "-np"])
        .args(ranks)
        .arg(program)
        // Open MPI refuses to run as root without these; harmless otherwise.
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    let label = format!("mpi_comm-np{}", ranks[0]);
    let outcome = run_captured(mpirun, &label, LIMIT).expect_success(&label);
    let expected = format!("mpi_comm ok on {} ranks", ranks[0]);
    assert!(
        outcome.stdout.contains(&expected),
        "{label}: no \"{expected}\" in\n{}\n{}",
        outcome.stdout,
        outcome.stderr
    );
}

/// One job after the other: Open MPI jobs started together can race for their session
/// directory under /tmp.
#[test]
fn a_c_mpi_program_builds_every_object_on_its_communicators() {
    let program = mpi_comm_program();
    mpirun(&program, &["2"]);
    mpirun(&program, &["4", "--oversubscribe"]);
}

#[test]
fn phasers_mpi_h_declares_exactly_the_exported_mpi_functions() {
    let declared = declared("phasers_mpi.h");
    let exported: BTreeSet<String> = exported()
        .into_iter()
        .filter(|symbol| symbol.starts_with("phasers_mpi_"))
        .collect();
    assert!(
        declared.len() >= 20,
        "the header parse found only {declared:?}"
    );
    let undeclared: Vec<_> = exported.difference(&declared).collect();
    let missing: Vec<_> = declared.difference(&exported).collect();
    assert!(
        undeclared.is_empty() && missing.is_empty(),
        "exported but not in phasers_mpi.h: {undeclared:?}; in phasers_mpi.h but not exported: \
         {missing:?}"
    );
}
