//! The C examples of README.md compile (warnings as errors) and produce their documented result.

mod support;

use support::{compile_c, run, Link};

#[test]
fn barrier_example() {
    let program = compile_c(
        &["../../examples/c/barrier.c"],
        "example_barrier",
        Link::Shared,
    );
    let outcome = run(&program, &[]).expect_success("examples/c/barrier.c");
    assert!(
        outcome.stdout.contains("every rank did 1000 steps"),
        "{}",
        outcome.stdout
    );
}

#[test]
fn phaser_accumulator_example() {
    let program = compile_c(
        &["../../examples/c/phaser_accumulator.c"],
        "example_phaser_accumulator",
        Link::Shared,
    );
    let outcome = run(&program, &[]).expect_success("examples/c/phaser_accumulator.c");
    assert!(
        outcome.stdout.contains("phase 3: sum 69"),
        "{}",
        outcome.stdout
    );
    assert!(outcome.stdout.ends_with("ok\n"), "{}", outcome.stdout);
}

#[test]
fn allreduce_1m_example() {
    let program = compile_c(
        &["../../examples/c/allreduce_1m.c"],
        "example_allreduce_1m",
        Link::Shared,
    );
    for api in ["reduction", "team"] {
        let outcome = run(&program, &["2", api]).expect_success("examples/c/allreduce_1m.c");
        assert!(
            outcome.stdout.starts_with(&format!(
                "{api} allreduce of 1048576 doubles, 2 threads, 2 calls: "
            )),
            "{}",
            outcome.stdout
        );
        assert!(
            outcome.stdout.ends_with(" ns per call\n"),
            "{}",
            outcome.stdout
        );
    }
}
