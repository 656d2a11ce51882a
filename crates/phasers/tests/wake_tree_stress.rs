//! Stress tests of the release by tree (`PHASERS_WAKE`), with up to 64 participants on whatever
//! the machine has: on the 2-core CI machines, heavily oversubscribed, where `Auto` would wake all
//! at once, so the tree is forced here and most waiters are asleep at every release.
//!
//! Every test of this file sets `PHASERS_WAKE=2` (read when an object is built; the same value for
//! all, since they share a process): a release wakes two sleepers and sets the others aside, and
//! every woken sleeper wakes two more, so 63 sleepers need a chain six wakes deep, in which each
//! link is a thread that the scheduler may delay. A sleeper the chain misses hangs its test, which
//! the watchdog turns into a failure naming it; the barrier invariant, one completion per episode
//! and one leader per episode are checked after every wait (`barrier_support`).
//!
//! - barriers whose waiters share one release word (sense-reversing, counting, ticket,
//!   dissemination's release after its completion action), at 8, 33 and 64 parties, with the
//!   `Park` policy (every waiter sleeps at once) and with `Auto`;
//! - a phaser of 64 tasks, a quarter of them wait-only, whose release word carries sleepers of
//!   two phases at once;
//! - a team of 64 members running barriers and one-word allreduces.

mod barrier_support;

use std::sync::atomic::{AtomicU64, Ordering};

use barrier_support::{builder_with_record, run_checked, Record};
use phasers::{Algorithm, Mode, Op, Phaser, Team, WaitPolicy};

/// The fanout every object of this file is built with.
fn tree_of_two() {
    std::env::set_var("PHASERS_WAKE", "2");
}

/// Episodes per run: a few hundred, each of which puts most of 64 threads to sleep on 2 cores.
fn episodes_for(parties: usize) -> u64 {
    if parties <= 8 {
        2_000
    } else {
        400
    }
}

fn stress(algorithm: Algorithm, parties: usize, policy: WaitPolicy) {
    tree_of_two();
    let episodes = episodes_for(parties);
    let record = Record::new(parties, episodes);
    let barrier = builder_with_record(parties, &record)
        .algorithm(algorithm)
        .wait_policy(policy)
        .build()
        .expect("valid barrier");
    let what = format!("{algorithm} with {parties}, {policy}, PHASERS_WAKE=2");
    run_checked(&what, &barrier, &record, episodes);
}

macro_rules! stress_tests {
    ($($name:ident: $algorithm:expr, $parties:expr, $policy:expr;)+) => {
        $(
            #[test]
            fn $name() {
                stress($algorithm, $parties, $policy);
            }
        )+
    };
}

stress_tests! {
    sense_reversing_8_park: Algorithm::SenseReversing, 8, WaitPolicy::Park;
    sense_reversing_64_park: Algorithm::SenseReversing, 64, WaitPolicy::Park;
    sense_reversing_64_auto: Algorithm::SenseReversing, 64, WaitPolicy::Auto;
    counting_8_park: Algorithm::Counting, 8, WaitPolicy::Park;
    counting_33_park: Algorithm::Counting, 33, WaitPolicy::Park;
    counting_64_park: Algorithm::Counting, 64, WaitPolicy::Park;
    counting_64_auto: Algorithm::Counting, 64, WaitPolicy::Auto;
    ticket_64_park: Algorithm::Ticket, 64, WaitPolicy::Park;
    dissemination_33_park: Algorithm::Dissemination, 33, WaitPolicy::Park;
}

/// 48 `SigWait` tasks and 16 wait-only tasks on one flat phaser. The wait-only tasks do not hold
/// a phase back, so they may still sleep for phase `p` while the others sleep for `p + 1` on the
/// same word; every task must see every phase, in order.
#[test]
fn phaser_of_64_with_wait_only_tasks() {
    tree_of_two();
    const PHASES: u64 = 300;
    let (phaser, creator) = Phaser::builder()
        .wait_policy(WaitPolicy::Park)
        .build()
        .expect("a flat phaser");
    let mut tasks: Vec<_> = (0..63)
        .map(|task| {
            let mode = if task % 4 == 0 {
                Mode::Wait
            } else {
                Mode::SigWait
            };
            creator.register(mode).unwrap()
        })
        .collect();
    tasks.push(creator);
    std::thread::scope(|s| {
        for mut task in tasks {
            s.spawn(move || {
                for phase in 0..PHASES {
                    assert_eq!(task.next().unwrap(), phase);
                }
                // Signallers stay registered until every wait-only task has seen the last phase:
                // the last one to drop terminates the phaser.
                task
            });
        }
    });
    assert!(phaser.phase() >= PHASES);
}

/// A team of 64: a barrier then a one-word allreduce, 200 times, checked against the sum.
#[test]
fn team_of_64_barriers_and_allreduces() {
    tree_of_two();
    const CALLS: u64 = 200;
    let team = Team::builder(64)
        .wait_policy(WaitPolicy::Park)
        .build()
        .expect("a team of 64");
    let arrived = AtomicU64::new(0);
    std::thread::scope(|s| {
        for mut member in team.participants() {
            let arrived = &arrived;
            s.spawn(move || {
                let rank = member.rank() as u64;
                for call in 0..CALLS {
                    arrived.fetch_add(1, Ordering::SeqCst);
                    member.barrier().unwrap();
                    assert!(arrived.load(Ordering::SeqCst) >= 64 * (call + 1));
                    let mut sum = [0u64];
                    member.allreduce(&[rank + call], &mut sum, Op::Sum).unwrap();
                    assert_eq!(sum, [64 * 63 / 2 + 64 * call]);
                }
            });
        }
    });
}
