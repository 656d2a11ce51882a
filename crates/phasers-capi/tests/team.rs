//! Teams from C: every collective, blocking and non-blocking, for every element type and operator
//! with 2 to 4 threads; split; checked mismatches; EBUSY, timeouts, broken teams and the error
//! paths.

mod support;

use support::{compile_c, run, Link};

#[test]
fn teams_from_c() {
    let program = compile_c(&["team.c"], "team", Link::Shared);
    let outcome = run(&program, &[]).expect_success("team");
    assert!(outcome.stdout.contains("team ok"), "{}", outcome.stdout);
}
