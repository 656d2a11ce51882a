//! Seed 000's dynamic team on async tasks (`examples/async_phased.rs`): the example runs and
//! checks itself, and the team grows and shrinks correctly at other sizes, on the 2-worker
//! runtime the example uses and on a single worker.
//!
//! Every run is under a hang watchdog, so a wait that would never return fails the test.

#[allow(dead_code)]
#[path = "../examples/async_phased.rs"]
mod example;

use example::{check, dynamic_team};

// The phasers crate's hang watchdog, shared rather than copied.
#[path = "../../crates/phasers/tests/watchdog_support/mod.rs"]
mod watchdog_support;
use watchdog_support::within;

#[test]
fn the_example_program_asserts_its_results_and_returns_ok() {
    within("the async_phased example", || example::main().unwrap());
}

fn on_runtime(workers: usize, max_threads: u64) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .build()
        .unwrap();
    let outcome = runtime.block_on(dynamic_team(max_threads)).unwrap();
    check(&outcome, max_threads);
}

#[test]
fn teams_of_other_sizes_on_two_workers() {
    for max_threads in [2, 3, 5, 17, 100] {
        within("a dynamic team on 2 workers", move || {
            on_runtime(2, max_threads)
        });
    }
}

#[test]
fn a_single_worker_runs_every_task_in_turn() {
    within("a dynamic team on 1 worker", || on_runtime(1, 64));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repeated_on_one_runtime() {
    for _ in 0..20 {
        let outcome = dynamic_team(32).await.unwrap();
        check(&outcome, 32);
    }
}
