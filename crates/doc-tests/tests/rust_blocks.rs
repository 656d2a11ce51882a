//! Every Rust block of the READMEs and docs/, built and run as a program of its own: the block as
//! printed, pasted into `fn main()` unless it has its own. Blocks that use phasers-mpi need Open
//! MPI; tests/mpi_rust_blocks.rs runs them (feature `mpi`, from scripts/test-mpi.sh).

use std::process::Command;
use std::time::Duration;

use phasers_doc_tests::{all_blocks, assert_none, build_programs, programs, run, Block};

fn rust_blocks() -> Vec<Block> {
    all_blocks()
        .into_iter()
        .filter(|block| block.language() == "rust")
        .collect()
}

#[test]
fn every_rust_block_is_a_program_that_builds_and_runs() {
    let blocks: Vec<Block> = rust_blocks()
        .into_iter()
        .filter(|block| !block.uses_mpi())
        .collect();
    // The files this test was written for: a move or a renamed fence must not empty it.
    for file in ["README.md", "docs/guide.md"] {
        assert!(
            blocks.iter().any(|block| block.file == file),
            "no Rust block found in {file}"
        );
    }
    let programs = programs(&blocks);
    let mut failures = Vec::new();
    let dependencies = format!(
        "phasers = {{ path = {:?} }}\n\
         # The guide's rayon section runs on a rayon pool.\n\
         rayon = \"1.10\"\n",
        phasers_doc_tests::workspace_root().join("crates/phasers")
    );
    let binaries = build_programs("phasers-doc-programs", &dependencies, &programs)
        .unwrap_or_else(|error| panic!("{error}"));
    for (block, binary) in blocks.iter().zip(&binaries) {
        match run(&mut Command::new(binary), Duration::from_secs(120)) {
            Ok(output) if output.status.success() => {}
            Ok(output) => failures.push(format!(
                "{}: the program exited with {}; stderr:\n{}",
                block.place(),
                output.status,
                String::from_utf8_lossy(&output.stderr)
            )),
            Err(error) => failures.push(format!("{}: {error}", block.place())),
        }
    }
    assert_none(&failures, "Rust blocks that fail as programs");
}

/// phasers' doctests include README.md and docs/guide.md (crates/phasers/src/lib.rs), where
/// phasers-mpi is no dependency: their MPI blocks must say `ignore` to rustdoc, and are built
/// by tests/mpi_rust_blocks.rs instead.
#[test]
fn mpi_blocks_are_ignored_by_the_phasers_doctests() {
    let mpi: Vec<Block> = rust_blocks()
        .into_iter()
        .filter(|block| block.uses_mpi())
        .collect();
    assert!(
        mpi.iter().any(|block| block.file == "docs/guide.md"),
        "the guide's MPI blocks were not found"
    );
    let unmarked: Vec<String> = mpi
        .iter()
        .filter(|block| {
            ["README.md", "docs/guide.md"].contains(&block.file.as_str())
                && !block.info.split(',').any(|word| word.trim() == "ignore")
        })
        .map(|block| format!("{}: {}", block.place(), block.info))
        .collect();
    assert_none(
        &unmarked,
        "MPI blocks without `ignore` in files phasers' doctests include",
    );
}
