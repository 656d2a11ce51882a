//! The phaser and registration API from C.

mod support;

use support::{compile_c, run, Link};

#[test]
fn phasers_from_c() {
    let program = compile_c(&["phaser.c"], "phaser", Link::Shared);
    let outcome = run(&program, &[]).expect_success("phaser");
    assert!(outcome.stdout.contains("phaser ok"));
}
