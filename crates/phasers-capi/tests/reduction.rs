//! Reductions from C: every element type, operator and algorithm with 2 to 4 threads against a
//! sequential reduction, quick return, and the error paths.

mod support;

use support::{compile_c, run, Link};

#[test]
fn reductions_from_c() {
    let program = compile_c(&["reduction.c"], "reduction", Link::Shared);
    let outcome = run(&program, &[]).expect_success("reduction");
    assert!(
        outcome.stdout.contains("reduction ok"),
        "{}",
        outcome.stdout
    );
}
