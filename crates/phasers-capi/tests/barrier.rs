//! The barrier API from C: the invariant for every algorithm, through the shared and the static
//! library, and the error paths.

mod support;

use support::{compile_c, run, Link};

/// Every `PHASERS_ALGORITHM_*` value, AUTO first.
const ALGORITHMS: std::ops::RangeInclusive<u32> = 0..=7;

#[test]
fn every_algorithm_keeps_the_invariant_with_8_threads_linked_shared() {
    let program = compile_c(&["barrier_invariant.c"], "barrier_invariant", Link::Shared);
    for algorithm in ALGORITHMS {
        let outcome = run(&program, &[&algorithm.to_string(), "8", "200"])
            .expect_success(&format!("algorithm {algorithm}"));
        assert!(outcome.stdout.contains("8 threads x 200 episodes ok"));
    }
}

#[test]
fn odd_thread_counts_keep_the_invariant() {
    let program = compile_c(
        &["barrier_invariant.c"],
        "barrier_invariant_odd",
        Link::Shared,
    );
    for algorithm in ALGORITHMS {
        for threads in ["1", "3", "13"] {
            run(&program, &[&algorithm.to_string(), threads, "50"])
                .expect_success(&format!("algorithm {algorithm} with {threads} threads"));
        }
    }
}

#[test]
fn static_linking_works_with_the_readme_line() {
    let program = compile_c(
        &["barrier_invariant.c"],
        "barrier_invariant_static",
        Link::Static,
    );
    let outcome = run(&program, &["0", "4", "100"]).expect_success("statically linked");
    assert!(outcome.stdout.contains("4 threads x 100 episodes ok"));
    let errors = compile_c(&["barrier_errors.c"], "barrier_errors_static", Link::Static);
    run(&errors, &[]).expect_success("barrier errors, statically linked");
}

#[test]
fn error_paths() {
    let program = compile_c(&["barrier_errors.c"], "barrier_errors", Link::Shared);
    let outcome = run(&program, &[]).expect_success("barrier errors");
    assert!(outcome.stdout.contains("barrier errors ok"));
}
