//! The programs `build.rs` found when the tests were built are the ones here now. The tests that
//! need a missing program are `#[ignore]`d at build time (libtest cannot skip at run time), so a
//! program installed or removed since would leave them ignored, or failing to start it, without
//! this check. Cargo looks again when PATH or FC changes, not when a directory on PATH does.

mod support;

use support::tools;

#[test]
fn the_programs_found_at_build_time_are_still_the_ones_here() {
    let built = env!("PHASERS_TEST_FOUND");
    let now = tools::found();
    assert_eq!(
        built, now,
        "the tests were built when these programs ran: [{built}], and now these do: [{now}]; \
         the tests that need a program were ignored or kept by the first list. Make cargo look \
         again (touch crates/phasers-capi/build.rs) and rerun cargo test"
    );
}
