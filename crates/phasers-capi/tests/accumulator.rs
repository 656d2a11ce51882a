//! Accumulators from C: every element type and operator against a sequential reduction.

mod support;

use support::{compile_c, run, Link};

#[test]
fn accumulators_from_c() {
    let program = compile_c(&["accumulator.c"], "accumulator", Link::Shared);
    let outcome = run(&program, &[]).expect_success("accumulator");
    assert!(outcome.stdout.contains("accumulator ok"));
}
