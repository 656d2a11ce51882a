//! The Rust blocks that use phasers-mpi, built as programs of their own and run on two ranks
//! (`mpirun -np 2`). Needs Open MPI (scripts/setup-mpi.sh); scripts/test-mpi.sh runs it with
//! `--features mpi`.

use std::process::Command;
use std::time::Duration;

use phasers_doc_tests::{all_blocks, assert_none, build_programs, programs, run, Block};

#[test]
fn every_mpi_block_is_a_program_that_runs_on_two_ranks() {
    let blocks: Vec<Block> = all_blocks()
        .into_iter()
        .filter(|block| block.language() == "rust" && block.uses_mpi())
        .collect();
    for file in ["docs/guide.md", "crates/phasers-mpi/README.md"] {
        assert!(
            blocks.iter().any(|block| block.file == file),
            "no MPI block found in {file}"
        );
    }
    let programs = programs(&blocks);
    let mut failures = Vec::new();
    let root = phasers_doc_tests::workspace_root();
    let dependencies = format!(
        "phasers = {{ path = {:?} }}\nphasers-mpi = {{ path = {:?} }}\n",
        root.join("crates/phasers"),
        root.join("crates/phasers-mpi")
    );
    let binaries = build_programs("phasers-doc-programs-mpi", &dependencies, &programs)
        .unwrap_or_else(|error| panic!("{error}"));
    for (block, binary) in blocks.iter().zip(&binaries) {
        let mut mpirun = Command::new("mpirun");
        mpirun.args(["--bind-to", "none", "-np", "2"]);
        // Open MPI refuses root without it; CI runs as root.
        if running_as_root() {
            mpirun.arg("--allow-run-as-root");
        }
        mpirun.arg(binary);
        match run(&mut mpirun, Duration::from_secs(180)) {
            Ok(output) if output.status.success() => {}
            Ok(output) => failures.push(format!(
                "{}: mpirun -np 2 exited with {}; stdout:\n{}\nstderr:\n{}",
                block.place(),
                output.status,
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            )),
            Err(error) => failures.push(format!("{}: {error}", block.place())),
        }
    }
    assert_none(&failures, "MPI blocks that fail as programs");
}

/// Whether this process runs as root, from `id -u` (no libc dependency for one call).
fn running_as_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|out| String::from_utf8_lossy(&out.stdout).trim() == "0")
        .unwrap_or(false)
}
