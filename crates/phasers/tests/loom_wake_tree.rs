//! Loom models of the release by tree: the releaser wakes one sleeper and sets the others aside,
//! and every woken sleeper wakes the next (`PHASERS_WAKE=1`, the smallest fanout, so that two
//! sleepers already need the hand-on).
//!
//! Under loom the futex is a model of the kernel's queues (`wait/futex.rs`): a sleeper is blocked
//! until a wake takes its ticket, so a sleeper that no chain of wakes reaches is a deadlock loom
//! reports. The barrier checks are `loom_support`'s (the invariant with visibility, one completion
//! and one leader per episode); the phaser model checks that a wait-only task, which may lag a
//! phase behind the others on the same word, is never left asleep.
//!
//! - `counting`, `sense_reversing`: 3 participants, each on its own thread, 2 episodes, at most 1
//!   preemption: up to two sleepers on the one release word.
//! - `counting_two_parties`: 2 participants, 3 episodes, 2 preemptions: one sleeper, woken
//!   directly, passing the release on to nobody.
//! - `phaser_with_a_lagging_waiter`: two `SigWait` tasks and a `Wait` task on one phaser, 2
//!   phases: sleepers of two phases may share the release word.
//!
//! Run with `scripts/loom.sh`.
#![cfg(phasers_loom)]

mod loom_support;

use loom::thread;
use loom_support::*;
use phasers::{Mode, Phaser};

/// Every model of this file releases by tree with fanout 1 (read by each builder; the same value
/// for every model of the file, which shares one process).
fn tree_of_one() {
    std::env::set_var("PHASERS_WAKE", "1");
}

fn one_thread_each(config: Config, parties: usize, episodes: u64, max_preemptions: usize) {
    tree_of_one();
    let groups: &'static [&'static [usize]] = match parties {
        2 => &[&[0], &[1]],
        _ => &[&[0], &[1], &[2]],
    };
    run_episodes(config, parties, episodes, groups, max_preemptions);
}

#[test]
fn counting() {
    one_thread_each(COUNTING, 3, 2, 1);
}

#[test]
fn sense_reversing() {
    one_thread_each(SENSE_REVERSING, 3, 2, 1);
}

#[test]
fn counting_two_parties() {
    one_thread_each(COUNTING, 2, 3, 2);
}

#[test]
fn phaser_with_a_lagging_waiter() {
    tree_of_one();
    model_bounded(1, || {
        let (_phaser, first) = Phaser::builder().build().expect("a flat phaser");
        let mut second = first.register(Mode::SigWait).unwrap();
        let mut watcher = first.register(Mode::Wait).unwrap();
        let mut first = first;
        let watching = thread::spawn(move || {
            for phase in 0..2 {
                assert_eq!(watcher.next().unwrap(), phase);
            }
        });
        let other = thread::spawn(move || {
            for phase in 0..2 {
                assert_eq!(second.next().unwrap(), phase);
            }
            second
        });
        for phase in 0..2 {
            assert_eq!(first.next().unwrap(), phase);
        }
        watching.join().unwrap();
        drop(other.join().unwrap());
    });
}
